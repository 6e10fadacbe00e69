"""NodeVolumeLimits, the CSI attach limits (upstream ``plugins/nodevolumelimits/csi.go``, v1.35).

A node's limit per CSI driver is its CSINode's ``drivers[].allocatable.count`` (no CSINode or
no count: no limit). Filter counts the distinct volumes (``driver/volumeHandle``) of the pods on
the node per driver, adds the incoming pod's volumes not already there, and rejects the node
with Unschedulable "node(s) exceed max volume count" when a driver's count goes over its limit.
A claim without a volume counts under its class's provisioner with a per-claim handle; in-tree
volumes count under their CSI driver when migration is on for the node (AWS EBS, GCE PD, Azure
Disk and Cinder with a CSINode; Portworx when the CSINode's migrated-plugins annotation lists
it). VolumeAttachment objects are not part of scenarios, so they add nothing here.

With VolumeLimitScaling (alpha, off, in 1.35 and 1.36 — the CSIDriver field exists from 1.36
—; beta, on, in 1.37), a node whose CSINode does not list the driver of one of the pod's
volumes is Unschedulable "<driver> CSI driver is not installed on the node" when that
driver's CSIDriver sets ``preventPodSchedulingIfMissing`` (upstream #135012, beta #140612).
That check comes before the limits, so it applies to nodes without limits too. Upstream
checks the drivers in map order; kubesched names the first missing one by name.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import CSINode, PersistentVolumeClaim, StorageIndex, storage_index
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
from kubesched.framework.handle import feature_enabled
from kubesched.framework.interface import (
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, error, skip, unresolvable, unschedulable
from kubesched.framework.table_cache import IdentityMemo
from kubesched.plugins.volumebinding.csi_translation import (
    TranslationError,
    csi_name_from_in_tree,
    inline_plugin_name,
    is_csi_migration_on,
    is_migratable_plugin_name,
    pv_plugin_name,
    translate_inline,
    translate_pv,
)
from kubesched.plugins.volumebinding.helpers import (
    StorageError,
    check_volume_is_for_pod,
    pod_claim_name,
    pvc_not_found,
)

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

NAME = "NodeVolumeLimits"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
VOLUME_LIMIT_SCALING = "VolumeLimitScaling"

CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63
# upstream draws a random 32-character prefix per scheduler; any fixed string that no real
# volume handle starts with does the same job
RANDOM_VOLUME_ID_PREFIX = "kubesched0unbound0claim0handle00"


def driver_not_installed(driver: str) -> str:
    return f"{driver} CSI driver is not installed on the node"


def csi_attach_limit_key(driver: str) -> str:
    """``volumeutil.GetCSIAttachLimitKey``."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """``getVolumeLimits``: limit key -> allocatable count of the CSINode's drivers."""
    if csi_node is None:
        return {}
    return {csi_attach_limit_key(d.name): d.allocatable_count for d in csi_node.drivers
            if d.allocatable_count is not None}


_ANY = -1  # cache key: the answer does not depend on the node's CSINode


class _Deps:
    """What counting a pod's volumes read: whether the CSINode mattered (in-tree migration)
    and the (index table, key, object) lookups."""

    __slots__ = ("csi_node", "lookups")

    def __init__(self) -> None:
        self.csi_node = False
        self.lookups: list[tuple[str, str, Any]] = []


class _LookupError(StorageError):
    """The incoming pod's claim is missing (NotFound: UnschedulableAndUnresolvable)."""


class _State:
    __slots__ = ("new_volumes",)

    def __init__(self) -> None:
        # id(CSINode or None) -> the incoming pod's volumes, or the error computing them
        self.new_volumes: dict[int, dict[str, str] | StorageError] = {}

    def clone(self) -> _State:
        return self


def _uses_attachable_volumes(pod: Pod) -> bool:
    return any(pod_claim_name(pod, v) is not None or inline_plugin_name(v) is not None
               for v in pod.spec.volumes)


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # [upstream's SignPod not read: VolumeBinding's volumes signer]
        return ((signers.VOLUMES, signers.volumes(pod)),)

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        # scheduled pods' volumes: uid -> (pod, id(CSINode) or _ANY, the storage lookups they
        # were counted from, volumes, the CSINode kept alive for its id)
        self._existing: dict[str, tuple] = {}
        self._limits: IdentityMemo[dict[str, int]] = IdentityMemo(65536)
        self._vol_pods: dict[str, tuple] = {}

    def _index(self) -> StorageIndex:
        return storage_index(self.handle.objects)

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # any new CSINode may make pods rejected for their CSI volumes schedulable
            ClusterEventWithHint(ClusterEvent(Resource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self.is_schedulable_after_pvc_added),
        ]

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(old, Pod):
            raise TypeError(f"unexpected objects in isSchedulableAfterPodDeleted: "
                            f"{type(old).__name__}")
        deleted = old
        if not deleted.spec.volumes or not deleted.spec.node_name:
            return QueueingHint.SKIP
        for v in deleted.spec.volumes:
            if pod_claim_name(deleted, v) is not None or inline_plugin_name(v) is not None:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, PersistentVolumeClaim):
            raise TypeError(f"unexpected objects in isSchedulableAfterPVCAdded: "
                            f"{type(new).__name__}")
        if new.namespace != pod.namespace:
            return QueueingHint.SKIP
        for v in pod.spec.volumes:
            found = pod_claim_name(pod, v)
            if found is not None and found[0] == new.name:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # ------------------------------------------------------------------ PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not _uses_attachable_volumes(pod):
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, _State())
        return None, None

    def _new_volumes(self, state: CycleState, pod: Pod, csi_node: CSINode | None,
                     index: StorageIndex) -> dict[str, str]:
        """The incoming pod's volumes (driver/handle -> limit key), computed once per cycle —
        per CSINode only when in-tree migration made the answer depend on it."""
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            s = None
        hit = None
        if s is not None:
            hit = s.new_volumes.get(_ANY)
            if hit is None:
                hit = s.new_volumes.get(id(csi_node))
        if hit is None:
            deps = _Deps()
            try:
                hit = {}
                self.filter_attachable_volumes(pod, csi_node, True, hit, index, deps)
            except StorageError as e:
                hit = e
            if s is not None:
                s.new_volumes[id(csi_node) if deps.csi_node else _ANY] = hit
        if isinstance(hit, StorageError):
            raise hit
        return hit

    def _existing_volumes(self, pod: Pod, csi_node: CSINode | None, index: StorageIndex
                          ) -> dict[str, str]:
        """A scheduled pod's volumes, cached per pod while the claims, volumes and classes
        it was counted from are unchanged (and per CSINode when migration mattered)."""
        hit = self._existing.get(pod.uid)
        if (hit is not None and hit[0] is pod and (hit[1] == _ANY or hit[1] == id(csi_node))
                and all(getattr(index, table).get(key) is obj for table, key, obj in hit[2])):
            return hit[3]
        deps = _Deps()
        volumes: dict[str, str] = {}
        self.filter_attachable_volumes(pod, csi_node, False, volumes, index, deps)
        if len(self._existing) > 200_000:  # pods come and go: forget the old ones
            self._existing.clear()
        self._existing[pod.uid] = (pod, id(csi_node) if deps.csi_node else _ANY,
                                   tuple(deps.lookups), volumes, csi_node)
        return volumes

    def _node_limits(self, csi_node: CSINode | None) -> dict[str, int]:
        if csi_node is None:
            return {}
        hit = self._limits.get(csi_node)
        if hit is None:
            hit = self._limits.put(csi_node, volume_limits(csi_node))
        return hit

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        return self._filter_node(state, pod, node_info, self._index())

    def _filter_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                     index: StorageIndex) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found")
        csi_node = index.csi_node(node.name)
        try:
            new_volumes = self._new_volumes(state, pod, csi_node, index)
        except _LookupError as e:
            return unresolvable(str(e))
        except StorageError as e:
            return error(str(e))
        if not new_volumes:
            return None
        missing = self._missing_driver(self._required_drivers(new_volumes, index), csi_node)
        if missing is not None:
            return unschedulable(driver_not_installed(missing))
        limits = self._node_limits(csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for existing in node_info.pods:
                if existing.spec.volumes:
                    attached.update(self._existing_volumes(existing, csi_node, index))
        except StorageError as e:
            return error(str(e))
        if attached:
            attached_count = Counter(attached.values())
            # a volume shared with a pod there counts once
            new_count = Counter(k for u, k in new_volumes.items() if u not in attached)
        else:
            attached_count = Counter()
            new_count = Counter(new_volumes.values())
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count[key] + count > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _volume_pods(self, node_info: NodeInfo) -> tuple[Pod, ...]:
        """The node's pods that have volumes (cached per node version)."""
        hit = self._vol_pods.get(node_info.name)
        if (hit is None or hit[0] is not node_info or hit[1] != node_info.generation
                or hit[2] != len(node_info.pods)):
            pods = tuple(p for p in node_info.pods if p.spec.volumes)
            hit = (node_info, node_info.generation, len(node_info.pods), pods)
            self._vol_pods[node_info.name] = hit
        return hit[3]

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        """The per-node check in one loop: nodes without a CSINode (or without limits) are
        rejected only for the incoming pod's own claims; the pod's volumes are counted once
        (unless in-tree migration makes them depend on the node), and the pods on a node
        are looked at only when the node has limits."""
        n = len(idx)
        out = BatchStatus.success(n)
        if not pod.spec.volumes:
            return out
        index = self._index()
        names = snapshot.table.names
        infos = snapshot.node_infos
        rows = idx.tolist()
        csi_nodes = index.csi_nodes
        try:
            base = self._new_volumes(state, pod, None, index)
        except StorageError as e:
            code = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if isinstance(e, _LookupError)
                    else Code.ERROR)
            if self._independent(state):
                out.fail(np.ones(n, dtype=bool), code, (str(e),))
                return out
            base = None
        if base is None or not self._independent(state):
            # in-tree migration: per node, as Filter
            return BatchStatus.from_statuses([self._filter_node(state, pod, infos[i], index)
                                              for i in rows])
        if not base:
            return out
        base_count = Counter(base.values())
        required = self._required_drivers(base, index)
        exceeded: list[int] = []
        errors: dict[str, list[int]] = {}
        not_installed: dict[str, list[int]] = {}
        for k, i in enumerate(rows):
            cn = csi_nodes.get(names[i])
            missing = self._missing_driver(required, cn)
            if missing is not None:
                not_installed.setdefault(missing, []).append(k)
                continue
            if cn is None:
                continue
            limits = self._node_limits(cn)
            if not limits:
                continue
            new_count: Counter[str] = base_count
            attached_count: Counter[str] | dict[str, int] = {}
            vol_pods = self._volume_pods(infos[i])
            if vol_pods:
                attached: dict[str, str] = {}
                try:
                    for p in vol_pods:
                        attached.update(self._existing_volumes(p, cn, index))
                except StorageError as e:
                    errors.setdefault(str(e), []).append(k)
                    continue
                if attached:
                    attached_count = Counter(attached.values())
                    new_count = Counter(v for u, v in base.items() if u not in attached)
            for key, count in new_count.items():
                limit = limits.get(key)
                if limit is not None and attached_count.get(key, 0) + count > limit:
                    exceeded.append(k)
                    break
        if exceeded:
            mask = np.zeros(n, dtype=bool)
            mask[exceeded] = True
            out.fail(mask, Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
        for driver, ks in not_installed.items():
            mask = np.zeros(n, dtype=bool)
            mask[ks] = True
            out.fail(mask, Code.UNSCHEDULABLE, (driver_not_installed(driver),))
        for msg, ks in errors.items():
            mask = np.zeros(n, dtype=bool)
            mask[ks] = True
            out.fail(mask, Code.ERROR, (msg,))
        return out

    def _required_drivers(self, new_volumes: dict[str, str], index: StorageIndex
                          ) -> tuple[str, ...]:
        """The drivers of the pod's volumes that must be on the node (VolumeLimitScaling):
        those whose CSIDriver sets ``preventPodSchedulingIfMissing``, by name."""
        if not feature_enabled(self.handle, VOLUME_LIMIT_SCALING) or not index.csi_drivers:
            return ()
        drivers = {unique.partition("/")[0] for unique in new_volumes}
        return tuple(sorted(d for d in drivers if (cd := index.csi_driver(d)) is not None
                            and cd.prevent_pod_scheduling_if_missing))

    @staticmethod
    def _missing_driver(required: tuple[str, ...], csi_node: CSINode | None) -> str | None:
        """The first required driver the node's CSINode does not list (no CSINode: none is
        installed)."""
        if not required:
            return None
        installed = {d.name for d in csi_node.drivers} if csi_node is not None else set()
        return next((d for d in required if d not in installed), None)

    @staticmethod
    def _independent(state: CycleState) -> bool:
        s = state.read(PRE_FILTER_STATE_KEY)
        return isinstance(s, _State) and _ANY in s.new_volumes

    # ------------------------------------------------------------------ counting

    def filter_attachable_volumes(self, pod: Pod, csi_node: CSINode | None, new_pod: bool,
                                  result: dict[str, str], index: StorageIndex,
                                  deps: _Deps | None = None) -> None:
        """``filterAttachableVolumes``: adds ``driver/handle -> limit key`` for each of the
        pod's volumes that counts; raises StorageError. ``deps`` records whether the node's
        CSINode mattered."""
        deps = deps or _Deps()
        for vol in pod.spec.volumes:
            found = pod_claim_name(pod, vol)
            if found is None:
                self._check_inline(vol, csi_node, result, deps)
                continue
            name, ephemeral = found
            if name == "":
                raise StorageError("PersistentVolumeClaim had no name")
            pvc = index.pvc(pod.namespace, name)
            deps.lookups.append(("pvcs", f"{pod.namespace}/{name}", pvc))
            if pvc is None:
                if new_pod:
                    raise _LookupError(f"looking up PVC {pod.namespace}/{name}: "
                                       f"{pvc_not_found(name)}")
                continue  # not counted: no guarantee it belongs to the pod
            if ephemeral:
                check_volume_is_for_pod(pod, pvc)
            driver, handle = self._csi_driver_info(csi_node, pvc, index, deps)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    @staticmethod
    def _check_inline(vol: Volume, csi_node: CSINode | None, result: dict[str, str],
                      deps: _Deps) -> None:
        plugin = inline_plugin_name(vol)
        if plugin is None:
            return
        deps.csi_node = True
        if not is_csi_migration_on(csi_node, plugin):
            return
        try:
            driver, handle = translate_inline(vol)
        except TranslationError as e:
            raise StorageError(f"converting volume({vol.name}) from inline to csi: {e}") from None
        result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    def _csi_driver_info(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim,
                         index: StorageIndex, deps: _Deps) -> tuple[str, str]:
        """``getCSIDriverInfo``: the claim's driver and volume handle."""
        pv_name = pvc.spec.volume_name
        pv = index.pv(pv_name) if pv_name else None
        if pv_name:
            deps.lookups.append(("pvs", pv_name, pv))
        if pv is None:  # unbound, or the volume is gone: count by the class's provisioner
            return self._csi_driver_info_from_sc(csi_node, pvc, index, deps)
        if pv.spec.source_kind == "csi":
            return pv.spec.csi_driver, pv.spec.csi_volume_handle
        plugin = pv_plugin_name(pv)
        if plugin is None:
            return "", ""
        deps.csi_node = True
        if not is_csi_migration_on(csi_node, plugin):
            return "", ""
        try:
            csi_pv = translate_pv(pv)
        except TranslationError:
            return "", ""
        return csi_pv.spec.csi_driver, csi_pv.spec.csi_volume_handle

    @staticmethod
    def _csi_driver_info_from_sc(csi_node: CSINode | None, pvc: PersistentVolumeClaim,
                                 index: StorageIndex, deps: _Deps) -> tuple[str, str]:
        from kubesched.api.storage import pvc_storage_class

        sc_name = pvc_storage_class(pvc)
        if not sc_name:
            return "", ""
        sc = index.storage_class(sc_name)
        deps.lookups.append(("classes", sc_name, sc))
        if sc is None:
            return "", ""
        handle = f"{RANDOM_VOLUME_ID_PREFIX}-{pvc.namespace}/{pvc.name}"
        provisioner = sc.provisioner
        if is_migratable_plugin_name(provisioner):
            deps.csi_node = True
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return csi_name_from_in_tree(provisioner), handle
        return provisioner, handle
