"""``kind: Fault`` (``kubesched.io/v1alpha1``): something going wrong in the simulated cluster
at a virtual time — a node deleted or not ready, bindings failing, a pod deleted.

A simulation directive, not a Kubernetes object: upstream's OpenAPI does not know the kind,
so it is registered here with its own schema (``--strict`` accepts it) and validator. The
simulator (``backends.sim``) carries the faults out; docs/faults.md describes each action.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.schema import KUBESCHED_API_VERSION, own_kind_schema, register_kind
from kubesched.api.validation.errors import forbidden, invalid, required, unsupported
from kubesched.api.validation.meta import validate_meta
from kubesched.api.validation.registry import register_validator

KIND = "Fault"
API_VERSION = KUBESCHED_API_VERSION
DEFAULT_NAMESPACE = "default"

DELETE_NODE = "DeleteNode"
NODE_NOT_READY = "NodeNotReady"
NODE_READY = "NodeReady"
BIND_ERROR = "BindError"
BIND_CONFLICT = "BindConflict"
DELETE_POD = "DeletePod"
DEVICE_CONDITION = "DeviceCondition"
ACTIONS = (DELETE_NODE, NODE_NOT_READY, NODE_READY, BIND_ERROR, BIND_CONFLICT, DELETE_POD,
           DEVICE_CONDITION)
CONDITION_STATUSES = ("True", "False", "Unknown")

# spec fields each action reads (``at`` and ``action`` go with every one)
_FIELDS: dict[str, frozenset[str]] = {
    DELETE_NODE: frozenset({"node"}),
    NODE_NOT_READY: frozenset({"node"}),
    NODE_READY: frozenset({"node"}),
    BIND_ERROR: frozenset({"node", "pod", "count"}),
    BIND_CONFLICT: frozenset({"node", "pod", "count", "boundTo"}),
    DELETE_POD: frozenset({"pod", "duringBinding"}),
    DEVICE_CONDITION: frozenset({"device", "condition", "status", "reason", "message"}),
}
_TARGETS = ("node", "pod", "count", "boundTo", "duringBinding", "device", "condition", "status",
            "reason", "message")

SCHEMA: dict[str, Any] = own_kind_schema(KIND, ["metadata", "spec"], {
    "spec": {
        "type": "object",
        "required": ["action"],
        "additionalProperties": False,
        "properties": {
            "at": {"type": "number", "minimum": 0},
            "action": {"type": "string", "enum": list(ACTIONS)},
            "node": {"type": "string", "minLength": 1},
            "pod": {"type": "string", "minLength": 1},
            "count": {"type": "integer", "minimum": 1},
            "boundTo": {"type": "string", "minLength": 1},
            "duringBinding": {"type": "boolean"},
            "device": {"type": "string", "minLength": 1},
            "condition": {"type": "string", "minLength": 1},
            "status": {"type": "string", "enum": list(CONDITION_STATUSES)},
            "reason": {"type": "string"},
            "message": {"type": "string"},
        },
    },
})


@dataclass(frozen=True, slots=True)
class Fault:
    name: str
    at: float
    action: str
    node: str | None = None
    pod: str | None = None  # "namespace/name"
    count: int = 1
    bound_to: str | None = None
    during_binding: bool = False
    # DeviceCondition: the device ("driver/pool/device") and the condition its driver sets
    device: str | None = None
    condition: str | None = None
    status: str = "True"
    reason: str = ""
    message: str = ""
    source: str = ""  # the file it came from, for messages

    @property
    def ref(self) -> str:
        return f"{KIND} {self.name}"


def pod_key(ref: str) -> str:
    """``spec.pod`` as a pod key: ``NAME`` is in namespace default."""
    return ref if "/" in ref else f"{DEFAULT_NAMESPACE}/{ref}"


def validate_fault(doc: Mapping[str, Any]) -> None:
    """What the schema's types leave open: the action, the fields it reads, their values."""
    validate_meta(doc.get("metadata"), namespaced=False)
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        required("spec")
    action = spec.get("action")
    if not action:
        required("spec.action")
    if action not in ACTIONS:
        unsupported("spec.action", action, ACTIONS)
    at = spec.get("at", 0)
    if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at) \
            or at < 0:
        invalid("spec.at", at, "must be a non-negative number of seconds")
    allowed = _FIELDS[action]
    for f in _TARGETS:
        if f in spec and f not in allowed:
            forbidden(f"spec.{f}", f"not used by action {action}", spec[f])
    for f in ("node", "pod", "boundTo"):
        v = spec.get(f)
        if f in spec and (not isinstance(v, str) or not v):
            invalid(f"spec.{f}", v, "must be a non-empty name")
    if "pod" in spec and spec["pod"].count("/") > 1:
        invalid("spec.pod", spec["pod"], "must be NAME or NAMESPACE/NAME")
    if action in (DELETE_NODE, NODE_NOT_READY, NODE_READY) and "node" not in spec:
        required("spec.node", f"action {action} names a node")
    if action == DELETE_POD and "pod" not in spec:
        required("spec.pod", f"action {action} names a pod")
    if action in (BIND_ERROR, BIND_CONFLICT) and "pod" not in spec and "node" not in spec:
        required("spec.pod", f"action {action} names a pod, a node or both")
    if action == DEVICE_CONDITION:
        for f in ("device", "condition"):
            if not isinstance(spec.get(f), str) or not spec[f]:
                required(f"spec.{f}", f"action {action} names a device and a condition type")
        if len(spec["device"].split("/")) != 3 or not all(spec["device"].split("/")):
            invalid("spec.device", spec["device"], "must be DRIVER/POOL/DEVICE")
    count = spec.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        invalid("spec.count", count, "must be a positive integer")


def parse_fault(doc: Mapping[str, Any], source: str = "") -> Fault:
    """A validated Fault document as a ``Fault``."""
    spec = doc["spec"]
    pod = spec.get("pod")
    return Fault(name=doc["metadata"]["name"], at=float(spec.get("at", 0)),
                 action=spec["action"], node=spec.get("node"),
                 pod=pod_key(pod) if pod else None, count=int(spec.get("count", 1)),
                 bound_to=spec.get("boundTo"),
                 during_binding=bool(spec.get("duringBinding", False)),
                 device=spec.get("device"), condition=spec.get("condition"),
                 status=spec.get("status", "True"), reason=spec.get("reason", ""),
                 message=spec.get("message", ""), source=source)


register_kind(KIND, {API_VERSION: SCHEMA})
register_validator(KIND, validate_fault)
