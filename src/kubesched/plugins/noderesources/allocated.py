"""LeastAllocated and MostAllocated scoring strategies (upstream ``least_allocated.go`` and
``most_allocated.go``, v1.35): per resource with allocatable ≠ 0 a 0–100 score, and the node's
score is their weighted mean with Go integer division.

- LeastAllocated: ``(alloc − requested) × 100 // alloc``, 0 when the node would be
  over-committed.
- MostAllocated: ``min(requested, alloc) × 100 // alloc`` (requested may exceed alloc: pods
  without requests count the non-zero defaults).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kubesched.config.plugin_args import ResourceSpec
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import (
    ScorerNp,
    ScorerPy,
)


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _least_np(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    ok = req <= alloc
    return np.where(ok, (alloc - req) * MAX_NODE_SCORE // np.maximum(alloc, 1), 0)


def _most_np(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    return np.minimum(req, alloc) * MAX_NODE_SCORE // np.maximum(alloc, 1)


def _weighted_mean_scorer(resources: Sequence[ResourceSpec],
                          per_resource: Callable[[int, int], int],
                          per_resource_np: Callable[[np.ndarray, np.ndarray], np.ndarray]
                          ) -> tuple[ScorerPy, ScorerNp]:
    weights = [r.weight for r in resources]

    def score_py(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            node_score += per_resource(req, alloc) * w
            weight_sum += w
        return 0 if weight_sum == 0 else node_score // weight_sum

    def score_np(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        n = requested.shape[1]
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            present = alloc != 0
            node_score += np.where(present, per_resource_np(req, alloc), 0) * w
            weight_sum += present * w
        return np.where(weight_sum == 0, 0, node_score // np.maximum(weight_sum, 1))

    return score_py, score_np


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> tuple[ScorerPy, ScorerNp]:
    return _weighted_mean_scorer(resources, least_requested_score, _least_np)


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> tuple[ScorerPy, ScorerNp]:
    return _weighted_mean_scorer(resources, most_requested_score, _most_np)
