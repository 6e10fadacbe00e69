"""The API resources kubesched reads, and how each decodes into the object model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.parse import (
    locate_error,
    parse_meta,
    parse_namespace,
    parse_node,
    parse_pod,
    parse_priority_class,
)
from kubesched.api.types import GenericObject
from kubesched.backends.kube.client import api_path
from kubesched.errors import InputError

# upstream's scheduler lists pods without the terminal ones
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


def _typed_parser(kind: str) -> Callable[..., Any] | None:
    """The typed parser the scenario loader uses for ``kind`` (storage objects, PDBs), if
    any: the kube backend decodes every object exactly as a scenario file's."""
    parsers: dict[str, Any] = {}
    try:
        from kubesched.api.storage import STORAGE_PARSERS
        parsers.update(STORAGE_PARSERS)
    except ImportError:  # pragma: no cover - trees without typed storage objects
        pass
    from kubesched.api import scenario
    parsers.update(getattr(scenario, "TYPED_PARSERS", {}))
    return parsers.get(kind)


def _generic(kind: str, namespaced: bool) -> Callable[[dict[str, Any]], Any]:
    typed = _typed_parser(kind)
    if typed is not None:
        return lambda d: typed(d)

    def decode(d: dict[str, Any]) -> GenericObject:
        try:
            meta = parse_meta(d.get("metadata"), namespaced=namespaced)
        except InputError as e:
            raise locate_error(e, kind, d, namespaced) from None
        md = d.get("metadata")
        if isinstance(md, dict) and "managedFields" in md:
            d = {**d, "metadata": {k: v for k, v in md.items() if k != "managedFields"}}
        return GenericObject(kind=kind, metadata=meta, raw=d)
    return decode


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool
    decode: Callable[[dict[str, Any]], Any]
    field_selector: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        return api_path(self.group, self.version, self.plural, namespace, name, subresource)


def _spec(kind: str, group: str, version: str, plural: str, namespaced: bool,
          decode: Callable[[dict[str, Any]], Any] | None = None,
          field_selector: str = "") -> ResourceSpec:
    return ResourceSpec(kind, group, version, plural, namespaced,
                        decode or _generic(kind, namespaced), field_selector)


PODS = _spec("Pod", "", "v1", "pods", True, parse_pod, POD_FIELD_SELECTOR)
NODES = _spec("Node", "", "v1", "nodes", False, parse_node)
NAMESPACES = _spec("Namespace", "", "v1", "namespaces", False, parse_namespace)
PRIORITY_CLASSES = _spec("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False,
                         parse_priority_class)

#: Everything the scheduler watches, in the order the informers start (nodes before pods,
#: so that the first pods find their nodes).
WATCHED: tuple[ResourceSpec, ...] = (
    NODES,
    NAMESPACES,
    PRIORITY_CLASSES,
    _spec("PersistentVolume", "", "v1", "persistentvolumes", False),
    _spec("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True),
    _spec("StorageClass", "storage.k8s.io", "v1", "storageclasses", False),
    _spec("CSINode", "storage.k8s.io", "v1", "csinodes", False),
    _spec("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True),
    _spec("Service", "", "v1", "services", True),
    _spec("ReplicaSet", "apps", "v1", "replicasets", True),
    _spec("ReplicationController", "", "v1", "replicationcontrollers", True),
    _spec("StatefulSet", "apps", "v1", "statefulsets", True),
    PODS,
)

BY_KIND = {r.kind: r for r in WATCHED}

EVENTS = _spec("Event", "events.k8s.io", "v1", "events", True)
LEASES = _spec("Lease", "coordination.k8s.io", "v1", "leases", True)
