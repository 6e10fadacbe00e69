"""Workload definitions build scheduler_perf's objects (no timing is asserted anywhere)."""

from __future__ import annotations

import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import HOSTNAME_LABEL, ZONE_LABEL
from kubesched.bench import runner
from kubesched.bench.workloads import (
    CHURN_NODE,
    CHURN_SERVICE,
    POD_TEMPLATES,
    WORKLOADS,
    Workload,
    churn_node,
    make_pod,
    node_default,
    select,
)

MI = 1024 * 1024

# issue 5's list: name → (nodes, init pods, measured pods, upstream threshold)
ISSUE_5 = {
    "SchedulingBasic/5000Nodes_10000Pods": (5000, 1000, 10000, 680),
    "SchedulingNodeAffinity/5000Nodes_10000Pods": (5000, 5000, 10000, 220),
    "TopologySpreading/5000Nodes_5000Pods": (5000, 5000, 5000, 460),
    "PreferredTopologySpreading/5000Nodes_5000Pods": (5000, 5000, 5000, 340),
    "SchedulingPodAntiAffinity/5000Nodes_2000Pods": (5000, 1000, 2000, 60),
    "SchedulingPodAffinity/5000Nodes_5000Pods": (5000, 5000, 5000, 35),
    "SchedulingPreferredPodAffinity/5000Nodes_5000Pods": (5000, 5000, 5000, 90),
    "SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods": (5000, 5000, 5000, 90),
    "SchedulingWithMixedChurn/5000Nodes_10000Pods": (5000, 0, 10000, 710),
    "PreemptionAsync/5000Nodes": (5000, 20000, 5000, 570),
    "Unschedulable/5kNodes/100Init/10kPods": (5000, 100, 10000, 590),
    "PreemptionBasic/1000Nodes": (1000, 4000, 1000, 0),
}


@pytest.mark.parametrize("name", sorted(ISSUE_5))
def test_issue_workloads_have_upstream_sizes_and_thresholds(name):
    w = WORKLOADS[name]
    assert (w.nodes, w.init_pods, w.measured_pods, w.threshold) == ISSUE_5[name]


def test_every_family_has_a_500_node_size():
    families = {n.split("/", 1)[0] for n in ISSUE_5}
    quick = {w.name.split("/", 1)[0] for w in WORKLOADS.values() if w.quick}
    assert families <= quick
    assert all(w.nodes == 500 for w in WORKLOADS.values() if w.quick)


def test_issue_targets_for_scheduling_basic():
    assert WORKLOADS["SchedulingBasic/5000Nodes_10000Pods"].target == 2000
    pct100 = WORKLOADS["SchedulingBasic/5000Nodes_10000Pods_PercentageOfNodesToScore100"]
    assert (pct100.percentage_of_nodes_to_score, pct100.target) == (100, 1000)


def test_node_default_template():
    n = parse_node(node_default(7, "zone2"))
    assert n.name == "scheduler-perf-00007"
    assert n.labels == {HOSTNAME_LABEL: n.name, ZONE_LABEL: "zone2"}
    assert n.status.allocatable == {"cpu": 4000, "memory": 32 * 1024 * MI, "pods": 110}
    assert ZONE_LABEL not in parse_node(node_default(0)).labels


def test_churn_node_has_no_room_and_no_labels():
    n = parse_node(churn_node(0))
    assert n.status.allocatable.get("pods") == 0
    assert n.labels == {}


@pytest.mark.parametrize("name, zones", [
    ("SchedulingBasic/5000Nodes_10000Pods", ()),
    ("SchedulingNodeAffinity/5000Nodes_10000Pods", ("zone1",)),
    ("SchedulingPodAffinity/5000Nodes_5000Pods", ("zone1",)),
    ("TopologySpreading/5000Nodes_5000Pods", ("moon-1", "moon-2", "moon-3")),
    ("PreferredTopologySpreading/500Nodes", ("moon-1", "moon-2", "moon-3")),
    ("SchedulingPodAntiAffinity/5000Nodes_2000Pods", ()),
])
def test_zone_labels_as_scheduler_perf_prepares_them(name, zones):
    w = WORKLOADS[name]
    assert w.zones == zones
    got = [w.zone_of(i) for i in range(6)]
    assert got == ([zones[i % len(zones)] for i in range(6)] if zones else [None] * 6)


def test_namespaces_as_the_templates_use_them():
    for fam in ("SchedulingPodAntiAffinity", "SchedulingPodAffinity",
                "SchedulingPreferredPodAffinity", "SchedulingPreferredPodAntiAffinity"):
        for w in select([fam]):
            assert [op.namespace for op in w.init] == ["sched-0"]
            assert w.measured.namespace == "sched-1"
    w = WORKLOADS["PreemptionAsync/5000Nodes"]
    assert (w.init[0].namespace, w.churn.namespace, w.measured.namespace) == (
        "namespace-1", "namespace-2", "namespace-3")
    w = WORKLOADS["SchedulingBasic/5000Nodes_10000Pods"]
    assert (w.init[0].namespace, w.measured.namespace) == ("namespace-1", "namespace-2")


def test_churn_ops():
    w = WORKLOADS["PreemptionAsync/5000Nodes"]
    assert (w.churn.mode, w.churn.templates, w.churn.interval_ms) == (
        "create", ("pod-high-priority",), 200)
    w = WORKLOADS["Unschedulable/5kNodes/100Init/10kPods"]
    assert w.churn.templates == ("pod-high-priority-large-cpu",)
    w = WORKLOADS["SchedulingWithMixedChurn/5000Nodes_10000Pods"]
    assert (w.churn.mode, w.churn.interval_ms) == ("recreate", 1000)
    assert w.churn.templates == (CHURN_NODE, "pod-high-priority-large-cpu", CHURN_SERVICE)


def test_pod_default_requests():
    p = parse_pod(make_pod("pod-default", 3, "namespace-2"))
    assert (p.name, p.namespace) == ("pod-00003", "namespace-2")
    assert p.requests == {"cpu": 100, "memory": 500 * MI}
    assert p.spec.containers[0].ports[0].container_port == 80
    assert p.spec.containers[0].ports[0].host_port == 0
    assert p.priority == 0


def test_priority_templates():
    low = parse_pod(make_pod("pod-low-priority", 0, "ns"))
    assert (low.requests["cpu"], low.priority, low.spec.termination_grace_period_seconds) == (
        900, 0, 0)
    high = parse_pod(make_pod("pod-high-priority", 0, "ns"))
    assert (high.requests["cpu"], high.priority) == (3000, 10)
    big = parse_pod(make_pod("pod-high-priority-large-cpu", 0, "ns"))
    assert (big.requests["cpu"], big.priority, big.name) == (9000, 10, "pod-h-00000")
    assert big.spec.containers[0].limits == {}


def test_affinity_templates():
    anti = parse_pod(make_pod("pod-with-pod-anti-affinity", 0, "sched-1"))
    (term,) = anti.spec.affinity.pod_anti_affinity.required
    assert anti.labels == {"color": "green"}
    assert term.topology_key == HOSTNAME_LABEL
    assert set(term.namespaces) == {"sched-0", "sched-1"}
    assert term.label_selector.match_labels == (("color", "green"),)

    aff = parse_pod(make_pod("pod-with-pod-affinity", 0, "sched-1"))
    (term,) = aff.spec.affinity.pod_affinity.required
    assert (aff.labels, term.topology_key) == ({"color": "blue"}, ZONE_LABEL)

    for template, color, attr in (("pod-with-preferred-pod-affinity", "red", "pod_affinity"),
                                  ("pod-with-preferred-pod-anti-affinity", "yellow",
                                   "pod_anti_affinity")):
        p = parse_pod(make_pod(template, 0, "sched-1"))
        (wt,) = getattr(p.spec.affinity, attr).preferred
        assert (p.labels, wt.weight, wt.term.topology_key) == (
            {"color": color}, 1, HOSTNAME_LABEL)

    na = parse_pod(make_pod("pod-with-node-affinity", 0, "ns"))
    (t,) = na.spec.affinity.node_affinity.required
    (req,) = t.match_expressions
    assert (req.key, req.operator, req.values) == (ZONE_LABEL, "In", ("zone1", "zone2"))


@pytest.mark.parametrize("template, when", [
    ("pod-with-topology-spreading", "DoNotSchedule"),
    ("pod-with-preferred-topology-spreading", "ScheduleAnyway"),
])
def test_spread_templates(template, when):
    p = parse_pod(make_pod(template, 0, "ns"))
    (c,) = p.spec.topology_spread_constraints
    assert (c.max_skew, c.topology_key, c.when_unsatisfiable) == (5, ZONE_LABEL, when)
    assert c.label_selector.match_labels == (("color", "blue"),)
    assert p.labels == {"color": "blue"}


def test_every_template_parses():
    for name in POD_TEMPLATES:
        parse_pod(make_pod(name, 1, "ns"))


def test_select():
    assert all(w.quick for w in select([], quick=True))
    full = select([])
    assert len(full) == len([w for w in WORKLOADS.values() if not w.extra])
    assert not any(w.nodes == 1000 and w.name != "PreemptionBasic/1000Nodes" for w in full)
    basic = select(["SchedulingBasic"])
    assert {w.name for w in basic} >= {"SchedulingBasic/500Nodes",
                                      "SchedulingBasic/5000Nodes_10000Pods"}
    assert [w.name for w in select(["SchedulingBasic"], quick=True)] == [
        "SchedulingBasic/500Nodes"]
    assert [w.nodes for w in basic] == [500, 1000, 5000, 5000, 5000]  # a family: all sizes
    with pytest.raises(KeyError):
        select(["NoSuchWorkload"])


def test_scaling_sizes_are_extra_and_double_the_500_node_pods():
    w500, w1000 = WORKLOADS["TopologySpreading/500Nodes"], WORKLOADS["TopologySpreading/1000Nodes"]
    assert w1000.extra and not w500.extra
    assert (w1000.init_pods, w1000.measured_pods) == (2 * w500.init_pods, 2 * w500.measured_pods)
    assert w1000.zones == w500.zones
    assert WORKLOADS["SchedulingWithMixedChurn/1000Nodes"].measured_pods == 1000  # upstream's


def test_build_cluster_nodes_and_namespaces():
    w = WORKLOADS["TopologySpreading/500Nodes"]
    sim = runner.build_cluster(w)
    sim.load()
    nodes = sim.scheduler.cache.nodes
    assert len(nodes) == 500
    zones = sorted({ni.node.labels[ZONE_LABEL] for ni in nodes.values()})
    assert zones == ["moon-1", "moon-2", "moon-3"]
    assert set(sim.scenario.namespaces) >= {"namespace-1", "namespace-2"}


def test_percentage_config():
    w = WORKLOADS["SchedulingBasic/5000Nodes_10000Pods_PercentageOfNodesToScore100"]
    sim = runner.build_cluster(Workload(w.name, 5, (), w.measured,
                                        percentage_of_nodes_to_score=100))
    assert sim.scheduler.config.percentage_of_nodes_to_score == 100


def test_preemption_workloads_report_when_the_plugin_is_missing(monkeypatch):
    monkeypatch.setattr(runner, "preemption_available", lambda: False)
    for name in ("PreemptionAsync/500Nodes", "PreemptionBasic/1000Nodes",
                 "Unschedulable/500Nodes/10Init/1kPods"):
        r = runner.run_workload(WORKLOADS[name])
        assert r["status"] == runner.NEEDS_PREEMPTION
        assert r["pods_per_second"] is None
