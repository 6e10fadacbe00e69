"""Builders for the gang plugins' unit tests (scheduler-plugins' and upstream's test tables)."""

from __future__ import annotations

from typing import Any

from kubesched.api.parse import parse_meta, parse_node, parse_pod
from kubesched.api.types import GenericObject, Node, Pod
from kubesched.config.features import parse_feature_gates
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import snapshot_from_nodes

LABEL = "scheduling.x-k8s.io/pod-group"


class FakeClock:
    """A real-time-like clock (not the simulator's): creationTimestamps count as they are."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def pod(name: str, ns: str = "default", *, group: str | None = None, node: str = "",
        priority: int | None = None, cpu: str | None = None, gates: tuple[str, ...] = (),
        spec: dict[str, Any] | None = None) -> Pod:
    labels = {LABEL: group} if group else {}
    s: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}], **(spec or {})}
    if cpu:
        s["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    if node:
        s["nodeName"] = node
    if priority is not None:
        s["priority"] = priority
    if gates:
        s["schedulingGates"] = [{"name": g} for g in gates]
    return parse_pod({"metadata": {"name": name, "namespace": ns, "uid": name,
                                   "labels": labels}, "spec": s})


def node(name: str, cpu: str) -> Node:
    return parse_node({"metadata": {"name": name},
                       "status": {"capacity": {"cpu": cpu, "pods": "110"}}})


def obj(kind: str, api_version: str, name: str, ns: str = "default",
        spec: dict[str, Any] | None = None, created: str | None = None) -> GenericObject:
    md: dict[str, Any] = {"name": name, "namespace": ns}
    if created:
        md["creationTimestamp"] = created
    raw = {"apiVersion": api_version, "kind": kind, "metadata": md, "spec": spec or {}}
    return GenericObject(kind=kind, metadata=parse_meta(md), raw=raw)


def cosched_group(name: str, ns: str = "default", min_member: int = 0,
                  min_resources: dict[str, str] | None = None,
                  created: str | None = None) -> GenericObject:
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    return obj("PodGroup", "scheduling.x-k8s.io/v1alpha1", name, ns, spec, created)


def handle(pods: list[Pod], objects: list[GenericObject], *, version: str = "1.35",
           clock: Any = None) -> Handle:
    h = Handle(clock=clock or FakeClock(),
               features=parse_feature_gates([], version))
    by_kind: dict[str, list[Any]] = {}
    for o in objects:
        by_kind.setdefault(o.kind, []).append(o)
    h.objects = by_kind
    h.pod_lister = lambda: list(pods)
    h.activated = []  # type: ignore[attr-defined]
    h.activator = lambda ps: h.activated.extend(p.name for p in ps)  # type: ignore[attr-defined]
    return h


def snapshot(nodes: list[Node], pods: list[Pod]) -> Snapshot:
    return snapshot_from_nodes(nodes, [p for p in pods if p.spec.node_name])
