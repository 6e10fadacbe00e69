"""Storage objects: PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver
and CSIStorageCapacity.

Typed like upstream's ``core/v1`` and ``storage/v1`` structs (only what scheduling reads), parsed
from Kubernetes JSON/YAML with the API server's defaulting and the validation that matters to
scheduling; a bad field raises ``InputError`` naming the object, the field path and the value.

Defaulting, as the API server does it:

* PersistentVolume: ``persistentVolumeReclaimPolicy`` Retain, ``volumeMode`` Filesystem,
  ``status.phase`` Pending; an RBD source's ``pool`` ``rbd``;
* PersistentVolumeClaim: ``volumeMode`` Filesystem, ``status.phase`` Pending; a claim without
  ``storageClassName`` gets the default StorageClass (the DefaultStorageClass admission plugin,
  applied by the scenario loader, :func:`assign_default_storage_class`);
* StorageClass: ``reclaimPolicy`` Delete, ``volumeBindingMode`` Immediate;
* CSIDriver: ``storageCapacity`` false, ``preventPodSchedulingIfMissing`` unset (false).

Storage quantities are kept exact (bytes: ints, or a ``Fraction`` for a fractional count)
because upstream compares them with ``Quantity.Cmp``. The objects are mutable dataclasses but
are treated as immutable once stored: whoever changes one (the simulator playing the PV
controller) stores a copy
(:func:`replace_storage_object`), so queueing hints see the old and the new object.
"""

from __future__ import annotations

import bisect
import copy
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

from kubesched.api.parse import (
    _bool,
    _dict,
    _err,
    _int,
    _list,
    _one_of,
    _req_str,
    _str,
    _str_list,
    locate_error,
    parse_label_selector,
    parse_meta,
    parse_node_selector_term,
    parse_quantity_field,
)
from kubesched.api.types import LabelSelector, Named, NodeSelectorTerm, ObjectMeta
from kubesched.errors import InputError

# ---------------------------------------------------------------- constants

READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
ACCESS_MODES = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)

FILESYSTEM = "Filesystem"
BLOCK = "Block"
VOLUME_MODES = (FILESYSTEM, BLOCK)

RECLAIM_RETAIN = "Retain"
RECLAIM_DELETE = "Delete"
RECLAIM_RECYCLE = "Recycle"

BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (BINDING_IMMEDIATE, BINDING_WAIT_FOR_FIRST_CONSUMER)

VOLUME_PENDING = "Pending"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
VOLUME_RELEASED = "Released"
VOLUME_FAILED = "Failed"
PV_PHASES = (VOLUME_PENDING, VOLUME_AVAILABLE, VOLUME_BOUND, VOLUME_RELEASED, VOLUME_FAILED)

CLAIM_PENDING = "Pending"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"
PVC_PHASES = (CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST)

# component-helpers/storage/volume annotations
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
# v1.BetaStorageClassAnnotation: still read before spec.storageClassName
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
# v1.MigratedPluginsAnnotationKey (on CSINode objects)
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
IS_DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"

# PersistentVolumeSource members (exactly one is set on a valid PV), in API order.
PV_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd",
    "iscsi", "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume",
    "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "local",
    "storageos", "csi",
)

STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
                 "CSIDriver", "CSIStorageCapacity")


# ---------------------------------------------------------------- types


@dataclass(slots=True, frozen=True)
class ObjectReference:
    """A PV's ``spec.claimRef``."""

    name: str
    namespace: str = ""
    uid: str = ""
    kind: str = "PersistentVolumeClaim"
    api_version: str = "v1"
    resource_version: str = ""


@dataclass(slots=True)
class PersistentVolumeSpec:
    capacity: int | Fraction | None = None  # spec.capacity.storage, bytes (exact)
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    volume_mode: str = FILESYSTEM
    reclaim_policy: str = RECLAIM_RETAIN
    claim_ref: ObjectReference | None = None
    # spec.nodeAffinity.required.nodeSelectorTerms; None: no required node affinity
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    # the volume source: its key ("csi", "local", "gcePersistentDisk", ...) and raw value
    source_kind: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    volume_attributes_class_name: str | None = None

    @property
    def csi_driver(self) -> str:
        return self.source.get("driver", "") if self.source_kind == "csi" else ""

    @property
    def csi_volume_handle(self) -> str:
        return self.source.get("volumeHandle", "") if self.source_kind == "csi" else ""


@dataclass(slots=True)
class PersistentVolumeStatus:
    phase: str = VOLUME_PENDING


@dataclass(slots=True)
class PersistentVolume(Named):
    metadata: ObjectMeta
    spec: PersistentVolumeSpec = field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = field(default_factory=PersistentVolumeStatus)

    kind = "PersistentVolume"


@dataclass(slots=True)
class PersistentVolumeClaimSpec:
    access_modes: tuple[str, ...] = ()
    selector: LabelSelector | None = None
    request: int | Fraction | None = None  # resources.requests.storage, bytes (exact)
    volume_name: str = ""
    storage_class_name: str | None = None  # None: not set
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str | None = None


@dataclass(slots=True)
class PersistentVolumeClaimStatus:
    phase: str = CLAIM_PENDING
    access_modes: tuple[str, ...] = ()
    capacity: int | Fraction | None = None


@dataclass(slots=True)
class PersistentVolumeClaim(Named):
    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec = field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = field(default_factory=PersistentVolumeClaimStatus)

    kind = "PersistentVolumeClaim"


@dataclass(slots=True, frozen=True)
class TopologySelectorLabelRequirement:
    key: str
    values: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class TopologySelectorTerm:
    match_label_expressions: tuple[TopologySelectorLabelRequirement, ...] = ()


@dataclass(slots=True)
class StorageClass(Named):
    metadata: ObjectMeta
    provisioner: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    reclaim_policy: str = RECLAIM_DELETE
    volume_binding_mode: str = BINDING_IMMEDIATE
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    allow_volume_expansion: bool = False

    kind = "StorageClass"


@dataclass(slots=True, frozen=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    topology_keys: tuple[str, ...] = ()
    allocatable_count: int | None = None  # allocatable.count; None: no limit reported


@dataclass(slots=True)
class CSINode(Named):
    metadata: ObjectMeta
    drivers: tuple[CSINodeDriver, ...] = ()

    kind = "CSINode"


@dataclass(slots=True)
class CSIDriver(Named):
    """``storage.k8s.io/v1`` CSIDriver: only the two fields scheduling reads."""

    metadata: ObjectMeta
    storage_capacity: bool = False  # spec.storageCapacity: VolumeBinding's capacity check
    # spec.preventPodSchedulingIfMissing (API from 1.36): NodeVolumeLimits' driver check
    prevent_pod_scheduling_if_missing: bool = False

    kind = "CSIDriver"


@dataclass(slots=True)
class CSIStorageCapacity(Named):
    """``storage.k8s.io/v1`` CSIStorageCapacity: the storage a class can still provision for
    the nodes its ``nodeTopology`` selects (None: no node)."""

    metadata: ObjectMeta
    storage_class_name: str = ""
    node_topology: LabelSelector | None = None
    capacity: int | Fraction | None = None  # bytes (exact); None: not reported
    maximum_volume_size: int | Fraction | None = None

    kind = "CSIStorageCapacity"


# ---------------------------------------------------------------- helpers (component-helpers)


def pvc_storage_class(pvc: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, then spec.storageClassName."""
    ann = pvc.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if ann is not None:
        return ann
    return pvc.spec.storage_class_name or ""


def pv_storage_class(pv: PersistentVolume) -> str:
    """``GetPersistentVolumeClass``: the beta annotation, then spec.storageClassName."""
    ann = pv.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if ann is not None:
        return ann
    return pv.spec.storage_class_name


def is_default_storage_class(sc: StorageClass) -> bool:
    """``storageutil.IsDefaultAnnotation``: ``"true"`` in the GA or the beta annotation."""
    ann = sc.metadata.annotations
    return (ann.get(IS_DEFAULT_STORAGE_CLASS_ANNOTATION) == "true"
            or ann.get(BETA_IS_DEFAULT_STORAGE_CLASS_ANNOTATION) == "true")


def object_key(obj: Any) -> str:
    """The store key of an object: ``ns/name`` for namespaced ones, ``name`` otherwise."""
    ns = obj.metadata.namespace
    return f"{ns}/{obj.metadata.name}" if ns else obj.metadata.name


def resource_version_int(obj: Any) -> int | None:
    rv = obj.metadata.resource_version
    try:
        return int(rv) if rv else None
    except ValueError:
        return None


# ---------------------------------------------------------------- parsing


def _storage_quantity(v: Any, path: str) -> int | Fraction:
    """Bytes, exact: an int (a Fraction only for the odd fractional byte count)."""
    q = parse_quantity_field(v, path)
    return q.numerator if q.denominator == 1 else q


def _access_modes(v: Any, path: str, *, required: bool) -> tuple[str, ...]:
    modes = _str_list(v, path)
    if required and not modes:
        raise _err("at least 1 access mode is required", path, v)
    for i, m in enumerate(modes):
        if m not in ACCESS_MODES:
            raise _err(f"must be one of {', '.join(ACCESS_MODES)}", f"{path}[{i}]", m)
    if READ_WRITE_ONCE_POD in modes and len(modes) > 1:
        raise _err("may not use ReadWriteOncePod with other access modes", path, list(modes))
    return tuple(modes)


def _volume_mode(v: Any, path: str) -> str:
    return _one_of(v, path, VOLUME_MODES, default=FILESYSTEM)


def _vac_name(v: Any, path: str) -> str | None:
    return None if v is None else _str(v, path)


def _parse_claim_ref(v: Any, path: str) -> ObjectReference | None:
    if v is None:
        return None
    d = _dict(v, path)
    return ObjectReference(
        name=_req_str(d.get("name"), f"{path}.name"),
        namespace=_str(d.get("namespace"), f"{path}.namespace"),
        uid=_str(d.get("uid"), f"{path}.uid"),
        kind=_str(d.get("kind"), f"{path}.kind") or "PersistentVolumeClaim",
        api_version=_str(d.get("apiVersion"), f"{path}.apiVersion") or "v1",
        resource_version=str(d.get("resourceVersion") or ""),
    )


def _parse_pv_source(spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    present = [k for k in PV_SOURCES if spec.get(k) is not None]
    if not present:
        raise _err("must specify a volume type (one of " + ", ".join(PV_SOURCES) + ")",
                   "spec", None)
    if len(present) > 1:
        raise _err("may not specify more than 1 volume type", f"spec.{present[1]}",
                   present)
    kind = present[0]
    src = dict(_dict(spec[kind], f"spec.{kind}"))
    p = f"spec.{kind}"
    if kind == "csi":
        _req_str(src.get("driver"), f"{p}.driver")
        _req_str(src.get("volumeHandle"), f"{p}.volumeHandle")
        _bool(src.get("readOnly"), f"{p}.readOnly")
    elif kind == "local":
        _req_str(src.get("path"), f"{p}.path")
    elif kind == "gcePersistentDisk":
        _req_str(src.get("pdName"), f"{p}.pdName")
        _bool(src.get("readOnly"), f"{p}.readOnly")
    elif kind == "awsElasticBlockStore":
        _req_str(src.get("volumeID"), f"{p}.volumeID")
    elif kind == "rbd":
        _str_list(src.get("monitors"), f"{p}.monitors")
        _req_str(src.get("image"), f"{p}.image")
        src.setdefault("pool", "rbd")
    elif kind == "iscsi":
        _req_str(src.get("iqn"), f"{p}.iqn")
    elif kind in ("cinder", "portworxVolume"):
        _req_str(src.get("volumeID"), f"{p}.volumeID")
    elif kind == "azureDisk":
        _req_str(src.get("diskName"), f"{p}.diskName")
        _req_str(src.get("diskURI"), f"{p}.diskURI")
        src.setdefault("kind", "Shared")
    return kind, src


def parse_persistent_volume(d: Any, *, source: str | None = None) -> PersistentVolume:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
        s = _dict(d.get("spec"), "spec")
        st = _dict(d.get("status"), "status")
        cap = _dict(s.get("capacity"), "spec.capacity")
        if cap.get("storage") is None:
            raise _err("is required", "spec.capacity.storage", None)
        na = _dict(s.get("nodeAffinity"), "spec.nodeAffinity")
        terms: tuple[NodeSelectorTerm, ...] | None = None
        if na.get("required") is not None:
            req = _dict(na["required"], "spec.nodeAffinity.required")
            p = "spec.nodeAffinity.required.nodeSelectorTerms"
            raw_terms = _list(req.get("nodeSelectorTerms"), p)
            if not raw_terms:
                raise _err("must have at least one node selector term", p,
                           req.get("nodeSelectorTerms"))
            terms = tuple(parse_node_selector_term(t, f"{p}[{i}]")
                          for i, t in enumerate(raw_terms))
        kind, src = _parse_pv_source(s)
        sc = _str(s.get("storageClassName"), "spec.storageClassName")
        spec = PersistentVolumeSpec(
            capacity=_storage_quantity(cap["storage"], "spec.capacity.storage"),
            access_modes=_access_modes(s.get("accessModes"), "spec.accessModes",
                                       required=True),
            storage_class_name=sc,
            volume_mode=_volume_mode(s.get("volumeMode"), "spec.volumeMode"),
            reclaim_policy=_one_of(s.get("persistentVolumeReclaimPolicy"),
                                   "spec.persistentVolumeReclaimPolicy",
                                   (RECLAIM_RETAIN, RECLAIM_DELETE, RECLAIM_RECYCLE),
                                   default=RECLAIM_RETAIN),
            claim_ref=_parse_claim_ref(s.get("claimRef"), "spec.claimRef"),
            node_affinity=terms,
            source_kind=kind,
            source=src,
            volume_attributes_class_name=_vac_name(s.get("volumeAttributesClassName"),
                                                   "spec.volumeAttributesClassName"),
        )
        status = PersistentVolumeStatus(
            phase=_one_of(st.get("phase"), "status.phase", PV_PHASES, default=VOLUME_PENDING))
        return PersistentVolume(metadata=meta, spec=spec, status=status)
    except InputError as e:
        raise locate_error(e, "PersistentVolume", d, namespaced=False).located(
            file=source) from None


def parse_persistent_volume_claim(d: Any, *, source: str | None = None
                                  ) -> PersistentVolumeClaim:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"))
        s = _dict(d.get("spec"), "spec")
        st = _dict(d.get("status"), "status")
        res = _dict(s.get("resources"), "spec.resources")
        requests = _dict(res.get("requests"), "spec.resources.requests")
        if requests.get("storage") is None:
            raise _err("is required", "spec.resources.requests.storage", None)
        sc = s.get("storageClassName")
        spec = PersistentVolumeClaimSpec(
            access_modes=_access_modes(s.get("accessModes"), "spec.accessModes",
                                       required=True),
            selector=parse_label_selector(s.get("selector"), "spec.selector"),
            request=_storage_quantity(requests["storage"], "spec.resources.requests.storage"),
            volume_name=_str(s.get("volumeName"), "spec.volumeName"),
            storage_class_name=None if sc is None else _str(sc, "spec.storageClassName"),
            volume_mode=_volume_mode(s.get("volumeMode"), "spec.volumeMode"),
            volume_attributes_class_name=_vac_name(s.get("volumeAttributesClassName"),
                                                   "spec.volumeAttributesClassName"),
        )
        cap = _dict(st.get("capacity"), "status.capacity")
        status = PersistentVolumeClaimStatus(
            phase=_one_of(st.get("phase"), "status.phase", PVC_PHASES, default=CLAIM_PENDING),
            access_modes=_access_modes(st.get("accessModes"), "status.accessModes",
                                       required=False),
            capacity=(None if cap.get("storage") is None else
                      _storage_quantity(cap["storage"], "status.capacity.storage")),
        )
        return PersistentVolumeClaim(metadata=meta, spec=spec, status=status)
    except InputError as e:
        raise locate_error(e, "PersistentVolumeClaim", d, namespaced=True).located(
            file=source) from None


def parse_topology_selector_terms(v: Any, path: str) -> tuple[TopologySelectorTerm, ...]:
    terms = []
    for i, t in enumerate(_list(v, path)):
        tp = f"{path}[{i}]"
        t = _dict(t, tp)
        reqs = []
        ep = f"{tp}.matchLabelExpressions"
        for j, e in enumerate(_list(t.get("matchLabelExpressions"), ep)):
            e = _dict(e, f"{ep}[{j}]")
            key = _req_str(e.get("key"), f"{ep}[{j}].key")
            values = _str_list(e.get("values"), f"{ep}[{j}].values")
            if not values:
                raise _err("must specify as least one value", f"{ep}[{j}].values",
                           e.get("values"))
            reqs.append(TopologySelectorLabelRequirement(key, values))
        terms.append(TopologySelectorTerm(tuple(reqs)))
    return tuple(terms)


def parse_storage_class(d: Any, *, source: str | None = None) -> StorageClass:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
        params = _dict(d.get("parameters"), "parameters")
        return StorageClass(
            metadata=meta,
            provisioner=_req_str(d.get("provisioner"), "provisioner"),
            parameters={str(k): str(v) for k, v in params.items()},
            reclaim_policy=_one_of(d.get("reclaimPolicy"), "reclaimPolicy",
                                   (RECLAIM_RETAIN, RECLAIM_DELETE), default=RECLAIM_DELETE),
            volume_binding_mode=_one_of(d.get("volumeBindingMode"), "volumeBindingMode",
                                        BINDING_MODES, default=BINDING_IMMEDIATE),
            allowed_topologies=parse_topology_selector_terms(d.get("allowedTopologies"),
                                                             "allowedTopologies"),
            allow_volume_expansion=_bool(d.get("allowVolumeExpansion"), "allowVolumeExpansion"),
        )
    except InputError as e:
        raise locate_error(e, "StorageClass", d, namespaced=False).located(
            file=source) from None


def parse_csi_node(d: Any, *, source: str | None = None) -> CSINode:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
        s = _dict(d.get("spec"), "spec")
        drivers = []
        seen: set[str] = set()
        for i, dr in enumerate(_list(s.get("drivers"), "spec.drivers")):
            p = f"spec.drivers[{i}]"
            dr = _dict(dr, p)
            name = _req_str(dr.get("name"), f"{p}.name")
            if name in seen:
                raise _err("Duplicate value", f"{p}.name", name)
            seen.add(name)
            alloc = _dict(dr.get("allocatable"), f"{p}.allocatable")
            count = _int(alloc.get("count"), f"{p}.allocatable.count")
            if count is not None and count < 0:
                raise _err("must be greater than or equal to 0", f"{p}.allocatable.count",
                           count)
            drivers.append(CSINodeDriver(
                name=name,
                node_id=_req_str(dr.get("nodeID"), f"{p}.nodeID"),
                topology_keys=_str_list(dr.get("topologyKeys"), f"{p}.topologyKeys"),
                allocatable_count=count,
            ))
        return CSINode(metadata=meta, drivers=tuple(drivers))
    except InputError as e:
        raise locate_error(e, "CSINode", d, namespaced=False).located(file=source) from None


def parse_csi_driver(d: Any, *, source: str | None = None) -> CSIDriver:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
        s = _dict(d.get("spec"), "spec")
        return CSIDriver(
            metadata=meta,
            storage_capacity=_bool(s.get("storageCapacity"), "spec.storageCapacity"),
            prevent_pod_scheduling_if_missing=_bool(s.get("preventPodSchedulingIfMissing"),
                                                    "spec.preventPodSchedulingIfMissing"),
        )
    except InputError as e:
        raise locate_error(e, "CSIDriver", d, namespaced=False).located(file=source) from None


def parse_csi_storage_capacity(d: Any, *, source: str | None = None) -> CSIStorageCapacity:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"))
        quantities: dict[str, int | Fraction | None] = {}
        for key in ("capacity", "maximumVolumeSize"):
            v = d.get(key)
            q = None if v is None else _storage_quantity(v, key)
            if q is not None and q < 0:  # the API server's ValidateNonnegativeQuantity
                raise _err("must be greater than or equal to 0", key, v)
            quantities[key] = q
        return CSIStorageCapacity(
            metadata=meta,
            storage_class_name=_req_str(d.get("storageClassName"), "storageClassName"),
            node_topology=parse_label_selector(d.get("nodeTopology"), "nodeTopology"),
            capacity=quantities["capacity"],
            maximum_volume_size=quantities["maximumVolumeSize"],
        )
    except InputError as e:
        raise locate_error(e, "CSIStorageCapacity", d, namespaced=True).located(
            file=source) from None


STORAGE_PARSERS = {
    "PersistentVolume": parse_persistent_volume,
    "PersistentVolumeClaim": parse_persistent_volume_claim,
    "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node,
    "CSIDriver": parse_csi_driver,
    "CSIStorageCapacity": parse_csi_storage_capacity,
}


def assign_default_storage_class(pvcs: Iterable[PersistentVolumeClaim],
                                 classes: Iterable[StorageClass]) -> None:
    """The DefaultStorageClass admission plugin: a claim created without
    ``storageClassName`` (and without the beta annotation) gets the default class, the newest
    one when several are marked default (v1.26+), the first by name among equally new."""
    defaults = [sc for sc in classes if is_default_storage_class(sc)]
    if not defaults:
        return
    # the newest first; equal timestamps by name (storageutil.GetDefaultClass)
    defaults.sort(key=lambda sc: (-(sc.metadata.creation_timestamp or 0.0), sc.name))
    name = defaults[0].name
    for pvc in pvcs:
        if (pvc.spec.storage_class_name is None
                and BETA_STORAGE_CLASS_ANNOTATION not in pvc.metadata.annotations):
            pvc.spec.storage_class_name = name


# ---------------------------------------------------------------- the object store

_generation = itertools.count(1)
_current_generation = 0


def note_storage_change() -> None:
    """Invalidate every :class:`StorageIndex` (call after changing stored objects in place)."""
    global _current_generation
    _current_generation = next(_generation)


class StorageIndex:
    """Lookups over a scenario's storage objects (the informers' listers): claims by
    ``ns/name``, volumes / classes / CSINodes / CSIDrivers by name, volumes by storage class (in
    name order), CSIStorageCapacities by ``ns/name`` (in the order they were stored: upstream
    lists them in its informer's map order). An index is immutable: a change makes a new one,
    so caches may key on it."""

    __slots__ = ("capacities", "classes", "csi_drivers", "csi_nodes", "generation", "key",
                 "objects", "positions", "pvcs", "pvs", "pvs_by_class")

    def __init__(self, objects: Mapping[str, list[Any]], key: IndexKey,
                 build: bool = True) -> None:
        self.objects = objects
        self.key = key
        self.generation = _current_generation
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        self.pvs: dict[str, PersistentVolume] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: dict[str, CSIStorageCapacity] = {}
        self.pvs_by_class: dict[str, list[PersistentVolume]] = {}
        # (kind, key) -> position in objects[kind]
        self.positions: dict[tuple[str, str], int] = {}
        if not build:
            return
        by_kind: tuple[tuple[str, type[Any], dict[str, Any]], ...] = (
            ("PersistentVolumeClaim", PersistentVolumeClaim, self.pvcs),
            ("PersistentVolume", PersistentVolume, self.pvs),
            ("StorageClass", StorageClass, self.classes),
            ("CSINode", CSINode, self.csi_nodes),
            ("CSIDriver", CSIDriver, self.csi_drivers),
            ("CSIStorageCapacity", CSIStorageCapacity, self.capacities))
        for kind, cls, table in by_kind:
            for i, o in enumerate(objects.get(kind, ())):
                if isinstance(o, cls):
                    k = object_key(o)
                    table[k] = o
                    self.positions[(kind, k)] = i
        for name in sorted(self.pvs):
            pv = self.pvs[name]
            self.pvs_by_class.setdefault(pv_storage_class(pv), []).append(pv)

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def with_object(self, old: Any, new: Any, position: int, key: IndexKey) -> StorageIndex:
        """A new index with ``new`` stored (in place of ``old``, or added at ``position``)."""
        out = StorageIndex(self.objects, key, build=False)
        out.generation = self.generation
        out.pvcs, out.pvs = self.pvcs, self.pvs
        out.classes, out.csi_nodes = self.classes, self.csi_nodes
        out.csi_drivers, out.capacities = self.csi_drivers, self.capacities
        out.pvs_by_class = self.pvs_by_class
        out.positions = dict(self.positions)
        k = object_key(new)
        out.positions[(new.kind, k)] = position
        table_name = {"PersistentVolumeClaim": "pvcs", "PersistentVolume": "pvs",
                      "StorageClass": "classes", "CSINode": "csi_nodes",
                      "CSIDriver": "csi_drivers", "CSIStorageCapacity": "capacities"}[new.kind]
        table = dict(getattr(self, table_name))
        table[k] = new
        setattr(out, table_name, table)
        if new.kind == "PersistentVolume":
            by_class = dict(self.pvs_by_class)
            name = new.metadata.name
            if old is not None:
                old_cls = pv_storage_class(old)
                lst = list(by_class.get(old_cls, ()))
                i = bisect.bisect_left(lst, name, key=_pv_name)
                if i < len(lst) and lst[i].metadata.name == name:
                    del lst[i]
                if lst:
                    by_class[old_cls] = lst
                else:
                    by_class.pop(old_cls, None)
            cls = pv_storage_class(new)
            lst = list(by_class.get(cls, ()))
            i = bisect.bisect_left(lst, name, key=_pv_name)
            if i < len(lst) and lst[i].metadata.name == name:
                lst[i] = new
            else:
                lst.insert(i, new)
            by_class[cls] = lst
            out.pvs_by_class = by_class
        return out


def _pv_name(pv: PersistentVolume) -> str:
    return pv.metadata.name


IndexKey = tuple[tuple[int, int], ...]  # per storage kind: (id, length) of its object list
_INDEXES: list[StorageIndex] = []
_MAX_INDEXES = 8


def _index_key(objects: Mapping[str, list[Any]]) -> IndexKey:
    out = []
    for kind in STORAGE_KINDS:
        lst = objects.get(kind)
        out.append((id(lst), len(lst) if lst is not None else -1))
    return tuple(out)


def _cached_index(objects: Mapping[str, list[Any]], key: IndexKey) -> StorageIndex | None:
    for idx in _INDEXES:
        if idx.objects is objects and idx.key == key and idx.generation == _current_generation:
            return idx
    return None


def _remember(idx: StorageIndex) -> StorageIndex:
    _INDEXES[:] = [i for i in _INDEXES if i.objects is not idx.objects][-(_MAX_INDEXES - 1):]
    _INDEXES.append(idx)
    return idx


def storage_index(objects: Mapping[str, list[Any]] | None) -> StorageIndex:
    """The index over ``objects`` (``handle.objects``), rebuilt when a list was replaced,
    grew or shrank, or :func:`note_storage_change` was called."""
    if objects is None:
        objects = {}
    key = _index_key(objects)
    idx = _cached_index(objects, key)
    if idx is not None:
        return idx
    return _remember(StorageIndex(objects, key))


def replace_storage_object(objects: dict[str, list[Any]], new: Any) -> Any:
    """Store ``new`` in place of the object of the same kind and key (or add it); returns the
    object it replaced, or None. The index over ``objects`` is carried over, not rebuilt."""
    lst = objects.setdefault(new.kind, [])
    idx = storage_index(objects)
    k = object_key(new)
    pos = idx.positions.get((new.kind, k))
    old = None
    if pos is not None and pos < len(lst) and object_key(lst[pos]) == k:
        old = lst[pos]
        lst[pos] = new
    else:
        pos = len(lst)
        lst.append(new)
    _remember(idx.with_object(old, new, pos, _index_key(objects)))
    return old


_Obj = TypeVar("_Obj", bound=Named)


def copy_object(obj: _Obj) -> _Obj:
    """A copy that can be changed without touching ``obj`` (metadata and spec/status copied;
    frozen leaves shared)."""
    c = copy.copy(obj)
    c.metadata = copy.copy(obj.metadata)
    c.metadata.labels = dict(obj.metadata.labels)
    c.metadata.annotations = dict(obj.metadata.annotations)
    c.metadata.owner_references = list(obj.metadata.owner_references)
    for attr in ("spec", "status"):
        if hasattr(obj, attr):
            setattr(c, attr, copy.copy(getattr(obj, attr)))
    return c


# ---------------------------------------------------------------- controllers (simulation)


def controller_bind(pv: PersistentVolume, pvc: PersistentVolumeClaim
                    ) -> tuple[PersistentVolume, PersistentVolumeClaim]:
    """What the PV controller's ``bind`` does to a volume and a claim: the volume points at
    the claim (uid included) and is Bound; the claim names the volume, carries the
    bind-completed annotation (and bound-by-controller unless the user pre-bound it) and is
    Bound with the volume's capacity and access modes. Returns copies."""
    new_pv = copy_object(pv)
    ref = pv.spec.claim_ref
    if ref is None or ref.uid != pvc.metadata.uid or ref.name != pvc.name:
        new_pv.spec.claim_ref = ObjectReference(name=pvc.name, namespace=pvc.namespace,
                                                uid=pvc.metadata.uid,
                                                resource_version=pvc.metadata.resource_version)
        new_pv.metadata.annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    new_pv.status = PersistentVolumeStatus(phase=VOLUME_BOUND)
    new_pvc = copy_object(pvc)
    if pvc.spec.volume_name != pv.name:
        new_pvc.spec.volume_name = pv.name
        new_pvc.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    new_pvc.metadata.annotations[ANN_BIND_COMPLETED] = "yes"
    new_pvc.status = PersistentVolumeClaimStatus(phase=CLAIM_BOUND,
                                                 access_modes=pv.spec.access_modes,
                                                 capacity=pv.spec.capacity)
    return new_pv, new_pvc


def provision_volume(pvc: PersistentVolumeClaim, sc: StorageClass,
                     node_labels: Mapping[str, str], csi_node: CSINode | None
                     ) -> PersistentVolume:
    """The volume an external CSI provisioner creates for a claim whose selected node is the
    one with ``node_labels``: named ``pvc-<claim uid>``, the requested size, the claim's
    modes and class, pre-bound to the claim, with node affinity to the node's values of the
    driver's topology keys (from its CSINode)."""
    terms: tuple[NodeSelectorTerm, ...] | None = None
    driver = next((d for d in csi_node.drivers if d.name == sc.provisioner), None) \
        if csi_node is not None else None
    if driver is not None and driver.topology_keys:
        from kubesched.api.types import NodeSelectorRequirement

        reqs = tuple(NodeSelectorRequirement(k, "In", (node_labels[k],))
                     for k in driver.topology_keys if k in node_labels)
        if reqs:
            terms = (NodeSelectorTerm(match_expressions=reqs),)
    uid = pvc.metadata.uid.replace("/", "-")
    name = f"pvc-{uid}"
    meta = ObjectMeta(name=name, uid=name,
                      annotations={ANN_DYNAMICALLY_PROVISIONED: sc.provisioner})
    return PersistentVolume(
        metadata=meta,
        spec=PersistentVolumeSpec(
            capacity=pvc.spec.request,
            access_modes=pvc.spec.access_modes,
            storage_class_name=pvc_storage_class(pvc),
            volume_mode=pvc.spec.volume_mode,
            reclaim_policy=sc.reclaim_policy,
            claim_ref=ObjectReference(name=pvc.name, namespace=pvc.namespace,
                                      uid=pvc.metadata.uid),
            node_affinity=terms,
            source_kind="csi",
            source={"driver": sc.provisioner, "volumeHandle": name},
            volume_attributes_class_name=pvc.spec.volume_attributes_class_name,
        ),
        status=PersistentVolumeStatus(phase=VOLUME_PENDING),
    )


def pod_uses_claim(pod: Any, claim: PersistentVolumeClaim) -> bool:
    """Does ``pod`` mount ``claim`` (same namespace, a volume naming it)?"""
    return claim.namespace == pod.namespace and any(
        v.pvc_claim_name == claim.name for v in pod.spec.volumes)
