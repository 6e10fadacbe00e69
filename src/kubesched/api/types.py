"""The lean object model: only what scheduling reads, parsed from Kubernetes JSON/YAML.

Quantities are exact integers: cpu in milli-cores, memory / storage / hugepages in bytes,
`pods` and extended resources in whole units. Objects are plain mutable dataclasses; the
scheduler copies a Pod (``copy.copy``) before changing what it owns (nodeName, status).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

Resources = dict[str, int]

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_LABEL_BETA = "failure-domain.beta.kubernetes.io/region"

ARRIVAL_ANNOTATION = "kubesched.io/arrival"
DURATION_ANNOTATION = "kubesched.io/duration"


_C = TypeVar("_C")


def shallow_copy_by_fields(cls: type[_C]) -> type[_C]:
    """Give a slotted dataclass a ``__copy__`` assigning its fields one by one. ``copy.copy``'s
    generic path (``__reduce_ex__``, a state dict, ``setattr`` per slot) costs several µs,
    and pods, their specs and statuses are copied on every scheduling and binding; the
    generated method (as dataclasses generates ``__init__``) is about six times cheaper."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]  # dataclasses only
    body = "".join(f"    new.{n} = self.{n}\n" for n in names)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    exec(f"def __copy__(self):\n    new = _new(_cls)\n{body}    return new\n", namespace)
    cls.__copy__ = namespace["__copy__"]  # type: ignore[attr-defined]
    return cls


@shallow_copy_by_fields
@dataclass(slots=True)
class ObjectMeta:
    name: str
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    creation_timestamp: float | None = None  # seconds since the epoch
    deletion_timestamp: float | None = None
    # a tuple: copies of an object share their metadata's containers until replaced
    finalizers: tuple[str, ...] = ()
    owner_references: list[OwnerReference] = field(default_factory=list)
    resource_version: str = ""
    generation: int = 0


@dataclass(slots=True, frozen=True)
class OwnerReference:
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


class Named:
    """Accessors of an object's metadata (``self.metadata``), shared by every kind."""

    __slots__ = ()
    metadata: ObjectMeta

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        return self.metadata.uid

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def annotations(self) -> dict[str, str]:
        return self.metadata.annotations


# ---------------------------------------------------------------- selectors


@dataclass(slots=True, frozen=True)
class LabelSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """metav1.LabelSelector. An empty selector matches everything; callers that need
    "nil matches nothing" keep ``None`` instead of a LabelSelector."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


@dataclass(slots=True, frozen=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(slots=True, frozen=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(slots=True, frozen=True)
class NodeAffinity:
    # None: no requiredDuringSchedulingIgnoredDuringExecution at all.
    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(slots=True, frozen=True)
class PodAffinity:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


# ---------------------------------------------------------------- taints


@dataclass(slots=True, frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""  # NoSchedule, PreferNoSchedule, NoExecute
    # epoch seconds (NoExecute taints: when the taint manager's clock starts); not part of
    # the taint's identity, as upstream's Taint.MatchTaint
    time_added: float | None = field(default=None, compare=False)


@dataclass(slots=True, frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal, Exists
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """v1.Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@dataclass(slots=True, frozen=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule, ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None  # Honor, Ignore
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


# ---------------------------------------------------------------- containers


@dataclass(slots=True, frozen=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(slots=True)
class Container:
    name: str
    image: str = ""
    requests: Resources = field(default_factory=dict)
    limits: Resources = field(default_factory=dict)
    ports: list[ContainerPort] = field(default_factory=list)
    restart_policy: str | None = None  # "Always" on an init container makes it a sidecar
    # What NodeDeclaredFeatures infers from (upstream component-helpers/nodedeclaredfeatures):
    # a restartPolicyRules rule with action RestartAllContainers; a volumeMount with
    # bindMountOptions.
    restart_all_containers: bool = False
    bind_mount_options: bool = False


@dataclass(slots=True, frozen=True)
class Volume:
    """A pod volume; only the sources scheduling plugins look at are kept."""

    name: str
    pvc_claim_name: str | None = None
    read_only: bool = False
    source: dict[str, Any] | None = None  # other volume sources, raw
    image_reference: str | None = None  # an image volume's spec.volumes[].image.reference


# ---------------------------------------------------------------- pod


@dataclass(slots=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(slots=True, frozen=True)
class PodResourceClaim:
    """One ``spec.resourceClaims`` entry: a claim by name, or one made from a template."""

    name: str
    resource_claim_name: str = ""
    resource_claim_template_name: str = ""


@shallow_copy_by_fields
@dataclass(slots=True)
class PodSpec:
    node_name: str = ""
    scheduler_name: str = "default-scheduler"
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None  # PreemptLowerPriority, Never
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    overhead: Resources = field(default_factory=dict)
    resources: Container | None = None  # pod-level spec.resources (requests / limits only)
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    volumes: list[Volume] = field(default_factory=list)
    scheduling_gates: tuple[str, ...] = ()
    termination_grace_period_seconds: int = 30
    resource_claims: list[str] = field(default_factory=list)  # the entries' names
    pod_resource_claims: tuple[PodResourceClaim, ...] = ()
    host_network: bool = False
    host_users: bool | None = None
    # Gang membership in upstream's Workload API, as each release spells it: v1.35's
    # ``spec.workloadRef`` and v1.36+'s ``spec.schedulingGroup.podGroupName``.
    workload_ref: WorkloadRef | None = None
    scheduling_group: str | None = None


@dataclass(slots=True, frozen=True)
class WorkloadRef:
    """``spec.workloadRef`` (v1.35): the Workload, its pod group and the replica key."""

    name: str
    pod_group: str
    replica_key: str = ""


@dataclass(slots=True, frozen=True)
class ContainerExtendedResourceRequest:
    """One ``status.extendedResourceClaimStatus.requestMappings`` entry: which request of
    the extended-resource claim serves a container's extended resource."""

    container_name: str
    resource_name: str
    request_name: str


@dataclass(slots=True, frozen=True)
class ExtendedResourceClaimStatus:
    """``status.extendedResourceClaimStatus``: the claim the scheduler made for the pod's
    extended resources backed by DRA (DRAExtendedResource)."""

    resource_claim_name: str
    request_mappings: tuple[ContainerExtendedResourceRequest, ...] = ()


@shallow_copy_by_fields
@dataclass(slots=True)
class PodStatus:
    phase: str = "Pending"
    nominated_node_name: str = ""
    start_time: float | None = None
    conditions: list[PodCondition] = field(default_factory=list)
    # status.resourceClaimStatuses: pod claim name -> the generated claim's name (None: the
    # controller decided no claim is needed)
    resource_claim_statuses: dict[str, str | None] = field(default_factory=dict)
    extended_resource_claim_status: ExtendedResourceClaimStatus | None = None


@shallow_copy_by_fields
@dataclass(slots=True)
class Pod(Named):
    metadata: ObjectMeta
    spec: PodSpec
    status: PodStatus = field(default_factory=PodStatus)
    # Derived at parse time (see api.resources): the pod's requests exactly as v1.35's
    # PodRequests computes them, and the cpu / memory with the scheduler's non-zero
    # defaults (used only by scoring).
    requests: Resources = field(default_factory=dict)
    non_zero_cpu: int = 0
    non_zero_memory: int = 0
    # the spec as read (shared by the pods of one template): what ``--state-out`` writes
    raw_spec: dict[str, Any] | None = None

    @property
    def priority(self) -> int:
        return self.spec.priority or 0


def bound_copy(pod: Pod, node_name: str) -> Pod:
    """``pod`` as if bound to ``node_name`` ("": as if pending): a shallow copy with a spec
    of its own, the original unchanged."""
    out = copy.copy(pod)
    spec = out.spec = copy.copy(pod.spec)
    spec.node_name = node_name
    return out


# ---------------------------------------------------------------- node


@dataclass(slots=True, frozen=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int = 0


@dataclass(slots=True)
class NodeSpec:
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()


@dataclass(slots=True)
class NodeStatus:
    capacity: Resources = field(default_factory=dict)
    allocatable: Resources = field(default_factory=dict)
    images: tuple[ContainerImage, ...] = ()
    declared_features: tuple[str, ...] = ()  # status.declaredFeatures (NodeDeclaredFeatures)


@dataclass(slots=True)
class Node(Named):
    metadata: ObjectMeta
    spec: NodeSpec = field(default_factory=NodeSpec)
    status: NodeStatus = field(default_factory=NodeStatus)


@dataclass(slots=True)
class Namespace:
    metadata: ObjectMeta


@dataclass(slots=True)
class PriorityClass:
    metadata: ObjectMeta
    value: int = 0
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"


@dataclass(slots=True)
class GenericObject:
    """Any other scheduling-relevant object kept raw until its plugin lands
    (PV, PVC, StorageClass, CSINode, PDB, Service, ReplicaSet, ...)."""

    kind: str
    metadata: ObjectMeta
    raw: dict[str, Any]
