"""NodeResourcesBalancedAllocation, ported from upstream balanced_allocation_test.go
TestNodeResourcesBalancedAllocation: the v1.35 expected values (reference §9: the
``(1 − std) × 100`` formula, PreScore Skip for best-effort pods) and the v1.36 ones
(kubernetes#135573: ``50 + (50 + with − without) / 2``). The v1.36 values are upstream's
table (the stored ``balanced_allocation_test.go`` with TestBalancedAllocationSignPod and
ktesting, read in December 2026: all seven CPU/memory/GPU cases, with and without PreScore,
match), its two DRA extended-resource rows included (a DeviceClass naming the extended
resource, eight devices on node1, none on node2: 1.35 gives 62/63, 1.36 gives 76/75)."""

from __future__ import annotations

import pytest
from _plugtest_util import make_node_milli, make_pod, run_scores, snapshot

from kubesched.api.scenario import load_scenario_text
from kubesched.config.features import FeatureGates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.plugins.noderesources import BalancedAllocation
from kubesched.plugins.noderesources.balanced_allocation import (
    balance_change_score,
    balanced_resource_scorer,
)


def handle(version: str) -> Handle:
    return Handle(features=FeatureGates(version))

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


# (name, incoming pod containers, nodes, existing [(node, containers)], args,
#  {release: expected})
CASES = [
    ("nothing scheduled, resources requested, differently sized nodes", CPU_AND_MEMORY,
     nodes(("node1", 4000, 10000, None), ("node2", 6000, 10000, None)), [], DEFAULT,
     {"1.35": [87, 100], "1.36": [68, 75]}),
    ("resources requested, pods scheduled with resources", CPU_AND_MEMORY,
     nodes(("node1", 10000, 20000, None), ("node2", 10000, 20000, None)),
     [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], DEFAULT,
     {"1.35": [82, 95], "1.36": [73, 74]}),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     CPU_AND_MEMORY,
     nodes(("node1", 10000, 20000, None), ("node2", 10000, 50000, None)),
     [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], DEFAULT,
     {"1.35": [82, 80], "1.36": [73, 70]}),
    ("nodes to reach min/max score", [{"memory": "2000"}, {"memory": "3000"}],
     nodes(("node1", 3000, 5000, None), ("node2", 3000, 5000, None)),
     [("node1", CPU_ONLY)], DEFAULT, {"1.35": [100, 50], "1.36": [100, 50]}),
    ("requested resources at node capacity", CPU_ONLY,
     nodes(("node1", 6000, 10000, None), ("node2", 6000, 10000, None)),
     [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)], DEFAULT,
     {"1.35": [50, 75], "1.36": [62, 62]}),
    ("include scalar resource on a node for balanced resource allocation",
     [{"memory": "0", GPU: "1"}],
     nodes(("node1", 3500, 40000, {GPU: 8}), ("node2", 3500, 40000, {GPU: 8})),
     [("node2", CPU_AND_MEMORY), ("node1", CPU_MEMORY_GPU)], WITH_GPU,
     {"1.35": [70, 65], "1.36": [75, 76]}),
    ("node without the scalar resource", CPU_AND_MEMORY,
     nodes(("node1", 3500, 40000, {GPU: 8}), ("node2", 3500, 40000, None)), [], WITH_GPU,
     {"1.35": [63, 63], "1.36": [56, 56]}),
]


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize("pre_score", [True, False], ids=["prescore", "no-prescore"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_node_resources_balanced_allocation(case, pre_score, version) -> None:
    _name, reqs, node_list, existing, args, want = case
    pods = [make_pod(reqs=r, node=node) for node, r in existing]
    got = run_scores(BalancedAllocation(args, handle(version)), make_pod(reqs=reqs),
                     snapshot(node_list, pods), pre_score=pre_score)
    assert got == want["1.35" if version == "1.35" else "1.36"]


# upstream's extendedResourceName / deviceClassWithExtendResourceName (fit_test.go) and the
# rows' ResourceSlice: st.MakeResourceSlice("node1", "test-driver") with device-1 … device-8
DRA_RESOURCE = "extended.resource.dra.io/something"
DRA_OBJECTS = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: device-class-name}}
spec: {{extendedResourceName: {DRA_RESOURCE}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: node1-test-driver}}
spec:
  driver: test-driver
  nodeName: node1
  pool: {{name: node1, resourceSliceCount: 1}}
  devices: [{", ".join(f"{{name: device-{i}}}" for i in range(1, 9))}]
"""
WITH_DRA = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                          {"name": DRA_RESOURCE, "weight": 1}]}


@pytest.mark.parametrize(("version", "gates", "want"), [
    ("1.35", (("DRAExtendedResource", True),), [62, 63]),
    ("1.36", (), [76, 75]),
    ("1.37", (), [76, 75]),
])
@pytest.mark.parametrize("pre_score", [True, False], ids=["prescore", "no-prescore"])
def test_dra_extended_resource_rows(version, gates, want, pre_score) -> None:
    """The rows "include DRA resource on a node for balanced resource allocation" (with and
    without PreScore): node1's devices count as the resource (0 -> 1 of 8), node2 has none,
    so the resource is left out there. Upstream turns DRAExtendedResource on for them; it is
    beta-on from 1.36."""
    objects = load_scenario_text(DRA_OBJECTS).objects
    node_list = nodes(("node1", 3500, 40000, None), ("node2", 3500, 40000, None))
    pods = [make_pod(reqs=CPU_ONLY, node="node1"), make_pod(reqs=CPU_AND_MEMORY, node="node2")]
    plugin = BalancedAllocation(WITH_DRA, Handle(objects=objects,
                                                 features=FeatureGates(version, gates)))
    got = run_scores(plugin, make_pod(reqs=[{DRA_RESOURCE: "1"}]), snapshot(node_list, pods),
                     pre_score=pre_score)
    assert got == want


def test_balance_change_formula() -> None:
    # v1.36's worked cases (upstream's comments): no change 75, balanced -> imbalanced 50,
    # imbalanced -> balanced 100; "differently sized nodes" node1: 0.75/0.5 after (87),
    # empty before (100): 50 + (50 + 87 − 100) / 2 = 50 + 18 = 68.
    assert balance_change_score(80, 80) == 75
    assert balance_change_score(50, 100) == 50
    assert balance_change_score(100, 50) == 100
    assert balance_change_score(87, 100) == 68
    assert balance_change_score(88, 87) == 75  # (50 + 1) / 2 truncates


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
    plugin = BalancedAllocation(args, handle("1.35"))
    got = run_scores(plugin, make_pod(reqs=reqs), snapshot(node_list, pods))
    assert not isinstance(got, list) and got.code == Code.SKIP
    # Score without PreScore (upstream's fallback) gives 0 for a best-effort pod.
    snap = snapshot(node_list, pods)
    assert plugin.score(CycleState(), make_pod(reqs=reqs), snap.node_infos[0]) == 0


def test_default_resources() -> None:
    p = BalancedAllocation(None, Handle())
    assert [(r.name, r.weight) for r in p.resources] == [("cpu", 1), ("memory", 1)]


def test_scorer_formula() -> None:
    # worked example of reference §9: fractions 0.75 and 0.5 -> 87
    assert balanced_resource_scorer([3000, 5000], [4000, 10000]) == 87
    # fractions above 1 are capped; fewer than two resources -> std 0
    assert balanced_resource_scorer([9000, 5000], [3000, 5000]) == 100
    assert balanced_resource_scorer([1, 0], [4, 0]) == 100
    # three resources: population standard deviation (the scalar-resource case)
    assert balanced_resource_scorer([3000, 5000, 4], [3500, 40000, 8]) == 70
