"""DynamicResources (upstream ``plugins/dynamicresources/dynamicresources.go``, v1.35).

PreEnqueue: every claim the pod names exists, is not being deleted, and (for claims made
from templates) is owned by the pod. PreFilter: the claims, their device classes, and one
structured ``Allocator`` over the allocated state (allocated claims plus in-flight
allocations) for the cycle. Filter: allocated claims' node selectors; the others allocated
on trial for the node (the result kept for Reserve). PostFilter: deallocate one allocated
claim that kept the pod off some node, when nobody else uses it. Score: prioritized-list
ranks, DefaultNormalizeScore'd. Reserve/Unreserve: in-flight allocations. PreBind: the
claim's ``status.allocation`` and ``status.reservedFor`` through the backend.

The reason strings are upstream's; every "unschedulable" of this plugin is
UnschedulableAndUnresolvable as upstream's ``statusUnschedulable``.
"""

from __future__ import annotations

import contextlib
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
    AllocationResult,
    ResourceClaim,
    claim_is_for_pod,
)
from kubesched.api.selectors import node_matches_terms
from kubesched.api.types import NodeSelectorTerm, Pod
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
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
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
from kubesched.plugins.dynamicresources.structured import (
    AllocationError,
    Allocator,
    Features,
)
from kubesched.plugins.helper import default_normalize_score

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
ERR_CLAIM_NOT_CREATED = "ResourceClaim not created yet"
ERR_API_UNSUPPORTED = "the API of the pod or claim is not supported"


@dataclass(slots=True)
class PostFilterDecision:
    """What PostFilter would do (the shape ``explain`` reads of PostFilter plugins)."""

    status: Status
    nominated: str | None = None
    candidate: Any = None


class ClaimError(Exception):
    """A claim of the pod that cannot be used yet (foreachPodResourceClaim's errors)."""


def allocator_features(handle: Handle | None) -> Features:
    """AllocatorFeatures: the allocator's feature states from the release's gates."""
    def on(name: str) -> bool:
        return feature_enabled(handle, name)
    return Features(
        admin_access=on("DRAAdminAccess"),
        prioritized_list=on("DRAPrioritizedList"),
        partitionable_devices=on("DRAPartitionableDevices"),
        device_taints=on("DRADeviceTaints"),
        device_binding=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"))


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
class _State:
    """stateData, shared by reference between clones as upstream's pointer."""

    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    # per claim: the allocated claim's node selector, the allocation Reserve chose
    available_on: list[tuple[NodeSelectorTerm, ...] | None] = field(default_factory=list)
    allocations: list[AllocationResult | None] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    # node -> results of the claims to allocate, in their order
    node_allocations: dict[str, list[AllocationResult]] = field(default_factory=dict)

    def clone(self) -> _State:
        return self

    def to_allocate(self) -> list[int]:
        return [i for i, c in enumerate(self.claims) if c.allocation is None]


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin,
                       PreScorePlugin, ScorePlugin, ReservePlugin, PreBindPlugin,
                       EnqueueExtensions):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.enabled = feature_enabled(handle, "DynamicResourceAllocation")
        self._memo = AllocationMemo()  # filter_batch's allocations kept across cycles

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        """A pod with claims cannot be batched (its allocation is per node and per cycle);
        one without contributes nothing to the signature."""
        return None if pod.spec.pod_resource_claims else ()

    # ------------------------------------------------------------------ helpers

    def _objects(self) -> dict[str, list[Any]]:
        return self.handle.objects if self.handle is not None else {}

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
        if old.allocation == new.allocation and old.reserved_for == new.reserved_for:
            return QueueingHint.SKIP
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
        s = _State()
        state.write(STATE_KEY, s)
        if not pod.spec.pod_resource_claims:
            return None, skip()
        try:
            claims = [c for _, c in self._foreach_claim(pod)]
        except ClaimError as e:
            return None, unresolvable(str(e))
        if not claims:
            return None, skip()
        dra = self.handle.dra if self.handle is not None else None
        idx = dra_index(self._objects())
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
            allocated = (dra.allocated_devices(self._objects()) if dra is not None
                         else set(idx.allocated()))
            s.allocator = IndexedAllocator(allocator_features(self.handle), allocated,
                                           idx.classes, slice_index(idx.slices),
                                           idx.taint_rules)
        s.claims = claims
        return None, None

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
        unavailable = [i for i, sel in enumerate(s.available_on)
                       if sel is not None and not node_matches_terms(node, sel)]
        if s.allocator is not None:
            claims = [s.claims[i] for i in s.to_allocate()]
            try:
                results = s.allocator.allocate(node, claims)
            except AllocationError as e:
                # a broken claim or class: abort scheduling of the pod (retried)
                return error(str(e))
            if results is None or len(results) != len(claims):
                return unresolvable("cannot allocate all claims")
            if not unavailable:
                s.node_allocations[node.name] = results
        if unavailable:
            s.unavailable.update(unavailable)
            return unresolvable("resourceclaim not available on the node")
        return None

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
        if allocator is not None and not isinstance(allocator, IndexedAllocator):
            return self._filter_each(state, pod, snapshot, idx)
        out, unavailable, allocations = filter_rows(
            snapshot, idx, s.available_on, allocator,
            [s.claims[i] for i in s.to_allocate()], self._memo)
        s.unavailable.update(unavailable)
        s.node_allocations.update(allocations)
        return out

    def _filter_each(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                     ) -> BatchStatus:
        out = BatchStatus.success(len(idx))
        infos = snapshot.node_infos
        for k, row in enumerate(idx.tolist()):
            st = self.filter(state, pod, infos[row])
            if st is not None and not st.is_success():
                mask = np.zeros(len(idx), dtype=bool)
                mask[k] = True
                out.fail(mask, st.code, st.reasons)
        return out

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
        # upstream picks one at random (Go map order); the lowest index here, so runs replay
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            if not claim.reserved_for or (len(claim.reserved_for) == 1
                                          and claim.reserved_for[0].uid == pod.uid):
                if act:
                    try:
                        self._update_status(with_status(claim, allocation=None,
                                                        reserved_for=()))
                    except Exception as e:  # an API error from the backend
                        return error(str(e))
                return Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",))
        return Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    def _update_status(self, claim: ResourceClaim) -> ResourceClaim:
        backend = self.handle.backend if self.handle is not None else None
        update = getattr(backend, "update_resource_claim_status", None)
        if update is None:
            raise RuntimeError("the cluster backend cannot update ResourceClaims")
        stored: ResourceClaim = update(claim)
        return stored

    # ------------------------------------------------------------------ Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        # Upstream has no PreScore: its Score gives 0 everywhere to pods without claims to
        # allocate, which normalizes to 0 — the same totals as leaving it out, as here.
        s = self._state(state)
        if not self.enabled or s is None or s.allocator is None:
            return skip()
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = self._state(state)
        if s is None or node_info.node is None:
            return 0
        results = s.node_allocations.get(node_info.node.name)
        if results is None:
            return 0
        return compute_score(s, results)

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
        results = s.node_allocations.get(node_name)
        if not results:
            return error("claim allocation not found for node")
        if len(results) != len(pending):
            return error(f"internal error, have {len(results)} allocations, {len(pending)} "
                         f"claims to allocate, want {len(pending)} claims")
        dra = self.handle.dra if self.handle is not None else None
        for i, result in zip(pending, results, strict=True):
            s.allocations[i] = result
            if dra is not None:
                claim = s.claims[i]
                dra.signal_claim_pending_allocation(claim.uid,
                                                    with_status(claim, allocation=result))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if not self.enabled:
            return
        s = self._state(state)
        if s is None or not s.claims:
            return
        dra = self.handle.dra if self.handle is not None else None
        for i, claim in enumerate(s.claims):
            if dra is not None:
                dra.remove_claim_pending_allocation(claim.uid)
            if claim.allocation is not None and reserved_for_pod(claim, pod.uid):
                # the strategic-merge patch removing the pod from reservedFor
                stored = dra_index(self._objects()).claim(claim.namespace, claim.name)
                if stored is None or stored.uid != claim.uid:
                    continue
                kept = tuple(r for r in stored.reserved_for if r.uid != pod.uid)
                # upstream logs a failure: the next attempt unreserves again
                with contextlib.suppress(Exception):
                    s.claims[i] = self._update_status(with_status(stored, reserved_for=kept))

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
                s.claims[i] = self._bind_claim(s, i, pod)
            except Exception as e:  # an API error from the backend
                return error(str(e))
        return None

    def _bind_claim(self, s: _State, i: int, pod: Pod) -> ResourceClaim:
        """bindClaim: the allocation from Reserve (if any) and the pod's reservation written
        in one status update; the in-flight allocation ends either way."""
        claim = s.claims[i]
        allocation = s.allocations[i]
        dra = self.handle.dra if self.handle is not None else None
        try:
            current = dra_index(self._objects()).claim(claim.namespace, claim.name)
            if current is None or current.uid != claim.uid:
                raise RuntimeError(f"claim {claim.key} got deleted in the meantime")
            if current.metadata.deletion_timestamp is not None:
                raise RuntimeError(f"claim {claim.key} got deleted in the meantime")
            if allocation is not None:
                if current.allocation is not None:
                    raise RuntimeError(f"claim {claim.key} got allocated elsewhere in the "
                                       "meantime")
                current = with_status(current, allocation=allocation)
            current = with_status(current, reserved_for=(
                *current.reserved_for, pod_reference(pod.name, pod.uid)))
            try:
                return self._update_status(current)
            except Exception as e:
                what = "allocation and reservation" if allocation is not None else "reservation"
                raise RuntimeError(f"add {what} to claim {claim.key}: {e}") from None
        finally:
            if allocation is not None and dra is not None:
                dra.remove_claim_pending_allocation(claim.uid)


def compute_score(s: _State, results: list[AllocationResult]) -> int:
    """computeScore: Σ over the pod's claims of (FirstAvailableDeviceRequestMaxSize − rank)
    for every subrequest allocated; allocated claims count with their allocation."""
    score = 0
    pending = iter(results)
    for claim in s.claims:
        allocation = claim.allocation if claim.allocation is not None else next(pending, None)
        if allocation is None:
            continue
        chosen = {r.request for r in allocation.results if "/" in r.request}
        for req in claim.spec.requests:
            for rank, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - rank
    return score
