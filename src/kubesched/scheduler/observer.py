"""What the scheduler tells its observers: each attempt's outcome (the simulator's placement
log, the kube backend's decisions), for metrics the cycles' timings, and for the decision
record what each scheduling cycle computed; and what it asks a backend that can let
attempts share a step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.node_table import NodeTable
from kubesched.framework.runtime import ScoreOutcome
from kubesched.framework.types import QueuedPodInfo


class Recorder(Protocol):
    """Observes attempts (the simulator's placement log, metrics)."""

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None: ...


class FailedAttempts(Protocol):
    """A Recorder's optional form for many failed attempts at once (replayed failures
    sharing a step): ``attempt(pod, result, None, message)`` for each ``(pod, result,
    message)`` in turn. The scheduler looks it up by name and calls ``attempt`` per pod when
    it is missing."""

    def failed_attempts(self, outcomes: Sequence[tuple[Pod, str, str]]) -> None: ...


class StepSharing(Protocol):
    """A backend that can tell when nothing would happen between two scheduling steps (the
    simulator's run loop, whose virtual clock stands still while pods are retried), so
    that further attempts may join the step under way, each as if in a step of its own."""

    def first(self, qpi: QueuedPodInfo) -> int:
        """How many attempts, ``qpi``'s first, may join the step under way (0: none). When
        not 0, what the backend does between two steps is done, for ``qpi``'s."""
        ...

    def fresh(self, uid: str) -> bool:
        """Whether the pod may join after the first: nothing to do between its step and
        the one before it."""
        ...

    def joined(self, n: int) -> None:
        """``n`` attempts after the first joined (what comes between their steps done)."""
        ...


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
