"""DynamicResources (upstream ``plugins/dynamicresources/dynamicresources.go``, v1.35).

PreEnqueue: every claim the pod names exists, is not being deleted, and (for claims made
from templates) is owned by the pod. PreFilter: the claims, their device classes, and one
structured ``Allocator`` over the allocated state (allocated claims plus in-flight
allocations) for the cycle. Filter: allocated claims' node selectors; the others allocated
on trial for the node (the result kept for Reserve). PostFilter: deallocate one allocated
claim that kept the pod off some node, when nobody else uses it. Score: prioritized-list
ranks, DefaultNormalizeScore'd. Reserve/Unreserve: in-flight allocations. PreBind: the
claim's ``status.allocation`` and ``status.reservedFor`` through the backend.

Extended resources backed by a DeviceClass (DRAExtendedResource, ``extended.py``): PreFilter
adds the pod's special claim (found from an earlier cycle, or in memory); Filter gives it the
requests a node leaves to DRA; PreBind creates it and records it in the pod's status;
PostFilter deletes one left by an earlier cycle; Unreserve deletes one PreBind created.
(Upstream ``extendeddynamicresources.go``.)

The reason strings are upstream's; every "unschedulable" of this plugin is
UnschedulableAndUnresolvable as upstream's ``statusUnschedulable``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.dra.store import (
    can_be_reserved,
    dra_index,
    pod_reference,
    reserved_for_pod,
    with_status,
)
from kubesched.api.dra.types import (
    DELETE_PROTECTION_FINALIZER,
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    ResourceClaim,
    claim_is_for_pod,
    parse_allocation_result,
)
from kubesched.api.encode import encode_claim_status
from kubesched.api.selectors import node_matches_terms
from kubesched.api.types import (
    ContainerExtendedResourceRequest,
    ExtendedResourceClaimStatus,
    NodeSelectorTerm,
    Pod,
)
from kubesched.clock import VirtualClock
from kubesched.config.args import parse_duration
from kubesched.config.plugin_args import DynamicResourcesArgs, typed_args
from kubesched.errors import InputError
from kubesched.framework.backend import Backend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.handle import feature_enabled
from kubesched.framework.interface import (
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    NodeList,
    PluginError,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReserveCheckpointedPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, error, skip, unresolvable
from kubesched.plugins.dynamicresources.batch import filter_rows
from kubesched.plugins.dynamicresources.cache import (
    AllocationMemo,
    IndexedAllocator,
    slice_index,
)
from kubesched.plugins.dynamicresources.diagnose import explain_allocation
from kubesched.plugins.dynamicresources.extended import (
    class_mapping_of,
    created_claim_name,
    find_extended_resource_claim,
    is_dra_extended_resource_name,
    is_special,
    node_claim,
    requests_and_mappings,
    special_claim,
)
from kubesched.plugins.dynamicresources.structured import (
    AllocationAborted,
    AllocationError,
    Allocator,
    FailedOnNode,
    Features,
)
from kubesched.plugins.helper import default_normalize_score
from kubesched.plugins.volumebinding.helpers import go_quote

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot
    from kubesched.framework.types import NodeToStatus

NAME = "DynamicResources"
STATE_KEY = NAME

#: resource.k8s.io FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8

RESOURCE_CLAIM = Resource.RESOURCE_CLAIM
RESOURCE_SLICE = Resource.RESOURCE_SLICE
DEVICE_CLASS = Resource.DEVICE_CLASS

# CycleState.Read's fwk.ErrNotFound, returned as is (getStateData): PostFilter sees it when
# an earlier PreFilter plugin rejected the pod before this one ran, and upstream's FitError
# then ends in "... not found" with no preemption sentence.
ERR_NO_STATE = "not found"
CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_CLAIM_NOT_CREATED = "ResourceClaim not created yet"
ERR_API_UNSUPPORTED = "the API of the pod or claim is not supported"

#: DynamicResourcesArgs.bindingTimeout's default (with binding conditions on)
DEFAULT_BINDING_TIMEOUT = 600.0


@dataclass(slots=True)
class PostFilterDecision:
    """What PostFilter would do (the shape ``explain`` reads of PostFilter plugins)."""

    status: Status
    nominated: str | None = None
    candidate: Any = None


class ClaimError(Exception):
    """A claim of the pod that cannot be used yet (foreachPodResourceClaim's errors)."""


def allocator_features(handle: Handle) -> Features:
    """AllocatorFeatures: the allocator's feature states from the release's gates."""
    def on(name: str) -> bool:
        return feature_enabled(handle, name)
    return Features(
        admin_access=on("DRAAdminAccess"),
        prioritized_list=on("DRAPrioritizedList"),
        partitionable_devices=on("DRAPartitionableDevices"),
        device_taints=on("DRADeviceTaints"),
        device_binding=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
        consumable_capacity=on("DRAConsumableCapacity"),
        list_type_attributes=on("DRAListTypeAttributes"))


def claim_name(pod: Pod, pc: Any) -> tuple[str | None, bool]:
    """resourceclaim.Name: the claim's name (None: the template made none, by design) and
    whether the pod must own it; raises ClaimError."""
    if pc.resource_claim_name:
        return pc.resource_claim_name, False
    if pc.resource_claim_template_name:
        statuses = pod.status.resource_claim_statuses
        if pc.name in statuses:
            return statuses[pc.name], True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": {ERR_CLAIM_NOT_CREATED}')
    raise ClaimError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc.name}": '
                     f"{ERR_API_UNSUPPORTED}")


@dataclass(slots=True)
class _NodeAllocation:
    """What Filter found for one node (upstream's nodeAllocation): the allocation of each
    claim to allocate, by claim index; the special claim as this node needs it (None: the
    node's device plugins serve every extended resource, or the pod has none) and which
    container's resource each of its requests serves."""

    results: dict[int, AllocationResult]
    extended_claim: ResourceClaim | None = None
    mappings: tuple[ContainerExtendedResourceRequest, ...] = ()


@dataclass(slots=True)
class _State:
    """stateData, shared by reference between clones as upstream's pointer."""

    # the pod's claims, then its special claim for extended resources (if any)
    claims: list[ResourceClaim] = field(default_factory=list)
    extended: int | None = None  # the special claim's index in claims
    # the pod's requests of extended resources (draExtendedResource.podScalarResources)
    # and the extended resource names DeviceClasses map
    extended_requests: dict[str, int] = field(default_factory=dict)
    class_mapping: dict[str, str] = field(default_factory=dict)
    allocator: Allocator | None = None
    # per claim: the allocated claim's node selector, the allocation Reserve chose
    available_on: list[tuple[NodeSelectorTerm, ...] | None] = field(default_factory=list)
    allocations: list[AllocationResult | None] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, _NodeAllocation] = field(default_factory=dict)

    def clone(self) -> _State:
        return self

    def to_allocate(self) -> list[int]:
        return [i for i, c in enumerate(self.claims) if c.allocation is None]

    def has_user_claims(self) -> bool:
        return len(self.claims) > (0 if self.extended is None else 1)


# The state of every pod without claims or mapped extended resources: PreScore, Reserve and
# PreBind read it and find nothing to do, and nothing writes to a state without claims.
_NO_CLAIMS = _State()


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin,
                       PreScorePlugin, ScorePlugin, ReservePlugin, PreBindPlugin,
                       EnqueueExtensions, ReserveCheckpointedPlugin):
    name = NAME

    args: DynamicResourcesArgs

    def __init__(self, args: DynamicResourcesArgs | dict[str, Any] | None,
                 handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = typed_args(DynamicResourcesArgs, args, handle.features)
        self.enabled = feature_enabled(handle, "DynamicResourceAllocation")
        self._memo = AllocationMemo()  # filter_batch's allocations kept across cycles
        # KEP-5007: devices that need preparing before the pod may bind
        self.binding_conditions = (feature_enabled(handle, "DRADeviceBindingConditions")
                                   and feature_enabled(handle, "DRAResourceClaimDeviceStatus"))
        timeout = self.args.binding_timeout
        self.binding_timeout = (parse_duration(timeout) if timeout
                                else DEFAULT_BINDING_TIMEOUT)
        # DynamicResourcesArgs.filterTimeout (defaulted to 10 s while the gate is on); zero
        # or the gate off: no limit
        filter_timeout = self.args.filter_timeout
        self.filter_timeout = (parse_duration(filter_timeout)
                               if filter_timeout and feature_enabled(
                                   handle, "DRASchedulerFilterTimeout") else 0.0)

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        """A pod with claims cannot be batched (its allocation is per node and per cycle);
        one without contributes nothing to the signature."""
        return None if pod.spec.pod_resource_claims else ()

    # ------------------------------------------------------------------ helpers

    def _objects(self) -> dict[str, list[Any]]:
        return self.handle.objects

    def _foreach_claim(self, pod: Pod) -> list[tuple[str, ResourceClaim]]:
        """foreachPodResourceClaim: the pod's claims (pod claim name, claim); raises
        ClaimError with upstream's text for one that is missing, deleting or not the
        pod's."""
        idx = dra_index(self._objects())
        out = []
        for pc in pod.spec.pod_resource_claims:
            name, must_own = claim_name(pod, pc)
            if name is None:
                continue
            claim = idx.claim(pod.namespace, name)
            if claim is None:
                # the assume cache's NotFoundError (TypeName "ResourceClaim")
                raise ClaimError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
            if claim.metadata.deletion_timestamp is not None:
                raise ClaimError(f'resourceclaim "{claim.name}" is being deleted')
            if must_own and not claim_is_for_pod(claim, pod.uid):
                raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} was not created "
                                 f"for pod {pod.namespace}/{pod.name} (pod is not owner)")
            out.append((pc.name, claim))
        return out

    @staticmethod
    def _state(state: CycleState) -> _State | None:
        s = state.read(STATE_KEY)
        return s if isinstance(s, _State) else None

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        add_update = ActionType.ADD | ActionType.UPDATE
        # queueing hints on: no UpdateNodeTaint
        node = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        return [
            ClusterEventWithHint(ClusterEvent(Resource.NODE, node)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_CLAIM, add_update),
                                 self.is_schedulable_after_claim_change),
            ClusterEventWithHint(ClusterEvent(Resource.POD,
                                              ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, add_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new is None:
            # a deletion (not registered; upstream's schedutil.As lets it through): the
            # pod's claims are gone or unchanged
            return QueueingHint.SKIP
        if not isinstance(new, ResourceClaim) or not (old is None
                                                      or isinstance(old, ResourceClaim)):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: "
                            f"{type(new).__name__}")
        try:
            uses = any(c.uid == new.uid for _, c in self._foreach_claim(pod))
        except ClaimError:
            return QueueingHint.SKIP
        if old is not None and old.allocation is not None and new.allocation is None:
            return QueueingHint.QUEUE  # devices were freed
        if not uses:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if (old.allocation, old.reserved_for, old.devices) == \
                (new.allocation, new.reserved_for, new.devices):
            return QueueingHint.SKIP  # the status is as before
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Pod):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: "
                            f"{type(new).__name__}")
        if pod.uid != new.uid:
            return QueueingHint.SKIP
        try:
            self._foreach_claim(new)
        except ClaimError:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # ------------------------------------------------------------------ PreEnqueue

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled or not pod.spec.pod_resource_claims:
            return None
        try:
            self._foreach_claim(pod)
        except ClaimError as e:
            return unresolvable(str(e))
        return None

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, skip()
        if not pod.spec.pod_resource_claims and not any(
                q and is_dra_extended_resource_name(n) for n, q in pod.requests.items()):
            # most pods: no claim and nothing _pre_filter_extended could map, so Skip
            # without looking at the DRA objects
            state.write(STATE_KEY, _NO_CLAIMS)
            return None, skip()
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = ([c for _, c in self._foreach_claim(pod)]
                      if pod.spec.pod_resource_claims else [])
        except ClaimError as e:
            return None, unresolvable(str(e))
        idx = dra_index(self._objects())
        extended = self._pre_filter_extended(s, pod, idx.claims.values(), idx.classes)
        if extended is not None:
            s.extended = len(claims)
            claims.append(extended)
        if not claims:
            return None, skip()
        dra = self.handle.dra
        prioritized = feature_enabled(self.handle, "DRAPrioritizedList")
        s.available_on = [None] * len(claims)
        s.allocations = [None] * len(claims)
        to_allocate = 0
        for i, claim in enumerate(claims):
            if claim.allocation is not None:
                if not can_be_reserved(claim) and not reserved_for_pod(claim, pod.uid):
                    return None, unresolvable("resourceclaim in use")
                s.available_on[i] = claim.allocation.node_selector
                continue
            to_allocate += 1
            if dra is not None and dra.claim_has_pending_allocation(claim.uid):
                return None, unresolvable(f"resource claim {claim.key} is in the process of "
                                          "being allocated")
            if i == s.extended:
                continue  # made by this plugin: Filter checks one from an earlier cycle
            for req in claim.spec.requests:
                if req.exactly is not None:
                    st = self._validate_class(idx.classes, req.exactly.device_class_name,
                                              req.name)
                    if st is not None:
                        return None, st
                elif req.first_available:
                    if not prioritized:
                        return None, unresolvable(
                            f"resource claim {claim.key}, request {req.name}: has "
                            "subrequests, but the DRAPrioritizedList feature is disabled")
                    for sub in req.first_available:
                        st = self._validate_class(idx.classes, sub.device_class_name,
                                                  f"{req.name}/{sub.name}")
                        if st is not None:
                            return None, st
                else:
                    return None, unresolvable(f"resource claim {claim.key}, request "
                                              f"{req.name}: unknown request type")
        if to_allocate:
            features = allocator_features(self.handle)
            # GatherAllocatedState with consumable capacity on, else the allocated devices
            allocated = (dra.allocated_state(self._objects(), features.consumable_capacity)
                         if dra is not None
                         else idx.allocated_state(features.consumable_capacity))
            # the Allocator over the slices indexed by node, with the kept CEL verdicts
            s.allocator = IndexedAllocator(features, allocated, idx.classes,
                                           slice_index(idx.slices), idx.taint_rules)
        s.claims = claims
        return None, None

    def _pre_filter_extended(self, s: _State, pod: Pod, claims: Any,
                             classes: dict[str, DeviceClass]) -> ResourceClaim | None:
        """preFilterExtendedResources: the pod's special claim when a DeviceClass maps one
        of its extended resources — the one an earlier cycle created, or a new in-memory
        one — with what Filter needs to size it per node."""
        if not feature_enabled(self.handle, "DRAExtendedResource"):
            return None
        requests = {n: q for n, q in pod.requests.items()
                    if q and is_dra_extended_resource_name(n)}
        if not requests:
            return None
        mapping = class_mapping_of(classes)
        if not any(n in mapping for n in requests):
            return None
        s.extended_requests = requests
        s.class_mapping = mapping
        return find_extended_resource_claim(pod, claims) or special_claim(pod)

    @staticmethod
    def _validate_class(classes: dict[str, Any], class_name: str, request: str
                        ) -> Status | None:
        if not class_name:
            return error(f"request {request}: unsupported request type")
        if class_name not in classes:
            return unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = self._state(state)
        if s is None:
            return error(ERR_NO_STATE)
        if not s.claims:
            return None
        node = node_info.node
        if node is None:
            return error("node not found")
        extended, mappings, st = self._filter_extended(s, pod, node_info)
        if st is not None:
            return st
        if extended is None and not s.has_user_claims():
            return None  # device plugins serve every extended resource here
        unavailable = [i for i, sel in enumerate(s.available_on)
                       if sel is not None and not node_matches_terms(node, sel)]
        if self.binding_conditions:
            # an allocated claim whose binding failed or timed out: PostFilter may
            # deallocate it so that other devices are tried
            for i, claim in enumerate(s.claims):
                if claim.allocation is None or i in unavailable:
                    continue
                try:
                    ready = claim_ready_for_binding(claim)
                except BindingFailed:
                    unavailable.append(i)
                    continue
                if not ready and self._timed_out(claim):
                    unavailable.append(i)
        if s.allocator is not None:
            indices, claims = _claims_for_node(s, extended)
            try:
                results = s.allocator.allocate(node, claims, self._filter_deadline())
            except AllocationAborted:
                return unresolvable("timed out trying to allocate devices")
            except FailedOnNode as e:
                # this node's pools only: other nodes may do (surfaced if none does)
                return unresolvable(str(e))
            except AllocationError as e:
                # a broken claim or class: abort scheduling of the pod (retried)
                return error(str(e))
            if results is None or len(results) != len(claims):
                return unresolvable(CANNOT_ALLOCATE)
            if not unavailable:
                s.node_allocations[node.name] = _NodeAllocation(
                    dict(zip(indices, results, strict=True)), extended, mappings)
        if unavailable:
            s.unavailable.update(unavailable)
            return unresolvable("resourceclaim not available on the node")
        return None

    def _filter_deadline(self) -> Callable[[], bool] | None:
        """Filter's time limit for one node's allocation (upstream: a context with
        filterTimeout), on the handle's clock. The simulator's virtual clock stands still
        while a cycle runs (a scheduling cycle takes no virtual time), so there the limit
        never passes and no check is made: decisions stay reproducible, where upstream's
        depend on the machine's speed. A clock that moves on its own (``kubesched run``)
        gets upstream's limit."""
        clock = self.handle.clock
        if not self.filter_timeout or clock is None or isinstance(clock, VirtualClock):
            return None
        deadline = clock.now() + self.filter_timeout
        return lambda: clock.now() > deadline

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                     ) -> BatchStatus:
        """``filter`` on the rows ``idx`` (see ``batch.py``), with the same side effects:
        the passing nodes' allocations and the claims unavailable somewhere recorded."""
        n = len(idx)
        if not self.enabled:
            return BatchStatus.success(n)
        s = self._state(state)
        if s is None:
            return BatchStatus.from_mask(np.ones(n, dtype=bool), Code.ERROR, (ERR_NO_STATE,))
        if not s.claims or not n:
            return BatchStatus.success(n)
        allocator = s.allocator
        if s.extended is not None or self._filter_deadline() is not None or (
                allocator is not None and not isinstance(allocator, IndexedAllocator)):
            # the special claim is sized per node (its requests are what the node's
            # allocatable lacks), and a time limit on a moving clock is per node's
            # allocation: the per-node form
            return self._filter_each(state, pod, snapshot, idx)
        indices = s.to_allocate()

        def wrap(results: list[AllocationResult]) -> _NodeAllocation:
            return _NodeAllocation(dict(zip(indices, results, strict=True)))

        # (the memo keeps the wrapped allocations by the claims' indices: nobody changes
        # a _NodeAllocation)
        out, unavailable, allocations = filter_rows(
            snapshot, idx, s.available_on, allocator, [s.claims[i] for i in indices],
            self._memo, wrap, ("node-allocation", *indices), self._binding_unavailable(s))
        s.unavailable.update(unavailable)
        s.node_allocations.update(allocations)
        return out

    def _binding_unavailable(self, s: _State) -> list[int]:
        """The allocated claims whose devices' binding failed or timed out: unavailable on
        every node (``filter``'s binding-condition check, once for all nodes)."""
        out: list[int] = []
        if not self.binding_conditions:
            return out
        for i, claim in enumerate(s.claims):
            if claim.allocation is None:
                continue
            try:
                ready = claim_ready_for_binding(claim)
            except BindingFailed:
                out.append(i)
                continue
            if not ready and self._timed_out(claim):
                out.append(i)
        return out

    def _filter_each(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                     ) -> BatchStatus:
        infos = snapshot.node_infos
        return BatchStatus.from_statuses([self.filter(state, pod, infos[row])
                                          for row in idx.tolist()])

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[str]:
        """For ``explain``: why the claims to allocate do not fit ``node_info``'s node (the
        detail behind "cannot allocate all claims"); empty when there is nothing to say."""
        s = self._state(state)
        if s is None or s.allocator is None or node_info.node is None:
            return []
        extended, _, st = self._filter_extended(s, pod, node_info)
        if st is not None:
            return []
        return explain_allocation(s.allocator, node_info.node, _claims_for_node(s, extended)[1])

    def _filter_extended(self, s: _State, pod: Pod, node_info: NodeInfo
                         ) -> tuple[ResourceClaim | None,
                                    tuple[ContainerExtendedResourceRequest, ...],
                                    Status | None]:
        """filterExtendedResources: the special claim with the requests this node leaves
        to DRA (those a DeviceClass maps and the node's allocatable lacks), or None."""
        if s.extended is None:
            return None, (), None
        claim = s.claims[s.extended]
        if claim.spec.requests:
            # created by an earlier cycle whose binding failed: PostFilter deletes it
            return None, (), unresolvable("cannot schedule extended resource claim")
        allocatable = node_info.allocatable
        needed = []
        for name in sorted(s.extended_requests):
            have = allocatable.get(name)
            if name in s.class_mapping and not have:
                needed.append(name)
            elif have is None:
                # neither a device plugin's nor a DeviceClass's resource
                return None, (), unresolvable("cannot fit resource")
        if not needed or claim.allocation is not None:
            return None, (), None
        requests, mappings = requests_and_mappings(pod, needed, s.class_mapping)
        return node_claim(claim, requests), mappings, None

    # ------------------------------------------------------------------ PostFilter

    def post_filter(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
                    ) -> tuple[str | None, Status]:
        return None, self._post_filter(state, pod, act=True)

    def decide(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
               ) -> PostFilterDecision:
        """PostFilter without acting (``explain``): the status it would return."""
        return PostFilterDecision(self._post_filter(state, pod, act=False))

    def _post_filter(self, state: CycleState, pod: Pod, *, act: bool) -> Status:
        if not self.enabled:
            return Status(Code.UNSCHEDULABLE, ("plugin disabled",))
        s = self._state(state)
        if s is None:
            return error(ERR_NO_STATE)
        if not s.claims:
            return Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",))
        extended = s.claims[s.extended] if s.extended is not None else None
        stale = extended is not None and not is_special(extended)
        # upstream picks one at random (Go map order); the lowest index here, so runs replay
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            if i == s.extended:
                if stale:
                    break  # deleted below
                continue
            if not claim.reserved_for or (len(claim.reserved_for) == 1
                                          and claim.reserved_for[0].uid == pod.uid):
                if act:
                    try:
                        self._update_status(with_status(claim, allocation=None,
                                                        reserved_for=(), devices=()))
                    except Exception as e:  # an API error from the backend
                        return error(str(e))
                return Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",))
        if stale and extended is not None:
            # the special claim of an earlier cycle (its binding failed): start afresh
            if act:
                try:
                    self._backend().delete_resource_claim(extended)
                except Exception as e:  # an API error from the backend
                    return error(str(e))
            return Status(Code.UNSCHEDULABLE, ("deletion of ResourceClaim completed",))
        return Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    def _backend(self) -> Backend:
        backend = self.handle.backend
        if backend is None:
            raise RuntimeError("no cluster backend to write claims to")
        return backend

    def _update_status(self, claim: ResourceClaim) -> ResourceClaim:
        return self._backend().update_resource_claim_status(claim)

    # ------------------------------------------------------------------ Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        # Upstream has no PreScore: its Score gives 0 everywhere to pods without claims to
        # allocate, which normalizes to 0 — the same totals as leaving it out, as here.
        s = self._state(state)
        if not self.enabled or s is None or s.allocator is None:
            return skip()
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        # without prioritized lists there is nothing to rank (upstream, since the fix of
        # computeScore: Score returns 0 with the gate off)
        if not feature_enabled(self.handle, "DRAPrioritizedList"):
            return 0
        s = self._state(state)
        if s is None or node_info.node is None:
            return 0
        found = s.node_allocations.get(node_info.node.name)
        if found is None:
            return 0
        try:
            return compute_score(s, found)
        except ScoreError as e:
            # the framework's wording of a Score error (RunScorePlugins)
            raise PluginError(f'running Score plugins: plugin "{self.name}" failed with: '
                              f"{e}") from None

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                    ) -> np.ndarray:
        """``score`` on the rows ``idx``: 0 everywhere unless a claim has a prioritized
        list (only chosen subrequests score)."""
        out = np.zeros(len(idx), dtype=np.int64)
        s = self._state(state)
        if s is None or not any(req.first_available for c in s.claims
                                for req in c.spec.requests):
            return out
        names = snapshot.table.names
        for k, row in enumerate(idx.tolist()):
            results = s.node_allocations.get(names[row])
            if results is not None:
                out[k] = compute_score(s, results)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize_score(scores, False)

    # ------------------------------------------------------------------ Reserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = self._state(state)
        if s is None:
            return error(ERR_NO_STATE)
        pending = s.to_allocate()
        if not s.claims or not pending or s.allocator is None:
            return None
        found = s.node_allocations.get(node_name)
        if found is None or not found.results:
            if all(i == s.extended for i in pending):
                return None  # only the special claim, and device plugins serve it here
            return error("claim allocation not found for node")
        want = [i for i in pending if i != s.extended or found.extended_claim is not None]
        if sorted(found.results) != want:
            return error(f"internal error, have {len(found.results)} allocations, "
                         f"{len(want)} claims to allocate, want {len(want)} claims")
        dra = self.handle.dra
        for i in want:
            result = found.results[i]
            s.allocations[i] = result
            if dra is not None:
                claim = s.claims[i]
                if i == s.extended and found.extended_claim is not None:
                    claim = found.extended_claim
                # the claim as PreBind will write it (upstream: "let's make it realistic")
                dra.signal_claim_pending_allocation(
                    claim.uid, with_status(protected(claim), allocation=result))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if not self.enabled:
            return
        s = self._state(state)
        if s is None or not s.claims:
            return
        dra = self.handle.dra
        for i, claim in enumerate(s.claims):
            if dra is not None:
                dra.remove_claim_pending_allocation(claim.uid)
            if i == s.extended:
                if not is_special(claim):
                    # PreBind created it: delete it, or its devices stay taken
                    with contextlib.suppress(Exception):  # upstream logs the failure
                        self._backend().delete_resource_claim(claim)
                continue
            if claim.allocation is not None and reserved_for_pod(claim, pod.uid):
                # the strategic-merge patch removing the pod from reservedFor
                stored = dra_index(self._objects()).claim(claim.namespace, claim.name)
                if stored is None or stored.uid != claim.uid:
                    continue
                kept = tuple(r for r in stored.reserved_for if r.uid != pod.uid)
                # upstream logs a failure: the next attempt unreserves again
                with contextlib.suppress(Exception):
                    s.claims[i] = self._update_status(with_status(stored, reserved_for=kept))

    # ------------------------------------------------------------------ checkpoint

    def reserved_choices(self, state: CycleState, pod: Pod, node_name: str
                         ) -> dict[str, Any] | None:
        """The devices Reserve allocated to the claims of a pod waiting at Permit (in
        memory until PreBind writes them): per claim, its allocation as the API holds it."""
        s = self._state(state)
        if s is None or not s.claims:
            return None
        claims = [{"claim": claim.name,
                   "allocation": encode_claim_status(with_status(claim, allocation=a))[
                       "allocation"]}
                  for claim, a in zip(s.claims, s.allocations, strict=True)
                  if a is not None and claim.allocation is None]
        return {"claims": claims} if claims else None

    def choose_as_reserved(self, state: CycleState, pod: Pod, node_name: str,
                           saved: dict[str, Any]) -> None:
        """Filter's allocation for ``node_name`` made the one ``reserved_choices`` wrote, so
        that Reserve allocates exactly those devices again."""
        s = self._state(state)
        to_allocate = {} if s is None else {s.claims[i].name: i for i in s.to_allocate()}
        if s is None or not to_allocate:
            raise InputError("the pod has no claim to allocate", field="claims")
        known = {(sl.driver, sl.pool, d.name) for sl in dra_index(self._objects()).slices
                 for d in sl.devices}
        results: dict[int, AllocationResult] = {}
        for k, entry in enumerate(saved["claims"]):
            fld = f"claims[{k}]"
            name = entry["claim"]
            i = to_allocate.get(name)
            if i is None or i in results:
                raise InputError("names no claim of the pod's that Reserve allocates (or one "
                                 "listed twice)", field=f"{fld}.claim", value=name)
            result = parse_allocation_result(entry["allocation"], f"{fld}.allocation")
            if result is None:
                raise InputError("must be the claim's allocation", field=f"{fld}.allocation")
            for j, r in enumerate(result.results):
                if (r.driver, r.pool, r.device) not in known:
                    raise InputError("names no device of the ResourceSlices",
                                     field=f"{fld}.allocation.devices.results[{j}]",
                                     value=f"{r.driver}/{r.pool}/{r.device}")
            results[i] = result
        missing = sorted(n for n, i in to_allocate.items()
                         if i not in results and i != s.extended)
        if missing:
            raise InputError("must hold the allocation of every claim Reserve allocates",
                             field="claims", value=missing[0])
        found = s.node_allocations.get(node_name)
        if s.extended is not None and s.extended in results and (
                found is None or found.extended_claim is None):
            raise InputError(f"node {node_name} does not size the pod's claim for extended "
                             "resources", field="claims", value=s.claims[s.extended].name)
        s.node_allocations[node_name] = _NodeAllocation(
            results, found.extended_claim if found is not None else None,
            found.mappings if found is not None else ())

    # ------------------------------------------------------------------ PreBind

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = self._state(state)
        if s is None:
            return error(ERR_NO_STATE)
        for i, claim in enumerate(s.claims):
            if reserved_for_pod(claim, pod.uid):
                continue
            try:
                s.claims[i] = self._bind_claim(s, i, pod, node_name)
            except Exception as e:  # an API error from the backend
                return error(str(e))
        if not self.binding_conditions or not any(
                r.binding_conditions for c in s.claims if c.allocation is not None
                for r in c.allocation.results):
            return None
        backend = self.handle.backend
        if backend is not None:
            backend.record_event(pod, "Normal", "BindingConditionsPending",
                                 f"waiting for binding conditions for device on node {node_name}")
        return self._wait_for_binding(s)

    def _wait_for_binding(self, s: _State) -> Status | None:
        """PreBind's wait until every device's binding conditions are True — an Error, and
        so another attempt, when a binding failure condition is True, a claim's own
        timeout passed, or the wait ends (upstream: ``device binding timeout`` after
        polling every 5 s up to bindingTimeout).

        kubesched's binding cycle runs in the scheduling loop and, in the simulator, takes
        no virtual time; nothing can change while it waits, so it looks once and a wait
        ends at once with upstream's timeout error. The pod is retried after its backoff
        (sooner when the claim's status changes) and looks again."""
        try:
            if self._pod_ready_for_binding(s):
                return None
        except BindingFailed as e:
            return error(str(e))
        return error("device binding timeout")

    def _pod_ready_for_binding(self, s: _State) -> bool:
        """isPodReadyForBinding over the claims as stored now; raises BindingFailed."""
        idx = dra_index(self._objects())
        for i, claim in enumerate(s.claims):
            current = idx.claim(claim.namespace, claim.name)
            if current is None or current.uid != claim.uid:
                raise BindingFailed(f'could not find ResourceClaim "{claim.key}"')
            s.claims[i] = current
            if not claim_ready_for_binding(current):
                if self._timed_out(current):
                    raise BindingFailed(f"claim {current.name} binding timeout")
                return False
        return True

    def _timed_out(self, claim: ResourceClaim) -> bool:
        """isClaimTimeout: bindingTimeout passed since the allocation was written, for a
        claim with binding conditions."""
        a = claim.allocation
        if not self.binding_conditions or a is None or a.allocation_timestamp is None:
            return False
        if not any(r.binding_conditions for r in a.results):
            return False
        return a.allocation_timestamp + self.binding_timeout < self._now()

    def _now(self) -> float:
        clock = self.handle.clock
        return clock.now() if clock is not None else time.time()

    def _bind_claim(self, s: _State, i: int, pod: Pod, node_name: str) -> ResourceClaim:
        """bindClaim: the allocation from Reserve (if any) and the pod's reservation written
        in one status update; the in-flight allocation ends either way. The special claim
        is created first, and the pod's status names it afterwards."""
        claim = s.claims[i]
        allocation = s.allocations[i]
        in_flight_uid = claim.uid
        extended = i == s.extended
        if extended and allocation is None and not claim.spec.requests:
            return claim  # device plugins serve the pod's extended resources
        dra = self.handle.dra
        try:
            found = s.node_allocations.get(node_name) if extended else None
            if extended and is_special(claim):
                if found is None or found.extended_claim is None:
                    raise RuntimeError(f"extended resource claim not found for node "
                                       f"{node_name}")
                claim = self._create_extended_claim(pod, found.extended_claim)
                s.claims[i] = claim  # Unreserve deletes it if binding fails from here on
            current = dra_index(self._objects()).claim(claim.namespace, claim.name)
            if current is None or current.uid != claim.uid:
                raise RuntimeError(f"claim {claim.key} got deleted in the meantime")
            if current.metadata.deletion_timestamp is not None:
                raise RuntimeError(f"claim {claim.key} got deleted in the meantime")
            if allocation is not None:
                if current.allocation is not None:
                    raise RuntimeError(f"claim {claim.key} got allocated elsewhere in the "
                                       "meantime")
                if DELETE_PROTECTION_FINALIZER not in current.metadata.finalizers:
                    # the finalizer keeps the claim (and its devices) from being deleted
                    # while allocated; the API server takes metadata only in a normal
                    # Update, so it goes first (kept when a previous attempt added it)
                    try:
                        current = self._backend().update_resource_claim(
                            protected(current))
                    except Exception as e:
                        raise RuntimeError(f"add finalizer to claim {claim.key}: {e}"
                                           ) from None
                current = with_status(current, allocation=allocation)
            current = with_status(current, reserved_for=(
                *current.reserved_for, pod_reference(pod.name, pod.uid)))
            if self.binding_conditions and current.allocation is not None and \
                    current.allocation.allocation_timestamp is None:
                # the binding timeout counts from here
                current = with_status(current, allocation=dataclasses.replace(
                    current.allocation, allocation_timestamp=self._now()))
            try:
                stored = self._update_status(current)
            except Exception as e:
                what = "allocation and reservation" if allocation is not None else "reservation"
                raise RuntimeError(f"add {what} to claim {claim.key}: {e}") from None
            if extended:
                mappings = found.mappings if found is not None else ()
                if not mappings:
                    raise RuntimeError(f"nil or empty request mappings, no update of pod "
                                       f"{pod.namespace}/{pod.name} "
                                       "ExtendedResourceClaimStatus")
                try:
                    self._backend().update_pod_extended_resource_claim_status(
                        pod, ExtendedResourceClaimStatus(stored.name, mappings))
                except Exception as e:
                    raise RuntimeError(f"update pod {pod.namespace}/{pod.name} "
                                       f"ExtendedResourceClaimStatus: {e}") from None
            return stored
        finally:
            if allocation is not None and dra is not None:
                dra.remove_claim_pending_allocation(in_flight_uid)

    def _create_extended_claim(self, pod: Pod, sized: ResourceClaim) -> ResourceClaim:
        """createExtendedResourceClaimInAPI: the node's variant of the special claim, under
        the name the API server would generate (``<pod>-extended-resources-xxxxx``)."""
        meta = copy.copy(sized.metadata)
        meta.name = created_claim_name(pod)
        meta.uid = ""
        try:
            created = self._backend().create_resource_claim(
                ResourceClaim(metadata=meta, spec=sized.spec))
        except Exception as e:
            raise RuntimeError(f"create claim for extended resources "
                               f"{pod.namespace}/{meta.name}: {e}") from None
        return created


def protected(claim: ResourceClaim) -> ResourceClaim:
    """``claim`` holding the delete-protection finalizer."""
    if DELETE_PROTECTION_FINALIZER in claim.metadata.finalizers:
        return claim
    meta = copy.copy(claim.metadata)
    meta.finalizers = (*meta.finalizers, DELETE_PROTECTION_FINALIZER)
    return with_status(claim, metadata=meta)


def _claims_for_node(s: _State, extended: ResourceClaim | None
                     ) -> tuple[list[int], list[ResourceClaim]]:
    """The claims to allocate on one node, with their indices: the special claim as this
    node needs it, left out where device plugins serve everything (upstream hands the
    allocator the empty claim there)."""
    indices = [i for i in s.to_allocate() if i != s.extended or extended is not None]
    claims = [extended if i == s.extended and extended is not None else s.claims[i]
              for i in indices]
    return indices, claims


class ScoreError(Exception):
    """computeScore's error: a claim to allocate has no trial result on the node."""


def compute_score(s: _State, found: _NodeAllocation) -> int:
    """computeScore: Σ over the pod's claims of (FirstAvailableDeviceRequestMaxSize − rank)
    for every subrequest allocated; allocated claims count with their allocation, the others
    with the node's trial result, in order (upstream's fix made on kubernetes 60286041, 1.37
    development; before it, the i-th claim was paired with the i-th result). (The special
    claim has no prioritized lists, so it adds nothing.)"""
    score = 0
    for i, claim in enumerate(s.claims):
        allocation = claim.allocation if claim.allocation is not None else found.results.get(i)
        if allocation is None:
            if i == s.extended and found.extended_claim is None:
                continue  # left out where device plugins serve it (see _claims_for_node)
            raise ScoreError(f"number of allocations {len(found.results)} is smaller than "
                             "number of claims needing allocation")
        chosen = {r.request for r in allocation.results if "/" in r.request}
        for req in claim.spec.requests:
            for rank, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - rank
    return score


class BindingFailed(Exception):
    """A binding failure condition is True, or the binding timed out (PreBind's error)."""


def device_status(claim: ResourceClaim, result: DeviceRequestAllocationResult
                  ) -> AllocatedDeviceStatus | None:
    """getAllocatedDeviceStatus: the driver's status of one allocated device."""
    for d in claim.devices:
        if (d.driver, d.pool, d.device, d.share_id) == \
                (result.driver, result.pool, result.device, result.share_id):
            return d
    return None


def claim_ready_for_binding(claim: ResourceClaim) -> bool:
    """isClaimReadyForBinding: every binding condition of every allocated device True;
    raises BindingFailed when a binding failure condition is True."""
    if claim.allocation is None:
        return False
    for result in claim.allocation.results:
        if not result.binding_conditions:
            continue
        status = device_status(claim, result)
        if status is None:
            return False
        conditions = {c.type: c for c in status.conditions}
        for name in result.binding_failure_conditions:
            failed = conditions.get(name)
            if failed is not None and failed.status == "True":
                raise BindingFailed(f"claim {claim.name} binding failed: "
                                    f"reason={failed.reason}, message={go_quote(failed.message)}")
        if any(conditions.get(name) is None or conditions[name].status != "True"
               for name in result.binding_conditions):
            return False
    return True
