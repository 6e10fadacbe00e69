"""scheduler_perf's workloads and templates (``test/integration/scheduler_perf``), as data.

Every template is the upstream YAML as a dict: nodes of ``templates/node-default.yaml`` (4 CPU,
32 Gi, 110 pods, Ready) with the ``kubernetes.io/hostname`` label the node preparer adds and,
where the workload has a ``labelNodePrepareStrategy``, ``topology.kubernetes.io/zone`` values
given round-robin over the nodes in order; pods of ``templates/pod-*.yaml``. Namespaces follow
scheduler_perf: a ``createPods`` op without a namespace uses ``namespace-<op index>``; the
affinity workloads create ``sched-0`` (init pods) and ``sched-1`` (measured pods), which their
templates' affinity terms name.

Sizes are the upstream workloads that carry a CI threshold (reference §8), plus the
``500Nodes`` sizes (``--quick``) and ``PreemptionBasic/1000Nodes``. Where upstream has no
500-node size (SchedulingWithMixedChurn, PreemptionBasic) one is defined here; such workloads
have ``upstream=False``. ``1000Nodes`` sizes of every family (``extra``: only run when named)
show how throughput grows with the number of nodes. The DRA workloads
(``dra/performance-config.yaml``: namespaces ``init`` and ``test``, nodes
``scheduler-perf-dra-<i>``) come at upstream's sizes, the 500-node ones in the default run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"

PAUSE = "registry.k8s.io/pause:3.10.1"

# ---------------------------------------------------------------------------- templates


def node_default(i: int, zone: str | None = None) -> dict[str, Any]:
    """``templates/node-default.yaml`` as the node preparer creates it (hostname label)."""
    name = f"scheduler-perf-{i:05d}"
    labels = {HOSTNAME_LABEL: name}
    if zone is not None:
        labels[ZONE_LABEL] = zone
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                       "conditions": [{"status": "True", "type": "Ready"}],
                       "phase": "Running"}}


def churn_node(i: int) -> dict[str, Any]:
    """``templates/churn/node-default.yaml``: a Ready node with room for no pod. The churn op
    creates it directly (no node preparer), so it has no labels."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-churn-{i:05d}"},
            "status": {"capacity": {"pods": "0"},
                       "conditions": [{"status": "True", "type": "Ready"}],
                       "phase": "Running"}}


def churn_service(i: int, namespace: str) -> dict[str, Any]:
    """``templates/churn/service-default.yaml``."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": f"service-churn-{i:05d}", "namespace": namespace},
            "spec": {"selector": {"app": "foo"},
                     "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]}}


def _resources(cpu: str, memory: str = "500Mi", *, limits: bool = True) -> dict[str, Any]:
    req = {"cpu": cpu, "memory": memory}
    return {"requests": req, "limits": dict(req)} if limits else {"requests": req}


def _pod(name: str, namespace: str, *, labels: dict[str, str] | None = None,
         cpu: str = "100m", limits: bool = True, image: str = PAUSE,
         extra_spec: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    spec: dict[str, Any] = dict(extra_spec or {})
    spec["containers"] = [{"image": image, "name": "pause", "ports": [{"containerPort": 80}],
                           "resources": _resources(cpu, limits=limits)}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _term(color: str, topology_key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"color": color}},
            "topologyKey": topology_key, "namespaces": ["sched-1", "sched-0"]}


def pod_default(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-default.yaml``: 100m / 500Mi, requests = limits, containerPort 80."""
    return _pod(name, namespace)


def pod_with_node_affinity(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-node-affinity.yaml``: required zone In [zone1, zone2]."""
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE_LABEL, "operator": "In", "values": ["zone1", "zone2"]}]}]}}}
    return _pod(name, namespace, extra_spec={"affinity": aff})


def pod_with_pod_affinity(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-pod-affinity.yaml``: color blue, required affinity to color blue
    on the zone."""
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _term("blue", ZONE_LABEL)]}}
    return _pod(name, namespace, labels={"color": "blue"}, extra_spec={"affinity": aff})


def pod_with_pod_anti_affinity(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-pod-anti-affinity.yaml``: color green, required anti-affinity to
    color green on the hostname."""
    aff = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _term("green", HOSTNAME_LABEL)]}}
    return _pod(name, namespace, labels={"color": "green"}, extra_spec={"affinity": aff})


def pod_with_preferred_pod_affinity(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-preferred-pod-affinity.yaml``: color red, preferred (weight 1)
    affinity to color red on the hostname."""
    aff = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": _term("red", HOSTNAME_LABEL), "weight": 1}]}}
    return _pod(name, namespace, labels={"color": "red"}, extra_spec={"affinity": aff})


def pod_with_preferred_pod_anti_affinity(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-preferred-pod-anti-affinity.yaml``: color yellow, preferred
    (weight 1) anti-affinity to color yellow on the hostname."""
    aff = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": _term("yellow", HOSTNAME_LABEL), "weight": 1}]}}
    return _pod(name, namespace, labels={"color": "yellow"}, extra_spec={"affinity": aff})


def _spread(when: str) -> dict[str, Any]:
    return {"topologySpreadConstraints": [{
        "maxSkew": 5, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}}}]}


def pod_with_topology_spreading(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-topology-spreading.yaml``: color blue, maxSkew 5 on the zone,
    DoNotSchedule."""
    return _pod(name, namespace, labels={"color": "blue"},
                extra_spec=_spread("DoNotSchedule"))


def pod_with_preferred_topology_spreading(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-with-preferred-topology-spreading.yaml``: as above, ScheduleAnyway."""
    return _pod(name, namespace, labels={"color": "blue"},
                extra_spec=_spread("ScheduleAnyway"))


def pod_low_priority(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-low-priority.yaml``: 900m / 500Mi, no priority (0), grace period 0."""
    return _pod(name, namespace, cpu="900m",
                extra_spec={"terminationGracePeriodSeconds": 0})


def pod_high_priority(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-high-priority.yaml``: priority 10, 3000m / 500Mi."""
    return _pod(name, namespace, cpu="3000m", extra_spec={"priority": 10})


def pod_high_priority_large_cpu(name: str, namespace: str) -> dict[str, Any]:
    """``templates/pod-high-priority-large-cpu.yaml``: priority 10, cpu 9 (requests only):
    fits no 4-CPU node, even after preempting everything."""
    return _pod(name, namespace, cpu="9", limits=False, extra_spec={"priority": 10})


# ---------------------------------------------------------------------------- DRA templates
# test/integration/scheduler_perf/dra/templates/*.yaml and the createResourceDriver op
# (scheduler_perf's dra.go), at the version carrying the thresholds (commit 03312ae).

DRA_DRIVER = "test-driver.cdi.k8s.io"
DRA_CLASS = "test-class"
DRA_CLAIM_TEMPLATE = "test-claim-template"
DRA_NODE_PREFIX = "scheduler-perf-dra-"  # createResourceDriver's nodes: scheduler-perf-dra-*


def node_with_dra_test_driver(i: int) -> dict[str, Any]:
    """``dra/templates/node-with-dra-test-driver.yaml`` (node-default's capacity), with the
    hostname label the node preparer adds."""
    node = node_default(i)
    name = f"{DRA_NODE_PREFIX}{i}"
    node["metadata"] = {"name": name, "labels": {HOSTNAME_LABEL: name}}
    return node


def device_class() -> dict[str, Any]:
    """``dra/templates/deviceclass.yaml``: the driver's devices."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": DRA_CLASS},
            "spec": {"selectors": [{"cel": {
                "expression": f'device.driver == "{DRA_DRIVER}"'}}]}}


def resource_slice(node_name: str, capacity: int) -> dict[str, Any]:
    """createResourceDriver's ``resourceSlice``: one slice (and pool) per node, named after
    it, with ``capacity`` (maxClaimsPerNode) devices ``instance-<i>``. Upstream's devices also
    carry binding conditions that its helper strips unless DRADeviceBindingConditions is on;
    they are left out here (no workload here waits for device conditions)."""
    devices = [{"name": f"instance-{i}",
                "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                               "driverVersion": {"version": "1.2.3"},
                               "dra.example.com/numa": {"int": i}},
                "capacity": {"memory": {"value": "1Gi"}}} for i in range(capacity)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": node_name},
            "spec": {"driver": DRA_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "resourceSliceCount": 1},
                     "devices": devices}}


def resource_claim_template(namespace: str) -> dict[str, Any]:
    """``dra/templates/resourceclaimtemplate.yaml`` with its defaults (one request, no
    selectors or constraints)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": DRA_CLAIM_TEMPLATE, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]}}}}


def resource_claim(i: int, namespace: str) -> dict[str, Any]:
    """``dra/templates/resourceclaim.yaml``: ``test-claim-<i>``, one device of the class."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"test-claim-{i}", "namespace": namespace},
            "spec": {"devices": {"requests": [
                {"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]}}}


def _dra_pod(name: str, namespace: str, claim: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"image": PAUSE, "name": "pause",
                                     "resources": {"claims": [{"name": "resource"}]}}],
                     "resourceClaims": [{"name": "resource", **claim}]}}


def pod_with_claim_template(name: str, namespace: str) -> dict[str, Any]:
    """``dra/templates/pod-with-claim-template.yaml``: no requests, one claim from
    ``test-claim-template``."""
    return _dra_pod(name, namespace, {"resourceClaimTemplateName": DRA_CLAIM_TEMPLATE})


def pod_with_claim_ref(index: int, namespace: str) -> dict[str, Any]:
    """``dra/templates/pod-with-claim-ref.yaml``: ``test-dra-<i>`` using the claim
    ``test-claim-<i / 5>`` (five pods share a claim)."""
    return _dra_pod(f"test-dra-{index}", namespace,
                    {"resourceClaimName": f"test-claim-{index // 5}"})


PodTemplate = Callable[[str, str], dict[str, Any]]

#: template name → (generateName prefix, builder)
POD_TEMPLATES: dict[str, tuple[str, PodTemplate]] = {
    "pod-default": ("pod-", pod_default),
    "pod-with-node-affinity": ("node-affinity-", pod_with_node_affinity),
    "pod-with-pod-affinity": ("affinity-pod-", pod_with_pod_affinity),
    "pod-with-pod-anti-affinity": ("anti-affinity-pod-", pod_with_pod_anti_affinity),
    "pod-with-preferred-pod-affinity": ("preferred-affinity-pod-",
                                        pod_with_preferred_pod_affinity),
    "pod-with-preferred-pod-anti-affinity": ("preferred-anti-affinity-pod-",
                                             pod_with_preferred_pod_anti_affinity),
    "pod-with-topology-spreading": ("spreading-pod-", pod_with_topology_spreading),
    "pod-with-preferred-topology-spreading": ("spreading-pod-",
                                              pod_with_preferred_topology_spreading),
    "pod-low-priority": ("pod-", pod_low_priority),
    "pod-high-priority": ("pod-", pod_high_priority),
    "pod-high-priority-large-cpu": ("pod-h-", pod_high_priority_large_cpu),
    "pod-with-claim-template": ("test-dra", pod_with_claim_template),
}

#: templates whose objects depend on the pod's index (``{{.Index}}`` beyond the name)
INDEXED_POD_TEMPLATES: dict[str, Callable[[int, str], dict[str, Any]]] = {
    "pod-with-claim-ref": pod_with_claim_ref,
}

#: churn templates that are not pods
CHURN_NODE = "churn/node-default"
CHURN_SERVICE = "churn/service-default"


def make_pod(template: str, index: int, namespace: str) -> dict[str, Any]:
    """The ``index``-th pod of ``template`` in ``namespace`` (generateName + a number)."""
    indexed = INDEXED_POD_TEMPLATES.get(template)
    if indexed is not None:
        return indexed(index, namespace)
    prefix, build = POD_TEMPLATES[template]
    return build(f"{prefix}{index:05d}", namespace)


# ---------------------------------------------------------------------------- workloads


@dataclass(frozen=True)
class PodOp:
    """A ``createPods`` op. ``steady_seconds`` > 0: its ``steadyState`` mode — ``count``
    pods at a time; once all of them are scheduled they are deleted (grace period 0) and
    ``count`` new ones created, for that many seconds."""

    template: str
    count: int
    namespace: str
    steady_seconds: float = 0.0


@dataclass(frozen=True)
class DraOp:
    """The DRA ops of a workload (``dra/performance-config.yaml``): ``nodes`` of the
    workload's nodes are ``node-with-dra-test-driver`` ones (created after the others), each
    with a ResourceSlice of ``max_claims_per_node`` devices (``createResourceDriver``); the
    DeviceClass; a ResourceClaimTemplate in each of ``claim_templates``; ``claims``
    ResourceClaims (``resourceclaim.yaml``) per namespace; the claims of the ``allocate``
    namespaces allocated without pods (``allocResourceClaims``)."""

    nodes: int
    max_claims_per_node: int
    claim_templates: tuple[str, ...] = ()
    claims: tuple[tuple[str, int], ...] = ()
    allocate: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChurnOp:
    """A ``churn`` op: every ``interval_ms`` of wall time, ``create`` makes one object of each
    template; ``recreate`` alternately creates and deletes them (``number`` = 1)."""

    mode: str  # "create" | "recreate"
    templates: tuple[str, ...]
    interval_ms: int
    namespace: str


@dataclass(frozen=True)
class Workload:
    name: str
    nodes: int
    init: tuple[PodOp, ...]
    measured: PodOp
    zones: tuple[str, ...] = ()  # labelNodePrepareStrategy values for the zone label
    churn: ChurnOp | None = None
    threshold: float = 0.0  # upstream's CI threshold (0: none)
    target: float = 0.0  # the project's own bar beyond the threshold (0: none)
    percentage_of_nodes_to_score: int | None = None  # None: the default configuration's
    needs_preemption: bool = False  # meaningless without DefaultPreemption
    upstream: bool = True  # False: a size defined here, not in scheduler_perf's configs
    extra: bool = False  # left out of a full run; runs when named (or its family is)
    dra: DraOp | None = None

    @property
    def init_pods(self) -> int:
        return sum(op.count for op in self.init)

    @property
    def measured_pods(self) -> int:
        return self.measured.count

    @property
    def quick(self) -> bool:
        return self.nodes == 500

    @property
    def namespaces(self) -> list[str]:
        out = [op.namespace for op in self.init] + [self.measured.namespace]
        if self.churn is not None:
            out.append(self.churn.namespace)
        if self.dra is not None:
            out += [*self.dra.claim_templates, *(ns for ns, _n in self.dra.claims)]
        return sorted(set(out))

    @property
    def steady(self) -> bool:
        return self.measured.steady_seconds > 0

    def zone_of(self, i: int) -> str | None:
        return self.zones[i % len(self.zones)] if self.zones else None


NS1, NS2, NS3 = "namespace-1", "namespace-2", "namespace-3"
MOONS = ("moon-1", "moon-2", "moon-3")


def _simple(name: str, nodes: int, init: int, measured: int, template: str, *,
            init_template: str | None = None, zones: tuple[str, ...] = (),
            sched_ns: bool = False, **kw: Any) -> Workload:
    """init pods then measured pods (namespace-1 / namespace-2, or sched-0 / sched-1)."""
    ns_init, ns_meas = ("sched-0", "sched-1") if sched_ns else (NS1, NS2)
    ops = (PodOp(init_template or template, init, ns_init),) if init else ()
    return Workload(name, nodes, ops, PodOp(template, measured, ns_meas), zones=zones, **kw)


def _preemption_async(name: str, nodes: int, init: int, measured: int, **kw: Any) -> Workload:
    return Workload(name, nodes, (PodOp("pod-low-priority", init, NS1),),
                    PodOp("pod-default", measured, NS3),
                    churn=ChurnOp("create", ("pod-high-priority",), 200, NS2),
                    needs_preemption=True, **kw)


def _unschedulable(name: str, nodes: int, init: int, measured: int, **kw: Any) -> Workload:
    return Workload(name, nodes, (PodOp("pod-default", init, NS1),),
                    PodOp("pod-default", measured, NS3),
                    churn=ChurnOp("create", ("pod-high-priority-large-cpu",), 200, NS2),
                    needs_preemption=True, **kw)


def _mixed_churn(name: str, nodes: int, measured: int, **kw: Any) -> Workload:
    return Workload(name, nodes, (), PodOp("pod-default", measured, NS2),
                    churn=ChurnOp("recreate", (CHURN_NODE, "pod-high-priority-large-cpu",
                                               CHURN_SERVICE), 1000, NS1), **kw)


def _preemption_basic(name: str, nodes: int, init: int, measured: int, **kw: Any) -> Workload:
    return Workload(name, nodes, (PodOp("pod-low-priority", init, NS1),),
                    PodOp("pod-high-priority", measured, NS2), needs_preemption=True, **kw)


INIT, TEST = "init", "test"  # the DRA workloads' namespaces


def _claim_template_workload(size: str, nodes: int, init: int, measured: int,
                             max_claims: int, **kw: Any) -> Workload:
    """SchedulingWithResourceClaimTemplate: pods with a claim each from the template, the
    cluster's devices exactly filled (init pods in ``init``, measured ones in ``test``)."""
    ops = (PodOp("pod-with-claim-template", init, INIT),) if init else ()
    return Workload(f"SchedulingWithResourceClaimTemplate/{size}", nodes, ops,
                    PodOp("pod-with-claim-template", measured, TEST),
                    dra=DraOp(nodes, max_claims, claim_templates=(INIT, TEST)), **kw)


def _steady_state_workload(size: str, nodes: int, init_claims: int, **kw: Any) -> Workload:
    """SteadyStateClusterResourceClaimTemplate: ``init_claims`` claims allocated without pods
    (the cluster's devices empty, half or all but ten used), then ten pods with a claim from
    the template at a time, deleted once scheduled, for 10 s."""
    return Workload(f"SteadyStateClusterResourceClaimTemplate/{size}", nodes, (),
                    PodOp("pod-with-claim-template", 10, TEST, steady_seconds=10.0),
                    dra=DraOp(nodes, 10, claim_templates=(TEST,),
                              claims=((INIT, init_claims),) if init_claims else (),
                              allocate=(INIT,)), **kw)


def _claim_workload(size: str, nodes: int, init: int, measured: int, max_claims: int,
                    **kw: Any) -> Workload:
    """SchedulingWithResourceClaim: every five pods share one claim (``test-claim-<i/5>``,
    created beforehand in each namespace)."""
    ops = (PodOp("pod-with-claim-ref", init, INIT),) if init else ()
    return Workload(f"SchedulingWithResourceClaim/{size}", nodes, ops,
                    PodOp("pod-with-claim-ref", measured, TEST),
                    dra=DraOp(nodes, max_claims,
                              claims=((INIT, init // 5), (TEST, measured // 5))), **kw)


def _dra_workloads() -> list[Workload]:
    """``dra/performance-config.yaml``'s three families at upstream's sizes (100 and 200
    nodes: extra). The ``_QueueingHintsEnabled`` variants, as kubesched has queueing hints;
    ``threshold`` is theirs, ``target`` five times the higher of the two variants'."""
    qh = "_QueueingHintsEnabled"
    w = [_claim_template_workload("2000pods_100nodes", 100, 1000, 1000, 20, extra=True),
         _claim_template_workload("2000pods_200nodes", 200, 1000, 1000, 10, extra=True),
         _claim_template_workload(f"5000pods_500nodes{qh}", 500, 2500, 2500, 10,
                                  threshold=56, target=5 * 56)]
    for kind, claims, thr in (("empty", (0, 0, 0), (64, 64)),
                              ("half", (500, 1000, 2500), (70, 60)),
                              ("full", (990, 1990, 4990), (60, 60))):
        w.append(_steady_state_workload(f"{kind}_100nodes", 100, claims[0], extra=True))
        w.append(_steady_state_workload(f"{kind}_200nodes", 200, claims[1], extra=True))
        w.append(_steady_state_workload(f"{kind}_500nodes{qh}", 500, claims[2],
                                        threshold=thr[1], target=5 * max(thr)))
    w += [_claim_workload("2000pods_100nodes", 100, 1000, 1000, 4, extra=True),
          _claim_workload("2000pods_200nodes", 200, 1000, 1000, 2, extra=True),
          _claim_workload("5000pods_500nodes", 500, 2500, 2500, 2)]
    return w


def _scaling_sizes(ws: list[Workload]) -> list[Workload]:
    """1000-node sizes of the 500-node workloads (pods doubled), for the 500 → 1000 → 5000
    scaling picture; upstream has a 1000-node size only for SchedulingWithMixedChurn (1000
    measured pods) and PreemptionBasic, which are defined directly."""
    have = {w.name.split("/", 1)[0] for w in ws if w.nodes == 1000}
    out = []
    for w in ws:
        family = w.name.split("/", 1)[0]
        if w.nodes != 500 or family in have:
            continue
        init = tuple(PodOp(op.template, op.count * 2, op.namespace) for op in w.init)
        measured = PodOp(w.measured.template, w.measured.count * 2, w.measured.namespace)
        name = f"{family}/1000Nodes"
        if family == "Unschedulable":
            name = f"{family}/1000Nodes/{init[0].count}Init/{measured.count // 1000}kPods"
        out.append(Workload(name, 1000, init, measured, zones=w.zones, churn=w.churn,
                            needs_preemption=w.needs_preemption, upstream=False, extra=True))
    return out


def _all() -> list[Workload]:
    w: list[Workload] = []
    for nodes, init, measured, thr, suffix in ((500, 500, 1000, 0, "500Nodes"),
                                               (5000, 1000, 10000, 680, "5000Nodes_10000Pods")):
        w.append(_simple(f"SchedulingBasic/{suffix}", nodes, init, measured, "pod-default",
                         threshold=thr, target=2000 if thr else 0))
    # upstream's 50 000-pod size (threshold 810): the memory bound (5000 nodes, 50 000
    # pods under 1.5 GiB); extra, to keep a full run within its 15 minutes
    w.append(_simple("SchedulingBasic/5000Nodes_50000Pods", 5000, 5000, 50000, "pod-default",
                     threshold=810, extra=True))
    w.append(_simple("SchedulingBasic/5000Nodes_10000Pods_PercentageOfNodesToScore100", 5000,
                     1000, 10000, "pod-default", target=1000, percentage_of_nodes_to_score=100,
                     upstream=False))
    for nodes, init, measured, thr, suffix in ((500, 500, 1000, 0, "500Nodes"),
                                               (5000, 5000, 10000, 220, "5000Nodes_10000Pods")):
        w.append(_simple(f"SchedulingNodeAffinity/{suffix}", nodes, init, measured,
                         "pod-with-node-affinity", zones=("zone1",), threshold=thr))
    for kind, template, thr in (("TopologySpreading", "pod-with-topology-spreading", 460),
                                ("PreferredTopologySpreading",
                                 "pod-with-preferred-topology-spreading", 340)):
        w.append(_simple(f"{kind}/500Nodes", 500, 1000, 1000, template,
                         init_template="pod-default", zones=MOONS))
        w.append(_simple(f"{kind}/5000Nodes_5000Pods", 5000, 5000, 5000, template,
                         init_template="pod-default", zones=MOONS, threshold=thr))
    w.append(_simple("SchedulingPodAntiAffinity/500Nodes", 500, 100, 400,
                     "pod-with-pod-anti-affinity", sched_ns=True))
    w.append(_simple("SchedulingPodAntiAffinity/5000Nodes_2000Pods", 5000, 1000, 2000,
                     "pod-with-pod-anti-affinity", sched_ns=True, threshold=60))
    for kind, template, thr, zones in (
            ("SchedulingPodAffinity", "pod-with-pod-affinity", 35, ("zone1",)),
            ("SchedulingPreferredPodAffinity", "pod-with-preferred-pod-affinity", 90, ()),
            ("SchedulingPreferredPodAntiAffinity", "pod-with-preferred-pod-anti-affinity", 90,
             ())):
        w.append(_simple(f"{kind}/500Nodes", 500, 500, 1000, template, sched_ns=True,
                         zones=zones))
        w.append(_simple(f"{kind}/5000Nodes_5000Pods", 5000, 5000, 5000, template,
                         sched_ns=True, zones=zones, threshold=thr))
    # upstream has 10 and 1000 nodes only; 5000 pods so that the 1-s churn ticks a few times
    w.append(_mixed_churn("SchedulingWithMixedChurn/500Nodes", 500, 5000, upstream=False))
    w.append(_mixed_churn("SchedulingWithMixedChurn/1000Nodes", 1000, 1000, extra=True))
    w.append(_mixed_churn("SchedulingWithMixedChurn/5000Nodes_10000Pods", 5000, 10000,
                          threshold=710))
    w.append(_preemption_async("PreemptionAsync/500Nodes", 500, 2000, 500))
    w.append(_preemption_async("PreemptionAsync/5000Nodes", 5000, 20000, 5000, threshold=570))
    w.append(_unschedulable("Unschedulable/500Nodes/10Init/1kPods", 500, 10, 1000))
    w.append(_unschedulable("Unschedulable/5kNodes/100Init/10kPods", 5000, 100, 10000,
                            threshold=590))
    w.append(_preemption_basic("PreemptionBasic/500Nodes", 500, 2000, 500, upstream=False))
    w.append(_preemption_basic("PreemptionBasic/1000Nodes", 1000, 4000, 1000))
    w.extend(_scaling_sizes(w))
    w.extend(_dra_workloads())
    families: dict[str, int] = {}
    for x in w:
        families.setdefault(x.name.split("/", 1)[0], len(families))
    return sorted(w, key=lambda x: (families[x.name.split("/", 1)[0]], x.nodes))


WORKLOADS: dict[str, Workload] = {w.name: w for w in _all()}


def select(names: list[str] | tuple[str, ...], quick: bool = False) -> list[Workload]:
    """Workloads by name (exact, or a family such as ``SchedulingBasic``: all its sizes,
    1000-node ones included); none given: all but the extra 1000-node sizes (``quick``: the
    500-node sizes). Raises KeyError naming the unknown ones."""
    if not names:
        return [w for w in WORKLOADS.values() if (w.quick or not quick) and not w.extra]
    out: list[Workload] = []
    unknown = []
    for n in names:
        if n in WORKLOADS:
            hits = [WORKLOADS[n]]
        else:
            hits = [w for w in WORKLOADS.values() if w.name.split("/", 1)[0] == n]
            if quick:
                hits = [w for w in hits if w.quick]
        if not hits:
            unknown.append(n)
        out.extend(h for h in hits if h not in out)
    if unknown:
        raise KeyError(", ".join(unknown))
    return out
