"""NodeResourcesFit (upstream ``noderesources/fit.go``, v1.35).

PreFilter computes the pod's request (v1.35 ``PodRequests``: containers, sidecars, init
maximum, overhead, pod-level resources). Filter rejects a node when

1. ``len(pods) + 1 > allowedPodNumber`` — ``"Too many pods"`` (even for a pod requesting
   nothing), then for each resource the pod requests (> 0), in the order cpu, memory,
   ephemeral-storage, scalar resources (sorted by name; Go iterates a map here):
2. ``request > allocatable − requested`` — ``"Insufficient <resource>"``.

Extended resources named in ``ignoredResources`` or whose domain is in
``ignoredResourceGroups`` are not checked. The status is Unschedulable with every reason, or
UnschedulableAndUnresolvable when some failing resource's request exceeds the node's whole
allocatable (preemption cannot help). With DRAExtendedResource (alpha off 1.35, beta on 1.36,
locked on 1.37) an extended resource some DeviceClass maps is left to DynamicResources on a
node whose allocatable has none of it (``shouldDelegateResourceToDRA``); the mapping is read
once per cycle at PreFilter. A scoring strategy naming such a resource scores the node's
devices of the class (``dra_extended.py``).

Score uses the configured strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio)
through ``ResourceAllocationScorer`` with non-zero cpu / memory defaults. No NormalizeScore.
The batch form keeps each row's score per request vector across cycles (a
``framework.table_cache.RowMemo``, as BalancedAllocation), except for pods whose scored
resources DeviceClasses back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.dra.store import dra_index
from kubesched.api.dra.types import DeviceClass
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Node, Pod
from kubesched.config.plugin_args import NodeResourcesFitArgs, typed_args
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.handle import Handle, feature_enabled
from kubesched.framework.interface import (
    READS_RESOURCES,
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    NodeList,
    PluginError,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.table_cache import RowMemo
from kubesched.plugins.dynamicresources.extended import (
    DEVICE_CLASS_PREFIX,
    class_mapping_of,
    is_dra_extended_resource_name,
)
from kubesched.plugins.helper import is_extended_resource_name, is_scalar_resource_name
from kubesched.plugins.noderesources.allocated import least_resource_scorer, most_resource_scorer
from kubesched.plugins.noderesources.dra_extended import (
    DraScoreState,
    dra_scored_names,
    pre_score_dra,
)
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    parse_shape,
    requested_to_capacity_ratio_scorer,
)
from kubesched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
)

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"

TOO_MANY_PODS = "Too many pods"

_BASE = (CPU, MEMORY, EPHEMERAL_STORAGE)


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


def max_resource_request(requests: dict[str, int]) -> dict[str, int]:
    """``preFilterState.SetMaxResource(PodRequests(pod))``: cpu, memory, ephemeral-storage
    and the scalar resources of a pod's request (other names are dropped)."""
    return {name: v for name, v in requests.items()
            if name in _BASE or is_scalar_resource_name(name)}


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's request: the (resource, quantity) pairs Filter checks, in reason order, and
    per check whether a DeviceClass maps it (DynamicResources' on a node without it)."""

    checks: tuple[tuple[str, int], ...]
    reasons: tuple[str, ...]
    dra_backed: tuple[bool, ...] = ()

    def clone(self) -> _PreFilterState:
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]
    # DRAExtendedResource: devices backing the scored extended resources (None: no class
    # backs any of them)
    dra: DraScoreState | None = None

    def clone(self) -> _PreScoreState:
        return self


def _fits_checks(requests: dict[str, int], ignored: frozenset[str],
                 ignored_groups: frozenset[str]) -> tuple[tuple[str, int], ...]:
    req = max_resource_request(requests)
    checks = [(name, req[name]) for name in _BASE if req.get(name, 0) > 0]
    for name in sorted(n for n in req if n not in _BASE):
        q = req[name]
        if q == 0:
            continue
        if is_extended_resource_name(name) and (
                name in ignored or (ignored_groups and name.split("/")[0] in ignored_groups)):
            continue
        checks.append((name, q))
    return tuple(checks)


def fits_request(checks: tuple[tuple[str, int], ...], allocatable: Mapping[str, int],
                 requested: Mapping[str, int], num_pods: int, dra_backed: tuple[bool, ...] = ()
                 ) -> tuple[list[str], bool]:
    """Upstream ``fitsRequest``: (reasons, unresolvable) for one node."""
    reasons: list[str] = []
    unresolvable = False
    if num_pods + 1 > allocatable.get(PODS, 0):
        reasons.append(TOO_MANY_PODS)
    for i, (name, q) in enumerate(checks):
        alloc = allocatable.get(name, 0)
        if alloc <= 0 and i < len(dra_backed) and dra_backed[i]:
            continue  # DynamicResources allocates it: the node has no device plugin's
        if q > alloc - requested.get(name, 0):
            reasons.append(insufficient_reason(name))
            if q > alloc:
                unresolvable = True
    return reasons, unresolvable


class Fit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    name = NAME

    def signs_no_pod(self) -> bool:
        # "signature disabled when dra extended resources enabled" (DRAExtendedResource:
        # beta-on 1.36, GA 1.37): a DeviceClass may turn an extended resource into a claim
        return feature_enabled(self.handle, "DRAExtendedResource")

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        if self.signs_no_pod():
            return None
        return ((signers.RESOURCES, signers.resources(pod)),)

    def sign_pod_for_filter(self, pod: Pod) -> SignFragments | None:
        """``sign_pod`` for PreFilter and Filter only (a failed attempt's verdicts): with
        DRAExtendedResource, a pod that requests no extended resource has none a
        DeviceClass could turn into a claim."""
        if self.signs_no_pod() and any(r not in _BASE for r in pod.requests):
            return None
        return ((signers.RESOURCES, signers.resources(pod)),)
    filter_reads = READS_RESOURCES

    args: NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | dict[str, Any] | None,
                 handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = a = typed_args(NodeResourcesFitArgs, args, handle.features)
        self.ignored_resources = frozenset(a.ignored_resources)
        self.ignored_resource_groups = frozenset(a.ignored_resource_groups)
        strategy = a.scoring_strategy
        self.strategy_type = strategy.type or LEAST_ALLOCATED
        self.resources = resources = tuple(strategy.resources)
        self._dra_scored = dra_scored_names(r.name for r in resources)
        if self.strategy_type == LEAST_ALLOCATED:
            py, np_ = least_resource_scorer(resources)
        elif self.strategy_type == MOST_ALLOCATED:
            py, np_ = most_resource_scorer(resources)
        elif self.strategy_type == REQUESTED_TO_CAPACITY_RATIO:
            rtcr = strategy.requested_to_capacity_ratio
            py, np_ = requested_to_capacity_ratio_scorer(
                resources, parse_shape(rtcr.shape if rtcr is not None else ()))
        else:
            raise ValueError(f"scoring strategy {self.strategy_type} is not supported")
        self.scorer = ResourceAllocationScorer(self.strategy_type, resources,
                                               use_requested=False, scorer_py=py, scorer_np=np_)
        # the batch Score keeps each row's score per request vector, as BalancedAllocation
        # each row's score per request vector, across cycles
        self._rows = RowMemo()

    # ------------------------------------------------------------------ PreFilter

    def _class_mapping(self, names: Iterable[str]) -> Mapping[str, str]:
        """The DeviceClassResolver's mapping, when some of ``names`` could be in it (empty
        while DRAExtendedResource is off)."""
        if not feature_enabled(self.handle, "DRAExtendedResource") or not any(
                map(is_dra_extended_resource_name, names)):
            return {}
        objects = self.handle.objects
        return class_mapping_of(dra_index(objects).classes)

    def _compute_state(self, pod: Pod) -> _PreFilterState:
        checks = _fits_checks(pod.requests, self.ignored_resources,
                              self.ignored_resource_groups)
        names = [n for n, _ in checks]
        mapping = self._class_mapping(names)
        return _PreFilterState(checks, tuple(map(insufficient_reason, names)),
                               tuple(n in mapping for n in names) if mapping else ())

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        s = self._compute_state(pod)
        table = snapshot.table if snapshot is not None else None
        if table is not None:
            for name, _ in s.checks:  # make sure every requested resource has a column
                table.resource_row(name)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _read_pre_filter(self, state: CycleState) -> _PreFilterState | None:
        return state.read(PRE_FILTER_STATE_KEY)

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._read_pre_filter(state)
        if s is None:
            return Status(Code.ERROR,
                          (f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',))
        reasons, unresolvable = fits_request(s.checks, node_info.allocatable,
                                             node_info.requested, len(node_info.pods),
                                             s.dra_backed)
        if not reasons:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, tuple(reasons))

    def _fails(self, s: _PreFilterState, table: NodeTable, idx: np.ndarray
               ) -> tuple[list[np.ndarray], np.ndarray]:
        """Per check (the pod count, then each requested resource), which of the rows
        ``idx`` fail it; and which fail one that no pod leaving could mend."""
        rows = [table.resource_row(name) for name, _ in s.checks]
        alloc, requested = table.alloc, table.requested  # after resource_row (may grow)
        # Only table columns are read (filter_reads): the preemption dry run calls this on a
        # table whose requested and pod-count columns it changed.
        fails = [table.pod_count[idx] + 1 > table.allowed_pods[idx]]
        unresolvable = np.zeros(len(idx), dtype=bool)
        backed = s.dra_backed or (False,) * len(s.checks)
        for (_, q), row, dra in zip(s.checks, rows, backed, strict=True):
            a = alloc[row, idx]
            fail = q > a - requested[row, idx]
            if dra:
                fail &= a > 0  # nodes without the resource leave it to DynamicResources
            fails.append(fail)
            unresolvable |= fail & (q > a)
        return fails, unresolvable

    def filter_row(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int
                   ) -> bool | None:
        """Whether the table's row ``row`` passes, read from its columns as the per-node
        form reads a NodeInfo (None: no PreFilter state, an error ``filter_batch``
        reports)."""
        s = self._read_pre_filter(state)
        if s is None:
            return None
        t = snapshot.table
        # only the resources the pod requests are read (``fits_request`` reads no other);
        # a table whose requested column is older than its last resource: no pod on any
        # node requests that one
        req, index = t.requested, t.res_index
        requested: dict[str, int] = {}
        for name, _q in s.checks:
            k = index.get(name)
            if k is not None and k < len(req):
                requested[name] = req.item(k, row)
        reasons, _ = fits_request(s.checks, snapshot.node_infos[row].allocatable, requested,
                                  t.pod_count.item(row), s.dra_backed)
        return not reasons

    def filter_passes(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                      idx: np.ndarray) -> np.ndarray | None:
        """Which of the rows ``idx`` ``filter_batch`` lets through, without why (None:
        no PreFilter state, an error ``filter_batch`` reports)."""
        s = self._read_pre_filter(state)
        if s is None:
            return None
        passes: np.ndarray = ~np.logical_or.reduce(self._fails(s, snapshot.table, idx)[0])
        return passes

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        s = self._read_pre_filter(state)
        n = len(idx)
        if s is None:
            err = BatchStatus.success(n)
            err.fail(np.ones(n, dtype=bool), Code.ERROR,
                     (f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',))
            return err
        if n == 0:
            return BatchStatus.success(0)
        fails, unresolvable = self._fails(s, snapshot.table, idx)
        out = BatchStatus.success(n)
        failing = np.logical_or.reduce(fails)
        if not failing.any():
            return out
        all_reasons = (TOO_MANY_PODS, *s.reasons)
        if len(fails) <= 63:  # each node's failing checks as the bits of one int64
            mask = np.zeros(n, dtype=np.int64)
            for bit, fail in enumerate(fails):
                mask |= fail.astype(np.int64) << bit
            masks = mask[failing]
            if len(fails) <= 16:  # np.unique's answer by counting: cheaper than a sort
                present = np.bincount(masks)
                uniq = np.flatnonzero(present)
                inverse = np.zeros(len(present), dtype=np.int64)
                inverse[uniq] = np.arange(len(uniq))
                inverse = inverse[masks]
            else:
                uniq, inverse = np.unique(masks, return_inverse=True)
            out.reasons = [tuple(r for b, r in enumerate(all_reasons) if int(m) >> b & 1)
                           for m in uniq.tolist()]
            out.reason_ids[failing] = inverse.reshape(-1)
        else:
            seen: dict[tuple[str, ...], int] = {}
            mat = np.vstack(fails)[:, failing]
            ids = np.zeros(mat.shape[1], dtype=np.int32)
            for k in range(mat.shape[1]):
                reasons = tuple(all_reasons[b] for b in np.flatnonzero(mat[:, k]).tolist())
                ids[k] = seen.setdefault(reasons, len(seen))
            out.reasons = list(seen)
            out.reason_ids[failing] = ids
        out.codes[failing] = np.where(unresolvable[failing],
                                      int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                                      int(Code.UNSCHEDULABLE))
        return out

    # ------------------------------------------------------------------ PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, self._compute_pre_score(pod))
        return None

    def _compute_pre_score(self, pod: Pod) -> _PreScoreState:
        return _PreScoreState(self.scorer.pod_requests(pod),
                              pre_score_dra(self.handle, self._dra_scored))

    def _pre_score_state(self, state: CycleState, pod: Pod) -> _PreScoreState:
        if not self.resources:
            raise PluginError("resources not found")
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return self._compute_pre_score(pod)
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = self._pre_score_state(state, pod)
        return self.scorer.score_node(node_info, s.pod_requests, s.dra)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        s = self._pre_score_state(state, pod)
        table = snapshot.table
        if s.dra is not None:
            # device counts are not in the table's row versions: no cached rows
            nodes = [snapshot.by_name[table.names[r]].node for r in idx]
            return self.scorer.score_table(table, idx, s.pod_requests, s.dra, nodes)
        by_name, names, reqs = snapshot.by_name, table.names, s.pod_requests
        return self._rows.rows(
            table, reqs, idx, lambda t, rows: self._score_rows(t, reqs, rows),
            lambda r: self.scorer.score_node(by_name[names[r]], reqs))

    def _score_rows(self, table: NodeTable, reqs: tuple[int, ...],
                    idx: np.ndarray) -> np.ndarray:
        return self.scorer.score_table(table, idx, reqs)

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_action = ActionType.DELETE
        if feature_enabled(self.handle, "InPlacePodVerticalScaling"):
            pod_action |= ActionType.UPDATE_POD_SCALE_DOWN
        node_action = (ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                       | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL)
        if feature_enabled(self.handle, "SchedulerQueueingHints"):
            node_action = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
        events = [
            ClusterEventWithHint(ClusterEvent(Resource.POD, pod_action),
                                 self.is_schedulable_after_pod_event),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, node_action),
                                 self.is_schedulable_after_node_change),
        ]
        if feature_enabled(self.handle, "DRAExtendedResource"):
            events.append(ClusterEventWithHint(
                ClusterEvent(Resource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_device_class_event))
        return events

    def is_schedulable_after_device_class_event(self, pod: Pod, old: DeviceClass | None,
                                                new: DeviceClass) -> QueueingHint:
        """A class that now maps one of the pod's extended resources may make it fit."""
        if old is not None:
            if old.extended_resource_name == new.extended_resource_name:
                return QueueingHint.SKIP
        elif DEVICE_CLASS_PREFIX + new.name in pod.requests:
            return QueueingHint.QUEUE  # the implicit name exists from the class's creation
        if new.extended_resource_name and new.extended_resource_name in pod.requests:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pod_event(self, pod: Pod, old: Pod | None, new: Pod | None
                                       ) -> QueueingHint:
        if new is None:  # deleted
            assert old is not None
            if not old.spec.node_name and not old.status.nominated_node_name:
                return QueueingHint.SKIP  # an unscheduled pod frees nothing
            return QueueingHint.QUEUE
        if not feature_enabled(self.handle, "InPlacePodVerticalScaling"):
            return QueueingHint.SKIP
        assert old is not None
        if self._is_schedulable_after_pod_scale_down(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _is_schedulable_after_pod_scale_down(target: Pod, old: Pod, new: Pod) -> bool:
        if new.uid == target.uid:
            return True
        if not new.spec.node_name:
            return False
        old_req = max_resource_request(old.requests)
        new_req = max_resource_request(new.requests)
        for name, value in target.requests.items():
            if value == 0:
                continue
            if name not in _BASE and not is_scalar_resource_name(name):
                continue
            if old_req.get(name, 0) > new_req.get(name, 0):
                return True
        return False

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node
                                         ) -> QueueingHint:
        mapping = self._class_mapping(pod.requests)
        if not _is_fit(pod, new, mapping):
            return QueueingHint.SKIP  # the pod won't fit the node anyway
        if old is None:
            return QueueingHint.QUEUE
        if not _have_any_requested_resources_increased(pod, old, new, mapping):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def _is_fit(pod: Pod, node: Node | None, mapping: Mapping[str, str]) -> bool:
    """``isFit``: the pod fits an empty NodeInfo of ``node`` (no ignored resources)."""
    if node is None:
        return False
    checks = _fits_checks(pod.requests, frozenset(), frozenset())
    reasons, _ = fits_request(checks, node.status.allocatable, {}, 0,
                              tuple(n in mapping for n, _ in checks))
    return not reasons


def _have_any_requested_resources_increased(pod: Pod, old: Node, new: Node,
                                            mapping: Mapping[str, str]) -> bool:
    old_alloc = old.status.allocatable
    new_alloc = new.status.allocatable
    if new_alloc.get(PODS, 0) > old_alloc.get(PODS, 0):
        return True
    req = max_resource_request(pod.requests)
    for name, q in req.items():
        if q == 0:
            continue
        if new_alloc.get(name, 0) > old_alloc.get(name, 0):
            return True
        if name in mapping and new_alloc.get(name, 0) <= 0:
            return True  # shouldDelegateResourceToDRA: DRA may serve it now
    return False
