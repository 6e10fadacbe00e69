"""DRA end to end in the simulator, the invariant checker on: claims allocated at PreBind,
devices never in two claims, released when pods finish, pods pending with upstream's message
when devices run out."""

from __future__ import annotations

import logging
from typing import Any

from kubesched.api.dra.types import DELETE_PROTECTION_FINALIZER
from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster


def _cluster(nodes: int = 2, gpus: int = 2) -> str:
    docs = ["""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
"""]
    for n in range(1, nodes + 1):
        devices = "\n".join(
            f"  - {{name: gpu-{g}, attributes: {{model: {{string: a100}}}}}}"
            for g in range(gpus))
        docs.append(f"""
apiVersion: v1
kind: Node
metadata: {{name: n{n}, labels: {{kubernetes.io/hostname: n{n}}}}}
status:
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: n{n}-gpus}}
spec:
  driver: gpu.example.com
  nodeName: n{n}
  pool: {{name: n{n}, generation: 1, resourceSliceCount: 1}}
  devices:
{devices}
""")
    docs.append("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
""")
    return "---".join(docs)


def _pod(name: str, *, duration: float | None = None, arrival: float | None = None,
         template: str = "one-gpu") -> str:
    ann = {}
    if duration is not None:
        ann["kubesched.io/duration"] = str(duration)
    if arrival is not None:
        ann["kubesched.io/arrival"] = str(arrival)
    anns = ", ".join(f'{k}: "{v}"' for k, v in ann.items())
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, annotations: {{{anns}}}}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: {template}}}]
"""


def _run(text: str) -> SimCluster:
    sim = SimCluster(load_scenario_text(text), check=True)
    sim.run()
    return sim


def test_claims_allocated_and_devices_exclusive() -> None:
    sim = _run(_cluster() + "".join(_pod(f"p{i}") for i in range(4)))
    recs = {r.key: r for r in sim.records.values()}
    assert all(r.node is not None for r in recs.values()), recs
    claims = sim.scheduler.handle.objects["ResourceClaim"]
    devices = [(r.pool, r.device) for c in claims for r in c.allocation.results]
    assert len(devices) == 4 == len(set(devices))
    for c in claims:
        assert len(c.reserved_for) == 1
        pod = sim.pods[c.reserved_for[0].uid]
        assert c.allocation.results[0].pool == pod.spec.node_name


def test_pending_with_upstreams_message_when_devices_run_out() -> None:
    sim = _run(_cluster(nodes=1, gpus=1) + _pod("a") + _pod("b"))
    recs = {r.key: r for r in sim.records.values()}
    bound = [r for r in recs.values() if r.node is not None]
    pending = [r for r in recs.values() if r.node is None]
    assert len(bound) == 1 and len(pending) == 1
    assert pending[0].message == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_devices_released_when_pods_finish() -> None:
    sim = _run(_cluster(nodes=1, gpus=1) + _pod("a", duration=10) + _pod("b", duration=10))
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/a"].node == "n1" and recs["default/b"].node == "n1"
    assert recs["default/b"].time >= 10
    # generated claims go with their pods
    assert sim.scheduler.handle.objects["ResourceClaim"] == []


def test_missing_template_waits_at_pre_enqueue() -> None:
    sim = _run(_cluster(nodes=1) + _pod("a", template="nope"))
    rec = next(iter(sim.records.values()))
    assert rec.node is None


def test_bundled_gpu_example() -> None:
    from importlib import resources

    from kubesched.api.scenario import load_scenario

    path = str(resources.files("kubesched") / "examples" / "gpus.yaml")
    sim = SimCluster(load_scenario([path]), check=True)
    result = sim.run()
    got = {r.key: (r.node, r.time) for r in result.records}
    # the notebook's first choice, two big GPUs, exists only on gpu-a (score 8 vs 7)
    assert got["default/notebook"] == ("gpu-a", 0.0)
    # the shared claim's two pods on one device; three trainers fill gpu-b's other GPUs
    assert {got[f"default/{p}"][0] for p in ("infer-1", "infer-2", "train-1", "train-2",
                                             "train-3")} == {"gpu-b"}
    # train-4 waits for a trainer to finish and free its GPU
    assert got["default/train-4"] == ("gpu-b", 300.0)
    # at the end only the long-running inference pods hold a device (the shared claim's)
    assert result.devices == {"gpu.example.com": 1}


def _extended_pod(name: str, gpus: int, *, duration: float | None = None) -> str:
    ann = f'{{kubesched.io/duration: "{duration}"}}' if duration is not None else "{}"
    q = f"{{example.com/gpu: '{gpus}'}}"
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, annotations: {ann}}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {q}, limits: {q}}}}}]
"""


EXTENDED_CLASS = """
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-er}
spec:
  extendedResourceName: example.com/gpu
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
"""


def test_extended_resource_served_by_dra() -> None:
    # DRAExtendedResource (1.37): example.com/gpu, which no node advertises, comes from the
    # class's devices through the pod's special claim, created at PreBind
    sim = _run(_cluster(nodes=1, gpus=2) + EXTENDED_CLASS + _extended_pod("a", 2)
               + _extended_pod("b", 1))
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/a"].node == "n1"
    assert recs["default/b"].node is None
    assert recs["default/b"].message == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    (claim,) = sim.scheduler.handle.objects["ResourceClaim"]
    assert claim.name.startswith("a-extended-resources-")
    assert claim.metadata.annotations == {"resource.kubernetes.io/extended-resource-claim":
                                          "true"}
    assert sorted(r.device for r in claim.allocation.results) == ["gpu-0", "gpu-1"]
    pod_a = next(p for p in sim.pods.values() if p.name == "a")
    status = pod_a.status.extended_resource_claim_status
    assert status is not None and status.resource_claim_name == claim.name
    assert [(m.container_name, m.resource_name, m.request_name)
            for m in status.request_mappings] == [("c", "example.com/gpu",
                                                   "container-0-request-0")]


def test_extended_resource_claim_released_with_its_pod() -> None:
    sim = _run(_cluster(nodes=1, gpus=1) + EXTENDED_CLASS + _extended_pod("a", 1, duration=5)
               + _extended_pod("b", 1, duration=5))
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/a"].node == "n1" and recs["default/b"].node == "n1"
    assert recs["default/b"].time >= 5
    assert sim.scheduler.handle.objects["ResourceClaim"] == []


def test_extended_resource_on_a_device_plugin_node_is_not_dra() -> None:
    # a node advertising example.com/gpu serves it itself: no claim (1.37)
    text = (_cluster(nodes=1, gpus=1).replace('pods: "110"', 'pods: "110", example.com/gpu: "4"')
            + EXTENDED_CLASS + _extended_pod("a", 3))
    sim = _run(text)
    assert next(iter(sim.records.values())).node == "n1"
    assert sim.scheduler.handle.objects["ResourceClaim"] == []


def test_extended_resource_before_1_36_is_plain() -> None:
    # DRAExtendedResource is alpha (off) in 1.35: nodes lacking it simply do not fit
    from kubesched.config import default_config
    from kubesched.config.features import FeatureGates

    cfg = default_config()
    cfg.features = FeatureGates("1.35")
    sim = SimCluster(load_scenario_text(_cluster(nodes=1) + EXTENDED_CLASS
                                        + _extended_pod("a", 1)), config=cfg, check=True)
    sim.run()
    rec = next(iter(sim.records.values()))
    assert rec.node is None
    assert rec.message is not None and rec.message.startswith(
        "0/1 nodes are available: 1 Insufficient example.com/gpu.")


def _prio_pod(name: str, priority: int, *, cpu: str = "100m", claim: str | None = None,
              template: str | None = "one-gpu", arrival: float = 0.0) -> str:
    claims = ""
    if claim is not None:
        claims = f"\n  resourceClaims: [{{name: gpu, resourceClaimName: {claim}}}]"
    elif template is not None:
        claims = f"\n  resourceClaims: [{{name: gpu, resourceClaimTemplateName: {template}}}]"
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, annotations: {{kubesched.io/arrival: "{arrival}"}}}}
spec:
  priority: {priority}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: {cpu}}}}}}}]{claims}
"""


SHARED_CLAIM = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""


def test_no_preemption_for_a_device_held_by_a_lower_priority_pod() -> None:
    # Upstream 1.35-1.37: DynamicResources has no PreFilterExtensions, so DefaultPreemption's
    # dry run cannot free a victim's devices, and "cannot allocate all claims" is
    # UnschedulableAndUnresolvable, so the node is no candidate at all (KEP-5690, DRA
    # preemption behind the DRAPreemption gate, targets 1.38).
    sim = _run(_cluster(nodes=1, gpus=1) + _prio_pod("low", 0)
               + _prio_pod("high", 1000, arrival=1))
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/low"].node == "n1"
    assert recs["default/high"].node is None
    assert recs["default/high"].message == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    assert sim.preemptions == {}


def test_no_preemption_when_the_device_is_shared_with_other_pods() -> None:
    # the only device is held by a claim two low-priority pods share: still no preemption
    sim = _run(_cluster(nodes=1, gpus=1) + SHARED_CLAIM
               + _prio_pod("low-1", 0, claim="shared") + _prio_pod("low-2", 0, claim="shared")
               + _prio_pod("high", 1000, arrival=1))
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/low-1"].node == "n1" and recs["default/low-2"].node == "n1"
    assert recs["default/high"].node is None
    assert "cannot allocate all claims" in (recs["default/high"].message or "")
    assert sim.preemptions == {}


def test_preemption_for_cpu_keeps_the_victims_devices_allocated() -> None:
    # The preemptor needs cpu (held by a low-priority pod) and one device; the node has a
    # free device besides the victim's, so the dry run (the victim's device still
    # allocated) finds the node and the victim is preempted.
    text = (_cluster(nodes=1, gpus=2).replace('cpu: "8"', 'cpu: "1"')
            + _prio_pod("low", 0, cpu="800m") + _prio_pod("high", 1000, cpu="500m", arrival=1))
    sim = _run(text)
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/high"].node == "n1"
    assert sim.preemptions == {"default/high": ["default/low"]}


def test_post_filter_without_dra_state_is_an_error_as_upstream(caplog: Any) -> None:
    # An earlier PreFilter plugin (VolumeBinding: no such PVC) rejects the pod, so DynamicResources'
    # PreFilter never ran: its PostFilter reads no state and returns CycleState's "not
    # found" as an Error (upstream's getStateData → statusError), which ends the PostFilter
    # run before DefaultPreemption and is logged at error level, as upstream's
    # HandleErrorWithContext does.
    text = _cluster(nodes=1) + _pod("a").replace(
        "spec:\n", "spec:\n  volumes: [{name: v, persistentVolumeClaim: {claimName: nope}}]\n",
        1)
    with caplog.at_level(logging.ERROR, logger="kubesched"):
        sim = _run(text)
    rec = next(iter(sim.records.values()))
    assert rec.node is None
    assert rec.message == ('0/1 nodes are available: persistentvolumeclaim "nope" not '
                           "found. not found")
    assert "Status after running PostFilter plugins for pod default/a: not found" in (
        caplog.text)


def test_more_devices_than_any_node_has() -> None:
    # a scheduling problem, not bad input: the pod stays pending with upstream's reason
    many = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: five, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 5}}]
"""
    sim = _run(_cluster(nodes=2, gpus=2) + many + _pod("a", template="five"))
    rec = next(iter(sim.records.values()))
    assert rec.node is None
    assert rec.message == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_claim_naming_a_missing_device_class() -> None:
    missing = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nope, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: no-such-class}}]
"""
    sim = _run(_cluster(nodes=2) + missing + _pod("a", template="nope"))
    rec = next(iter(sim.records.values()))
    assert rec.node is None
    assert rec.message == (
        "0/2 nodes are available: request gpu: device class no-such-class does not exist. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is "
        "not helpful for scheduling.")


def test_state_out_keeps_claims_and_their_allocations() -> None:
    # the end state read back decides the same: claims made during the run (from a
    # template, for extended resources) and scenario claims carry their allocation, so the
    # devices stay taken and the pending pods stay pending
    from kubesched.backends.sim.state import write_state

    text = (_cluster(nodes=1, gpus=2) + EXTENDED_CLASS + _pod("t") + _extended_pod("e", 1)
            + _extended_pod("waits", 1))
    sim = _run(text)
    recs = {r.key: r for r in sim.records.values()}
    assert recs["default/t"].node == "n1" and recs["default/e"].node == "n1"
    assert recs["default/waits"].node is None
    again = _run(write_state(sim))
    claims = {c.name: c for c in again.scheduler.handle.objects["ResourceClaim"]}
    assert sorted(claims) == sorted(c.name for c in sim.scheduler.handle.objects[
        "ResourceClaim"])
    assert all(c.allocation is not None and c.reserved_for for c in claims.values())
    # written with the finalizer PreBind added, and read back with it
    assert all(c.metadata.finalizers == (DELETE_PROTECTION_FINALIZER,)
               for c in claims.values())
    (rec,) = again.records.values()  # only the pending pod enters the queue
    assert rec.key == "default/waits" and rec.node is None
    pod_e = next(p for p in again.pods.values() if p.name == "e")
    assert pod_e.status.extended_resource_claim_status is not None
