"""InterPodAffinity's counts over the existing pods, kept across scheduling cycles.

PreFilter and PreScore need, per (topologyKey, value), sums over the pods already placed:
pods matching the incoming pod's terms, and existing pods' terms matching the incoming pod.
Pods of one workload share their shapes, so instead of testing every existing pod on every
cycle the plugin keeps (``PodIndex``, one per plugin instance):

- per node-table row, int64 values derived from the row's pods (``PodIndex.rows``, as
  ``framework.pod_counts.PodCountCache`` but computed from the row, so that they can come
  from the catalog below), cached by a key that determines them — the signature of an
  incoming term (its namespaces and selectors), or the set of existing terms that match the
  incoming pod — and recomputed only for the rows whose pods changed since
  (``framework.table_cache.RowMemo``, ``RowState``);
- per row, the existing pods' terms of a kind, with their multiplicity (``_Catalog``), so
  that each distinct term is tested against the incoming pod once per cycle. Terms are told
  apart by identity: pods with equal affinities share their compiled terms
  (``filtering.pod_affinity_info``).

Per-row values are aggregated per topology value with ``np.bincount`` over the factorized
label column of the topology key. The results (``TopologyCounts``, ``ByCode``) are arrays over
the label column's codes; PreFilter's counts take AddPod / RemovePod changes in a small dict
on top, so a cloned state copies only that dict.

A snapshot that is not maintained by the scheduler cache (``generation`` 0: nothing tells
which rows changed) gets a fresh ``PodIndex`` every time: every row is counted directly.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import TYPE_CHECKING, TypeVar, overload

import numpy as np

from kubesched.api.selectors import LabelValues, Selector
from kubesched.api.types import Pod
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.table_cache import RowFn, RowMemo, RowState

if TYPE_CHECKING:
    from kubesched.framework.snapshot import Snapshot
    from kubesched.plugins.interpodaffinity.filtering import AffinityTerm, PodAffinityInfo

TopologyPair = tuple[str, str]
_T = TypeVar("_T")
# A topology key's values per code of its factorized label column, with a trailing 0 for
# code -1 (label absent), and the column's distinct values the codes index.
ByCode = tuple[np.ndarray, LabelValues]

# ============================================================ label values


def value_index(uniques: LabelValues) -> dict[str, int]:
    """value -> code for the distinct values of a factorized label column."""
    return uniques.code


def label_codes(table: NodeTable, key: str) -> tuple[np.ndarray, LabelValues]:
    """Each node row's value of label ``key`` as a code into the distinct values (-1: the
    label is absent); factorized once per label column (``NodeTable.label_factors``)."""
    f = table.label_factors(key)
    return f.codes, f.values


def aggregate(table: NodeTable, key: str, rows: np.ndarray) -> ByCode:
    """Per-row values summed per value of label ``key`` (rows without the label dropped)."""
    codes, uniques = label_codes(table, key)
    u = len(uniques)
    out = np.zeros(u + 1, dtype=np.int64)
    if len(rows) and rows.any():
        # float64 sums of int64 values are exact far beyond any count here
        out[:u] = np.bincount(codes + 1, weights=rows, minlength=u + 1)[1:]
    return out, uniques


def by_code_get(b: ByCode, value: str) -> int:
    code = value_index(b[1]).get(value)
    return 0 if code is None else int(b[0][code])


def by_code_for(b: ByCode | None, uniques: LabelValues) -> np.ndarray:
    """``b``'s values over the codes of ``uniques`` (trailing 0 for absent); ``b`` itself
    when it was built over the same column (do not modify the result)."""
    if b is None:
        return np.zeros(len(uniques) + 1, dtype=np.int64)
    if b[1] is uniques:
        return b[0]
    out = np.zeros(len(uniques) + 1, dtype=np.int64)
    index = value_index(b[1])
    for i, v in enumerate(uniques):
        code = index.get(v)
        if code is not None:
            out[i] = b[0][code]
    return out


# ============================================================ PreFilter's counts


class TopologyCounts(MutableMapping[TopologyPair, int]):
    """(topologyKey, value) -> count, as upstream's ``topologyToMatchedTermCount``: a pair is
    present while its count is not 0. Counts per topology key over a label column's codes
    (shared by clones, never modified) plus changes made by AddPod / RemovePod."""

    __slots__ = ("_base", "_delta", "_len")

    def __init__(self, base: dict[str, ByCode] | None = None) -> None:
        self._base: dict[str, ByCode] = base if base is not None else {}
        self._delta: dict[TopologyPair, int] = {}
        self._len = sum(int(np.count_nonzero(a)) for a, _ in self._base.values())

    def _base_get(self, key: str, value: str) -> int:
        b = self._base.get(key)
        return 0 if b is None else by_code_get(b, value)

    @overload
    def get(self, pair: TopologyPair, /) -> int | None: ...
    @overload
    def get(self, pair: TopologyPair, default: int | _T, /) -> int | _T: ...

    def get(self, pair: TopologyPair, default: object = None, /) -> object:
        n = self._base_get(pair[0], pair[1]) if self._base else 0
        if self._delta:
            n += self._delta.get(pair, 0)
        return n if n != 0 else default

    def __getitem__(self, pair: TopologyPair) -> int:
        n = self.get(pair)
        if n is None:
            raise KeyError(pair)
        return n

    def add(self, pair: TopologyPair, value: int) -> None:
        """Count ``value`` more for ``pair`` (upstream's ``update``)."""
        before = self.get(pair, 0)
        assert before is not None
        d = self._delta.get(pair, 0) + value
        if d:
            self._delta[pair] = d
        else:
            self._delta.pop(pair, None)
        self._len += (before + value != 0) - (before != 0)

    def __setitem__(self, pair: TopologyPair, value: int) -> None:
        """Set the count of ``pair`` (0 removes it)."""
        before = self.get(pair, 0)
        assert before is not None
        self.add(pair, value - before)

    def __delitem__(self, pair: TopologyPair) -> None:
        if self.get(pair) is None:
            raise KeyError(pair)
        self[pair] = 0

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[TopologyPair]:
        delta = self._delta
        for key, (arr, uniques) in self._base.items():
            for code in np.flatnonzero(arr).tolist():
                pair = (key, uniques[code])
                if int(arr[code]) + delta.get(pair, 0) != 0:
                    yield pair
        for pair, d in list(delta.items()):
            if self._base_get(pair[0], pair[1]) == 0 and d != 0:
                yield pair

    def __repr__(self) -> str:
        return f"TopologyCounts({dict(self.items())!r})"

    def clone(self) -> TopologyCounts:
        c = TopologyCounts.__new__(TopologyCounts)
        c._base = self._base
        c._delta = dict(self._delta)
        c._len = self._len
        return c

    def topology_keys(self) -> list[str]:
        """The keys of all pairs that may be present (a superset)."""
        keys = list(self._base)
        for k, _ in self._delta:
            if k not in self._base and k not in keys:
                keys.append(k)
        return keys

    def values_by_code(self, key: str, uniques: LabelValues) -> np.ndarray:
        """The counts of ``key`` over the codes of ``uniques`` (trailing 0 for absent; do not
        modify the result)."""
        out = by_code_for(self._base.get(key), uniques)
        changes = [(v, d) for (k, v), d in self._delta.items() if k == key]
        if changes:
            out = out.copy()
            index = value_index(uniques)
            for v, d in changes:
                code = index.get(v)
                if code is not None:
                    out[code] += d
        return out


# ============================================================ caches


def term_signature(t: AffinityTerm) -> Hashable:
    """What decides which pods a term matches (the topology key aside)."""
    return (t.namespaces, _selector_signature(t.selector),
            _selector_signature(t.namespace_selector))


def _selector_signature(s: Selector) -> Hashable:
    return (s.nothing, s.requirements)


class _Catalog:
    """Per row, the existing pods' terms of one kind (items) with their multiplicity, and
    their totals over all rows."""

    __slots__ = ("items_of", "rows", "totals")

    def __init__(self, snapshot: Snapshot,
                 items_of: Callable[[NodeInfo], dict[Hashable, int] | None]) -> None:
        self.items_of = items_of
        self.rows: list[dict[Hashable, int] | None] = [items_of(ni)
                                                       for ni in snapshot.node_infos]
        self.totals: dict[Hashable, int] = {}
        for d in self.rows:
            if d:
                for it, c in d.items():
                    self.totals[it] = self.totals.get(it, 0) + c

    def refresh(self, snapshot: Snapshot, changed: list[int]) -> None:
        totals, infos = self.totals, snapshot.node_infos
        for r in changed:
            old, new = self.rows[r], self.items_of(infos[r])
            if old:
                for it, c in old.items():
                    n = totals[it] - c
                    if n:
                        totals[it] = n
                    else:
                        del totals[it]
            if new:
                for it, c in new.items():
                    totals[it] = totals.get(it, 0) + c
            self.rows[r] = new


class PodIndex:
    """What InterPodAffinity keeps across cycles for one node table (see the module doc)."""

    def __init__(self, info_of: Callable[[Pod], PodAffinityInfo], hard_pod_affinity_weight: int,
                 max_entries: int = 256) -> None:
        self.info_of = info_of  # filtering.pod_affinity_info
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.max_entries = max_entries
        self._snapshot: Snapshot | None = None
        self._rows = RowMemo(max_entries)
        self._anti: RowState[_Catalog] = RowState()
        self._score: RowState[_Catalog] = RowState()

    def sync(self, snapshot: Snapshot) -> PodIndex:
        self._snapshot = snapshot
        return self

    def rows(self, key: Hashable, fn: RowFn, build: Callable[[], np.ndarray] | None = None
             ) -> np.ndarray:
        """Values per row for ``key`` (``fn(row)``; ``build()``: all rows at once), kept up to
        date with the snapshot (do not modify the array)."""
        snap = self._snapshot
        assert snap is not None
        return self._rows.all_rows(snap.table, key, fn, build)

    def _catalog(self, score: bool) -> _Catalog:
        snap = self._snapshot
        assert snap is not None
        items_of = self._score_items if score else self._anti_items
        return (self._score if score else self._anti).get(
            snap.table, lambda _: _Catalog(snap, items_of),
            lambda cat, changed: cat.refresh(snap, changed))

    def _score_items(self, ni: NodeInfo) -> dict[Hashable, int] | None:
        pods = ni.pods_with_affinity
        if not pods:
            return None
        hard, info_of = self.hard_pod_affinity_weight, self.info_of
        d: dict[Hashable, int] = {}
        for p in pods:
            info = info_of(p)
            if hard > 0:
                for t in info.required_affinity:
                    d[(t, hard)] = d.get((t, hard), 0) + 1
            for w in info.preferred_affinity:
                d[(w.term, w.weight)] = d.get((w.term, w.weight), 0) + 1
            for w in info.preferred_anti_affinity:
                d[(w.term, -w.weight)] = d.get((w.term, -w.weight), 0) + 1
        return d or None

    def _anti_items(self, ni: NodeInfo) -> dict[Hashable, int] | None:
        pods = ni.pods_with_required_anti_affinity
        if not pods:
            return None
        info_of = self.info_of
        d: dict[Hashable, int] = {}
        for p in pods:
            for t in info_of(p).required_anti_affinity:
                d[t] = d.get(t, 0) + 1
        return d or None

    def _catalog_rows(self, cat: _Catalog, key: Hashable, items: frozenset[Hashable],
                      weight: Callable[[Hashable], int]) -> np.ndarray:
        """Per row, the sum of ``weight(item)`` over the row's items in ``items``."""
        rows = cat.rows

        def fn(r: int) -> int:
            d = rows[r]
            if not d:
                return 0
            return sum(c * weight(it) for it, c in d.items() if it in items)

        def build() -> np.ndarray:
            out = np.zeros(len(rows), dtype=np.int64)
            for r, d in enumerate(rows):
                if d:
                    out[r] = sum(c * weight(it) for it, c in d.items() if it in items)
            return out

        return self.rows(key, fn, build)

    def _matching_rows(self, t: AffinityTerm) -> np.ndarray:
        """Per row, the pods matching the incoming pod's (namespace-merged) term ``t``."""
        infos = self._snapshot.node_infos  # type: ignore[union-attr]

        def fn(r: int) -> int:
            n = 0
            for p in infos[r].pods:
                if t.matches(p, None):
                    n += 1
            return n

        return self.rows(("match", term_signature(t)), fn)

    # ------------------------------------------------------------------ PreFilter

    def existing_anti_affinity_counts(self, pod: Pod, ns_labels: dict[str, str]
                                      ) -> TopologyCounts:
        """Existing pods' required anti-affinity terms matching the incoming pod, per
        (topologyKey, value of the existing pod's node)."""
        cat = self._catalog(score=False)
        if not cat.totals:
            return TopologyCounts()
        by_key: dict[str, list[Hashable]] = {}
        for t in cat.totals:
            if t.matches(pod, ns_labels):  # type: ignore[attr-defined]
                by_key.setdefault(t.topology_key, []).append(t)  # type: ignore[attr-defined]
        base: dict[str, ByCode] = {}
        table = self._snapshot.table  # type: ignore[union-attr]
        for key, ts in by_key.items():
            items = frozenset(ts)
            rows = self._catalog_rows(cat, ("anti", items), items, _one)
            b = aggregate(table, key, rows)
            if b[0].any():
                base[key] = b
        return TopologyCounts(base)

    def incoming_counts(self, info: PodAffinityInfo) -> tuple[TopologyCounts, TopologyCounts]:
        """Existing pods matching all the incoming pod's required affinity terms, and each of
        its required anti-affinity terms, per (topologyKey, value of the existing pod's
        node); ``info``: the incoming pod's terms with namespace selectors merged."""
        table = self._snapshot.table  # type: ignore[union-attr]
        affinity: dict[str, ByCode] = {}
        terms = info.required_affinity
        if terms:
            infos = self._snapshot.node_infos  # type: ignore[union-attr]

            def fn(r: int) -> int:
                n = 0
                for p in infos[r].pods:
                    if all(t.matches(p, None) for t in terms):
                        n += 1
                return n

            rows = self.rows(("all", tuple(term_signature(t) for t in terms)), fn)
            mult: dict[str, int] = {}
            for t in terms:
                mult[t.topology_key] = mult.get(t.topology_key, 0) + 1
            for key, m in mult.items():
                arr, uniques = aggregate(table, key, rows)
                if arr.any():
                    affinity[key] = (arr * m if m > 1 else arr, uniques)
        anti: dict[str, ByCode] = {}
        if info.required_anti_affinity:
            sums: dict[str, np.ndarray] = {}
            for t in info.required_anti_affinity:
                rows = self._matching_rows(t)
                s = sums.get(t.topology_key)
                sums[t.topology_key] = rows if s is None else s + rows
            for key, rows in sums.items():
                b = aggregate(table, key, rows)
                if b[0].any():
                    anti[key] = b
        return TopologyCounts(affinity), TopologyCounts(anti)

    # ------------------------------------------------------------------ PreScore

    def topology_score(self, pod: Pod, info: PodAffinityInfo, ns_labels: dict[str, str]
                       ) -> dict[str, ByCode]:
        """PreScore's sums per topology key (only keys something contributed to, as
        upstream's map): the incoming pod's preferred terms (namespace-merged, in ``info``)
        against the existing pods, and the existing pods' required affinity
        (``hardPodAffinityWeight``) and preferred terms against the incoming pod."""
        weighted: dict[str, np.ndarray] = {}
        present: dict[str, np.ndarray] = {}

        def add(key: str, w: np.ndarray, n: np.ndarray) -> None:
            if key in weighted:
                weighted[key] = weighted[key] + w
                present[key] = present[key] + n
            else:
                weighted[key], present[key] = w, n

        for sign, terms in ((1, info.preferred_affinity), (-1, info.preferred_anti_affinity)):
            for wt in terms:
                rows = self._matching_rows(wt.term)
                add(wt.term.topology_key, rows * (sign * wt.weight), rows)
        cat = self._catalog(score=True)
        if cat.totals:
            matched: dict[str, list[Hashable]] = {}
            memo: dict[int, bool] = {}
            for it in cat.totals:
                t = it[0]  # type: ignore[index]
                m = memo.get(id(t))
                if m is None:
                    m = memo[id(t)] = t.matches(pod, ns_labels)
                if m:
                    matched.setdefault(t.topology_key, []).append(it)
            for key, its in matched.items():
                items = frozenset(its)
                add(key, self._catalog_rows(cat, ("score", items), items, _weight),
                    self._catalog_rows(cat, ("present", items), items, _one))
        table = self._snapshot.table  # type: ignore[union-attr]
        out: dict[str, ByCode] = {}
        for key, n in present.items():
            codes, _ = label_codes(table, key)
            if not n[codes >= 0].any():
                continue  # nothing counted on a node with the key
            out[key] = aggregate(table, key, weighted[key])
        return out


def _one(_item: Hashable) -> int:
    return 1


def _weight(item: Hashable) -> int:
    return item[1]  # type: ignore[index]  # score items are (term, weight) pairs
