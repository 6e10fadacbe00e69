"""PreScore / Score / NormalizeScore of PodTopologySpread (upstream ``scoring.go``, v1.35)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.table_cache import NodeMemo
from kubesched.plugins.helper import go_round, go_round_np
from kubesched.plugins.podtopologyspread.common import (
    Constraint,
    PodCounts,
    count_pods_match_selector,
    has_all_keys,
    inclusion_mask,
    is_hostname,
    label_codes,
    mask_key,
)

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.snapshot import Snapshot

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"


# ---------------------------------------------------------------- Go float arithmetic

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_SQRT2_HALF = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """Go's math.Log for finite x > 0 (the FreeBSD algorithm its amd64 assembly follows
    step by step), so weights are bit-identical to upstream's, not merely libm-close."""
    f1, ki = math.frexp(x)
    if f1 < _SQRT2_HALF:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def topology_normalizing_weight(size: int) -> float:
    """ln(size + 2): the weight of a constraint with ``size`` domains."""
    return go_log(float(size + 2))


# ---------------------------------------------------------------- state


class PreScoreState:
    """What Score and NormalizeScore read. Shared by clones (upstream's Clone returns
    itself)."""

    __slots__ = ("constraints", "ignored_nodes", "ignored_rows", "last_ignored",
                 "prescore_ignored", "topology_normalizing_weight",
                 "topology_value_to_pod_counts")

    def __init__(self, constraints: Sequence[Constraint] = ()) -> None:
        self.constraints = list(constraints)
        self.ignored_nodes: set[str] = set()
        # per constraint: topology value -> matching pods (non-hostname constraints)
        self.topology_value_to_pod_counts: list[dict[str, int]] = [{} for _ in constraints]
        self.topology_normalizing_weight: list[float] = []
        # node-table rows that are ignored; ignored flags of PreScore's node list, and of
        # the rows of the last score_batch call (NormalizeScore gets only the scores).
        self.ignored_rows = np.zeros(0, dtype=bool)
        self.prescore_ignored = np.zeros(0, dtype=bool)
        self.last_ignored: np.ndarray | None = None

    def clone(self) -> PreScoreState:
        return self


def build_pre_score_state(pod: Pod, constraints: list[Constraint], nodes: Sequence[NodeInfo],
                          rows: np.ndarray, snapshot: Snapshot, require_all_topologies: bool,
                          pc: PodCounts, shapes: NodeMemo[Any] | None = None) -> PreScoreState:
    """initPreScoreState over the feasible ``nodes`` (table ``rows``), then the counts of
    matching pods over all snapshot nodes into the registered domains."""
    s = PreScoreState(constraints)
    table = snapshot.table
    n = table.size
    data = (shapes or NodeMemo()).data(table)
    keys = tuple(c.topology_key for c in constraints)
    codes = {key: label_codes(data, table, key) for key in keys}
    has_all = has_all_keys(data, table, keys)
    ignored_local = (~has_all[rows]) if require_all_topologies else np.zeros(len(rows), bool)
    s.prescore_ignored = ignored_local
    s.ignored_rows = np.zeros(n, dtype=bool)
    any_ignored = bool(ignored_local.any())
    if any_ignored:
        s.ignored_rows[rows[ignored_local]] = True
        s.ignored_nodes = {nodes[j].name for j in np.flatnonzero(ignored_local).tolist()}
    kept = rows[~ignored_local] if any_ignored else rows

    weights: list[float] = []
    registered: list[np.ndarray | None] = []  # per constraint: registered flag per code + 1
    for i, c in enumerate(constraints):
        if is_hostname(c.topology_key):
            registered.append(None)
            weights.append(topology_normalizing_weight(len(nodes) - len(s.ignored_nodes)))
            continue
        lc = codes[c.topology_key]
        counts = s.topology_value_to_pod_counts[i]
        seen = np.bincount(lc.codes[kept] + 1, minlength=len(lc.values) + 1)
        for u in np.flatnonzero(seen).tolist():  # codes in ascending order, -1 first
            counts.setdefault("" if u == 0 else lc.values[u - 1], 0)  # missing label: ""
        # registered flag per code + 1; the first entry serves code -1 (label missing: "")
        reg1 = np.fromiter(("" in counts, *(v in counts for v in lc.values)), dtype=bool,
                           count=len(lc.values) + 1)
        registered.append(reg1)
        weights.append(topology_normalizing_weight(len(counts)))
    s.topology_normalizing_weight = weights

    # Count matching pods on all nodes into the registered (non-hostname) domains.
    soft = [i for i, c in enumerate(constraints) if not is_hostname(c.topology_key)]
    if not soft or not n:
        return s
    count_rows = []
    count_subs = []
    for i in soft:
        plan = _count_plan(pod, constraints[i], keys, require_all_topologies, table, data)
        reg = registered[i]
        assert reg is not None
        if reg[plan.codes1].all():  # every domain of the rows is registered
            count_rows.append(plan.rows)
            count_subs.append(plan.sub1)
        else:
            keep = reg[plan.sub1]
            count_rows.append(plan.rows[keep])
            count_subs.append(plan.sub1[keep])
    arrays = pc.counts([constraints[i].selector for i in soft], count_rows)
    for i, r, sub1, arr in zip(soft, count_rows, count_subs, arrays, strict=True):
        if not len(r):
            continue
        lc = codes[constraints[i].topology_key]
        w = arr if len(r) == n else arr[r]
        sums = np.bincount(sub1, weights=w, minlength=len(lc.values) + 1)
        counts = s.topology_value_to_pod_counts[i]
        for u in np.flatnonzero(sums).tolist():
            counts["" if u == 0 else lc.values[u - 1]] += int(sums[u])
    return s


class _CountPlan:
    """The rows whose pods PreScore counts for a constraint before the registered-domain
    test (all keys present if required, inclusion policies passed), their codes + 1 (0: label
    missing) and the distinct codes + 1 among them."""

    __slots__ = ("codes1", "rows", "sub1")

    def __init__(self, rows: np.ndarray, codes: np.ndarray, nvals: int) -> None:
        self.rows = rows
        self.sub1 = codes[rows].astype(np.int64) + 1
        self.codes1 = np.flatnonzero(np.bincount(self.sub1, minlength=nvals + 1))


def _count_plan(pod: Pod, c: Constraint, keys: tuple[str, ...], require_all: bool,
                table: NodeTable, data: dict[Hashable, Any]) -> _CountPlan:
    k = ("ps", keys, require_all, c.topology_key, mask_key(c, pod))
    plan = data.get(k)
    if plan is None:
        inc = has_all_keys(data, table, keys) if require_all else None
        m = inclusion_mask(data, table, pod, c)
        if m is not None:
            inc = m if inc is None else inc & m
        rows = np.arange(table.size) if inc is None else np.flatnonzero(inc)
        lc = label_codes(data, table, c.topology_key)
        plan = data[k] = _CountPlan(rows, lc.codes, len(lc.values))
    return plan


# ---------------------------------------------------------------- Score


def score_node(s: PreScoreState, pod: Pod, ni: NodeInfo) -> int:
    """Score for one node: Σ cnt·weight + (maxSkew − 1) over the keys it has, rounded."""
    if ni.name in s.ignored_nodes:
        return 0
    node = ni.node
    labels = node.metadata.labels if node is not None else {}
    score = 0.0
    ns = pod.metadata.namespace
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is None:
            continue
        if is_hostname(c.topology_key):
            cnt = count_pods_match_selector(ni.pods, c.selector, ns)
        else:
            cnt = s.topology_value_to_pod_counts[i].get(tp_val, 0)
        score += cnt * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
    return int(go_round(score))


def score_rows(s: PreScoreState, snapshot: Snapshot, idx: np.ndarray, pc: PodCounts,
               shapes: NodeMemo[Any] | None = None) -> np.ndarray:
    """Score for the node-table rows ``idx`` (same arithmetic as score_node, vectorized)."""
    table = snapshot.table
    ignored = s.ignored_rows[idx] if len(s.ignored_rows) == table.size else np.fromiter(
        (table.names[r] in s.ignored_nodes for r in idx.tolist()), dtype=bool, count=len(idx))
    s.last_ignored = ignored
    score = np.zeros(len(idx), dtype=np.float64)
    data = (shapes or NodeMemo()).data(table)
    for i, c in enumerate(s.constraints):
        lc = label_codes(data, table, c.topology_key)
        present = lc.present[idx]
        if is_hostname(c.topology_key):
            todo = idx[present & ~ignored]
            cnt = np.where(present & ~ignored, pc.counts([c.selector], [todo])[0][idx], 0)
        else:
            cnt = lc.lookup(s.topology_value_to_pod_counts[i])[lc.codes[idx]]
        contrib = cnt.astype(np.float64) * s.topology_normalizing_weight[i] + float(
            c.max_skew - 1)
        score = score + np.where(present, contrib, 0.0)
    raw = go_round_np(score).astype(np.int64)
    raw[ignored] = 0
    return raw


def normalize(scores: np.ndarray, ignored: np.ndarray) -> np.ndarray:
    """NormalizeScore: ignored nodes 0; others 100·(max + min − s) / max (integer division),
    or 100 for all when max is 0."""
    scores = np.asarray(scores, dtype=np.int64)
    out = np.zeros(len(scores), dtype=np.int64)
    valid = ~ignored
    if not valid.any():
        return out
    vals = scores[valid]
    min_score = int(vals.min())
    max_score = max(0, int(vals.max()))
    if max_score == 0:
        out[valid] = MAX_NODE_SCORE
    else:
        out[valid] = MAX_NODE_SCORE * (max_score + min_score - vals) // max_score
    return out
