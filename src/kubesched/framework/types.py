"""Queue entries, diagnosis and the FitError message."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, overload

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.events import ClusterEvent
from kubesched.framework.status import Code, Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod: Pod
    timestamp: float = 0.0  # when (re-)added to the queue; QueueSort's tie-breaker
    seq: int = 0  # enqueue order among equal timestamps (file order in the simulator)
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_plugin_events: tuple[ClusterEvent, ...] = ()
    backoff_expiration: float | None = None
    backoff_expiration_ns: int | None = None  # the same in ns (the queue's arithmetic)
    # the pod's uid, which its updates keep (the queue reads it per pod at every move)
    uid: str = field(init=False)

    def __post_init__(self) -> None:
        self.uid = self.pod.uid

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)


T = TypeVar("T")


class AtRows(Sequence[T]):
    """``items[rows[k]]`` for each ``k``, without making the list: per-node lists (names,
    NodeInfos) of table rows that are mostly never read one by one."""

    __slots__ = ("items", "rows")

    def __init__(self, items: Sequence[T], rows: np.ndarray) -> None:
        self.items = items
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, k: int) -> T: ...

    @overload
    def __getitem__(self, k: slice) -> list[T]: ...

    def __getitem__(self, k: int | slice) -> T | list[T]:
        if isinstance(k, slice):
            return [self.items[r] for r in self.rows[k].tolist()]
        return self.items[int(self.rows[k])]

    def __iter__(self) -> Iterator[T]:
        items = self.items
        return (items[r] for r in self.rows.tolist())


@dataclass(slots=True)
class FailedNodes:
    """Filter failures of many nodes as the batch filter found them: parallel arrays, turned
    into Status objects only when someone asks for one node's status."""

    names: Sequence[str]  # node names, aligned with the arrays
    codes: np.ndarray
    plugin: np.ndarray  # index into plugin_names
    reason_ids: np.ndarray  # index into reasons
    reasons: list[tuple[str, ...]]
    plugin_names: list[str]
    rows: np.ndarray | None = None  # the nodes' table rows, when known

    def status(self, k: int) -> Status:
        return Status(Code(int(self.codes[k])), self.reasons[int(self.reason_ids[k])],
                      self.plugin_names[int(self.plugin[k])])


class NodeToStatus:
    """Statuses of the nodes a cycle evaluated; nodes not listed share ``absent``.

    A cycle that rejects thousands of nodes records them in bulk (``add_failed``); they become
    per-node Status objects only when read one by one (``statuses``, ``get``)."""

    __slots__ = ("_bulk", "_explicit", "absent")

    def __init__(self, statuses: dict[str, Status] | None = None,
                 absent: Status | None = None) -> None:
        self._explicit: dict[str, Status] = dict(statuses or {})
        self._bulk: list[FailedNodes] = []
        self.absent = absent if absent is not None else Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def statuses(self) -> dict[str, Status]:
        if self._bulk:
            for chunk in self._bulk:
                for k, name in enumerate(chunk.names):
                    self._explicit[name] = chunk.status(k)
            self._bulk.clear()
        return self._explicit

    def get(self, name: str) -> Status:
        return self.statuses.get(name, self.absent)

    def set(self, name: str, status: Status) -> None:
        self.statuses[name] = status

    def add_failed(self, chunk: FailedNodes) -> None:
        if len(chunk.names):
            self._bulk.append(chunk)

    def add_same(self, names: Sequence[str], status: Status, rows: np.ndarray | None = None
                 ) -> None:
        """``set(name, status)`` for every name (distinct, none listed yet), in bulk: the
        preemption dry run gives most nodes one same status."""
        n = len(names)
        zeros = np.zeros(n, dtype=np.int64)
        self.add_failed(FailedNodes(names, np.full(n, int(status.code), dtype=np.int8), zeros,
                                    zeros, [status.reasons], [status.plugin], rows))

    def __len__(self) -> int:
        if self._explicit and self._bulk:  # a node may be in both: count it once
            return len(self.statuses)
        return len(self._explicit) + sum(len(c.names) for c in self._bulk)

    def reason_counts(self) -> Counter[str]:
        """How many listed nodes give each reason (a node may give several)."""
        counts: Counter[str] = Counter()
        if self._explicit and self._bulk:
            self.statuses  # noqa: B018 - materialize: a node may be in both
        for st in self._explicit.values():
            counts.update(st.reasons)
        for chunk in self._bulk:
            per_id = np.bincount(chunk.reason_ids)  # ids index chunk.reasons: few, small
            for rid in np.flatnonzero(per_id).tolist():
                c = int(per_id[rid])
                for r in chunk.reasons[rid]:
                    counts[r] += c
        return counts

    def codes(self) -> dict[str, int]:
        """Each listed node's status code (as ``get(name).code``), without making a Status
        of every bulk failure."""
        out = {name: int(st.code) for name, st in self._explicit.items()}
        for chunk in self._bulk:  # materializing would let bulk entries win, in order
            out.update(zip(chunk.names, chunk.codes.tolist(), strict=True))
        return out

    def codes_by_row(self, index: dict[str, int], size: int) -> np.ndarray | None:
        """``codes`` as an array over table rows (``index``: name → row; unlisted rows
        hold ``absent``'s code), or None when some bulk failures lack their rows."""
        if any(chunk.rows is None for chunk in self._bulk):
            return None
        out = np.full(size, int(self.absent.code), dtype=np.int8)
        for name, st in self._explicit.items():
            row = index.get(name)
            if row is not None:
                out[row] = st.code
        for chunk in self._bulk:
            out[chunk.rows] = chunk.codes
        return out

    def nodes_with_code(self, code: Code, all_names: list[str]) -> list[str]:
        return [n for n in all_names if self.get(n).code == code]


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__()

    def __str__(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)


def fit_error_message(num_all_nodes: int, d: Diagnosis) -> str:
    """FitError.Error() of v1.34+: reasons counted over nodes, sorted as plain strings."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if d.pre_filter_msg:
        msg += f" {d.pre_filter_msg}."
    else:
        n2s = d.node_to_status
        counts = n2s.reason_counts()
        if len(n2s) < num_all_nodes:
            for r in n2s.absent.reasons:
                counts[r] += num_all_nodes - len(n2s)
        items = sorted(f"{c} {r}" for r, c in counts.items())
        if items:
            msg += " " + ", ".join(items) + "."
    if d.post_filter_msg:
        msg += " " + d.post_filter_msg
    return msg


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
