"""Binding conditions (KEP-5007) end to end in the simulator: PreBind holds the pod until
the device's driver reports its binding conditions True (a ``DeviceCondition`` Fault plays
the driver), a binding failure condition or the binding timeout makes the next attempt
deallocate the claim (PostFilter) and allocate again, and pools whose devices need binding
conditions are tried after the others."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra.store import dra_index
from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config.features import FeatureGates
from kubesched.config.load import default_config, load_config
from kubesched.errors import InputError

DRIVER = "fabric.example.com"


def scenario(*faults: str, timeout: str | None = None, plain_gpu: bool = False) -> str:
    plain = f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: a-plain}}
spec:
  driver: {DRIVER}
  nodeName: n1
  pool: {{name: a-local, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: local-0
""" if plain_gpu else ""
    config = f"""
---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: DynamicResources
    args: {{bindingTimeout: {timeout}}}
""" if timeout else ""
    docs = [f"""
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status:
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: fabric}}
spec:
  selectors: [{{cel: {{expression: 'device.driver == "{DRIVER}"'}}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: z-fabric}}
spec:
  driver: {DRIVER}
  nodeName: n1
  pool: {{name: z-fabric, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0
    bindsToNode: true
    bindingConditions: [attached]
    bindingFailureConditions: [attach-failed]
{plain}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: gpu, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: fabric}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers: [{{name: c, image: x}}]
  resourceClaims: [{{name: gpu, resourceClaimName: gpu}}]
{config}"""]
    for i, f in enumerate(faults):
        docs.append(f"""
---
apiVersion: kubesched.io/v1alpha1
kind: Fault
metadata: {{name: f{i}}}
spec: {f}
""")
    return "".join(docs)


def simulate(text: str, version: str | None = None) -> tuple[SimCluster, dict[str, Any]]:
    sc = load_scenario_text(text, "test.yaml", strict=True)
    cfg = None
    if version is not None or sc.config is not None:
        gates = FeatureGates(version) if version else None
        cfg = (load_config(sc.config, features=gates) if sc.config is not None
               else default_config(gates))
    sim = SimCluster(sc, cfg, check=True)
    result = sim.run()
    (line,) = [r.as_json() for r in result.records if r.as_json()["pod"] == "default/p"]
    return sim, line


def claim(sim: SimCluster) -> Any:
    c = dra_index(sim.scheduler.handle.objects).claim("default", "gpu")
    assert c is not None
    return c


ATTACHED = (f"{{at: 30, action: DeviceCondition, device: {DRIVER}/z-fabric/gpu-0, "
            "condition: attached}")


def test_pod_binds_once_the_driver_reports_the_condition() -> None:
    sim, line = simulate(scenario(ATTACHED))
    assert line["node"] == "n1"
    # PreBind cannot pass before the driver's condition at 30 s; the pod is retried after
    # its backoff (at most 10 s) and binds on the first attempt after it
    assert 30 <= line["time"] <= 40
    c = claim(sim)
    (result,) = c.allocation.results
    assert (result.device, result.binding_conditions, result.binding_failure_conditions) == (
        "gpu-0", ("attached",), ("attach-failed",))
    # bindsToNode: the allocation is pinned to the node, and PreBind stamped its time
    assert c.allocation.node_selector[0].match_fields[0].values == ("n1",)
    assert c.allocation.allocation_timestamp == 0.0
    assert [(d.device, [(x.type, x.status) for x in d.conditions]) for d in c.devices] == [
        ("gpu-0", [("attached", "True")])]


def test_without_the_condition_the_pod_stays_pending() -> None:
    _, line = simulate(scenario(timeout="60s"))
    assert line["node"] is None
    # the first attempt writes the allocation; the second's writes (the reservation made and
    # taken back) and outcome, the third repeats: the run's end rule ends it there
    assert line["attempts"] == 3


def test_binding_failure_deallocates_and_retries() -> None:
    failed = (f"{{at: 10, action: DeviceCondition, device: {DRIVER}/z-fabric/gpu-0, "
              "condition: attach-failed, reason: Broken, message: cable}")
    late = ATTACHED.replace("at: 30", "at: 100")
    sim, line = simulate(scenario(failed, late))
    assert line["node"] == "n1" and line["time"] >= 100
    c = claim(sim)
    # PostFilter deallocated the claim after the failure, status.devices with it: the
    # second allocation is newer and carries only the driver's second condition
    assert c.allocation.allocation_timestamp >= 10  # the first allocation was at 0
    assert [(x.type, x.status) for d in c.devices for x in d.conditions] == [
        ("attached", "True")]


def test_binding_timeout_deallocates_and_retries() -> None:
    late = ATTACHED.replace("at: 30", "at: 90")
    sim, line = simulate(scenario(late, timeout="20s"))
    assert line["node"] == "n1" and line["time"] >= 90
    # allocated at 0, timed out after 20 s, deallocated and allocated again (maybe more
    # than once) before the condition came
    assert claim(sim).allocation.allocation_timestamp > 20


def test_devices_without_binding_conditions_are_preferred() -> None:
    # "a-local" sorts first anyway; the binding pool "z-fabric" would be last regardless
    sim, line = simulate(scenario(plain_gpu=True))
    assert line["node"] == "n1" and line["time"] == 0
    assert [r.device for r in claim(sim).allocation.results] == ["local-0"]


def test_binding_conditions_off_in_1_35() -> None:
    # DRADeviceBindingConditions alpha (off) in 1.35: devices with binding conditions are
    # never allocated
    _, line = simulate(scenario(ATTACHED), version="1.35")
    assert line["node"] is None
    assert "cannot allocate all claims" in line["message"]


@pytest.mark.parametrize(("spec", "field", "message"), [
    (f"{{action: DeviceCondition, device: {DRIVER}/z-fabric/gpu-9, condition: attached}}",
     "spec.device", "no device fabric.example.com/z-fabric/gpu-9"),
    ("{action: DeviceCondition, device: gpu-0, condition: attached}", "spec.device",
     "must be DRIVER/POOL/DEVICE"),
    (f"{{action: DeviceCondition, device: {DRIVER}/z-fabric/gpu-0}}", "spec.condition",
     "Required value"),
    (f"{{action: DeviceCondition, device: {DRIVER}/z-fabric/gpu-0, condition: a, "
     "node: n1}", "spec.node", "not used by action DeviceCondition"),
])
def test_device_condition_fault_refusals(spec: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as ei:
        load_scenario_text(scenario(spec), "test.yaml", strict=True)
    assert ei.value.field == field and message in str(ei.value), str(ei.value)
