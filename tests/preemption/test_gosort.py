"""kubesched's port of Go's sort.Slice against the real thing.

``data/gosort_vectors.json`` was produced by Go's ``sort.Slice`` (pdqsort, the sort package's
xorshift of Go ≥ 1.21, as kube-scheduler v1.35 is built with) on lists of
``(priority, startTime)`` with upstream's ``MoreImportantPod`` comparator, where a missing
start time (-1) is ``time.Now()`` read anew at each call — the comparator then answers "true"
both ways for two such pods, so the order is the algorithm's, and sizes above 12 go through
pdqsort's partitioning, pattern breaking and heap sort fallbacks.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from kubesched.preemption.gosort import sort_slice

VECTORS = json.loads((Path(__file__).parent / "data" / "gosort_vectors.json").read_text())


def _less(a: list[int], b: list[int]) -> bool:
    if a[1] != b[1]:
        return a[1] > b[1]
    if a[2] < 0:
        return b[2] < 0
    if b[2] < 0:
        return True
    return a[2] < b[2]


def test_vectors_match_go() -> None:
    assert len(VECTORS) > 100
    for v in VECTORS:
        items = [[i, prio, start] for i, (prio, start) in enumerate(v["items"])]
        sort_slice(items, _less)
        assert [it[0] for it in items] == v["out"], len(items)


def test_equal_no_start_time_pods_are_reversed_below_thirteen() -> None:
    """Insertion sort with an always-true comparator moves each pod before its equals."""
    items = [[i, 0, -1] for i in range(12)]
    sort_slice(items, _less)
    assert [it[0] for it in items] == list(range(11, -1, -1))


def test_strict_weak_order_sorts() -> None:
    rng = random.Random(5)
    for n in (0, 1, 2, 13, 49, 50, 51, 200, 1000):
        data = [rng.randrange(20) for _ in range(n)]
        got = list(data)
        sort_slice(got, lambda a, b: a < b)
        assert got == sorted(data)
        desc = sorted(data, reverse=True)  # a decreasing input (pattern reversal)
        sort_slice(desc, lambda a, b: a < b)
        assert desc == sorted(data)
