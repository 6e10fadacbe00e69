"""The API resources kubesched reads, and how each decodes into the object model."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.gangs import COSCHEDULING_GROUP, UPSTREAM_GROUP
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
from kubesched.framework.events import Resource
from kubesched.plugins.coscheduling import POD_GROUP_EVENT_RESOURCE
from kubesched.plugins.gangscheduling import POD_GROUP_RESOURCE, WORKLOAD_RESOURCE

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
    # A CRD or a gated API a cluster may not serve: a 404 is "none of them" (the informer
    # counts as synced, empty, and looks again later), not an error that holds scheduling.
    optional: bool = False
    # The ClusterEvent resource the queue is told of on a change ("" when the kind has its
    # own handling in the runner: pods, nodes, storage objects).
    event_resource: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        return api_path(self.group, self.version, self.plural, namespace, name, subresource)


def _spec(kind: str, group: str, version: str, plural: str, namespaced: bool,
          decode: Callable[[dict[str, Any]], Any] | None = None,
          field_selector: str = "", *, optional: bool = False,
          event_resource: str = "") -> ResourceSpec:
    return ResourceSpec(kind, group, version, plural, namespaced,
                        decode or _generic(kind, namespaced), field_selector, optional,
                        event_resource)


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
    _spec("CSIDriver", "storage.k8s.io", "v1", "csidrivers", False),
    _spec("CSIStorageCapacity", "storage.k8s.io", "v1", "csistoragecapacities", True),
    _spec("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True),
    _spec("Service", "", "v1", "services", True),
    _spec("ReplicaSet", "apps", "v1", "replicasets", True),
    _spec("ReplicationController", "", "v1", "replicationcontrollers", True),
    _spec("StatefulSet", "apps", "v1", "statefulsets", True),
    PODS,
)

BY_KIND = {r.kind: r for r in WATCHED}

#: scheduler-plugins' PodGroup CRD (Coscheduling), whatever the release
COSCHEDULING_POD_GROUPS = _spec(
    "PodGroup", COSCHEDULING_GROUP, "v1alpha1", "podgroups", True, optional=True,
    event_resource=POD_GROUP_EVENT_RESOURCE)

# kind -> (plural, namespaced, the queue's event resource, optional): the release-versioned
# kinds the newer plugins read. DRA's are GA from 1.34 but older releases and DeviceTaintRule
# (alpha, gated) may not be served, so all are optional.
_VERSIONED: dict[str, tuple[str, str, bool, str]] = {
    "Workload": (UPSTREAM_GROUP, "workloads", True, WORKLOAD_RESOURCE),
    "PodGroup": (UPSTREAM_GROUP, "podgroups", True, POD_GROUP_RESOURCE),
    "DeviceClass": ("resource.k8s.io", "deviceclasses", False, Resource.DEVICE_CLASS),
    "ResourceSlice": ("resource.k8s.io", "resourceslices", False, Resource.RESOURCE_SLICE),
    "ResourceClaim": ("resource.k8s.io", "resourceclaims", True, Resource.RESOURCE_CLAIM),
    "DeviceTaintRule": ("resource.k8s.io", "devicetaintrules", False, ""),
    # read by no plugin (the resourceclaim controller makes the claims); snapshot only
    "ResourceClaimTemplate": ("resource.k8s.io", "resourceclaimtemplates", True, ""),
}
_SNAPSHOT_ONLY = frozenset({"ResourceClaimTemplate"})


def _version_rank(version: str) -> tuple[int, int, int]:
    """Kubernetes' version priority: GA over beta over alpha, then the higher number."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if m is None:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1}.get(m.group(2) or "", 2)
    return (stage, int(m.group(1)), int(m.group(3) or 0))


def served_version(kind: str, group: str, release: str) -> str | None:
    """The version of ``group``'s ``kind`` the release serves that a client would prefer
    (its OpenAPI: GA, else the newest beta, else the newest alpha); None if not served."""
    from kubesched.api.schema import release_schema

    versions = [av.rpartition("/")[2] for av in release_schema(release).served.get(kind, {})
                if av.rpartition("/")[0] == group]
    return max(versions, key=_version_rank) if versions else None


def versioned_resources(release: str, *, snapshot: bool = False) -> tuple[ResourceSpec, ...]:
    """The gang and DRA kinds at the versions ``release`` serves (scheduler-plugins' PodGroup
    at its only version)."""
    out = [COSCHEDULING_POD_GROUPS]
    for kind, (group, plural, namespaced, event) in _VERSIONED.items():
        if kind in _SNAPSHOT_ONLY and not snapshot:
            continue
        version = served_version(kind, group, release)
        if version is not None:
            out.append(_spec(kind, group, version, plural, namespaced, optional=True,
                             event_resource=event))
    return tuple(out)


def snapshot_alternatives() -> list[tuple[ResourceSpec, ...]]:
    """For ``snapshot``, which knows no release: each gang and DRA kind at every version some
    supported release serves, preferred first (the first one the cluster serves is read)."""
    from kubesched.api.schema import release_schema, schema_releases

    out: list[tuple[ResourceSpec, ...]] = [(COSCHEDULING_POD_GROUPS,)]
    for kind, (group, plural, namespaced, event) in _VERSIONED.items():
        versions = {av.rpartition("/")[2] for r in schema_releases()
                    for av in release_schema(r).served.get(kind, {})
                    if av.rpartition("/")[0] == group}
        out.append(tuple(_spec(kind, group, v, plural, namespaced, optional=True,
                               event_resource=event)
                         for v in sorted(versions, key=_version_rank, reverse=True)))
    return out


def watched(release: str) -> tuple[ResourceSpec, ...]:
    """What ``kubesched run`` watches for ``release``: ``WATCHED`` with the versioned kinds
    before the pods (a pod's claims and gang are then known when it arrives)."""
    return (*WATCHED[:-1], *versioned_resources(release), PODS)

EVENTS = _spec("Event", "events.k8s.io", "v1", "events", True)
LEASES = _spec("Lease", "coordination.k8s.io", "v1", "leases", True)
