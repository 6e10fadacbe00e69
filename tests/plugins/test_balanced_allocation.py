"""NodeResourcesBalancedAllocation, ported from upstream balanced_allocation_test.go
TestNodeResourcesBalancedAllocation with the v1.35 expected values (reference §9: the
``(1 − std) × 100`` formula, PreScore Skip for best-effort pods)."""

from __future__ import annotations

import pytest
from _plugtest_util import make_node_milli, make_pod, run_scores, snapshot

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources import BalancedAllocation
from kubesched.plugins.noderesources.balanced_allocation import balanced_resource_scorer

GPU = "nvidia.com/gpu"
DEFAULT = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
WITH_GPU = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                          {"name": GPU, "weight": 1}]}

CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_MEMORY_GPU = [{"cpu": "1000m", "memory": "2000"},
                  {"cpu": "2000m", "memory": "3000", GPU: "3"}]


def nodes(*specs):
    return [make_node_milli(name, cpu, mem, scalars) for name, cpu, mem, scalars in specs]


# (name, incoming pod containers, nodes, existing [(node, containers)], args, expected)
CASES = [
    ("nothing scheduled, resources requested, differently sized nodes", CPU_AND_MEMORY,
     nodes(("node1", 4000, 10000, None), ("node2", 6000, 10000, None)), [], DEFAULT,
     [87, 100]),
    ("resources requested, pods scheduled with resources", CPU_AND_MEMORY,
     nodes(("node1", 10000, 20000, None), ("node2", 10000, 20000, None)),
     [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], DEFAULT, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     CPU_AND_MEMORY,
     nodes(("node1", 10000, 20000, None), ("node2", 10000, 50000, None)),
     [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], DEFAULT, [82, 80]),
    ("nodes to reach min/max score", [{"memory": "2000"}, {"memory": "3000"}],
     nodes(("node1", 3000, 5000, None), ("node2", 3000, 5000, None)),
     [("node1", CPU_ONLY)], DEFAULT, [100, 50]),
    ("requested resources at node capacity", CPU_ONLY,
     nodes(("node1", 6000, 10000, None), ("node2", 6000, 10000, None)),
     [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], DEFAULT, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation",
     [{"memory": "0", GPU: "1"}],
     nodes(("node1", 3500, 40000, {GPU: 8}), ("node2", 3500, 40000, {GPU: 8})),
     [("node2", CPU_AND_MEMORY), ("node1", CPU_MEMORY_GPU)], WITH_GPU, [70, 65]),
    ("node without the scalar resource", CPU_AND_MEMORY,
     nodes(("node1", 3500, 40000, {GPU: 8}), ("node2", 3500, 40000, None)), [], WITH_GPU,
     [63, 63]),
]


@pytest.mark.parametrize("pre_score", [True, False], ids=["prescore", "no-prescore"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_node_resources_balanced_allocation(case, pre_score) -> None:
    _name, reqs, node_list, existing, args, want = case
    pods = [make_pod(reqs=r, node=node) for node, r in existing]
    got = run_scores(BalancedAllocation(args, None), make_pod(reqs=reqs),
                     snapshot(node_list, pods), pre_score=pre_score)
    assert got == want


BEST_EFFORT = [
    ("nothing scheduled, nothing requested", None, [], DEFAULT),
    ("no resources requested, pods without container scheduled", None,
     [("node1", None), ("node1", None), ("node2", None), ("node2", None)], DEFAULT),
    ("no resources requested, pods with container scheduled", [None],
     [("node1", [None]), ("node1", [None])], DEFAULT),
    ("no resources requested, pods scheduled with resources", None,
     [("node1", CPU_ONLY), ("node1", CPU_ONLY), ("node2", CPU_ONLY),
      ("node2", CPU_AND_MEMORY)], DEFAULT),
    ("node without the scalar resource, pod requests none of cpu and gpu", None,
     [("node1", CPU_ONLY), ("node2", CPU_ONLY)],
     {"resources": [{"name": "cpu", "weight": 1}, {"name": GPU, "weight": 1}]}),
]


@pytest.mark.parametrize("case", BEST_EFFORT, ids=[c[0] for c in BEST_EFFORT])
def test_best_effort_pod_skips_prescore(case) -> None:
    _name, reqs, existing, args = case
    node_list = nodes(("node1", 10000, 20000, {GPU: 8}), ("node2", 10000, 20000, None))
    pods = [make_pod(reqs=r, node=node) for node, r in existing if r is not None or node]
    plugin = BalancedAllocation(args, None)
    got = run_scores(plugin, make_pod(reqs=reqs), snapshot(node_list, pods))
    assert not isinstance(got, list) and got.code == Code.SKIP
    # Score without PreScore (upstream's fallback) gives 0 for a best-effort pod.
    snap = snapshot(node_list, pods)
    assert plugin.score(CycleState(), make_pod(reqs=reqs), snap.node_infos[0]) == 0


def test_default_resources() -> None:
    p = BalancedAllocation(None, None)
    assert [(r.name, r.weight) for r in p.resources] == [("cpu", 1), ("memory", 1)]


def test_scorer_formula() -> None:
    # worked example of reference §9: fractions 0.75 and 0.5 -> 87
    assert balanced_resource_scorer([3000, 5000], [4000, 10000]) == 87
    # fractions above 1 are capped; fewer than two resources -> std 0
    assert balanced_resource_scorer([9000, 5000], [3000, 5000]) == 100
    assert balanced_resource_scorer([1, 0], [4, 0]) == 100
    # three resources: population standard deviation (the scalar-resource case)
    assert balanced_resource_scorer([3000, 5000, 4], [3500, 40000, 8]) == 70
