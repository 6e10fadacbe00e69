"""InterPodAffinity: processed affinity terms, PreFilter and Filter (upstream v1.35
``framework/types.go`` AffinityTerm/PodInfo and ``plugins/interpodaffinity/filtering.go``).

Terms
    A pod's (anti-)affinity terms are compiled once per distinct ``Affinity`` object and
    namespace: label selector (nil matches nothing, ``{}`` everything), the namespaces set
    (the pod's own namespace when both ``namespaces`` and ``namespaceSelector`` are unset) and
    the namespace selector. A term matches a pod when the pod's namespace is in the set or the
    namespace selector matches the namespace's labels, and the label selector matches the pod.
    For the incoming pod, a non-empty namespace selector is resolved into the namespaces set
    against the cluster's namespaces (``mergeAffinityTermNamespacesIfNotEmpty``).
    ``matchLabelKeys`` / ``mismatchLabelKeys`` are merged into the selector by the API server
    (``api.parse``), as in v1.35; the scheduler does not merge them again.

PreFilter / Filter
    Three counts keyed by (topologyKey, value): existing pods' required anti-affinity terms
    matching the incoming pod, existing pods matching *all* of the incoming pod's required
    affinity terms, and existing pods matching each of its required anti-affinity terms.
    Filter checks, in order: affinity (UnschedulableAndUnresolvable), anti-affinity
    (Unschedulable), existing pods' anti-affinity (Unschedulable).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.selectors import (
    NOTHING,
    Selector,
    SelectorError,
    label_selector_as_selector,
)
from kubesched.api.types import Affinity, Pod, PodAffinityTerm
from kubesched.framework.interface import BatchStatus
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.table_cache import IdentityMemo
from kubesched.plugins.interpodaffinity.counting import TopologyCounts, label_codes

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules")
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
Counts = dict[TopologyPair, int]

# ============================================================ affinity terms


@dataclass(frozen=True, slots=True, eq=False)
class AffinityTerm:
    """framework.AffinityTerm: a processed v1.PodAffinityTerm."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        if (pod.metadata.namespace in self.namespaces
                or self.namespace_selector.matches(ns_labels or {})):
            return self.selector.matches(pod.metadata.labels)
        return False


@dataclass(frozen=True, slots=True, eq=False)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _new_affinity_term(namespace: str, t: PodAffinityTerm) -> AffinityTerm:
    selector = label_selector_as_selector(t.label_selector)
    if not t.namespaces and t.namespace_selector is None:
        namespaces = frozenset((namespace,))
    else:
        namespaces = frozenset(t.namespaces)
    return AffinityTerm(namespaces, selector, t.topology_key,
                        label_selector_as_selector(t.namespace_selector))


@dataclass(frozen=True, slots=True, eq=False)
class PodAffinityInfo:
    """The parts of framework.PodInfo this plugin reads: the pod's processed terms.

    A term set whose selectors fail to parse is empty, with its error in ``errors``."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    errors: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)

    @property
    def parse_error(self) -> str | None:
        """The aggregate PodInfo.Update returns (utilerrors.NewAggregate), or None."""
        names = ("requiredAffinityTerms", "requiredAntiAffinityTerms",
                 "preferredAffinityTerms", "preferredAntiAffinityTerms")
        msgs = [f"{n}: {e}" for n, e in zip(names, self.errors, strict=True) if e is not None]
        if not msgs:
            return None
        if len(msgs) == 1:
            return msgs[0]
        seen: list[str] = []
        for m in msgs:
            if m not in seen:
                seen.append(m)
        return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


EMPTY_INFO = PodAffinityInfo()


def _terms(namespace: str, terms: Iterable[PodAffinityTerm]
           ) -> tuple[tuple[AffinityTerm, ...], str | None]:
    try:
        return tuple(_new_affinity_term(namespace, t) for t in terms), None
    except SelectorError as e:
        return (), str(e)


def _weighted(namespace: str, terms: Iterable[Any]
              ) -> tuple[tuple[WeightedAffinityTerm, ...], str | None]:
    try:
        return tuple(WeightedAffinityTerm(_new_affinity_term(namespace, w.term), w.weight)
                     for w in terms), None
    except SelectorError as e:
        return (), str(e)


def _compile_info(aff: Affinity, namespace: str) -> PodAffinityInfo:
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    ra, e1 = _terms(namespace, pa.required if pa else ())
    raa, e2 = _terms(namespace, paa.required if paa else ())
    wa, e3 = _weighted(namespace, pa.preferred if pa else ())
    waa, e4 = _weighted(namespace, paa.preferred if paa else ())
    return PodAffinityInfo(ra, raa, wa, waa, (e1, e2, e3, e4))


_CACHE_LIMIT = 200_000
# per Affinity object and namespace (an Affinity is frozen; hashing one costs more than this)
_by_object: IdentityMemo[tuple[str, PodAffinityInfo]] = IdentityMemo(_CACHE_LIMIT)
# equal affinities of pods of one workload compile once
_by_value: dict[tuple[Affinity, str], PodAffinityInfo] = {}


def pod_affinity_info(pod: Pod) -> PodAffinityInfo:
    """The processed terms of ``pod`` (cached per Affinity object and namespace)."""
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return EMPTY_INFO
    ns = pod.metadata.namespace
    hit = _by_object.get(aff)
    if hit is not None and hit[0] == ns:
        return hit[1]
    if len(_by_value) > _CACHE_LIMIT:
        _by_value.clear()
    try:
        key = (aff, ns)
        info = _by_value.get(key)
        if info is None:
            info = _by_value[key] = _compile_info(aff, ns)
    except TypeError:  # unhashable contents (hand-built objects): compile without sharing
        info = _compile_info(aff, ns)
    _by_object.put(aff, (ns, info))
    return info


def namespace_labels(namespaces: Mapping[str, Any] | None, name: str) -> dict[str, str]:
    """GetNamespaceLabelsSnapshot: the namespace's labels, empty when it is unknown."""
    ns = namespaces.get(name) if namespaces else None
    return dict(ns.metadata.labels) if ns is not None else {}


def merge_namespaces(term: AffinityTerm, namespaces: Mapping[str, Any] | None) -> AffinityTerm:
    """mergeAffinityTermNamespacesIfNotEmpty: an incoming pod's non-empty namespace selector
    becomes the namespaces it selects (and Nothing); ``{}`` stays (all namespaces)."""
    if term.namespace_selector.empty():
        return term
    sel = term.namespace_selector
    names = {n.metadata.name for n in (namespaces or {}).values()
             if sel.matches(n.metadata.labels)}
    return AffinityTerm(term.namespaces | names, term.selector, term.topology_key, NOTHING)


def pod_matches_all_affinity_terms(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms (the incoming pod's namespace selectors are merged, so no
    namespace labels are needed)."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


# ============================================================ PreFilter state


def _update(m: TopologyCounts, labels: Mapping[str, str], key: str, value: int) -> None:
    tv = labels.get(key)
    if tv is not None:
        m.add((key, tv), value)


def _update_with_affinity_terms(m: TopologyCounts, terms: tuple[AffinityTerm, ...], pod: Pod,
                                labels: Mapping[str, str], value: int) -> None:
    if pod_matches_all_affinity_terms(terms, pod):
        for t in terms:
            _update(m, labels, t.topology_key, value)


def _update_with_anti_affinity_terms(m: TopologyCounts, terms: tuple[AffinityTerm, ...],
                                     pod: Pod, ns_labels: Mapping[str, str] | None,
                                     labels: Mapping[str, str], value: int) -> None:
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(m, labels, t.topology_key, value)


@dataclass(slots=True)
class PreFilterState:
    """preFilterState: the three counts, the incoming pod's (namespace-merged) terms and a
    copy of its namespace's labels. The counts behave as upstream's maps (a pair is present
    while its count is not 0); cloning copies only what AddPod / RemovePod changed."""

    pod: Pod
    info: PodAffinityInfo
    namespace_labels: dict[str, str]
    existing_anti_affinity_counts: TopologyCounts
    affinity_counts: TopologyCounts
    anti_affinity_counts: TopologyCounts

    def clone(self) -> PreFilterState:
        return PreFilterState(self.pod, self.info, self.namespace_labels,
                              self.existing_anti_affinity_counts.clone(),
                              self.affinity_counts.clone(), self.anti_affinity_counts.clone())

    def update_with_pod(self, other: Pod, node_info: NodeInfo, multiplier: int) -> None:
        """updateWithPod: add (1) or remove (-1) an existing pod's contributions."""
        labels = node_info.node.labels if node_info.node is not None else {}
        other_info = pod_affinity_info(other)
        _update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts, other_info.required_anti_affinity, self.pod,
            self.namespace_labels, labels, multiplier)
        _update_with_affinity_terms(self.affinity_counts, self.info.required_affinity, other,
                                    labels, multiplier)
        _update_with_anti_affinity_terms(self.anti_affinity_counts,
                                         self.info.required_anti_affinity, other, None, labels,
                                         multiplier)


def get_existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str],
                                      nodes: Iterable[NodeInfo]) -> Counts:
    """Existing pods' required anti-affinity terms matching the incoming pod, per
    (topologyKey, value of the existing pod's node), counted directly over ``nodes`` (the
    plugin uses ``counting.PodIndex``; this is its reference)."""
    out: Counts = {}
    memo: dict[int, bool] = {}  # id(term) -> matches the incoming pod
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.labels
        for p in ni.pods_with_required_anti_affinity:
            for t in pod_affinity_info(p).required_anti_affinity:
                m = memo.get(id(t))
                if m is None:
                    m = memo[id(t)] = t.matches(pod, ns_labels)
                if m:
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        out[pair] = out.get(pair, 0) + 1
    return out


def get_incoming_affinity_anti_affinity_counts(info: PodAffinityInfo, nodes: Iterable[NodeInfo]
                                               ) -> tuple[Counts, Counts]:
    """Existing pods matching all the incoming pod's required affinity terms, and each of its
    required anti-affinity terms, per (topologyKey, value of the existing pod's node),
    counted directly over ``nodes`` (the reference of ``counting.PodIndex``)."""
    affinity: Counts = {}
    anti: Counts = {}
    aff_terms, anti_terms = info.required_affinity, info.required_anti_affinity
    if not aff_terms and not anti_terms:
        return affinity, anti
    aff_keys = [t.topology_key for t in aff_terms]
    all_keys = set(aff_keys) | {t.topology_key for t in anti_terms}
    for ni in nodes:
        node = ni.node
        if node is None or not ni.pods:
            continue
        labels = node.labels
        if not any(k in labels for k in all_keys):
            continue  # nothing could be counted on this node
        for p in ni.pods:
            if aff_terms and all(t.matches(p, None) for t in aff_terms):
                for k in aff_keys:
                    tv = labels.get(k)
                    if tv is not None:
                        affinity[(k, tv)] = affinity.get((k, tv), 0) + 1
            for t in anti_terms:
                if t.matches(p, None):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        anti[pair] = anti.get(pair, 0) + 1
    return affinity, anti


# ============================================================ Filter, per node


def satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if counts:
        for k, v in labels.items():
            if counts.get((k, v), 0) > 0:
                return False
    return True


def satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if counts:
        for t in s.info.required_anti_affinity:
            tv = labels.get(t.topology_key)
            if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    counts = s.affinity_counts
    for t in s.info.required_affinity:
        tv = labels.get(t.topology_key)
        if tv is None:
            return False  # all topology labels must exist on the node
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group with affinity to itself: allowed when no pod matches yet.
        return not counts and pod_matches_all_affinity_terms(s.info.required_affinity, s.pod)
    return True


def filter_node(s: PreFilterState, node_info: NodeInfo) -> Status | None:
    labels = node_info.node.labels if node_info.node is not None else {}
    if not satisfy_pod_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))
    if not satisfy_pod_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
    if not satisfy_existing_pods_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))
    return None


# ============================================================ Filter, batch


def filter_batch(s: PreFilterState, table: NodeTable, idx: np.ndarray) -> BatchStatus:
    """``filter_node`` for the node-table rows ``idx`` at once."""
    n = len(idx)
    out = BatchStatus.success(n)
    if n == 0:
        return out

    terms = s.info.required_affinity
    if terms:
        ok = np.ones(n, dtype=bool)
        exist = np.ones(n, dtype=bool)
        for t in terms:
            col, uniques = label_codes(table, t.topology_key)
            c = col[idx]
            ok &= c >= 0
            exist &= s.affinity_counts.values_by_code(t.topology_key, uniques)[c] > 0
        if s.affinity_counts or not pod_matches_all_affinity_terms(terms, s.pod):
            ok &= exist
        out.fail(~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))

    if s.anti_affinity_counts:
        bad = np.zeros(n, dtype=bool)
        for t in s.info.required_anti_affinity:
            col, uniques = label_codes(table, t.topology_key)
            bad |= s.anti_affinity_counts.values_by_code(t.topology_key, uniques)[col[idx]] > 0
        out.fail(bad, Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))

    counts = s.existing_anti_affinity_counts
    if counts:
        bad = np.zeros(n, dtype=bool)
        for key in counts.topology_keys():
            col, uniques = label_codes(table, key)
            bad |= counts.values_by_code(key, uniques)[col[idx]] > 0
        out.fail(bad, Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))
    return out
