"""Upstream's DefaultPreemption tables (pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption_test.go, v1.35): TestPostFilter, TestDryRunPreemption,
TestSelectBestCandidate, TestPodEligibleToPreemptOthers, TestPreempt.

Left out, with the reason: cases with scheduler extenders (extenders' preemption is tested
over HTTP in tests/extender), the pod-group
cases (PodGroup / workload-aware preemption is newer than v1.35), async preemption and async
API calls (kubesched's preemption is synchronous). Where upstream fixes the offset with
``rand.New(rand.NewSource(4)).Int31n`` the offsets it draws (4, then 1, then 3 for 5 nodes)
are passed directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from _preempt_util import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    ONE_POD,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    FakeFilter,
    build,
    make_node,
    make_pdb,
    make_pod,
    statuses,
    topo_node,
)

from kubesched.api.types import PodCondition
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus
from kubesched.preemption import pdb_views

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODE_RES = {"cpu": "200m", "memory": "400"}
VIOLATING = {"test.kubernetes.io/is-violating-pdb": "violating"}
NON_VIOLATING = {"test.kubernetes.io/is-violating-pdb": "non-violating"}


# ================================================================ TestPostFilter


@dataclass
class PF:
    name: str
    pod: object
    pods: list
    nodes: list
    n2s: NodeToStatus
    want_node: str | None
    want_status: Status
    pdbs: list = field(default_factory=list)


def _p(name, **kw):
    return make_pod(name, **kw)


POST_FILTER = [
    PF("pod with higher priority can be made schedulable",
       _p("p", priority=HIGH), [_p("p1", node="node1")],
       [make_node("node1", ONE_POD)], statuses({"node1": U}),
       "node1", Status()),
    PF("pod with tied priority is still unschedulable",
       _p("p"), [_p("p1", node="node1")],
       [make_node("node1", ONE_POD)], statuses({"node1": U}),
       "", Status(U, ("preemption: 0/1 nodes are available: 1 No preemption victims found "
                      "for incoming pod.",))),
    PF("preemption should respect filteredNodesStatuses",
       _p("p", priority=HIGH), [_p("p1", node="node1")],
       [make_node("node1", ONE_POD)], statuses({"node1": UU}),
       "", Status(U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful "
                      "for scheduling.",))),
    PF("preemption should respect absent NodeToStatusReader entry meaning "
       "UnschedulableAndUnresolvable",
       _p("p", priority=HIGH), [_p("p1", node="node1")],
       [make_node("node1", ONE_POD)], NodeToStatus(),
       "", Status(U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful "
                      "for scheduling.",))),
    PF("pod can be made schedulable on one node",
       _p("p", priority=MID),
       [_p("p1", priority=HIGH, node="node1"), _p("p2", priority=LOW, node="node2")],
       [make_node("node1", ONE_POD), make_node("node2", ONE_POD)],
       statuses({"node1": U, "node2": U}), "node2", Status()),
    PF("pod can be made schedulable on minHighestPriority node",
       _p("p", priority=VERY_HIGH),
       [_p("p1", labels=NON_VIOLATING, priority=HIGH, node="node1"),
        _p("p2", labels=VIOLATING, priority=LOW, node="node1"),
        _p("p3", labels=VIOLATING, priority=MID, node="node2")],
       [make_node("node1", ONE_POD), make_node("node2", ONE_POD)],
       statuses({"node1": U, "node2": U}), "node2", Status(),
       pdbs=[make_pdb(VIOLATING, 0, name="violating-pdb", min_available="100%"),
             make_pdb(NON_VIOLATING, 2**31 - 1, name="non-violating-pdb", min_available=0)]),
    PF("no candidate nodes found, no enough resource after removing low priority pods",
       _p("p", priority=HIGH, req=LARGE),
       [_p("p1", node="node1"), _p("p2", node="node2")],
       [make_node("node1", NODE_RES), make_node("node2", NODE_RES)],
       statuses({"node1": U, "node2": U}),
       "", Status(U, ("preemption: 0/2 nodes are available: 2 Insufficient cpu.",))),
    PF("no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
       "resource",
       _p("p", priority=HIGH, req=LARGE),
       [_p("p1", node="node1", priority=HIGH), _p("p2", node="node2"),
        _p("p3", node="node3", priority=HIGH)],
       [make_node("node1", ONE_POD), make_node("node2", NODE_RES), make_node("node3", ONE_POD)],
       statuses({"node1": U, "node2": U, "node3": U}),
       "", Status(U, ("preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No "
                      "preemption victims found for incoming pod.",))),
    PF("no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 "
       "nodes don't have enough CPU resource",
       _p("p", priority=HIGH, req=LARGE), [_p("p1", node="node1"), _p("p2", node="node2")],
       [make_node(f"node{i}", NODE_RES) for i in range(1, 5)],
       statuses({"node1": U, "node2": U, "node4": UU}),
       "", Status(U, ("preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption "
                      "is not helpful for scheduling.",))),
    PF("only one node but failed with TestPlugin",
       _p("p", priority=HIGH, req=LARGE), [_p("p1", node="node1")],
       [make_node("node1", LARGE, {"error": "true"})], statuses({"node1": U}),
       None, Status(Code.ERROR, ('preemption: running RemovePod on PreFilter plugin '
                                 '"test-plugin": failed to remove pod: p',))),
    PF("one failed with TestPlugin and the other pass",
       _p("p", priority=HIGH, req=LARGE),
       [_p("p1", node="node1"), _p("p2", node="node2", req=MEDIUM)],
       [make_node("node1", LARGE, {"error": "true"}), make_node("node2", LARGE)],
       statuses({"node1": U, "node2": U}), "node2", Status()),
]


@pytest.mark.parametrize("tc", POST_FILTER, ids=[tc.name for tc in POST_FILTER])
def test_post_filter(tc: PF) -> None:
    env = build(["NodeResourcesFit"], tc.nodes, tc.pods, pdbs=tc.pdbs,
                prefilter=["NodeResourcesFit", "test-plugin"])
    state = env.pre_filter(tc.pod)
    node, st = env.plugin.post_filter(state, tc.pod, tc.n2s)
    assert (st.code, st.reasons) == (tc.want_status.code, tc.want_status.reasons)
    assert node == tc.want_node


def test_post_filter_result_through_the_runtime() -> None:
    """The runtime hands on the plugin's node and names the plugin in the status."""
    tc = POST_FILTER[1]
    env = build(["NodeResourcesFit"], tc.nodes, tc.pods)
    node, st = env.fwk.run_post_filter(env.pre_filter(tc.pod), tc.pod, tc.n2s)
    assert (node, st.code, st.plugin) == ("", U, "DefaultPreemption")
    assert st.message() == tc.want_status.message()


# ================================================================ TestDryRunPreemption


@dataclass
class DR:
    name: str
    plugins: list[str]
    node_names: list[str]
    test_pods: list
    init_pods: list
    expected: list[dict[str, tuple[list[str], int]]]  # per cycle: node → (victims, #PDB)
    filter_calls: list[int]
    fake_rc: Code = Code.SUCCESS
    pdbs: list = field(default_factory=list)
    args: dict | None = None
    offsets: tuple[int, ...] = (0,)


FIT = ["FakeFilter", "NodeResourcesFit"]
APP_FOO = {"app": "foo"}


def _foo(name, **kw):
    return make_pod(name, labels={"foo": ""}, **kw)


def _five(prios, labels=None):
    labels = labels or [None] * 5
    return [make_pod(f"p{i}", node=f"node{i}", priority=prios[i - 1], req=LARGE,
                     labels=labels[i - 1]) for i in range(1, 6)]


NODES5 = [f"node{i}" for i in range(1, 6)]
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}

DRY_RUN = [
    DR("a pod that does not fit on any node", ["FakeFilter", "FalseFilter"],
       ["node1", "node2"], [make_pod("p", priority=HIGH)],
       [make_pod("p1", node="node1", priority=MID), make_pod("p2", node="node2", priority=MID)],
       [{}], [2]),
    DR("a pod that fits with no preemption", ["FakeFilter", "TrueFilter"],
       ["node1", "node2"], [make_pod("p", priority=HIGH)],
       [make_pod("p1", node="node1", priority=MID), make_pod("p2", node="node2", priority=MID)],
       [{}], [2], fake_rc=U),
    DR("a pod that fits on one node with no preemption", ["FakeFilter", "MatchFilter"],
       ["node1", "node2"], [make_pod("node1", priority=HIGH)],
       [make_pod("p1", node="node1", priority=MID), make_pod("p2", node="node2", priority=MID)],
       [{}], [2], fake_rc=U),
    DR("a pod that fits on both nodes when lower priority pods are preempted", FIT,
       ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
       [make_pod("p1", node="node1", priority=MID, req=LARGE),
        make_pod("p2", node="node2", priority=MID, req=LARGE)],
       [{"node1": (["p1"], 0), "node2": (["p2"], 0)}], [4]),
    DR("a pod that would fit on the nodes, but other pods running are higher priority, no "
       "preemption would happen", FIT,
       ["node1", "node2"], [make_pod("p", priority=LOW, req=LARGE)],
       [make_pod("p1", node="node1", priority=MID, req=LARGE),
        make_pod("p2", node="node2", priority=MID, req=LARGE)],
       [{}], [0]),
    DR("medium priority pod is preempted, but lower priority one stays as it is small", FIT,
       ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
       [make_pod("p1.1", node="node1", priority=LOW, req=SMALL),
        make_pod("p1.2", node="node1", priority=MID, req=LARGE),
        make_pod("p2", node="node2", priority=MID, req=LARGE)],
       [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}], [5]),
    DR("mixed priority pods are preempted", FIT,
       ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
       [make_pod("p1.1", node="node1", priority=MID, req=SMALL),
        make_pod("p1.2", node="node1", priority=LOW, req=SMALL),
        make_pod("p1.3", node="node1", priority=MID, req=MEDIUM),
        make_pod("p1.4", node="node1", priority=HIGH, req=SMALL),
        make_pod("p2", node="node2", priority=HIGH, req=LARGE)],
       [{"node1": (["p1.2", "p1.3"], 0)}], [4]),
    DR("mixed priority pods are preempted, pick later StartTime one when priorities are equal",
       FIT, ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
       [make_pod("p1.1", node="node1", priority=LOW, req=SMALL, start=5),
        make_pod("p1.2", node="node1", priority=LOW, req=SMALL, start=4),
        make_pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=3),
        make_pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=2),
        make_pod("p2", node="node2", priority=HIGH, req=LARGE, start=1)],
       [{"node1": (["p1.1", "p1.3"], 0)}], [4]),
    DR("pod with anti-affinity is preempted", [*FIT, "InterPodAffinity"],
       ["node1", "node2"], [_foo("p", priority=HIGH, req=SMALL)],
       [_foo("p1.1", node="node1", priority=LOW, req=SMALL,
             anti_affinity_exists=("foo", "hostname")),
        make_pod("p1.2", node="node1", priority=MID, req=SMALL),
        make_pod("p1.3", node="node1", priority=HIGH, req=SMALL),
        make_pod("p2", node="node2", priority=HIGH, req=SMALL)],
       [{"node1": (["p1.1"], 0)}], [3]),
    DR("preemption to resolve pod topology spread filter failure",
       ["FakeFilter", "PodTopologySpread"],
       ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
       [_foo("p", priority=HIGH, spread=[(1, "zone", "DoNotSchedule"),
                                         (1, "hostname", "DoNotSchedule")])],
       [_foo("pod-a1", node="node-a", priority=MID), _foo("pod-a2", node="node-a", priority=LOW),
        _foo("pod-b1", node="node-b", priority=LOW), _foo("pod-x1", node="node-x", priority=HIGH),
        _foo("pod-x2", node="node-x", priority=HIGH)],
       [{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}], [5]),
    DR("get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
       FIT, ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
       [make_pod("p1", node="node1", priority=MID, req=LARGE),
        make_pod("p2", node="node2", priority=MID, req=LARGE)],
       [{}], [2], fake_rc=U),
    DR("preemption with violation of same pdb", FIT, ["node1"],
       [make_pod("p", priority=HIGH, req=VERY_LARGE)],
       [make_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        make_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM)],
       [{"node1": (["p1.1", "p1.2"], 1)}], [3], pdbs=[make_pdb(APP_FOO, 1)]),
    DR("preemption with violation of the pdb with pod whose eviction was processed, the victim "
       "doesn't belong to DisruptedPods", FIT, ["node1"],
       [make_pod("p", priority=HIGH, req=VERY_LARGE)],
       [make_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        make_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM)],
       [{"node1": (["p1.1", "p1.2"], 1)}], [3], pdbs=[make_pdb(APP_FOO, 1, disrupted=("p2",))]),
    DR("preemption with violation of the pdb with pod whose eviction was processed, the victim "
       "belongs to DisruptedPods", FIT, ["node1"],
       [make_pod("p", priority=HIGH, req=VERY_LARGE)],
       [make_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        make_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM)],
       [{"node1": (["p1.1", "p1.2"], 0)}], [3],
       pdbs=[make_pdb(APP_FOO, 1, disrupted=("p1.2",))]),
    DR("preemption with violation of the pdb with pod whose eviction was processed, the victim "
       "which belongs to DisruptedPods is treated as 'nonViolating'", FIT, ["node1"],
       [make_pod("p", priority=HIGH, req=VERY_LARGE)],
       [make_pod(f"p1.{i}", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM)
        for i in (1, 2, 3)],
       [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}], [4],
       pdbs=[make_pdb(APP_FOO, 1, disrupted=("p1.3",))]),
    DR("all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", FIT, NODES5,
       [make_pod("p", priority=HIGH, req=LARGE)], _five([MID] * 5),
       [{"node1": (["p1"], 0), "node5": (["p5"], 0)}], [4], args=ARGS_40_1, offsets=(4,)),
    DR("some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", FIT, NODES5,
       [make_pod("p", priority=HIGH, req=LARGE)],
       _five([MID, VERY_HIGH, MID, MID, VERY_HIGH]),
       [{"node1": (["p1"], 0), "node3": (["p3"], 0)}], [4], args=ARGS_40_1, offsets=(4,)),
    DR("preemption offset across multiple scheduling cycles and wrap around", FIT, NODES5,
       [make_pod(f"tp{i}", priority=HIGH, req=LARGE) for i in (1, 2, 3)], _five([MID] * 5),
       [{"node1": (["p1"], 0), "node5": (["p5"], 0)},
        {"node2": (["p2"], 0), "node3": (["p3"], 0)},
        {"node4": (["p4"], 0), "node5": (["p5"], 0)}], [4, 4, 4],
       args=ARGS_40_1, offsets=(4, 1, 3)),
    DR("preemption looks past numCandidates until a non-PDB violating node is found", FIT,
       NODES5, [make_pod("p", priority=HIGH, req=LARGE)],
       _five([MID] * 5, [APP_FOO, APP_FOO, None, None, APP_FOO]),
       [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}], [8],
       pdbs=[make_pdb(APP_FOO, 0)],
       args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
       offsets=(4,)),
]


@pytest.mark.parametrize("tc", DRY_RUN, ids=[tc.name for tc in DRY_RUN])
def test_dry_run_preemption(tc: DR) -> None:
    nodes = [topo_node(n) for n in tc.node_names]
    env = build(tc.plugins, nodes, tc.init_pods, args=tc.args, fake_rc=tc.fake_rc)
    infos = sorted(env.snapshot.node_infos, key=lambda ni: ni.name)
    pdbs = pdb_views(tc.pdbs, lambda: [])
    ev = env.evaluator
    for cycle, pod in enumerate(tc.test_pods):
        state = env.pre_filter(pod)
        before = FakeFilter.calls
        offset = tc.offsets[cycle] if cycle < len(tc.offsets) else 0
        num = ev.calculate_num_candidates(len(infos))
        got, _, _ = ev.dry_run_preemption(state, pod, infos, pdbs, offset, num)
        assert {c.name: (sorted(p.name for p in c.victims.pods), c.victims.num_pdb_violations)
                for c in got} == tc.expected[cycle], f"cycle {cycle}"
        assert FakeFilter.calls - before == tc.filter_calls[cycle], f"cycle {cycle}"


def test_dry_run_offset_from_the_handle_rng() -> None:
    """The offset is drawn from the handle's seeded generator, in [0, #potential nodes)."""
    env = build(FIT, [make_node(n, VERY_LARGE) for n in NODES5], _five([MID] * 5),
                args=ARGS_40_1, seed=11)
    import random

    want = random.Random(11).randrange(5)
    assert env.evaluator.get_offset_and_num_candidates(5) == (want, 2)


@pytest.mark.parametrize(("n", "pct", "absolute", "want"), [
    (10, 10, 100, 10), (1000, 10, 100, 100), (5000, 10, 100, 500), (5, 40, 1, 2),
    (5, 40, 2, 2), (3, 0, 1, 1), (50, 100, 0, 50)])
def test_calculate_num_candidates(n: int, pct: int, absolute: int, want: int) -> None:
    env = build(FIT, [make_node("n", VERY_LARGE)], [],
                args={"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute})
    assert env.evaluator.calculate_num_candidates(n) == want


# ================================================================ TestSelectBestCandidate


def _sel(name, node, prio, req):
    return make_pod(name, node=node, priority=prio, req=req, start=0.0)


SELECT_BEST = [
    ("a pod that fits on both nodes when lower priority pods are preempted",
     ["node1", "node2"], make_pod("p", priority=HIGH, req=LARGE),
     [_sel("p1", "node1", MID, LARGE), _sel("p2", "node2", MID, LARGE)], {"node1", "node2"}),
    ("node with min highest priority pod is picked", ["node1", "node2", "node3"],
     make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_sel("p1.1", "node1", MID, MEDIUM), _sel("p1.2", "node1", MID, LARGE),
      _sel("p2.1", "node2", MID, MEDIUM), _sel("p2.2", "node2", LOW, MEDIUM),
      _sel("p3.1", "node3", LOW, MEDIUM), _sel("p3.2", "node3", LOW, MEDIUM)], {"node3"}),
    ("when highest priorities are the same, minimum sum of priorities is picked",
     ["node1", "node2", "node3"], make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_sel("p1.1", "node1", MID, MEDIUM), _sel("p1.2", "node1", MID, LARGE),
      _sel("p2.1", "node2", MID, LARGE), _sel("p2.2", "node2", LOW, MEDIUM),
      _sel("p3.1", "node3", MID, MEDIUM), _sel("p3.2", "node3", MID, MEDIUM)], {"node2"}),
    ("when highest priority and sum are the same, minimum number of pods is picked",
     ["node1", "node2", "node3"], make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_sel("p1.1", "node1", MID, SMALL), _sel("p1.2", "node1", NEG, SMALL),
      _sel("p1.3", "node1", MID, SMALL), _sel("p1.4", "node1", NEG, SMALL),
      _sel("p2.1", "node2", MID, LARGE), _sel("p2.2", "node2", NEG, MEDIUM),
      _sel("p3.1", "node3", MID, MEDIUM), _sel("p3.2", "node3", NEG, SMALL),
      _sel("p3.3", "node3", LOW, SMALL)], {"node2"}),
    ("sum of adjusted priorities is considered", ["node1", "node2", "node3"],
     make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_sel("p1.1", "node1", MID, SMALL), _sel("p1.2", "node1", NEG, SMALL),
      _sel("p1.3", "node1", NEG, SMALL), _sel("p2.1", "node2", MID, LARGE),
      _sel("p2.2", "node2", NEG, MEDIUM), _sel("p3.1", "node3", MID, MEDIUM),
      _sel("p3.2", "node3", NEG, SMALL), _sel("p3.3", "node3", LOW, SMALL)], {"node2"}),
    ("non-overlapping lowest high priority, sum priorities, and number of pods",
     ["node1", "node2", "node3", "node4"], make_pod("p", priority=VERY_HIGH, req=VERY_LARGE),
     [_sel("p1.1", "node1", MID, SMALL), _sel("p1.2", "node1", LOW, SMALL),
      _sel("p1.3", "node1", LOW, SMALL), _sel("p2.1", "node2", HIGH, LARGE),
      _sel("p3.1", "node3", MID, MEDIUM), _sel("p3.2", "node3", LOW, SMALL),
      _sel("p3.3", "node3", LOW, SMALL), _sel("p3.4", "node3", LOW, MEDIUM),
      _sel("p4.1", "node4", MID, MEDIUM), _sel("p4.2", "node4", MID, SMALL),
      _sel("p4.3", "node4", MID, SMALL), _sel("p4.4", "node4", NEG, SMALL)], {"node1"}),
]


def _timed(name, node, prio, start):
    return make_pod(name, node=node, priority=prio, req=MEDIUM, start=start)


SELECT_BEST += [
    ("same priority, same number of victims, different start time for each node's pod",
     ["node1", "node2", "node3"], make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_timed("p1.1", "node1", MID, 2), _timed("p1.2", "node1", MID, 2),
      _timed("p2.1", "node2", MID, 3), _timed("p2.2", "node2", MID, 3),
      _timed("p3.1", "node3", MID, 1), _timed("p3.2", "node3", MID, 1)], {"node2"}),
    ("same priority, same number of victims, different start time for all pods",
     ["node1", "node2", "node3"], make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_timed("p1.1", "node1", MID, 4), _timed("p1.2", "node1", MID, 2),
      _timed("p2.1", "node2", MID, 5), _timed("p2.2", "node2", MID, 1),
      _timed("p3.1", "node3", MID, 3), _timed("p3.2", "node3", MID, 6)], {"node3"}),
    ("different priority, same number of victims, different start time for all pods",
     ["node1", "node2", "node3"], make_pod("p", priority=HIGH, req=VERY_LARGE),
     [_timed("p1.1", "node1", LOW, 4), _timed("p1.2", "node1", MID, 2),
      _timed("p2.1", "node2", MID, 6), _timed("p2.2", "node2", LOW, 1),
      _timed("p3.1", "node3", LOW, 3), _timed("p3.2", "node3", MID, 5)], {"node2"}),
]


@pytest.mark.parametrize(("name", "node_names", "pod", "pods", "expected"), SELECT_BEST,
                         ids=[c[0] for c in SELECT_BEST])
def test_select_best_candidate(name, node_names, pod, pods, expected) -> None:
    for seed in range(4):  # any seed (offset, final tie) must give an expected node
        env = build(["NodeResourcesFit"], [make_node(n, VERY_LARGE) for n in node_names], pods,
                    seed=seed)
        ev = env.evaluator
        infos = env.snapshot.node_infos
        offset, num = ev.get_offset_and_num_candidates(len(infos))
        cands, _, _ = ev.dry_run_preemption(env.pre_filter(pod), pod, infos, [], offset, num)
        best = ev.select_candidate(cands)
        assert best is not None and best.name in expected


# ================================================================ TestPodEligibleToPreemptOthers


_DISRUPTED = [PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")]
ELIGIBLE = [
    ("Pod with nominated node",
     make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
     [make_pod("p1", priority=LOW, node="node1", terminating=True)], ["node1"],
     Status(UU, ("node(s) didn't match the requested node name",)), True),
    ("Pod without nominated node", make_pod("p_without_nominated_node", uid="p", priority=HIGH),
     [], [], None, True),
    ("Pod with 'PreemptNever' preemption policy",
     make_pod("p_with_preempt_never_policy", uid="p", priority=HIGH, policy="Never"),
     [], [], None, False),
    ("preemption victim pod terminating, as indicated by the dedicated DisruptionTarget "
     "condition",
     make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
     [make_pod("p1", priority=LOW, node="node1", terminating=True, conditions=_DISRUPTED)],
     ["node1"], None, False),
    ("non-victim Pods terminating",
     make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
     [make_pod("p1", priority=LOW, node="node1", terminating=True)], ["node1"], None, True),
]


@pytest.mark.parametrize(("name", "pod", "pods", "nodes", "nominated_status", "expected"),
                         ELIGIBLE, ids=[c[0] for c in ELIGIBLE])
def test_pod_eligible_to_preempt_others(name, pod, pods, nodes, nominated_status,
                                        expected) -> None:
    env = build([], [make_node(n) for n in nodes], pods)
    ok, msg = env.evaluator.pod_eligible_to_preempt_others(pod, nominated_status)
    assert ok is expected
    if name.startswith("Pod with 'PreemptNever'"):
        assert msg == "not eligible due to preemptionPolicy=Never."
    if name.startswith("preemption victim pod terminating"):
        assert msg == "not eligible due to a terminating pod on the nominated node."


def test_not_eligible_message_through_post_filter() -> None:
    pod = make_pod("p", priority=HIGH, policy="Never")
    env = build(["NodeResourcesFit"], [make_node("node1", ONE_POD)], [make_pod("p1", node="node1")])
    node, st = env.plugin.post_filter(env.pre_filter(pod), pod, statuses({"node1": U}))
    assert node is None
    assert (st.code, st.reasons) == (U, ("preemption: not eligible due to "
                                         "preemptionPolicy=Never.",))
    assert env.backend.deleted == []


# ================================================================ TestPreempt


PREEMPT = [
    ("basic preemption logic", ["NodeResourcesFit"],
     make_pod("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
     [make_pod("p1.1", node="node1", priority=LOW, req=SMALL),
      make_pod("p1.2", node="node1", priority=LOW, req=SMALL),
      make_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
      make_pod("p3.1", node="node3", priority=MID, req=MEDIUM)],
     ["node1", "node2", "node3"], "node1", ["p1.1", "p1.2"]),
    ("preemption for topology spread constraints", ["PodTopologySpread"],
     _foo("p", priority=HIGH, spread=[(1, "zone", "DoNotSchedule"),
                                      (1, "hostname", "DoNotSchedule")]),
     [_foo("p-a1", node="node-a", priority=HIGH), _foo("p-a2", node="node-a", priority=HIGH),
      _foo("p-b1", node="node-b", priority=LOW), _foo("p-x1", node="node-x", priority=HIGH),
      _foo("p-x2", node="node-x", priority=HIGH)],
     ["node-a/zone1", "node-b/zone1", "node-x/zone2"], "node-b", ["p-b1"]),
    ("no preempting in pod", ["NodeResourcesFit"],
     make_pod("p", priority=HIGH, req=VERY_LARGE, policy="Never"),
     [make_pod("p1.1", node="node1", priority=LOW, req=SMALL),
      make_pod("p1.2", node="node1", priority=LOW, req=SMALL),
      make_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
      make_pod("p3.1", node="node3", priority=MID, req=MEDIUM)],
     ["node1", "node2", "node3"], None, []),
    ("PreemptionPolicy is nil", ["NodeResourcesFit"],
     make_pod("p", priority=HIGH, req=VERY_LARGE),
     [make_pod("p1.1", node="node1", priority=LOW, req=SMALL),
      make_pod("p1.2", node="node1", priority=LOW, req=SMALL),
      make_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
      make_pod("p3.1", node="node3", priority=MID, req=MEDIUM)],
     ["node1", "node2", "node3"], "node1", ["p1.1", "p1.2"]),
]


@pytest.mark.parametrize(("name", "plugins", "pod", "pods", "node_names", "want", "victims"),
                         PREEMPT, ids=[c[0] for c in PREEMPT])
def test_preempt(name, plugins, pod, pods, node_names, want, victims) -> None:
    env = build(plugins, [topo_node(n) for n in node_names], pods)
    n2s = statuses({ni.name: U for ni in env.snapshot.node_infos})
    res = env.evaluator.preempt(env.pre_filter(pod), pod, n2s)
    assert res.status.is_success() or res.status.is_rejected()
    assert res.nominated == want
    assert sorted(env.backend.deleted) == victims
    # every victim got the DisruptionTarget condition before its deletion, and an event
    cond = [(n, c) for n, c, _ in env.backend.patched if c is not None]
    assert sorted(n for n, _ in cond) == victims
    for _, c in cond:
        assert (c.type, c.status, c.reason, c.message) == (
            "DisruptionTarget", "True", "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod")
    assert sorted(e[0] for e in env.backend.events if e[1] == "Preempted") == victims
    for name_, _reason, msg in env.backend.events:
        assert msg == f"Preempted by pod {pod.uid} on node {want}", name_

    # Call preempt again (victims terminating, the pod nominated): nothing more is preempted.
    for ni in env.snapshot.node_infos:
        for p in ni.pods:
            if p.name in victims:
                p.metadata.deletion_timestamp = 2.0
    if want:
        pod.status.nominated_node_name = want
    env.backend.deleted.clear()
    env.evaluator.preempt(env.pre_filter(pod), pod, NodeToStatus())
    assert env.backend.deleted == []


def test_preempt_skips_victims_already_terminating() -> None:
    """prepareCandidate sends no second deletion for a victim already being deleted."""
    pods = [make_pod("v1", node="node1", priority=LOW, req=LARGE, terminating=True),
            make_pod("v2", node="node1", priority=LOW, req=MEDIUM)]
    pod = make_pod("p", priority=HIGH, req=VERY_LARGE)
    env = build(["NodeResourcesFit"], [make_node("node1", VERY_LARGE)], pods)
    res = env.evaluator.preempt(env.pre_filter(pod), pod, statuses({"node1": U}))
    assert res.nominated == "node1"
    assert sorted(p.name for p in res.candidate.victims.pods) == ["v1", "v2"]
    assert env.backend.deleted == ["v2"]


def test_preempt_clears_lower_priority_nominations_on_the_node() -> None:
    low = make_pod("low", priority=LOW, nominated="node1")
    same = make_pod("same", priority=HIGH, nominated="node1")
    pod = make_pod("p", priority=HIGH, req=VERY_LARGE)
    env = build(["NodeResourcesFit"], [make_node("node1", VERY_LARGE)],
                [make_pod("v", node="node1", priority=LOW, req=SMALL)],
                nominated={"node1": [low, same]})
    res = env.evaluator.preempt(env.pre_filter(pod), pod, statuses({"node1": U}))
    assert res.nominated == "node1"
    assert [(n, nnn) for n, c, nnn in env.backend.patched if c is None] == [("low", "")]
