"""What a framework reports while it runs, for metrics (upstream's instrumented plugins and
FrameworkExtensionPointDuration): an observer is given to the framework, which wraps each
plugin's extension-point calls once, when the profile is built or the observer attached."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from kubesched.framework.status import CODE_NAMES, Status

F = TypeVar("F", bound=Callable[..., Any])


class Observer(Protocol):
    def sample_cycle(self) -> bool:
        """Whether this scheduling cycle records per-plugin durations (upstream samples)."""
        ...

    def point_started(self, point: str) -> None: ...

    def point_done(self, point: str, profile: str, status: str, seconds: float) -> None: ...

    def plugin_done(self, plugin: str, point: str, status: str, seconds: float) -> None: ...


def status_label(ret: Any) -> str:
    """The status label of an extension point's or plugin's return value."""
    st = ret
    if isinstance(ret, tuple):
        st = next((x for x in ret if isinstance(x, Status)), None)
    if isinstance(st, Status):
        return CODE_NAMES.get(st.code, "Success")
    return "Success"


def instrumented(fn: F, plugin: str, point: str, observer: Observer) -> F:
    """``fn`` (a plugin's method; its first argument the CycleState) timed in the cycles
    the observer samples."""

    def timed(state: Any, *args: Any) -> Any:
        if not state.record_plugin_metrics:
            return fn(state, *args)
        t0 = time.perf_counter()
        ret = fn(state, *args)
        observer.plugin_done(plugin, point, status_label(ret), time.perf_counter() - t0)
        return ret

    return timed  # type: ignore[return-value]  # same signature as fn
