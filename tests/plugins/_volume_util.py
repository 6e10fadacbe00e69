"""Builders for the volume plugin tests, in the spirit of upstream's test helpers
(``makePV`` / ``makePVC`` / ``makeTestPV`` / ``st.MakePod().PVC()``).

Storage objects are built as dataclasses directly (upstream's tables use objects the API server
would reject, e.g. claims without access modes), pods and nodes through ``api.parse``. Every
Filter check runs both the per-node and the batch form (when the plugin has one) and requires
them to agree.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.quantity import parse_quantity
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    MIGRATED_PLUGINS_ANNOTATION,
    CSINode,
    CSINodeDriver,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
)
from kubesched.api.types import (
    LabelSelector,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.testing import snapshot_from_nodes

_ids = itertools.count()

KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
         "CSIStorageCapacity")


def q(v: str | None) -> Fraction | None:
    return None if v is None else parse_quantity(v)


def make_sc(name: str, mode: str = "WaitForFirstConsumer",
            provisioner: str = "kubernetes.io/no-provisioner",
            allowed: dict[str, list[str]] | None = None) -> StorageClass:
    terms: tuple[TopologySelectorTerm, ...] = ()
    if allowed:
        terms = (TopologySelectorTerm(tuple(TopologySelectorLabelRequirement(k, tuple(v))
                                            for k, v in allowed.items())),)
    return StorageClass(metadata=ObjectMeta(name=name, uid=name), provisioner=provisioner,
                        volume_binding_mode=mode, allowed_topologies=terms)


def affinity(key_values: dict[str, list[str]]) -> tuple[NodeSelectorTerm, ...]:
    return (NodeSelectorTerm(tuple(NodeSelectorRequirement(k, "In", tuple(v))
                                   for k, v in key_values.items())),)


def make_pv(name: str, cls: str = "", capacity: str | None = None, *, phase: str = "Available",
            node_affinity: dict[str, list[str]] | None = None,
            claim: PersistentVolumeClaim | None = None, labels: dict[str, str] | None = None,
            access: tuple[str, ...] = ("ReadWriteOnce", "ReadOnlyMany"),
            volume_mode: str = "Filesystem", source_kind: str = "local",
            source: dict[str, Any] | None = None, rv: str = "1",
            claim_ref: ObjectReference | None = None, vac: str | None = None
            ) -> PersistentVolume:
    ref = claim_ref
    annotations: dict[str, str] = {}
    if claim is not None:
        ref = ObjectReference(name=claim.name, namespace=claim.namespace,
                              uid=claim.metadata.uid)
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    return PersistentVolume(
        metadata=ObjectMeta(name=name, uid=name, labels=dict(labels or {}),
                            annotations=annotations, resource_version=rv),
        spec=PersistentVolumeSpec(
            capacity=q(capacity), access_modes=access, storage_class_name=cls,
            volume_mode=volume_mode, claim_ref=ref,
            node_affinity=affinity(node_affinity) if node_affinity is not None else None,
            source_kind=source_kind, source=dict(source or {"path": "/mnt"}),
            volume_attributes_class_name=vac),
        status=PersistentVolumeStatus(phase=phase))


def make_pvc(name: str, cls: str | None = None, request: str | None = None, *,
             ns: str = "default", volume_name: str = "", bound: bool = False,
             access: tuple[str, ...] = ("ReadWriteOnce",), selected_node: str | None = None,
             uid: str | None = None, rv: str = "1", phase: str = "Pending",
             selector: LabelSelector | None = None, deleting: bool = False,
             owner: Pod | None = None, volume_mode: str = "Filesystem",
             vac: str | None = None) -> PersistentVolumeClaim:
    annotations: dict[str, str] = {}
    if bound:
        annotations[ANN_BIND_COMPLETED] = "yes"
    if selected_node is not None:
        annotations[ANN_SELECTED_NODE] = selected_node
    owners = []
    if owner is not None:
        owners.append(OwnerReference(kind="Pod", name=owner.name, uid=owner.uid,
                                     controller=True))
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace=ns, uid=uid or f"{ns}/{name}",
                            annotations=annotations, resource_version=rv,
                            owner_references=owners,
                            deletion_timestamp=1.0 if deleting else None),
        spec=PersistentVolumeClaimSpec(access_modes=access, selector=selector,
                                       request=q(request), volume_name=volume_name,
                                       storage_class_name=cls, volume_mode=volume_mode,
                                       volume_attributes_class_name=vac),
        status=PersistentVolumeClaimStatus(phase=phase))


def make_csinode(name: str, drivers: dict[str, int | None], *, migrated: str | None = None,
                 topology_keys: tuple[str, ...] = ()) -> CSINode:
    ann = {MIGRATED_PLUGINS_ANNOTATION: migrated} if migrated is not None else {}
    return CSINode(metadata=ObjectMeta(name=name, uid=name, annotations=ann),
                   drivers=tuple(CSINodeDriver(d, name, topology_keys, c)
                                 for d, c in drivers.items()))


def make_node(name: str, labels: dict[str, str] | None = None, *,
              hostname_label: bool = True) -> Node:
    lab = {"kubernetes.io/hostname": name} if hostname_label else {}
    lab.update(labels or {})
    return parse_node({"metadata": {"name": name, "labels": lab},
                       "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})


def make_pod(name: str | None = None, *, ns: str = "default", pvcs: tuple[str, ...] = (),
             volumes: list[dict[str, Any]] | None = None, node: str = "",
             uid: str | None = None) -> Pod:
    name = name or f"pod-{next(_ids)}"
    vols = [{"name": f"vol{i}", "persistentVolumeClaim": {"claimName": c}}
            for i, c in enumerate(pvcs)]
    vols += volumes or []
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}], "volumes": vols}
    if node:
        spec["nodeName"] = node
    return parse_pod({"metadata": {"name": name, "namespace": ns,
                                   "uid": uid or f"uid-{name}-{next(_ids)}"},
                      "spec": spec})


def objects(*objs: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {k: [] for k in KINDS}
    for o in objs:
        out[o.kind].append(o)
    return out


def setup(plugin_cls: type, objs: list[Any], nodes: list[Node] | None = None,
          pods: list[Pod] | None = None, args: dict[str, Any] | None = None,
          backend: Any = None) -> tuple[Any, Snapshot]:
    snap = snapshot_from_nodes(nodes or [], pods or [])
    handle = Handle(snapshot=snap, objects=objects(*objs), backend=backend)
    return plugin_cls(args, handle), snap


def prefilter(plugin: Any, pod: Pod, snap: Snapshot, state: CycleState | None = None
              ) -> tuple[CycleState, Status]:
    state = state or CycleState()
    _, st = plugin.pre_filter(state, pod, snap)
    return state, Status() if st is None else st


def filter_all(plugin: Any, state: CycleState, pod: Pod, snap: Snapshot) -> list[Status]:
    """Filter on every node in both forms (the batch form on a clone of the state, so the
    per-node form's side effects do not help it); asserts they agree."""
    per_node = [plugin.filter(state, pod, ni) for ni in snap.node_infos]
    per_node = [Status() if s is None else s for s in per_node]
    batch = getattr(plugin, "filter_batch", None)
    if batch is not None:
        out = batch(state.clone(), pod, snap, np.arange(snap.num_nodes))
        for i, s in enumerate(per_node):
            b = out.status_at(i, plugin.name)
            assert (b.code, b.reasons) == (s.code, s.reasons), (
                snap.node_infos[i].name, b, s)
    return per_node


def status(code: Code = Code.SUCCESS, *reasons: str) -> tuple[Code, tuple[str, ...]]:
    return code, tuple(reasons)


def as_pair(st: Status | None) -> tuple[Code, tuple[str, ...]]:
    st = st or Status()
    return st.code, st.reasons
