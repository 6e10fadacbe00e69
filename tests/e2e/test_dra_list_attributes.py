"""List-type device attributes (KEP-5491, DRAListTypeAttributes) end to end in the simulator,
the invariant checker on: with the gate on, a matchAttribute constraint takes devices whose
lists of NUMA nodes share one, and a selector's ``includes`` looks into a list; with the gate
off (the default) the allocator compares values as scalars, and a list matches nothing."""

from __future__ import annotations

from typing import Any

from kubesched.api.dra.store import dra_index
from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config.features import FeatureGates
from kubesched.config.load import default_config

SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {numa: {ints: [0, 1]}}}
  - {name: gpu-1, attributes: {numa: {ints: [2]}}}
  - {name: gpu-2, attributes: {numa: {ints: [1, 2]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: pair, namespace: default}
spec:
  devices:
    requests: [{name: gpus, exactly: {deviceClassName: gpu, count: 2}}]
    constraints: [{matchAttribute: gpu.example.com/numa}]
---
apiVersion: v1
kind: Pod
metadata: {name: pair, namespace: default}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: gpus, resourceClaimName: pair}]
"""

ON_NUMA_2 = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: numa2, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].numa.includes(2)'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: numa2, namespace: default}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: gpu, resourceClaimName: numa2}]
"""


def simulate(text: str, gates: FeatureGates) -> tuple[SimCluster, dict[str, Any]]:
    # loaded without gates: the objects as stored, as a cluster that had the gate on
    # keeps them after it is turned off
    sim = SimCluster(load_scenario_text(text, "test.yaml", strict=True), default_config(gates),
                     check=True)
    result = sim.run()
    return sim, {r.as_json()["pod"]: r.as_json() for r in result.records}


def devices(sim: SimCluster, claim: str) -> list[str]:
    allocation = dra_index(sim.scheduler.handle.objects).claim("default", claim).allocation
    assert allocation is not None
    return [r.device for r in allocation.results]


def test_match_attribute_on_common_list_values() -> None:
    # gpu-0 {0, 1} and gpu-2 {1, 2} share NUMA node 1; gpu-1 {2} shares none with gpu-0
    sim, lines = simulate(SCENARIO + ON_NUMA_2,
                          FeatureGates("1.37", (("DRAListTypeAttributes", True),)))
    assert lines["default/pair"]["node"] == "n1"
    assert devices(sim, "pair") == ["gpu-0", "gpu-2"]
    # the one device left, gpu-1, has NUMA node 2 in its list
    assert lines["default/numa2"]["node"] == "n1"
    assert devices(sim, "numa2") == ["gpu-1"]


def test_lists_match_nothing_with_the_gate_off() -> None:
    _, lines = simulate(SCENARIO, FeatureGates("1.37"))
    assert lines["default/pair"]["node"] is None
    assert "cannot allocate all claims" in lines["default/pair"]["message"]
