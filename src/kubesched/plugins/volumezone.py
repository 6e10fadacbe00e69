"""VolumeZone (upstream ``plugins/volumezone/volume_zone.go``, v1.35).

PreFilter collects the zone and region labels (beta and GA) of the PersistentVolumes bound to
the pod's claims; unbound claims of a WaitForFirstConsumer class are skipped; Skip when nothing
is left. Filter: a node that has any zone/region label must carry, for each such PV label, one
of the PV's values (``a__b`` lists several; a beta PV label may match the node's GA label);
otherwise UnschedulableAndUnresolvable "node(s) had no available volume zone".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import (
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    pod_uses_claim,
    pvc_storage_class,
    storage_index,
)
from kubesched.api.types import (
    REGION_LABEL,
    REGION_LABEL_BETA,
    ZONE_LABEL,
    ZONE_LABEL_BETA,
    Pod,
)
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
    PreFilterPlugin,
    PreFilterResult,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, error, skip, unresolvable

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

TOPOLOGY_LABELS = (ZONE_LABEL_BETA, REGION_LABEL_BETA, ZONE_LABEL, REGION_LABEL)


def translate_to_ga_label(label: str) -> str:
    if label == REGION_LABEL_BETA:
        return REGION_LABEL
    if label == ZONE_LABEL_BETA:
        return ZONE_LABEL
    return label


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``volumehelpers.LabelZonesToSet``: ``a__b`` → {a, b}; None when malformed (an empty
    zone, or an empty value)."""
    zones = value.split("__")
    out = set()
    for z in zones:
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """``getPVTopologies``: the PV's zone/region labels, in upstream's label order."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.metadata.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is None:  # unparsable: the label is ignored
            continue
        out.append(PVTopology(pv.name, key, zones))
    return out


class _State:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        return self


class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # [upstream's SignPod not read: VolumeBinding's volumes signer]
        return ((signers.VOLUMES, signers.volumes(pod)),)

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(Resource.STORAGE_CLASS, ActionType.ADD),
                                 self.is_schedulable_after_storage_class_added),
            # queueing hints on (v1.35): no UpdateNodeTaint
            ClusterEventWithHint(ClusterEvent(Resource.NODE,
                                              ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, add_update),
                                 self.is_schedulable_after_pvc_change),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME, add_update),
                                 self.is_schedulable_after_pv_change),
        ]

    @staticmethod
    def is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, PersistentVolumeClaim):
            raise TypeError(f"unexpected objects in isSchedulableAfterPersistentVolumeClaim"
                            f"Change: {type(new).__name__}")
        return QueueingHint.QUEUE if pod_uses_claim(pod, new) else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_storage_class_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, StorageClass):
            raise TypeError(f"unexpected objects in isSchedulableAfterStorageClassAdded: "
                            f"{type(new).__name__}")
        if new.volume_binding_mode != BINDING_WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    @staticmethod
    def is_schedulable_after_pv_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, PersistentVolume) or (old is not None and
                                                     not isinstance(old, PersistentVolume)):
            raise TypeError(f"unexpected objects in isSchedulableAfterPersistentVolumeChange: "
                            f"{type(old).__name__}, {type(new).__name__}")
        if old is None:
            return QueueingHint.QUEUE
        if pv_topologies(old) != pv_topologies(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # ------------------------------------------------------------------ PreFilter

    def get_pv_by_pod(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        """``getPVbyPod``."""
        out: list[PVTopology] = []
        if not pod.spec.volumes:
            return out, None
        index = storage_index(self.handle.objects)
        for vol in pod.spec.volumes:
            if vol.pvc_claim_name is None:
                continue
            name = vol.pvc_claim_name
            if name == "":
                return [], unresolvable("PersistentVolumeClaim had no name")
            pvc = index.pvc(pod.namespace, name)
            if pvc is None:
                return [], unresolvable(f'persistentvolumeclaim "{name}" not found')
            pv_name = pvc.spec.volume_name
            if pv_name == "":
                sc_name = pvc_storage_class(pvc)
                if not sc_name:
                    return [], unresolvable("PersistentVolumeClaim had no pv name and "
                                            "storageClass name")
                sc = index.storage_class(sc_name)
                if sc is None:
                    return [], unresolvable(f'storageclass.storage.k8s.io "{sc_name}" not found')
                if sc.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue  # unbound volumes are skipped
                return [], unresolvable("PersistentVolume had no name")
            pv = index.pv(pv_name)
            if pv is None:
                return [], unresolvable(f'persistentvolume "{pv_name}" not found')
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        topologies, st = self.get_pv_by_pod(pod)
        if st is not None:
            return None, st
        if not topologies:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    # ------------------------------------------------------------------ Filter

    def _topologies(self, state: CycleState, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        s = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(s, _State):
            return s.topologies, None
        return self.get_pv_by_pod(pod)  # PreFilter not run: compute here, as upstream

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        topologies, st = self._topologies(state, pod)
        if st is not None:
            return st
        node = node_info.node
        if node is None:
            return error("node not found")
        labels = node.metadata.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None  # a node without zone labels (single-zone clusters) fits any volume
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(translate_to_ga_label(t.key))
            if v is None or v not in t.values:
                return unresolvable(ERR_REASON_CONFLICT)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        n = len(idx)
        out = BatchStatus.success(n)
        if not pod.spec.volumes:
            return out
        topologies, st = self._topologies(state, pod)
        if st is not None:
            out.fail(np.ones(n, dtype=bool), st.code, st.reasons)
            return out
        table = snapshot.table
        constrained = np.zeros(n, dtype=bool)
        for key in TOPOLOGY_LABELS:
            constrained |= table.has_label(key)[idx]
        ok = np.ones(n, dtype=bool)
        for t in topologies:
            own = table.label_column(t.key)[idx]
            ga = table.label_column(translate_to_ga_label(t.key))[idx]
            value = np.where(table.has_label(t.key)[idx], own, ga)
            ok &= np.fromiter((v is not None and v in t.values for v in value), dtype=bool,
                              count=n)
        out.fail(constrained & ~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))
        return out
