"""SchedulingQueue: ordering, backoff, flushes, queueing hints, gating, activate, in-flight
replay. Cases named after upstream's pkg/scheduler/backend/queue/scheduling_queue_test.go and
backoff_queue_test.go are ports of those cases (with UnschedulableCount where older upstream
tests set Attempts)."""

from __future__ import annotations

import pytest
from queue_fakes import (
    ASSIGNED_POD_ADD,
    CSI_NODE_UPDATE,
    DEFAULT,
    NODE_ADD,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    UNSCHED_POD_UPDATE,
    FakeFramework,
    SchedulingGates,
    fail,
    failing_hint,
    hints,
    make_pod,
    make_queue,
    pop_names,
    queue_hint,
    skip_hint,
)

from kubesched.api.types import Toleration
from kubesched.clock import VirtualClock
from kubesched.framework.events import (
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    Resource,
)
from kubesched.framework.types import QueuedPodInfo
from kubesched.queue import (
    ACTIVE,
    BACKOFF,
    ERROR_BACKOFF,
    GATED,
    IN_FLIGHT,
    UNSCHEDULABLE,
    SchedulingQueue,
    build_queueing_hint_map,
)
from kubesched.queue.scheduling_queue import InFlightEvent

HIGH, MID, LOW = 1000, 500, 0

# ---------------------------------------------------------------------------- ordering


def test_priority_queue_add():
    """TestPriorityQueue_Add: priority order; pods with nominatedNodeName are nominated."""
    q, _ = make_queue()
    med = make_pod("mpp", ns="ns2", priority=MID, nominated="node1")
    unsched = make_pod("up", ns="ns1", priority=LOW, nominated="node1")
    high = make_pod("hpp", ns="ns1", priority=HIGH)
    for p in (med, unsched, high):
        q.add(p)
    assert q.nominator.nominated == {"node1": [med.uid, unsched.uid]}
    assert q.nominator.node_of == {med.uid: "node1", unsched.uid: "node1"}
    assert [q.pop().pod for _ in range(3)] == [high, med, unsched]
    assert q.pop() is None
    # popping does not clear nominations
    assert len(q.nominator.nominated["node1"]) == 2


@pytest.mark.parametrize("keyed", [True, False])
def test_same_priority_ordered_by_timestamp_then_seq(keyed):
    q, clock = make_queue(keyed=keyed)
    q.add(make_pod("b"))
    q.add(make_pod("a"))  # same virtual time: queue order (seq) decides, not the name
    q.add(make_pod("hi", priority=1))
    clock.advance_to(5)
    q.add(make_pod("late-hi", priority=1))
    assert pop_names(q) == ["hi", "late-hi", "b", "a"]


@pytest.mark.parametrize("keyed", [True, False])
def test_requeued_pod_gets_a_fresh_timestamp(keyed):
    """Timestamp (and seq) are refreshed on AddUnschedulableIfNotPresent, so a retried pod
    queues behind pods added before its failure."""
    q, clock = make_queue(keyed=keyed)
    q.add(make_pod("first"))
    clock.advance_to(1)
    q.add(make_pod("second"))
    qpi = q.pop()
    assert qpi.pod.name == "first"
    fail(q, qpi, "P")
    q.activate([qpi.pod])
    assert q.get(qpi.pod.uid).timestamp == 1
    assert pop_names(q) == ["second", "first"]


def test_pop_bookkeeping():
    q, clock = make_queue(start=3)
    q.add(make_pod("p"))
    clock.advance_to(4)
    qpi = q.pop()
    assert (qpi.attempts, qpi.initial_attempt_timestamp, q.scheduling_cycle) == (1, 3, 1)
    assert q.where(qpi.pod.uid) == IN_FLIGHT and qpi.pod.uid not in q
    fail(q, qpi, "P", pending=("Q",))
    assert q.is_backing_off(qpi) and qpi.backoff_expiration == 5  # computed lazily
    q.activate([qpi.pod])
    qpi = q.pop()
    assert (qpi.attempts, qpi.initial_attempt_timestamp, q.scheduling_cycle) == (2, 3, 2)
    assert qpi.unschedulable_plugins == set() and qpi.pending_plugins == set()
    assert qpi.backoff_expiration is None


def test_less_mode_matches_sort_key_mode():
    orders = []
    for keyed in (True, False):
        q, clock = make_queue(keyed=keyed)
        for i, prio in enumerate([3, 1, 3, 2, 1, 3]):
            clock.advance_to(i // 2)
            q.add(make_pod(f"p{i}", priority=prio))
        orders.append(pop_names(q))
    assert orders[0] == orders[1] == ["p0", "p2", "p5", "p3", "p1", "p4"]


# ---------------------------------------------------------------------------- backoff


def test_backoff_durations_default():
    q, _ = make_queue()
    assert [q.backoff_duration(n) for n in range(8)] == [0, 1, 2, 4, 8, 10, 10, 10]


def test_backoff_durations_overflow():
    """TestBackoffQueue_calculateBackoffDuration: no overflow for large counts."""
    q, _ = make_queue(initial_backoff=1e-9, max_backoff=32e-9)
    assert q.backoff_duration(16) == pytest.approx(32e-9)
    q, _ = make_queue(initial_backoff=1e-9, max_backoff=2**63 * 1e-9)
    assert q.backoff_duration(64) == pytest.approx(2**63 * 1e-9)


def test_backoff_flow_expirations_truncated():
    """TestBackOffFlow (v1.35 flavour): each failure's backoff is 1, 2, 4, 8, 10, 10 s from
    the failure time, truncated to the whole second; the pod backs off for the whole window
    its expiration falls in and is flushed at the next one."""
    q, clock = make_queue(start=0.4)
    pod = make_pod("p")
    q.add(pod)
    expected = [1, 2, 4, 8, 10, 10]
    for d in expected:
        qpi = q.pop()
        assert qpi is not None and qpi.pod is pod
        t = clock.now()
        fail(q, qpi, "P")
        assert q.where(pod.uid) == UNSCHEDULABLE  # no event: waits in the pool
        q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
        assert q.where(pod.uid) == BACKOFF
        exp = int(t + d)  # truncated
        assert qpi.backoff_expiration == exp
        assert q.next_backoff_expiry() == exp + 1
        clock.advance_to(exp)
        q.flush_backoff_completed()
        assert q.where(pod.uid) == BACKOFF  # still in its expiration's window
        clock.advance_to(exp + 0.999)
        q.flush_backoff_completed()
        assert q.where(pod.uid) == BACKOFF
        clock.advance_to(exp + 1)
        q.flush_backoff_completed()
        assert q.where(pod.uid) == ACTIVE
        clock.advance_to(clock.now() + 0.4)
    assert qpi.unschedulable_count == 6


def test_backoff_without_pop_from_backoff_is_exact():
    q, clock = make_queue(start=0.4, pop_from_backoff=False)
    pod = make_pod("p")
    q.add(pod)
    fail(q, q.pop(), "P")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    qpi = q.get(pod.uid)
    assert qpi.backoff_expiration == pytest.approx(1.4)
    assert q.next_backoff_expiry() == pytest.approx(1.4)
    assert q.pop() is None  # never pops from the backoffQ
    clock.advance_to(1.3)
    q.flush_backoff_completed()
    assert q.where(pod.uid) == BACKOFF
    clock.advance_to(1.4)
    q.flush_backoff_completed()
    assert q.where(pod.uid) == ACTIVE


def test_errors_use_consecutive_errors_count_and_error_queue():
    q, _clock = make_queue(start=10)
    pod = make_pod("p")
    q.add(pod)
    for _ in range(3):  # three plugin rejections
        qpi = q.pop()
        fail(q, qpi, "P")
        q.activate([pod])
    qpi = q.pop()
    fail(q, qpi)  # an error: no rejecting plugin
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == (3, 1)
    assert q.where(pod.uid) == ERROR_BACKOFF
    assert qpi.backoff_expiration == 11  # 1 s for the first error, not 8 s
    assert q.pop() is None  # the error queue is never popped
    q.activate([pod])
    qpi = q.pop()
    fail(q, qpi)
    assert (qpi.consecutive_errors_count, qpi.backoff_expiration) == (2, 12)
    q.activate([pod])
    qpi = q.pop()
    fail(q, qpi, "P")
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == (4, 0)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    assert qpi.backoff_expiration == 18


def test_backoff_queue_pop_each_backoff_completed():
    """TestBackoffQueue_popEachBackoffCompleted."""
    for pop_from_backoff in (True, False):
        q, clock = make_queue(start=100.5, pop_from_backoff=pop_from_backoff)
        now = clock.now()
        infos = {}
        for name, ts, plugins in [("pod0", now - 2, {"plugin"}), ("pod1", now + 1, {"plugin"}),
                                  ("pod2", now - 2, set()), ("pod3", now + 1, set())]:
            qpi = QueuedPodInfo(make_pod(name), timestamp=ts, seq=len(infos), attempts=1,
                                unschedulable_count=1 if plugins else 0,
                                consecutive_errors_count=0 if plugins else 1,
                                unschedulable_plugins=set(plugins))
            infos[name] = qpi
            q._move_to_backoff(qpi, "test")
        assert q.where("default/pod2") == ERROR_BACKOFF
        q.flush_backoff_completed()
        assert sorted(p.pod.name for p in q.active_pods()) == ["pod0", "pod2"]
        assert sorted(p.pod.name for p in q.backoff_pods()) == ["pod1", "pod3"]


def test_backoff_queue_ordering():
    """TestBackoffQueueOrdering: with PopFromBackoffQ, pods whose expirations fall in the same
    window are ordered as in activeQ; windows not yet over are not flushed."""
    q, clock = make_queue(start=100.0)
    t = clock.now()
    specs = [("pod0", 1, t), ("pod1", 1, t - 1), ("pod2", 2, t - 2 + 0.001),
             ("pod3", 1, t - 2), ("pod4", 2, t - 2), ("pod5", 1, t - 3)]
    for i, (name, prio, ts) in enumerate(specs):
        qpi = QueuedPodInfo(make_pod(name, priority=prio), timestamp=ts, seq=i, attempts=1,
                            unschedulable_count=1, unschedulable_plugins={"plugin"})
        q._move_to_backoff(qpi, "test")
    assert [p.pod.name for p in q.backoff_pods()] == [
        "pod5", "pod4", "pod2", "pod3", "pod1", "pod0"]
    q.flush_backoff_completed()
    assert sorted(p.pod.name for p in q.active_pods()) == ["pod2", "pod3", "pod4", "pod5"]
    assert [p.pod.name for p in q.backoff_pods()] == ["pod1", "pod0"]


def test_priority_queue_pop():
    """TestPriorityQueue_Pop: an empty activeQ pops from podBackoffQ (not podErrorBackoffQ)
    only with PopFromBackoffQ."""
    for pop_from_backoff, want in ((True, ["mpp", "hpp"]), (False, ["mpp"])):
        q, _clock = make_queue(pop_from_backoff=pop_from_backoff)
        q.add(make_pod("mpp", priority=MID, nominated="node1"))
        for name, plugins in (("hpp", {"plugin"}), ("hpp2", set())):
            qpi = QueuedPodInfo(make_pod(name, priority=HIGH), timestamp=0, seq=10,
                                attempts=1, unschedulable_plugins=set(plugins),
                                unschedulable_count=1 if plugins else 0,
                                consecutive_errors_count=0 if plugins else 1)
            q._move_to_backoff(qpi, "test")
        up = QueuedPodInfo(make_pod("up", priority=LOW), timestamp=0, seq=11,
                           unschedulable_plugins={"plugin"})
        q._unschedulable[up.pod.uid] = up
        assert pop_names(q) == want


def test_high_priority_backoff():
    """TestHighPriorityBackoff: a high-priority pod that failed goes to backoff and the
    medium one is popped next."""
    q, _clock = make_queue(extensions=hints({NODE_ADD: [("fooPlugin", queue_hint)]}))
    mid = make_pod("mid", priority=MID)
    high = make_pod("high", priority=HIGH)
    q.add(mid)
    q.add(high)
    qpi = q.pop()
    assert qpi.pod is high
    fail(q, qpi, "fooPlugin")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(high.uid) == BACKOFF
    assert q.pop().pod is mid


# ---------------------------------------------------------------------------- flushes


def test_unschedulable_pods_flushed_after_five_minutes():
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration (defaults): strictly longer
    than 300 s since the pod's timestamp, checked on upstream's 30 s flush ticks."""
    q, clock = make_queue()
    pod = make_pod("p")
    q.add(pod)
    assert q.next_unschedulable_timeout() is None
    clock.advance_to(0.5)
    fail(q, q.pop(), "P")
    assert q.next_unschedulable_timeout() == 330
    for t in (300, 300.5, 329.9):  # the last tick is 300: only 299.5 s waited
        clock.advance_to(t)
        q.flush_unschedulable_pods_leftover()
        assert q.where(pod.uid) == UNSCHEDULABLE
    clock.advance_to(330)
    q.flush_unschedulable_pods_leftover()
    assert q.where(pod.uid) == ACTIVE  # backoff (1 s) long over
    assert q.next_unschedulable_timeout() is None


def test_unschedulable_flush_without_ticks_is_strict():
    q, clock = make_queue(leftover_flush_interval=0)
    pod = make_pod("p")
    q.add(pod)
    fail(q, q.pop(), "P")
    assert q.next_unschedulable_timeout() == pytest.approx(300, abs=1e-6)
    clock.advance_to(300)
    q.flush_unschedulable_pods_leftover()
    assert q.where(pod.uid) == UNSCHEDULABLE
    clock.advance_to(300.001)
    q.flush_unschedulable_pods_leftover()
    assert q.where(pod.uid) == ACTIVE


def test_high_priority_flush_unschedulable_pods_leftover():
    """TestHighPriorityFlushUnschedulablePodsLeftover: both leftovers move; the higher
    priority one pops first even though it failed later."""
    q, clock = make_queue()
    mid = make_pod("mid", priority=MID, nominated="node1")
    high = make_pod("high", priority=HIGH)
    q.add(mid)
    q.add(high)
    a = q.pop()
    b = q.pop()
    fail(q, b, "P")  # mid fails first
    clock.advance_to(1)
    fail(q, a, "P")
    clock.advance_to(400)
    q.flush_unschedulable_pods_leftover()
    assert pop_names(q) == ["high", "mid"]


def test_leftover_still_backing_off_goes_to_backoff():
    q, clock = make_queue(max_in_unschedulable=1.0, leftover_flush_interval=0)
    pod = make_pod("p")
    q.add(pod)
    qpi = q.pop()
    qpi.unschedulable_count = 4  # the next failure backs off 10 s
    fail(q, qpi, "P")
    clock.advance_to(2)
    q.flush_unschedulable_pods_leftover()
    assert q.where(pod.uid) == BACKOFF
    assert q.next_backoff_expiry() == 11


def test_flush_backoff_skips_pre_enqueue_with_pop_from_backoff():
    """TestPriorityQueue_moveToActiveQ: a pod leaving the backoffQ is not re-checked by
    PreEnqueue with PopFromBackoffQ (it was checked when it entered)."""
    for pop_from_backoff, want in ((True, ACTIVE), (False, GATED)):
        q, clock = make_queue(pre_enqueue=[SchedulingGates()],
                              pop_from_backoff=pop_from_backoff)
        pod = make_pod("p")
        q.add(pod)
        qpi = q.pop()
        fail(q, qpi, "P")
        q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
        assert q.where(pod.uid) == BACKOFF
        qpi.pod = make_pod("p", gates=("g",))  # sneak a gate in
        clock.advance_to(5)
        q.flush_backoff_completed()
        assert q.where(pod.uid) == want


# ---------------------------------------------------------------------------- hints


@pytest.mark.parametrize(("hint", "where"), [
    (queue_hint, BACKOFF), (skip_hint, UNSCHEDULABLE), (failing_hint, BACKOFF)])
def test_hint_queue_skip_error(hint, where):
    q, _ = make_queue(extensions=hints({NODE_ADD: [("fooPlugin1", hint)]}))
    pod = make_pod("p")
    q.add(pod)
    fail(q, q.pop(), "fooPlugin1")
    q.move_all_to_active_or_backoff(NODE_ADD, None, object())
    assert q.where(pod.uid) == where


def test_hint_of_a_plugin_that_did_not_reject_is_not_asked():
    calls = []

    def spy(pod, old, new):
        calls.append(pod.name)
        return 1

    q, _ = make_queue(extensions=hints({NODE_ADD: [("other", spy), ("fooPlugin1", skip_hint)]}))
    q.add(make_pod("p"))
    fail(q, q.pop(), "fooPlugin1")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert calls == []
    assert q.where("default/p") == UNSCHEDULABLE


def test_pending_plugin_queue_moves_to_active_immediately():
    q, _ = make_queue(extensions=hints({NODE_ADD: [
        ("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint), ("fooPlugin1", queue_hint)]}))
    pod = make_pod("p")
    q.add(pod)
    fail(q, q.pop(), "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",))
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(pod.uid) == ACTIVE
    # only the unschedulable plugin says Queue: after backoff
    q2, _ = make_queue(extensions=hints({NODE_ADD: [
        ("fooPlugin2", queue_hint), ("fooPlugin1", skip_hint)]}))
    q2.add(pod)
    fail(q2, q2.pop(), "fooPlugin2", pending=("fooPlugin1",))
    q2.move_all_to_active_or_backoff(NODE_ADD)
    assert q2.where(pod.uid) == BACKOFF


def test_event_nobody_registered_moves_nothing_and_is_not_recorded():
    q, _ = make_queue(extensions=hints({NODE_ADD: [("fooPlugin1", queue_hint)]}))
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    fail(q, q.pop(), "fooPlugin1")
    q.pop()  # b in flight
    q.move_all_to_active_or_backoff(PV_ADD)
    assert q.where("default/a") == UNSCHEDULABLE
    assert q.in_flight_events() == [q.in_flight_pods()[0]]


def test_wildcard_moves_everything_and_pre_check_filters():
    q, _ = make_queue(extensions=hints({NODE_ADD: [("fooPlugin1", skip_hint)]}))
    for name, prio in (("lo", 1), ("hi", 9)):
        q.add(make_pod(name, priority=prio))
    for qpi in (q.pop(), q.pop()):
        fail(q, qpi, "fooPlugin1")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, pre_check=lambda p: p.priority < 5)
    assert q.where("default/lo") == BACKOFF
    assert q.where("default/hi") == UNSCHEDULABLE
    # a wildcard event naming another pod moves nobody
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, make_pod("x"))
    assert q.where("default/hi") == UNSCHEDULABLE


def test_specific_registration_does_not_match_general_update():
    """MatchClusterEvents: a plugin registered for Node/UpdateNodeLabel is not asked about a
    general Node/Update, but one registered for Node/Update is asked about a label update."""
    label = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL)
    general = ClusterEvent(Resource.NODE, ActionType.UPDATE)
    q, _ = make_queue(extensions=hints({label: [("labels", queue_hint)],
                                        general: [("any", queue_hint)]}))
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    fail(q, q.pop(), "labels")
    fail(q, q.pop(), "any")
    q.move_all_to_active_or_backoff(general)
    assert (q.where("default/a"), q.where("default/b")) == (UNSCHEDULABLE, BACKOFF)
    q.move_all_to_active_or_backoff(label)
    assert q.where("default/a") == BACKOFF


def test_node_add_registration_also_gets_taint_updates():
    """buildQueueingHintMap's workaround: Node/Add without Node/UpdateNodeTaint registers
    UpdateNodeTaint with the default (always Queue) hint."""
    fw = FakeFramework(extensions=hints({NODE_ADD: [("fit", skip_hint)]}))
    hm = build_queueing_hint_map(fw.enqueue_extensions())
    taint = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_TAINT)
    assert [e.plugin for e in hm[taint]] == ["fit"]
    q = SchedulingQueue({DEFAULT: fw}, VirtualClock())
    q.add(make_pod("p"))
    fail(q, q.pop(), "fit")
    q.move_all_to_active_or_backoff(taint)
    assert q.where("default/p") == BACKOFF


def test_unknown_profile_is_requeued_after_backoff():
    q, _ = make_queue(extensions=hints({NODE_ADD: [("fooPlugin1", skip_hint)]}))
    pod = make_pod("p", scheduler="other")
    q.add(pod)
    fail(q, q.pop(), "fooPlugin1")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(pod.uid) == BACKOFF


# ---------------------------------------------------------------------------- gating


def test_gated_pod_released_by_update_removing_gates():
    q, _ = make_queue(pre_enqueue=[SchedulingGates()],
                      extensions=hints({NODE_ADD: [("fooPlugin1", queue_hint)]}))
    gated = make_pod("g", gates=("example.com/gate",), priority=5)
    q.add(gated)
    qpi = q.get(gated.uid)
    assert q.where(gated.uid) == GATED
    assert qpi.gating_plugin == "SchedulingGates"
    assert "SchedulingGates" in qpi.unschedulable_plugins
    assert q.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert q.pop() is None
    # events the gating plugin did not register, and the leftover flush, leave it alone
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.clock.advance_to(1000)
    q.flush_unschedulable_pods_leftover()
    assert q.where(gated.uid) == GATED
    # an update that keeps the gate: still gated
    relabeled = make_pod("g", gates=("example.com/gate",), priority=5, labels={"a": "b"})
    q.update(gated, relabeled)
    assert q.where(gated.uid) == GATED and q.get(gated.uid).pod is relabeled
    # removing the gates re-runs PreEnqueue and releases it
    open_pod = make_pod("g", priority=5, labels={"a": "b"})
    q.update(relabeled, open_pod)
    assert q.where(gated.uid) == ACTIVE
    qpi = q.pop()
    assert qpi.pod is open_pod and not qpi.gated and qpi.attempts == 1


def test_leftover_tick_ignores_an_older_gated_pod():
    # the pool's oldest pod is gated (its gate registered no wildcard): the next tick that
    # moves a pod is the younger rejected pod's, and only that one moves
    q, clock = make_queue(pre_enqueue=[SchedulingGates()])
    gated = make_pod("g", gates=("example.com/gate",))
    q.add(gated)
    clock.advance_to(40.0)
    pod = make_pod("p")
    q.add(pod)
    fail(q, q.pop(), "P")
    assert q.next_unschedulable_timeout() == 360  # 40 + 300, strictly exceeded at tick 360
    clock.advance_to(360)
    q.flush_unschedulable_pods_leftover()
    assert (q.where(gated.uid), q.where(pod.uid)) == (GATED, ACTIVE)
    assert q.next_unschedulable_timeout() is None


def test_gated_pod_not_reconsidered_for_events_its_gate_ignores():
    """movePodsToActiveOrBackoffQueue skips a gated pod unless the gating plugin registered
    the event: PreEnqueue is not even re-run for the wildcard UnschedulableTimeout."""
    calls = []

    class CountingGates(SchedulingGates):
        def pre_enqueue(self, pod):
            calls.append(pod.name)
            return super().pre_enqueue(pod)

    q, clock = make_queue(pre_enqueue=[CountingGates()])
    q.add(make_pod("g", gates=("x",)))
    assert calls == ["g"]
    assert q.next_unschedulable_timeout() is None  # the leftover flush never moves it
    clock.advance_to(1000)
    q.flush_unschedulable_pods_leftover()
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    assert calls == ["g"] and q.where("default/g") == GATED


def test_gated_pod_not_nominated_until_active_before_1_37():
    q, _ = make_queue(pre_enqueue=[SchedulingGates()], nominate_gated=False)
    gated = make_pod("g", gates=("x",), nominated="n1")
    q.add(gated)
    assert q.nominated_pods_for_node("n1") == []
    released = make_pod("g", nominated="n1")
    q.update(gated, released)
    assert q.nominated_pods_for_node("n1") == [released]


def test_gated_pod_nominated_when_added_from_1_37():
    """kubernetes#139057: the nomination is stored before the pod enters the queue, gated
    or not."""
    q, _ = make_queue(pre_enqueue=[SchedulingGates()])
    gated = make_pod("g", gates=("x",), nominated="n1")
    q.add(gated)
    assert q.where(gated.uid) == GATED
    assert q.nominated_pods_for_node("n1") == [gated]
    released = make_pod("g", nominated="n1")
    q.update(gated, released)
    assert q.nominated_pods_for_node("n1") == [released]


def test_gated_after_failure_when_entering_backoff():
    """With PopFromBackoffQ, PreEnqueue runs when a pod enters the backoffQ."""
    q, _ = make_queue(pre_enqueue=[SchedulingGates()],
                      extensions=hints({NODE_ADD: [("fooPlugin1", queue_hint)]}))
    pod = make_pod("p")
    q.add(pod)
    qpi = q.pop()
    fail(q, qpi, "fooPlugin1")
    qpi.pod = make_pod("p", gates=("x",))
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(pod.uid) == GATED


# ---------------------------------------------------------------------------- update / delete


@pytest.fixture
def update_queue():
    q, clock = make_queue(start=1000.25, extensions=hints({UNSCHED_POD_UPDATE: [
        ("queuePlugin", queue_hint), ("skipPlugin", skip_hint)]}))
    return q, clock


def _annotated(pod, value):
    new = make_pod(pod.name, priority=pod.priority, nominated=pod.status.nominated_node_name)
    new.metadata.annotations["foo"] = value
    return new


def test_update_pod_not_in_queue(update_queue):
    """TestPriorityQueue_Update: "Update pod that didn't exist in the queue"."""
    q, _ = update_queue
    med = make_pod("mpp", priority=MID, nominated="node1")
    new = _annotated(med, "test")
    q.update(med, new)
    assert q.where(med.uid) == ACTIVE and q.get(med.uid).pod is new
    assert q.nominated_pods_for_node("node1") == [new]


def test_update_in_active_and_backoff_in_place(update_queue):
    """TestPriorityQueue_Update: pods in activeQ / backoffQ are updated in place."""
    q, _ = update_queue
    high = make_pod("hpp", priority=HIGH)
    q.add(high)
    nominated = make_pod("hpp", priority=HIGH, nominated="node1")
    q.update(high, nominated)
    assert q.where(high.uid) == ACTIVE and q.get(high.uid).pod is nominated
    assert len(q.nominator.nominated) == 1
    med = make_pod("mpp", priority=MID)
    q.add(med)
    qpi = q.pop()  # hpp
    fail(q, qpi, "queuePlugin")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    assert q.where(high.uid) == BACKOFF
    newer = _annotated(nominated, "x")
    q.update(nominated, newer)
    assert q.where(high.uid) == BACKOFF and q.get(high.uid).pod is newer


@pytest.mark.parametrize(("plugin", "step", "where"), [
    ("queuePlugin", 0.0, BACKOFF),        # backoff timer not expired yet
    ("queuePlugin", 10.0, ACTIVE),        # expired (podMaxBackoffDuration later)
    ("skipPlugin", 0.0, UNSCHEDULABLE),   # the hint says QueueSkip
])
def test_update_in_unschedulable_pool(update_queue, plugin, step, where):
    """TestPriorityQueue_Update: pods in unschedulablePods."""
    q, clock = update_queue
    med = make_pod("mpp", priority=MID)
    q.add(med)
    fail(q, q.pop(), plugin)
    assert q.where(med.uid) == UNSCHEDULABLE
    clock.advance_to(clock.now() + step)
    new = _annotated(med, "test1")
    q.update(med, new)
    assert q.where(med.uid) == where and q.get(med.uid).pod is new


def test_update_when_in_flight(update_queue):
    """TestPriorityQueue_UpdateWhenInflight: an update received while the pod is being
    scheduled is replayed when it comes back, so it goes to backoffQ."""
    q, _ = update_queue
    pod = make_pod("test-pod", ns="test-ns")
    q.add(pod)
    qpi = q.pop()
    updated = make_pod("test-pod", ns="test-ns",
                       tolerations=(Toleration(key="foo", effect="NoSchedule"),))
    q.update(pod, updated)
    assert q.where(pod.uid) == IN_FLIGHT
    qpi.pod = updated  # the scheduler refreshes the pod from its informer
    fail(q, qpi, "queuePlugin")
    assert q.where(pod.uid) == BACKOFF and q.get(pod.uid).pod is updated


def test_priority_queue_delete():
    """TestPriorityQueue_Delete."""
    q, _ = make_queue()
    high = make_pod("hpp", ns="ns1", priority=HIGH)
    high_nom = make_pod("hpp", ns="ns1", priority=HIGH, nominated="node1")
    unsched = make_pod("up", ns="ns1", nominated="node1")
    q.update(high, high_nom)
    q.add(unsched)
    q.delete(high_nom)
    assert unsched.uid in q and high.uid not in q
    assert q.nominator.nominated == {"node1": [unsched.uid]}
    q.delete(unsched)
    assert q.nominator.nominated == {} and len(q) == 0


# ---------------------------------------------------------------------------- activate


def test_activate_from_pool_and_backoff():
    """TestPriorityQueue_Activate: "pod in unschedulablePods", "pod in backoffQ"."""
    q, _ = make_queue()
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    fail(q, q.pop(), "P")
    fail(q, q.pop(), "P")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, pre_check=lambda p: p.name == "b")
    assert (q.where(a.uid), q.where(b.uid)) == (UNSCHEDULABLE, BACKOFF)
    q.activate([a, b])
    assert (q.where(a.uid), q.where(b.uid)) == (ACTIVE, ACTIVE)


def test_activate_unknown_or_active_pod_is_a_no_op():
    """TestPriorityQueue_Activate: "pod already in activeQ", "pod not in
    unschedulablePods/backoffQ", and "not in-flight" (another pod is)."""
    q, _ = make_queue()
    active = make_pod("active")
    q.add(make_pod("flying"))
    q.pop()
    q.add(active)
    q.activate([active, make_pod("ghost")])
    assert q.pending_counts()["active"] == 1
    assert len(q.in_flight_events()) == 1  # just the in-flight pod


def test_activate_in_flight_pod_records_force_activate():
    """TestPriorityQueue_Activate: "[QHint] pod not in unschedulablePods/backoffQ but
    in-flight": the ForceActivate event makes it come back to the queue, not the pool."""
    q, _ = make_queue()
    pod = make_pod("hpp", priority=HIGH)
    q.add(pod)
    qpi = q.pop()
    q.activate([pod])
    events = q.in_flight_events()
    assert len(events) == 2 and events[1].event.label == "ForceActivate"
    assert events[1].new_obj is pod and events[1].old_obj is None
    fail(q, qpi, "P")
    assert q.where(pod.uid) == BACKOFF


def test_activate_gated_pod_stays_gated():
    q, _ = make_queue(pre_enqueue=[SchedulingGates()])
    pod = make_pod("g", gates=("x",))
    q.add(pod)
    q.activate([pod])
    assert q.where(pod.uid) == GATED


# ---------------------------------------------------------------------------- in flight


def _in_flight_view(q):
    return [e.event if isinstance(e, InFlightEvent) else e.name for e in q.in_flight_events()]


def test_in_flight_pods_interested_events_recorded():
    """Test_InFlightPods: "Pod and interested events are registered in
    inFlightPods/inFlightEvents"."""
    q, _ = make_queue(extensions=hints({PV_ADD: [("fooPlugin1", queue_hint)]}))
    q.add(make_pod("targetpod"))
    q.move_all_to_active_or_backoff(PVC_ADD)  # no pod in flight: not recorded
    q.pop()
    q.move_all_to_active_or_backoff(PV_ADD)
    q.move_all_to_active_or_backoff(PV_UPDATE)  # nobody registered it
    assert [p.name for p in q.in_flight_pods()] == ["targetpod"]
    assert _in_flight_view(q) == ["targetpod", PV_ADD]


def test_in_flight_intermediate_pod_enqueued_back():
    """Test_InFlightPods: "One intermediate Pod registered in inFlightPods is enqueued back to
    activeQ" — only events nobody needs any more are pruned."""
    q, _ = make_queue(extensions=hints({PV_ADD: [("fooPlugin1", queue_hint)],
                                        NODE_ADD: [("fooPlugin1", queue_hint)],
                                        ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]}))
    for i in (1, 2, 3):
        q.add(make_pod(f"targetpod{i}"))
    q.move_all_to_active_or_backoff(PVC_ADD)
    q.pop()
    q.move_all_to_active_or_backoff(PV_ADD)
    p2 = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.pop()
    q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
    fail(q, p2)  # an error: error backoff
    assert [p.pod.name for p in q.backoff_pods()] == ["targetpod2"]
    assert sorted(p.name for p in q.in_flight_pods()) == ["targetpod1", "targetpod3"]
    assert _in_flight_view(q) == ["targetpod1", PV_ADD, NODE_ADD, "targetpod3",
                                  ASSIGNED_POD_ADD]


def test_in_flight_all_pods_done_prunes_everything():
    """Test_InFlightPods: "All Pods registered in inFlightPods are enqueued back to
    activeQ"."""
    q, _ = make_queue(extensions=hints({ev: [("fooPlugin1", queue_hint)] for ev in (
        PV_ADD, NODE_ADD, PVC_ADD, CSI_NODE_UPDATE)}))
    q.add(make_pod("targetpod"))
    q.add(make_pod("targetpod2"))
    q.move_all_to_active_or_backoff(PVC_ADD)
    p1 = q.pop()
    q.move_all_to_active_or_backoff(PV_ADD)
    p2 = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)
    fail(q, p1)
    assert _in_flight_view(q) == ["targetpod2", NODE_ADD]
    q.move_all_to_active_or_backoff(CSI_NODE_UPDATE)
    fail(q, p2)
    assert q.in_flight_pods() == [] and q.in_flight_events() == []
    assert sorted(p.pod.name for p in q.backoff_pods()) == ["targetpod", "targetpod2"]


@pytest.mark.parametrize(("hint_events", "event", "plugins", "where"), [
    # "pod is enqueued to unschedulable pod pool if no events that can make the pod
    # schedulable": fooPlugin1 has no hint for NodeAdd
    ({ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)], NODE_ADD: [("other", queue_hint)]},
     NODE_ADD, ("fooPlugin1",), UNSCHEDULABLE),
    # "... because the failed plugin has a hint fn but it returns Skip"
    ({ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]}, ASSIGNED_POD_ADD, ("fooPlugin1",),
     UNSCHEDULABLE),
    # "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns
    # Queue"
    ({ASSIGNED_POD_ADD: [("fooPlugin2", skip_hint), ("fooPlugin1", queue_hint)]},
     ASSIGNED_POD_ADD, ("fooPlugin1", "fooPlugin2"), BACKOFF),
    # "pod is enqueued to backoff if no failed plugin" (error backoff)
    ({ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]}, ASSIGNED_POD_ADD, (), ERROR_BACKOFF),
])
def test_in_flight_event_replay(hint_events, event, plugins, where):
    """Test_InFlightPods: events received while in flight are replayed through the hints of
    the plugins that rejected the pod."""
    q, _ = make_queue(extensions=hints(hint_events))
    pod = make_pod("targetpod")
    q.add(pod)
    qpi = q.pop()
    q.move_all_to_active_or_backoff(event)
    fail(q, qpi, *plugins)
    assert q.where(pod.uid) == where
    assert q.in_flight_pods() == [] and q.in_flight_events() == []


def test_in_flight_pending_plugin_gets_active():
    """Test_InFlightPods: "pod is enqueued to activeQ because the Pending plugins has a hint
    fn and it returns Queue"."""
    q, _ = make_queue(extensions=hints({ASSIGNED_POD_ADD: [
        ("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint), ("fooPlugin1", queue_hint)]}))
    pod = make_pod("targetpod")
    q.add(pod)
    qpi = q.pop()
    q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
    fail(q, qpi, "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",))
    assert q.where(pod.uid) == ACTIVE


def test_in_flight_events_before_pop_are_ignored():
    """Test_InFlightPods: "events before popping Pod are ignored when Pod is enqueued back to
    queue"."""
    q, _ = make_queue(extensions=hints({ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]}))
    q.add(make_pod("targetpod"))
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    qpi = q.pop()
    q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
    fail(q, qpi, "fooPlugin1")
    assert q.where("default/targetpod") == UNSCHEDULABLE


def test_in_flight_concurrent_event_of_another_pods_flight():
    """Test_InFlightPods: "pod is enqueued to activeQ because the pending plugin has a hint fn
    and it returns Queue for a concurrent event that was received while some other pod was in
    flight"."""
    q, _ = make_queue(extensions=hints({ASSIGNED_POD_ADD: [
        ("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint), ("fooPlugin1", queue_hint)]}))
    q.add(make_pod("pod1"))
    q.add(make_pod("pod2"))
    p1 = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)
    p2 = q.pop()
    q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
    fail(q, p1)
    fail(q, p2, "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",))
    assert [p.pod.name for p in q.active_pods()] == ["pod2"]
    assert [p.pod.name for p in q.backoff_pods()] == ["pod1"]


def test_add_unschedulable_backoff_after_move_request_while_in_flight():
    """TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff: a wildcard move received while
    the pods were being scheduled sends them to backoffQ when they fail."""
    q, _ = make_queue()
    pods = [make_pod(f"pod{i}", ns=f"ns{i}", priority=i) for i in range(10)]
    for p in pods:
        q.add(p)
    popped = [q.pop() for _ in range(9)]
    assert [qpi.pod for qpi in popped] == pods[:0:-1]
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    assert q.pop().pod is pods[0]
    for qpi in popped:
        fail(q, qpi, "plugin")
    assert all(q.where(p.uid) == BACKOFF for p in pods[1:])


def test_add_unschedulable_if_not_present():
    """TestPriorityQueue_AddUnschedulableIfNotPresent."""
    q, _ = make_queue()
    unsched = make_pod("up", ns="ns1", nominated="node1")
    high = make_pod("hpp", ns="ns1", priority=HIGH, nominated="node1")
    q.add(unsched)
    qpi = q.pop()
    assert qpi.pod is unsched
    q.add(high)
    assert fail(q, qpi, "plugin")
    assert q.pop().pod is high
    assert len(q.nominator.nominated) == 1
    assert q.where(unsched.uid) == UNSCHEDULABLE
    # already present: refused, counts untouched
    assert not fail(q, qpi, "plugin")
    assert qpi.unschedulable_count == 1


def test_pop_twice_tracked_pod_is_discarded():
    """Test_InFlightPods: "Pop is made twice for the same Pod, but the cleanup still happen
    correctly"."""
    q, _ = make_queue()
    p1, p2, p3 = (make_pod(f"targetpod{i}") for i in (1, 2, 3))
    q.add(p1)
    q.add(p2)
    a = q.pop()
    q.pop()
    q._active.add_or_update(QueuedPodInfo(p1, timestamp=0, seq=0))  # simulate the bug
    q.add(p3)
    assert q.pop().pod is p3
    assert q.pending_counts()["active"] == 0
    fail(q, a)
    assert q.where(p1.uid) == ERROR_BACKOFF


# ---------------------------------------------------------------------------- assigned pods


def _cross_topology_queue():
    ev = {ASSIGNED_POD_ADD: [(n, queue_hint) for n in (
        "InterPodAffinity", "PodTopologySpread", "NodeResourcesFit")]}
    q, _ = make_queue(extensions=hints(ev))
    aff = make_pod("aff", affinity_to={"app": "db"})
    spread = make_pod("spread")
    spread_other_ns = make_pod("spread2", ns="other")
    fit = make_pod("fit")
    for p, plugin in ((aff, "InterPodAffinity"), (spread, "PodTopologySpread"),
                      (spread_other_ns, "PodTopologySpread"), (fit, "NodeResourcesFit")):
        q.add(p)
        fail(q, q.pop(), plugin)
    return q, (aff, spread, spread_other_ns, fit)


def test_assigned_pod_added_only_moves_cross_topology_pods():
    """TestPriorityQueue_AssignedPodAdded_: pods whose required affinity matches the new pod,
    or rejected by PodTopologySpread in its namespace."""
    q, (aff, spread, spread_other_ns, fit) = _cross_topology_queue()
    q.assigned_pod_added(make_pod("db-0", labels={"app": "db"}, node="n1"))
    assert [q.where(p.uid) for p in (aff, spread, spread_other_ns, fit)] == [
        BACKOFF, BACKOFF, UNSCHEDULABLE, UNSCHEDULABLE]


def test_assigned_pod_added_affinity_must_match():
    q, (aff, spread, *_rest) = _cross_topology_queue()
    q.assigned_pod_added(make_pod("web-0", ns="other", labels={"app": "web"}, node="n1"))
    assert q.where(aff.uid) == UNSCHEDULABLE and q.where(spread.uid) == UNSCHEDULABLE


def test_assigned_pod_updated_scale_down_moves_all():
    ev = ClusterEvent(Resource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
    q, _ = make_queue(extensions=hints({ClusterEvent(Resource.POD, ActionType.UPDATE): [
        ("NodeResourcesFit", queue_hint)]}))
    fit = make_pod("fit")
    q.add(fit)
    fail(q, q.pop(), "NodeResourcesFit")
    old = make_pod("x", node="n1")
    label_ev = ClusterEvent(Resource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
    q.assigned_pod_updated(old, old, label_ev)
    assert q.where(fit.uid) == UNSCHEDULABLE
    q.assigned_pod_updated(old, old, ev)
    assert q.where(fit.uid) == BACKOFF


def test_unschedulable_pod_with_gated_plugin_events_moves_on_that_event():
    """A gated pod is considered for an event the gating plugin registered."""
    q, _ = make_queue(pre_enqueue=[SchedulingGates()])
    pod = make_pod("g", gates=("x",))
    q.add(pod)
    ev = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    released = make_pod("g")
    q.get(pod.uid).pod = released
    q.move_all_to_active_or_backoff(ev, pod, released)
    assert q.where(pod.uid) == ACTIVE
