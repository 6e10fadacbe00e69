"""cluster-autoscaler's PredicateChecker: the profile's own PreFilter and Filter plugins run
for one pod against chosen nodes of a snapshot the autoscaler edits (nodes it imagines, pods
it places there), without the scheduler's queue, scoring or binding."""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, cast

import numpy as np

from kubesched.api.types import Node, Pod, bound_copy
from kubesched.clock import VirtualClock
from kubesched.config import SchedulerConfiguration
from kubesched.explain import ReadOnlyBackend
from kubesched.framework.adjusted import AdjustedSnapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import READS_RESOURCES, FilterBatch
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.scheduler import Scheduler

# the nodes tried one by one before one batch Filter over the snapshot judges the rest
_SCAN = 4
_MAX_SIGNATURES = 65536
# objects kept a pod by ``_pending``: the pod as the cluster holds it, and its copies moved by
# one loop's removals (a copy moved again pushes out the oldest)
_KEPT = 3


class PredicateChecker:
    """A snapshot of nodes and bound pods, and the filters of ``config``'s profiles on it.
    Scheduler extenders are not asked, as cluster-autoscaler does not ask them."""

    def __init__(self, config: SchedulerConfiguration, objects: dict[str, list[Any]],
                 namespaces: dict[str, Any]) -> None:
        self.sched = Scheduler(ReadOnlyBackend(), VirtualClock(), config, extenders=[])
        self.sched.handle.objects = objects
        self.sched.handle.namespaces = namespaces
        self._pods: dict[str, Pod] = {}
        self.sched.handle.pod_lister = lambda: self._pods.values()
        # nodes are added at the end of the order (imagined nodes of one template)
        self.sched.cache.grow_tables = True
        self._dirty = True
        # nodes removed with ``later``: emptied of their pods but still in the snapshot
        # (removing a node rebuilds the node table) until a question could tell (``_settle``)
        self._hidden: dict[str, Node] = {}
        self._as_pending: dict[str, tuple[tuple[Pod, Pod, Hashable | None], ...]] = {}

    # -- editing the snapshot

    def add_node(self, node: Node) -> None:
        hidden = self._hidden.pop(node.name, None)
        if hidden is node:  # back as it was removed: it never left the snapshot
            return
        if hidden is not None:
            self.sched.cache.remove_node(hidden)
        self.sched.cache.add_node(node)
        self._dirty = True

    def remove_node(self, node: Node, *, later: bool = False) -> None:
        """``node`` and its pods taken out; ``later``: the node itself only when a question
        could tell it is there, or when it is not added back before (the scale-down
        simulation removes a node per candidate and puts most back)."""
        ni = self.sched.cache.nodes.get(node.name)
        for pod in [self._pods[p.uid] for p in (ni.pods if ni is not None else ())
                    if p.uid in self._pods]:
            self.remove_pod(pod)
        if later:
            self._hidden[node.name] = node
            return
        hidden = self._hidden.pop(node.name, None)
        self.sched.cache.remove_node(hidden or node)
        self._dirty = True

    def _settle(self) -> None:
        """The nodes removed ``later`` taken out of the snapshot."""
        for node in self._hidden.values():
            self.sched.cache.remove_node(node)
        if self._hidden:
            self._hidden.clear()
            self._dirty = True

    def add_pod(self, pod: Pod) -> None:
        """A bound pod (``spec.nodeName`` set)."""
        self.sched.cache.add_pod(pod)
        self._pods[pod.uid] = pod
        self._dirty = True

    def add_moved(self, pod: Pod, node_name: str) -> Pod:
        """A copy of bound ``pod`` bound to ``node_name`` instead, added; asked as pending,
        it is ``pod``'s pending copy (they differ only in their node), so the plugins'
        per-pod work for it is kept too when a later removal of the loop moves it again."""
        ask, key = self._pending(pod)
        moved = bound_copy(pod, node_name)
        kept = self._as_pending.get(pod.uid, ())
        self._as_pending[pod.uid] = ((moved, ask, key), *kept[:_KEPT - 1])
        self.add_pod(moved)
        return moved

    def remove_pod(self, pod: Pod) -> None:
        self.sched.cache.remove_pod(self._pods.pop(pod.uid))
        self._dirty = True

    def clear(self) -> None:
        """Every node taken out, with its pods: the checker as new, for another question
        (building one builds a Scheduler, which costs more than most questions)."""
        self._settle()
        for ni in list(self.sched.cache.nodes.values()):
            if ni.node is not None:
                self.remove_node(ni.node)

    def load(self, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        for node in nodes:
            self.add_node(node)
        for pod in pods:
            self.add_pod(pod)

    # -- asking

    def _snapshot(self, *, hidden_ok: bool = False) -> Any:
        """The snapshot (``hidden_ok``: it may still hold the nodes removed ``later``,
        empty)."""
        if not hidden_ok:
            self._settle()
        if self._dirty:
            self.sched.cache.update_snapshot(self.sched.snapshot)
            self._dirty = False
        return self.sched.snapshot

    def snapshot(self) -> Snapshot:
        """The snapshot the questions are asked on (the nodes removed ``later`` gone)."""
        snap: Snapshot = self._snapshot()
        return snap

    def framework(self, pod: Pod) -> Framework | None:
        """The profile that serves ``pod`` (None: no profile does)."""
        return self.sched.profiles.get(pod.spec.scheduler_name)

    def fits_any(self, pod: Pod, node_names: Iterable[str]) -> str | None:
        """The first of ``node_names`` (in their order) where ``pod`` passes the Filter
        plugins after its PreFilter, or None (cluster-autoscaler's FitsAnyNodeMatching /
        CheckPredicates). A pod no profile serves fits nowhere."""
        return self.first_fit(pod, node_names)[0]

    def as_pending(self, pod: Pod) -> Pod:
        """``pod`` as a pending pod (no nodeName: it would pin the pod to its node). Kept
        per pod, so that the plugins' per-pod work is kept too: a scale-down asks of the
        same pods at every loop."""
        return self._pending(pod)[0]

    def pending_signature(self, pod: Pod) -> Hashable | None:
        """The filters' signature of ``as_pending(pod)``: equal for pods they judge alike
        on every node (None: not known)."""
        return self._pending(pod)[1]

    def _pending(self, pod: Pod) -> tuple[Pod, Hashable | None]:
        # a few objects a pod: a scale-down asks of the pod itself and of its copies moved
        # by earlier removals of the same loop, by turns
        kept = self._as_pending.get(pod.uid, ())
        for was, ask, key in kept:
            if was is pod:
                return ask, key
        ask = bound_copy(pod, "")
        fwk = self.framework(pod)
        sig = fwk.filter_signature(ask) if fwk is not None else None
        key = None if sig is None else (pod.spec.scheduler_name, sig)
        if len(self._as_pending) >= _MAX_SIGNATURES:
            self._as_pending.clear()
        self._as_pending[pod.uid] = ((pod, ask, key), *kept[:_KEPT - 1])
        return ask, key

    def first_fit(self, pod: Pod, node_names: Iterable[str]) -> tuple[str | None, bool]:
        """``fits_any``, and whether the nodes' verdicts read only their requested and
        pod-count columns (``Framework.filters_read_only_resources``, every node kept by
        PreFilter): then a node that did not fit the pod fits no pod of its signature
        while pods are only added to it. ``node_names`` is read as far as the answer."""
        fwk = self.framework(pod)
        if fwk is None:
            return None, False
        # (a node removed ``later`` is no answer; once settled it is not in the snapshot)
        names = (n for n in node_names if n not in self._hidden)
        head = list(itertools.islice(names, _SCAN + 1))
        if not head:
            return None, False
        while True:
            # With nodes removed ``later`` still there (empty), the answer stands when the
            # PreFilter passed and every Filter that runs judges a node by its own row
            # alone: an empty node then changes no other node's verdict. Otherwise the
            # nodes go for real and the question is asked again.
            hidden = bool(self._hidden)
            snap = self._snapshot(hidden_ok=True)
            state = CycleState()
            pre, st, _with = fwk.run_pre_filter(state, pod, snap)
            if hidden and not (st.is_success() and fwk.filters_row_local(state)):
                self._settle()
                continue
            break
        if not st.is_success():
            return None, False
        columns = pre.all_nodes() and fwk.filters_read_only_resources(state)
        # the first few one by one (a scale-down's pods mostly fit on one of them), then the
        # plugins' batch forms, which judge every node of the snapshot at once
        for name in head[:_SCAN]:
            if not pre.all_nodes() and name not in (pre.node_names or ()):
                continue
            ni = snap.get(name)
            if ni is not None and fwk.run_filter_with_nominated(state, pod, ni).is_success():
                return name, columns
        if len(head) <= _SCAN:
            return None, columns
        found = self.sched.find_nodes_that_fit(fwk, state, pod, exhaustive=True,
                                               pre=(pre, st, _with))
        feasible = np.zeros(snap.num_nodes, dtype=bool)
        feasible[found.feasible] = True
        index = snap.table.index
        return next((n for n in itertools.chain(head[_SCAN:], names)
                     if (r := index.get(n)) is not None and feasible[r]), None), columns

    def reads_only_resources(self, pod: Pod) -> bool:
        """Whether, for ``pod``, a node's verdict depends only on the requests and the number
        of the pods on it (``Framework.filters_read_only_resources``, every node kept by
        PreFilter): then identical nodes holding identical pods judge it alike."""
        fwk = self.framework(pod)
        if fwk is None:
            return False
        state = CycleState()
        pre, st, _with = fwk.run_pre_filter(state, pod, self._snapshot())
        return st.is_success() and pre.all_nodes() and fwk.filters_read_only_resources(state)

    def fits(self, pod: Pod, node_name: str) -> bool:
        return self.fits_any(pod, (node_name,)) is not None

    def width(self) -> int:
        """How many resources the snapshot's node table has rows for."""
        return len(self._snapshot().table.resources)

    def request_vector(self, pod: Pod) -> np.ndarray:
        """``pod``'s requests over the node table's resources (what placing it adds to a
        node's requested column)."""
        vec: np.ndarray = self._snapshot().table.request_vectors.vector(pod).copy()
        return vec

    def capacities(self, pod: Pod, node_names: Sequence[str], extra_req: np.ndarray,
                   extra_cnt: np.ndarray, most: int) -> np.ndarray:
        """How many copies of ``pod``, one after another, each of ``node_names`` takes (at
        most ``most``): what ``fits`` would answer pod by pod with the copies placed, for a
        pod whose filters read only resources (``reads_only_resources``). The nodes also
        hold ``extra_req`` / ``extra_cnt`` ([resources, nodes] / [nodes]), pods placed
        there that the snapshot does not hold.

        A node's verdict then depends only on its requested and pod-count columns and,
        as copies are added, can only turn from fit to not fit: so it is found with the
        filters' batch forms on the columns changed (``framework/adjusted.py``), from a
        guess by free room checked on both sides, else by bisection."""
        caps = np.zeros(len(node_names), dtype=np.int64)
        fwk = self.framework(pod)
        if fwk is None or not node_names or most <= 0:
            return caps
        snap = self._snapshot()
        table = snap.table
        vec = table.request_vectors.vector(pod).copy()  # may give the table a resource row
        width = len(table.resources)
        if extra_req.shape[0] < width:
            extra_req = np.vstack([extra_req, np.zeros(
                (width - extra_req.shape[0], extra_req.shape[1]), dtype=np.int64)])
        state = CycleState()
        _pre, st, _with = fwk.run_pre_filter(state, pod, snap)
        if not st.is_success():
            return caps
        rows = np.array([table.index[n] for n in node_names], dtype=np.int64)
        adj = AdjustedSnapshot(snap)
        adj.set(rows, extra_req, extra_cnt)
        live = np.flatnonzero(fwk.filter_batch(state, pod, adj.view(), rows).codes == 0)
        if not len(live):
            return caps
        filters = [cast(FilterBatch, p) for p in fwk.filter
                   if p.name not in state.skip_filter and p.filter_reads == READS_RESOURCES]
        r = rows[live]

        def fit_after(at: np.ndarray, k: np.ndarray) -> np.ndarray:
            """Whether one more copy fits the nodes at ``at`` (positions in ``live``)
            holding ``k`` copies."""
            sub = r[at]
            adj.set(sub, extra_req[:, live[at]] + vec[:, None] * k[None, :],
                    extra_cnt[live[at]] + k)
            ok = np.ones(len(at), dtype=bool)
            for p in filters:
                ok &= p.filter_batch(state, pod, adj.view(), sub).codes == 0
            return ok

        n = len(live)
        lo = np.ones(n, dtype=np.int64)  # it takes at least lo copies ...
        hi = np.full(n, most, dtype=np.int64)  # ... and at most hi (of those wanted)
        free = table.allowed_pods[r] - table.pod_count[r] - extra_cnt[live]
        guess = np.minimum(hi, free)
        used = vec > 0
        if used.any():
            room = (table.alloc[:, r][used] - table.requested[:, r][used]
                    - extra_req[:, live][used])
            guess = np.minimum(guess, (room // vec[used][:, None]).min(axis=0))
        guess = np.clip(guess, lo, hi)
        everywhere = np.arange(n)
        took = fit_after(everywhere, guess - 1)
        lo = np.where(took, guess, lo)
        hi = np.where(took, hi, guess - 1)
        more = np.flatnonzero(took & (guess < hi))
        if len(more):
            again = fit_after(more, guess[more])
            lo[more] = np.where(again, guess[more] + 1, lo[more])
            hi[more] = np.where(again, hi[more], guess[more])
        while True:
            open_ = np.flatnonzero(lo < hi)
            if not len(open_):
                break
            mid = (lo[open_] + hi[open_] + 1) // 2
            ok = fit_after(open_, mid - 1)
            lo[open_] = np.where(ok, mid, lo[open_])
            hi[open_] = np.where(ok, hi[open_], mid - 1)
        caps[live] = lo
        return caps
