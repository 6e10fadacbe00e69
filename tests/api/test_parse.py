from __future__ import annotations

import pytest
import yaml

from kubesched.api.parse import (
    parse_label_selector,
    parse_namespace,
    parse_node,
    parse_pod,
    parse_priority_class,
)
from kubesched.api.types import LabelSelectorRequirement, NodeSelectorRequirement
from kubesched.errors import InputError

Mi = 1024 * 1024


def y(text: str) -> dict:
    return yaml.safe_load(text)


POD = """
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels: {app: web, tier: front}
  creationTimestamp: "2026-01-01T00:00:10Z"
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: rs-web, uid: u1, controller: true}
spec:
  priorityClassName: high
  nodeSelector: {disk: ssd}
  initContainers:
  - name: init
    resources: {requests: {cpu: "2"}}
  - name: proxy
    restartPolicy: Always
    resources: {limits: {cpu: 200m, memory: 64Mi}}
  containers:
  - name: main
    image: registry.example/app:1
    resources:
      requests: {cpu: 500m}
      limits: {cpu: "1", memory: 1Gi}
    ports:
    - {containerPort: 8080, hostPort: 80}
  - name: side
    resources: {requests: {cpu: 0.25, memory: 128Mi, example.com/foo: 2}}
  tolerations:
  - {key: spot, effect: NoSchedule}
  - {operator: Exists}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [a, b]}
          matchFields:
          - {key: metadata.name, operator: In, values: [n1]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions: [{key: cpu-gen, operator: Gt, values: ["3"]}]
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
        matchLabelKeys: [tier]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data-web-1, readOnly: true}
  - name: tmp
    emptyDir: {}
  schedulingGates: [{name: wait}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]
  overhead: {cpu: 100m}
status:
  nominatedNodeName: n3
  startTime: "2026-01-01T00:01:00Z"
"""


def test_parse_pod_fields_and_defaults():
    pod = parse_pod(y(POD))
    assert pod.namespace == "default"
    assert pod.uid == "default/web-1"
    assert pod.key == "default/web-1"
    assert pod.metadata.creation_timestamp == 1767225610.0
    assert pod.metadata.owner_references[0].kind == "ReplicaSet"
    assert pod.metadata.owner_references[0].controller is True
    spec = pod.spec
    assert spec.scheduler_name == "default-scheduler"
    assert spec.termination_grace_period_seconds == 30
    assert spec.priority is None and spec.priority_class_name == "high"
    main, side = spec.containers
    # requests defaulted from limits only where missing
    assert main.requests == {"cpu": 500, "memory": 2**30}
    assert main.limits == {"cpu": 1000, "memory": 2**30}
    assert side.requests == {"cpu": 250, "memory": 128 * Mi, "example.com/foo": 2}
    assert main.ports[0].protocol == "TCP" and main.ports[0].host_port == 80
    _init, proxy = spec.init_containers
    assert proxy.restart_policy == "Always"
    assert proxy.requests == {"cpu": 200, "memory": 64 * Mi}
    assert spec.tolerations[0].operator == "Equal"
    assert spec.tolerations[1].operator == "Exists"
    na = spec.affinity.node_affinity
    assert na.required[0].match_expressions[0] == NodeSelectorRequirement("zone", "In", ("a", "b"))
    assert na.required[0].match_fields[0].values == ("n1",)
    assert na.preferred[0].weight == 10
    # matchLabelKeys merged into the selector as the v1.35 API server does
    term = spec.affinity.pod_anti_affinity.required[0]
    assert term.label_selector.match_expressions == (
        LabelSelectorRequirement("tier", "In", ("front",)),)
    assert term.match_label_keys == ("tier",)
    assert spec.topology_spread_constraints[0].max_skew == 1
    assert spec.volumes[0].pvc_claim_name == "data-web-1" and spec.volumes[0].read_only
    assert spec.volumes[1].pvc_claim_name is None and spec.volumes[1].source == {"emptyDir": {}}
    assert spec.scheduling_gates == ("wait",)
    assert spec.resource_claims == ["gpu"]
    assert spec.overhead == {"cpu": 100}
    assert pod.status.nominated_node_name == "n3"
    assert pod.status.start_time == 1767225660.0
    assert pod.status.phase == "Pending"
    # requests: containers 500+250 + sidecar 200 = 950 vs init 2000 → 2000, + overhead 100
    assert pod.requests == {"cpu": 2100, "memory": 2**30 + 128 * Mi + 64 * Mi,
                            "example.com/foo": 2}
    assert pod.non_zero_cpu == 2100
    assert pod.non_zero_memory == 2**30 + 128 * Mi + 64 * Mi


def test_best_effort_pod_non_zero():
    pod = parse_pod({"metadata": {"name": "be", "namespace": "ns1"},
                     "spec": {"containers": [{"name": "a"}, {"name": "b"}]}})
    assert pod.requests == {}
    assert (pod.non_zero_cpu, pod.non_zero_memory) == (200, 400 * Mi)
    assert pod.namespace == "ns1"


def test_pod_level_resources_defaulting():
    # pod-level limits only: cpu from the containers' requests, memory from the limit
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {
        "resources": {"limits": {"cpu": "4", "memory": "1Gi"}},
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}})
    assert pod.spec.resources.requests == {"cpu": 1000, "memory": 2**30}
    assert pod.requests == {"cpu": 1000, "memory": 2**30}
    assert (pod.non_zero_cpu, pod.non_zero_memory) == (1000, 2**30)
    # explicit pod-level requests win over the containers'
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {
        "resources": {"requests": {"cpu": "2"}},
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}})
    assert pod.requests == {"cpu": 2000}
    assert (pod.non_zero_cpu, pod.non_zero_memory) == (2000, 200 * Mi)


def test_host_network_ports_default_to_container_port():
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {
        "hostNetwork": True,
        "containers": [{"name": "a", "ports": [{"containerPort": 9000, "protocol": "UDP"}]}]}})
    assert pod.spec.containers[0].ports[0].host_port == 9000
    assert pod.spec.containers[0].ports[0].protocol == "UDP"


def test_topology_spread_match_label_keys_merged():
    pod = parse_pod(y("""
metadata: {name: p, labels: {app: a, rev: "7"}}
spec:
  containers: [{name: c}]
  topologySpreadConstraints:
  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway,
     labelSelector: {matchLabels: {app: a}}, matchLabelKeys: [rev, missing]}
"""))
    tsc = pod.spec.topology_spread_constraints[0]
    assert tsc.label_selector.match_expressions == (LabelSelectorRequirement("rev", "In", ("7",)),)
    assert tsc.when_unsatisfiable == "ScheduleAnyway"


def test_parse_label_selector():
    assert parse_label_selector(None, "s") is None
    empty = parse_label_selector({}, "s")
    assert empty is not None and empty.is_empty()
    sel = parse_label_selector({"matchLabels": {"b": "2", "a": "1"},
                                "matchExpressions": [{"key": "k", "operator": "Exists"}]}, "s")
    assert sel.match_labels == (("a", "1"), ("b", "2"))
    assert sel.match_expressions[0].operator == "Exists"


def test_parse_node_allocatable_defaults_from_capacity():
    node = parse_node(y("""
kind: Node
metadata: {name: n1, namespace: ignored, labels: {kubernetes.io/hostname: n1}}
spec:
  unschedulable: true
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "2"}
  allocatable: {cpu: 3500m, memory: 7Gi}
  images:
  - {names: [registry.example/app:1], sizeBytes: 314572800}
"""))
    assert node.name == "n1" and node.metadata.namespace == "" and node.metadata.uid == "n1"
    assert node.spec.unschedulable
    assert node.spec.taints[0].effect == "NoSchedule"
    assert node.status.allocatable == {"cpu": 3500, "memory": 7 * 2**30, "pods": 110,
                                       "nvidia.com/gpu": 2}
    assert node.status.capacity["cpu"] == 4000
    assert node.status.images[0].size_bytes == 314572800
    bare = parse_node({"metadata": {"name": "n2"}, "status": {"capacity": {"cpu": "2"}}})
    assert bare.status.allocatable == {"cpu": 2000}


def test_parse_namespace_and_priority_class():
    ns = parse_namespace({"metadata": {"name": "team-a", "labels": {"x": "y"}}})
    assert ns.metadata.labels == {"x": "y", "kubernetes.io/metadata.name": "team-a"}
    pc = parse_priority_class({"metadata": {"name": "high"}, "value": 1000})
    assert (pc.value, pc.global_default, pc.preemption_policy) == (
        1000, False, "PreemptLowerPriority")


def _pod_error(spec_text: str) -> InputError:
    d = y(f"metadata: {{name: bad, namespace: ns}}\nspec:\n{spec_text}")
    with pytest.raises(InputError) as ei:
        parse_pod(d, source="f.yaml")
    return ei.value


def test_invalid_quantity_error_names_everything():
    err = _pod_error("  containers:\n  - name: a\n    resources: {requests: {cpu: 12x}}")
    assert err.file == "f.yaml"
    assert err.obj == "Pod ns/bad"
    assert err.field == "spec.containers[0].resources.requests.cpu"
    assert err.value == "12x"
    text = str(err)
    for part in ("f.yaml", "Pod ns/bad", "spec.containers[0].resources.requests.cpu", "12x"):
        assert part in text


@pytest.mark.parametrize(
    ("spec_text", "field"),
    [
        ("  containers:\n  - resources: {requests: {memory: -1Gi}}",
         "spec.containers[0].resources.requests.memory"),
        ("  containers:\n  - resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}",
         "spec.containers[0].resources.requests.cpu"),
        ("  containers: {a: 1}", "spec.containers"),
        ("  tolerations: [{key: k, operator: Maybe}]", "spec.tolerations[0].operator"),
        ("  tolerations: [{key: k, operator: Exists, value: v}]", "spec.tolerations[0].value"),
        ("  tolerations: [{key: k, value: true}]", "spec.tolerations[0].value"),
        ("  priority: high", "spec.priority"),
        ("  nodeSelector: {disk: 1}", "spec.nodeSelector[disk]"),
        ("  containers:\n  - ports: [{containerPort: 70000}]",
         "spec.containers[0].ports[0].containerPort"),
        ("  topologySpreadConstraints: [{maxSkew: 0, topologyKey: z, "
         "whenUnsatisfiable: DoNotSchedule}]", "spec.topologySpreadConstraints[0].maxSkew"),
        ("  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "[{labelSelector: {}}]}}",
         "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
         ".topologyKey"),
        ("  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}",
         "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
         ".nodeSelectorTerms[0].matchExpressions[0].values"),
        ("  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{weight: 0, preference: {}}]}}",
         "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
         ".weight"),
    ],
)
def test_invalid_fields(spec_text, field):
    err = _pod_error(spec_text)
    assert err.field == field
    assert err.obj == "Pod ns/bad"


def test_invalid_metadata():
    with pytest.raises(InputError) as ei:
        parse_pod({"metadata": {"namespace": "x"}, "spec": {}})
    assert ei.value.field == "metadata.name" and ei.value.obj == "Pod"
    with pytest.raises(InputError) as ei:
        parse_pod({"metadata": {"name": "p", "creationTimestamp": "yesterday"}})
    assert ei.value.field == "metadata.creationTimestamp"
    assert ei.value.obj == "Pod default/p"
    with pytest.raises(InputError) as ei:
        parse_node({"metadata": {"name": "n"}, "spec": {"taints": [{"key": "k"}]}})
    assert ei.value.field == "spec.taints[0].effect" and ei.value.obj == "Node n"
    with pytest.raises(InputError) as ei:
        parse_node({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "lots"}}})
    assert ei.value.field == "status.capacity.cpu" and ei.value.value == "lots"
