"""NodeResourcesBalancedAllocation (upstream ``noderesources/balanced_allocation.go``, v1.35).

Favours nodes whose resource fractions (``requested / allocatable`` incl. the pod, capped at 1,
plain requests without non-zero defaults) are close to each other:
``score = int64((1 − std) × 100)`` with ``std = |f0 − f1| / 2`` for two resources, the
population standard deviation for more, 0 for fewer. PreScore returns Skip for a pod that
requests none of the configured resources (v1.32+, kubernetes#129138).

The float arithmetic is float64 in both forms, operation for operation as in Go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    NodeList,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    ResourceSpec,
    is_best_effort,
    parse_resource_specs,
)

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScorer`` (v1.35) for one node."""
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


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        resources = parse_resource_specs(self.args.get("resources"))
        self.scorer = ResourceAllocationScorer(
            NAME, resources, use_requested=True,
            scorer_py=balanced_resource_scorer, scorer_np=balanced_resource_scorer_np)

    @property
    def resources(self) -> tuple[ResourceSpec, ...]:
        return self.scorer.resources

    # ------------------------------------------------------------------ PreScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        pod_requests = self.scorer.pod_requests(pod)
        if is_best_effort(pod_requests):
            # Skip for best-effort pods, so that they don't all pile up on one node.
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(pod_requests))
        return None

    def _pod_requests(self, state: CycleState, pod: Pod) -> tuple[int, ...] | None:
        s = state.read(PRE_SCORE_STATE_KEY)
        if s is not None:
            return s.pod_requests
        reqs = self.scorer.pod_requests(pod)
        return None if is_best_effort(reqs) else reqs

    # ------------------------------------------------------------------ Score

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        reqs = self._pod_requests(state, pod)
        if reqs is None:
            return 0
        return self.scorer.score_node(node_info, reqs)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        reqs = self._pod_requests(state, pod)
        if reqs is None:
            return np.zeros(len(idx), dtype=np.int64)
        return self.scorer.score_table(snapshot.table, idx, reqs)
