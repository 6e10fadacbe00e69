"""The simulated API server: the cluster's objects, what it answers the scheduler (the
``Backend``), and what the controllers a scheduler lives with do at once (the PV controller,
the resourceclaim controller and garbage collector, the pod GC, the kubelet's admission).

Every change it makes is counted (``changes``: the run loop's end rule reads it) and what
watchers are to hear of it is pushed onto the timeline (``deliver`` hands each event, when
due, to the scheduler's informer side and to the controllers).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kubesched.api.dra.store import dra_index, remove_claim, replace_claim, with_status
from kubesched.api.dra.types import ResourceClaim, claim_is_for_pod
from kubesched.api.dumptime import virtual_time
from kubesched.api.encode import encode_persistent_volume
from kubesched.api.scenario import Scenario, pod_arrival, pod_duration
from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    controller_bind,
    copy_object,
    object_key,
    provision_volume,
    pvc_storage_class,
    replace_storage_object,
    resource_version_int,
    storage_index,
)
from kubesched.api.types import (
    ExtendedResourceClaimStatus,
    Namespace,
    Node,
    Pod,
    PodCondition,
)
from kubesched.api.workloads import new_claim
from kubesched.backends.sim.accounting import Accounting
from kubesched.backends.sim.controllers import SCALED_DOWN, Controllers
from kubesched.backends.sim.faults import (
    TERMINATING_AT_LOAD,
    FaultRunner,
    TaintManager,
    node_removed,
)
from kubesched.backends.sim.invariants import InvariantChecker, InvariantViolation
from kubesched.backends.sim.timeline import (
    Arrival,
    BindingReported,
    DeletionToldLate,
    Event,
    EvictionDue,
    FaultDue,
    NodeAdded,
    PodFinished,
    PodGone,
    Stored,
    Tick,
    Timeline,
)
from kubesched.clock import VirtualClock
from kubesched.config import SchedulerConfiguration
from kubesched.framework.backend import BindError

if TYPE_CHECKING:
    from kubesched.scheduler import Scheduler

_Stored = TypeVar("_Stored", PersistentVolume, PersistentVolumeClaim)


def _key(event: Event) -> str:
    """The object an echo of a change is about."""
    match event:
        case BindingReported(new=pod) | DeletionToldLate(pod=pod):
            return pod.key
        case Stored(old=old, new=new):
            obj = new if new is not None else old
            return f"{obj.kind}/{obj.metadata.namespace}/{obj.metadata.name}"
    return ""


class ApiServer:
    """The simulated API server of ``scenario``'s cluster, on ``clock``. ``attach`` gives
    it its watchers (the scheduler) and the accounting before anything is loaded."""

    def __init__(self, scenario: Scenario, clock: VirtualClock, timeline: Timeline, *,
                 names_seed: int, check: bool) -> None:
        self.scenario = scenario
        self.clock = clock
        self.timeline = timeline
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.changes = 0  # every change to the cluster's objects, counted
        # those the scheduler's own calls made during a scheduling step (set by the run
        # loop: ``in_step``), and what they were, for the end rule
        self.in_step = False
        self.own_changes = 0
        self.own_writes: list[tuple[str, str]] = []
        self._echoes: set[int] = set()  # ids of events telling watchers of such changes
        self.bound_count = 0  # bindings applied
        self._on_node: dict[str, set[str]] = {}  # node -> uids of the pods bound to it
        self._by_key: dict[str, str] = {}  # ns/name -> uid of the pod by that name now
        # uid -> why, for the pods whose deletion was asked for (preempted, evicted,
        # deleted: their placement message) and for those gone from the API server (that,
        # or "finished")
        self.deleted: dict[str, str] = {}
        self.gone: dict[str, str] = {}
        self.created: list[Pod] = []  # pods the controllers created during the run
        self.finished: list[Pod] = []  # pods that ran to completion (--state-out)
        # the storage objects made during the run, as made (--state-out): the StatefulSet
        # controller's claims, the provisioner's volumes
        self.made_objects: list[dict[str, Any]] = []
        self._finish_at: dict[str, float] = {}  # uid -> when a running pod finishes
        self._keys: set[str] = {p.key for p in scenario.pods}  # every pod name ever used
        self._resource_version = 0
        self.controllers = Controllers(scenario, names_seed, self.nodes, self._keys)
        self.faults = FaultRunner(self)
        self.taints = TaintManager(self)
        # --check: every binding is judged before it is applied; the first violation ends
        # the run (raised by the run loop: the binder turns exceptions into statuses)
        self.checker = InvariantChecker(self) if check else None
        self.violation: InvariantViolation | None = None
        self.scheduler: Scheduler
        self.accounting: Accounting

    def attach(self, scheduler: Scheduler, accounting: Accounting) -> None:
        self.scheduler = scheduler
        self.accounting = accounting
        h = scheduler.handle
        # the API server's objects: lists of its own (PreBind replaces storage objects in
        # them), the objects shared with the scenario
        h.objects = {kind: list(objs) for kind, objs in self.scenario.objects.items()}
        h.namespaces = self.scenario.namespaces

    @property
    def objects(self) -> dict[str, list[Any]]:
        return self.scheduler.handle.objects

    @property
    def namespaces(self) -> dict[str, Namespace]:
        return self.scenario.namespaces

    @property
    def config(self) -> SchedulerConfiguration:
        return self.scheduler.config

    def raise_violation(self) -> None:
        """The invariant checker's first violation, raised where the run can end on it."""
        if self.violation is not None:
            raise self.violation

    def _count(self, what: str, key: str) -> None:
        self.changes += 1
        if self.in_step:
            self.own_changes += 1
            self.own_writes.append((what, key))

    def _echo(self, event: BindingReported | Stored | DeletionToldLate) -> None:
        """``event`` tells watchers of a change just made, next (due now)."""
        self.timeline.push(self.clock.now(), event)
        if self.in_step:
            self._echoes.add(id(event))

    def alive(self, uid: str) -> bool:
        """Whether the pod is on the API server and its deletion not asked for."""
        return uid in self.pods and uid not in self.deleted

    # ------------------------------------------------------------------ the scenario

    def load(self) -> None:
        """The scenario's nodes and bound pods now; its pending pods, faults and the pods
        its controllers create onto the timeline."""
        for node in self.scenario.nodes:
            self.add_node(node)
        pending: list[tuple[tuple[float, bool, float, int], Pod]] = []
        for i, pod in enumerate(self.scenario.pods):
            if pod.spec.node_name:
                if pod.status.phase in ("Succeeded", "Failed"):
                    continue
                self.pods[pod.uid] = pod
                self._by_key[pod.key] = pod.uid
                self._on_node.setdefault(pod.spec.node_name, set()).add(pod.uid)
                self.scheduler.on_pod_add(pod)
                if pod.metadata.deletion_timestamp is not None:
                    self._terminating_at_load(pod, 0.0)
                d = pod_duration(pod)
                if d is not None:  # running since time 0
                    self._finish_at[pod.uid] = d
                    self.timeline.push(d, PodFinished(pod))
            elif pod.status.phase not in ("Succeeded", "Failed"):
                ts = pod.metadata.creation_timestamp
                pending.append(((pod_arrival(pod), ts is None, ts or 0.0, i), pod))
        created, deleted = self.controllers.start(self.scenario.pods)
        doomed = {p.uid for p in deleted}
        for pod in self.scenario.pods:
            if pod.uid not in doomed and pod.status.phase not in ("Succeeded", "Failed"):
                self._make_claims(pod)
        pending.sort(key=lambda kp: kp[0])
        for (arrival, *_rest), pod in pending:
            if pod.uid in doomed:  # scaled down before it was ever scheduled
                self.deleted[pod.uid] = self.gone[pod.uid] = SCALED_DOWN
            else:
                self.timeline.push(arrival, Arrival(pod))
                if pod.metadata.deletion_timestamp is not None:
                    self._terminating_at_load(pod, arrival)
        for pod in deleted:
            if pod.uid in self.pods:
                self.delete(pod, SCALED_DOWN)
        for pod in created:  # a template's kubesched.io/arrival: when its pods are created
            self._create([pod], at=pod_arrival(pod))
        for node in self.scenario.nodes:  # NoExecute taints the dump holds
            self.taints.node_loaded(node, self.scenario.dump_time)
        for fault in self.scenario.faults:
            self.timeline.push(fault.at, FaultDue(fault))

    def load_objects(self, arriving: set[str]) -> None:
        """A state ``--state-out`` wrote, read with its SimulationState (``resume``): the
        objects as they were (the pods in ``arriving`` are still to come). The timeline is
        the state's, not made from the scenario's times."""
        now = self.clock.now()
        for node in self.scenario.nodes:
            self.add_node(node)
        sched = self.scheduler
        for pod in self.scenario.pods:
            if pod.status.phase in ("Succeeded", "Failed") or pod.uid in arriving:
                continue
            if pod.spec.node_name:
                self._on_node.setdefault(pod.spec.node_name, set()).add(pod.uid)
            else:
                refused = self.scenario.admission_errors.get(pod.uid)
                if sched.responsible_for(pod):
                    self.accounting.arrived(pod, now, refused)
                if refused is not None:
                    continue
            self.pods[pod.uid] = pod
            self._by_key[pod.key] = pod.uid
            sched.on_pod_add(pod)
        created, deleted = self.controllers.start(self.scenario.pods)
        for pod in deleted:
            if pod.uid in self.pods:
                self.delete(pod, SCALED_DOWN)
        self._create(created)

    def finishes_at(self, pod: Pod, at: float) -> None:
        """A running pod's end, restored with its PodFinished event."""
        self._finish_at[pod.uid] = at

    def used_keys(self) -> set[str]:
        """Every pod name used in the run so far (names are never reused)."""
        return set(self._keys)

    def remember_keys(self, keys: list[str]) -> None:
        self._keys.update(keys)

    def counters(self) -> dict[str, object]:
        """The counts the end rule compares (``--state-out``)."""
        return {"changes": self.changes, "ownChanges": self.own_changes,
                "boundCount": self.bound_count,
                "ownWrites": [list(w) for w in self.own_writes],
                "resourceVersion": self._resource_version}

    def restore_counters(self, saved: dict[str, Any]) -> None:
        self.changes, self.own_changes = int(saved["changes"]), int(saved["ownChanges"])
        self.bound_count = int(saved["boundCount"])
        self.own_writes[:] = [(str(w[0]), str(w[1])) for w in saved["ownWrites"]]
        self._resource_version = int(saved["resourceVersion"])

    def _terminating_at_load(self, pod: Pod, arrival: float) -> None:
        """A pod the scenario holds terminating (deletionTimestamp): it is gone at its
        deletionTimestamp at the latest (the API server set it to the deletion's time plus
        the grace period), counted from the dump's now; until then a bound one holds its
        resources, a pending one is never scheduled (skipPodSchedule). Its controller does
        not count it (it made the replacement before the dump was taken)."""
        self.deleted[pod.uid] = TERMINATING_AT_LOAD
        gone = virtual_time(pod.metadata.deletion_timestamp, self.scenario.dump_time)
        self.timeline.push(max(arrival, gone), PodGone(pod))

    def key_in_use(self, key: str) -> bool:
        """Whether a pod was ever named ``key`` in this run (names are never reused)."""
        return key in self._keys

    def create_pod(self, pod: Pod) -> None:
        """A pod created now from outside the scenario (``kubesched capacity``'s copies):
        no controller owns, adopts or counts it."""
        self._keys.add(pod.key)
        self.timeline.push(self.clock.now(), Arrival(pod))

    def add_pending(self, pods: list[Pod], at: float | None = None) -> None:
        """Pods that arrive later (at ``at``, or at their own arrival time)."""
        for pod in pods:
            self.timeline.push(pod_arrival(pod) if at is None else at, Arrival(pod))

    def add_node(self, node: Node) -> None:
        self.nodes[node.name] = node
        self._count("Node", node.name)
        self.scheduler.on_node_add(node)

    def add_nodes(self, nodes: list[Node]) -> None:
        """``add_node`` for each of ``nodes`` at this instant, the scheduler told of them
        together (``on_nodes_add``)."""
        for node in nodes:
            self.nodes[node.name] = node
            self._count("Node", node.name)
        self.scheduler.on_nodes_add(nodes)

    # ------------------------------------------------------------------ watchers

    def deliver(self, event: Event) -> None:
        """A due event, to the scheduler's informer side and the controllers."""
        self.changes += 1
        if self._echoes and id(event) in self._echoes:
            self._echoes.discard(id(event))
            self.own_changes += 1
            self.own_writes.append((type(event).__name__, _key(event)))
        now = self.clock.now()
        sched = self.scheduler
        match event:
            case Arrival(pod=pod):
                refused = self.scenario.admission_errors.get(pod.uid)
                if refused is not None:  # the API server refuses it: pending for good
                    if sched.responsible_for(pod):
                        self.accounting.arrived(pod, now, refused)
                    return
                self.pods[pod.uid] = pod
                self._by_key[pod.key] = pod.uid
                if sched.responsible_for(pod):  # others never enter our queue
                    self.accounting.arrived(pod, now)
                    if pod.uid in self.deleted:  # terminating at load: its fate is known
                        self.accounting.deleted(pod, self.deleted[pod.uid], now)
                else:
                    self.accounting.arrived(pod, now, sched.not_served(pod), unserved=True)
                sched.on_pod_add(pod)
            case BindingReported(old=old, new=new):
                sched.on_pod_update(old, new)
                if self.pods.get(new.uid) is new:
                    self.taints.pod_bound(new)
                    self._create(self.controllers.bound(new))
                d = pod_duration(new)
                if d is not None:
                    self._finish_at[new.uid] = now + d
                    self.timeline.push(now + d, PodFinished(new))
            case PodFinished(pod=pod):
                cur = self.pods.get(pod.uid)
                if cur is not None and (cur is pod or (cur.metadata.deletion_timestamp is not None
                                                       and cur.spec.node_name
                                                       == pod.spec.node_name)):
                    self._remove(cur)  # finished (also while terminating)
                    self.taints.cancel(cur.uid)
                    sched.on_pod_delete(cur)
                    self._after_gone(cur)
            case PodGone(pod=pod):
                if self.pods.get(pod.uid) is pod:
                    self._remove(pod)
                    sched.on_pod_delete(pod)
                    self._after_gone(pod)
            case Stored(old=old_obj, new=new_obj):
                if new_obj is None:
                    sched.on_storage_object_delete(old_obj)
                elif old_obj is None:
                    sched.on_storage_object_add(new_obj)
                else:
                    sched.on_storage_object_update(old_obj, new_obj)
            case DeletionToldLate(pod=pod):
                sched.on_pod_delete(pod)
            case FaultDue(fault=fault):
                self.faults.apply(fault)
            case EvictionDue(uid=uid, at=at):
                self.taints.fire(uid, at)
            case NodeAdded(node=node):
                self.add_node(node)
            case Tick():
                pass

    # ------------------------------------------------------------------ Backend

    def extender_bind(self, pod: Pod, node_name: str, bind: Callable[[], None]) -> None:
        bind()
        # the extender's Binding reaches this simulated API server as any binding does
        self.bind(pod, node_name)

    def bind(self, pod: Pod, node_name: str) -> None:
        # a fault acts before anything is judged: what it makes the API server answer
        # (a pod already bound, or gone) is no decision of the scheduler's
        self.faults.intercept_bind(pod, node_name)
        current = self.pods.get(pod.uid)
        if self.checker is not None:
            # before the refusals below: a double binding or an overcommit is the
            # scheduler's fault even though the API server / kubelet would refuse it
            v = self.checker.check(current if current is not None else pod, node_name)
            if v is not None:
                if self.violation is None:
                    self.violation = v
                raise v
        if current is None:
            raise BindError(f'pods "{pod.name}" not found')
        if current.spec.node_name:
            raise BindError(f'pod {pod.key} is already assigned to node '
                            f'"{current.spec.node_name}"', conflict=True)
        if node_name not in self.nodes:
            raise BindError(f'node "{node_name}" not found')
        refusal = self._admit(current, node_name)
        if refusal:
            raise BindError(f"pod {pod.key} does not fit on node {node_name}: {refusal}")
        self._apply_binding(current, node_name)

    def _apply_binding(self, current: Pod, node_name: str) -> None:
        bound = copy.copy(current)
        bound.spec = copy.copy(current.spec)
        bound.spec.node_name = node_name
        bound.status = copy.copy(current.status)
        bound.status.phase = "Running"
        bound.status.start_time = self.clock.now()
        self.pods[bound.uid] = bound  # the API server's state changes at once...
        self._count("Binding", bound.key)
        self._on_node.setdefault(node_name, set()).add(bound.uid)
        self.bound_count += 1
        if self.checker is not None:
            self.checker.bound(bound, node_name)
        self._echo(BindingReported(current, bound))  # ...watchers hear of it next

    def bind_elsewhere(self, pod: Pod, node_name: str, other: str | None) -> str:
        """A BindConflict fault: someone else's binding of ``pod`` landed first — to
        ``other`` when that node can take it (it exists, its kubelet admits the pod, the
        invariants hold), else to ``node_name``, the scheduler's own choice (a binding
        applied whose answer was lost). Returns where the pod is now bound."""
        current = self.pods.get(pod.uid)
        if current is None or current.spec.node_name:
            return current.spec.node_name if current is not None else node_name
        if other is not None and other != node_name and self._takes(current, other):
            target = other
        else:
            target = node_name
            if self.checker is not None:  # the scheduler's choice: judged as its own binding
                v = self.checker.check(current, node_name)
                if v is not None:
                    if self.violation is None:
                        self.violation = v
                    raise v
            if not self._takes(current, node_name):
                return node_name  # the kubelet would refuse it: only the conflict is left
        self._apply_binding(current, target)
        self.accounting.bound_elsewhere(pod, target, self.clock.now())
        return target

    def _takes(self, pod: Pod, node_name: str) -> bool:
        return node_name in self.nodes and not self._admit(pod, node_name) and (
            self.checker is None or self.checker.check(pod, node_name) is None) \
            and self._room_beside_assumed(pod, node_name)

    def _room_beside_assumed(self, pod: Pod, node_name: str) -> bool:
        """Whether ``pod`` fits beside what the scheduler holds on the node (pods waiting at
        Permit included): the other binding a BindConflict scripts never takes room the
        scheduler has promised, which would make the scheduler's later binding there an
        overcommit that is not its own doing."""
        ni = self.scheduler.cache.nodes.get(node_name)
        if ni is None:
            return False
        alloc, used = ni.allocatable, ni.requested
        return all(want <= 0 or r == "pods" or used.get(r, 0) + want <= alloc.get(r, 0)
                   for r, want in pod.requests.items())

    # PersistentVolumes and claims: the API server's update, then what the PV controller and
    # a CSI external provisioner do about it, all at once; watchers hear of each change next.

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        new = self._store_storage(pv)
        ref = new.spec.claim_ref
        if ref is None:
            return new
        pvc = storage_index(self.objects).pvc(ref.namespace, ref.name)
        if (pvc is not None and not pvc.spec.volume_name
                and (not ref.uid or ref.uid == pvc.metadata.uid)):
            new = self._controller_bind(new, pvc)
        return new

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim
                                       ) -> PersistentVolumeClaim:
        new = self._store_storage(pvc)
        objects = self.objects
        index = storage_index(objects)
        node_name = new.metadata.annotations.get(ANN_SELECTED_NODE)
        sc = index.storage_class(pvc_storage_class(new))
        ni = self.scheduler.cache.nodes.get(node_name) if node_name else None
        if (not node_name or new.spec.volume_name or sc is None or ni is None or ni.node is None
                or sc.provisioner in ("", NOT_SUPPORTED_PROVISIONER)):
            return new
        pv = provision_volume(new, sc, ni.node.metadata.labels, index.csi_node(node_name))
        self._resource_version += 1
        pv.metadata.resource_version = str(self._resource_version)
        replace_storage_object(objects, pv)
        self.made_objects.append(encode_persistent_volume(pv))
        self._echo(Stored(None, pv))
        self._controller_bind(pv, new)
        return new  # as stored by the update; the controller's binding follows

    def _store_storage(self, obj: _Stored) -> _Stored:
        """An Update of the API server: the stored object must not have changed since."""
        objects = self.objects
        index = storage_index(objects)
        current = (index.pvc(obj.namespace, obj.name) if obj.kind == "PersistentVolumeClaim"
                   else index.pv(obj.name))
        plural = obj.kind.lower() + "s"
        if current is None:
            raise BindError(f'{plural} "{obj.name}" not found')
        if current.metadata.resource_version != obj.metadata.resource_version:
            raise BindError(f'Operation cannot be fulfilled on {plural} "{obj.name}": the '
                            "object has been modified; please apply your changes to the latest "
                            "version and try again", conflict=True)
        new = copy_object(obj)
        self._resource_version = max(self._resource_version,
                                     resource_version_int(current) or 0) + 1
        new.metadata.resource_version = str(self._resource_version)
        replace_storage_object(objects, new)
        self._echo(Stored(current, new))
        return new

    def _controller_bind(self, pv: PersistentVolume, pvc: PersistentVolumeClaim
                         ) -> PersistentVolume:
        """The PV controller binds the claim and the volume (both stored, events pushed)."""
        new_pv, new_pvc = controller_bind(pv, pvc)
        for old, new in ((pv, new_pv), (pvc, new_pvc)):
            self._resource_version += 1
            new.metadata.resource_version = str(self._resource_version)
            replace_storage_object(self.objects, new)
            self._echo(Stored(old, new))
        return new_pv

    # ResourceClaims: the API server's UpdateStatus (DynamicResources' PreBind, PostFilter),
    # and the resourceclaim controller and garbage collector when a pod is gone.

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        objects = self.objects
        current = dra_index(objects).claim(claim.namespace, claim.name)
        if current is None or current.uid != claim.uid:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        new = with_status(current, allocation=claim.allocation,
                          reserved_for=claim.reserved_for, devices=claim.devices)
        self._resource_version += 1
        new.metadata = copy.copy(current.metadata)
        new.metadata.resource_version = str(self._resource_version)
        replace_claim(objects, new)
        self._echo(Stored(current, new))
        self.faults.claim_written(new)
        return dra_index(objects).claim(new.namespace, new.name) or new

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        objects = self.objects
        current = dra_index(objects).claim(claim.namespace, claim.name)
        if current is None or current.uid != claim.uid:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        # an Update of the main resource: metadata changes, the status is the stored one
        # (the spec is immutable)
        new = with_status(current, metadata=copy.copy(claim.metadata))
        self._resource_version += 1
        new.metadata.resource_version = str(self._resource_version)
        replace_claim(objects, new)
        self._echo(Stored(current, new))
        return dra_index(objects).claim(new.namespace, new.name) or new

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        objects = self.objects
        if dra_index(objects).claim(claim.namespace, claim.name) is not None:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.name}" already exists')
        self._resource_version += 1
        new = with_status(claim, allocation=None, reserved_for=())
        new.metadata = copy.copy(claim.metadata)
        new.metadata.uid = new.metadata.uid or f"{claim.namespace}/{claim.name}"
        new.metadata.resource_version = str(self._resource_version)
        new.metadata.creation_timestamp = self.clock.now()
        replace_claim(objects, new)
        self._echo(Stored(None, new))
        return new

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        objects = self.objects
        old = remove_claim(objects, claim)
        if old is not None:
            self._echo(Stored(old, None))

    def update_pod_extended_resource_claim_status(
            self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        # a status-only change: watchers are not told (no requeue upstream either)
        current = self.pods.get(pod.uid)
        if current is not None:
            current.status.extended_resource_claim_status = status

    def _release_claims(self, pod: Pod) -> None:
        """``pod`` is gone: the resourceclaim controller takes it out of its claims'
        reservedFor and deallocates a claim nobody uses any more; the garbage collector then
        deletes the claims made for the pod (owned by it)."""
        objects = self.objects
        for claim in dra_index(objects).claims_of_pod(pod.uid):
            reserved = any(r.uid == pod.uid for r in claim.reserved_for)
            owned = claim_is_for_pod(claim, pod.uid)
            if not reserved and not owned:
                continue
            if reserved:
                kept = tuple(r for r in claim.reserved_for if r.uid != pod.uid)
                claim = self.update_resource_claim_status(with_status(
                    claim, reserved_for=kept,
                    allocation=claim.allocation if kept else None))
            if owned:
                remove_claim(objects, claim)
                self._echo(Stored(claim, None))

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        # Status-only changes do not requeue pods upstream, so watchers are not told —
        # except a pending pod's nominatedNodeName being cleared or moved by someone else
        # (preemption clearing lower-priority nominations): the scheduler's informer
        # handler reacts to that (the room held for the pod is free again).
        current = self.pods.get(pod.uid)
        if current is None:
            return
        conds = current.status.conditions
        if condition is not None and not (conds and conds[-1] == condition):
            # (unchanged, as a pending pod's retries mostly leave it, there is nothing to do)
            if len(conds) == 1 and conds[0].type == condition.type:
                current.status.conditions = [condition]  # (a pending pod's one condition)
            else:
                current.status.conditions = [
                    *(c for c in conds if c.type != condition.type), condition]
        if nominated_node_name is None or \
                nominated_node_name == current.status.nominated_node_name:
            return
        if current.spec.node_name or not current.status.nominated_node_name:
            current.status.nominated_node_name = nominated_node_name
            return
        new = copy.copy(current)
        new.status = copy.copy(current.status)
        new.status.nominated_node_name = nominated_node_name
        self.pods[pod.uid] = new
        self._count("NominatedNodeName", f"{new.key} {nominated_node_name}")
        self.scheduler.on_pod_update(current, new)

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        self.accounting.event(reason)

    def failed_scheduling(self, failures: Sequence[tuple[Pod, PodCondition, str | None, str]]
                          ) -> None:
        """``record_event`` and ``update_pod_status`` for each failure: the events are
        counted, and a pod whose condition and nomination stay (a retry that failed as
        before) is left as it is."""
        self.accounting.event("FailedScheduling", len(failures))
        pods = self.pods
        for pod, condition, nominated, _message in failures:
            current = pods.get(pod.uid)
            if current is None:
                continue
            conds = current.status.conditions
            if (conds and conds[-1] == condition and (
                    nominated is None or nominated == current.status.nominated_node_name)):
                continue
            self.update_pod_status(pod, condition, nominated)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Preemption's deletion of a victim (see ``delete``)."""
        current = self.pods.get(pod.uid)
        if current is not None:
            self.accounting.preempted(pod, reason)
            self.delete(current, reason)

    def delete(self, current: Pod, reason: str, *, force: bool = False,
               informer_later: bool = False) -> None:
        """Graceful deletion: a bound pod is marked terminating at once (deletionTimestamp;
        watchers hear of the update) and goes away after its terminationGracePeriodSeconds
        of virtual time, freeing its resources then; a pending pod goes at once, and so does
        any pod when ``force`` (grace period 0, as the pod GC deletes). ``reason`` becomes
        its placement message (a pod already terminating keeps its first one). With
        ``informer_later`` the scheduler hears of a pending pod's deletion only on the next
        event delivery."""
        now = self.clock.now()
        terminating = current.metadata.deletion_timestamp is not None
        if terminating and not force:
            return
        self._count("Delete", current.key)
        self.taints.cancel(current.uid)
        if not terminating:
            self.deleted[current.uid] = reason
            self.accounting.deleted(current, reason, now)
            self._create(self.controllers.deleting(current))
        if not current.spec.node_name or force:
            if terminating:  # its grace period is cut short
                self.timeline.drop(lambda e: isinstance(e, PodGone) and e.pod is current)
            self._remove(current)
            if informer_later:
                self._echo(DeletionToldLate(current))
            else:
                self.scheduler.on_pod_delete(current)
            self._after_gone(current)
            return
        term = copy.copy(current)
        term.metadata = copy.copy(current.metadata)
        term.metadata.deletion_timestamp = now
        term.status = copy.copy(current.status)
        term.status.conditions = list(current.status.conditions)
        self.pods[term.uid] = term
        self.scheduler.on_pod_update(current, term)
        self.timeline.push(now + current.spec.termination_grace_period_seconds, PodGone(term))

    def _create(self, pods: list[Pod], at: float | None = None) -> None:
        """Pods a controller created: they arrive now (or at ``at``)."""
        for new in pods:
            self.created.append(new)
            self._make_claims(new)
            self.timeline.push(self.clock.now() if at is None else at, Arrival(new))

    def _make_claims(self, pod: Pod) -> None:
        """The StatefulSet controller's createPersistentVolumeClaims for ``pod``: each claim
        of its templates that does not exist is created (defaulted as the API server's
        DefaultStorageClass admission does); one that exists is used as it is."""
        objects = self.objects
        for doc in self.controllers.claims_for(pod):
            md = doc["metadata"]
            if storage_index(objects).pvc(md["namespace"], md["name"]) is not None:
                continue
            pvc = new_claim(doc, objects.get("StorageClass", []))
            self._resource_version += 1
            pvc.metadata.resource_version = str(self._resource_version)
            pvc.metadata.creation_timestamp = self.clock.now()
            replace_storage_object(objects, pvc)
            self._count("PersistentVolumeClaim", object_key(pvc))
            self._echo(Stored(None, pvc))
            self.made_objects.append(doc)

    def _after_gone(self, pod: Pod) -> None:
        """``pod`` has left the API server (the last step of a deletion, or finished)."""
        finished = pod.uid not in self.deleted
        self.gone[pod.uid] = self.deleted.get(pod.uid, "finished")
        self._release_claims(pod)
        if finished:
            self.finished.append(pod)
        self._create(self.controllers.gone(pod, finished))

    # Nodes changed by faults: the API server's object, then watchers (the scheduler, the
    # taint manager, the pod GC) hear of it at once.

    def update_node(self, old: Node, new: Node) -> None:
        self._count("Node", new.name)
        self.nodes[new.name] = new
        self.scheduler.on_node_update(old, new)
        if [t for t in old.spec.taints if t.effect == "NoExecute"] != \
                [t for t in new.spec.taints if t.effect == "NoExecute"]:
            self.taints.node_changed(new)

    def remove_node(self, name: str, *, pod_gc: bool = True) -> bool:
        """The Node is deleted; the pod GC (unless ``pod_gc`` is False: a cluster without
        one, as scheduler_perf's) deletes the pods bound to it (force: no kubelet is left
        to confirm). False when there is no such node (any more)."""
        node = self.nodes.pop(name, None)
        if node is None:
            return False
        self._count("NodeDelete", name)
        self.scheduler.on_node_delete(node)
        if not pod_gc:
            return True
        for uid in sorted(self._on_node.get(name, ()), key=lambda u: self.pods[u].key):
            self.delete(self.pods[uid], node_removed(name), force=True)
        self._on_node.pop(name, None)
        return True

    def finish_time(self, uid: str) -> float | None:
        """When a running pod finishes (its ``kubesched.io/duration``), or None."""
        return self._finish_at.get(uid)

    def not_arrived(self) -> list[Pod]:
        """Pods still to arrive (a run cut short by ``--until``), in arrival order."""
        return [pod for _t, pod in self.arrivals()]

    def arrivals(self) -> list[tuple[float, Pod]]:
        """Pods still to arrive and when, in arrival order."""
        return [(t, e.pod) for t, e in self.timeline.timed() if isinstance(e, Arrival)]

    def pod_by_key(self, key: str) -> Pod | None:
        uid = self._by_key.get(key)
        return self.pods.get(uid) if uid is not None else None

    def changed_after_attempt(self) -> None:
        """Something changed that the attempt in progress will not see as a change."""
        self.timeline.push(self.clock.now(), Tick())

    def schedule_eviction(self, uid: str, at: float) -> None:
        self.timeline.push(at, EvictionDue(uid, at))

    def cancel_eviction(self, uid: str) -> None:
        self.timeline.drop(lambda e: isinstance(e, EvictionDue) and e.uid == uid)

    def _admit(self, pod: Pod, node_name: str) -> str:
        """What a kubelet would say of ``pod`` joining ``node_name``: "" if it fits (as
        NodeResourcesFit counts: the pods' requests against allocatable), else why not.
        The simulator's own check, independent of the scheduler's cache."""
        alloc = self.nodes[node_name].status.allocatable
        uids = self._on_node.get(node_name, ())
        if len(uids) + 1 > alloc.get("pods", 0):
            return "too many pods"
        for r, want in pod.requests.items():
            if want <= 0 or r == "pods":
                continue
            if r not in alloc and "/" in r and not r.startswith("kubernetes.io/"):
                # the kubelet drops extended resources its node does not have at all
                # (removeMissingExtendedResources): a scheduler extender manages those
                continue
            used = sum(self.pods[u].requests.get(r, 0) for u in uids)
            if used + want > alloc.get(r, 0):
                return f"insufficient {r}"
        return ""

    def pods_on_node(self, node_name: str) -> set[str]:
        """uids of the pods bound to ``node_name`` (terminating ones included)."""
        return self._on_node.get(node_name, set())

    def _remove(self, pod: Pod) -> None:
        """The pod leaves the API server (finished, deleted, gone after its grace period)."""
        del self.pods[pod.uid]
        if self._by_key.get(pod.key) == pod.uid:
            del self._by_key[pod.key]
        if pod.spec.node_name:
            self._on_node.get(pod.spec.node_name, set()).discard(pod.uid)

