"""Helpers shared by the in-tree plugins (upstream ``plugins/helper`` and ``scheduler/util``).

Integer arithmetic follows Go: ``go_div`` truncates toward zero, ``go_round`` is ``math.Round``
(half away from zero). The numpy forms are exact for the int64 values the scheduler works with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from kubesched.api.types import Taint, Toleration
from kubesched.api.validation import is_qualified_name
from kubesched.framework.interface import MAX_NODE_SCORE

# ---------------------------------------------------------------- Go arithmetic


def go_div(a: int, b: int) -> int:
    """Go's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_div_np(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """``go_div`` element-wise (int64); ``b`` must be non-zero where the result is used."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a >= 0) == (b >= 0), q, -q)


def go_round(x: float) -> float:
    """Go's ``math.Round``: to the nearest integer, halves away from zero (exact)."""
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


def go_round_np(x: np.ndarray) -> np.ndarray:
    """``go_round`` element-wise on float64."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(1.0, x), t)


# ---------------------------------------------------------------- DefaultNormalizeScore


def default_normalize_score(scores: np.ndarray, reverse: bool,
                            max_priority: int = MAX_NODE_SCORE) -> np.ndarray:
    """Upstream ``helper.DefaultNormalizeScore``: scale ``[0, max(scores)]`` to
    ``[0, max_priority]`` with Go integer division; ``reverse`` subtracts from max_priority.
    All zero (or no positive score): unchanged, or all ``max_priority`` when reversed."""
    s = np.asarray(scores, dtype=np.int64)
    max_count = int(s.max()) if len(s) else 0
    if max_count <= 0:  # upstream's running maximum starts at 0
        if reverse:
            return np.full(len(s), max_priority, dtype=np.int64)
        return s.copy()
    out = go_div_np(max_priority * s, max_count)
    if reverse:
        out = max_priority - out
    return out.astype(np.int64, copy=False)


# ---------------------------------------------------------------- broken linear function


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Upstream ``helper.BuildBrokenLinearFunction``: ``shape`` is ``(utilization, score)``
    points with increasing utilization; returns ``f(p) -> int`` (Go integer arithmetic)."""
    points = tuple((int(u), int(s)) for u, s in shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return points[0][1]
                u0, s0 = points[i - 1]
                return s0 + go_div((s - s0) * (p - u0), u - u0)
        return points[-1][1]

    return f


def broken_linear_np(shape: Sequence[tuple[int, int]], p: np.ndarray) -> np.ndarray:
    """``build_broken_linear_function(shape)`` applied element-wise to int64 ``p``."""
    p = np.asarray(p, dtype=np.int64)
    out = np.full(p.shape, shape[-1][1], dtype=np.int64)
    # Walk the segments from the last to the first so the first matching point wins.
    for i in range(len(shape) - 1, -1, -1):
        u, s = shape[i]
        hit = p <= u
        if i == 0:
            val: np.ndarray | int = s
        else:
            u0, s0 = shape[i - 1]
            val = s0 + go_div_np((s - s0) * (p - u0), u - u0)
        out = np.where(hit, val, out)
    return out


# ---------------------------------------------------------------- resource names

DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

def is_prefixed_native_resource(name: str) -> bool:
    return DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a fully-qualified name outside kubernetes.io/."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return is_qualified_name(REQUESTS_PREFIX + name)


@lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages-*, kubernetes.io/-prefixed
    native and attachable-volumes-* resources."""
    return (is_extended_resource_name(name) or name.startswith(HUGEPAGES_PREFIX)
            or is_prefixed_native_resource(name) or name.startswith(ATTACHABLE_VOLUMES_PREFIX))


# ---------------------------------------------------------------- taints

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"


def tolerations_tolerate_taint(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """``v1helper.TolerationsTolerateTaint``."""
    return any(t.tolerates(taint) for t in tolerations)


def find_matching_untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                                    effects: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE)
                                    ) -> Taint | None:
    """``v1helper.FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``:
    the first taint (in node order) with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None
