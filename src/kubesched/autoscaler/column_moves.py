"""One scale-down simulation's pod moves as changes of the node table's requested and
pod-count columns, for pods judged on nothing else of the pods on a node.

When every pod the simulation may move is, after its PreFilter, judged by Filter plugins
that each read only the node itself or its requested and pod-count columns
(``Framework.filters_read_only_resources``), and each judge a node by its own row
(``filters_row_local``), then moving pods changes only those columns, and a removed node
changes no other node's verdict. The checker's snapshot is left as it is: the moves are
kept in an ``AdjustedSnapshot``'s columns (``framework/adjusted.py``), and a question is

- the verdicts of the plugins that read the node alone: they do not change while pods move,
  so they are one mask per pod signature, worked out once, and
- the verdicts of the plugins that read the columns, on the changed columns, over the
  nodes the mask lets through in the order asked: the first few one by one (``FilterRow``),
  then a few at once, then the rest (``FilterPasses``, else their batch forms).

Pods of one signature get the same PreFilter and Filter verdicts over the same cluster
(``Framework.filter_signature``), so one PreFilter per signature serves them all; and with
such plugins, PreFilter does not read the pods a move changes: what it skips or which nodes it
keeps depends on the pod, the nodes and the other objects. (The one PreFilter that reads the
pods on nodes, InterPodAffinity's — pods with required anti-affinity — runs its Filter, which
reads pods, whenever it finds any; then this form is not taken.)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from kubesched.api.types import Pod
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.framework.adjusted import AdjustedSnapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import READS_RESOURCES
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot

# the nodes from the cursor on tried one by one (most pods fit one of them), among the nodes
# walked past one by one at most, then the nodes judged at once first, before all the others
_SCAN = 4
_WALK = 64
_CHUNK = 16


@dataclass
class _Kind:
    """What the pods of one signature are judged with: one of them as pending, its
    CycleState after PreFilter with every plugin but those that read the columns skipped,
    and which nodes of the order the other plugins let through."""

    fwk: Framework
    pod: Pod
    columns: CycleState
    passes: np.ndarray
    # the same as a list (read one node at a time)
    passing: list[bool] = field(default_factory=list)
    # the plugins that read the columns, when each says which nodes pass without why, for
    # many nodes (``FilterPasses``) and for one (``FilterRow``)
    quick: list[Callable[[CycleState, Pod, Snapshot, np.ndarray], np.ndarray | None]] | None \
        = None
    one: list[Callable[[CycleState, Pod, Snapshot, int], bool | None]] | None = None


class ColumnMoves:
    """Pods moved between the nodes ``order`` names, as column changes (the module's
    docstring). ``of`` gives one only when every pod of ``pods`` may be judged so."""

    def __init__(self, checker: PredicateChecker, order: list[str], rows: np.ndarray,
                 kinds: dict[Hashable, _Kind], vectors: dict[str, list[tuple[int, int]]]
                 ) -> None:
        self._checker = checker
        self._kinds = kinds
        self._vectors = vectors
        self._adjusted = AdjustedSnapshot(checker.snapshot())
        self._requested = self._adjusted.table.requested
        self._count = self._adjusted.table.pod_count
        self._order = order
        self._rows = rows  # the table row of each node of the order
        self._row_list: list[int] = rows.tolist()
        self._position = {n: i for i, n in enumerate(order)}
        self._open = np.ones(len(order), dtype=bool)  # nodes pods may go to
        self._open_list = [True] * len(order)

    @classmethod
    def of(cls, checker: PredicateChecker, order: list[str], pods: Iterable[Pod]
           ) -> ColumnMoves | None:
        snap = checker.snapshot()
        index = snap.table.index
        got = [index.get(n) for n in order]
        if any(r is None for r in got):
            return None
        kinds: dict[Hashable, _Kind] = {}
        asked: list[tuple[Pod, Pod]] = []
        for p in pods:
            key = checker.pending_signature(p)
            if key is None:
                return None
            ask = checker.as_pending(p)
            asked.append((p, ask))
            if key in kinds:
                continue
            fwk = checker.framework(ask)
            if fwk is None:
                return None
            state = CycleState()
            pre, st, _with = fwk.run_pre_filter(state, ask, snap)  # may add resource rows
            if not (st.is_success() and pre.all_nodes()
                    and fwk.filters_read_only_resources(state) and fwk.filters_row_local(state)):
                return None
            kinds[key] = _Kind(fwk, ask, state, np.zeros(0, dtype=bool))
        table = snap.table
        # a pod's requests as (resource row, quantity), of the resources it requests (a
        # row stays where it is as the table gains resources)
        vectors = {}
        alike: dict[tuple[tuple[str, int], ...], list[tuple[int, int]]] = {}
        for p, ask in asked:
            contents = tuple(ask.requests.items())
            sparse = alike.get(contents)
            if sparse is None:
                v = table.request_vectors.vector(ask)
                sparse = alike[contents] = [(r, int(v[r])) for r in np.flatnonzero(v).tolist()]
            vectors[p.uid] = sparse
        rows = np.array(got, dtype=np.int64)
        for kind in kinds.values():
            by_columns = {p.name for p in kind.fwk.filter if p.filter_reads == READS_RESOURCES}
            static = kind.columns.clone()
            static.skip_filter |= by_columns
            kind.passes = kind.fwk.filter_batch(static, kind.pod, snap, rows).codes == 0
            kind.columns.skip_filter |= {p.name for p in kind.fwk.filter} - by_columns
            running = [p for p in kind.fwk.filter if p.name not in kind.columns.skip_filter]
            # (the Protocols' methods looked up by name: isinstance on a Protocol is slow)
            quick = [getattr(p, "filter_passes", None) for p in running]
            one = [getattr(p, "filter_row", None) for p in running]
            kind.quick = None if None in quick else cast(list[Any], quick)
            kind.one = None if None in one else cast(list[Any], one)
            kind.passing = kind.passes.tolist()
        return cls(checker, order, rows, kinds, vectors)

    def move(self, node: str, movers: list[Pod], start: dict[Hashable, int]
             ) -> tuple[str | None, list[tuple[Pod, str]]]:
        """``movers`` taken off ``node``, each placed on the first node of the order from
        its signature's cursor in ``start`` on that stays and fits it, the cursor moved to
        that node (``scaledown._Cursors``); then ``node`` is removed: (None, [(pod, node it
        went to)]). Or, when one fits nowhere, everything as it was, ``start`` too:
        (which pod, [])."""
        here = self._position[node]
        for p in movers:
            self._place(p, here, -1)
        self._open[here] = self._open_list[here] = False
        before = dict(start)
        moved: list[tuple[Pod, int]] = []
        checker, kinds = self._checker, self._kinds
        for p in movers:
            key = checker.pending_signature(p)
            at = self._first(kinds[key], start.get(key, 0))
            start[key] = len(self._order) if at is None else at
            if at is None:
                for q, there in moved:
                    self._place(q, there, -1)
                for q in movers:
                    self._place(q, here, 1)
                self._open[here] = self._open_list[here] = True
                start.clear()
                start.update(before)
                return f"pod {p.key} fits on no other node", []
            self._place(p, at, 1)
            moved.append((p, at))
        return None, [(p, self._order[at]) for p, at in moved]

    def _place(self, pod: Pod, at: int, sign: int) -> None:
        """``pod`` added to (``sign`` 1) or taken off (-1) the node at ``at`` in the order."""
        row = self._row_list[at]
        requested = self._requested
        for r, q in self._vectors[pod.uid]:
            requested[r, row] += sign * q
        self._count[row] += sign

    def _first(self, kind: _Kind, begin: int) -> int | None:
        """The position in the order of the first node from ``begin`` on that stays and
        fits a pod of ``kind``, or None: the first few nodes one by one (a pod mostly fits
        the one at its cursor, or the next), then the others, a few at a time and then
        all at once."""
        passing, open_, rows = kind.passing, self._open_list, self._row_list
        end, walk = begin, min(begin + _WALK, len(rows))
        tried = 0
        while end < walk and tried < _SCAN:
            if passing[end] and open_[end]:
                if self._fits(kind, rows[end]):
                    return end
                tried += 1
            end += 1
        at_ = end + np.flatnonzero(kind.passes[end:] & self._open[end:])
        for chunk in (at_[:_CHUNK], at_[_CHUNK:]):
            if len(chunk):
                fits = np.flatnonzero(self._fit(kind, self._rows[chunk]))
                if len(fits):
                    return int(chunk[fits[0]])
        return None

    def _fits(self, kind: _Kind, row: int) -> bool:
        """``_fit`` for one row."""
        if kind.one is not None:
            view = self._adjusted.view()
            for p in kind.one:
                passes = p(kind.columns, kind.pod, view, row)
                if passes is None:
                    break
                if not passes:
                    return False
            else:
                return True
        return bool(self._fit(kind, np.array([row], dtype=np.int64))[0])

    def _fit(self, kind: _Kind, rows: np.ndarray) -> np.ndarray:
        """Whether a pod of ``kind`` fits each of the table's ``rows``, judged by the
        plugins that read the columns, on the columns as the moves leave them."""
        view = self._adjusted.view()
        if kind.quick is not None:
            fit = np.ones(len(rows), dtype=bool)
            for p in kind.quick:
                passes = p(kind.columns, kind.pod, view, rows)
                if passes is None:
                    break
                fit &= passes
            else:
                return fit
        out: np.ndarray = kind.fwk.filter_batch(kind.columns, kind.pod, view, rows).codes == 0
        return out
