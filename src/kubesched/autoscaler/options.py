"""The options of the simulator's cluster-autoscaler: cluster-autoscaler's flags, with its
defaults (``main.go`` / ``config/autoscaling_options.go``), and its durations as it writes
them (``10s``, ``10m``, ``1h30m``) or as plain seconds."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any

from kubesched.autoscaler.expanders import DEFAULT_EXPANDER, EXPANDERS
from kubesched.autoscaler.scaledown import DEFAULT_UTILIZATION_THRESHOLD
from kubesched.errors import InputError

# cluster-autoscaler's limits on one loop's deletions (--max-scale-down-parallelism,
# --max-drain-parallelism: flags kubesched keeps at their defaults) and how young every pod
# to help may be before the loop waits for more (unschedulablePodTimeBuffer in
# static_autoscaler.go)
MAX_SCALE_DOWN_PARALLELISM = 10
MAX_DRAIN_PARALLELISM = 1
NEW_POD_BUFFER = 2.0
# --unremovable-node-recheck-timeout: a node the scale-down simulation found unremovable is
# not simulated again for this long
UNREMOVABLE_RECHECK = 300.0


@dataclass(frozen=True)
class AutoscalerOptions:
    expander: str = DEFAULT_EXPANDER
    scan_interval: float = 10.0
    scale_down_enabled: bool = True
    scale_down_unneeded_time: float = 600.0
    scale_down_delay_after_add: float = 600.0
    scale_down_delay_after_delete: float = 0.0
    scale_down_utilization_threshold: float = DEFAULT_UTILIZATION_THRESHOLD
    max_nodes_total: int = 0  # 0: no limit

    def as_json(self) -> dict[str, Any]:
        return {flag(f.name): getattr(self, f.name) for f in fields(self)}


def flag(field: str) -> str:
    """The cluster-autoscaler flag an option is: ``scan_interval`` → ``scan-interval``."""
    return field.replace("_", "-")


FLAGS = {flag(f.name): f.name for f in fields(AutoscalerOptions)}

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str, what: str) -> float:
    """A Go duration (``10m``, ``1h30m``, ``90s``) or a number of seconds, in seconds."""
    s = str(text).strip()
    try:
        v = float(s)
    except ValueError:
        pos, v = 0, 0.0
        for m in _DURATION.finditer(s):
            if m.start() != pos:
                break
            v += float(m.group(1)) * _UNIT[m.group(2)]
            pos = m.end()
        if pos != len(s) or not s:
            raise InputError("must be a duration (10s, 10m, 1h30m) or a number of seconds",
                             field=what, value=text) from None
    if not math.isfinite(v) or v < 0:
        raise InputError("must be a non-negative duration", field=what, value=text)
    return v


def options_from(values: dict[str, Any]) -> AutoscalerOptions:
    """Options from flag names (``scan-interval``) or field names, checked; an error names
    the flag as its field."""
    kw: dict[str, Any] = {}
    for key, v in values.items():
        name = FLAGS.get(key, key)
        if name not in FLAGS.values():
            raise InputError(f"is not an autoscaler option (one of {', '.join(FLAGS)})",
                             field=key, value=v)
        kw[name] = _check(name, v)
        if name == "scan_interval" and kw[name] <= 0:
            raise InputError("must be more than 0", field=flag(name), value=v)
    return AutoscalerOptions(**kw)


def flag_error(err: InputError) -> InputError:
    """An error of ``options_from`` for the command line: the flag leads."""
    return InputError(f"--{err.field} {err.message}", value=err.value)


def _check(name: str, v: Any) -> Any:
    key = flag(name)
    if name == "expander":
        if v not in EXPANDERS:
            raise InputError(f"unknown expander (one of {', '.join(EXPANDERS)})", field=key,
                             value=v)
        return v
    if name == "scale_down_enabled":
        if isinstance(v, bool):
            return v
        if str(v).lower() in ("true", "false"):
            return str(v).lower() == "true"
        raise InputError("must be true or false", field=key, value=v)
    if name == "max_nodes_total":
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            try:
                n = int(str(v))
            except ValueError:
                n = -1
            if n < 0 or isinstance(v, bool):
                raise InputError("must be a non-negative integer", field=key, value=v)
            return n
        return v
    if name == "scale_down_utilization_threshold":
        try:
            f = float(v)
        except (TypeError, ValueError):
            f = math.nan
        if isinstance(v, bool) or not 0 <= f <= 1:
            raise InputError("must be a number from 0 to 1", field=key, value=v)
        return f
    return parse_duration(v, key)
