"""The embedded simulator: an in-memory cluster on a virtual clock.

It plays the API server's part for the scheduler core: it delivers object events (node and
pod adds, pod arrivals at their arrival time, bindings, pods finishing after their duration)
and applies what the scheduler asks for (bindings, status patches, events) as timed events.
It also plays the controllers a scheduler lives with: the scenario's faults (``kind:
Fault``), the taint manager, and pod controllers replacing the pods that go
(``faults.py``, ``controllers.py``).
"""

from __future__ import annotations

import copy
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from kubesched.api.dra.store import (
    devices_per_class,
    dra_index,
    remove_claim,
    replace_claim,
    with_status,
)
from kubesched.api.dra.types import ResourceClaim, claim_is_for_pod
from kubesched.api.faults import Fault
from kubesched.api.scenario import ClusterState, Scenario, pod_arrival, pod_duration
from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    controller_bind,
    copy_object,
    provision_volume,
    pvc_storage_class,
    replace_storage_object,
    resource_version_int,
    storage_index,
)
from kubesched.api.types import ExtendedResourceClaimStatus, Node, Pod, PodCondition
from kubesched.backends.sim.controllers import SCALED_DOWN, Controllers
from kubesched.backends.sim.faults import EVICTED_PREFIX, FaultRunner, TaintManager, node_removed
from kubesched.backends.sim.invariants import InvariantChecker, InvariantViolation
from kubesched.backends.sim.series import Series
from kubesched.clock import VirtualClock
from kubesched.config import SchedulerConfiguration, default_config
from kubesched.framework.backend import BindError
from kubesched.framework.interface import Plugin
from kubesched.scheduler import Scheduler

# Event kinds, in the order they are applied when due at the same virtual time.
_BOUND, _FINISH, _GONE, _ARRIVE = 0, 1, 2, 3
_STORAGE = 4  # a PV / PVC / ResourceClaim stored: (old or None, new or None)
_DELETED = 5  # a pod already gone from the API server, told to the scheduler late
_TICK = 6  # nothing but a change (a binding fault used up)
_FAULT = 7  # a Fault's time has come
_EVICT = 8  # the taint manager's eviction is due: (uid, time)
PREEMPTED_BY = "preempted by "
_Stored = TypeVar("_Stored", PersistentVolume, PersistentVolumeClaim)


@dataclass(slots=True)
class PodRecord:
    """One pending pod's fate, for the placements log and the summary."""

    key: str
    node: str | None = None
    time: float = 0.0
    attempts: int = 0
    message: str | None = None
    gates: tuple[str, ...] = ()  # a pod never attempted because it is still gated
    evicted_from: str | None = None  # the node a deleted / evicted pod was bound to

    @property
    def evicted(self) -> bool:
        return self.message is not None and self.message.startswith(EVICTED_PREFIX)

    def pending_reason(self) -> str:
        if self.message:
            return self.message
        if self.gates:
            return f"waiting for scheduling gates: [{' '.join(self.gates)}]"
        return "never attempted"

    def as_json(self) -> dict[str, Any]:
        out = {"pod": self.key, "node": self.node, "time": self.time,
               "attempts": self.attempts, "message": self.message}
        if self.evicted_from is not None:
            out["evicted_from"] = self.evicted_from
        return out


@dataclass
class SimResult:
    records: list[PodRecord]
    nodes: list[dict[str, Any]]
    wall_seconds: float
    virtual_seconds: float
    events: dict[str, int] = field(default_factory=dict)
    missing_node_pods: dict[str, str] = field(default_factory=dict)  # pod key -> its node
    # preemptor key -> the keys of the victims it evicted, in order
    preemptions: dict[str, list[str]] = field(default_factory=dict)
    # DeviceClass -> devices allocated at the end of the run
    devices: dict[str, int] = field(default_factory=dict)

    @property
    def scheduled(self) -> int:
        return sum(1 for r in self.records if r.node is not None)

    @property
    def pending(self) -> list[PodRecord]:
        return [r for r in self.records if r.node is None and not r.evicted]

    @property
    def evicted(self) -> list[PodRecord]:
        """Pods a fault or the controllers it set off took away (node removed, NotReady,
        deleted)."""
        return [r for r in self.records if r.node is None and r.evicted]


class SimCluster:
    def __init__(self, scenario: Scenario, config: SchedulerConfiguration | None = None,
                 *, seed: int = 0, registry: dict[str, type[Plugin]] | None = None,
                 check: bool = False, names_seed: int | None = None) -> None:
        self.scenario = scenario
        self.clock = VirtualClock()
        self.nodes: dict[str, Node] = {}  # the API server's nodes
        self.pods: dict[str, Pod] = {}
        self.records: dict[str, PodRecord] = {}
        self.event_counts: dict[str, int] = {}
        self._timeline: list[tuple[float, int, int, object]] = []
        self._seq = itertools.count()
        self._bound = 0
        self._on_node: dict[str, set[str]] = {}  # node -> uids of the pods bound to it
        self._by_key: dict[str, str] = {}  # ns/name -> uid of the pod by that name now
        # accounting: uid -> why, for the pods whose deletion was asked for (preempted,
        # evicted, deleted: their placement message) and for those gone from the API
        # server (that, or "finished")
        self.deleted: dict[str, str] = {}
        self.gone: dict[str, str] = {}
        self.created: list[Pod] = []  # pods the controllers created during the run
        self.preemptions: dict[str, list[str]] = {}  # preemptor key -> victims' keys
        self._keys: set[str] = {p.key for p in scenario.pods}  # every pod name ever used
        # the controllers' names come from ``seed`` too, unless told otherwise (``compare``
        # of two seeds: the same pods under the same names on both sides)
        self.controllers = Controllers(scenario, seed if names_seed is None else names_seed,
                                       self.nodes, self._keys)
        self.finished: list[Pod] = []  # pods that ran to completion (--state-out)
        self._finish_at: dict[str, float] = {}  # uid -> when a running pod finishes
        self.faults = FaultRunner(self)
        self.taints = TaintManager(self)
        # Termination: every change to the simulated cluster bumps ``_changes``; a failed
        # attempt records the count it saw. A pod that failed against the cluster as it is
        # now fails the same way when retried (the core is deterministic), so once nothing is
        # due and every queued pod has failed since the last change, the run is over.
        self._changes = 0
        self._failed_at: dict[str, int] = {}  # uid -> _changes at its last failed attempt
        self.until: float | None = None  # bound on virtual time (``simulate --until``)
        # simulate --explain: the pods whose cluster at their last failed attempt is kept
        self.explain_keys: set[str] = set()
        self.last_attempt: dict[str, tuple[Pod, ClusterState]] = {}
        # bindings so far when the run last woke up for Permit timeouts alone
        self._deadline_round_bound: int | None = None
        # (bindings, virtual time) when the run last made progress (see _churning)
        self._progress: tuple[int, float] = (0, 0.0)
        self._longest_wait = 0.0  # the longest Permit timeout seen
        self._spin_key: tuple[float, int, int] | None = None
        self._spin = 0
        # --check: every binding is judged before it is applied; the first violation ends
        # the run (raised from run_until_idle: the binder turns exceptions into statuses)
        self.checker = InvariantChecker(self) if check else None
        self.violation: InvariantViolation | None = None
        # simulate --report / --metrics: the run's time series, sampled as it goes (None:
        # not recorded, and nothing is paid for it)
        self.series: Series | None = None
        self.attempts = 0  # scheduling attempts, every pod's
        self.scheduler = Scheduler(self, self.clock, config or default_config(), seed=seed,
                                   registry=registry, recorder=self)
        h = self.scheduler.handle
        # the simulated API server's objects: lists of its own (PreBind replaces storage
        # objects in them), the objects shared with the scenario
        h.objects = {kind: list(objs) for kind, objs in scenario.objects.items()}
        h.namespaces = scenario.namespaces
        self._resource_version = 0

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
        self._changes += 1
        self._on_node.setdefault(node_name, set()).add(bound.uid)
        self._bound += 1
        if self.checker is not None:
            self.checker.bound(bound, node_name)
        self._push(self.clock.now(), _BOUND, (current, bound))  # ...watchers hear of it next

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
        rec = self.records.get(pod.uid)
        if rec is not None:
            rec.node, rec.time = target, self.clock.now()
        return target

    def _takes(self, pod: Pod, node_name: str) -> bool:
        return node_name in self.nodes and not self._admit(pod, node_name) and (
            self.checker is None or self.checker.check(pod, node_name) is None)

    # PersistentVolumes and claims: the API server's update, then what the PV controller and
    # a CSI external provisioner do about it, all at once; watchers hear of each change next.

    wait_for_volume_binding = False  # (so a claim not bound after the update never will be)

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        new = self._store_storage(pv)
        ref = new.spec.claim_ref
        if ref is None:
            return new
        pvc = storage_index(self.scheduler.handle.objects).pvc(ref.namespace, ref.name)
        if (pvc is not None and not pvc.spec.volume_name
                and (not ref.uid or ref.uid == pvc.metadata.uid)):
            new = self._controller_bind(new, pvc)
        return new

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim
                                       ) -> PersistentVolumeClaim:
        new = self._store_storage(pvc)
        objects = self.scheduler.handle.objects
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
        self._push(self.clock.now(), _STORAGE, (None, pv))
        self._controller_bind(pv, new)
        return new  # as stored by the update; the controller's binding follows

    def _store_storage(self, obj: _Stored) -> _Stored:
        """An Update of the API server: the stored object must not have changed since."""
        objects = self.scheduler.handle.objects
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
        self._push(self.clock.now(), _STORAGE, (current, new))
        return new

    def _controller_bind(self, pv: PersistentVolume, pvc: PersistentVolumeClaim
                         ) -> PersistentVolume:
        """The PV controller binds the claim and the volume (both stored, events pushed)."""
        new_pv, new_pvc = controller_bind(pv, pvc)
        for old, new in ((pv, new_pv), (pvc, new_pvc)):
            self._resource_version += 1
            new.metadata.resource_version = str(self._resource_version)
            replace_storage_object(self.scheduler.handle.objects, new)
            self._push(self.clock.now(), _STORAGE, (old, new))
        return new_pv

    # ResourceClaims: the API server's UpdateStatus (DynamicResources' PreBind, PostFilter),
    # and the resourceclaim controller and garbage collector when a pod is gone.

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        objects = self.scheduler.handle.objects
        current = dra_index(objects).claim(claim.namespace, claim.name)
        if current is None or current.uid != claim.uid:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        new = with_status(current, allocation=claim.allocation,
                          reserved_for=claim.reserved_for, devices=claim.devices)
        self._resource_version += 1
        new.metadata = copy.copy(current.metadata)
        new.metadata.resource_version = str(self._resource_version)
        replace_claim(objects, new)
        self._push(self.clock.now(), _STORAGE, (current, new))
        self.faults.claim_written(new)
        return dra_index(objects).claim(new.namespace, new.name) or new

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        objects = self.scheduler.handle.objects
        current = dra_index(objects).claim(claim.namespace, claim.name)
        if current is None or current.uid != claim.uid:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        # an Update of the main resource: metadata changes, the status is the stored one
        # (the spec is immutable)
        new = with_status(current, metadata=copy.copy(claim.metadata))
        self._resource_version += 1
        new.metadata.resource_version = str(self._resource_version)
        replace_claim(objects, new)
        self._push(self.clock.now(), _STORAGE, (current, new))
        return dra_index(objects).claim(new.namespace, new.name) or new

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        objects = self.scheduler.handle.objects
        if dra_index(objects).claim(claim.namespace, claim.name) is not None:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.name}" already exists')
        self._resource_version += 1
        new = with_status(claim, allocation=None, reserved_for=())
        new.metadata = copy.copy(claim.metadata)
        new.metadata.uid = new.metadata.uid or f"{claim.namespace}/{claim.name}"
        new.metadata.resource_version = str(self._resource_version)
        new.metadata.creation_timestamp = self.clock.now()
        replace_claim(objects, new)
        self._push(self.clock.now(), _STORAGE, (None, new))
        return new

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        objects = self.scheduler.handle.objects
        old = remove_claim(objects, claim)
        if old is not None:
            self._push(self.clock.now(), _STORAGE, (old, None))

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
        objects = self.scheduler.handle.objects
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
                self._push(self.clock.now(), _STORAGE, (claim, None))

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        # Status-only changes do not requeue pods upstream, so watchers are not told —
        # except a pending pod's nominatedNodeName being cleared or moved by someone else
        # (preemption clearing lower-priority nominations): the scheduler's informer
        # handler reacts to that (the room held for the pod is free again).
        current = self.pods.get(pod.uid)
        if current is None:
            return
        if condition is not None:
            conds = [c for c in current.status.conditions if c.type != condition.type]
            current.status.conditions = [*conds, condition]
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
        self._changes += 1
        self.scheduler.on_pod_update(current, new)

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        self.event_counts[reason] = self.event_counts.get(reason, 0) + 1

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Preemption's deletion of a victim (see ``delete``)."""
        current = self.pods.get(pod.uid)
        if current is not None:
            if reason.startswith(PREEMPTED_BY):
                self.preemptions.setdefault(reason[len(PREEMPTED_BY):], []).append(pod.key)
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
        self._changes += 1
        self.taints.cancel(current.uid)
        if not terminating:
            self.deleted[current.uid] = reason
            rec = self.records.get(current.uid)
            if rec is not None:
                rec.node, rec.message, rec.time = None, reason, now
                if current.spec.node_name:
                    rec.evicted_from = current.spec.node_name
            self._create(self.controllers.deleting(current))
        if not current.spec.node_name or force:
            if terminating:  # its grace period is cut short
                self._drop(_GONE, lambda payload: payload is current)
            self._remove(current)
            if informer_later:
                self._push(now, _DELETED, current)
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
        self._push(now + current.spec.termination_grace_period_seconds, _GONE, term)

    def _create(self, pods: list[Pod], at: float | None = None) -> None:
        """Pods a controller created: they arrive now (or at ``at``)."""
        for new in pods:
            self.created.append(new)
            self._push(self.clock.now() if at is None else at, _ARRIVE, new)

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
        self._changes += 1
        self.nodes[new.name] = new
        self.scheduler.on_node_update(old, new)
        if [t for t in old.spec.taints if t.effect == "NoExecute"] != \
                [t for t in new.spec.taints if t.effect == "NoExecute"]:
            self.taints.node_changed(new)

    def remove_node(self, name: str) -> bool:
        """The Node is deleted; the pod GC deletes the pods bound to it (force: no kubelet
        is left to confirm). False when there is no such node (any more)."""
        node = self.nodes.pop(name, None)
        if node is None:
            return False
        self._changes += 1
        self.scheduler.on_node_delete(node)
        for uid in sorted(self._on_node.get(name, ()), key=lambda u: self.pods[u].key):
            self.delete(self.pods[uid], node_removed(name), force=True)
        self._on_node.pop(name, None)
        return True

    def finish_time(self, uid: str) -> float | None:
        """When a running pod finishes (its ``kubesched.io/duration``), or None."""
        return self._finish_at.get(uid)

    def not_arrived(self) -> list[Pod]:
        """Pods still to arrive (a run cut short by ``--until``), in arrival order."""
        return [cast(Pod, e[3]) for e in sorted(self._timeline) if e[1] == _ARRIVE]

    def pod_by_key(self, key: str) -> Pod | None:
        uid = self._by_key.get(key)
        return self.pods.get(uid) if uid is not None else None

    def changed_after_attempt(self) -> None:
        """Something changed that the attempt in progress will not see as a change."""
        self._push(self.clock.now(), _TICK, None)

    def schedule_eviction(self, uid: str, at: float) -> None:
        self._push(at, _EVICT, (uid, at))

    def cancel_eviction(self, uid: str) -> None:
        self._drop(_EVICT, lambda payload: cast(tuple[str, float], payload)[0] == uid)

    def _drop(self, kind: int, match: Callable[[object], bool]) -> None:
        """Events of ``kind`` that no longer apply, dropped from the timeline rather than
        skipped when due: the run's end rule waits while anything is due."""
        kept = [e for e in self._timeline if not (e[1] == kind and match(e[3]))]
        if len(kept) != len(self._timeline):
            heapq.heapify(kept)
            self._timeline = kept

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

    # ------------------------------------------------------------------ Recorder

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None:
        self.attempts += 1
        if node is None:
            self._failed_at[pod.uid] = self._changes
            if pod.key in self.explain_keys:
                self._keep_attempt(pod)
        else:
            self._failed_at.pop(pod.uid, None)
        rec = self.records.get(pod.uid)
        if rec is None:
            return
        rec.attempts += 1
        if pod.uid in self.deleted or pod.uid not in self.pods:
            return  # deleted meanwhile (during its cycle or binding, or waiting): its fate
        rec.time = self.clock.now()
        if node is not None:
            rec.node = node
        else:
            rec.message = message

    def _keep_attempt(self, pod: Pod) -> None:
        """The cluster as this failed attempt saw it: references to the nodes and pods of
        the moment (objects are replaced, never changed, when they change), and the
        nominations; enough to explain the attempt after the run."""
        cache = self.scheduler.cache
        nodes = [ni.node for ni in cache.nodes.values() if ni.node is not None]
        running = [p for ni in cache.nodes.values() for p in ni.pods]
        nom = self.scheduler.queue.nominator
        nominated = [(p, nom.node_of[u]) for u in nom.node_of
                     if u != pod.uid and (p := nom.pod(u)) is not None]
        h = self.scheduler.handle
        self.last_attempt[pod.key] = (pod, ClusterState(
            nodes, running, nominated, {k: list(v) for k, v in h.objects.items()},
            h.namespaces))

    # ------------------------------------------------------------------ the run

    def _push(self, t: float, kind: int, payload: object) -> None:
        heapq.heappush(self._timeline, (t, kind, next(self._seq), payload))

    def _apply_due(self) -> None:
        # the kind says what the payload is: a Pod, or an (old, new) pair (see the _push calls)
        now = self.clock.now()
        while self._timeline and self._timeline[0][0] <= now:
            _t, kind, _s, payload = heapq.heappop(self._timeline)
            self._changes += 1
            if kind == _ARRIVE:
                pod = cast(Pod, payload)
                refused = self.scenario.admission_errors.get(pod.uid)
                if refused is not None:  # the API server refuses it: pending for good
                    if self.scheduler.responsible_for(pod):
                        self.records[pod.uid] = PodRecord(pod.key, time=now, message=refused)
                    continue
                self.pods[pod.uid] = pod
                self._by_key[pod.key] = pod.uid
                if self.scheduler.responsible_for(pod):  # others never enter our queue
                    self.records[pod.uid] = PodRecord(pod.key, time=now)
                self.scheduler.on_pod_add(pod)
            elif kind == _BOUND:
                old, new = cast(tuple[Pod, Pod], payload)
                self.scheduler.on_pod_update(old, new)
                if self.pods.get(new.uid) is new:
                    self.taints.pod_bound(new)
                    self._create(self.controllers.bound(new))
                d = pod_duration(new)
                if d is not None:
                    self._finish_at[new.uid] = now + d
                    self._push(now + d, _FINISH, new)
            elif kind == _FINISH:
                pod = cast(Pod, payload)
                cur = self.pods.get(pod.uid)
                if cur is not None and (cur is pod or (cur.metadata.deletion_timestamp is not None
                                                       and cur.spec.node_name
                                                       == pod.spec.node_name)):
                    self._remove(cur)  # finished (also while terminating)
                    self.taints.cancel(cur.uid)
                    self.scheduler.on_pod_delete(cur)
                    self._after_gone(cur)
            elif kind == _GONE:
                pod = cast(Pod, payload)
                if self.pods.get(pod.uid) is pod:
                    self._remove(pod)
                    self.scheduler.on_pod_delete(pod)
                    self._after_gone(pod)
            elif kind == _STORAGE:
                old_obj, new_obj = cast(tuple[Any, Any], payload)
                if new_obj is None:
                    self.scheduler.on_storage_object_delete(old_obj)
                elif old_obj is None:
                    self.scheduler.on_storage_object_add(new_obj)
                else:
                    self.scheduler.on_storage_object_update(old_obj, new_obj)
            elif kind == _DELETED:
                self.scheduler.on_pod_delete(cast(Pod, payload))
            elif kind == _FAULT:
                self.faults.apply(cast(Fault, payload))
            elif kind == _EVICT:
                uid, at = cast(tuple[str, float], payload)
                self.taints.fire(uid, at)

    def load(self) -> None:
        for node in self.scenario.nodes:
            self.nodes[node.name] = node
            self.scheduler.on_node_add(node)
        pending: list[tuple[tuple[float, bool, float, int], Pod]] = []
        for i, pod in enumerate(self.scenario.pods):
            if pod.spec.node_name:
                if pod.status.phase in ("Succeeded", "Failed"):
                    continue
                self.pods[pod.uid] = pod
                self._by_key[pod.key] = pod.uid
                self._on_node.setdefault(pod.spec.node_name, set()).add(pod.uid)
                self.scheduler.on_pod_add(pod)
                d = pod_duration(pod)
                if d is not None:  # running since time 0
                    self._finish_at[pod.uid] = d
                    self._push(d, _FINISH, pod)
            elif pod.status.phase not in ("Succeeded", "Failed"):
                ts = pod.metadata.creation_timestamp
                pending.append(((pod_arrival(pod), ts is None, ts or 0.0, i), pod))
        created, deleted = self.controllers.start(self.scenario.pods)
        doomed = {p.uid for p in deleted}
        pending.sort(key=lambda kp: kp[0])
        for (arrival, *_rest), pod in pending:
            if pod.uid in doomed:  # scaled down before it was ever scheduled
                self.deleted[pod.uid] = self.gone[pod.uid] = SCALED_DOWN
            else:
                self._push(arrival, _ARRIVE, pod)
        for pod in deleted:
            if pod.uid in self.pods:
                self.delete(pod, SCALED_DOWN)
        for pod in created:  # a template's kubesched.io/arrival: when its pods are created
            self._create([pod], at=pod_arrival(pod))
        for fault in self.scenario.faults:
            self._push(fault.at, _FAULT, fault)

    def key_in_use(self, key: str) -> bool:
        """Whether a pod was ever named ``key`` in this run (names are never reused)."""
        return key in self._keys

    def create_pod(self, pod: Pod) -> None:
        """A pod created now from outside the scenario (``kubesched capacity``'s copies):
        no controller owns, adopts or counts it."""
        self._keys.add(pod.key)
        self._push(self.clock.now(), _ARRIVE, pod)

    def add_pending(self, pods: list[Pod], at: float | None = None) -> None:
        """Pods that arrive later (at ``at``, or at their own arrival time)."""
        for pod in pods:
            self._push(pod_arrival(pod) if at is None else at, _ARRIVE, pod)

    def run(self, progress: Callable[[int, int], None] | None = None) -> SimResult:
        start = time.perf_counter()
        self.load()
        self.run_until_idle(progress)
        if self.series is not None:
            self.series.finish()
        wall = time.perf_counter() - start
        waiting = self.scheduler.waiting
        for uid, rec in self.records.items():
            pod = self.pods.get(uid)
            if rec.node is None and pod is not None:
                rec.gates = pod.spec.scheduling_gates
                wp = waiting.get(uid)
                if wp is not None:  # the run ended (--until) while it waited
                    rec.message = (f"waiting at Permit on node {wp.node} for "
                                   f"{', '.join(sorted(wp.pending))}")
                    why = [wp.messages[p] for p in sorted(wp.pending) if p in wp.messages]
                    if why:
                        rec.message += ": " + "; ".join(why)
                elif rec.message is None and not rec.gates:
                    # never let into the queue by a PreEnqueue plugin (a gang short of
                    # members): its words say why
                    rec.message = self.scheduler.pre_enqueue_message(pod)
        return SimResult(list(self.records.values()), self.utilisation(), wall,
                         self.clock.now(), dict(self.event_counts),
                         dict(self.scenario.missing_node_pods), dict(self.preemptions),
                         devices_per_class(dra_index(self.scheduler.handle.objects)
                                           .claims.values()))

    def run_until_idle(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Deliver events and schedule until nothing more can happen."""
        total = len(self._timeline)
        sched = self.scheduler
        queue = sched.queue
        series = self.series
        bound = 0
        while True:
            self._apply_due()
            scheduled = sched.schedule_one()
            if self.violation is not None:
                raise self.violation
            if series is not None:
                series.tick()
            if scheduled and not self._spinning():
                if progress is not None:
                    n = self.bound_count
                    if n != bound:
                        bound = n
                        progress(n, total)
                continue
            t_next = self._next_wakeup()
            if (t_next is None or self._stalled() or self._permit_livelock(t_next)
                    or self._churning(t_next)):
                break
            if self.until is not None and t_next > self.until:
                self.clock.advance_to(max(self.until, self.clock.now()))
                break
            if series is not None and t_next > self.clock.now():
                series.tick()  # the state just before the clock moves on
            self.clock.advance_to(t_next)
            queue.flush_backoff_completed()
            queue.flush_unschedulable_pods_leftover()

    @property
    def bound_count(self) -> int:
        return self._bound

    def _next_wakeup(self) -> float | None:
        """When something can next happen: a timed event, or a backoff expiring. Pods left
        unschedulable are retried (after 5 minutes) only while other events are still due."""
        candidates = []
        if self._timeline:
            candidates.append(self._timeline[0][0])
        expiry = self.scheduler.queue.next_backoff_expiry()
        if expiry is not None:
            candidates.append(max(expiry, self.clock.now()))
        deadline = self.scheduler.next_waiting_deadline()  # a pod waiting at Permit times out
        if deadline is not None:
            candidates.append(max(deadline, self.clock.now()))
        if not candidates:
            return None
        t = min(candidates)
        if self._timeline:
            leftover = self.scheduler.queue.next_unschedulable_timeout()
            if leftover is not None and leftover < t:
                t = max(leftover, self.clock.now())
        if t <= self.clock.now() and not self._timeline_due():
            # a backoff that is already over: move on a tick so flushes see it expired
            t = self.clock.now() + 1.0
        return t

    def _stalled(self) -> bool:
        """Nothing is due, and every pod still queued to be retried (after its backoff) has
        failed against the cluster as it is now: retrying cannot change anything, and a pod
        that errors every cycle (no nodes, a plugin error) would otherwise be retried forever
        as its backoff expires."""
        if self._timeline or len(self.scheduler.waiting):
            return False
        queue = self.scheduler.queue
        return all(self._failed_at.get(q.pod.uid) == self._changes
                   for q in (*queue.active_pods(), *queue.backoff_pods()))

    def _spinning(self) -> bool:
        """Cycles at one virtual instant that change nothing, far more of them than there are
        pending pods: members of a gang that cannot fit rejecting each other and activating
        each other past their backoff (a cycle takes no virtual time, so upstream's hot loop
        would never let the clock move). Past that, the run goes on to its next wake-up."""
        key = (self.clock.now(), self._bound, len(self._timeline))
        if key != self._spin_key:
            self._spin_key, self._spin = key, 0
            return False
        self._spin += 1
        if self._spin <= 10 * (len(self.scheduler.pending) + 1):
            return False
        self._spin = 0
        return True

    def _permit_livelock(self, t_next: float) -> bool:
        """Only Permit timeouts are left to wake up for, and the previous round of them bound
        nothing: gang members that time out, are retried, park again and time out again
        (each one activating its siblings, as upstream's gang plugins do) would go round for
        ever, so the run ends, the last of them still waiting."""
        if self._timeline or t_next != self.scheduler.next_waiting_deadline():
            self._deadline_round_bound = None
            return False
        expiry = self.scheduler.queue.next_backoff_expiry()
        if expiry is not None and expiry <= t_next:
            return False
        if self._deadline_round_bound == self._bound:
            return True
        self._deadline_round_bound = self._bound
        return False

    def _churning(self, t_next: float) -> bool:
        """Nothing is left on the timeline and nothing has bound for longer than the longest
        Permit wait seen plus the longest backoff, twice over: only retries remain (a gang
        that cannot fit, rejected at PostFilter and retried after its backoff for ever, as
        upstream would), and they cannot make room that no event brings."""
        if self._timeline or self._bound != self._progress[0]:
            self._progress = (self._bound, self.clock.now())
            return False
        for wp in self.scheduler.waiting:
            for _deadline, t in wp.pending.values():
                self._longest_wait = max(self._longest_wait, t)
        horizon = 2 * (self._longest_wait + self.scheduler.config.pod_max_backoff_seconds)
        return t_next - self._progress[1] > horizon

    def _timeline_due(self) -> bool:
        return bool(self._timeline) and self._timeline[0][0] <= self.clock.now()

    def utilisation(self) -> list[dict[str, Any]]:
        out = []
        for name, ni in self.scheduler.cache.nodes.items():
            if ni.node is None:
                continue
            alloc = ni.allocatable
            out.append({
                "node": name,
                "pods": len(ni.pods),
                "cpu_requested": ni.requested.get("cpu", 0),
                "cpu_allocatable": alloc.get("cpu", 0),
                "memory_requested": ni.requested.get("memory", 0),
                "memory_allocatable": alloc.get("memory", 0),
            })
        return out
