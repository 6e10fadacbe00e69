"""The nominator through the queue's API (upstream nominator.go and the nominator parts of
scheduling_queue_test.go)."""

from __future__ import annotations

from queue_fakes import DEFAULT, FakeFramework, fail, make_pod, make_queue

from kubesched.clock import VirtualClock
from kubesched.queue import SchedulingQueue

HIGH, MID, LOW = 1000, 500, 0


def test_update_nominated_pod_for_node():
    """TestPriorityQueue_UpdateNominatedPodForNode."""
    med = make_pod("mpp", ns="ns2", priority=MID, nominated="node1")
    unsched = make_pod("up", ns="ns1", priority=LOW, nominated="node1")
    high = make_pod("hpp", ns="ns1", priority=HIGH)
    scheduled = make_pod("sp", ns="ns1", node="foo")
    ghost = make_pod("ne", ns="ns1")
    known = {p.uid: p for p in (med, unsched, high, scheduled)}
    q = SchedulingQueue({DEFAULT: FakeFramework()}, VirtualClock(),
                        pod_lister=lambda p: known.get(p.uid))
    q.add(med)
    q.add_nominated_pod(unsched, "node5")  # a node other than the pod's own
    q.add_nominated_pod(high, "node2")  # the pod object names no node
    want = {"node1": [med.uid], "node2": [high.uid], "node5": [unsched.uid]}
    assert q.nominator.nominated == want
    assert q.nominator.node_of == {med.uid: "node1", high.uid: "node2", unsched.uid: "node5"}
    assert q.pop().pod is med
    assert q.nominator.nominated == want  # popping doesn't change nominations
    q.add_nominated_pod(high, "node4")
    want = {"node1": [med.uid], "node4": [high.uid], "node5": [unsched.uid]}
    assert q.nominator.nominated == want
    q.add_nominated_pod(ghost, "node1")  # deleted from the informer cache: nothing changes
    assert q.nominator.nominated == want
    unbound_copy = make_pod("sp", ns="ns1")  # stale copy of a pod the lister sees bound
    q.add_nominated_pod(unbound_copy, "node1")
    assert q.nominator.nominated == want
    q.delete_nominated_pod_if_exists(high)
    assert q.nominator.nominated == {"node1": [med.uid], "node5": [unsched.uid]}


def test_nominated_pods_for_node():
    """TestPriorityQueue_NominatedPodsForNode."""
    q, _ = make_queue()
    med = make_pod("mpp", priority=MID, nominated="node1")
    unsched = make_pod("up", priority=LOW, nominated="node1")
    high = make_pod("hpp", priority=HIGH)
    for p in (med, unsched, high):
        q.add(p)
    assert q.pop().pod is high
    assert q.nominated_pods_for_node("node1") == [med, unsched]
    assert q.nominated_pods_for_node("node2") == []
    assert q.nominated_pods_by_node() == {"node1": [med, unsched]}


def test_modes_noop_override_clear():
    q, _ = make_queue()
    pod = make_pod("p", nominated="n1")
    q.add_nominated_pod(pod, None)  # ModeNoop: the pod's own nominatedNodeName
    assert q.nominator.node_of == {pod.uid: "n1"}
    q.add_nominated_pod(pod, "n2")  # ModeOverride
    assert q.nominator.nominated == {"n2": [pod.uid]}
    q.add_nominated_pod(pod, "")  # clear
    assert q.nominator.nominated == {} and q.nominator.node_of == {}
    q.add_nominated_pod(make_pod("bound", node="n9"), "n1")  # already has spec.nodeName
    assert q.nominator.nominated == {}


def test_nominated_pods_are_the_queues_latest_version():
    q, _ = make_queue()
    pod = make_pod("p", nominated="n1")
    q.add(pod)
    newer = make_pod("p", nominated="n1", labels={"v": "2"})
    q.update(pod, newer)
    assert q.nominated_pods_for_node("n1") == [newer]
    qpi = q.pop()  # in flight: the nominator's own copy is used
    assert q.nominated_pods_for_node("n1") == [newer]
    fail(q, qpi, "P")
    assert q.nominated_pods_for_node("n1") == [newer]
    q.delete(newer)
    assert q.nominated_pods_for_node("n1") == []


def test_update_keeps_in_memory_nomination():
    """UpdateNominatedPod: an update where neither version carries nominatedNodeName keeps the
    nomination the scheduler made in memory; one that sets or changes it follows the pod."""
    q, _ = make_queue()
    pod = make_pod("p")
    q.add(pod)
    q.add_nominated_pod(pod, "n1")
    relabeled = make_pod("p", labels={"a": "b"})
    q.update(pod, relabeled)
    assert q.nominator.node_of == {pod.uid: "n1"}
    assert q.nominated_pods_for_node("n1") == [relabeled]
    moved = make_pod("p", labels={"a": "b"}, nominated="n2")
    q.update(relabeled, moved)
    assert q.nominator.nominated == {"n2": [pod.uid]}
    cleared = make_pod("p", labels={"a": "b"})
    q.update(moved, cleared)
    assert q.nominator.nominated == {}
