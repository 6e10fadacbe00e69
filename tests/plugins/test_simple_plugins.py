"""NodeUnschedulable (upstream TestNodeUnschedulable), NodeName (TestNodeName),
SchedulingGates, PrioritySort, DefaultBinder and the registry."""

from __future__ import annotations

import numpy as np
import pytest
from _plugtest_util import make_node, make_pod, run_filter, snapshot

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.interface import EnqueueExtensions, implements
from kubesched.framework.status import Code
from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.nodename import NodeName
from kubesched.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.plugins.prioritysort import PrioritySort
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.schedulinggates import SchedulingGates

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
UNSCHED_TOL = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
               "effect": "NoSchedule"}

# TestNodeUnschedulable: (name, tolerations, node unschedulable, want fail)
NODE_UNSCHEDULABLE = [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", [], True,
     True),
    ("Schedule pod to normal node", [], False, False),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     [UNSCHED_TOL], True, False),
    ("Toleration for another taint does not help",
     [{"key": "other", "operator": "Exists", "effect": "NoSchedule"}], True, True),
    ("An empty-key Exists toleration tolerates the unschedulable taint",
     [{"operator": "Exists"}], True, False),
]


@pytest.mark.parametrize("case", NODE_UNSCHEDULABLE, ids=[c[0] for c in NODE_UNSCHEDULABLE])
def test_node_unschedulable(case) -> None:
    _name, tolerations, unschedulable, fail = case
    pod = make_pod(tolerations=tolerations)
    (st,) = run_filter(NodeUnschedulable(None, Handle()), pod,
                       snapshot([make_node("n", unschedulable=unschedulable)]))
    if fail:
        assert (st.code, st.reasons) == (UU, ("node(s) were unschedulable",))
    else:
        assert st.code == Code.SUCCESS


def test_node_unschedulable_mixed_batch() -> None:
    nodes = [make_node("a", unschedulable=True), make_node("b"), make_node("c",
                                                                           unschedulable=True)]
    sts = run_filter(NodeUnschedulable(None, Handle()), make_pod(), snapshot(nodes))
    assert [s.code for s in sts] == [UU, Code.SUCCESS, UU]


def test_node_unschedulable_hints() -> None:
    p = NodeUnschedulable(None, Handle())
    assert [(e.event.resource, e.event.action) for e in p.events_to_register()] == [
        (Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (Resource.POD, ActionType.UPDATE_POD_TOLERATION)]
    pod = make_pod("p", uid="p")
    cordoned, ok = make_node("n", unschedulable=True), make_node("n")
    assert p.is_schedulable_after_node_change(pod, None, ok) == QueueingHint.QUEUE
    assert p.is_schedulable_after_node_change(pod, None, cordoned) == QueueingHint.SKIP
    assert p.is_schedulable_after_node_change(pod, cordoned, ok) == QueueingHint.QUEUE
    assert p.is_schedulable_after_node_change(pod, ok, ok) == QueueingHint.SKIP
    tolerant = make_pod("p", uid="p", tolerations=[UNSCHED_TOL])
    assert p.is_schedulable_after_pod_toleration_change(pod, pod, tolerant) == QueueingHint.QUEUE
    assert p.is_schedulable_after_pod_toleration_change(pod, pod, pod) == QueueingHint.SKIP
    other = make_pod("q", uid="q", tolerations=[UNSCHED_TOL])
    assert p.is_schedulable_after_pod_toleration_change(pod, other, other) == QueueingHint.SKIP


# TestNodeName: (name, pod nodeName, node name, want fail)
NODE_NAME = [
    ("no host specified", "", "foo", False),
    ("host matches", "foo", "foo", False),
    ("host doesn't match", "bar", "foo", True),
]


@pytest.mark.parametrize("case", NODE_NAME, ids=[c[0] for c in NODE_NAME])
def test_node_name(case) -> None:
    _name, pod_node, node_name, fail = case
    (st,) = run_filter(NodeName(None, Handle()), make_pod(node=pod_node),
                       snapshot([make_node(node_name)]))
    if fail:
        assert (st.code, st.reasons) == (UU, ("node(s) didn't match the requested node name",))
    else:
        assert st.code == Code.SUCCESS


def test_node_name_batch_picks_one_node_and_events() -> None:
    nodes = [make_node(x) for x in ("a", "b", "c")]
    sts = run_filter(NodeName(None, Handle()), make_pod(node="b"), snapshot(nodes))
    assert [s.code for s in sts] == [UU, Code.SUCCESS, UU]
    sts = run_filter(NodeName(None, Handle()), make_pod(node="zzz"), snapshot(nodes))
    assert [s.code for s in sts] == [UU, UU, UU]
    evs = NodeName(None, Handle()).events_to_register()
    assert [(e.event.resource, e.event.action, e.hint) for e in evs] == [
        (Resource.NODE, ActionType.ADD, None)]


def test_scheduling_gates() -> None:
    p = SchedulingGates(None, Handle())
    assert p.pre_enqueue(make_pod()) is None
    st = p.pre_enqueue(make_pod(gates=["g1", "g2"]))
    assert st is not None and st.code == UU
    assert st.reasons == ("waiting for scheduling gates: [g1 g2]",)
    (ev,) = p.events_to_register()
    assert (ev.event.resource, ev.event.action) == (
        Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    pod = make_pod("p", uid="p", gates=["g"])
    assert ev.hint(pod, pod, make_pod("p", uid="p")) == QueueingHint.QUEUE
    assert ev.hint(pod, pod, make_pod("q", uid="q")) == QueueingHint.SKIP


def test_priority_sort() -> None:
    p = PrioritySort(None, Handle())
    hi = QueuedPodInfo(make_pod(priority=10), timestamp=5.0)
    lo_early = QueuedPodInfo(make_pod(priority=1), timestamp=1.0)
    lo_late = QueuedPodInfo(make_pod(priority=1), timestamp=2.0)
    none = QueuedPodInfo(make_pod(), timestamp=0.0)
    infos = [lo_late, none, hi, lo_early]
    assert p.less(hi, lo_early) and not p.less(lo_early, hi)
    assert p.less(lo_early, lo_late) and not p.less(lo_late, lo_early)
    assert not p.less(lo_early, lo_early)
    assert p.less(lo_late, none)  # no priority = 0
    # sort_key orders exactly as less
    by_key = sorted(infos, key=p.sort_key)
    assert by_key == [hi, lo_early, lo_late, none]
    for a in infos:
        for b in infos:
            assert p.less(a, b) == (p.sort_key(a) < p.sort_key(b))


class _Backend:
    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.calls: list[tuple[str, str]] = []

    def bind(self, pod, node_name):
        self.calls.append((pod.key, node_name))
        if self.fail is not None:
            raise self.fail


def test_default_binder() -> None:
    ok = _Backend()
    pod = make_pod("web")
    assert DefaultBinder(None, Handle(backend=ok)).bind(CycleState(), pod, "n1") is None
    assert ok.calls == [("default/web", "n1")]
    bad = _Backend(RuntimeError('pods "web" not found'))
    st = DefaultBinder(None, Handle(backend=bad)).bind(CycleState(), pod, "n1")
    assert st is not None and st.code == Code.ERROR and st.reasons == ('pods "web" not found',)
    st = DefaultBinder(None, Handle()).bind(CycleState(), pod, "n1")
    assert st is not None and st.code == Code.ERROR


def test_registry() -> None:
    reg = in_tree_registry()
    assert set(reg) >= {"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName",
                        "TaintToleration", "NodeResourcesFit",
                        "NodeResourcesBalancedAllocation", "DefaultBinder"}
    for name, cls in reg.items():
        assert cls.name == name
    points = {
        "SchedulingGates": {"preEnqueue"},
        "PrioritySort": {"queueSort"},
        "NodeUnschedulable": {"filter"},
        "NodeName": {"filter"},
        "TaintToleration": {"filter", "preScore", "score"},
        "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
        "NodeResourcesBalancedAllocation": {"preScore", "score"},
        "DefaultBinder": {"bind"},
    }
    all_points = ["preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                  "score", "reserve", "permit", "preBind", "bind", "postBind"]
    for name, want in points.items():
        assert {pt for pt in all_points if implements(reg[name], pt)} == want, name
    # EnqueueExtensions as upstream: every filter / pre-enqueue plugin registers events
    for name in ("SchedulingGates", "NodeUnschedulable", "NodeName", "TaintToleration",
                 "NodeResourcesFit"):
        assert issubclass(reg[name], EnqueueExtensions)
    # batch forms exist for every in-tree filter / score plugin
    for name in ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit"):
        assert hasattr(reg[name], "filter_batch")
    for name in ("TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation"):
        assert hasattr(reg[name], "score_batch")
    assert hasattr(reg["TaintToleration"], "normalize_score")
    assert not hasattr(reg["NodeResourcesFit"], "normalize_score")
    assert not hasattr(reg["NodeResourcesBalancedAllocation"], "normalize_score")
    # an empty candidate set is fine for every batch form
    snap = snapshot([make_node("a")])
    empty = np.zeros(0, dtype=np.int64)
    for name in ("NodeUnschedulable", "NodeName", "TaintToleration"):
        assert len(reg[name](None, None).filter_batch(CycleState(), make_pod(), snap,
                                                      empty).codes) == 0
