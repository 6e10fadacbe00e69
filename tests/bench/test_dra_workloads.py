"""scheduler_perf's DRA workloads (``dra/performance-config.yaml``): sizes, thresholds and
templates as upstream's, and the ops (createResourceDriver, allocResourceClaims, the
steady-state createPods) doing what upstream's do, on small sizes with the invariant
checker on. No timing is asserted."""

from __future__ import annotations

import dataclasses

import pytest

from kubesched.api.dra.store import dra_index
from kubesched.api.parse import parse_node, parse_pod
from kubesched.bench import runner
from kubesched.bench.workloads import (
    DRA_CLAIM_TEMPLATE,
    DRA_CLASS,
    DRA_DRIVER,
    WORKLOADS,
    PodOp,
    make_pod,
    node_with_dra_test_driver,
)

# upstream's 500-node cases: name -> (DRA nodes, init pods, measured pods, devices per node,
# claims allocated beforehand, threshold with queueing hints (without))
UPSTREAM = {
    "SchedulingWithResourceClaimTemplate/5000pods_500nodes_QueueingHintsEnabled":
        (500, 2500, 2500, 10, 0, 56, 40),
    "SteadyStateClusterResourceClaimTemplate/empty_500nodes_QueueingHintsEnabled":
        (500, 0, 10, 10, 0, 64, 64),
    "SteadyStateClusterResourceClaimTemplate/half_500nodes_QueueingHintsEnabled":
        (500, 0, 10, 10, 2500, 60, 70),
    "SteadyStateClusterResourceClaimTemplate/full_500nodes_QueueingHintsEnabled":
        (500, 0, 10, 10, 4990, 60, 60),
    "SchedulingWithResourceClaim/5000pods_500nodes": (500, 2500, 2500, 2, 0, 0, 0),
}


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_dra_workloads_have_upstream_sizes_and_thresholds(name: str) -> None:
    w = WORKLOADS[name]
    nodes, init, measured, devices, allocated, thr, thr_off = UPSTREAM[name]
    assert w.dra is not None and not w.extra and w.quick
    assert (w.dra.nodes, w.nodes, w.init_pods, w.measured_pods, w.dra.max_claims_per_node) == (
        nodes, nodes, init, measured, devices)
    assert sum(n for ns, n in w.dra.claims if ns in w.dra.allocate) == allocated
    assert w.threshold == thr
    assert w.target == 5 * max(thr, thr_off)
    assert w.steady == name.startswith("SteadyState")
    if w.steady:
        assert w.measured.steady_seconds == 10


def test_smaller_sizes_are_listed_but_extra() -> None:
    small = [w for w in WORKLOADS.values() if w.dra is not None and w.nodes < 500]
    assert len(small) == 2 + 6 + 2 and all(w.extra for w in small)
    w = WORKLOADS["SchedulingWithResourceClaim/2000pods_100nodes"]
    assert w.dra is not None and w.dra.claims == (("init", 200), ("test", 200))


def test_templates() -> None:
    n = parse_node(node_with_dra_test_driver(3))
    assert n.name == "scheduler-perf-dra-3"
    assert n.status.allocatable["pods"] == 110
    p = parse_pod(make_pod("pod-with-claim-template", 7, "test"))
    (pc,) = p.spec.pod_resource_claims
    assert (pc.name, pc.resource_claim_template_name) == ("resource", DRA_CLAIM_TEMPLATE)
    assert p.requests == {}
    shared = [parse_pod(make_pod("pod-with-claim-ref", i, "init")) for i in range(11)]
    assert [p.name for p in shared[:2]] == ["test-dra-0", "test-dra-1"]
    assert [p.spec.pod_resource_claims[0].resource_claim_name for p in shared][4:6] == [
        "test-claim-0", "test-claim-1"]


def _tiny(name: str, **dra: int) -> runner.Workload:
    w = WORKLOADS[name]
    assert w.dra is not None
    return dataclasses.replace(w, nodes=dra["nodes"],
                               dra=dataclasses.replace(w.dra, **dra))


def test_resource_driver_and_alloc_resource_claims() -> None:
    w = _tiny("SteadyStateClusterResourceClaimTemplate/half_500nodes_QueueingHintsEnabled",
              nodes=6, claims=(("init", 31),))
    sim = runner.build_cluster(w)
    objects = sim.scheduler.handle.objects
    idx = dra_index(objects)
    assert [c.name for c in idx.classes.values()] == [DRA_CLASS]
    assert sorted(s.name for s in idx.slices) == [f"scheduler-perf-dra-{i}" for i in range(6)]
    s = next(s for s in idx.slices if s.name == "scheduler-perf-dra-0")
    assert (s.driver, s.pool, s.node_name, len(s.devices)) == (
        DRA_DRIVER, s.name, s.name, 10)
    claims = [c for c in idx.claims.values() if c.namespace == "init"]
    assert len(claims) == 31 and all(c.allocation is not None for c in claims)
    assert all(not c.reserved_for for c in claims)
    assert len(idx.allocated()) == 31  # no device twice
    again = dra_index(runner.build_cluster(w).scheduler.handle.objects)
    assert {c.name: c.allocation for c in again.claims.values()} == {
        c.name: c.allocation for c in idx.claims.values()}  # seeded: runs replay


def test_claim_template_workload_fills_every_device() -> None:
    w = _tiny("SchedulingWithResourceClaimTemplate/5000pods_500nodes_QueueingHintsEnabled",
              nodes=3)
    w = dataclasses.replace(w, init=(PodOp("pod-with-claim-template", 15, "init"),),
                            measured=PodOp("pod-with-claim-template", 15, "test"))
    r = runner.run_workload(w, check=True, timeout=60)
    assert (r["status"], r["scheduled"], r["init_unscheduled"]) == ("ok", 15, 0)


def test_shared_claims_workload() -> None:
    w = _tiny("SchedulingWithResourceClaim/5000pods_500nodes", nodes=3,
              claims=(("init", 2), ("test", 2)))
    w = dataclasses.replace(w, init=(PodOp("pod-with-claim-ref", 10, "init"),),
                            measured=PodOp("pod-with-claim-ref", 10, "test"))
    r = runner.run_workload(w, check=True, timeout=60)
    assert (r["status"], r["scheduled"], r["init_unscheduled"]) == ("ok", 10, 0)


def test_steady_state_deletes_each_batch_and_creates_the_next(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = _tiny("SteadyStateClusterResourceClaimTemplate/full_500nodes_QueueingHintsEnabled",
              nodes=3, claims=(("init", 20),))  # room for exactly 10 more pods
    w = dataclasses.replace(w, measured=dataclasses.replace(w.measured, steady_seconds=1.0))
    seen = {}
    orig = runner.SteadyState.bound

    def look(sim: object) -> None:
        idx = dra_index(sim.scheduler.handle.objects)  # type: ignore[attr-defined]
        seen["max_claims"] = max(seen.get("max_claims", 0), len(idx.claims))
        seen["allocated"] = max(seen.get("allocated", 0), len(idx.allocated()))
        seen["pods"] = max(seen.get("pods", 0), sum(
            1 for p in sim.pods.values() if p.namespace == "test"))  # type: ignore[attr-defined]

    def bound(self: runner.SteadyState) -> None:
        look(self.sim)
        orig(self)
        look(self.sim)

    monkeypatch.setattr(runner.SteadyState, "bound", bound)
    r = runner.run_workload(w, check=True, timeout=60)
    assert r["status"] == "ok"
    assert r["steady_batches"] >= 2 and r["scheduled"] >= 10
    # a batch's pods and claims are gone before the next batch's are made
    assert seen == {"max_claims": 20 + 10, "allocated": 30, "pods": 10}
