"""Shared pieces of PodTopologySpread (upstream ``podtopologyspread/common.go`` and
``plugins/helper/spread.go``, v1.35).

Selectors are ``api.selectors.Selector``, which keeps the distinctions upstream's
``labels.Selector`` makes: a nil ``labelSelector`` is ``labels.Nothing()`` (matches nothing, not
empty), ``{}`` is ``labels.Everything()`` (matches everything, *empty*), and pods are counted
only for non-empty selectors.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.selectors import (
    IN,
    Selector,
    get_required_node_affinity,
    label_selector_as_selector,
    selector_from_set,
)
from kubesched.api.types import HOSTNAME_LABEL, Node, Pod, TopologySpreadConstraint
from kubesched.framework.node_table import NodeTable
from kubesched.framework.pod_counts import PodCountCache
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.helper import find_matching_untolerated_taint

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

MAX_INT32 = 2**31 - 1

# ---------------------------------------------------------------- label selectors


def merge_label_set_with_selector(match_labels: Mapping[str, str], s: Selector) -> Selector:
    """common.go mergeLabelSetWithSelector: a nothing-selector stays as it is."""
    if s.nothing:
        return s
    return Selector((*selector_from_set(match_labels).requirements, *s.requirements))


def and_selectors(a: Selector, b: Selector) -> Selector:
    """``a.Add(b.Requirements()...)`` where b's requirements are ok (b is not nothing)."""
    if a.nothing or b.nothing:
        return a
    return Selector((*a.requirements, *b.requirements))


Matcher = Callable[[Mapping[str, str]], bool]


def compile_matcher(sel: Selector) -> Matcher:
    """A fast ``sel.matches`` for the pod-counting loops (same verdicts)."""
    if sel.nothing:
        return lambda labels: False
    reqs = sel.requirements
    if not reqs:
        return lambda labels: True
    if all(r.op == IN and len(r.values) == 1 for r in reqs):
        pairs = tuple((r.key, next(iter(r.values))) for r in reqs)
        if len(pairs) == 1:
            (k, v), = pairs
            return lambda labels: labels.get(k) == v
        return lambda labels: all(labels.get(k) == v for k, v in pairs)
    if len(reqs) == 1:
        r = reqs[0]
        key, test = r.key, r.matches_value
        return lambda labels: test(labels.get(key))
    tests = tuple((r.key, r.matches_value) for r in reqs)
    return lambda labels: all(t(labels.get(k)) for k, t in tests)


# ---------------------------------------------------------------- constraints


@dataclass(frozen=True, slots=True)
class Constraint:
    """Internal form of a TopologySpreadConstraint (upstream topologySpreadConstraint)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def filter_constraints(constraints: Sequence[TopologySpreadConstraint],
                       pod_labels: Mapping[str, str], action: str) -> list[Constraint]:
    """common.go filterTopologySpreadConstraints (all feature gates of v1.35 on)."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = label_selector_as_selector(c.label_selector)  # SelectorError if invalid
        if c.match_label_keys:
            match = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if match:
                selector = merge_label_set_with_selector(match, selector)
        out.append(Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            node_affinity_policy=c.node_affinity_policy or HONOR,
            node_taints_policy=c.node_taints_policy or IGNORE,
        ))
    return out


def node_labels_match_spread_constraints(labels: Mapping[str, str],
                                         constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def pod_labels_match_spread_constraints(constraints: Sequence[Constraint],
                                        labels: Mapping[str, str]) -> bool:
    return any(c.selector.matches(labels) for c in constraints)


def count_pods_match_selector(pods: Iterable[Pod], selector: Selector, ns: str) -> int:
    """common.go countPodsMatchSelector: same namespace, not terminating, labels match;
    an empty selector counts nothing."""
    if selector.empty() or selector.nothing:
        return 0
    match = compile_matcher(selector)
    n = 0
    for p in pods:
        m = p.metadata
        if m.namespace == ns and m.deletion_timestamp is None and match(m.labels):
            n += 1
    return n


def count_by_selector(pods: Iterable[Pod], matchers: Sequence[Matcher | None],
                      ns: str) -> list[int]:
    """count_pods_match_selector for several (compiled) selectors, reading the pods once;
    a None matcher (empty or nothing selector) counts 0."""
    counts = [0] * len(matchers)
    live = [(i, m) for i, m in enumerate(matchers) if m is not None]
    if not live:
        return counts
    for p in pods:
        meta = p.metadata
        if meta.namespace != ns or meta.deletion_timestamp is not None:
            continue
        labels = meta.labels
        for i, m in live:
            if m(labels):
                counts[i] += 1
    return counts


POD_COUNTS_KEY = "PodTopologySpreadPodCounts"


def selector_key(sel: Selector) -> tuple:
    """Selectors with equal keys match the same label sets (requirements are ANDed)."""
    return (sel.nothing, frozenset(sel.requirements))


def _single_counter(match: Matcher, ns: str) -> Callable[[Sequence[Pod]], int]:
    def count(pods: Sequence[Pod]) -> int:
        n = 0
        for p in pods:
            m = p.metadata
            if m.namespace == ns and m.deletion_timestamp is None and match(m.labels):
                n += 1
        return n
    return count


class PodCounts:
    """Matching-pod counts per node-table row and selector for one scheduling cycle (one pod,
    one snapshot), shared by PreFilter, PreScore and Score through the cycle state, so each
    node's pods are read once however many phases and constraints need them. Counts are of
    the snapshot's pods (AddPod / RemovePod adjust PreFilter's domain counts, not these).

    With a ``PodCountCache`` (the plugin's, kept across cycles) and ``node_infos`` being the
    snapshot's own, the counts come from that cache: only the nodes whose pods changed since
    the last cycle are recounted. Otherwise the rows asked for are counted directly."""

    __slots__ = ("_arrays", "_matchers", "cache", "node_infos", "ns", "size", "snapshot")

    def __init__(self, node_infos: Sequence[Any], ns: str, snapshot: Snapshot | None = None,
                 cache: PodCountCache | None = None) -> None:
        self.node_infos = node_infos
        self.size = len(node_infos)
        self.ns = ns
        usable = (cache is not None and snapshot is not None
                  and node_infos is snapshot.node_infos and snapshot.table.size == self.size)
        self.snapshot = snapshot if usable else None
        self.cache = cache if usable else None
        self._arrays: dict[tuple, np.ndarray] = {}
        self._matchers: dict[tuple, Matcher | None] = {}

    @property
    def cached(self) -> bool:
        return self.cache is not None

    def clone(self) -> PodCounts:
        return self

    def counts(self, selectors: Sequence[Selector], rows: Sequence[np.ndarray]
               ) -> list[np.ndarray]:
        """Per-row counts (over all rows; -1 where not computed) for each selector, computed
        at least on its ``rows``. Do not modify the arrays."""
        keys = [selector_key(s) for s in selectors]
        if self.cache is not None:
            return [self._cached(sel, key) for sel, key in zip(selectors, keys, strict=True)]
        need: dict[int, list[tuple]] = {}
        for sel, key, r in zip(selectors, keys, rows, strict=True):
            arr = self._arrays.get(key)
            if arr is None:
                arr = self._arrays[key] = np.full(self.size, -1, dtype=np.int64)
                self._matchers[key] = (None if sel.empty() or sel.nothing
                                       else compile_matcher(sel))
            todo = r[arr[r] < 0] if len(r) else r
            for row in todo.tolist():
                lst = need.setdefault(row, [])
                if key not in lst:
                    lst.append(key)
        infos = self.node_infos
        for row, ks in need.items():
            cnt = count_by_selector(infos[row].pods, [self._matchers[k] for k in ks], self.ns)
            for k, c in zip(ks, cnt, strict=True):
                self._arrays[k][row] = c
        return [self._arrays[k] for k in keys]

    def _cached(self, sel: Selector, key: tuple) -> np.ndarray:
        arr = self._arrays.get(key)
        if arr is None:
            if sel.empty() or sel.nothing:
                arr = np.zeros(self.size, dtype=np.int64)
            else:
                assert self.cache is not None and self.snapshot is not None
                arr = self.cache.counts(self.snapshot, (self.ns, key),
                                        _single_counter(compile_matcher(sel), self.ns))
            self._arrays[key] = arr
        return arr


def pod_counts(state: Any, node_infos: Sequence[Any], ns: str, snapshot: Snapshot | None = None,
               cache: PodCountCache | None = None) -> PodCounts:
    """The cycle's PodCounts (created on first use; ``state`` is a CycleState or None).
    ``cache`` is used only when ``node_infos`` is ``snapshot.node_infos``."""
    pc = state.read(POD_COUNTS_KEY) if state is not None else None
    if not isinstance(pc, PodCounts) or pc.node_infos is not node_infos or pc.ns != ns or (
            cache is not None and pc.cache is not None and pc.cache is not cache):
        pc = PodCounts(node_infos, ns, snapshot, cache)
        if state is not None:
            state.write(POD_COUNTS_KEY, pc)
    return pc


# ---------------------------------------------------------------- node inclusion policies


def has_required_node_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return bool(pod.spec.node_selector) or (
        a is not None and a.node_affinity is not None and a.node_affinity.required is not None)


def match_node_inclusion_policies(c: Constraint, pod: Pod, node: Node) -> bool:
    """topologySpreadConstraint.matchNodeInclusionPolicies (per-node form; node-affinity
    parse errors ignored)."""
    if c.node_affinity_policy == HONOR and not get_required_node_affinity(pod).matches(node):
        return False
    return not (c.node_taints_policy == HONOR and find_matching_untolerated_taint(
        node.spec.taints, pod.spec.tolerations) is not None)


class InclusionMasks:
    """Per-row inclusion-policy verdicts over a node table for one pod, computed lazily:
    ``mask(c)`` is True where node rows pass constraint ``c``'s policies."""

    def __init__(self, pod: Pod, table: NodeTable) -> None:
        self.pod = pod
        self.table = table
        self._affinity: np.ndarray | None = None
        self._taints: np.ndarray | None = None

    def affinity(self) -> np.ndarray:
        if self._affinity is None:
            self._affinity = get_required_node_affinity(self.pod).match_table(
                self.table, np.arange(self.table.size))
        return self._affinity

    def taints(self) -> np.ndarray:
        if self._taints is None:
            tols = self.pod.spec.tolerations
            sets = self.table.taint_sets
            ok = np.fromiter((find_matching_untolerated_taint(ts, tols) is None for ts in sets),
                             dtype=bool, count=len(sets))
            self._taints = ok[self.table.taint_group] if len(ok) else np.ones(
                self.table.size, dtype=bool)
        return self._taints

    def mask(self, c: Constraint) -> np.ndarray | None:
        """None when the constraint's policies include every node."""
        m: np.ndarray | None = None
        if c.node_affinity_policy == HONOR and has_required_node_affinity(self.pod):
            m = self.affinity()
        if c.node_taints_policy == HONOR:
            t = self.taints()
            m = t if m is None else m & t
        return m


def mask_key(c: Constraint, pod: Pod) -> Hashable:
    """What ``InclusionMasks(pod, table).mask(c)`` depends on besides the table: equal keys,
    equal masks (None: every node included)."""
    aff: tuple | None = None
    if c.node_affinity_policy == HONOR and has_required_node_affinity(pod):
        a = pod.spec.affinity
        na = a.node_affinity if a is not None else None
        aff = (tuple(sorted(pod.spec.node_selector.items())),
               na.required if na is not None else None)
    tols = tuple(pod.spec.tolerations) if c.node_taints_policy == HONOR else None
    if aff is None and tols is None:
        return None
    return (aff, tols)


# ---------------------------------------------------------------- per-table shape cache


# A plugin's ``NodeMemo`` holds data that depends only on the node side of a node table and
# on a pod's shape: factorized label columns, inclusion masks, the eligible rows of a
# constraint and their domains. The helpers below read and fill its ``data(table)``.


def label_codes(data: dict[Hashable, Any], table: NodeTable, key: str) -> LabelCodes:
    """LabelCodes of ``key``, kept in a NodeMemo's data."""
    k = ("codes", key)
    lc = data.get(k)
    if lc is None:
        lc = data[k] = LabelCodes(table, key)
    return lc


def has_all_keys(data: dict[Hashable, Any], table: NodeTable, keys: Sequence[str]
                 ) -> np.ndarray:
    """Rows whose node has every one of the topology ``keys`` (do not modify)."""
    k = ("has_all", tuple(keys))
    m = data.get(k)
    if m is None:
        m = np.ones(table.size, dtype=bool)
        for key in dict.fromkeys(keys):
            m &= label_codes(data, table, key).present
        data[k] = m
    return m


def inclusion_mask(data: dict[Hashable, Any], table: NodeTable, pod: Pod, c: Constraint
                   ) -> np.ndarray | None:
    """``InclusionMasks(pod, table).mask(c)``, kept per mask_key (do not modify)."""
    mk = mask_key(c, pod)
    if mk is None:
        return None
    k = ("mask", mk)
    if k not in data:
        data[k] = InclusionMasks(pod, table).mask(c)
    m: np.ndarray | None = data[k]
    return m


# ---------------------------------------------------------------- label columns


class LabelCodes:
    """A node-table label column factorized (``NodeTable.label_factors``):
    ``codes[row]`` indexes ``values``, -1 where the node lacks the label."""

    __slots__ = ("codes", "column", "present", "values")

    def __init__(self, table: NodeTable, key: str) -> None:
        self.column = table.label_column(key)
        f = table.label_factors(key)
        self.codes, self.values = f.codes, f.values
        self.present = self.codes >= 0

    def lookup(self, counts: Mapping[str, int]) -> np.ndarray:
        """``lookup(counts)[codes]`` is each row's count (0 for values not in ``counts`` and
        for rows without the label: the last entry serves code -1)."""
        return np.fromiter((*(counts.get(v, 0) for v in self.values), 0), dtype=np.int64,
                           count=len(self.values) + 1)


def is_hostname(key: str) -> bool:
    return key == HOSTNAME_LABEL
