"""PreFilter / Filter of PodTopologySpread (upstream ``filtering.go``, v1.35 layout: counts
and two critical paths per constraint index)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework.interface import BatchStatus
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    MAX_INT32,
    Constraint,
    InclusionMasks,
    LabelCodes,
    PodCounts,
    match_node_inclusion_policies,
    node_labels_match_spread_constraints,
)

if TYPE_CHECKING:
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
        return (tuple(self.paths[0]), tuple(self.paths[1]))  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths})"


class PreFilterState:
    """Per-constraint counts of matching pods by topology value, and critical paths.
    An empty state (no constraints) is legitimate and lets every node pass."""

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num")

    def __init__(self, constraints: Sequence[Constraint] = (),
                 critical_paths: list[CriticalPaths] | None = None,
                 tp_value_to_match_num: list[dict[str, int]] | None = None) -> None:
        self.constraints = constraints if isinstance(constraints, list) else list(constraints)
        self.critical_paths = critical_paths if critical_paths is not None else []
        self.tp_value_to_match_num = (tp_value_to_match_num
                                      if tp_value_to_match_num is not None else [])

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for skew, 0 when fewer domains than ``minDomains``."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].paths[0][1]

    def clone(self) -> PreFilterState:
        return PreFilterState(self.constraints,  # constraints never change: shared
                              [p.clone() for p in self.critical_paths],
                              [dict(m) for m in self.tp_value_to_match_num])


def calc_pre_filter_state(pod: Pod, constraints: list[Constraint], snapshot: Snapshot,
                          pc: PodCounts) -> PreFilterState:
    """calPreFilterState over all snapshot nodes: eligible nodes have every topology key and
    pass each constraint's inclusion policies; their matching pods are counted per domain
    (domains in node order, as the counts were gathered)."""
    if not constraints:
        return PreFilterState()
    table = snapshot.table
    tp_maps: list[dict[str, int]] = [{} for _ in constraints]
    if snapshot.num_nodes:
        codes = [LabelCodes(table, c.topology_key) for c in constraints]
        eligible = np.logical_and.reduce([lc.present for lc in codes])
        masks = InclusionMasks(pod, table)
        rows = []
        for c in constraints:
            m = masks.mask(c)
            rows.append(np.flatnonzero(eligible if m is None else eligible & m))
        counts = pc.counts([c.selector for c in constraints], rows)
        for ci, lc in enumerate(codes):
            r = rows[ci]
            if not len(r):
                continue
            sub = lc.codes[r]  # every eligible node has the key: codes >= 0
            sums = np.bincount(sub, weights=counts[ci][r], minlength=len(lc.values))
            uniq, first = np.unique(sub, return_index=True)
            tp_maps[ci] = {lc.values[u]: int(sums[u])
                           for u in uniq[np.argsort(first, kind="stable")].tolist()}
    paths = []
    for m in tp_maps:
        cp = CriticalPaths()
        for value, num in m.items():
            cp.update(value, num)
        paths.append(cp)
    return PreFilterState(constraints, paths, tp_maps)


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


def filter_rows(s: PreFilterState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                ) -> BatchStatus:
    """Filter for the node-table rows ``idx``: each node's status is that of the first
    constraint it fails, as in the per-node form."""
    out = BatchStatus.success(len(idx))
    if not s.constraints or not len(idx):
        return out
    table = snapshot.table
    pod_labels = pod.metadata.labels
    for i, c in enumerate(s.constraints):
        lc = LabelCodes(table, c.topology_key)
        sub = lc.codes[idx]
        missing = ~lc.present[idx]
        out.fail(missing, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,))
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod_labels) else 0
        match_num = lc.lookup(s.tp_value_to_match_num[i])[sub]
        skewed = (match_num + (self_match - min_match) > c.max_skew) & ~missing
        out.fail(skewed, Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,))
    return out


def state_error(key: str) -> Status:
    return Status(Code.ERROR, (f'reading "{key}" from cycleState: not found',))
