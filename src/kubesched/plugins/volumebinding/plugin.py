"""VolumeBinding (upstream ``plugins/volumebinding/volume_binding.go``).

PreFilter: Skip for pods without claims; a missing claim, a lost claim or a claim being deleted
is UnschedulableAndUnresolvable with upstream's error text; unbound immediate claims give
"pod has unbound immediate PersistentVolumeClaims". Filter: the binder's conflict reasons,
UnschedulableAndUnresolvable (storage capacity included). Reserve assumes the chosen volumes,
Unreserve reverts them, PreBind makes the API updates through the backend.

PreScore/Score exist only with the StorageCapacityScoring gate (alpha, off, in 1.35 and 1.36;
beta, on, in 1.37): the scorer is built from VolumeBindingArgs' ``shape`` (default
``[{0, 10}, {100, 0}]``, so emptier storage scores higher) and PreScore then never skips —
a pod without claims scores 0 everywhere, as upstream's. Without the gate PreScore skips.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import (
    CLAIM_LOST,
    MIGRATED_PLUGINS_ANNOTATION,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageClass,
    pvc_storage_class,
    storage_index,
)
from kubesched.api.types import Node, Pod
from kubesched.config.plugin_args import VolumeBindingArgs, build_args, typed_args
from kubesched.errors import InputError
from kubesched.framework import signers
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
    PreBindPlugin,
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
from kubesched.plugins.volumebinding.binder import (
    BindingInfo,
    DynamicProvision,
    NeedsPerNode,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    reasons_from_flags,
    volume_limit,
)
from kubesched.plugins.volumebinding.helpers import (
    StorageError,
    check_volume_is_for_pod,
    go_quote,
    pod_claim_name,
    pvc_not_found,
)
from kubesched.plugins.volumebinding.scorer import Scorer, build_scorer, class_resources

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.snapshot import Snapshot

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"


class _State:
    """``stateData``: shared by reference between clones, as upstream's pointer."""

    __slots__ = ("all_bound", "claims", "has_static_bindings", "pod_volumes_by_node")

    def __init__(self, claims: PodVolumeClaims | None = None) -> None:
        self.all_bound = False
        self.claims = claims
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False

    def clone(self) -> _State:
        return self


class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin,
                    PreScorePlugin, ScorePlugin, EnqueueExtensions, ReserveCheckpointedPlugin):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        return ((signers.VOLUMES, signers.volumes(pod)),)

    args: VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = a = typed_args(VolumeBindingArgs, args, handle.features)
        self.bind_timeout_seconds = (a.bind_timeout_seconds
                                     or VolumeBindingArgs().bind_timeout_seconds)
        h = handle
        self.binder = VolumeBinder(
            objects=lambda: h.objects,
            backend=lambda: h.backend,
            node=lambda name: _node_of(h, name),
            bind_timeout=float(self.bind_timeout_seconds),
            clock=lambda: h.clock if h is not None else None)
        # upstream's New builds the scorer only with the gate on
        self.scorer: Scorer | None = None
        if feature_enabled(handle, STORAGE_CAPACITY_SCORING):
            shape = a.shape or build_args(NAME, {}, handle.features).shape or []
            self.scorer = build_scorer([dataclasses.asdict(p) for p in shape])

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(Resource.STORAGE_CLASS, add_update),
                                 self.is_schedulable_after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, add_update),
                                 self.is_schedulable_after_pvc_change),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME, add_update)),
            # queueing hints on (v1.35): no UpdateNodeTaint
            ClusterEventWithHint(ClusterEvent(Resource.NODE,
                                              ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(Resource.CSI_NODE, add_update),
                                 self.is_schedulable_after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(Resource.CSI_DRIVER, ActionType.UPDATE),
                                 self.is_schedulable_after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(Resource.CSI_STORAGE_CAPACITY, add_update),
                                 self.is_schedulable_after_csi_storage_capacity_change),
        ]

    @staticmethod
    def is_schedulable_after_csi_driver_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A driver that stops tracking capacity may let the pod's inline CSI volumes of
        that driver through (upstream looks at inline ``csi`` volumes only)."""
        if not isinstance(old, CSIDriver) or not isinstance(new, CSIDriver):
            raise TypeError(f"expected CSIDriver objects, got {type(old).__name__} and "
                            f"{type(new).__name__}")
        for vol in pod.spec.volumes:
            csi = (vol.source or {}).get("csi")
            if not isinstance(csi, dict) or csi.get("driver") != new.name:
                continue
            if old.storage_capacity and not new.storage_capacity:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_csi_storage_capacity_change(self, pod: Pod, old: Any, new: Any
                                                         ) -> QueueingHint:
        """A new capacity, or a larger one (``maximumVolumeSize``, else ``capacity``), of a
        class one of the pod's claims uses may make room (nodeTopology and the class name
        cannot change)."""
        if not isinstance(new, CSIStorageCapacity) or (
                old is not None and not isinstance(old, CSIStorageCapacity)):
            raise TypeError(f"expected CSIStorageCapacity objects, got {type(old).__name__} "
                            f"and {type(new).__name__}")
        index = storage_index(self.handle.objects)
        uses_class = False
        for vol in pod.spec.volumes:
            found = pod_claim_name(pod, vol)
            if found is None:
                continue
            pvc = index.pvc(pod.namespace, found[0])
            if pvc is None:
                return QueueingHint.QUEUE  # upstream: an error, which queues the pod
            if pvc_storage_class(pvc) == new.storage_class_name:
                uses_class = True
                break
        if not uses_class:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        new_limit, old_limit = volume_limit(new), volume_limit(old)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_csi_node_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.QUEUE
        if not isinstance(old, CSINode) or not isinstance(new, CSINode):
            raise TypeError(f"expected CSINode objects, got {type(old).__name__} and "
                            f"{type(new).__name__}")
        if (old.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)
                != new.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, PersistentVolumeClaim):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new).__name__}")
        if pod.namespace != new.namespace:
            return QueueingHint.SKIP
        for vol in pod.spec.volumes:
            found = pod_claim_name(pod, vol)
            if found is not None and found[0] == new.name:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_storage_class_change(pod: Pod, old: Any, new: Any
                                                  ) -> QueueingHint:
        if not isinstance(new, StorageClass) or (old is not None
                                                 and not isinstance(old, StorageClass)):
            raise TypeError(f"expected StorageClass objects, got {type(old).__name__} and "
                            f"{type(new).__name__}")
        if old is None:
            return QueueingHint.QUEUE
        if new.allowed_topologies != old.allowed_topologies:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # ------------------------------------------------------------------ PreFilter

    def pod_has_pvcs(self, pod: Pod) -> bool:
        """``podHasPVCs``; raises StorageError for a missing, lost or deleted claim."""
        if not pod.spec.volumes:
            return False
        has = False
        index = storage_index(self.handle.objects)
        for vol in pod.spec.volumes:
            found = pod_claim_name(pod, vol)
            if found is None:
                continue
            name, ephemeral = found
            has = True
            pvc = index.pvc(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    raise StorageError("waiting for ephemeral volume controller to create the "
                                       f"persistentvolumeclaim {go_quote(name)}")
                raise pvc_not_found(name)
            if pvc.status.phase == CLAIM_LOST:
                raise StorageError(f"persistentvolumeclaim {go_quote(pvc.name)} bound to "
                                   "non-existent persistentvolume "
                                   f"{go_quote(pvc.spec.volume_name)}")
            if pvc.metadata.deletion_timestamp is not None:
                raise StorageError(f"persistentvolumeclaim {go_quote(pvc.name)} is being "
                                   "deleted")
            if ephemeral:
                check_volume_is_for_pod(pod, pvc)
        return has

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            has = self.pod_has_pvcs(pod)
        except StorageError as e:
            return None, unresolvable(str(e))
        if not has:
            state.write(STATE_KEY, _State())
            return None, skip()
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except StorageError as e:
            return None, error(str(e))
        if claims.unbound_claims_immediate:
            return None, unresolvable(ERR_UNBOUND_IMMEDIATE)
        claims.unbound_claims_immediate = []
        state.write(STATE_KEY, _State(claims))
        return None, None

    # ------------------------------------------------------------------ Filter

    def _state(self, state: CycleState) -> _State | None:
        s = state.read(STATE_KEY)
        return s if isinstance(s, _State) else None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None or s.claims is None:
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        node = node_info.node
        if node is None:
            return error("node not found")
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(pod, s.claims, node)
        except StorageError as e:
            return error(str(e))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
        s.pod_volumes_by_node[node.name] = pod_volumes
        if pod_volumes.static_bindings:
            s.has_static_bindings = True
        return None

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        s = self._state(state)
        n = len(idx)
        if s is None or s.claims is None:
            return BatchStatus.from_mask(np.ones(n, dtype=bool), Code.ERROR,
                                         (f'reading "{STATE_KEY}" from cycleState: not found',))
        try:
            flags = self.binder.find_pod_volumes_batch(pod, s.claims, snapshot.table, idx)
        except NeedsPerNode:
            return self._loop(state, pod, snapshot, idx)
        except StorageError as e:
            return BatchStatus.from_mask(np.ones(n, dtype=bool), Code.ERROR, (str(e),))
        out = BatchStatus.success(n)
        failing = ~(flags[0] & flags[1] & flags[2] & flags[3])
        if not failing.any():
            return out
        # one status per combination of the four flags that occurs
        codes = (flags[0].astype(np.int64) << 3 | flags[1].astype(np.int64) << 2
                 | flags[2].astype(np.int64) << 1 | flags[3].astype(np.int64))
        for code in np.unique(codes[failing]).tolist():
            reasons = reasons_from_flags(bool(code & 8), bool(code & 4), bool(code & 2),
                                         bool(code & 1))
            out.fail(codes == code, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
        return out

    def _loop(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
              ) -> BatchStatus:
        infos = snapshot.node_infos
        return BatchStatus.from_statuses([self.filter(state, pod, infos[i])
                                          for i in idx.tolist()])

    # ------------------------------------------------------------------ PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        if self.scorer is None:
            return skip()
        if self._state(state) is None:
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        # upstream: hasStaticBindings || StorageCapacityScoring, and the scorer exists only
        # with that gate on
        return None

    @staticmethod
    def _scored_volumes(s: _State, node_name: str, table: NodeTable | None
                        ) -> PodVolumes | None:
        """The volumes Filter found for a feasible node (the batch Filter keeps them as its
        per-row answer for this node table)."""
        pv = s.pod_volumes_by_node.get(node_name)
        if pv is not None or s.claims is None or table is None:
            return pv
        batch = s.claims.batch
        row = table.index.get(node_name)
        if (batch is None or row is None
                or not batch.made_for.matches(table)
                or not (batch.bound_ok[row] and batch.unbound_ok[row]
                        and batch.sufficient[row] and batch.bound_found[row])):
            return None  # not a node that passed Filter
        return batch.pod_volumes(row)

    def _score_one(self, s: _State, node_name: str, table: NodeTable | None) -> int:
        if self.scorer is None:
            return 0
        pod_volumes = self._scored_volumes(s, node_name, table)
        if pod_volumes is None:  # no claims: upstream's missing podVolumesByNode entry
            return 0
        return self.scorer(class_resources(pod_volumes))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = self._state(state)
        if s is None:
            return 0
        table = self.handle.snapshot.table
        return self._score_one(s, node_info.name, table)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        s = self._state(state)
        out = np.zeros(len(idx), dtype=np.int64)
        if self.scorer is None or s is None or s.claims is None:
            return out
        names = snapshot.table.names
        for k, i in enumerate(idx.tolist()):
            out[k] = self._score_one(s, names[i], snapshot.table)
        return out

    # ------------------------------------------------------------------ Reserve .. PreBind

    def _pod_volumes_for(self, s: _State, pod: Pod, node_name: str) -> PodVolumes:
        """The volumes Filter found for the node; the batch Filter decides without building
        them, so they are built here for the chosen node (the same answer: nothing changed
        since). Raises StorageError."""
        pv = s.pod_volumes_by_node.get(node_name)
        if pv is not None or s.claims is None:
            if pv is None:
                raise StorageError(f"no pod volumes found for node {go_quote(node_name)}")
            return pv
        batch = s.claims.batch
        snap = self.handle.snapshot
        if batch is not None and snap is not None:
            table = snap.table
            row = table.index.get(node_name)
            if (row is not None and batch.made_for.matches(table)
                    and batch.bound_ok[row] and batch.unbound_ok[row]
                    and batch.sufficient[row] and batch.bound_found[row]):
                pv = batch.pod_volumes(row)
                s.pod_volumes_by_node[node_name] = pv
                return pv
        node = _node_of(self.handle, node_name)
        if node is None:
            raise StorageError(f"no pod volumes found for node {go_quote(node_name)}")
        pv, reasons = self.binder.find_pod_volumes(pod, s.claims, node)
        if reasons:
            raise StorageError(f"node {go_quote(node_name)} does not fit the pod's volumes: "
                               + ", ".join(reasons))
        s.pod_volumes_by_node[node_name] = pv
        return pv

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        if s.claims is None:  # the pod references no claim
            s.all_bound = True
            return None
        try:
            pod_volumes = self._pod_volumes_for(s, pod, node_name)
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except StorageError as e:
            return error(str(e))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = self._state(state)
        if s is None:
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return
        self.binder.revert_assumed_pod_volumes(pod_volumes)

    # ------------------------------------------------------------------ checkpoint

    def reserved_choices(self, state: CycleState, pod: Pod, node_name: str
                         ) -> dict[str, Any] | None:
        """The volumes Reserve assumed for a pod waiting at Permit (in memory until PreBind
        writes them): each claim's volume, the claims to provision (with the
        CSIStorageCapacity that let them)."""
        s = self._state(state)
        pv = None if s is None or s.all_bound else s.pod_volumes_by_node.get(node_name)
        if pv is None:
            return None
        return {"bindings": [{"claim": b.pvc.name, "volume": b.pv.name}
                             for b in pv.static_bindings or ()],
                "provisions": [{"claim": p.pvc.name,
                                "capacity": None if p.node_capacity is None
                                else p.node_capacity.key}
                               for p in pv.dynamic_provisions or ()]}

    def choose_as_reserved(self, state: CycleState, pod: Pod, node_name: str,
                           saved: dict[str, Any]) -> None:
        """The volumes for ``node_name`` made the ones ``reserved_choices`` wrote, so that
        Reserve assumes exactly those again."""
        s = self._state(state)
        if s is None or s.claims is None:
            raise InputError("the pod has no claim to bind", field="bindings")
        delayed = {c.name: c for c in s.claims.unbound_claims_delay_binding}
        index = self.binder.index()
        chosen: set[str] = set()

        def claim(fld: str, name: object) -> PersistentVolumeClaim:
            pvc = delayed.get(name) if isinstance(name, str) else None
            if pvc is None or pvc.name in chosen:
                raise InputError("names no claim of the pod's waiting for its first consumer "
                                 "(or one listed twice)", field=fld, value=name)
            chosen.add(pvc.name)
            return pvc

        bindings = []
        for k, b in enumerate(saved["bindings"]):
            pvc = claim(f"bindings[{k}].claim", b["claim"])
            volume = self.binder.pv_cache.get(str(b["volume"]))
            if volume is None:
                raise InputError("names no PersistentVolume", field=f"bindings[{k}].volume",
                                 value=b["volume"])
            ref = volume.spec.claim_ref
            if ref is not None and (ref.namespace, ref.name) != (pvc.namespace, pvc.name):
                raise InputError("names a PersistentVolume bound to another claim",
                                 field=f"bindings[{k}].volume", value=b["volume"])
            bindings.append(BindingInfo(pvc, volume))
        provisions = []
        for k, p in enumerate(saved["provisions"]):
            pvc = claim(f"provisions[{k}].claim", p["claim"])
            capacity = None
            if p["capacity"] is not None:
                capacity = index.capacities.get(str(p["capacity"]))
                if capacity is None:
                    raise InputError("names no CSIStorageCapacity",
                                     field=f"provisions[{k}].capacity", value=p["capacity"])
            provisions.append(DynamicProvision(pvc, capacity))
        missing = sorted(set(delayed) - chosen)
        if missing:
            raise InputError("must choose for every claim of the pod waiting for its first "
                             "consumer", field="bindings", value=missing[0])
        s.pod_volumes_by_node[node_name] = PodVolumes(bindings, provisions)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return error(f"no pod volumes found for node {go_quote(node_name)}")
        try:
            in_pre_bind = self.handle.get_pod_in_pre_bind(pod.uid)
            self.binder.bind_pod_volumes(
                pod, pod_volumes, in_pre_bind.cancelled if in_pre_bind is not None else None)
        except StorageError as e:
            return error(str(e))
        return None


def _node_of(handle: Handle, name: str) -> Node | None:
    ni = handle.snapshot.get(name)
    return ni.node if ni is not None else None
