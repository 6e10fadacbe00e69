"""Shared pieces of PodTopologySpread (upstream ``podtopologyspread/common.go`` and
``plugins/helper/spread.go``, v1.35).

Label selectors are compiled once per scheduling cycle into :class:`Selector`, which keeps the
distinctions upstream's ``labels.Selector`` makes: a nil ``labelSelector`` becomes
``labels.Nothing()`` (matches nothing, not empty), ``{}`` becomes ``labels.Everything()``
(matches everything, *empty*), and pods are counted only for non-empty selectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.types import (
    HOSTNAME_LABEL,
    LabelSelector,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kubesched.framework.node_table import NodeTable

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

MAX_INT32 = 2**31 - 1

# ---------------------------------------------------------------- label selectors

_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST = 0, 1, 2, 3
_OPS = {"In": _IN, "Equals": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS,
        "DoesNotExist": _DOES_NOT_EXIST}

Requirement = tuple[str, int, frozenset[str]]


class Selector:
    """A compiled ``labels.Selector``: requirements ANDed, or *nothing*."""

    __slots__ = ("nothing", "reqs")

    def __init__(self, reqs: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        self.nothing = nothing
        # Sorted by key (stably) as labels.internalSelector keeps them.
        self.reqs: tuple[Requirement, ...] = () if nothing else tuple(
            sorted(reqs, key=lambda r: r[0]))

    @classmethod
    def from_label_selector(cls, ls: LabelSelector | None) -> Selector:
        """metav1.LabelSelectorAsSelector."""
        if ls is None:
            return NOTHING
        reqs: list[Requirement] = [(k, _IN, frozenset((v,))) for k, v in ls.match_labels]
        for e in ls.match_expressions:
            op = _OPS.get(e.operator)
            if op is None:
                raise ValueError(f"{e.operator!r} is not a valid label selector operator")
            reqs.append((e.key, op, frozenset(e.values)))
        return cls(reqs)

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> Selector:
        """labels.SelectorFromSet / Set.AsSelector (an empty set selects everything)."""
        return cls((k, _IN, frozenset((v,))) for k, v in labels.items())

    def empty(self) -> bool:
        return not self.nothing and not self.reqs

    def add(self, reqs: Iterable[Requirement]) -> Selector:
        if self.nothing:  # nothingSelector.Add returns itself
            return self
        return Selector((*self.reqs, *reqs))

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, op, values in self.reqs:
            v = labels.get(key)
            if op == _IN:
                if v is None or v not in values:
                    return False
            elif op == _NOT_IN:
                if v is not None and v in values:
                    return False
            elif op == _EXISTS:
                if v is None:
                    return False
            elif v is not None:  # DoesNotExist
                return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self.nothing == other.nothing and self.reqs == other.reqs

    def __hash__(self) -> int:
        return hash((self.nothing, self.reqs))

    def __repr__(self) -> str:
        if self.nothing:
            return "Selector(<nothing>)"
        names = {v: k for k, v in _OPS.items() if k != "Equals"}
        return "Selector(" + ", ".join(
            f"{k} {names[op]} {sorted(vs)}" for k, op, vs in self.reqs) + ")"


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def merge_label_set_with_selector(match_labels: Mapping[str, str], s: Selector) -> Selector:
    """common.go mergeLabelSetWithSelector: a nothing-selector stays as it is."""
    if s.nothing:
        return s
    return Selector.from_set(match_labels).add(s.reqs)


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
        selector = Selector.from_label_selector(c.label_selector)
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
    n = 0
    for p in pods:
        m = p.metadata
        if m.namespace != ns or m.deletion_timestamp is not None:
            continue
        if selector.matches(m.labels):
            n += 1
    return n


def count_by_selector(pods: Iterable[Pod], selectors: Sequence[Selector], ns: str) -> list[int]:
    """count_pods_match_selector for several selectors, reading the pods once."""
    live = [i for i, s in enumerate(selectors) if not s.empty() and not s.nothing]
    counts = [0] * len(selectors)
    if not live:
        return counts
    for p in pods:
        m = p.metadata
        if m.namespace != ns or m.deletion_timestamp is not None:
            continue
        labels = m.labels
        for i in live:
            if selectors[i].matches(labels):
                counts[i] += 1
    return counts


# ---------------------------------------------------------------- node inclusion policies


def _node_selector_requirement_matches(r: NodeSelectorRequirement,
                                       labels: Mapping[str, str]) -> bool | None:
    """One matchExpressions requirement; None for an invalid requirement (a parse error)."""
    v = labels.get(r.key)
    op = r.operator
    if op == "In":
        return v is not None and v in r.values
    if op == "NotIn":
        return v is None or v not in r.values
    if op == "Exists":
        return v is not None
    if op == "DoesNotExist":
        return v is None
    if op in ("Gt", "Lt"):
        if len(r.values) != 1:
            return None
        try:
            bound = int(r.values[0])
        except ValueError:
            return None
        if v is None:
            return False
        try:
            have = int(v)
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    return None


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """A NodeSelectorTerm (LazyErrorNodeSelector): an empty or invalid term matches nothing."""
    if not term.match_expressions and not term.match_fields:
        return False
    labels = node.metadata.labels
    for r in term.match_expressions:
        if not _node_selector_requirement_matches(r, labels):
            return False
    for r in term.match_fields:
        if r.key != "metadata.name" or len(r.values) != 1 or r.operator not in ("In", "NotIn"):
            return False
        if (node.metadata.name in r.values) != (r.operator == "In"):
            return False
    return True


def has_required_node_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return bool(pod.spec.node_selector) or (
        a is not None and a.node_affinity is not None and a.node_affinity.required is not None)


def required_node_affinity_matches(pod: Pod, node: Node) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node), errors ignored."""
    labels = node.metadata.labels
    for k, v in pod.spec.node_selector.items():
        if labels.get(k) != v:
            return False
    a = pod.spec.affinity
    if a is None or a.node_affinity is None or a.node_affinity.required is None:
        return True
    return any(_term_matches(t, node) for t in a.node_affinity.required)


def has_untolerated_do_not_schedule_taint(taints: Sequence[Taint],
                                          tolerations: Sequence[Toleration]) -> bool:
    """v1helper.FindMatchingUntoleratedTaint with helper.DoNotScheduleTaintsFilterFunc."""
    for t in taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tol.tolerates(t) for tol in tolerations):
            return True
    return False


def match_node_inclusion_policies(c: Constraint, pod: Pod, node: Node) -> bool:
    """topologySpreadConstraint.matchNodeInclusionPolicies (per-node form)."""
    if c.node_affinity_policy == HONOR and not required_node_affinity_matches(pod, node):
        return False
    return not (c.node_taints_policy == HONOR and has_untolerated_do_not_schedule_taint(
        node.spec.taints, pod.spec.tolerations))


class InclusionMasks:
    """Per-row inclusion-policy verdicts over a node table for one pod, computed lazily:
    ``mask(c)`` is True where node rows pass constraint ``c``'s policies."""

    def __init__(self, pod: Pod, table: NodeTable, node_infos: Sequence[Any]) -> None:
        self.pod = pod
        self.table = table
        self.node_infos = node_infos
        self._affinity: np.ndarray | None = None
        self._taints: np.ndarray | None = None

    def affinity(self) -> np.ndarray:
        if self._affinity is None:
            n = self.table.size
            if not has_required_node_affinity(self.pod):
                self._affinity = np.ones(n, dtype=bool)
            else:
                pod = self.pod
                self._affinity = np.fromiter(
                    (ni.node is not None and required_node_affinity_matches(pod, ni.node)
                     for ni in self.node_infos), dtype=bool, count=n)
        return self._affinity

    def taints(self) -> np.ndarray:
        if self._taints is None:
            tols = self.pod.spec.tolerations
            ok = np.fromiter((not has_untolerated_do_not_schedule_taint(ts, tols)
                              for ts in self.table.taint_sets), dtype=bool,
                             count=len(self.table.taint_sets))
            self._taints = ok[self.table.taint_group] if len(ok) else np.ones(
                self.table.size, dtype=bool)
        return self._taints

    def mask(self, c: Constraint) -> np.ndarray | None:
        """None when the constraint includes every node."""
        m: np.ndarray | None = None
        if c.node_affinity_policy == HONOR and has_required_node_affinity(self.pod):
            m = self.affinity()
        if c.node_taints_policy == HONOR:
            t = self.taints()
            m = t if m is None else m & t
        return m


# ---------------------------------------------------------------- label columns


class LabelCodes:
    """A node-table label column factorized: ``codes[row]`` indexes ``values`` (None where
    the node lacks the label). Cached per column object, so it is rebuilt exactly when the
    table rebuilds the column."""

    __slots__ = ("codes", "column", "present", "values")

    def __init__(self, column: np.ndarray) -> None:
        self.column = column
        index: dict[Any, int] = {}
        self.codes = np.fromiter((index.setdefault(v, len(index)) for v in column),
                                 dtype=np.int64, count=len(column))
        self.values: list[str | None] = list(index)
        none_code = index.get(None, -1)
        self.present = self.codes != none_code

    def lookup(self, counts: Mapping[str, int], missing: int = 0) -> np.ndarray:
        """Per-code table of ``counts`` (absent values and missing labels: ``missing``)."""
        return np.fromiter(
            (missing if v is None else counts.get(v, missing) for v in self.values),
            dtype=np.int64, count=len(self.values))


class LabelCodeCache:
    def __init__(self) -> None:
        self._by_key: dict[str, LabelCodes] = {}

    def get(self, table: NodeTable, key: str) -> LabelCodes:
        col = table.label_column(key)
        lc = self._by_key.get(key)
        if lc is None or lc.column is not col:
            lc = self._by_key[key] = LabelCodes(col)
        return lc


def is_hostname(key: str) -> bool:
    return key == HOSTNAME_LABEL
