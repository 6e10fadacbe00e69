"""Event matching, derived Pod update events, the affinity pre-check helper, and two of
upstream's "retried pods go back" cases."""

from __future__ import annotations

from queue_fakes import fail, make_pod, make_queue

from kubesched.api.types import (
    LabelSelector,
    LabelSelectorRequirement,
    PodAffinityTerm,
    Toleration,
)
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ActionType,
    ClusterEvent,
    Resource,
)
from kubesched.queue import (
    match_cluster_events,
    pod_scheduling_properties_change,
)
from kubesched.queue.affinity import selector_matches, term_matches

HIGH = 1000


def ev(resource, action):
    return ClusterEvent(resource, action)


def test_match_cluster_events():
    """framework.MatchClusterEvents (types_test.go TestMatchClusterEvents, in substance)."""
    assert match_cluster_events(WILDCARD, NODE_ADD)
    assert match_cluster_events(ev(Resource.NODE, ActionType.ALL), NODE_ADD)
    assert match_cluster_events(ev(Resource.NODE, ActionType.UPDATE),
                                ev(Resource.NODE, ActionType.UPDATE_NODE_LABEL))
    # a more specific registration does not cover the general incoming Update
    assert not match_cluster_events(ev(Resource.NODE, ActionType.UPDATE_NODE_LABEL),
                                    ev(Resource.NODE, ActionType.UPDATE))
    assert not match_cluster_events(ev(Resource.NODE, ActionType.ADD),
                                    ev(Resource.NODE, ActionType.DELETE))
    # Pod covers assigned and unscheduled pods, not the other way round
    assert match_cluster_events(ev(Resource.POD, ActionType.ADD), ASSIGNED_POD_ADD)
    assert not match_cluster_events(ASSIGNED_POD_ADD, ev(Resource.POD, ActionType.ADD))
    assert not match_cluster_events(ev(Resource.ASSIGNED_POD, ActionType.ADD),
                                    ev(Resource.UNSCHEDULED_POD, ActionType.ADD))
    # an incoming wildcard only matches a registered wildcard
    assert not match_cluster_events(NODE_ADD, UNSCHEDULABLE_TIMEOUT)
    assert match_cluster_events(ev(Resource.WILDCARD, ActionType.ADD), NODE_ADD)


def test_pod_scheduling_properties_change():
    old = make_pod("p", labels={"a": "1"}, gates=("g",))
    old.requests = {"cpu": 1000, "memory": 10}
    new = make_pod("p", labels={"a": "2"}, tolerations=(Toleration(key="k"),))
    new.requests = {"cpu": 500, "memory": 10}
    got = [(e.resource, e.action) for e in pod_scheduling_properties_change(new, old)]
    U = Resource.UNSCHEDULED_POD
    assert got == [(U, ActionType.UPDATE_POD_LABEL), (U, ActionType.UPDATE_POD_SCALE_DOWN),
                   (U, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                   (U, ActionType.UPDATE_POD_TOLERATION)]
    bound = make_pod("p", node="n1")
    got = pod_scheduling_properties_change(bound, bound)
    assert [(e.resource, e.action) for e in got] == [(Resource.ASSIGNED_POD, ActionType.UPDATE)]
    # removing a resource request is a scale down too
    smaller = make_pod("p", node="n1")
    smaller.requests = {"cpu": 1000}
    assert [e.action for e in pod_scheduling_properties_change(smaller, old)][1] == \
        ActionType.UPDATE_POD_SCALE_DOWN


def test_selector_and_term_matching():
    assert not selector_matches(None, {"a": "b"})  # nil matches nothing
    assert selector_matches(LabelSelector(), {})  # empty matches everything
    sel = LabelSelector(match_labels=(("app", "db"),), match_expressions=(
        LabelSelectorRequirement("tier", "In", ("a", "b")),
        LabelSelectorRequirement("zone", "NotIn", ("z1",)),
        LabelSelectorRequirement("x", "DoesNotExist"),
        LabelSelectorRequirement("tier", "Exists")))
    assert selector_matches(sel, {"app": "db", "tier": "a"})
    assert not selector_matches(sel, {"app": "db", "tier": "c"})
    assert not selector_matches(sel, {"app": "db", "tier": "a", "zone": "z1"})
    assert not selector_matches(sel, {"app": "db", "tier": "a", "x": ""})
    owner = make_pod("o", ns="ns1")
    target = make_pod("t", ns="ns2", labels={"app": "db"})
    term = PodAffinityTerm(label_selector=LabelSelector((("app", "db"),)), topology_key="h")
    assert not term_matches(owner, term, target, {})  # owner's namespace by default
    term_ns = PodAffinityTerm(label_selector=LabelSelector((("app", "db"),)), topology_key="h",
                              namespaces=("ns2",))
    assert term_matches(owner, term_ns, target, {})
    term_sel = PodAffinityTerm(label_selector=LabelSelector((("app", "db"),)), topology_key="h",
                               namespace_selector=LabelSelector((("team", "x"),)))
    assert term_matches(owner, term_sel, target, {"team": "x"})
    assert not term_matches(owner, term_sel, target, {"team": "y"})


def test_recently_tried_pods_go_back():
    """TestRecentlyTriedPodsGoBack: a pod tried and found unschedulable goes behind the
    pods of the same priority once moved back."""
    q, clock = make_queue(start=100.0)
    for i in range(5):
        q.add(make_pod(f"test-pod-{i}", ns="ns1", priority=HIGH, nominated="node1"))
    clock.advance_to(100.000001)
    p1 = q.pop()
    fail(q, p1, "plugin")
    clock.advance_to(101.000001)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    popped = [q.pop() for _ in range(5)]
    assert popped[-1] is p1 and p1 not in popped[:-1]


def test_pod_failed_multiple_times_does_not_block_newer_pod():
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod."""
    q, clock = make_queue(start=100.0)
    unsched = make_pod("test-pod-unscheduled", ns="ns1", priority=HIGH, nominated="node1")
    q.add(unsched)
    p = q.pop()
    fail(q, p, "plugin")
    clock.advance_to(102)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    p1 = q.pop()
    assert p1.pod is unsched
    newer = make_pod("test-newer-pod", ns="ns1", priority=HIGH, nominated="node1")
    q.add(newer)
    fail(q, p1, "plugin")
    clock.advance_to(104)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    assert q.pop().pod is newer
