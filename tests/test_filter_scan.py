"""The scheduler's filter scan (batch verdicts plus per-node two passes for nodes with
nominated pods, stopping after numFeasibleNodesToFind) against a plain sequential per-node
scan, as upstream's ideal, on random clusters."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hst

from kubesched.api.parse import parse_node, parse_pod
from kubesched.clock import VirtualClock
from kubesched.explain import ReadOnlyBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import Diagnosis
from kubesched.scheduler import Scheduler, num_feasible_nodes_to_find


def _pod(rng: random.Random, name: str, node: str = "", prio: int = 0) -> dict:
    spec: dict = {"priority": prio, "containers": [{"name": "c", "resources": {"requests": {
        "cpu": f"{rng.choice([100, 500, 1000, 1500])}m",
        "memory": f"{rng.choice([128, 512, 1024])}Mi"}}}]}
    if node:
        spec["nodeName"] = node
    if rng.random() < 0.2:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    return {"metadata": {"name": name, "uid": name}, "spec": spec}


@pytest.mark.parametrize("seed", range(40))
def test_scan_matches_sequential_per_node_scan(seed: int) -> None:
    rng = random.Random(seed)
    sched = Scheduler(ReadOnlyBackend(), VirtualClock())
    n = rng.choice([5, 30, 150])
    for i in range(n):
        spec = {}
        if rng.random() < 0.15:
            spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        sched.cache.add_node(parse_node({
            "metadata": {"name": f"n{i:03d}", "labels": {"topology.kubernetes.io/zone":
                                                           f"z{i % 3}"}},
            "spec": spec,
            "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "8"}}}))
    for j in range(rng.randint(0, 3 * n)):
        sched.cache.add_pod(parse_pod(_pod(rng, f"run{j}", f"n{rng.randrange(n):03d}")))
    for j in range(rng.randint(0, n)):
        p = parse_pod(_pod(rng, f"nom{j}", prio=rng.choice([0, 5, 10])))
        sched.queue.add_nominated_pod(p, f"n{rng.randrange(n):03d}")
    sched.cache.update_snapshot(sched.snapshot)
    fwk = sched.profiles["default-scheduler"]
    pod = parse_pod(_pod(rng, "target", prio=5))
    snap = sched.snapshot
    start = rng.randrange(n)
    order = np.concatenate([np.arange(start, n), np.arange(0, start)])
    to_find = num_feasible_nodes_to_find(rng.choice([0, 10, 50]), n)

    state = CycleState()
    fwk.run_pre_filter(state, pod, snap)
    d1 = Diagnosis()
    got = sched._filter_in_order(fwk, state, pod, np.arange(n), start, to_find, d1)

    state2 = CycleState()
    fwk.run_pre_filter(state2, pod, snap)
    want, statuses = [], {}
    for row in order.tolist():
        st = fwk.run_filter_with_nominated(state2, pod, snap.node_infos[row])
        if st.is_success():
            want.append(row)
            if len(want) == to_find:
                break
        else:
            statuses[snap.table.names[row]] = (st.code, st.plugin, st.reasons)
    assert got.tolist() == want
    assert {k: (v.code, v.plugin, v.reasons) for k, v in d1.node_to_status.statuses.items()} \
        == statuses


@given(hst.lists(hst.booleans(), max_size=40), hst.integers(min_value=1, max_value=45))
def test_the_scan_stops_after_the_needed_feasible_node(ok: list[bool], need: int) -> None:
    """``_cut``: how many nodes of ``ok`` a sequential scan visits to find ``need``
    feasible ones (all when there are fewer), counted one node at a time."""
    from kubesched.scheduler.algorithm import _cut

    found, visited = 0, 0
    for fits in ok:
        if found >= need:
            break
        visited += 1
        found += fits
    assert _cut(np.array(ok, dtype=bool), need) == visited


@given(hst.lists(hst.integers(0, 99), min_size=1, max_size=30, unique=True),
       hst.integers(0, 29), hst.integers(1, 35))
def test_the_scan_s_chunks_are_the_rotated_order_s(rows: list[int], start: int,
                                                   chunk: int) -> None:
    """``_rotated``: the chunks of the nodes taken from ``start`` round to it, without the
    rotated order built."""
    from kubesched.scheduler.algorithm import _rotated

    nodes = np.array(sorted(rows), dtype=np.int64)
    start %= len(nodes)
    order = np.concatenate([nodes[start:], nodes[:start]])
    for lo in range(0, len(nodes), chunk):
        assert _rotated(nodes, start, lo, lo + chunk).tolist() == order[lo: lo + chunk].tolist()
