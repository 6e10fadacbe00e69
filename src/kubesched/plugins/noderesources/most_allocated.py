"""MostAllocated scoring strategy (upstream ``noderesources/most_allocated.go``, v1.35).

Per resource with allocatable ≠ 0: ``min(requested, alloc) × 100 // alloc``; the node's score
is the weighted mean with Go integer division.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import (
    ResourceSpec,
    ScorerNp,
    ScorerPy,
)


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    # requested may exceed capacity: pods without requests count the non-zero defaults
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> tuple[ScorerPy, ScorerNp]:
    weights = [r.weight for r in resources]

    def score_py(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            node_score += most_requested_score(req, alloc) * w
            weight_sum += w
        return 0 if weight_sum == 0 else node_score // weight_sum

    def score_np(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        n = requested.shape[1]
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            present = alloc != 0
            s = np.minimum(req, alloc) * MAX_NODE_SCORE // np.where(present, alloc, 1)
            node_score += np.where(present, s, 0) * w
            weight_sum += present * w
        return np.where(weight_sum == 0, 0, node_score // np.maximum(weight_sum, 1))

    return score_py, score_np
