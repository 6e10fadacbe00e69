"""Consumable capacity (KEP-5075) end to end in the simulator, the invariant checker on: a
device allowing multiple allocations is shared by claims until its capacity is used up
(requests rounded up by the capacity's request policy), each allocation with its own shareID
and consumedCapacity; what finished pods consumed is free again; with DRAConsumableCapacity
off (1.35) the device is allocated once."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kubesched.api.dra.store import dra_index
from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config.features import FeatureGates
from kubesched.config.load import default_config

GI = 2**30


def scenario(*requests: tuple[str, float | None]) -> str:
    """One node with one NIC of 10Gi bandwidth (default 1Gi a share, steps of 1Gi); a pod
    per (bandwidth request, duration)."""
    docs = ["""
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors:
  - cel:
      expression: 'device.driver == "nic.example.com"
        && device.allowMultipleAllocations'
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-nics}
spec:
  driver: nic.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: nic-0
    allowMultipleAllocations: true
    capacity:
      bandwidth:
        value: 10Gi
        requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}
"""]
    for i, (bw, duration) in enumerate(requests):
        ann = f'annotations: {{kubesched.io/duration: "{duration}"}}' if duration else ""
        docs.append(f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c{i}, namespace: default}}
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: nic
        capacity: {{requests: {{bandwidth: {bw}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: default, {ann}}}
spec:
  containers: [{{name: c, image: x}}]
  resourceClaims: [{{name: nic, resourceClaimName: c{i}}}]
""")
    return "".join(docs)


def simulate(text: str, version: str | None = None) -> tuple[SimCluster, dict[str, Any]]:
    cfg = default_config(FeatureGates(version)) if version else None
    sim = SimCluster(load_scenario_text(text, "test.yaml", strict=True), cfg, check=True)
    result = sim.run()
    return sim, {r.as_json()["pod"]: r.as_json() for r in result.records}


def test_shared_until_capacity_is_used_up() -> None:
    # 3.5Gi is rounded up to the next step, 4Gi: 4 + 4 fit in 10Gi, a third 4Gi does not
    sim, lines = simulate(scenario(("3.5Gi", None), ("4Gi", None), ("4Gi", None)))
    assert [lines[f"default/p{i}"]["node"] for i in range(3)] == ["n1", "n1", None]
    assert "cannot allocate all claims" in lines["default/p2"]["message"]
    idx = dra_index(sim.scheduler.handle.objects)
    results = [idx.claim("default", f"c{i}").allocation.results[0] for i in range(2)]
    assert [r.consumed_capacity for r in results] == [{"bandwidth": Fraction(4 * GI)}] * 2
    assert results[0].share_id and results[1].share_id
    assert results[0].share_id != results[1].share_id


def test_capacity_of_finished_pods_is_free_again() -> None:
    _, lines = simulate(scenario(("6Gi", 30.0), ("6Gi", None)))
    assert lines["default/p0"]["node"] == "n1"
    assert (lines["default/p1"]["node"], lines["default/p1"]["time"]) == ("n1", 30.0)


def test_requests_outside_the_policy_do_not_fit() -> None:
    # above the device's capacity: no share can hold it
    _, lines = simulate(scenario(("11Gi", None)))
    assert lines["default/p0"]["node"] is None


def test_off_in_1_35() -> None:
    # DRAConsumableCapacity is alpha (off) in 1.35: the stable allocator ignores capacity
    # requests and allocates the device to one claim only; the class's
    # device.allowMultipleAllocations is unknown to CEL then, a runtime error
    _, lines = simulate(scenario(("1Gi", None)), version="1.35")
    assert lines["default/p0"]["node"] is None
    assert "allowMultipleAllocations" in lines["default/p0"]["message"]
