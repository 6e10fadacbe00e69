"""Hypothesis profiles for the fuzz tests.

``ci`` (the default): few examples, derandomized, no example database, so CI is
deterministic and the whole folder runs in well under a minute. ``long``: thousands of
examples per property (``FUZZ_EXAMPLES``, default 4000), for a background run
(``HYPOTHESIS_PROFILE=long``, docs/fuzzing.md).
"""

import os

from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          database=None, print_blob=True, suppress_health_check=_SLOW_OK)
settings.register_profile("long", max_examples=int(os.environ.get("FUZZ_EXAMPLES", "4000")),
                          deadline=None, print_blob=True, suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
