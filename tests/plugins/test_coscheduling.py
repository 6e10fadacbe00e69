"""Coscheduling: scheduler-plugins' unit tables (pkg/coscheduling/coscheduling_test.go and
core/core_test.go at kubernetes-sigs/scheduler-plugins 903da7df), ported."""

from __future__ import annotations

import pytest
from tests.plugins._gang_util import FakeClock, cosched_group, handle, node, pod, snapshot

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeToStatus, QueuedPodInfo
from kubesched.plugins.coscheduling import Coscheduling, check_cluster_resource

NODES_4CPU = [node("node-a", "4"), node("node-b", "4")]


def plugin(pods, groups, args=None, clock=None):
    return Coscheduling(args or {"permitWaitingTimeSeconds": 10},
                        handle(pods, groups, clock=clock))


# core_test.go TestPreFilter: (name, pod, pending pods, pod groups, success)
PRE_FILTER = [
    ("pod does not belong to any pg", pod("p"),
     [pod("p1", "ns", group="pg1"), pod("p2", "ns", group="pg2")],
     [cosched_group("pg1", "ns", 1), cosched_group("pg2", "ns", 1)], True),
    ("pod belongs to a non-existent pg", pod("p", "ns", group="pg-non-existent"), [],
     [cosched_group("pg1", "ns", 1)], True),
    ("pod count less than minMember", pod("p", "ns", group="pg1"),
     [pod("pg2-1", "ns", group="pg2")],
     [cosched_group("pg1", "ns", 2), cosched_group("pg2", "ns", 2)], False),
    ("pod count equal minMember", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1"), pod("p1c", "ns", group="pg1")],
     [cosched_group("pg1", "ns", 2), cosched_group("pg2", "ns", 2)], True),
    ("pod count more than minMember", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1"), pod("p1c", "ns", group="pg1")],
     [cosched_group("pg1", "ns", 2)], True),
    ("gated pods but still meeting quorum (minMember < replicas)", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1"), pod("p1c", "ns", group="pg1", gates=("example-gate",))],
     [cosched_group("pg1", "ns", 2)], True),
    ("gated pods push group below quorum", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1", gates=("example-gate",)), pod("p1c", "ns", group="pg1")],
     [cosched_group("pg1", "ns", 3)], False),
    ("all sibling pods are gated", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1", gates=("g",)), pod("p1c", "ns", group="pg1", gates=("g",))],
     [cosched_group("pg1", "ns", 2)], False),
    ("cluster's resource satisfies minResource", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1"), pod("p1c", "ns", group="pg1")],
     [cosched_group("pg1", "ns", 2, {"cpu": "6"})], True),
    ("cluster's resource cannot satisfy minResource", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1"), pod("p1c", "ns", group="pg1")],
     [cosched_group("pg1", "ns", 2, {"cpu": "10"})], False),
]


@pytest.mark.parametrize("name, p, pending, groups, success", PRE_FILTER,
                         ids=[c[0] for c in PRE_FILTER])
def test_pre_filter(name, p, pending, groups, success):
    pl = plugin([*pending, p], groups)
    _res, st = pl.pre_filter(CycleState(), p, snapshot(NODES_4CPU, []))
    assert (st is None) == success
    if st is not None:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_pre_filter_messages():
    p = pod("p", "ns", group="pg1")
    pl = plugin([p], [cosched_group("pg1", "ns", 2)])
    _r, st = pl.pre_filter(CycleState(), p, snapshot(NODES_4CPU, []))
    assert st.message() == ("pre-filter pod p cannot find enough sibling pods, current pods "
                            "number: 1, minMember of group: 2")
    pods = [pod(f"p{i}", "ns", group="pg1") for i in range(3)]
    pl = plugin(pods, [cosched_group("pg1", "ns", 2, {"cpu": "10"})])
    _r, st = pl.pre_filter(CycleState(), pods[0], snapshot(NODES_4CPU, []))
    assert st.message() == "resource gap: map[cpu:2000]"


# core_test.go TestPermit: (name, pod, existing (bound) pods, pod groups, want)
PERMIT_CORE = [
    ("pod does not belong to any pg", pod("p", "ns"), [], [cosched_group("pg1", "ns", 2)],
     Code.SUCCESS),
    ("pod specifies a non-existent pg", pod("p", "ns", group="pg-non-existent"), [],
     [cosched_group("pg1", "ns", 2)], Code.UNSCHEDULABLE),
    ("pod belongs to a pg that doesn't have quorum", pod("p", "ns", group="pg1"), [],
     [cosched_group("pg1", "ns", 2)], Code.WAIT),
    ("pod belongs to a pg that have quorum satisfied", pod("p1a", "ns", group="pg1"),
     [pod("p1b", "ns", group="pg1", node="node")], [cosched_group("pg1", "ns", 2)],
     Code.SUCCESS),
    # coscheduling_test.go TestPermit
    ("pods belong to a pg1, but quorum not satisfied", pod("p", "ns", group="pg2"), [],
     [cosched_group("pg1", "ns", 1), cosched_group("pg2", "ns", 2)], Code.WAIT),
    ("pods belong to a podGroup, and quorum satisfied", pod("p", "ns", group="pg1"), [],
     [cosched_group("pg1", "ns", 1), cosched_group("pg2", "ns", 2)], Code.SUCCESS),
]


@pytest.mark.parametrize("name, p, existing, groups, want", PERMIT_CORE,
                         ids=[c[0] for c in PERMIT_CORE])
def test_permit(name, p, existing, groups, want):
    pl = plugin([*existing, p], groups)
    st, timeout = pl.permit(CycleState(), p, "node")
    assert (st.code if st is not None else Code.SUCCESS) == want
    if want == Code.WAIT:
        assert timeout == 10
    if want == Code.UNSCHEDULABLE:
        assert st.message() == "PodGroup not found"


def test_permit_wait_time_prefers_the_group_timeout():
    g = cosched_group("pg1", "ns", 2)
    g.raw["spec"]["scheduleTimeoutSeconds"] = 3
    p = pod("p", "ns", group="pg1")
    _st, timeout = plugin([p], [g]).permit(CycleState(), p, "node")
    assert timeout == 3


# core_test.go TestCheckClusterResource: 2 nodes of 3 cpus; minResources 4 cpus
@pytest.mark.parametrize("name, existing, want", [
    ("Cluster resource enough", [pod("p1", "ns", node="node-a", cpu="2")], True),
    ("Cluster resource not enough", [pod("p1", "ns", node="node-a", cpu="2"),
                                     pod("p2", "ns", node="node-b", cpu="1")], False),
    ("Cluster resource enough as p1's resource needs to be excluded from minResources",
     [pod("p1", "ns", group="pg1", node="node-a", cpu="2"),
      pod("p2", "ns", node="node-b", cpu="1")], True),
])
def test_check_cluster_resource(name, existing, want):
    snap = snapshot([node("node-a", "3"), node("node-b", "3")], existing)
    assert (not check_cluster_resource(snap.node_infos, {"cpu": 4000}, "ns/pg1")) == want


def _qpi(p, t=None):
    return QueuedPodInfo(pod=p, initial_attempt_timestamp=t)


LOW, HIGH = 10, 100
T0 = 1_700_000_000.0


def _t(s):
    return f"2023-11-14T22:13:{20 + s:02d}Z"  # T0 + s seconds


# coscheduling_test.go TestLess: (name, p1, p2, pod groups, want)
LESS = [
    ("p1.priority less than p2.priority", _qpi(pod("p1", "ns1", priority=LOW)),
     _qpi(pod("p2", "ns2", priority=HIGH)), [], False),
    ("p1.priority greater than p2.priority", _qpi(pod("p1", "ns1", priority=HIGH)),
     _qpi(pod("p2", "ns2", priority=LOW)), [], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2",
     _qpi(pod("p1", "ns1", priority=HIGH), T0 + 1), _qpi(pod("p2", "ns2", priority=HIGH), T0 + 2),
     [], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1",
     _qpi(pod("p1", "ns1", priority=HIGH), T0 + 2), _qpi(pod("p2", "ns2", priority=HIGH), T0 + 1),
     [], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1",
     _qpi(pod("p1", "ns1", priority=LOW, group="pg1")), _qpi(pod("p2", "ns2", priority=HIGH)),
     [cosched_group("pg1", "ns1")], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1",
     _qpi(pod("p1", "ns1", priority=HIGH, group="pg1")), _qpi(pod("p2", "ns2", priority=LOW)),
     [cosched_group("pg1", "ns1")], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
     _qpi(pod("p1", "ns1", priority=HIGH, group="pg1"), T0 + 1),
     _qpi(pod("p2", "ns2", priority=HIGH), T0 + 2),
     [cosched_group("pg1", "ns1", created=_t(1))], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
     _qpi(pod("p1", "ns1", priority=HIGH, group="pg1"), T0 + 2),
     _qpi(pod("p2", "ns2", priority=HIGH), T0 + 1),
     [cosched_group("pg1", "ns1", created=_t(2))], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
     _qpi(pod("p1", "ns1", priority=LOW, group="pg1")),
     _qpi(pod("p2", "ns2", priority=HIGH, group="pg2")),
     [cosched_group("pg1", "ns1"), cosched_group("pg2", "ns2")], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
     _qpi(pod("p1", "ns1", priority=HIGH, group="pg1")),
     _qpi(pod("p2", "ns2", priority=LOW, group="pg2")),
     [cosched_group("pg1", "ns1"), cosched_group("pg2", "ns2")], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 "
     "belongs to pg2",
     _qpi(pod("p1", "ns1", priority=HIGH, group="pg1"), T0 + 1),
     _qpi(pod("p2", "ns2", priority=HIGH, group="pg2"), T0 + 2),
     [cosched_group("pg1", "ns1", created=_t(1)), cosched_group("pg2", "ns2", created=_t(2))],
     True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 "
     "belongs to pg1",
     _qpi(pod("p1", "ns", priority=LOW, group="pg2"), T0 + 1),
     _qpi(pod("p2", "ns", priority=HIGH, group="pg1"), T0 + 2),
     [cosched_group("pg1", "ns", created=_t(1)), cosched_group("pg2", "ns", created=_t(2))],
     False),
    ("equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
     _qpi(pod("p1", "ns1", priority=HIGH, group="pg2"), T0 + 1),
     _qpi(pod("p2", "ns2", priority=HIGH, group="pg2"), T0 + 1),
     [cosched_group("pg1", "ns1", created=_t(1)), cosched_group("pg2", "ns2", created=_t(2))],
     True),
    ("equal priority and creation time, and p2 belong to pg2",
     _qpi(pod("p1", "ns1", priority=HIGH), T0 + 1),
     _qpi(pod("p2", "ns2", priority=HIGH, group="pg2"), T0 + 1),
     [cosched_group("pg2", "ns2", created=_t(2))], True),
]


@pytest.mark.parametrize("name, p1, p2, groups, want", LESS, ids=[c[0] for c in LESS])
def test_less(name, p1, p2, groups, want):
    assert plugin([], groups).less(p1, p2) is want


def test_less_after_schedule_failure():
    clock = FakeClock(T0 + 100)
    pg1 = cosched_group("pg1", "ns", 3, created=_t(0))
    pg2 = cosched_group("pg2", "ns", 3, created=_t(5))
    p1 = _qpi(pod("p1", "ns", priority=HIGH, group="pg1"), T0 + 100)
    p2 = _qpi(pod("p2", "ns", priority=HIGH, group="pg2"), T0 + 100)
    pl = plugin([], [pg1, pg2], clock=clock)
    assert pl.less(p1, p2)
    pl.mark_failure("ns/pg1")  # PG1 sorts as if created now: after PG2
    assert not pl.less(p1, p2)
    assert pl.less(p2, p1)
    pl.last_failed.pop("ns/pg1")  # ClearPodGroupScheduleFailure
    assert pl.less(p1, p2)


REJECT = "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter"


# coscheduling_test.go TestPostFilter and TestPostFilterRejectThreshold
@pytest.mark.parametrize("name, p, existing, groups, threshold, want", [
    ("pod does not belong to any pod group", pod("p", "ns"), [],
     [cosched_group("pg1", "ns", 2)], 10, (Code.UNSCHEDULABLE, "can not find pod group")),
    ("enough pods assigned, do not reject all", pod("p", "ns", group="pg1"),
     [pod("p1", "ns", group="pg1", node="node")], [cosched_group("pg1", "ns", 1)], 10,
     (Code.UNSCHEDULABLE, "")),
    ("pod failed at filter phase, reject all pods", pod("p", "ns", group="pg1"),
     [pod("p1", "ns", group="pg1", node="node")], [cosched_group("pg1", "ns", 2)], 10,
     (Code.UNSCHEDULABLE, REJECT)),
    *[(f"{pct}%: {n}/10 assigned", pod("p", "ns", group="pg1"),
       [pod(f"assigned-{i}", "ns", group="pg1", node="node") for i in range(n)],
       [cosched_group("pg1", "ns", 10)], pct, (Code.UNSCHEDULABLE, REJECT if rej else ""))
      for pct, n, rej in [(10, 9, False), (10, 8, True), (0, 9, True), (100, 0, False),
                          (50, 6, False), (50, 4, True)]],
])
def test_post_filter(name, p, existing, groups, threshold, want):
    pl = plugin([*existing, p], groups, {"permitWaitingTimeSeconds": 10,
                                         "podGroupRejectPercentage": threshold})
    _node, st = pl.post_filter(CycleState(), p, NodeToStatus())
    assert (st.code, st.message()) == want


def test_post_filter_rejects_waiting_siblings_and_backs_off():
    """TestPodGroupBackoffTime: a member waits (activating its siblings), another fails
    PostFilter; the third is refused at PreFilter while the group backs off."""
    pods = [pod(f"pod{i}", "ns", group="pg1") for i in (1, 2, 3)]
    clock = FakeClock()
    pl = plugin(pods, [cosched_group("pg1", "ns", 3)],
                {"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 1}, clock=clock)
    st, t = pl.permit(CycleState(), pods[0], "node")
    assert st.code == Code.WAIT
    assert sorted(pl.handle.activated) == ["pod2", "pod3"]
    wp = pl.handle.waiting_pods.add(pods[0], "node", {"Coscheduling": t}, clock.now(),
                                    lambda _wp: None)
    pl.post_filter(CycleState(), pods[1], NodeToStatus())
    assert wp.status is not None and wp.status.message() == "optimistic rejection in PostFilter"
    _r, st = pl.pre_filter(CycleState(), pods[2], snapshot(NODES_4CPU, []))
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == "podGroup ns/pg1 failed recently"
    clock.t += 1  # the backoff is over
    assert pl.pre_filter(CycleState(), pods[2], snapshot(NODES_4CPU, []))[1] is None


def test_unreserve_rejects_waiting_siblings():
    pods = [pod(f"p{i}", "ns", group="pg1") for i in range(3)]
    pl = plugin(pods, [cosched_group("pg1", "ns", 3)])
    waiting = [pl.handle.waiting_pods.add(p, "n", {"Coscheduling": 10}, 0, lambda _wp: None)
               for p in pods[:2]]
    pl.unreserve(CycleState(), pods[2], "n")
    assert [w.status.message() for w in waiting] == ["rejection in Unreserve"] * 2
