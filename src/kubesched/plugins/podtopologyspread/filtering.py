"""PreFilter / Filter of PodTopologySpread (upstream ``filtering.go``, v1.35 layout: counts
and two critical paths per constraint index)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework.interface import BatchStatus
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.framework.table_cache import NodeMemo
from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    MAX_INT32,
    Constraint,
    LabelCodes,
    PodCounts,
    has_all_keys,
    inclusion_mask,
    label_codes,
    mask_key,
    match_node_inclusion_policies,
    node_labels_match_spread_constraints,
)

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.snapshot import Snapshot

PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"


class CriticalPaths:
    """Two (topology value, match count) paths; ``paths[0]`` always holds the minimum count
    (upstream criticalPaths, including its initial ``("", MaxInt32)`` entries)."""

    __slots__ = ("paths",)

    def __init__(self, paths: list[list] | None = None) -> None:
        self.paths: list[list] = paths if paths is not None else [["", MAX_INT32],
                                                                  ["", MAX_INT32]]

    def update(self, tp_val: str, num: int) -> None:
        p = self.paths
        i = -1
        if tp_val == p[0][0]:
            i = 0
        elif tp_val == p[1][0]:
            i = 1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [tp_val, num]
        elif num < p[1][1]:
            p[1] = [tp_val, num]

    def clone(self) -> CriticalPaths:
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def as_tuples(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (tuple(self.paths[0]), tuple(self.paths[1]))

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths})"


class PreFilterState:
    """Per-constraint counts of matching pods by topology value, and critical paths.
    An empty state (no constraints) is legitimate and lets every node pass.

    PreFilter may hand the counts over in array form (``from_arrays``): per constraint the
    domains in order with their counts, and the counts by label code of the node table's
    factorized column. The dicts of ``tp_value_to_match_num`` are then built on first
    access, which also drops the by-code arrays (the dicts may be changed from then on, by
    AddPod / RemovePod); until then the batch Filter reads the arrays."""

    __slots__ = ("_dense", "_lazy", "_maps", "constraints", "critical_paths")

    def __init__(self, constraints: Sequence[Constraint] = (),
                 critical_paths: list[CriticalPaths] | None = None,
                 tp_value_to_match_num: list[dict[str, int]] | None = None) -> None:
        self.constraints = constraints if isinstance(constraints, list) else list(constraints)
        self.critical_paths = critical_paths if critical_paths is not None else []
        self._maps: list[dict[str, int] | None] = list(
            tp_value_to_match_num if tp_value_to_match_num is not None else [])
        self._lazy: list[tuple[list[str], np.ndarray] | None] = [None] * len(self._maps)
        self._dense: list[tuple[list[str], np.ndarray] | None] = [None] * len(self._maps)

    @classmethod
    def from_arrays(cls, constraints: list[Constraint], critical_paths: list[CriticalPaths],
                    domains: list[tuple[list[str], np.ndarray] | None],
                    by_code: list[tuple[list[str], np.ndarray] | None]) -> PreFilterState:
        """``domains[i]``: (values in order, their counts) or None for no domain;
        ``by_code[i]``: (the factorized column's values, counts by code with a trailing 0
        for code -1), or None."""
        s = cls(constraints, critical_paths, [{} for _ in constraints])
        for i, d in enumerate(domains):
            if d is not None:
                s._maps[i] = None
                s._lazy[i] = d
                s._dense[i] = by_code[i]
        return s

    @property
    def tp_value_to_match_num(self) -> list[dict[str, int]]:
        maps = self._maps
        for i, m in enumerate(maps):
            if m is None:
                lazy = self._lazy[i]
                assert lazy is not None
                maps[i] = dict(zip(lazy[0], lazy[1].tolist(), strict=True))
            self._dense[i] = None
        return maps  # type: ignore[return-value]

    def num_domains(self, i: int) -> int:
        m = self._maps[i]
        if m is not None:
            return len(m)
        lazy = self._lazy[i]
        assert lazy is not None
        return len(lazy[0])

    def match_nums_by_code(self, i: int, values: list[str]) -> np.ndarray | None:
        """Counts by code of the column factorized into ``values`` (trailing entry: code -1),
        while the counts are still in array form, else None."""
        d = self._dense[i]
        if d is None or d[0] is not values:
            return None
        return d[1]

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for skew, 0 when fewer domains than ``minDomains``."""
        if self.num_domains(i) < min_domains:
            return 0
        return self.critical_paths[i].paths[0][1]

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.constraints,  # constraints never change: shared
                           [p.clone() for p in self.critical_paths])
        c._maps = [None if m is None else dict(m) for m in self._maps]
        c._lazy = list(self._lazy)  # never changed: shared
        c._dense = list(self._dense)
        return c


class DomainPlan:
    """One constraint's eligible rows (every topology key present, inclusion policies
    passed), their domain codes, and the domains in the order their first node appears:
    per pod shape and node table, so a cycle only sums the counts."""

    __slots__ = ("all_rows", "lc_values", "nvals", "order", "rows", "sub", "values")

    def __init__(self, rows: np.ndarray, lc: LabelCodes, size: int) -> None:
        self.rows = rows
        self.all_rows = len(rows) == size
        self.sub = lc.codes[rows]  # every eligible node has the key: codes >= 0
        self.nvals = len(lc.values)
        self.lc_values = lc.values
        uniq, first = np.unique(self.sub, return_index=True)
        self.order = uniq[np.argsort(first, kind="stable")]
        self.values = [lc.values[u] for u in self.order.tolist()]


def pre_filter_plans(pod: Pod, constraints: Sequence[Constraint], table: NodeTable,
                     data: dict[Hashable, Any]) -> list[DomainPlan]:
    keys = tuple(c.topology_key for c in constraints)
    plans = []
    for c in constraints:
        k = ("pf", keys, c.topology_key, mask_key(c, pod))
        plan = data.get(k)
        if plan is None:
            eligible = has_all_keys(data, table, keys)
            m = inclusion_mask(data, table, pod, c)
            rows = np.flatnonzero(eligible if m is None else eligible & m)
            plan = data[k] = DomainPlan(rows, label_codes(data, table, c.topology_key),
                                        table.size)
        plans.append(plan)
    return plans


def critical_paths_of(m: dict[str, int]) -> CriticalPaths:
    """CriticalPaths after ``update(value, num)`` for each domain of ``m`` in order."""
    values = list(m)
    return critical_paths_from(values, np.fromiter(m.values(), dtype=np.int64,
                                                   count=len(values)))


def critical_paths_from(values: list[str], nums: np.ndarray) -> CriticalPaths:
    """CriticalPaths after ``update(values[k], nums[k])`` for k in order (distinct values)."""
    cp = CriticalPaths()
    if len(values) > 32 and "" not in values and int(nums.max()) < MAX_INT32:
        # Each value once and none equal to the initial paths' "": the paths are the first
        # two of a stable sort by count (argmin takes the first of equal minima).
        i0 = int(np.argmin(nums))
        n0 = int(nums[i0])
        rest = nums.copy()
        rest[i0] = MAX_INT32
        i1 = int(np.argmin(rest))
        cp.paths = [[values[i0], n0], [values[i1], int(rest[i1])]]
        return cp
    for value, num in zip(values, nums.tolist(), strict=True):
        cp.update(value, num)
    return cp


def calc_pre_filter_state(pod: Pod, constraints: list[Constraint], snapshot: Snapshot,
                          pc: PodCounts, shapes: NodeMemo[Any] | None = None) -> PreFilterState:
    """calPreFilterState over all snapshot nodes: eligible nodes have every topology key and
    pass each constraint's inclusion policies; their matching pods are counted per domain
    (domains in node order, as the counts were gathered)."""
    if not constraints:
        return PreFilterState()
    table = snapshot.table
    domains: list[tuple[list[str], np.ndarray] | None] = [None] * len(constraints)
    by_code: list[tuple[list[str], np.ndarray] | None] = [None] * len(constraints)
    paths = [CriticalPaths() for _ in constraints]
    if snapshot.num_nodes:
        data = (shapes or NodeMemo()).data(table)
        plans = pre_filter_plans(pod, constraints, table, data)
        counts = pc.counts([c.selector for c in constraints], [p.rows for p in plans])
        for ci, plan in enumerate(plans):
            if not len(plan.rows):
                continue
            w = counts[ci] if plan.all_rows else counts[ci][plan.rows]
            sums = np.bincount(plan.sub, weights=w, minlength=plan.nvals + 1).astype(np.int64)
            nums = sums[plan.order]
            domains[ci] = (plan.values, nums)
            sums[-1] = 0  # code -1: label missing
            by_code[ci] = (plan.lc_values, sums)
            paths[ci] = critical_paths_from(plan.values, nums)
    return PreFilterState.from_arrays(constraints, paths, domains, by_code)


def update_with_pod(s: PreFilterState | None, updated_pod: Pod, preemptor: Pod,
                    node: Node | None, delta: int) -> None:
    """AddPod / RemovePod: adjust the counts and critical paths for one pod on one node."""
    if s is None or node is None or updated_pod.metadata.namespace != preemptor.metadata.namespace:
        return
    labels = node.metadata.labels
    if not node_labels_match_spread_constraints(labels, s.constraints):
        return
    pod_labels = updated_pod.metadata.labels
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(pod_labels):
            continue
        if not match_node_inclusion_policies(c, preemptor, node):
            continue
        v = labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[v] = m.get(v, 0) + delta
        s.critical_paths[i].update(v, m[v])


def filter_node(s: PreFilterState, pod: Pod, node: Node) -> Status | None:
    """Filter for one node."""
    if not s.constraints:
        return None
    labels = node.metadata.labels
    pod_labels = pod.metadata.labels
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is None:
            return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod_labels) else 0
        match_num = s.tp_value_to_match_num[i].get(tp_val, 0)
        if match_num + self_match - min_match > c.max_skew:
            return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None


def filter_rows(s: PreFilterState, pod: Pod, snapshot: Snapshot, idx: np.ndarray,
                shapes: NodeMemo[Any] | None = None) -> BatchStatus:
    """Filter for the node-table rows ``idx``: each node's status is that of the first
    constraint it fails, as in the per-node form."""
    out = BatchStatus.success(len(idx))
    if not s.constraints or not len(idx):
        return out
    table = snapshot.table
    data = (shapes or NodeMemo()).data(table)
    pod_labels = pod.metadata.labels
    for i, c in enumerate(s.constraints):
        lc = label_codes(data, table, c.topology_key)
        sub = lc.codes[idx]
        missing = ~lc.present[idx]
        out.fail(missing, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,))
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod_labels) else 0
        by_code = s.match_nums_by_code(i, lc.values)
        if by_code is None:
            by_code = lc.lookup(s.tp_value_to_match_num[i])
        match_num = by_code[sub]
        skewed = (match_num + (self_match - min_match) > c.max_skew) & ~missing
        out.fail(skewed, Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,))
    return out


def state_error(key: str) -> Status:
    return Status(Code.ERROR, (f'reading "{key}" from cycleState: not found',))
