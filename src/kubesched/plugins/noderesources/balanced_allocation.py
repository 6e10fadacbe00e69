"""NodeResourcesBalancedAllocation (upstream ``noderesources/balanced_allocation.go``).

The balance of a node is ``int64((1 − std) × 100)`` over its resource fractions
(``requested / allocatable``, capped at 1, plain requests without non-zero defaults), with
``std = |f0 − f1| / 2`` for two resources, the population standard deviation for more, 0 for
fewer (``balancedResourceScore``).

* v1.35: the score is the balance with the incoming pod.
* v1.36 and later (kubernetes#135573, no gate): the score is the *change* in balance the pod
  makes, ``50 + (50 + with − without) / 2`` in int64 arithmetic (``with``/``without`` are
  the balances with and without the pod, both in [50, 100], so the division never sees a
  negative operand and Go's truncation is Python's floor): 75 for no change, 100 for
  imbalanced → balanced, 50 for the reverse.

PreScore returns Skip for a pod that requests none of the configured resources (v1.32+,
kubernetes#129138).

The float arithmetic is float64 in both forms, operation for operation as in Go.

The batch form keeps each row's score per pod shape (``framework.table_cache.RowMemo``): a
node's score for a given request vector changes only when its pods or its allocatable do, and
between two cycles one node changes (the one the last pod went to), so scoring every feasible
row again — twice since v1.36 — would redo work whose inputs did not move.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.config.plugin_args import (
    NodeResourcesBalancedAllocationArgs,
    ResourceSpec,
    typed_args,
)
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle, feature_enabled
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    NodeList,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status, skip
from kubesched.framework.table_cache import RowMemo
from kubesched.plugins.noderesources.dra_extended import (
    DraScoreState,
    dra_scored_names,
    pre_score_dra,
)
from kubesched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    is_best_effort,
)
from kubesched.releases import at_least

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


HALF = MAX_NODE_SCORE // 2


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScorer`` (v1.35; ``balancedResourceScore`` since v1.36) for
    one node."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_scorer_np(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
    """``balanced_resource_scorer`` for many nodes ([resources, nodes] int64 inputs)."""
    r, n = requested.shape
    present = allocatable != 0
    if r == 2 and present.all():  # the usual cpu + memory: |f0 − f1| / 2, as below
        f = np.minimum(requested / allocatable, 1.0)
        return np.trunc((1 - np.abs((f[0] - f[1]) / 2)) * float(MAX_NODE_SCORE)).astype(np.int64)
    safe = np.where(present, allocatable, 1).astype(np.float64)
    frac = np.minimum(requested.astype(np.float64) / safe, 1.0)
    frac = np.where(present, frac, 0.0)
    count = present.sum(axis=0)
    total = np.zeros(n, dtype=np.float64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    seen = np.zeros(n, dtype=np.int64)
    for i in range(r):  # sequential, as Go sums (adding 0.0 for a skipped resource is exact)
        m = present[i]
        total = total + frac[i]
        first = np.where(m & (seen == 0), frac[i], first)
        second = np.where(m & (seen == 1), frac[i], second)
        seen = seen + m
    std2 = np.abs((first - second) / 2)
    mean = total / np.maximum(count, 1).astype(np.float64)
    acc = np.zeros(n, dtype=np.float64)
    for i in range(r):
        d = frac[i] - mean
        acc = acc + np.where(present[i], d * d, 0.0)
    std_n = np.sqrt(acc / np.maximum(count, 1).astype(np.float64))
    std = np.where(count == 2, std2, np.where(count > 2, std_n, 0.0))
    return np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def balance_change_score(with_pod: int, without_pod: int) -> int:
    """v1.36's ``balancedResourceScorer``: ``MaxNodeScore/2 + (MaxNodeScore/2 + with −
    without)/2`` (both operands non-negative, so ``//`` is Go's ``/``)."""
    return HALF + (HALF + with_pod - without_pod) // 2


def balance_change_score_np(with_pod: np.ndarray, without_pod: np.ndarray) -> np.ndarray:
    return HALF + (HALF + with_pod - without_pod) // 2


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]
    # DRAExtendedResource: devices backing the scored extended resources, as
    # NodeResourcesFit's (None: no class backs any of them)
    dra: DraScoreState | None = None

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    name = NAME

    def signs_no_pod(self) -> bool:
        # as NodeResourcesFit: no signature while DRAExtendedResource is on
        return feature_enabled(self.handle, "DRAExtendedResource")

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        if self.signs_no_pod():
            return None
        return ((signers.RESOURCES, signers.resources(pod)),)

    args: NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | dict[str, Any] | None,
                 handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = typed_args(NodeResourcesBalancedAllocationArgs, args, handle.features)
        resources = tuple(self.args.resources)
        self.scorer = ResourceAllocationScorer(
            NAME, resources, use_requested=True,
            scorer_py=balanced_resource_scorer, scorer_np=balanced_resource_scorer_np)
        self._dra_scored = dra_scored_names(r.name for r in resources)
        # v1.36 (kubernetes#135573): score the change in balance, not the balance after.
        self.score_change = at_least(handle.kubernetes_version, "1.36")
        # each row's score per request vector, across cycles
        self._rows = RowMemo()

    @property
    def resources(self) -> tuple[ResourceSpec, ...]:
        return self.scorer.resources

    # ------------------------------------------------------------------ PreScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        pod_requests = self.scorer.pod_requests(pod)
        if is_best_effort(pod_requests):
            # Skip for best-effort pods, so that they don't all pile up on one node.
            return skip()
        state.write(PRE_SCORE_STATE_KEY, self._with_dra(pod_requests))
        return None

    def _with_dra(self, pod_requests: tuple[int, ...]) -> _PreScoreState:
        return _PreScoreState(pod_requests,
                              pre_score_dra(self.handle, self._dra_scored))

    def _pre_score_state(self, state: CycleState, pod: Pod) -> _PreScoreState | None:
        s = state.read(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s
        reqs = self.scorer.pod_requests(pod)
        return None if is_best_effort(reqs) else self._with_dra(reqs)

    # ------------------------------------------------------------------ Score

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = self._pre_score_state(state, pod)
        if s is None:
            return 0
        reqs = s.pod_requests
        if not self.score_change:
            return self.scorer.score_node(node_info, reqs, s.dra)
        requested, allocatable = self.scorer.node_values(node_info, reqs, s.dra)
        # The node's requested amounts without the pod, for the resources scored at all.
        allocated = [r - p if a else 0
                     for r, p, a in zip(requested, reqs, allocatable, strict=True)]
        return balance_change_score(balanced_resource_scorer(requested, allocatable),
                                    balanced_resource_scorer(allocated, allocatable))

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        s = self._pre_score_state(state, pod)
        if s is None:
            return np.zeros(len(idx), dtype=np.int64)
        reqs = s.pod_requests
        table = snapshot.table
        if s.dra is not None:
            # device counts are not in the table's row versions: no cached rows
            nodes = [snapshot.by_name[table.names[r]].node for r in idx]
            return self._score_rows(table, reqs, idx, s.dra, nodes)
        by_name, names = snapshot.by_name, table.names
        return self._rows.rows(
            table, reqs, idx, lambda t, rows: self._score_rows(t, reqs, rows),
            lambda r: self.score(state, pod, by_name[names[r]]))

    def _score_rows(self, table: NodeTable, reqs: tuple[int, ...], idx: np.ndarray,
                    dra: DraScoreState | None = None,
                    nodes: Sequence[Node | None] = ()) -> np.ndarray:
        if not self.score_change:
            return self.scorer.score_table(table, idx, reqs, dra, nodes)
        requested, allocatable = self.scorer.table_values(table, idx, reqs, dra, nodes)
        if len(reqs) == 2 and allocatable.all():
            # The usual cpu + memory, fused: |f0 − f1| / 2 with and without the pod (the
            # scores are in [50, 100], so astype's truncation is int64()'s).
            f = np.minimum(requested / allocatable, 1.0)
            g = np.minimum((requested - np.asarray(reqs, dtype=np.int64)[:, None])
                           / allocatable, 1.0)
            with_pod = ((1 - np.abs((f[0] - f[1]) / 2)) * float(MAX_NODE_SCORE)).astype(np.int64)
            without = ((1 - np.abs((g[0] - g[1]) / 2)) * float(MAX_NODE_SCORE)).astype(np.int64)
            return HALF + (HALF + with_pod - without) // 2
        pod_req = np.asarray(reqs, dtype=np.int64)[:, None]
        allocated = np.where(allocatable != 0, requested - pod_req, 0)
        return np.asarray(balance_change_score_np(
            balanced_resource_scorer_np(requested, allocatable),
            balanced_resource_scorer_np(allocated, allocatable)), dtype=np.int64)
