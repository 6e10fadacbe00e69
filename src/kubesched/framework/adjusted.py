"""The snapshot as it would be with pods added to or removed from some nodes.

Upstream answers "would the pod fit if these pods were gone / also there?" by running the
Filter plugins on a copied NodeInfo (the preemption dry run; the first of the two passes
with nominated pods). When every Filter that runs for the pod sees the pods on a node only
through the node table's requested and pod-count columns (``FilterPlugin.filter_reads``,
``Framework.filters_read_only_resources``), the same question is a change of those two
columns: an ``AdjustedSnapshot`` carries the changed columns and shares everything else with
the snapshot, so the plugins' batch forms answer it for many nodes at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_table import NodeTable
from kubesched.framework.snapshot import Snapshot

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle


class AdjustedTable:
    """A NodeTable whose ``requested`` and ``pod_count`` columns are this object's own copies;
    every other attribute is the table's."""

    def __init__(self, table: NodeTable) -> None:
        self._table = table
        self.requested = table.requested.copy()
        self.pod_count = table.pod_count.copy()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    @property
    def base(self) -> NodeTable:
        """The real table: ``framework.table_cache`` serves this one node values only."""
        return self._table

    def resource_row(self, name: str) -> int:
        row = self._table.resource_row(name)
        if row >= len(self.requested):
            # A resource no node had a row for: no pod on any node requests it.
            self.requested = np.vstack([self.requested,
                                        self._table.requested[len(self.requested):]])
        return row


class AdjustedSnapshot:
    """The snapshot with the requested / pod-count columns of some rows changed (``set``);
    only the rows last set are meaningful, so callers evaluate exactly those."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self.table = AdjustedTable(snapshot.table)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._snapshot, name)

    def view(self) -> Snapshot:
        """This, typed as the Snapshot the batch Filter forms take: they read only the
        table's columns, which this changes, and the rest, which it passes through."""
        return cast(Snapshot, self)

    def set(self, rows: np.ndarray, delta_requested: np.ndarray, delta_count: np.ndarray
            ) -> None:
        """Rows ``rows`` become the snapshot's plus ``delta_requested`` ([resources, rows])
        and ``delta_count`` ([rows]) more pods."""
        base = self._snapshot.table
        t = self.table
        width = len(base.requested)
        if len(t.requested) < width:
            t.resource_row(base.resources[-1])
        if delta_requested.shape[0] < width:  # made before the table gained a resource
            delta_requested = np.vstack([delta_requested, np.zeros(
                (width - delta_requested.shape[0], delta_requested.shape[1]), dtype=np.int64)])
        t.requested[:, rows] = base.requested[:, rows] + delta_requested
        t.pod_count[rows] = base.pod_count[rows] + delta_count


# shared by the NominatedPods of cycles without nominations (read-only)
_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_ROWS.flags.writeable = False
_NO_REQUESTS = np.zeros((0, 0), dtype=np.int64)
_NO_REQUESTS.flags.writeable = False


class NominatedPods:
    """The nominated pods upstream's first Filter pass adds for one pod (those of at least
    its priority, itself excepted), by table row, with their summed requests.

    Computed once per scheduling cycle and kept in its CycleState: the Filter scan and the
    preemption dry run of one cycle see the same nominations."""

    KEY = "kubesched/NominatedPods"

    def __init__(self, handle: Handle, pod: Pod) -> None:
        self.pod = pod
        self.table = table = handle.snapshot.table
        index = table.index
        prio, uid = pod.priority, pod.uid
        self.pods: dict[int, list[Pod]] = {}
        self.rows = _NO_ROWS
        # summed requests and counts per nominated row, made on first use
        self._column: np.ndarray | None = None  # table row -> index into them, or -1
        self._mask: np.ndarray | None = None
        self._requests = _NO_REQUESTS
        self._counts = _NO_ROWS
        by_node = handle.nominated_pods_by_node()
        if not by_node:  # most cycles: nothing to add
            return
        for node, pods in by_node.items():
            row = index.get(node)
            if row is None:
                continue
            for p in pods:  # usually all are picked: keep the list then
                if p.priority < prio or p.uid == uid:
                    pods = [p for p in pods if p.priority >= prio and p.uid != uid]
                    break
            if pods:
                self.pods[row] = pods
        self.rows = np.fromiter(self.pods, dtype=np.int64, count=len(self.pods))

    @classmethod
    def of(cls, state: CycleState, handle: Handle, pod: Pod) -> NominatedPods:
        got = state.read(cls.KEY)
        if (not isinstance(got, NominatedPods) or got.pod is not pod
                or got.table is not handle.snapshot.table):
            got = cls(handle, pod)
            state.write(cls.KEY, got)
        return got

    def clone(self) -> NominatedPods:
        return self  # never changed after it is made

    def mask(self) -> np.ndarray:
        """Over table rows: which have nominated pods to add."""
        if self._mask is None:
            self._mask = np.zeros(self.table.size, dtype=bool)
            self._mask[self.rows] = True
        return self._mask

    def deltas(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What the nominated pods add at ``rows``: [resources, rows] requests, [rows] pods."""
        if self._column is None:
            groups = [self.pods[r] for r in self.rows.tolist()]
            self._requests = self.table.request_vectors.totals(groups)
            self._counts = np.array([len(g) for g in groups], dtype=np.int64)
            self._column = np.full(self.table.size, -1, dtype=np.int64)
            self._column[self.rows] = np.arange(len(self.rows))
        cols = self._column[rows]
        has = cols >= 0
        req = np.zeros((len(self.table.resources), len(rows)), dtype=np.int64)
        req[:self._requests.shape[0], has] = self._requests[:, cols[has]]
        cnt = np.zeros(len(rows), dtype=np.int64)
        cnt[has] = self._counts[cols[has]]
        return req, cnt
