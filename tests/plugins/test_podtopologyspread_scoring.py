"""PodTopologySpread scoring, ported from upstream ``podtopologyspread/scoring_test.go``
(TestPreScoreSkip, TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore), plus the system
default constraints through Services / ReplicaSets / ReplicationControllers / StatefulSets.

Every score is computed in both forms (per-node ``score`` and ``score_batch``), which must
agree, then normalized.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_podtopologyspread import (
    BAR,
    DNS,
    EMPTY_SEL,
    FOO,
    HONOR,
    HOST,
    IGNORE,
    REASON,
    SA,
    UNSCHEDULABLE_TAINT,
    UU,
    ZONE,
    C,
    N,
    P,
    S,
    U,
    affinity_in,
    constraint_key,
    controller,
    labels_sel,
    make_node,
    make_pod,
    run_filters,
    sc,
    sel_key,
    service,
    setup,
)

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import NodeList
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    go_log,
    topology_normalizing_weight,
)


def node_list(snap: Snapshot, names: list[str]) -> NodeList:
    return NodeList([snap.get(n) for n in names],
                    np.array([snap.table.index[n] for n in names], dtype=np.int64))


def H(name: str, **labels: str):
    """A node with the well-known hostname label."""
    return make_node(name, **{HOST: name}, **labels)


def run_scores(pl: PodTopologySpread, snap: Snapshot, pod: Pod, names: list[str]
               ) -> dict[str, int] | None:
    """PreScore + Score (both forms, which must agree) + NormalizeScore; None on Skip."""
    nodes = node_list(snap, names)
    cs = CycleState()
    st = pl.pre_score(cs, pod, nodes)
    if st is not None and st.code == Code.SKIP:
        return None
    assert st is None, st
    per_node = np.array([pl.score(cs, pod, ni) for ni in nodes], dtype=np.int64)
    norm_per_node = pl.normalize_score(cs, pod, per_node.copy())
    batch = pl.score_batch(cs, pod, snap, nodes.idx)
    assert batch.dtype == np.int64
    assert batch.tolist() == per_node.tolist()
    norm = pl.normalize_score(cs, pod, batch)
    assert norm.tolist() == norm_per_node.tolist()
    return dict(zip(names, norm.tolist(), strict=True))


# ---------------------------------------------------------------- TestPreScoreSkip


def test_pre_score_skip_without_soft_constraints() -> None:
    pl, snap = setup([H("node-a"), H("node-b")], [])
    assert run_scores(pl, snap, make_pod("p"), ["node-a", "node-b"]) is None


def test_pre_score_skip_default_constraints_and_a_replicaset_that_doesnt_match() -> None:
    pod = make_pod("p", labels={"foo": "bar", "baz": "sup"}, owner=("ReplicaSet", "rs2"))
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]}
    pl, snap = setup([make_node("node-a", planet="mars")], [], args=args,
                     objs=[controller("ReplicaSet", "rs1", {"matchExpressions": [
                         {"key": "tar", "operator": "Exists"}]})])
    assert run_scores(pl, snap, pod, ["node-a"]) is None


def test_pre_score_skip_without_nodes() -> None:
    pl, _ = setup([], [])
    pod = make_pod("p", labels={"foo": ""}, constraints=(sc(1, HOST, SA, FOO),))
    assert pl.pre_score(CycleState(), pod, NodeList([], np.zeros(0, np.int64))).code == Code.SKIP


# ---------------------------------------------------------------- TestPreScoreStateEmptyNodes

W = topology_normalizing_weight

PRE_SCORE_CASES = [
    dict(
        name="normal case",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", SA, FOO), sc(1, HOST, SA, FOO))),
        nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")],
        constraints=[C(1, "zone", FOO), C(1, HOST, FOO)],
        ignored=set(), counts=[{"zone1": 0, "zone2": 0}, {}], weights=[W(2), W(3)],
    ),
    dict(
        name="null selector",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", SA, None),)),
        nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")],
        constraints=[C(1, "zone", None)],
        ignored=set(), counts=[{"zone1": 0, "zone2": 0}], weights=[W(2)],
    ),
    dict(
        name="node-x doesn't have label zone",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR))),
        nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x")],
        constraints=[C(1, "zone", FOO), C(1, HOST, BAR)],
        ignored={"node-x"}, counts=[{"zone1": 0}, {}], weights=[W(1), W(2)],
    ),
    dict(
        name="system default constraints and a replicaset",
        pod=make_pod("p", labels={"foo": "tar", "baz": "sup"}, owner=("ReplicaSet", "rs1")),
        args={"defaultingType": "System"},
        objs=[controller("ReplicaSet", "rs1", {"matchExpressions": [
            {"key": "foo", "operator": "Exists"}]})],
        # Nodes with no zone are not excluded. They are considered a separate zone.
        nodes=[H("node-a", **{ZONE: "mars"}), H("node-b", **{ZONE: "mars"}), H("node-c"),
               H("node-d")],
        constraints=[C(3, HOST, FOO), C(5, ZONE, FOO)],
        ignored=set(), counts=[{}, {"mars": 0, "": 0}], weights=[W(4), W(2)],
    ),
    dict(
        name="default constraints and a replicaset",
        pod=make_pod("p", labels={"foo": "tar", "baz": "sup"}, owner=("ReplicaSet", "rs1")),
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]},
        objs=[controller("ReplicaSet", "rs1", {"matchExpressions": [
            {"key": "foo", "operator": "Exists"}]})],
        nodes=[H("node-a", rack="rack1", planet="mars")],
        constraints=[C(1, HOST, FOO), C(2, "planet", FOO)],
        ignored=set(), counts=[{}, {"mars": 0}], weights=[W(1), W(1)],
    ),
    dict(
        name="default constraints and a replicaset, but pod has constraints",
        pod=make_pod("p", labels={"foo": "bar", "baz": "sup"}, owner=("ReplicaSet", "rs1"),
                     constraints=(sc(1, "zone", DNS, BAR),
                                  sc(2, "planet", SA, labels_sel(baz="sup")))),
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}]},
        objs=[controller("ReplicaSet", "rs1", {"matchExpressions": [
            {"key": "foo", "operator": "Exists"}]})],
        nodes=[make_node("node-a", planet="mars", galaxy="andromeda")],
        constraints=[C(2, "planet", labels_sel(baz="sup"))],
        ignored=set(), counts=[{"mars": 0}], weights=[W(1)],
    ),
]

_PS_NODES = [H("node-a", zone="zone1", foo=""), H("node-b", zone="zone1", foo=""),
             H("node-x", zone="zone2")]
_PS_NODES_T = [H("node-a", zone="zone1", foo=""), H("node-b", zone="zone1", foo=""),
               make_node("node-x", taints=UNSCHEDULABLE_TAINT, zone="zone2",
                         **{HOST: "node-x"})]
for _name, _pod, _nodes, _c in [
    ("NodeAffinityPolicy honored with labelSelectors",
     make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
              constraints=(sc(1, "zone", SA, BAR),)), _PS_NODES, C(1, "zone", BAR)),
    ("NodeAffinityPolicy ignored with labelSelectors",
     make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
              constraints=(sc(1, "zone", SA, BAR, naf=IGNORE),)), _PS_NODES,
     C(1, "zone", BAR, naf=IGNORE)),
    ("NodeAffinityPolicy honored with nodeAffinity",
     make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
              constraints=(sc(1, "zone", SA, BAR),)), _PS_NODES, C(1, "zone", BAR)),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
              constraints=(sc(1, "zone", SA, BAR, naf=IGNORE),)), _PS_NODES,
     C(1, "zone", BAR, naf=IGNORE)),
    ("NodeTaintsPolicy honored",
     make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", SA, BAR, ntp=HONOR),)),
     _PS_NODES_T, C(1, "zone", BAR, ntp=HONOR)),
    ("NodeTaintsPolicy ignored",
     make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", SA, BAR),)),
     _PS_NODES_T, C(1, "zone", BAR)),
]:
    PRE_SCORE_CASES.append(dict(name=_name, pod=_pod, nodes=list(_nodes), constraints=[_c],
                                ignored=set(), counts=[{"zone1": 0, "zone2": 0}],
                                weights=[W(2)]))


@pytest.mark.parametrize("case", PRE_SCORE_CASES, ids=[c["name"] for c in PRE_SCORE_CASES])
def test_pre_score_state_empty_nodes(case: dict) -> None:
    pl, snap = setup(case["nodes"], [], objs=case.get("objs", []),
                     args=case.get("args", {"defaultingType": "List"}))
    cs = CycleState()
    names = [n.name for n in case["nodes"]]
    assert pl.pre_score(cs, case["pod"], node_list(snap, names)) is None
    s = cs.read(PRE_SCORE_STATE_KEY)
    assert [constraint_key(c) for c in s.constraints] == case["constraints"]
    assert s.ignored_nodes == case["ignored"]
    assert s.topology_value_to_pod_counts == case["counts"]
    assert s.topology_normalizing_weight == case["weights"]


def test_topology_normalizing_weight_is_gos_log() -> None:
    """ln(size+2), bit-identical to Go's math.Log (within an ulp of libm's)."""
    assert W(2) == go_log(4.0)
    for size in range(0, 6000):
        x = float(size + 2)
        assert go_log(x) == pytest.approx(math.log(x), rel=3e-16, abs=0)
    assert go_log(1.0) == 0.0
    assert go_log(2.0) == math.log(2.0)


# ---------------------------------------------------------------- TestPodTopologySpreadScore

_FOO1H = (sc(1, HOST, SA, FOO),)


def _pods(spec: dict[str, int], **labels: str) -> list[Pod]:
    """``{"node-a": 2}`` -> pods p-a1, p-a2 on node-a with ``labels``."""
    return [P(f"p-{n[-1]}{i + 1}", n, **labels) for n, k in spec.items() for i in range(k)]


_ABCD = ["node-a", "node-b", "node-c", "node-d"]

SCORE_CASES = [
    dict(name="one constraint on node, no existing pods",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a"), H("node-b")], pods=[],
         want={"node-a": 100, "node-b": 100}),
    dict(name="one constraint on node, only one node is candidate",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a")], failed=[H("node-b")],
         pods=_pods({"node-a": 2, "node-b": 1}, foo=""),
         want={"node-a": 100}),
    dict(name="one constraint on node, all nodes have the same number of matching pods",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a"), H("node-b")], pods=_pods({"node-a": 1, "node-b": 1}, foo=""),
         want={"node-a": 100, "node-b": 100}),
    dict(name="one constraint on node, all 4 nodes are candidates",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H(n) for n in _ABCD], pods=_pods({"node-a": 2, "node-b": 1, "node-d": 3}, foo=""),
         want={"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    dict(name="one constraint on node, null selector",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, HOST, SA, None),)),
         nodes=[H(n) for n in _ABCD], pods=_pods({"node-a": 2, "node-b": 1, "node-d": 3}, foo=""),
         want={"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    dict(name="one constraint on node, all 4 nodes are candidates, maxSkew=2",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(2, HOST, SA, FOO),)),
         nodes=[H(n) for n in _ABCD], pods=_pods({"node-a": 2, "node-b": 1, "node-d": 3}, foo=""),
         want={"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    dict(name="one constraint on node, all 4 nodes are candidates, maxSkew=3",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(3, HOST, SA, FOO),)),
         nodes=[H(n) for n in _ABCD],
         pods=_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}, foo=""),
         want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    dict(name="system defaulting, nodes don't have zone, pods match service",
         pod=make_pod("p", labels={"foo": ""}),
         nodes=[H(n) for n in _ABCD],
         pods=_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}, foo=""),
         objs=[service("svc", {"foo": ""})],
         want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    dict(name="one constraint on node, 3 out of 4 nodes are candidates",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a"), H("node-b"), H("node-x")], failed=[H("node-y")],
         pods=_pods({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}, foo=""),
         want={"node-a": 33, "node-b": 83, "node-x": 100}),
    dict(name="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match "
              "topology key",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a"), make_node("node-b", n="node-b"), H("node-x")],
         failed=[H("node-y")],
         pods=_pods({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}, foo=""),
         want={"node-a": 16, "node-b": 0, "node-x": 100}),
    dict(name="one constraint on zone, 3 out of 4 nodes are candidates",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", SA, FOO),)),
         nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")],
         failed=[H("node-y", zone="zone2")],
         pods=_pods({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}, foo=""),
         want={"node-a": 75, "node-b": 75, "node-x": 100}),
    dict(name="two Constraints on zone and node, 2 out of 4 nodes are candidates",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(1, "zone", SA, FOO), sc(1, HOST, SA, FOO))),
         nodes=[H("node-a", zone="zone1"), H("node-x", zone="zone2")],
         failed=[H("node-b", zone="zone1"), H("node-y", zone="zone2")],
         pods=_pods({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}, foo=""),
         want={"node-a": 100, "node-x": 63}),
    dict(name="two Constraints on zone and node, with different labelSelectors",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
             sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR))),
         nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"),
                H("node-x", zone="zone2"), H("node-y", zone="zone2")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo="", bar=""),
               P("p-y1", "node-y", foo=""), P("p-y2", "node-y", bar="")],
         want={"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    dict(name="two Constraints on zone and node, with different labelSelectors, some nodes "
              "have 0 pods",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
             sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR))),
         nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"),
                H("node-x", zone="zone2"), H("node-y", zone="zone2")],
         pods=[P("p-b1", "node-b", bar=""), P("p-x1", "node-x", foo=""),
               P("p-y1", "node-y", foo="", bar="")],
         want={"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    dict(name="two Constraints on zone and node, with different labelSelectors, 3 out of 4 "
              "nodes are candidates",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
             sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR))),
         nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")],
         failed=[H("node-y", zone="zone2")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo="", bar=""),
               P("p-y1", "node-y", foo=""), P("p-y2", "node-y", bar="")],
         want={"node-a": 50, "node-b": 25, "node-x": 100}),
    dict(name="existing pods in a different namespace do not count",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a"), H("node-b")],
         pods=[P("p-a1", "node-a", ns="ns1", foo=""), P("p-a2", "node-a", foo=""),
               P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo="")],
         want={"node-a": 100, "node-b": 33}),
    dict(name="terminating Pods should be excluded",
         pod=make_pod("p", labels={"foo": ""}, constraints=_FOO1H),
         nodes=[H("node-a"), H("node-b")],
         pods=[P("p-a", "node-a", terminating=True, foo=""), P("p-b", "node-b", foo="")],
         want={"node-a": 100, "node-b": 0}),
    dict(name="minDomains has no effect when ScheduleAnyway",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(2, "node", SA, FOO, min_domains=10),)),
         nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
                N("node-c", node="node-c")],
         pods=_pods({"node-a": 2, "node-b": 2, "node-c": 1}, foo=""),
         want={"node-a": 75, "node-b": 75, "node-c": 100}),
]

_SC_POL_NODES = [N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),
                 N("node-c", node="node-c")]
_SC_POL_NODES_T = [N("node-a", node="node-a"), N("node-b", node="node-b"),
                   N("node-c", node="node-c", taints=UNSCHEDULABLE_TAINT)]
_SC_POL_PODS = _pods({"node-a": 2, "node-b": 1, "node-c": 1}, foo="")
SCORE_CASES += [
    dict(name="NodeAffinityPolicy honoed with labelSelectors",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                      constraints=(sc(1, "node", SA, FOO),)),
         nodes=list(_SC_POL_NODES), pods=list(_SC_POL_PODS),
         want={"node-a": 0, "node-b": 33, "node-c": 100}),
    dict(name="NodeAffinityPolicy ignored with labelSelectors",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                      constraints=(sc(1, "node", SA, FOO, naf=IGNORE),)),
         nodes=list(_SC_POL_NODES), pods=list(_SC_POL_PODS),
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    dict(name="NodeAffinityPolicy honoed with nodeAffinity",
         pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
                      constraints=(sc(1, "node", SA, FOO),)),
         nodes=list(_SC_POL_NODES), pods=list(_SC_POL_PODS),
         want={"node-a": 0, "node-b": 33, "node-c": 100}),
    dict(name="NodeAffinityPolicy ignored with nodeAffinity",
         pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
                      constraints=(sc(1, "node", SA, FOO, naf=IGNORE),)),
         nodes=list(_SC_POL_NODES), pods=list(_SC_POL_PODS),
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    dict(name="NodeTaintsPolicy honored",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", SA, FOO, ntp=HONOR),)),
         nodes=list(_SC_POL_NODES_T), pods=list(_SC_POL_PODS),
         want={"node-a": 0, "node-b": 33, "node-c": 100}),
    dict(name="NodeTaintsPolicy ignored",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", SA, FOO),)),
         nodes=list(_SC_POL_NODES_T), pods=list(_SC_POL_PODS),
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    dict(name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
             sc(1, "zone", SA, EMPTY_SEL, mlk=("foo",)), sc(1, HOST, SA, EMPTY_SEL, mlk=("bar",)))),
         nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"),
                H("node-c", zone="zone2"), H("node-d", zone="zone2")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo="", bar=""),
               P("p-y1", "node-c", foo=""), P("p-y2", "node-c", bar="")],
         want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    dict(name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
         pod=make_pod("p", labels={"foo": "", "bar": "", "baz": ""}, constraints=(
             sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR, mlk=("baz",)))),
         nodes=[H("node-a", zone="zone1"), H("node-b", zone="zone1"),
                H("node-c", zone="zone2"), H("node-d", zone="zone2")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo="", bar="", baz=""),
               P("p-c1", "node-c", foo=""), P("p-c2", "node-c", bar=""),
               P("p-d3", "node-c", bar="", baz="")],
         want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=[c["name"] for c in SCORE_CASES])
def test_pod_topology_spread_score(case: dict) -> None:
    all_nodes = [*case["nodes"], *case.get("failed", [])]
    pl, snap = setup(all_nodes, case["pods"], objs=case.get("objs", []),
                     args={"defaultingType": "System"})
    got = run_scores(pl, snap, case["pod"], [n.name for n in case["nodes"]])
    assert got == case["want"]


# ---------------------------------------------------------------- system default constraints


def _zoned_cluster() -> list:
    return [H("n1", **{ZONE: "z1"}), H("n2", **{ZONE: "z1"}), H("n3", **{ZONE: "z2"}),
            H("n4")]


def test_system_defaults_via_service_selecting_the_pod() -> None:
    """A pod without constraints, selected by a Service: hostname (maxSkew 3) and zone
    (maxSkew 5) spreading over the Service's pods; the zone-less node n4 still gets hostname
    spreading, and its pods count in the "" zone."""
    web = {"app": "web"}
    pods = [P("w1", "n1", app="web"), P("w2", "n1", app="web"), P("w3", "n2", app="web"),
            P("w4", "n4", app="web"), P("o1", "n3", app="other"),
            P("w5", "n3", ns="other-ns", app="web")]
    pod = make_pod("p", labels={"app": "web", "pod-template-hash": "x"})
    pl, snap = setup(_zoned_cluster(), pods, objs=[service("web", web)],
                     args={"defaultingType": "System"})
    cs = CycleState()
    nodes = node_list(snap, ["n1", "n2", "n3", "n4"])
    assert pl.pre_score(cs, pod, nodes) is None
    s = cs.read(PRE_SCORE_STATE_KEY)
    assert [constraint_key(c) for c in s.constraints] == [
        C(3, HOST, labels_sel(app="web")), C(5, ZONE, labels_sel(app="web"))]
    assert s.ignored_nodes == set()
    assert s.topology_value_to_pod_counts == [{}, {"z1": 3, "z2": 0, "": 1}]
    # raw: n1 = 2·ln6 + 2 + 3·ln5 + 4 = 14.4; n2 = ln6 + 2 + 3·ln5 + 4 = 12.6; n3 = 2 + 4;
    # n4 (no zone label: no zone term) = ln6 + 2 = 3.8
    w_host, w_zone = W(4), W(3)
    raw = [round(2 * w_host + 2 + 3 * w_zone + 4), round(w_host + 2 + 3 * w_zone + 4), 6,
           round(w_host + 2)]
    got = run_scores(pl, snap, pod, ["n1", "n2", "n3", "n4"])
    mx, mn = max(raw), min(raw)
    assert got == {n: 100 * (mx + mn - r) // mx for n, r in zip(
        ["n1", "n2", "n3", "n4"], raw, strict=True)}
    assert got == {"n1": 28, "n2": 35, "n3": 85, "n4": 100}
    # No hard constraints: PreFilter skips.
    _, st = pl.pre_filter(CycleState(), pod, snap)
    assert st is not None and st.code == Code.SKIP


def test_system_defaults_need_a_selecting_object() -> None:
    pod = make_pod("p", labels={"app": "web"})
    pl, snap = setup(_zoned_cluster(), [], objs=[
        service("db", {"app": "db"}), service("web-other-ns", {"app": "web"}, ns="x"),
        service("no-selector", None)], args={"defaultingType": "System"})
    assert run_scores(pl, snap, pod, ["n1", "n2"]) is None
    # A pod with constraints of its own never gets the defaults.
    pod2 = make_pod("p2", labels={"app": "web"}, constraints=(sc(1, "zone", DNS, FOO),))
    pl2, snap2 = setup(_zoned_cluster(), [], objs=[service("web", {"app": "web"})],
                       args={"defaultingType": "System"})
    assert run_scores(pl2, snap2, pod2, ["n1"]) is None


def test_default_selector_merges_services_and_controllers() -> None:
    rs = controller("ReplicaSet", "rs", {"matchLabels": {"app": "web"},
                                         "matchExpressions": [{"key": "tier",
                                                               "operator": "In",
                                                               "values": ["a", "b"]}]})
    rc = controller("ReplicationController", "rc", {"app": "web", "rc": "1"})
    ss = controller("StatefulSet", "ss", {"matchLabels": {"app": "web", "ss": "y"}})
    objs = [service("s1", {"app": "web"}), service("s2", {"tier": "a"}), rs, rc, ss]
    pl, _ = setup([], [], objs=objs, args={"defaultingType": "System"})
    labels = {"app": "web", "tier": "a", "rc": "1", "ss": "y"}
    assert sel_key(pl.default_selector(make_pod("p", labels=labels))) == [
        ("app", "In", ("web",)), ("tier", "In", ("a",))]
    got = sel_key(pl.default_selector(make_pod("p", labels=labels, owner=("ReplicaSet", "rs"))))
    assert got == sorted([("app", "In", ("web",)), ("tier", "In", ("a",)),
                          ("app", "In", ("web",)), ("tier", "In", ("a", "b"))])
    got = sel_key(pl.default_selector(make_pod(
        "p", labels=labels, owner=("ReplicationController", "rc"))))
    assert got == [("app", "In", ("web",)), ("rc", "In", ("1",)), ("tier", "In", ("a",))]
    got = sel_key(pl.default_selector(make_pod("p", labels=labels, owner=("StatefulSet", "ss"))))
    assert got == sorted([("app", "In", ("web",)), ("tier", "In", ("a",)),
                          ("app", "In", ("web",)), ("ss", "In", ("y",))])
    # Unknown owner kind, missing owner object: services only.
    for owner in [("Job", "rs"), ("ReplicaSet", "nope")]:
        got = sel_key(pl.default_selector(make_pod("p", labels=labels, owner=owner)))
        assert got == [("app", "In", ("web",)), ("tier", "In", ("a",))]


def test_system_defaults_via_replicaset_owner_only() -> None:
    """No Service: the owning ReplicaSet's selector alone drives the default spreading."""
    rs = controller("ReplicaSet", "rs", {"matchLabels": {"app": "web"}})
    pods = [P("w1", "n1", app="web"), P("w2", "n1", app="web"), P("w3", "n3", app="web")]
    pod = make_pod("p", labels={"app": "web"}, owner=("ReplicaSet", "rs"))
    pl, snap = setup(_zoned_cluster(), pods, objs=[rs], args={"defaultingType": "System"})
    got = run_scores(pl, snap, pod, ["n1", "n2", "n3", "n4"])
    # raw: n1 = 2·ln6 + 2 + 2·ln5 + 4 = 12.8; n2 = 2 + 2·ln5 + 4 = 9.2; n3 = ln6 + 2 + ln5 + 4
    # = 9.4; n4 (no zone label) = 2  ->  100·(13 + 2 − raw) / 13
    assert got == {"n1": 15, "n2": 46, "n3": 46, "n4": 100}


def test_list_defaulting_hard_default_constraint_filters() -> None:
    """List defaulting with a DoNotSchedule default constraint makes PreFilter/Filter act."""
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS}]}
    pods = [P("w1", "n1", app="web"), P("w2", "n2", app="web")]
    pod = make_pod("p", labels={"app": "web"})
    pl, snap = setup(_zoned_cluster(), pods, objs=[service("web", {"app": "web"})], args=args)
    got = run_filters(pl, snap, pod)
    assert got == {"n1": (U, REASON[U]), "n2": (U, REASON[U]), "n3": (S, ()),
                   "n4": (UU, REASON[UU])}


# ---------------------------------------------------------------- NormalizeScore


def test_normalize_edge_cases() -> None:
    from kubesched.plugins.podtopologyspread.scoring import normalize
    ign = np.array([False, True, False])
    assert normalize(np.array([0, 7, 0]), ign).tolist() == [100, 0, 100]
    assert normalize(np.array([5, 3, 2]), ign).tolist() == [40, 0, 100]
    assert normalize(np.array([5, 3, 2]), np.ones(3, bool)).tolist() == [0, 0, 0]
    assert normalize(np.zeros(0, np.int64), np.zeros(0, bool)).tolist() == []


def test_score_without_pre_score_is_an_error() -> None:
    from kubesched.framework.interface import PluginError
    pl, snap = setup([H("a")], [])
    with pytest.raises(PluginError, match='reading "PreScorePodTopologySpread"'):
        pl.score(CycleState(), make_pod("p"), snap.node_infos[0])


def test_rounding_is_half_away_from_zero() -> None:
    """maxSkew 1, a single node with matching pods on 2 feasible hostnames: raw =
    round(cnt·ln(4)); cnt = 5 gives 6.93 -> 7, cnt = 3 gives 4.16 -> 4 (upstream math.Round)."""
    pod = make_pod("p", labels={"foo": ""}, constraints=_FOO1H)
    pl, snap = setup([H("a"), H("b")], _pods({"a": 5, "b": 3}, foo=""),
                     args={"defaultingType": "System"})
    cs = CycleState()
    pl.pre_score(cs, pod, node_list(snap, ["a", "b"]))
    assert [pl.score(cs, pod, snap.get(n)) for n in ("a", "b")] == [7, 4]
