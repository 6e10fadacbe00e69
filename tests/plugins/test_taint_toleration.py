"""TaintToleration, ported from upstream taint_toleration_test.go (v1.35):
TestTaintTolerationScore (cases without the alpha comparison operators),
TestTaintTolerationFilter (likewise), and the queueing hints."""

from __future__ import annotations

import pytest
from _plugtest_util import make_node, make_pod, run_filter, run_scores, snapshot

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.interface import PluginError
from kubesched.framework.status import Code
from kubesched.plugins.tainttoleration import TaintToleration


def taint(key, value="", effect="NoSchedule"):
    return {"key": key, "value": value, "effect": effect}


def tol(key="", value="", effect="", operator=None):
    d = {"key": key, "value": value, "effect": effect}
    if operator:
        d["operator"] = operator
    return d


def node_with_taints(name, taints):
    return make_node(name, taints=taints)


def pod_with_tolerations(tolerations):
    return make_pod("pod1", tolerations=tolerations)


PNS = "PreferNoSchedule"
SCORE = [
    ("node with taints tolerated by the pod, gets a higher score than those node with "
     "intolerable taints", [tol("foo", "bar", PNS, "Equal")],
     [[taint("foo", "bar", PNS)], [taint("foo", "blah", PNS)]], [100, 0]),
    ("the nodes that all of their taints are tolerated by the pod, get the same score, no "
     "matter how many tolerable taints a node has",
     [tol("cpu-type", "arm64", PNS, "Equal"), tol("disk-type", "ssd", PNS, "Equal")],
     [[], [taint("cpu-type", "arm64", PNS)],
      [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)]], [100, 100, 100]),
    ("the more intolerable taints a node has, the lower score it gets.",
     [tol("foo", "bar", PNS, "Equal")],
     [[], [taint("cpu-type", "arm64", PNS)],
      [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)]], [100, 50, 0]),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by "
     "taints-tolerations priority function",
     [tol("cpu-type", "arm64", "NoSchedule", "Equal"),
      tol("disk-type", "ssd", "NoSchedule", "Equal")],
     [[], [taint("cpu-type", "arm64", "NoSchedule")],
      [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)]], [100, 100, 0]),
    ("Default behaviour No taints and tolerations, lands on node with no taints", [],
     [[], [taint("cpu-type", "arm64", PNS)]], [100, 0]),
]


@pytest.mark.parametrize("case", SCORE, ids=[c[0] for c in SCORE])
def test_taint_toleration_score(case) -> None:
    _name, tolerations, node_taints, want = case
    nodes = [node_with_taints(f"node{chr(65 + i)}", t) for i, t in enumerate(node_taints)]
    got = run_scores(TaintToleration(None, Handle()), pod_with_tolerations(tolerations),
                     snapshot(nodes))
    assert got == want


def test_score_without_pre_score_is_an_error() -> None:
    snap = snapshot([node_with_taints("nodeA", [])])
    with pytest.raises(PluginError):
        TaintToleration(None, Handle()).score(CycleState(), make_pod(), snap.node_infos[0])


REASON = "node(s) had untolerated taint(s)"
FILTER = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints", [],
     [taint("dedicated", "user1")], False),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect "
     "NoSchedule", [tol("dedicated", "user1", "NoSchedule")], [taint("dedicated", "user1")],
     True),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
     "NoSchedule", [tol("dedicated", "user2", "NoSchedule", "Equal")],
     [taint("dedicated", "user1")], False),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that "
     "tolerates the taints on the node", [tol("foo", effect="NoSchedule", operator="Exists")],
     [taint("foo", "bar")], True),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
     [tol("dedicated", "user2", "NoSchedule", "Equal"),
      tol("foo", effect="NoSchedule", operator="Exists")],
     [taint("dedicated", "user2"), taint("foo", "bar")], True),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
     "effect doesn't match", [tol("foo", "bar", PNS, "Equal")], [taint("foo", "bar")], False),
    ("The pod has a toleration that keys and values match the taint on the node, the effect "
     "of toleration is empty", [tol("foo", "bar", operator="Equal")], [taint("foo", "bar")],
     True),
    ("The pod has a toleration that key and value don't match the taint on the node, but the "
     "effect of taint on node is PreferNoSchedule",
     [tol("dedicated", "user2", "NoSchedule", "Equal")], [taint("dedicated", "user1", PNS)],
     True),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule", [],
     [taint("dedicated", "user1", PNS)], True),
    ("NoExecute taints are checked too", [tol("a", "1", "NoSchedule")],
     [taint("a", "1", "NoExecute")], False),
    ("Exists with an empty key tolerates everything", [tol(operator="Exists")],
     [taint("a", "1", "NoExecute"), taint("b", "", "NoSchedule")], True),
]


@pytest.mark.parametrize("case", FILTER, ids=[c[0] for c in FILTER])
def test_taint_toleration_filter(case) -> None:
    _name, tolerations, node_taints, fits = case
    (st,) = run_filter(TaintToleration(None, Handle()), pod_with_tolerations(tolerations),
                       snapshot([node_with_taints("nodeA", node_taints)]))
    if fits:
        assert st.code == Code.SUCCESS
    else:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == (REASON,)


def test_legacy_reason_names_the_first_untolerated_taint(monkeypatch) -> None:
    monkeypatch.setattr(TaintToleration, "legacy_reason", True)
    nodes = [node_with_taints("a", [taint("x", "1", PNS), taint("dedicated", "gpu"),
                                    taint("other", "2")]),
             node_with_taints("b", [taint("team", "")]),
             node_with_taints("c", [])]
    sts = run_filter(TaintToleration(None, Handle()), make_pod(), snapshot(nodes))
    assert [s.reasons for s in sts] == [("node(s) had untolerated taint {dedicated: gpu}",),
                                        ("node(s) had untolerated taint {team: }",), ()]


def test_events_to_register() -> None:
    evs = TaintToleration(None, Handle()).events_to_register()
    assert [(e.event.resource, e.event.action) for e in evs] == [
        (Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (Resource.POD, ActionType.UPDATE_POD_TOLERATION),
    ]


def test_queueing_hints() -> None:
    pod = make_pod("p", uid="p", tolerations=[tol("a", "1", "NoSchedule")])
    tainted = node_with_taints("n", [taint("b", "2")])
    tolerated = node_with_taints("n", [taint("a", "1")])
    hint = TaintToleration.is_schedulable_after_node_change
    assert hint(pod, None, tolerated) == QueueingHint.QUEUE
    assert hint(pod, None, tainted) == QueueingHint.SKIP
    assert hint(pod, tainted, tolerated) == QueueingHint.QUEUE
    assert hint(pod, tolerated, tolerated) == QueueingHint.SKIP
    assert hint(pod, tolerated, tainted) == QueueingHint.SKIP
    phint = TaintToleration.is_schedulable_after_pod_toleration_change
    assert phint(pod, pod, make_pod("p", uid="p")) == QueueingHint.QUEUE
    assert phint(pod, pod, make_pod("q", uid="q")) == QueueingHint.SKIP
