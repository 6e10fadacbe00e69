"""``kind: NodeGroup`` (``kubesched.io/v1alpha1``): a group of identical nodes an autoscaler
may add or remove — cluster-autoscaler's NodeGroup, with the template node it builds from
the cloud provider's instance type written out.

Not a Kubernetes object: upstream's OpenAPI does not know the kind, so it is registered here
with its own schema (the template's parts use upstream's Node schema) and validator. The
autoscaler (``kubesched.autoscaler``) reads it; docs/autoscaling.md describes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kubesched.api.parse import parse_node
from kubesched.api.schema import KUBESCHED_API_VERSION, own_kind_schema, register_kind
from kubesched.api.types import Node, ObjectMeta
from kubesched.api.validation.errors import invalid, required
from kubesched.api.validation.meta import validate_meta
from kubesched.api.validation.objects import validate_node
from kubesched.api.validation.registry import register_validator
from kubesched.errors import InputError

KIND = "NodeGroup"
API_VERSION = KUBESCHED_API_VERSION
#: the label every node of a group carries (its value: the group's name); the nodes of the
#: scenario that carry it count towards the group's size
GROUP_LABEL = "kubesched.io/node-group"
HOSTNAME_LABEL = "kubernetes.io/hostname"

_INT32 = {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}

SCHEMA: dict[str, Any] = own_kind_schema(KIND, ["metadata", "spec"], {
    "spec": {
        "type": "object",
        "required": ["template", "maxSize"],
        "additionalProperties": False,
        "properties": {
            "template": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "metadata": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"labels": {
                            "type": "object",
                            "additionalProperties": {"type": "string"}}},
                    },
                    "spec": {"$ref": "#/$defs/io.k8s.api.core.v1.NodeSpec"},
                    "status": {"$ref": "#/$defs/io.k8s.api.core.v1.NodeStatus"},
                },
            },
            "minSize": _INT32,
            "maxSize": _INT32,
            "priority": {"type": "integer"},
            "price": {"type": "number"},
            "provisioningDelaySeconds": {"type": "number"},
        },
    },
})


@dataclass(frozen=True, slots=True)
class NodeGroup:
    metadata: ObjectMeta
    template: Node  # named "<group>-template", labelled with the group
    min_size: int
    max_size: int
    priority: int = 0
    price: float = 0.0  # per node-hour
    provisioning_delay: float = 0.0  # seconds from the scale-up to the node being ready

    kind = "NodeGroup"

    @property
    def name(self) -> str:
        return self.metadata.name

    def node(self, name: str) -> Node:
        """A new node of the group: the template, named ``name`` (its hostname label too, as
        cluster-autoscaler sanitizes a template node)."""
        t = self.template
        labels = {**t.metadata.labels, HOSTNAME_LABEL: name}
        return replace(t, metadata=replace(t.metadata, name=name, uid=f"kubesched-node:{name}",
                                           labels=labels))


def _template_doc(name: str, template: Mapping[str, Any]) -> dict[str, Any]:
    md = template.get("metadata") or {}
    labels = {**(md.get("labels") or {}), GROUP_LABEL: name,
              HOSTNAME_LABEL: f"{name}-template"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"{name}-template", "labels": labels},
            "spec": template.get("spec") or {}, "status": template.get("status") or {}}


def _number(spec: Mapping[str, Any], key: str) -> float:
    v = spec.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        invalid(f"spec.{key}", v, "must be a non-negative number")
    return float(v)


def validate_node_group(doc: Mapping[str, Any]) -> None:
    """The template as the API server validates a Node (its errors named under
    ``spec.template``), the sizes' order, and non-negative price and delay."""
    validate_meta(doc.get("metadata"), namespaced=False)
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        required("spec")
    template = spec.get("template")
    if not isinstance(template, Mapping):
        required("spec.template")
    name = (doc.get("metadata") or {}).get("name", "")
    try:
        validate_node(_template_doc(name, template))
    except InputError as e:
        raise InputError(e.message, field=f"spec.template.{e.field}" if e.field
                         else "spec.template", value=e.value) from None
    if "maxSize" not in spec:
        required("spec.maxSize")
    min_size, max_size = spec.get("minSize", 0), spec["maxSize"]
    if min_size > max_size:
        invalid("spec.minSize", min_size, f"must be less than or equal to maxSize ({max_size})")
    _number(spec, "price")
    _number(spec, "provisioningDelaySeconds")


def parse_node_group(doc: Mapping[str, Any], *, source: str | None = None) -> NodeGroup:
    """A validated NodeGroup document as a ``NodeGroup``."""
    spec = doc["spec"]
    name = doc["metadata"]["name"]
    try:
        template = parse_node(_template_doc(name, spec["template"]))
    except InputError as e:
        raise InputError(e.message, file=source, obj=f"{KIND} {name}",
                         field=f"spec.template.{e.field}" if e.field else "spec.template",
                         value=e.value) from None
    return NodeGroup(metadata=ObjectMeta(name=name,
                                         labels=dict(doc["metadata"].get("labels") or {})),
                     template=template, min_size=int(spec.get("minSize", 0)),
                     max_size=int(spec["maxSize"]), priority=int(spec.get("priority", 0)),
                     price=_number(spec, "price"),
                     provisioning_delay=_number(spec, "provisioningDelaySeconds"))


register_kind(KIND, {API_VERSION: SCHEMA})
register_validator(KIND, validate_node_group)
