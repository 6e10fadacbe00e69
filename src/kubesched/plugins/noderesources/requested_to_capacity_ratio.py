"""RequestedToCapacityRatio scoring strategy (upstream
``noderesources/requested_to_capacity_ratio.go``, v1.35).

Per resource with allocatable ≠ 0: utilization ``requested × 100 // alloc`` (100 when
over-committed) mapped through the broken linear ``shape`` (scores × 10); only resources
scoring above 0 count; the node's score is ``math.Round(Σ score × w / Σ w)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.config.plugin_args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec,
    UtilizationShapePoint,
)
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.helper import (
    broken_linear_np,
    build_broken_linear_function,
    go_round,
    go_round_np,
)
from kubesched.plugins.noderesources.resource_allocation import (
    ScorerNp,
    ScorerPy,
)

MAX_UTILIZATION = 100


def parse_shape(points: Sequence[UtilizationShapePoint]) -> tuple[tuple[int, int], ...]:
    """The args' shape (scores 0–10) as ``((u, s × 10), ...)`` on the 0–100 scale."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple((p.utilization, p.score * scale) for p in points)


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec],
                                       shape: Sequence[tuple[int, int]]
                                       ) -> tuple[ScorerPy, ScorerNp]:
    """``shape`` already scaled to 0–100 (see ``parse_shape``)."""
    weights = [r.weight for r in resources]
    shape = tuple(shape)
    if not shape:
        raise ValueError("requestedToCapacityRatio shape is empty")
    raw_fn = build_broken_linear_function(shape)

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw_fn(MAX_UTILIZATION)
        return raw_fn(requested * MAX_UTILIZATION // capacity)

    def score_py(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            s = resource_score(req, alloc)
            if s > 0:
                node_score += s * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return int(go_round(float(node_score) / float(weight_sum)))

    def score_np(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        n = requested.shape[1]
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            present = alloc != 0
            util = np.where(req > alloc, MAX_UTILIZATION,
                            req * MAX_UTILIZATION // np.where(present, alloc, 1))
            s = broken_linear_np(shape, util)
            take = present & (s > 0)
            node_score += np.where(take, s * w, 0)
            weight_sum += take * w
        ratio = node_score.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
        return np.where(weight_sum == 0, 0, go_round_np(ratio)).astype(np.int64)

    return score_py, score_np
