"""GangScheduling: upstream's gangscheduling_test.go tables, ported at each release's API —
v1.35 (Workload, ``spec.workloadRef``) and v1.36/v1.37 (PodGroup objects,
``spec.schedulingGroup``)."""

from __future__ import annotations

import pytest
from tests.plugins._gang_util import handle, obj, pod

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code, Status
from kubesched.plugins.gangscheduling import GangScheduling


def wref(name, group, replica=""):
    r = {"name": name, "podGroup": group}
    if replica:
        r["podGroupReplicaKey"] = replica
    return {"workloadRef": r}


def sgroup(name):
    return {"schedulingGroup": {"podGroupName": name}}


def gang(n):
    return {"gang": {"minCount": n}}


WORKLOAD = obj("Workload", "scheduling.k8s.io/v1alpha1", "gang-wl", "ns1", {"podGroups": [
    {"name": "pg1", "policy": gang(3)}, {"name": "pg2", "policy": gang(4)}]})
BASIC_WORKLOAD = obj("Workload", "scheduling.k8s.io/v1alpha1", "basic-wl", "ns1",
                     {"podGroups": [{"name": "pg1", "policy": {"basic": {}}}]})
P35 = {n: pod(n, "ns1", spec=wref("gang-wl", g, r)) for n, g, r in
       [("p1", "pg1", ""), ("p2", "pg1", ""), ("p3", "pg1", ""), ("p4", "pg2", ""),
        ("p5", "pg1", "2")]}
P35["basic-pod"] = pod("basic-pod", "ns1", spec=wref("basic-wl", "pg1"))
P35["non-gang"] = pod("non-gang", "ns1")


def pg(name, policy, version="v1alpha2"):
    return obj("PodGroup", f"scheduling.k8s.io/{version}", name, "ns1",
               {"schedulingPolicy": policy})


P36 = {n: pod(n, "ns1", spec=sgroup(g)) for n, g in
       [("p1", "pg1"), ("p2", "pg1"), ("p3", "pg1"), ("p4", "pg2"), ("p5", "pg2")]}
P36["basic-pod"] = pod("basic-pod", "ns1", spec=sgroup("pg3"))
P36["non-gang"] = pod("non-gang", "ns1")
PG36 = [pg("pg1", gang(3)), pg("pg2", gang(4)), pg("pg3", {"basic": {}})]

WAIT35 = "waiting for minCount pods from a gang to be waiting on permit"
WAIT36 = "waiting for minCount pods from a gang to be scheduled"
QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"

# TestGangSchedulingFlow: (name, pod, initial pods, objects, waiting on permit,
#                          PreEnqueue (code, message) or None, Permit code, activated, allowed)
FLOW_35 = [
    ("non-gang pod succeeds immediately", "non-gang", [], [WORKLOAD, BASIC_WORKLOAD], [],
     None, Code.SUCCESS, [], []),
    ("basic policy pod succeeds immediately", "basic-pod", [], [WORKLOAD, BASIC_WORKLOAD], [],
     None, Code.SUCCESS, [], []),
    ("gang pod fails PreEnqueue when workload is not yet created", "p1",
     ["p2", "p3", "p4", "p5"], [],
     [], 'waiting for pods\'s workload "gang-wl" to appear in scheduling queue', None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], [WORKLOAD],
     [], QUORUM, None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"],
     [WORKLOAD], ["p2", "p4", "p5"], None, Code.WAIT, ["p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1",
     ["p2", "p3", "p4", "p5"], [WORKLOAD], ["p2", "p3", "p4", "p5"], None, Code.SUCCESS, [],
     ["p2", "p3"]),
]
FLOW_36 = [
    ("non-gang pod succeeds immediately", "non-gang", [], PG36, [], None, Code.SUCCESS, [], []),
    ("basic policy pod succeeds immediately", "basic-pod", [], PG36, [], None, Code.SUCCESS,
     [], []),
    ("gang pod fails PreEnqueue when pod group is not yet created", "p1",
     ["p2", "p3", "p4", "p5"], [],
     [], 'waiting for pods\'s pod group "pg1" to appear in scheduling queue', None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], PG36[:2],
     [], QUORUM, None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"],
     PG36[:2], ["p2", "p4", "p5"], None, Code.WAIT, ["p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1",
     ["p2", "p3", "p4", "p5"], PG36[:2], ["p2", "p3", "p4", "p5"], None, Code.SUCCESS, [],
     ["p2", "p3"]),
]


def _flow(version, pods, case):
    _name, p, initial, objects, waiting, pre_enqueue, permit, activated, allowed = case
    all_pods = [pods[n] for n in [*initial, p]]
    h = handle(all_pods, objects, version=version)
    pl = GangScheduling({}, h)
    st = pl.pre_enqueue(pods[p])
    if pre_enqueue is not None:
        assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pre_enqueue)
        return
    assert st is None
    parked = {}
    for n in waiting:  # other members already reserved and waiting at Permit
        assert pl.reserve(CycleState(), pods[n], "some-node") is None
        wst, t = pl.permit(CycleState(), pods[n], "some-node")
        assert wst.code == Code.WAIT
        parked[n] = h.waiting_pods.add(pods[n], "some-node", {"GangScheduling": t}, 0,
                                       lambda _wp: None)
    pl.reserve(CycleState(), pods[p], "some-node")
    h.activated.clear()
    st, timeout = pl.permit(CycleState(), pods[p], "some-node")
    assert (st.code if st is not None else Code.SUCCESS) == permit
    if permit == Code.WAIT:
        assert st.message() == (WAIT35 if version == "1.35" else WAIT36)
        assert timeout == 300
        assert h.activated == activated
        return
    assert sorted(n for n, wp in parked.items() if wp.status == Status()) == allowed


@pytest.mark.parametrize("case", FLOW_35, ids=[c[0] for c in FLOW_35])
def test_gang_scheduling_flow_v135(case):
    _flow("1.35", P35, case)


@pytest.mark.parametrize("version", ["1.36", "1.37"])
@pytest.mark.parametrize("case", FLOW_36, ids=[c[0] for c in FLOW_36])
def test_gang_scheduling_flow_v136_on(version, case):
    _flow(version, P36, case)


def test_v135_permit_timeout_is_the_groups_deadline():
    """v1.35: the wait is what is left of the group's deadline, set at its first member."""
    pods = [P35["p1"], P35["p2"], P35["p3"]]
    h = handle(pods, [WORKLOAD], version="1.35")
    pl = GangScheduling({}, h)
    assert pl.permit(CycleState(), pods[0], "n")[1] == 300
    h.clock.t += 100
    assert pl.permit(CycleState(), pods[1], "n")[1] == 200
    h.clock.t += 250  # passed: a new deadline
    assert pl.permit(CycleState(), pods[2], "n")[1] == 300


# Test_isSchedulableAfterPodAdded, per release
@pytest.mark.parametrize("version, target, added, want", [
    ("1.35", wref("w1", "pg"), wref("w1", "pg"), QueueingHint.QUEUE),
    ("1.35", wref("w1", "pg", "3"), wref("w1", "pg", "3"), QueueingHint.QUEUE),
    ("1.35", wref("w1", "pg"), wref("w2", "pg"), QueueingHint.SKIP),
    ("1.35", wref("w1", "pg"), wref("w1", "pg2"), QueueingHint.SKIP),
    ("1.35", wref("w1", "pg", "3"), wref("w1", "pg", "4"), QueueingHint.SKIP),
    ("1.36", sgroup("pg"), sgroup("pg"), QueueingHint.QUEUE),
    ("1.36", sgroup("pg1"), sgroup("pg2"), QueueingHint.SKIP),
])
def test_is_schedulable_after_pod_added(version, target, added, want):
    pl = GangScheduling({}, handle([], [], version=version))
    assert pl.is_schedulable_after_pod_added(pod("p", spec=target), None,
                                             pod("q", spec=added)) == want
    other_ns = pod("q", "foo", spec=added)
    assert pl.is_schedulable_after_pod_added(pod("p", spec=target), None,
                                             other_ns) == QueueingHint.SKIP
