"""The simulator's timeline: what the simulated API server and controllers have made due, at
a virtual time, as typed events.

One small frozen class per kind of event. Events due at the same virtual time are applied
in the order of their kind (``order``: a binding reported before a pod finishing, ... before
a taint manager's eviction), then in the order they were pushed; the run loop delivers them
(``SimCluster.deliver`` matches on the type).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from kubesched.api.faults import Fault
from kubesched.api.types import Node, Pod


@dataclass(frozen=True, slots=True, eq=False)
class BindingReported:
    """A binding the API server applied: watchers hear of ``old`` becoming ``new``."""

    order: ClassVar[int] = 0
    old: Pod
    new: Pod


@dataclass(frozen=True, slots=True, eq=False)
class PodFinished:
    """A running pod's ``kubesched.io/duration`` is over."""

    order: ClassVar[int] = 1
    pod: Pod


@dataclass(frozen=True, slots=True, eq=False)
class PodGone:
    """A terminating pod's grace period is over: it leaves the API server."""

    order: ClassVar[int] = 2
    pod: Pod


@dataclass(frozen=True, slots=True, eq=False)
class Arrival:
    """A pod is created (the scenario's, at its arrival time, or a controller's)."""

    order: ClassVar[int] = 3
    pod: Pod


@dataclass(frozen=True, slots=True, eq=False)
class Stored:
    """A PV, PVC or ResourceClaim stored: added (``old`` None), updated, deleted (``new``
    None)."""

    order: ClassVar[int] = 4
    old: Any
    new: Any


@dataclass(frozen=True, slots=True, eq=False)
class DeletionToldLate:
    """A pod already gone from the API server, told to the scheduler's informer only now."""

    order: ClassVar[int] = 5
    pod: Pod


@dataclass(frozen=True, slots=True, eq=False)
class Tick:
    """Nothing but a change (a binding fault used up: a retry may now succeed)."""

    order: ClassVar[int] = 6


@dataclass(frozen=True, slots=True, eq=False)
class FaultDue:
    order: ClassVar[int] = 7
    fault: Fault


@dataclass(frozen=True, slots=True, eq=False)
class EvictionDue:
    """The taint manager's eviction of ``uid``, scheduled for ``at``."""

    order: ClassVar[int] = 8
    uid: str
    at: float


@dataclass(frozen=True, slots=True, eq=False)
class NodeAdded:
    """A node a periodic controller asked for (an autoscaler's scale-up) joins the cluster,
    Ready and schedulable."""

    order: ClassVar[int] = 9
    node: Node


Event = (BindingReported | PodFinished | PodGone | Arrival | Stored | DeletionToldLate | Tick
         | FaultDue | EvictionDue | NodeAdded)


class Timeline:
    """A heap of ``(time, kind order, insertion number, event)``."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Event]] = []
        self._seq = itertools.count()

    def push(self, t: float, event: Event) -> None:
        heapq.heappush(self._heap, (t, event.order, next(self._seq), event))

    def pop_due(self, now: float) -> Event | None:
        """The first event due at ``now`` or before, taken off; None when none is."""
        heap = self._heap
        if heap and heap[0][0] <= now:
            return heapq.heappop(heap)[3]
        return None

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def drop(self, match: Callable[[Event], bool]) -> None:
        """Events that no longer apply, taken off rather than skipped when due: the run's
        end rule waits while anything is due."""
        kept = [e for e in self._heap if not match(e[3])]
        if len(kept) != len(self._heap):
            heapq.heapify(kept)
            self._heap = kept

    def in_order(self) -> Iterator[Event]:
        """Every event, in the order they would be applied."""
        return (e[3] for e in sorted(self._heap, key=lambda e: e[:3]))

    def timed(self) -> list[tuple[float, Event]]:
        """Every event with its time, in the order they would be applied."""
        return [(e[0], e[3]) for e in sorted(self._heap, key=lambda e: e[:3])]

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
