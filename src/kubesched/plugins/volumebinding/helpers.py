"""Storage helpers the volume plugins share (upstream ``component-helpers/storage/volume``,
``component-helpers/storage/ephemeral`` and the listers' NotFound errors).

PV node affinity is checked as ``volume.CheckNodeAffinity`` does: against a node made of the
labels alone, so ``matchFields`` never constrain (a node without a name has no fields), terms
that do not parse never match. :func:`pv_affinity_mask` is the same check over the node table.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.selectors import (
    Requirement,
    Selector,
    SelectorError,
    compile_node_selector,
    label_selector_as_selector,
    new_requirement,
)
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    FILESYSTEM,
    VOLUME_AVAILABLE,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageIndex,
    TopologySelectorTerm,
    copy_object,
    pv_storage_class,
    pvc_storage_class,
)
from kubesched.api.types import NodeSelectorTerm, Pod, Volume
from kubesched.framework.table_cache import NodeMemo

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable


class StorageError(Exception):
    """An error of a storage lookup or check (upstream's ``error`` values)."""


class NotFoundError(StorageError):
    """``apierrors.NewNotFound``: ``<resource> "<name>" not found``."""

    def __init__(self, resource: str, name: str) -> None:
        super().__init__(f'{resource} "{name}" not found')
        self.resource = resource
        self.name = name


def pvc_not_found(name: str) -> NotFoundError:
    return NotFoundError("persistentvolumeclaim", name)


def pv_not_found(name: str) -> NotFoundError:
    return NotFoundError("persistentvolume", name)


def go_quote(s: str) -> str:
    """Go's ``%q`` for the names that appear in messages."""
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# ---------------------------------------------------------------- pod volumes


def is_ephemeral(vol: Volume) -> bool:
    return vol.source is not None and vol.source.get("ephemeral") is not None


def ephemeral_claim_name(pod: Pod, vol: Volume) -> str:
    """``ephemeral.VolumeClaimName``: ``<pod name>-<volume name>``."""
    return f"{pod.metadata.name}-{vol.name}"


def _controller_ref_uid(pvc: PersistentVolumeClaim) -> str | None:
    for o in pvc.metadata.owner_references:
        if o.controller:
            return o.uid
    return None


def check_volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> None:
    """``ephemeral.VolumeIsForPod`` (same namespace, and the pod is the controller)."""
    if pod.namespace != pvc.namespace or _controller_ref_uid(pvc) != pod.uid:
        raise StorageError(f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                           f"{pod.namespace}/{pod.name} (pod is not owner)")


def pod_claim_name(pod: Pod, vol: Volume) -> tuple[str, bool] | None:
    """(claim name, is ephemeral) of a volume backed by a claim, None otherwise."""
    if vol.pvc_claim_name is not None:
        return vol.pvc_claim_name, False
    if is_ephemeral(vol):
        return ephemeral_claim_name(pod, vol), True
    return None


# ---------------------------------------------------------------- claims and volumes


def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """``isPVCFullyBound``: a volume name and the bind-completed annotation."""
    return pvc.spec.volume_name != "" and ANN_BIND_COMPLETED in pvc.metadata.annotations


def is_delay_binding_mode(pvc: PersistentVolumeClaim, index: StorageIndex) -> bool:
    """``IsDelayBindingMode``: the claim's class exists and waits for the first consumer (a
    missing class means immediate binding; every parsed class has a binding mode)."""
    name = pvc_storage_class(pvc)
    if not name:
        return False
    sc = index.storage_class(name)
    return sc is not None and sc.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    ref = pv.spec.claim_ref
    if ref is None:
        return False
    if pvc.name != ref.name or pvc.namespace != ref.namespace:
        return False
    return not (ref.uid and pvc.metadata.uid != ref.uid)


def get_bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim
                             ) -> tuple[PersistentVolume, bool]:
    """``GetBindVolumeToClaim``: a copy of ``pv`` bound to ``pvc`` and whether it changed."""
    dirty = False
    should_set_bound_by_controller = not is_volume_bound_to_claim(pv, pvc)
    clone = copy_object(pv)
    ref = pv.spec.claim_ref
    if (ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace
            or ref.uid != pvc.metadata.uid):
        clone.spec.claim_ref = ObjectReference(
            name=pvc.name, namespace=pvc.namespace, uid=pvc.metadata.uid,
            resource_version=pvc.metadata.resource_version)
        dirty = True
    if should_set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in clone.metadata.annotations:
        clone.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return clone, dirty


def check_volume_mode_mismatches(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    return (pvc.spec.volume_mode or FILESYSTEM) != (pv.spec.volume_mode or FILESYSTEM)


def check_access_modes(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """Every access mode the claim asks for is one of the volume's."""
    have = set(pv.spec.access_modes)
    return all(m in have for m in pvc.spec.access_modes)


def _claim_selector(pvc: PersistentVolumeClaim) -> Selector | None:
    if pvc.spec.selector is None:
        return None
    try:
        return label_selector_as_selector(pvc.spec.selector)
    except SelectorError as e:
        raise StorageError(f"error creating internal label selector for claim: "
                           f"{pvc.namespace}/{pvc.name}: {e}") from None


def _vac(name: str | None) -> str:
    return name or ""


def volume_pre_checks(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """The node-independent checks ``FindMatchingVolume`` applies before looking at a volume's
    node affinity: claimRef, capacity, volumeMode, deletion, VolumeAttributesClass (GA in
    v1.34, so on)."""
    if pv.spec.claim_ref is not None and not is_volume_bound_to_claim(pv, pvc):
        return False
    if (pv.spec.capacity or 0) < (pvc.spec.request or 0):
        return False
    if check_volume_mode_mismatches(pvc, pv):
        return False
    if pv.metadata.deletion_timestamp is not None:
        return False
    return _vac(pvc.spec.volume_attributes_class_name) == _vac(
        pv.spec.volume_attributes_class_name)


def volume_unbound_checks(pvc: PersistentVolumeClaim, pv: PersistentVolume,
                          selector: Selector | None, requested_class: str) -> bool:
    """The checks for a volume not pre-bound to the claim (besides node affinity): phase
    Available, the claim's selector, the class, the access modes (scheduler path)."""
    if pv.status.phase != VOLUME_AVAILABLE:
        return False
    if selector is not None and not selector.matches(pv.metadata.labels):
        return False
    if pv_storage_class(pv) != requested_class:
        return False
    return check_access_modes(pvc, pv)


def find_matching_volume(pvc: PersistentVolumeClaim, volumes: list[PersistentVolume],
                         node_labels: Mapping[str, str] | None,
                         excluded: set[str] | Mapping[str, object],
                         delay_binding: bool = True) -> PersistentVolume | None:
    """``FindMatchingVolume``: the volume pre-bound to the claim if one is there (None when its
    node affinity does not fit), else the smallest volume that fits (the first of equals)."""
    smallest: PersistentVolume | None = None
    requested_class = pvc_storage_class(pvc)
    selector = _claim_selector(pvc)
    for pv in volumes:
        if pv.metadata.name in excluded:
            continue
        if not volume_pre_checks(pvc, pv):
            continue
        # (node affinity, the costliest check, is evaluated only where it decides)
        if is_volume_bound_to_claim(pv, pvc):
            if node_labels is not None and not pv_affinity_matches(pv.spec.node_affinity,
                                                                   node_labels):
                return None
            return pv
        if node_labels is None and delay_binding:
            continue
        if not volume_unbound_checks(pvc, pv, selector, requested_class):
            continue
        if smallest is not None and (smallest.spec.capacity or 0) <= (pv.spec.capacity or 0):
            continue
        if node_labels is not None and not pv_affinity_matches(pv.spec.node_affinity,
                                                               node_labels):
            continue
        smallest = pv
    return smallest


# ---------------------------------------------------------------- node affinity


def pv_affinity_matches(terms: tuple[NodeSelectorTerm, ...] | None,
                        labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity(pv, nodeLabels) == nil``."""
    if terms is None:
        return True
    for t in compile_node_selector(terms).terms:
        if t.errors:
            continue
        if t.labels is None or t.labels.matches(labels):
            return True
    return False


# module functions' memos, one per function (the node table's current node side)
_MASKS: NodeMemo[np.ndarray] = NodeMemo(8192)
_ROWS: NodeMemo[np.ndarray] = NodeMemo(8192)


def pv_affinity_mask(terms: tuple[NodeSelectorTerm, ...] | None, table: NodeTable
                     ) -> np.ndarray:
    """:func:`pv_affinity_matches` for every row of the node table (kept while the table's
    nodes are unchanged; do not modify the result)."""
    if terms is None:
        return np.ones(table.size, dtype=bool)
    return _MASKS.get(table, terms, lambda t: _pv_affinity_mask(terms, t))


def _pv_affinity_mask(terms: tuple[NodeSelectorTerm, ...], table: NodeTable) -> np.ndarray:
    n = table.size
    rows = np.arange(n)
    out = np.zeros(n, dtype=bool)
    for t in compile_node_selector(terms).terms:
        if t.errors:
            continue
        if t.labels is None:
            out[:] = True
            break
        todo = ~out
        if not todo.any():
            break
        out[todo] = t.labels.matches_columns(table.label_factors, rows[todo])
    out.setflags(write=False)
    return out


def pv_affinity_rows(terms: tuple[NodeSelectorTerm, ...] | None, table: NodeTable
                     ) -> np.ndarray | None:
    """The table rows :func:`pv_affinity_mask` accepts, or None when the volume has no node
    affinity (every row). Kept like the masks; do not modify."""
    if terms is None:
        return None
    # by identity: hashing the terms costs more than the lookup
    return _ROWS.by_identity(table, terms, lambda t: _rows_of(pv_affinity_mask(terms, t)))


def _rows_of(mask: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero(mask)
    rows.setflags(write=False)
    return rows


def match_topology_selector_terms(terms: tuple[TopologySelectorTerm, ...],
                                  labels: Mapping[str, str]) -> bool:
    """``v1helper.MatchTopologySelectorTerms``: no terms match everything; a term ANDs its
    ``key In values`` requirements; an empty or invalid term matches nothing."""
    if not terms:
        return True
    for term in terms:
        sel = _topology_term_selector(term)
        if sel is not None and all(r.matches_value(labels.get(r.key)) for r in sel):
            return True
    return False


def _topology_term_selector(term: TopologySelectorTerm) -> list[Requirement] | None:
    if not term.match_label_expressions:
        return None
    reqs = []
    try:
        for e in term.match_label_expressions:
            reqs.append(new_requirement(e.key, "In", e.values))
    except SelectorError:
        return None
    return reqs


def topology_mask(terms: tuple[TopologySelectorTerm, ...], table: NodeTable,
                  idx: np.ndarray) -> np.ndarray:
    if not terms:
        return np.ones(len(idx), dtype=bool)
    out = np.zeros(len(idx), dtype=bool)
    for term in terms:
        reqs = _topology_term_selector(term)
        if reqs is None:
            continue
        ok = np.ones(len(idx), dtype=bool)
        for r in reqs:
            ok &= r.matches_column(table.label_factors(r.key), idx)
        out |= ok
    return out


def claim_sort_key(pvc: PersistentVolumeClaim) -> int | Fraction:
    return pvc.spec.request or 0
