"""What the scheduler tells its observers: each attempt's outcome (the simulator's placement
log, the kube backend's decisions), for metrics the cycles' timings, and for the decision
record what each scheduling cycle computed."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.node_table import NodeTable
from kubesched.framework.runtime import ScoreOutcome
from kubesched.framework.types import QueuedPodInfo


class Recorder(Protocol):
    """Observes attempts (the simulator's placement log, metrics)."""

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None: ...


class SchedulerObserver(Protocol):
    """Timing hooks for metrics: a pod popped for a cycle, the algorithm's duration."""

    def popped(self, qpi: QueuedPodInfo) -> None: ...

    def algorithm_done(self, seconds: float) -> None: ...


class DecisionObserver(Protocol):
    """Told what each scheduling cycle computed (``simulate --decisions``): the scores of
    its feasible nodes when it scored them, then its outcome. Set as the scheduler's
    ``decisions``; unset, the cycles do nothing for it."""

    def scored(self, table: NodeTable, feasible: np.ndarray, scores: ScoreOutcome) -> None:
        """``scores`` of the table rows ``feasible`` (in the order of its columns)."""

    def decided(self, qpi: QueuedPodInfo, time: float, node: str | None, evaluated: int,
                feasible: int, message: str | None, preemption: dict[str, Any] | None
                ) -> None: ...
