"""Gangs: the objects that group pods to be scheduled all together or not at all.

Two APIs, read by two plugins (docs/gangs.md):

* scheduler-plugins' ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``, a CRD), joined by the
  pod label ``scheduling.x-k8s.io/pod-group``; read by Coscheduling whatever the release.
  Upstream's OpenAPI does not know it, so its schema and validator are registered here.
* upstream's Workload API (``scheduling.k8s.io``), read by GangScheduling: in v1.35 a
  ``Workload`` whose ``spec.podGroups[].policy.gang.minCount`` a pod joins through
  ``spec.workloadRef``; from v1.36 a ``PodGroup`` object (``spec.schedulingPolicy.gang``) a
  pod joins through ``spec.schedulingGroup.podGroupName``. Each release's OpenAPI already
  serves those kinds and pod fields at its own versions, so only a validator is added.

Both kinds are kept raw in ``Scenario.objects`` / ``handle.objects`` under their kind name
(``PodGroup`` holds the objects of both groups); the views below read them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.parse import parse_resource_list
from kubesched.api.schema import register_kind
from kubesched.api.types import GenericObject, Pod, Resources
from kubesched.api.unmodelled import name_list
from kubesched.api.validation.errors import invalid, required
from kubesched.api.validation.meta import validate_meta
from kubesched.api.validation.registry import register_validator
from kubesched.errors import InputError

POD_GROUP_KIND = "PodGroup"
WORKLOAD_KIND = "Workload"

COSCHEDULING_GROUP = "scheduling.x-k8s.io"
COSCHEDULING_API_VERSION = f"{COSCHEDULING_GROUP}/v1alpha1"
#: scheduler-plugins' PodGroupLabel: pods with the same value belong to one PodGroup
POD_GROUP_LABEL = f"{COSCHEDULING_GROUP}/pod-group"

UPSTREAM_GROUP = "scheduling.k8s.io"

_QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}],
             "x-kubernetes-int-or-string": True}

# The CRD's structural schema (apis/scheduling/v1alpha1/types.go, kubebuilder markers).
COSCHEDULING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "minMember": {"type": "integer", "format": "int32", "minimum": 1},
                "minResources": {"type": "object", "additionalProperties": _QUANTITY},
                "scheduleTimeoutSeconds": {"type": "integer", "format": "int32"},
            },
        },
        "status": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "phase": {"type": "string"},
                "occupiedBy": {"type": "string"},
                "running": {"type": "integer", "format": "int32"},
                "succeeded": {"type": "integer", "format": "int32"},
                "failed": {"type": "integer", "format": "int32"},
                "scheduleStartTime": {"type": "string", "format": "date-time"},
            },
        },
    },
}


def api_group(obj: GenericObject | Mapping[str, Any]) -> str:
    raw = obj.raw if isinstance(obj, GenericObject) else obj
    api_version = raw.get("apiVersion")
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else ""


# ---------------------------------------------------------------- validation


def validate_pod_group(doc: Mapping[str, Any]) -> None:
    """Both PodGroup kinds: scheduler-plugins' CRD validation, or upstream's."""
    validate_meta(doc.get("metadata"), namespaced=True)
    spec = doc.get("spec") or {}
    if api_group(doc) == COSCHEDULING_GROUP:
        mm = spec.get("minMember", 0)
        if not isinstance(mm, int) or mm < 1:
            # the CRD's ``Minimum=1`` marker, in the API server's words
            invalid("spec.minMember", mm, "spec.minMember in body should be greater than or "
                    "equal to 1")
        for name, q in (spec.get("minResources") or {}).items():
            _check_quantity(q, f"spec.minResources[{name}]")
        return
    _validate_policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy")


def validate_workload(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=True)
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        required("spec")
    # v1alpha1 (v1.35) lists podGroups with a ``policy``; later versions podGroupTemplates
    # with a ``schedulingPolicy``
    for field, policy in (("podGroups", "policy"), ("podGroupTemplates", "schedulingPolicy")):
        for i, pg in enumerate(spec.get(field) or ()):
            path = f"spec.{field}[{i}]"
            if not pg.get("name"):
                required(f"{path}.name")
            _validate_policy(pg.get(policy), f"{path}.{policy}")


def _validate_policy(policy: Any, path: str) -> None:
    if not isinstance(policy, Mapping) or ("basic" in policy) == ("gang" in policy):
        required(path, "exactly one of `basic`, `gang` is required")
    gang = policy.get("gang")
    if gang is not None:
        mc = gang.get("minCount")
        if not isinstance(mc, int) or mc <= 0:
            invalid(f"{path}.gang.minCount", mc, "must be greater than zero")


def _check_quantity(q: Any, path: str) -> None:
    try:
        parse_resource_list({"x": q}, path)
    except InputError as e:
        invalid(path, q, e.message)


register_kind(POD_GROUP_KIND, {COSCHEDULING_API_VERSION: COSCHEDULING_SCHEMA})
register_validator(POD_GROUP_KIND, validate_pod_group)
register_validator(WORKLOAD_KIND, validate_workload)


# ---------------------------------------------------------------- views


@dataclass(frozen=True, slots=True)
class CoschedulingGroup:
    """scheduler-plugins' PodGroup, as Coscheduling reads it."""

    namespace: str
    name: str
    min_member: int
    min_resources: Resources | None
    schedule_timeout_seconds: int | None
    creation_timestamp: float | None

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class GangPolicy:
    """An upstream pod group's scheduling policy: ``min_count`` for a gang, None for basic."""

    min_count: int | None


class _Index:
    """Objects of one kind by (namespace, name), rebuilt when the list changed."""

    def __init__(self) -> None:
        self._ids: tuple[int, ...] | None = None
        self.by_key: dict[tuple[str, str, str], GenericObject] = {}

    def get(self, objects: Sequence[GenericObject]) -> dict[tuple[str, str, str], GenericObject]:
        ids = tuple(map(id, objects))
        if ids != self._ids:
            self._ids = ids
            self.by_key = {(api_group(o), o.metadata.namespace, o.metadata.name): o
                           for o in objects}
        return self.by_key


class GangObjects:
    """Look-ups of the gang objects in ``handle.objects`` (one per plugin instance)."""

    def __init__(self) -> None:
        self._pod_groups = _Index()
        self._workloads = _Index()
        self._cosched: dict[int, CoschedulingGroup] = {}

    def coscheduling_group(self, objects: Mapping[str, list[Any]], namespace: str,
                           name: str) -> CoschedulingGroup | None:
        obj = self._pod_groups.get(objects.get(POD_GROUP_KIND, ())).get(
            (COSCHEDULING_GROUP, namespace, name))
        if obj is None:
            return None
        view = self._cosched.get(id(obj))
        if view is None or view.name != name:
            spec = obj.raw.get("spec") or {}
            mr = spec.get("minResources")
            view = CoschedulingGroup(
                namespace=namespace, name=name, min_member=int(spec.get("minMember", 0)),
                min_resources=None if mr is None else parse_resource_list(
                    mr, "spec.minResources"),
                schedule_timeout_seconds=spec.get("scheduleTimeoutSeconds"),
                creation_timestamp=obj.metadata.creation_timestamp)
            self._cosched[id(obj)] = view
        return view

    def workload(self, objects: Mapping[str, list[Any]], namespace: str,
                 name: str) -> GenericObject | None:
        return self._workloads.get(objects.get(WORKLOAD_KIND, ())).get(
            (UPSTREAM_GROUP, namespace, name))

    def upstream_pod_group(self, objects: Mapping[str, list[Any]], namespace: str,
                           name: str) -> GenericObject | None:
        return self._pod_groups.get(objects.get(POD_GROUP_KIND, ())).get(
            (UPSTREAM_GROUP, namespace, name))


def coscheduling_label(pod: Pod) -> str:
    """``util.GetPodGroupLabel``: the pod's PodGroup name, or ""."""
    return pod.metadata.labels.get(POD_GROUP_LABEL, "")


def coscheduling_full_name(pod: Pod) -> str:
    """``util.GetPodGroupFullName``: "namespace/name", or "" for a pod in no group."""
    name = coscheduling_label(pod)
    return f"{pod.namespace}/{name}" if name else ""


def workload_pod_group_policy(workload: GenericObject, pod_group: str) -> GangPolicy | None:
    """v1.35's ``podGroupPolicy``: the policy of ``pod_group`` in the Workload, None when
    the Workload has no such pod group."""
    for pg in (workload.raw.get("spec") or {}).get("podGroups") or ():
        if pg.get("name") == pod_group:
            return _policy(pg.get("policy"))
    return None


def pod_group_policy(pod_group: GenericObject) -> GangPolicy:
    """v1.36+: a PodGroup object's ``spec.schedulingPolicy``."""
    return _policy((pod_group.raw.get("spec") or {}).get("schedulingPolicy"))


def _policy(policy: Any) -> GangPolicy:
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    return GangPolicy(int(gang.get("minCount", 0)) if isinstance(gang, Mapping) else None)


def coscheduling_off(objects: Mapping[str, Sequence[Any]], enabled: bool) -> list[str]:
    """The warning for scheduler-plugins' PodGroups when no profile enables Coscheduling
    (which alone reads them): their pods are scheduled one by one, as a cluster without the
    plugin would."""
    refs = [f"{o.metadata.namespace}/{o.metadata.name}" for o in objects.get(POD_GROUP_KIND, ())
            if api_group(o) == COSCHEDULING_GROUP]
    if not refs or enabled:
        return []
    return [f"PodGroup {name_list(refs)} ({COSCHEDULING_GROUP}): no profile enables "
            "Coscheduling; their pods are scheduled one by one, not as a gang"]
