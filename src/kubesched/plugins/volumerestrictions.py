"""VolumeRestrictions (upstream ``plugins/volumerestrictions/volume_restrictions.go``, v1.35).

PreFilter: a missing claim is UnschedulableAndUnresolvable (``persistentvolumeclaim "x" not
found``); counts how many of the pod's ReadWriteOncePod claims scheduled pods already use;
Skip when there is nothing to check (no GCE PD / AWS EBS / RBD / ISCSI volume and no such
conflict). Filter: a disk conflict with a pod on the node ⇒ Unschedulable "node(s) had no
available disk"; a ReadWriteOncePod claim in use ⇒ Unschedulable on every node (so preemption
can free it). AddPod / RemovePod keep the in-use count right for nominated pods and
preemption's what-ifs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import (
    READ_WRITE_ONCE_POD,
    PersistentVolumeClaim,
    pod_uses_claim,
    storage_index,
)
from kubesched.api.types import Pod, Volume
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.interface import (
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, error, skip, unresolvable, unschedulable
from kubesched.framework.table_cache import RowState

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
# reworded in 2025, before v1.35 (kubernetes#129145; v1.30: "node has pod using
# PersistentVolumeClaim with the same name and ReadWriteOncePod access mode")
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with "
                            "ReadWriteOncePod access mode already in-use by another pod")

_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _PreFilterState:
    __slots__ = ("conflicting_pvc_ref_count", "rwop_pvcs")

    def __init__(self, rwop_pvcs: frozenset[str], count: int) -> None:
        self.rwop_pvcs = rwop_pvcs  # names of the pod's ReadWriteOncePod claims
        self.conflicting_pvc_ref_count = count

    def conflicting_refs(self, pod: Pod) -> int:
        return sum(1 for v in pod.spec.volumes
                   if v.pvc_claim_name is not None and v.pvc_claim_name in self.rwop_pvcs)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * self.conflicting_refs(pod)

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.rwop_pvcs, self.conflicting_pvc_ref_count)


# ---------------------------------------------------------------- disk conflicts


def _src(vol: Volume, key: str) -> dict[str, Any] | None:
    if vol.source is None:
        return None
    s = vol.source.get(key)
    return s if isinstance(s, dict) else ({} if key in vol.source and s is not None else None)


def needs_restrictions_check(vol: Volume) -> bool:
    return vol.source is not None and any(vol.source.get(k) is not None
                                          for k in _CONFLICT_SOURCES)


def _read_only(s: dict[str, Any]) -> bool:
    return bool(s.get("readOnly", False))


def is_volume_conflict(vol: Volume, existing_pod: Pod) -> bool:
    """``isVolumeConflict``: does ``vol`` conflict with a volume of ``existing_pod``?"""
    gce, aws = _src(vol, "gcePersistentDisk"), _src(vol, "awsElasticBlockStore")
    iscsi, rbd = _src(vol, "iscsi"), _src(vol, "rbd")
    for ev in existing_pod.spec.volumes:
        if gce is not None:
            e = _src(ev, "gcePersistentDisk")
            if (e is not None and gce.get("pdName") == e.get("pdName")
                    and not (_read_only(gce) and _read_only(e))):
                return True
        if aws is not None:
            e = _src(ev, "awsElasticBlockStore")
            if e is not None and aws.get("volumeID") == e.get("volumeID"):
                return True
        if iscsi is not None:
            e = _src(ev, "iscsi")
            if (e is not None and iscsi.get("iqn") == e.get("iqn")
                    and not (_read_only(iscsi) and _read_only(e))):
                return True
        if rbd is not None:
            e = _src(ev, "rbd")
            if (e is not None and _have_overlap(rbd.get("monitors") or [],
                                                e.get("monitors") or [])
                    and (rbd.get("pool") or "rbd") == (e.get("pool") or "rbd")
                    and rbd.get("image") == e.get("image")
                    and not (_read_only(rbd) and _read_only(e))):
                return True
    return False


def _have_overlap(a: list[str], b: list[str]) -> bool:
    return bool(set(a) & set(b))


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    for vol in pod.spec.volumes:
        if not needs_restrictions_check(vol):
            continue
        for existing in node_info.pods:
            if is_volume_conflict(vol, existing):
                return False
    return True


# ---------------------------------------------------------------- the plugin


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, PreFilterExtensions, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # [upstream's SignPod not read: VolumeBinding's volumes signer]
        return ((signers.VOLUMES, signers.volumes(pod)),)

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self._used: RowState[UsedClaims] = RowState()

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # pod volumes are immutable: only deletions free a disk or a claim
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE),
                                 self.is_schedulable_after_pod_deleted),
            # queueing hints on (v1.35): Node Add only
            ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self.is_schedulable_after_pvc_added),
        ]

    @staticmethod
    def is_schedulable_after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, PersistentVolumeClaim):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new).__name__}")
        return QueueingHint.QUEUE if pod_uses_claim(pod, new) else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(old, Pod):
            raise TypeError(f"expected a Pod, got {type(old).__name__}")
        deleted = old
        if deleted.namespace != pod.namespace:
            return QueueingHint.SKIP
        ni = NodeInfo()
        ni.add_pod(deleted)
        if not satisfy_volume_conflicts(pod, ni):
            return QueueingHint.QUEUE
        claims = {v.pvc_claim_name for v in pod.spec.volumes if v.pvc_claim_name is not None}
        for v in deleted.spec.volumes:
            if v.pvc_claim_name is not None and v.pvc_claim_name in claims:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # ------------------------------------------------------------------ PreFilter

    def _rwop_pvcs(self, pod: Pod) -> frozenset[str]:
        """``readWriteOncePodPVCsForPod``; raises KeyError(name) for a missing claim."""
        if all(vol.pvc_claim_name is None for vol in pod.spec.volumes):
            return frozenset()  # (the storage index, looked up at every cycle, is not needed)
        index = storage_index(self.handle.objects)
        out = set()
        for vol in pod.spec.volumes:
            if vol.pvc_claim_name is None:
                continue
            pvc = index.pvc(pod.namespace, vol.pvc_claim_name)
            if pvc is None:
                raise KeyError(vol.pvc_claim_name)
            if READ_WRITE_ONCE_POD in pvc.spec.access_modes:
                out.add(pvc.name)
        return frozenset(out)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = any(needs_restrictions_check(v) for v in pod.spec.volumes)
        try:
            pvcs = self._rwop_pvcs(pod)
        except KeyError as e:
            return None, unresolvable(f'persistentvolumeclaim "{e.args[0]}" not found')
        count = 0
        if pvcs:
            used = used_pvc_set(snapshot, self._used)
            count = sum(1 for name in pvcs if f"{pod.namespace}/{name}" in used)
        if not needs_check and count == 0:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pvcs, count))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def _state(self, state: CycleState) -> _PreFilterState | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        return s if isinstance(s, _PreFilterState) else None

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                   node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_remove, -1)
        return None

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod, node_info):
            return unschedulable(ERR_REASON_DISK_CONFLICT)
        s = self._state(state)
        if s is None:
            return error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return unschedulable(ERR_REASON_RWOP_CONFLICT)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        n = len(idx)
        s = self._state(state)
        if s is None:
            return BatchStatus.from_mask(np.ones(n, dtype=bool), Code.ERROR,
                                         (f'cannot read "{PRE_FILTER_STATE_KEY}" from '
                                          "cycleState",))
        out = BatchStatus.success(n)
        if any(needs_restrictions_check(v) for v in pod.spec.volumes):
            infos = snapshot.node_infos
            bad = np.fromiter((not satisfy_volume_conflicts(pod, infos[i]) if infos[i].pods
                               else False for i in idx.tolist()), dtype=bool, count=n)
            out.fail(bad, Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
        if s.conflicting_pvc_ref_count > 0:
            out.fail(np.ones(n, dtype=bool), Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,))
        return out


# ---------------------------------------------------------------- used claims


class UsedClaims:
    """``StorageInfos().IsPVCUsedByPods``: ``ns/claim`` of every claim a pod on a node of the
    snapshot (assumed pods included) mounts, per table row and over all rows (``all``)."""

    __slots__ = ("_all", "rows")

    def __init__(self, snapshot: Snapshot) -> None:
        self.rows = [_claims_of(ni) for ni in snapshot.node_infos]
        self._all: frozenset[str] | None = None

    def refresh(self, snapshot: Snapshot, changed: list[int]) -> None:
        infos = snapshot.node_infos
        for r in changed:
            self.rows[r] = _claims_of(infos[r])
        self._all = None

    def all(self) -> frozenset[str]:
        if self._all is None:
            self._all = frozenset().union(*self.rows)
        return self._all


_NONE: frozenset[str] = frozenset()


def _claims_of(ni: NodeInfo) -> frozenset[str]:
    used = {f"{p.namespace}/{v.pvc_claim_name}" for p in ni.pods for v in p.spec.volumes
            if v.pvc_claim_name is not None}
    return frozenset(used) if used else _NONE


def used_pvc_set(snapshot: Snapshot, kept: RowState[UsedClaims] | None = None
                 ) -> frozenset[str]:
    """``UsedClaims(snapshot).all()``, brought up to date in ``kept`` across cycles."""
    if kept is None:
        return UsedClaims(snapshot).all()
    return kept.get(snapshot.table, lambda _: UsedClaims(snapshot),
                    lambda u, changed: u.refresh(snapshot, changed)).all()
