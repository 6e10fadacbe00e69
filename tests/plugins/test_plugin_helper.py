"""plugins.helper: TestDefaultNormalizeScore and TestBrokenLinearFunction (upstream), Go
arithmetic and resource-name classification."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.plugins.helper import (
    broken_linear_np,
    build_broken_linear_function,
    default_normalize_score,
    go_div,
    go_div_np,
    go_round,
    go_round_np,
    is_extended_resource_name,
    is_scalar_resource_name,
)

NORMALIZE = [
    (False, [1, 2, 3, 4], [25, 50, 75, 100]),
    (True, [1, 2, 3, 4], [75, 50, 25, 0]),
    (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
    (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),
    (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
    (True, [0, 1, 1, 1], [100, 0, 0, 0]),
    # all zero: unchanged, or all max when reversed
    (False, [0, 0, 0], [0, 0, 0]),
    (True, [0, 0, 0], [100, 100, 100]),
    (True, [], []),
]


@pytest.mark.parametrize(("reverse", "scores", "want"), NORMALIZE)
def test_default_normalize_score(reverse, scores, want) -> None:
    got = default_normalize_score(np.array(scores, dtype=np.int64), reverse)
    assert got.dtype == np.int64
    assert got.tolist() == want


BROKEN_LINEAR = [
    ([(10, 1), (90, 9)],
     [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
      (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)],
     [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)],
     [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
    # decreasing segment: Go truncates toward zero (-(10*1)/60 = 0, not -1)
    ([(0, 100), (60, 90)], [(1, 100), (6, 99), (7, 99), (59, 91)]),
]


@pytest.mark.parametrize(("shape", "assertions"), BROKEN_LINEAR)
def test_broken_linear_function(shape, assertions) -> None:
    f = build_broken_linear_function(shape)
    ps = np.array([p for p, _ in assertions], dtype=np.int64)
    for p, want in assertions:
        assert f(p) == want, p
    assert broken_linear_np(shape, ps).tolist() == [w for _, w in assertions]


def test_go_arithmetic() -> None:
    assert go_div(7, 2) == 3 and go_div(-7, 2) == -3 and go_div(7, -2) == -3
    assert go_div_np(np.array([7, -7, -1]), 2).tolist() == [3, -3, 0]
    for x, want in [(0.5, 1.0), (1.5, 2.0), (2.5, 3.0), (-0.5, -1.0), (2.4999, 2.0),
                    (0.49999999999999994, 0.0), (37.5, 38.0)]:
        assert go_round(x) == want, x
        assert go_round_np(np.array([x]))[0] == want, x


@pytest.mark.parametrize(("name", "extended", "scalar"), [
    ("example.com/aaa", True, True),
    ("nvidia.com/gpu", True, True),
    ("kubernetes.io/something", False, True),
    ("subdomain.kubernetes.io/something", False, True),
    ("hugepages-2Mi", False, True),
    ("attachable-volumes-aws-ebs", False, True),
    ("cpu", False, False),
    ("memory", False, False),
    ("ephemeral-storage", False, False),
    ("pods", False, False),
    ("requests.example.com/x", False, False),
    ("Example.com/x", False, False),
])
def test_resource_names(name, extended, scalar) -> None:
    assert is_extended_resource_name(name) == extended
    assert is_scalar_resource_name(name) == scalar
