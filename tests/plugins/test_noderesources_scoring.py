"""NodeResourcesFit scoring strategies, ported from upstream (v1.35):
least_allocated_test.go TestLeastAllocatedScoringStrategy, most_allocated_test.go
TestMostAllocatedScoringStrategy, requested_to_capacity_ratio_test.go
TestRequestedToCapacityRatioScoringStrategy / TestResourceBinPackingSingleExtended /
TestResourceBinPackingMultipleExtended, fit_test.go TestFitScore (non-DRA cases).
Every case runs the per-node and the batch form (see _plugtest_util.run_scores)."""

from __future__ import annotations

import pytest
from _plugtest_util import make_node, make_node_milli, make_pod, run_scores, snapshot

from kubesched.framework.handle import Handle
from kubesched.framework.interface import PluginError
from kubesched.plugins.noderesources import Fit

EXT = "abc.com/xyz"
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT_SET = [*DEFAULT, {"name": EXT, "weight": 1}]

P_1_2 = [{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]


def n(name, **cap):
    return make_node(name, capacity=cap)


def fit(strategy, resources, shape=None):
    ss = {"type": strategy, "resources": resources}
    if shape is not None:
        ss["requestedToCapacityRatio"] = {"shape": shape}
    return Fit({"scoringStrategy": ss}, Handle())


# (name, pod reqs, nodes, existing pods [(node, reqs)], resources, expected)
LEAST = [
    ("nothing scheduled, nothing requested", None,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=4000, memory=10000)], [],
     DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", P_1_2,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=6000, memory=10000)], [],
     DEFAULT, [37, 50]),
    ("no resources requested, pods scheduled", None,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=4000, memory=10000)],
     [("node1", None), ("node1", None), ("node2", None), ("node2", None)], DEFAULT, [100, 100]),
    ("no resources requested, pods scheduled with resources", None,
     [n("node1", cpu=10000, memory=20000), n("node2", cpu=10000, memory=20000)],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [70, 57]),
    ("resources requested, pods scheduled with resources", P_1_2,
     [n("node1", cpu=10000, memory=20000), n("node2", cpu=10000, memory=20000)],
     [("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", P_1_2,
     [n("node1", cpu=10000, memory=20000), n("node2", cpu=10000, memory=50000)],
     [("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [57, 60]),
    ("requested resources exceed node capacity", [{"cpu": "3000", "memory": "0"}],
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=4000, memory=10000)],
     [("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [50, 25]),
    ("zero node resources, pods scheduled with resources", None,
     [make_node("node1"), make_node("node2")],
     [("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [0, 0]),
    ("different weight on CPU and memory, differently sized nodes", P_1_2,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=6000, memory=10000)], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [41, 50]),
    ("bypass extended resource if the pod does not request", P_1_2,
     [n("node1", cpu=6000, memory=10000), n("node2", cpu=6000, memory=10000, **{EXT: 4})], [],
     EXT_SET, [50, 50]),
    ("honor extended resource if the pod requests",
     [{"cpu": "3000", "memory": "5000", EXT: "2"}],
     [n("node1", cpu=6000, memory=10000, **{EXT: 4}),
      n("node2", cpu=6000, memory=10000, **{EXT: 10})], [], EXT_SET, [50, 60]),
    ("if the node doesn't have a resource", [{"cpu": "3000", "memory": "4000"}],
     [n("node1", cpu=6000, memory=10000), n("node2", cpu=6000, memory=10000, **{EXT: 4})], [],
     [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
      {"name": "memory", "weight": 1}], [55, 55]),
]

MOST = [
    ("nothing scheduled, nothing requested", None,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=4000, memory=10000)], [],
     DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", P_1_2,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=6000, memory=10000)], [],
     DEFAULT, [62, 50]),
    ("no resources requested, pods scheduled with resources", None,
     [n("node1", cpu=10000, memory=20000), n("node2", cpu=10000, memory=20000)],
     [("node1", [{"cpu": "3000", "memory": "0"}]), ("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [30, 42]),
    ("resources requested, pods scheduled with resources", P_1_2,
     [n("node1", cpu=10000, memory=20000), n("node2", cpu=10000, memory=20000)],
     [("node1", [{"cpu": "3000", "memory": "0"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [42, 55]),
    ("resources requested equal node capacity",
     [{"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}],
     [n("node1", cpu=5000, memory=10000), n("node2", cpu=10000, memory=9000)], [],
     DEFAULT, [95, 75]),
    ("different weight on CPU and memory", P_1_2,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=6000, memory=10000)], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", [None],
     [n("node1", cpu="250m", memory="1000Mi"), n("node2", cpu="250m", memory="1000Mi")],
     [("node1", [None]), ("node1", [None])], DEFAULT, [80, 30]),
    ("bypass extended resource if the pod does not request", P_1_2,
     [n("node1", cpu=6000, memory=10000), n("node2", cpu=6000, memory=10000, **{EXT: 4})], [],
     EXT_SET, [50, 50]),
    ("honor extended resource if the pod request",
     [{"cpu": "3000", "memory": "5000", EXT: "2"}],
     [n("node1", cpu=6000, memory=10000, **{EXT: 4}),
      n("node2", cpu=6000, memory=10000, **{EXT: 10})], [], EXT_SET, [50, 40]),
    ("if the node doesn't have a resource", [{"cpu": "3000", "memory": "4000"}],
     [n("node1", cpu=6000, memory=10000), n("node2", cpu=6000, memory=10000, **{EXT: 4})], [],
     [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
      {"name": "memory", "weight": 1}], [45, 45]),
]


def _run(strategy, case, shape=None):
    _name, reqs, nodes, existing, resources, want = case
    pods = [make_pod(reqs=r, node=node) for node, r in existing]
    snap = snapshot(nodes, pods)
    got = run_scores(fit(strategy, resources, shape), make_pod(reqs=reqs), snap)
    assert got == want


@pytest.mark.parametrize("case", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated_scoring_strategy(case) -> None:
    _run("LeastAllocated", case)


@pytest.mark.parametrize("case", MOST, ids=[c[0] for c in MOST])
def test_most_allocated_scoring_strategy(case) -> None:
    _run("MostAllocated", case)


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
def test_resources_not_set_is_an_error(strategy) -> None:
    snap = snapshot([n("node1", cpu=4000, memory=10000)])
    with pytest.raises(PluginError, match="resources not found"):
        run_scores(fit(strategy, []), make_pod(reqs=P_1_2), snap)


SHAPE_LEAST = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
RTCR = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)",
     None, [n("node1", cpu=4000, memory=10000), n("node2", cpu=4000, memory=10000)],
     [("node1", None), ("node1", None)], DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", P_1_2,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=6000, memory=10000)],
     [("node1", None), ("node1", None)], DEFAULT, [38, 50]),
    ("no resources requested, pods scheduled with resources", None,
     [n("node1", cpu=4000, memory=10000), n("node2", cpu=6000, memory=10000)],
     [("node1", [{"cpu": "3000", "memory": "5000"}]),
      ("node2", [{"cpu": "3000", "memory": "5000"}])], DEFAULT, [38, 50]),
]


@pytest.mark.parametrize("case", RTCR, ids=[c[0] for c in RTCR])
def test_requested_to_capacity_ratio_scoring_strategy(case) -> None:
    _run("RequestedToCapacityRatio", case, SHAPE_LEAST)


SHAPE_BINPACK = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
FOO, BAR = "intel.com/foo", "intel.com/bar"
GIB10 = 10000 * 1024 * 1024

SINGLE = [
    ("nothing scheduled, nothing requested", None, [], [0, 0]),
    ("resources requested, pods scheduled with less resources", [{FOO: "2"}],
     [("", None)], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     [{FOO: "2"}], [("node2", [{FOO: "2"}])], [2, 10]),
    ("resources requested, pods scheduled with more resources", [{FOO: "4"}],
     [("", None)], [5, 10]),
]


@pytest.mark.parametrize("case", SINGLE, ids=[c[0] for c in SINGLE])
def test_resource_bin_packing_single_extended(case) -> None:
    _name, reqs, existing, want = case
    nodes = [make_node_milli("node1", 4000, GIB10, {FOO: 8}),
             make_node_milli("node2", 4000, GIB10, {FOO: 4})]
    pods = [make_pod(reqs=r, node=node) for node, r in existing if node]
    plugin = fit("RequestedToCapacityRatio", [{"name": FOO, "weight": 1}], SHAPE_BINPACK)
    assert run_scores(plugin, make_pod(reqs=reqs), snapshot(nodes, pods)) == want


MULTI = [
    ("nothing scheduled, nothing requested", None, [], [0, 0]),
    ("resources requested, pods scheduled with less resources", [{FOO: "2", BAR: "2"}],
     [], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     [{FOO: "2", BAR: "2"}], [("node2", [{FOO: "4", BAR: "2"}])], [4, 7]),
    ("resources requested, pods scheduled with more resources", [{FOO: "4", BAR: "2"}],
     [], [5, 5]),
]


@pytest.mark.parametrize("case", MULTI, ids=[c[0] for c in MULTI])
def test_resource_bin_packing_multiple_extended(case) -> None:
    _name, reqs, existing, want = case
    nodes = [make_node_milli("node1", 4000, GIB10, {FOO: 8, BAR: 4}),
             make_node_milli("node2", 4000, GIB10, {FOO: 4, BAR: 8})]
    pods = [make_pod(reqs=r, node=node) for node, r in existing]
    plugin = fit("RequestedToCapacityRatio",
                 [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}], SHAPE_BINPACK)
    assert run_scores(plugin, make_pod(reqs=reqs), snapshot(nodes, pods)) == want


# fit_test.go TestFitScore (the cases without DRA objects)
FIT_SCORE_NODES = [("node1", 4000, 10000), ("node2", 6000, 10000)]
FIT_SCORE_EXISTING = [("node1", [{"cpu": "2000", "memory": "4000"}]),
                      ("node2", [{"cpu": "1000", "memory": "2000"}])]
FIT_SCORE = [
    ("RequestedToCapacityRatio case1", [{"cpu": "3000", "memory": "5000"}],
     "RequestedToCapacityRatio", SHAPE_LEAST, [10, 32]),
    ("RequestedToCapacityRatio case2", [{"cpu": "3000", "memory": "5000"}],
     "RequestedToCapacityRatio",
     [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}], [95, 68]),
    ("MostAllocated", [{"cpu": "1000", "memory": "2000"}], "MostAllocated", None, [67, 36]),
    ("LeastAllocated", [{"cpu": "1000", "memory": "2000"}], "LeastAllocated", None, [32, 63]),
]


@pytest.mark.parametrize("pre_score", [True, False], ids=["prescore", "no-prescore"])
@pytest.mark.parametrize("case", FIT_SCORE, ids=[c[0] for c in FIT_SCORE])
def test_fit_score(case, pre_score) -> None:
    _name, reqs, strategy, shape, want = case
    nodes = [n(name, cpu=c, memory=m) for name, c, m in FIT_SCORE_NODES]
    pods = [make_pod(reqs=r, node=node) for node, r in FIT_SCORE_EXISTING]
    got = run_scores(fit(strategy, DEFAULT, shape), make_pod(reqs=reqs),
                     snapshot(nodes, pods), pre_score=pre_score)
    assert got == want


@pytest.mark.parametrize(("strategy", "want"),
                         [("MostAllocated", [67, 45]), ("LeastAllocated", [32, 55])])
def test_fit_score_with_sidecar_container(strategy, want) -> None:
    nodes = [n("node1", cpu=4000, memory=10000), n("node2", cpu=4000, memory=10000)]
    pods = [make_pod(reqs=[{"cpu": "1000", "memory": "2000"}],
                     sidecar_reqs=[{"cpu": "1000", "memory": "2000"}], node="node1"),
            make_pod(reqs=[{"cpu": "1000", "memory": "2000"}], node="node2")]
    got = run_scores(fit(strategy, DEFAULT), make_pod(reqs=[{"cpu": "1000", "memory": "2000"}]),
                     snapshot(nodes, pods))
    assert got == want


def test_default_args_are_least_allocated_cpu_memory() -> None:
    for args in (None, {}, {"scoringStrategy": {"type": "LeastAllocated"}}):
        p = Fit(args, Handle())
        assert p.strategy_type == "LeastAllocated"
        assert [(r.name, r.weight) for r in p.resources] == [("cpu", 1), ("memory", 1)]
    with pytest.raises(ValueError, match="not supported"):
        Fit({"scoringStrategy": {"type": "Bogus"}}, Handle())
