"""Pod importance (util.MoreImportantPod, GetEarliestPodStartTime) and
pickOneNodeForPreemption's criteria, one at a time."""

from __future__ import annotations

import math
from collections import Counter

from _preempt_util import VERY_LARGE, build, make_node, make_pod

from kubesched.api.types import PodCondition
from kubesched.preemption import (
    Victims,
    earliest_pod_start_time,
    more_important_pod,
    terminating_by_preemption,
)


def test_more_important_pod() -> None:
    hi, lo = make_pod("hi", priority=10), make_pod("lo", priority=1)
    assert more_important_pod(hi, lo) and not more_important_pod(lo, hi)
    old, new = make_pod("old", start=1.0), make_pod("new", start=2.0)
    assert more_important_pod(old, new) and not more_important_pod(new, old)
    same = make_pod("same", start=1.0)
    assert not more_important_pod(old, same) and not more_important_pod(same, old)
    # no start time is upstream's time.Now(): later than any start, and each call later
    a, b = make_pod("a"), make_pod("b")
    assert more_important_pod(old, a) and not more_important_pod(a, old)
    assert more_important_pod(a, b) and more_important_pod(b, a)


def test_earliest_pod_start_time() -> None:
    pods = [make_pod("x", priority=5, start=7.0), make_pod("y", priority=5, start=3.0),
            make_pod("z", priority=1, start=1.0)]
    assert earliest_pod_start_time(pods) == 3.0  # among the highest-priority victims only
    assert earliest_pod_start_time([make_pod("n", priority=5)]) == math.inf
    assert earliest_pod_start_time([make_pod("n", priority=5), pods[0]]) == 7.0
    assert earliest_pod_start_time([]) == -math.inf


def test_terminating_by_preemption() -> None:
    cond = PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")
    assert terminating_by_preemption(make_pod("a", terminating=True, conditions=[cond]))
    assert not terminating_by_preemption(make_pod("b", conditions=[cond]))
    assert not terminating_by_preemption(make_pod("c", terminating=True))
    other = PodCondition("DisruptionTarget", "True", "EvictionByEvictionAPI")
    assert not terminating_by_preemption(make_pod("d", terminating=True, conditions=[other]))


def _v(*prios: int, pdb: int = 0, start: float | None = None) -> Victims:
    return Victims([make_pod(f"v{i}", priority=p, start=start) for i, p in enumerate(prios)], pdb)


def _pick(victims: dict[str, Victims], seed: int = 0) -> str:
    env = build([], [make_node("n", VERY_LARGE)], [], seed=seed)
    return env.evaluator.pick_one_node_for_preemption(victims)


def test_criteria_in_order() -> None:
    # 1. fewest PDB violations beats everything else
    assert _pick({"a": _v(0, pdb=1), "b": _v(900, 900, 900)}) == "b"
    # 2. the lowest highest-priority victim
    assert _pick({"a": _v(10, 0), "b": _v(5, 5, 5)}) == "b"
    # 3. the smallest sum of priorities (each shifted by 2^31, so more pods cost more)
    assert _pick({"a": _v(5, 4), "b": _v(5, 1)}) == "b"
    assert _pick({"a": _v(-5, -5, -5), "b": _v(-5, -5)}) == "b"
    # 4. fewest victims — reached only when the shifted sums meet: 0-2^30-2^30+3*2^31 = 2*2^31
    assert _pick({"a": _v(0, -(2**30), -(2**30)), "b": _v(0, 0)}) == "b"
    # 5. the latest start among the highest-priority victims; no start time is "now"
    assert _pick({"a": _v(3, start=5.0), "b": _v(3, start=9.0)}) == "b"
    assert _pick({"a": _v(3, start=5.0), "b": _v(3)}) == "b"
    assert _pick({}) == ""


def test_remaining_tie_is_broken_by_the_seeded_generator() -> None:
    victims = {n: _v(1, start=2.0) for n in ("a", "b", "c")}
    picks = Counter(_pick(victims, seed) for seed in range(60))
    assert set(picks) == {"a", "b", "c"}
    assert _pick(victims, 7) == _pick(victims, 7)
