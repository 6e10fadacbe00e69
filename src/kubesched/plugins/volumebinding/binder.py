"""The scheduler's volume binder (upstream ``volumebinding/binder.go``, v1.35).

``get_pod_volume_claims`` (PreFilter) sorts a pod's claims into bound, unbound with delayed
binding (WaitForFirstConsumer) and unbound immediate ones, and lists the volumes of the delayed
claims' classes. ``find_pod_volumes`` (Filter) checks, for one node, the bound volumes' node
affinity, finds the smallest fitting volume for each delayed claim (``FindMatchingVolume``) and
checks that the remaining ones can be provisioned there; ``find_pod_volumes_batch`` does the
same for many nodes at once over the node table. ``assume_pod_volumes`` (Reserve),
``revert_assumed_pod_volumes`` (Unreserve) and ``bind_pod_volumes`` (PreBind: the API updates
through the backend, then the check that the PV controller completed the binding) follow.

Storage capacity tracking (``hasEnoughCapacity``): a provisioner whose CSIDriver has
``storageCapacity: true`` provisions a claim on a node only when a CSIStorageCapacity of the
claim's class selects the node (``nodeTopology``) and reports at least the claim's request
(``maximumVolumeSize`` when set, else ``capacity``); otherwise the node gets "node(s) did not
have enough free storage". The first such object (in the order stored; upstream: its
informer's map order) is kept with the claim for VolumeBinding's Score.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.selectors import SelectorError, label_selector_as_selector
from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    FILESYSTEM,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageIndex,
    copy_object,
    object_key,
    pv_storage_class,
    pvc_storage_class,
    resource_version_int,
    storage_index,
)
from kubesched.api.types import Node, Pod, Volume
from kubesched.clock import Clock
from kubesched.framework.backend import Backend
from kubesched.framework.node_table import NodeTable
from kubesched.framework.table_cache import NodeStamp
from kubesched.plugins.volumebinding.assume_cache import AssumeCache
from kubesched.plugins.volumebinding.csi_translation import (
    is_migration_on_for_plugin,
    is_plugin_migrated_on_node,
    pv_plugin_name,
    translate_pv,
)
from kubesched.plugins.volumebinding.helpers import (
    StorageError,
    _claim_selector,
    check_volume_is_for_pod,
    claim_sort_key,
    find_matching_volume,
    go_quote,
    is_delay_binding_mode,
    is_pvc_fully_bound,
    match_topology_selector_terms,
    pod_claim_name,
    pv_affinity_mask,
    pv_affinity_matches,
    pv_affinity_rows,
    pv_not_found,
    topology_mask,
)

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
# reworded in 2025, before v1.35 (kubernetes#129887; v1.30: "node(s) had volume node
# affinity conflict")
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = ("node(s) unavailable due to one or more pvc(s) bound to "
                           "non-existent pv(s)")


@dataclass(slots=True)
class BindingInfo:
    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(slots=True)
class DynamicProvision:
    """A claim to provision on the node, with the CSIStorageCapacity that let it (None when
    its driver does not opt into capacity tracking)."""

    pvc: PersistentVolumeClaim
    node_capacity: CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    """A pod's volume decisions for one node: static bindings and claims to provision
    (None and empty differ, as upstream's nil and empty slices)."""

    static_bindings: list[BindingInfo] | None = None
    dynamic_provisions: list[DynamicProvision] | None = None


@dataclass(slots=True)
class PodVolumeClaims:
    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # storage class -> the volumes of that class (assumed versions), for the delayed claims
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(
        default_factory=dict)
    # the batch form's answer for the whole node table (one per scheduling cycle)
    batch: BatchResult | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class ClaimChoice:
    """One delayed claim's volume per table row (``choice``: index into ``candidates``, -1:
    none fits there)."""

    pvc: PersistentVolumeClaim
    candidates: list[PersistentVolume]
    choice: np.ndarray


@dataclass(slots=True)
class BatchResult:
    """``find_pod_volumes`` for every row of one node table."""

    made_for: NodeStamp
    bound_ok: np.ndarray
    unbound_ok: np.ndarray
    bound_found: np.ndarray
    sufficient: np.ndarray  # storage capacity suffices for the claims to provision
    selected: list[PersistentVolumeClaim] = field(default_factory=list)  # selected-node claims
    choices: list[ClaimChoice] = field(default_factory=list)  # the others, smallest first
    # claim key -> (the CSIStorageCapacities of its class, each row's one: index or -1), for
    # claims whose driver opts into capacity tracking
    capacities: dict[str, tuple[list[CSIStorageCapacity], np.ndarray]] = field(
        default_factory=dict)

    def pod_volumes(self, row: int) -> PodVolumes:
        """The PodVolumes ``find_pod_volumes`` builds for a node that fits (``row``)."""
        static = [BindingInfo(c.pvc, c.candidates[int(c.choice[row])])
                  for c in self.choices if c.choice[row] >= 0]
        claims = [*self.selected, *(c.pvc for c in self.choices if c.choice[row] < 0)]
        dynamic = [DynamicProvision(pvc, self.node_capacity(pvc, row)) for pvc in claims]
        return PodVolumes(static or None, dynamic or None)

    def node_capacity(self, pvc: PersistentVolumeClaim, row: int) -> CSIStorageCapacity | None:
        hit = self.capacities.get(pvc.key)
        if hit is None:
            return None
        j = int(hit[1][row])
        return hit[0][j] if j >= 0 else None


def volume_limit(capacity: CSIStorageCapacity) -> int | None:
    """``volumeLimit``: maximumVolumeSize when reported (the more precise), else capacity,
    as ``Quantity.Value()`` (rounded up to whole bytes)."""
    limit = (capacity.maximum_volume_size if capacity.maximum_volume_size is not None
             else capacity.capacity)
    return None if limit is None else math.ceil(limit)


def capacity_sufficient(capacity: CSIStorageCapacity, size: int) -> bool:
    """``capacitySufficient``: a reported limit of at least ``size`` bytes."""
    limit = volume_limit(capacity)
    return limit is not None and limit >= size


def _topology_selector(capacity: CSIStorageCapacity) -> Any:
    """The capacity's nodeTopology as a selector; None when it selects no node (no topology,
    or one that is not a valid selector: upstream logs the error and denies access)."""
    if capacity.node_topology is None:
        return None
    try:
        return label_selector_as_selector(capacity.node_topology)
    except SelectorError:
        return None


def node_has_access(labels: Mapping[str, str], capacity: CSIStorageCapacity) -> bool:
    """``nodeHasAccess``: the capacity's nodeTopology selects the node's labels."""
    selector = _topology_selector(capacity)
    return selector is not None and bool(selector.matches(labels))


def reasons_from_flags(bound_ok: bool, unbound_ok: bool, sufficient: bool,
                       bound_found: bool) -> tuple[str, ...]:
    out = []
    if not bound_ok:
        out.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        out.append(ERR_REASON_BIND_CONFLICT)
    if not sufficient:
        out.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not bound_found:
        out.append(ERR_REASON_PV_NOT_EXIST)
    return tuple(out)


class NeedsPerNode(Exception):
    """The batch form cannot decide these nodes (in-tree volumes translated per node)."""


class VolumeBinder:
    def __init__(self, objects: Callable[[], Mapping[str, list[Any]] | None],
                 backend: Callable[[], Backend | None] = lambda: None,
                 node: Callable[[str], Node | None] = lambda name: None,
                 bind_timeout: float = 600.0,
                 clock: Callable[[], Clock | None] = lambda: None) -> None:
        self._objects = objects
        self.bind_timeout = bind_timeout
        self._backend = backend
        self._clock = clock
        self._node = node
        self.pv_cache = AssumeCache("v1.PersistentVolume", lambda k: self.index().pv(k))
        self.pvc_cache = AssumeCache("v1.PersistentVolumeClaim",
                                     lambda k: self.index().pvcs.get(k))

    def index(self) -> StorageIndex:
        return storage_index(self._objects())

    def list_pvs(self, class_name: str) -> list[PersistentVolume]:
        """``pvCache.ListPVs(class)``: the volumes of a class, assumed versions included, in
        name order (upstream lists in map order)."""
        pvs = self.index().pvs_by_class.get(class_name, [])
        if not len(self.pv_cache):
            return list(pvs)
        resolve = self.pv_cache.resolve
        return [resolve(pv.name, pv) for pv in pvs]

    # ------------------------------------------------------------------ claims

    def _is_volume_bound(self, pod: Pod, vol: Volume
                         ) -> tuple[bool, PersistentVolumeClaim | None]:
        found = pod_claim_name(pod, vol)
        if found is None:
            return True, None
        name, ephemeral = found
        key = f"{pod.namespace}/{name}"
        pvc = self.pvc_cache.get(key)
        if pvc is None:
            raise StorageError(f"error getting PVC {go_quote(key)}: "
                               f'{"v1.PersistentVolumeClaim"} {go_quote(key)} not found')
        if ephemeral:
            check_volume_is_for_pod(pod, pvc)
        return is_pvc_fully_bound(pvc), pvc

    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        for vol in pod.spec.volumes:
            try:
                bound, _ = self._is_volume_bound(pod, vol)
            except StorageError:
                bound = False
            if not bound:
                return False
        return True

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """``GetPodVolumeClaims``; raises StorageError."""
        out = PodVolumeClaims()
        index = self.index()
        for vol in pod.spec.volumes:
            bound, pvc = self._is_volume_bound(pod, vol)
            if pvc is None:
                continue
            if bound:
                out.bound_claims.append(pvc)
            elif is_delay_binding_mode(pvc, index) and pvc.spec.volume_name == "":
                out.unbound_claims_delay_binding.append(pvc)
            else:  # immediate binding (and pre-bound claims) should be bound already
                out.unbound_claims_immediate.append(pvc)
        for pvc in out.unbound_claims_delay_binding:
            cls = pvc_storage_class(pvc)
            out.unbound_volumes_delay_binding[cls] = self.list_pvs(cls)
        return out

    # ------------------------------------------------------------------ per node (Filter)

    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node
                         ) -> tuple[PodVolumes, tuple[str, ...]]:
        """``FindPodVolumes`` for one node: (pod volumes, conflict reasons); raises
        StorageError."""
        pod_volumes = PodVolumes()
        unbound_ok = bound_ok = sufficient = bound_found = True
        static: list[BindingInfo] = []
        dynamic: list[DynamicProvision] = []
        if claims.bound_claims:
            bound_ok, bound_found = self._check_bound_claims(claims.bound_claims, node)
        if claims.unbound_claims_delay_binding:
            to_find: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            fast_fail = False
            for claim in claims.unbound_claims_delay_binding:
                selected = claim.metadata.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        unbound_ok = False  # fast path: provisioning was asked elsewhere
                        fast_fail = True
                        break
                    to_provision.append(claim)
                else:
                    to_find.append(claim)
            if not fast_fail:
                if to_find:
                    unbound_ok, static, unmatched = self._find_matching_volumes(
                        to_find, claims.unbound_volumes_delay_binding, node)
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, sufficient, dynamic = self._check_volume_provisions(
                        to_provision, node)
        pod_volumes.static_bindings = static or None
        pod_volumes.dynamic_provisions = dynamic or None
        return pod_volumes, reasons_from_flags(bound_ok, unbound_ok, sufficient, bound_found)

    def try_translate(self, pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
        """``tryTranslatePVToCSI``: an in-tree PV whose plugin is migrated on the node is
        checked as its CSI translation."""
        plugin = pv_plugin_name(pv)
        if plugin is None or not is_migration_on_for_plugin(plugin):
            return pv
        if not is_plugin_migrated_on_node(plugin, csi_node):
            return pv
        try:
            return translate_pv(pv)
        except StorageError as e:
            raise StorageError(f"could not translate pv: {e}") from None

    def _check_bound_claims(self, claims: list[PersistentVolumeClaim], node: Node
                            ) -> tuple[bool, bool]:
        csi_node = self.index().csi_node(node.name)
        for pvc in claims:
            pv = self.pv_cache.get(pvc.spec.volume_name)
            if pv is None:
                return True, False
            pv = self.try_translate(pv, csi_node)
            if not pv_affinity_matches(pv.spec.node_affinity, node.metadata.labels):
                return False, True
        return True, True

    def _find_matching_volumes(self, claims: list[PersistentVolumeClaim],
                               volumes: dict[str, list[PersistentVolume]], node: Node
                               ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        chosen: dict[str, PersistentVolume] = {}
        found = True
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        for pvc in sorted(claims, key=claim_sort_key):  # smallest requests first
            pv = find_matching_volume(pvc, volumes.get(pvc_storage_class(pvc), []),
                                      node.metadata.labels, chosen)
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen[pv.name] = pv
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unmatched

    def _provision_class(self, claim: PersistentVolumeClaim) -> StorageClass:
        cls = pvc_storage_class(claim)
        if not cls:
            raise StorageError(f"no class for claim {go_quote(claim.key)}")
        sc = self.index().storage_class(cls)
        if sc is None:
            raise StorageError(f"failed to find storage class {go_quote(cls)}")
        return sc

    def _check_volume_provisions(self, claims: list[PersistentVolumeClaim], node: Node
                                 ) -> tuple[bool, bool, list[DynamicProvision]]:
        """``checkVolumeProvisions``: (provisioning possible, enough storage, the claims to
        provision); the first claim that fails decides."""
        dynamic: list[DynamicProvision] = []
        for claim in claims:
            sc = self._provision_class(claim)
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.allowed_topologies, node.metadata.labels):
                return False, True, []
            sufficient, capacity = self.has_enough_capacity(claim, sc, node.metadata.labels)
            if not sufficient:
                return True, False, []
            dynamic.append(DynamicProvision(claim, capacity))
        return True, True, dynamic

    def tracked_capacities(self, claim: PersistentVolumeClaim, sc: StorageClass
                           ) -> tuple[int, list[CSIStorageCapacity]] | None:
        """The claim's size in bytes and the CSIStorageCapacities of its class large enough
        for it, in the order stored; None when capacity is not checked (no storage request,
        or the provisioner's CSIDriver is missing or does not set ``storageCapacity``)."""
        request = claim.spec.request
        if request is None:
            return None
        index = self.index()
        driver = index.csi_driver(sc.provisioner)
        if driver is None or not driver.storage_capacity:
            return None
        size = math.ceil(request)
        return size, [c for c in index.capacities.values()
                      if c.storage_class_name == sc.name and capacity_sufficient(c, size)]

    def has_enough_capacity(self, claim: PersistentVolumeClaim, sc: StorageClass,
                            labels: Mapping[str, str]
                            ) -> tuple[bool, CSIStorageCapacity | None]:
        """``hasEnoughCapacity`` for a node with ``labels``: (enough, the capacity found)."""
        tracked = self.tracked_capacities(claim, sc)
        if tracked is None:
            return True, None
        for capacity in tracked[1]:
            if node_has_access(labels, capacity):
                return True, capacity
        return False, None

    # ------------------------------------------------------------------ batch (Filter)

    def find_pod_volumes_batch(self, pod: Pod, claims: PodVolumeClaims, table: NodeTable,
                               idx: np.ndarray
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``find_pod_volumes`` for the table rows ``idx``: (bound volumes fit, unbound claims
        satisfied, enough storage, bound volumes found) per row; raises NeedsPerNode when an
        in-tree volume would be translated per node. Computed once per cycle for the whole
        table."""
        b = self.batch_result(claims, table)
        return b.bound_ok[idx], b.unbound_ok[idx], b.sufficient[idx], b.bound_found[idx]

    def batch_result(self, claims: PodVolumeClaims, table: NodeTable) -> BatchResult:
        b = claims.batch
        if b is not None and b.made_for.matches(table):
            return b
        n = table.size
        bound_ok = np.ones(n, dtype=bool)
        bound_found = np.ones(n, dtype=bool)
        if claims.bound_claims:
            alive = np.ones(n, dtype=bool)
            for pvc in claims.bound_claims:
                pv = self.pv_cache.get(pvc.spec.volume_name)
                if pv is None:
                    bound_found[alive] = False
                    break
                plugin = pv_plugin_name(pv)
                if plugin is not None and is_migration_on_for_plugin(plugin):
                    raise NeedsPerNode
                ok = pv_affinity_mask(pv.spec.node_affinity, table)
                bound_ok[alive & ~ok] = False
                alive &= ok
        b = BatchResult(NodeStamp(table), bound_ok, np.ones(n, dtype=bool), bound_found,
                        np.ones(n, dtype=bool))
        if claims.unbound_claims_delay_binding:
            self._unbound_batch(claims, table, b)
        claims.batch = b
        return b

    def _unbound_batch(self, claims: PodVolumeClaims, table: NodeTable, b: BatchResult
                       ) -> None:
        n = table.size
        eligible = np.ones(n, dtype=bool)
        to_find: list[PersistentVolumeClaim] = []
        for claim in claims.unbound_claims_delay_binding:
            selected = claim.metadata.annotations.get(ANN_SELECTED_NODE)
            if selected is None:
                to_find.append(claim)
                continue
            row = table.index.get(selected)
            keep = np.zeros(n, dtype=bool)
            if row is not None:
                keep[row] = True
            eligible &= keep  # fast path: provisioning was asked for on that node
            b.selected.append(claim)
        b.unbound_ok = eligible.copy()
        if not eligible.any():
            return
        chosen: dict[str, np.ndarray] = {}  # volume name -> rows where an earlier claim took it
        ordered = sorted(to_find, key=claim_sort_key)
        for k, pvc in enumerate(ordered):
            volumes = claims.unbound_volumes_delay_binding.get(pvc_storage_class(pvc), [])
            candidates, choice = self.match_claim_rows(pvc, volumes, table, eligible, chosen)
            b.choices.append(ClaimChoice(pvc, candidates, choice))
            if k + 1 < len(ordered):
                valid = np.flatnonzero(choice >= 0)
                if len(valid):
                    js = choice[valid]
                    order = np.argsort(js, kind="stable")
                    js, valid = js[order], valid[order]
                    bounds = np.flatnonzero(np.diff(js)) + 1
                    for part_j, part_rows in zip(np.split(js, bounds), np.split(valid, bounds),
                                                 strict=True):
                        name = candidates[int(part_j[0])].name
                        prev = chosen.get(name)
                        chosen[name] = part_rows if prev is None else np.union1d(prev,
                                                                                 part_rows)
        # checkVolumeProvisions per row: the claims to provision in the per-node order
        # (selected-node claims, then the unmatched ones smallest first); on each row the
        # first claim that cannot be provisioned decides between the two reasons
        provisions = [(claim, eligible) for claim in b.selected]
        provisions += [(c.pvc, eligible & (c.choice < 0)) for c in b.choices]
        undecided = np.ones(n, dtype=bool)
        for claim, needed in provisions:
            rows = needed & undecided
            if not rows.any():
                continue
            sc = self._provision_class(claim)
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                no_topology = rows
            else:
                no_topology = rows & ~topology_mask(sc.allowed_topologies, table,
                                                    np.arange(n))
            b.unbound_ok[no_topology] = False
            undecided &= ~no_topology
            rows &= ~no_topology
            if not rows.any():
                continue
            found = self._capacity_rows(claim, sc, table)
            if found is None:
                continue
            b.capacities[claim.key] = found
            short = rows & (found[1] < 0)
            b.sufficient[short] = False
            undecided &= ~short

    def _capacity_rows(self, claim: PersistentVolumeClaim, sc: StorageClass, table: NodeTable
                       ) -> tuple[list[CSIStorageCapacity], np.ndarray] | None:
        """``hasEnoughCapacity`` on every table row: (the capacities that can hold the claim,
        each row's first one that selects it, or -1); None when capacity is not checked."""
        tracked = self.tracked_capacities(claim, sc)
        if tracked is None:
            return None
        capacities = tracked[1]
        n = table.size
        first = np.full(n, -1, dtype=np.int64)
        rows = np.arange(n)
        for j, capacity in enumerate(capacities):
            open_rows = first < 0
            if not open_rows.any():
                break
            selector = _topology_selector(capacity)
            if selector is None:
                continue
            first[open_rows & selector.matches_columns(table.label_factors, rows)] = j
        return capacities, first

    @staticmethod
    def match_claim_rows(pvc: PersistentVolumeClaim, volumes: list[PersistentVolume],
                         table: NodeTable, eligible: np.ndarray,
                         chosen: dict[str, np.ndarray]
                         ) -> tuple[list[PersistentVolume], np.ndarray]:
        """``FindMatchingVolume`` on every eligible table row: (``volumes``, each row's choice
        as an index into them or -1). ``chosen``: the rows where an earlier claim of the pod
        took a volume (excluded there). The checks of ``volume_pre_checks`` and
        ``volume_unbound_checks``, inlined: this loop runs over every volume of the class."""
        n = table.size
        choice = np.full(n, -1, dtype=np.int64)
        undecided = eligible.copy()
        spec = pvc.spec
        req = spec.request or 0
        mode = spec.volume_mode or FILESYSTEM
        vac = spec.volume_attributes_class_name or ""
        modes = spec.access_modes
        name, ns, uid = pvc.metadata.name, pvc.metadata.namespace, pvc.metadata.uid
        requested = pvc_storage_class(pvc)
        selector = None
        selector_done = False
        prebound: list[int] = []
        others: list[int] = []
        for j, pv in enumerate(volumes):
            ps = pv.spec
            ref = ps.claim_ref
            if ref is not None and (ref.name != name or ref.namespace != ns
                                    or (ref.uid and ref.uid != uid)):
                continue
            if (ps.capacity or 0) < req or (ps.volume_mode or FILESYSTEM) != mode:
                continue
            if pv.metadata.deletion_timestamp is not None:
                continue
            if (ps.volume_attributes_class_name or "") != vac:
                continue
            if ref is not None:  # pre-bound to this claim
                prebound.append(j)
                continue
            if pv.status.phase != VOLUME_AVAILABLE:
                continue
            if not selector_done:
                selector = _claim_selector(pvc)
                selector_done = True
            if selector is not None and not selector.matches(pv.metadata.labels):
                continue
            if pv_storage_class(pv) != requested:
                continue
            have = ps.access_modes
            if not all(m in have for m in modes):
                continue
            others.append(j)
        # a volume pre-bound to the claim decides the rows where it is not excluded
        for j in prebound:
            pv = volumes[j]
            rows = undecided.copy()
            excl = chosen.get(pv.metadata.name)
            if excl is not None:
                rows[excl] = False
            if not rows.any():
                continue
            choice[rows & pv_affinity_mask(pv.spec.node_affinity, table)] = j
            undecided &= ~rows
        if not others or not undecided.any():
            return volumes, choice
        others.sort(key=lambda j: volumes[j].spec.capacity or 0)  # stable: first of equals
        big = len(others)
        best = np.full(n, big, dtype=np.int64)  # position in ``others`` of each row's pick
        parts: list[np.ndarray] = []
        positions: list[int] = []
        for pos, j in enumerate(others):
            pv = volumes[j]
            pv_rows = pv_affinity_rows(pv.spec.node_affinity, table)
            excl = chosen.get(pv.metadata.name) if chosen else None
            if pv_rows is None:  # no node affinity: every row
                if excl is None:
                    np.minimum(best, pos, out=best)
                    break  # later volumes can only lose to this one
                allowed = np.full(n, pos, dtype=np.int64)
                allowed[excl] = big
                np.minimum(best, allowed, out=best)
                continue
            if excl is not None:
                pv_rows = pv_rows[~np.isin(pv_rows, excl)]
            if len(pv_rows):
                parts.append(pv_rows)
                positions.append(pos)
        if parts:
            r = np.concatenate(parts)
            p = np.repeat(np.asarray(positions, dtype=np.int64), [len(x) for x in parts])
            np.minimum.at(best, r, p)
        pick = undecided & (best < big)
        js = np.asarray(others, dtype=np.int64)
        choice[pick] = js[best[pick]]
        return volumes, choice

    # ------------------------------------------------------------------ Reserve / Unreserve

    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """``AssumePodVolumes``: True when every claim is bound already; raises StorageError
        (with what it assumed reverted)."""
        if self.are_pod_volumes_bound(pod):
            return True
        from kubesched.plugins.volumebinding.helpers import get_bind_volume_to_claim

        new_bindings: list[BindingInfo] = []
        for b in pod_volumes.static_bindings or []:
            new_pv, dirty = get_bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except StorageError:
                    self._revert_pvs(new_bindings)
                    raise
            new_bindings.append(BindingInfo(b.pvc, new_pv))
        new_provisions: list[DynamicProvision] = []
        for provision in pod_volumes.dynamic_provisions or []:
            clone = copy_object(provision.pvc)
            clone.metadata.annotations[ANN_SELECTED_NODE] = node_name
            try:
                self.pvc_cache.assume(clone)
            except StorageError:
                self._revert_pvs(new_bindings)
                self._revert_pvcs(new_provisions)
                raise
            new_provisions.append(DynamicProvision(clone, provision.node_capacity))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self._revert_pvs(pod_volumes.static_bindings or [])
        self._revert_pvcs(pod_volumes.dynamic_provisions or [])

    def _revert_pvs(self, bindings: list[BindingInfo]) -> None:
        for b in bindings:
            self.pv_cache.restore(b.pv.name)

    def _revert_pvcs(self, provisions: list[DynamicProvision]) -> None:
        for p in provisions:
            self.pvc_cache.restore(object_key(p.pvc))

    # ------------------------------------------------------------------ PreBind

    def bind_pod_volumes(self, pod: Pod, pod_volumes: PodVolumes,
                         cancelled: threading.Event | None = None) -> None:
        """``BindPodVolumes``: the API updates, then the check that the claims are bound;
        raises StorageError. ``cancelled`` is the binding cycle's context: set (preemption,
        v1.36), it ends the wait for the PV controller."""
        bindings = pod_volumes.static_bindings
        provisions = pod_volumes.dynamic_provisions
        if bindings is None:
            raise StorageError(f"failed to get cached bindings for pod {go_quote(pod.key)}")
        if provisions is None:
            raise StorageError(f"failed to get cached claims to provision for pod "
                               f"{go_quote(pod.key)}")
        backend = self._backend()
        done_b = done_p = 0
        try:
            if backend is None:
                if bindings or provisions:
                    raise StorageError("no cluster backend to write the bindings to")
            else:
                for b in bindings:
                    b.pv = backend.update_persistent_volume(b.pv)
                    done_b += 1
                for provision in provisions:
                    provision.pvc = backend.update_persistent_volume_claim(provision.pvc)
                    done_p += 1
        except StorageError:
            raise
        except Exception as e:  # an API error from the backend
            raise StorageError(str(e)) from None
        finally:
            self._revert_pvs(bindings[done_b:])
            self._revert_pvcs(provisions[done_p:])
        if self.check_bindings(pod, bindings, provisions):
            return
        # Upstream polls every second until bindTimeoutSeconds for the PV controller; a
        # backend says whether there is a controller to wait for (PreBind then runs off the
        # scheduling loop, as upstream's binding cycle). The wait is on the handle's clock:
        # without one, no time passes to wait in.
        clock = self._clock()
        if backend is not None and backend.wait_for_volume_binding and clock is not None:
            deadline = clock.now() + self.bind_timeout
            while clock.now() < deadline:
                if clock.sleep(min(1.0, deadline - clock.now()), cancelled):
                    raise StorageError("binding volumes: context canceled")
                if self.check_bindings(pod, bindings, provisions):
                    return
        raise StorageError("binding volumes: context deadline exceeded")

    def check_bindings(self, pod: Pod, bindings: list[BindingInfo],
                       provisions: list[DynamicProvision]) -> bool:
        """``checkBindings`` against the API objects: True when every claim is fully bound,
        False while waiting; raises StorageError when binding must be retried."""
        node = self._node(pod.spec.node_name)
        if node is None:
            raise StorageError(f"failed to get node {go_quote(pod.spec.node_name)}: "
                               f'node {go_quote(pod.spec.node_name)} not found')
        index = self.index()
        csi_node = index.csi_node(node.name)
        for b in bindings:
            pv = index.pv(b.pv.name)
            if pv is None:
                raise StorageError(f"failed to check binding: {pv_not_found(b.pv.name)}")
            pvc = index.pvcs.get(b.pvc.key)
            if pvc is None:
                raise StorageError(f"failed to check binding: persistentvolumeclaim "
                                   f"{go_quote(b.pvc.name)} not found")
            if _newer(b.pv, pv):
                return False
            pv = self.try_translate(pv, csi_node)
            if not pv_affinity_matches(pv.spec.node_affinity, node.metadata.labels):
                raise StorageError(f"pv {go_quote(pv.name)} node affinity doesn't match node "
                                   f"{go_quote(node.name)}: no matching NodeSelectorTerms")
            if pv.spec.claim_ref is None or not pv.spec.claim_ref.uid:
                raise StorageError(f"ClaimRef got reset for pv {go_quote(pv.name)}")
            if not is_pvc_fully_bound(pvc):
                return False
        for provision in provisions:
            claim = provision.pvc
            pvc = index.pvcs.get(claim.key)
            if pvc is None:
                raise StorageError(f"failed to check provisioning pvc: persistentvolumeclaim "
                                   f"{go_quote(claim.name)} not found")
            if _newer(claim, pvc):
                return False
            if pvc.metadata.annotations.get(ANN_SELECTED_NODE) != pod.spec.node_name:
                raise StorageError(f"provisioning failed for PVC {go_quote(pvc.name)}")
            if pvc.spec.volume_name:
                pv = index.pv(pvc.spec.volume_name)
                if pv is None:
                    return False
                pv = self.try_translate(pv, csi_node)
                if not pv_affinity_matches(pv.spec.node_affinity, node.metadata.labels):
                    raise StorageError(f"pv {go_quote(pv.name)} node affinity doesn't match "
                                       f"node {go_quote(node.name)}: no matching "
                                       "NodeSelectorTerms")
            if not is_pvc_fully_bound(pvc):
                return False
        return True


def _newer(ours: Any, api: Any) -> bool:
    """``CompareResourceVersion(ours, api) > 0``: the API object is older than ours."""
    a, b = resource_version_int(ours), resource_version_int(api)
    return a is not None and b is not None and a > b
