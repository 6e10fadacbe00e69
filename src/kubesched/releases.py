"""The upstream releases kubesched decides as: the one list every layer reads (the API's
schemas, the feature gates, the commands' flags)."""

from functools import cache

SUPPORTED_VERSIONS: tuple[str, ...] = ("1.35", "1.36", "1.37")

# The newest supported release is the default (DESIGN.md); docs/releases.md says what
# kubesched decides differently per release.
DEFAULT_VERSION = "1.37"


def version_tuple(version: str) -> tuple[int, ...]:
    """"1.36" → (1, 36), for comparing releases."""
    return tuple(int(x) for x in version.split("."))


@cache  # called per pod (NodeDeclaredFeatures' inference): a handful of distinct pairs
def at_least(version: str, minimum: str) -> bool:
    """Whether release ``version`` (``X.Y``) is ``minimum`` or newer: for behaviour upstream
    changed in a release without a feature gate."""
    return version_tuple(version) >= version_tuple(minimum)
