"""What the scheduler tells its observers: each attempt's outcome (the simulator's placement
log, the kube backend's decisions) and, for metrics, the cycles' timings."""

from __future__ import annotations

from typing import Protocol

from kubesched.api.types import Pod
from kubesched.framework.types import QueuedPodInfo


class Recorder(Protocol):
    """Observes attempts (the simulator's placement log, metrics)."""

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None: ...


class SchedulerObserver(Protocol):
    """Timing hooks for metrics: a pod popped for a cycle, the algorithm's duration."""

    def popped(self, qpi: QueuedPodInfo) -> None: ...

    def algorithm_done(self, seconds: float) -> None: ...
