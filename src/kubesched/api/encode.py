"""Pods and nodes back to Kubernetes JSON (what an extender receives as ``v1.Pod`` /
``v1.Node``), from the lean model: the fields scheduling reads, with Go's ``omitempty``
behaviour (empty fields left out)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from kubesched.api.dra.types import ResourceClaim
from kubesched.api.quantity import format_quantity
from kubesched.api.storage import PersistentVolume
from kubesched.api.types import (
    CPU,
    Affinity,
    Container,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Resources,
)


def _time(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def quantities(res: Resources) -> dict[str, str]:
    """The model's integers as quantity strings (cpu is held in milli-cores)."""
    return {k: (f"{v}m" if k == CPU else str(v)) for k, v in res.items()}


def _prune(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (None, "", [], {}, ())}


def encode_meta(m: ObjectMeta) -> dict[str, Any]:
    return _prune({
        "name": m.name,
        "namespace": m.namespace,
        "uid": m.uid,
        "resourceVersion": m.resource_version,
        "generation": m.generation or None,
        "creationTimestamp": _time(m.creation_timestamp),
        "deletionTimestamp": _time(m.deletion_timestamp),
        "finalizers": list(m.finalizers),
        "labels": dict(m.labels),
        "annotations": dict(m.annotations),
        "ownerReferences": [_prune({"kind": o.kind,
                                    "name": o.name, "uid": o.uid,
                                    "controller": o.controller or None})
                            for o in m.owner_references],
    })


def _container(c: Container) -> dict[str, Any]:
    return _prune({
        "name": c.name,
        "image": c.image,
        "resources": _prune({"requests": quantities(c.requests),
                             "limits": quantities(c.limits)}),
        "ports": [_prune({"containerPort": p.container_port, "hostPort": p.host_port or None,
                          "protocol": p.protocol, "hostIP": p.host_ip}) for p in c.ports],
        "restartPolicy": c.restart_policy,
    })


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _generic(obj: Any) -> Any:
    """Dataclasses whose field names are the API's in snake case."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _prune({_camel(f.name): _generic(getattr(obj, f.name))
                       for f in dataclasses.fields(obj)})
    if isinstance(obj, tuple | list):
        return [_generic(x) for x in obj]
    return obj


def _selector(s: LabelSelector | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {k: v for k, v in (
        ("matchLabels", dict(s.match_labels)),
        ("matchExpressions", [_generic(e) for e in s.match_expressions])) if v}


def _term(t: NodeSelectorTerm) -> dict[str, Any]:
    return _generic(t)  # type: ignore[no-any-return]  # a dict for a dataclass


def _node_affinity(a: NodeAffinity) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if a.required is not None:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [_term(t) for t in a.required]}
    if a.preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": p.weight, "preference": _term(p.preference)} for p in a.preferred]
    return out


def _pod_term(t: PodAffinityTerm) -> dict[str, Any]:
    return _prune({
        "labelSelector": _selector(t.label_selector),
        "topologyKey": t.topology_key,
        "namespaces": list(t.namespaces),
        "namespaceSelector": _selector(t.namespace_selector),
        "matchLabelKeys": list(t.match_label_keys),
        "mismatchLabelKeys": list(t.mismatch_label_keys),
    })


def _pod_affinity(a: PodAffinity) -> dict[str, Any]:
    return _prune({
        "requiredDuringSchedulingIgnoredDuringExecution": [_pod_term(t) for t in a.required],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w.weight, "podAffinityTerm": _pod_term(w.term)} for w in a.preferred],
    })


def _affinity(a: Affinity | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return _prune({
        "nodeAffinity": _node_affinity(a.node_affinity) if a.node_affinity else None,
        "podAffinity": _pod_affinity(a.pod_affinity) if a.pod_affinity else None,
        "podAntiAffinity": _pod_affinity(a.pod_anti_affinity) if a.pod_anti_affinity else None,
    })


def encode_pod(pod: Pod) -> dict[str, Any]:
    s = pod.spec
    spec = _prune({
        "nodeName": s.node_name,
        "schedulerName": s.scheduler_name,
        "priority": s.priority,
        "priorityClassName": s.priority_class_name,
        "preemptionPolicy": s.preemption_policy,
        "initContainers": [_container(c) for c in s.init_containers],
        "containers": [_container(c) for c in s.containers],
        "overhead": quantities(s.overhead),
        "resources": (_prune({"requests": quantities(s.resources.requests),
                              "limits": quantities(s.resources.limits)})
                      if s.resources else None),
        "nodeSelector": dict(s.node_selector),
        "affinity": _affinity(s.affinity),
        "tolerations": [_generic(t) for t in s.tolerations],
        "topologySpreadConstraints": [
            _prune({**_generic(c), "labelSelector": _selector(c.label_selector)})
            for c in s.topology_spread_constraints],
        "volumes": [_prune({"name": v.name, **(v.source or {}),
                            "persistentVolumeClaim": (
                                _prune({"claimName": v.pvc_claim_name,
                                        "readOnly": v.read_only or None})
                                if v.pvc_claim_name else None)})
                    for v in s.volumes],
        "schedulingGates": [{"name": g} for g in s.scheduling_gates],
        "terminationGracePeriodSeconds": s.termination_grace_period_seconds,
    })
    st = pod.status
    status = _prune({
        "phase": st.phase,
        "nominatedNodeName": st.nominated_node_name,
        "startTime": _time(st.start_time),
        "conditions": [_prune({"type": c.type, "status": c.status, "reason": c.reason,
                               "message": c.message}) for c in st.conditions],
    })
    return {"kind": "Pod", "apiVersion": "v1", "metadata": encode_meta(pod.metadata),
            "spec": spec, "status": status}


def encode_node(node: Node) -> dict[str, Any]:
    spec = _prune({
        "unschedulable": node.spec.unschedulable or None,
        "taints": [_prune({"key": t.key, "value": t.value, "effect": t.effect,
                           "timeAdded": _time(t.time_added)}) for t in node.spec.taints],
    })
    st = node.status
    status = _prune({
        "capacity": quantities(st.capacity),
        "allocatable": quantities(st.allocatable),
        "images": [_prune({"names": list(i.names), "sizeBytes": i.size_bytes or None})
                   for i in st.images],
    })
    return {"metadata": encode_meta(node.metadata), "spec": spec, "status": status}


def encode_claim_status(claim: ResourceClaim) -> dict[str, Any]:
    """A ResourceClaim's ``status`` (allocation, reservedFor) as resource.k8s.io/v1 JSON."""
    out: dict[str, Any] = {}
    a = claim.allocation
    if a is not None:
        results = []
        for r in a.results:
            res: dict[str, Any] = {"request": r.request, "driver": r.driver, "pool": r.pool,
                                   "device": r.device}
            if r.admin_access is not None:
                res["adminAccess"] = r.admin_access
            if r.tolerations:
                res["tolerations"] = [_prune(_generic(t)) for t in r.tolerations]
            if r.binding_conditions:
                res["bindingConditions"] = list(r.binding_conditions)
            if r.binding_failure_conditions:
                res["bindingFailureConditions"] = list(r.binding_failure_conditions)
            if r.share_id is not None:
                res["shareID"] = r.share_id
            if r.consumed_capacity:
                res["consumedCapacity"] = {k: format_quantity(v)
                                           for k, v in r.consumed_capacity.items()}
            results.append(res)
        devices: dict[str, Any] = {"results": results}
        if a.config:
            devices["config"] = [_prune({
                "source": c.source, "requests": list(c.requests),
                "opaque": None if c.opaque is None else {"driver": c.opaque.driver,
                                                         "parameters": c.opaque.parameters}})
                for c in a.config]
        alloc: dict[str, Any] = {"devices": devices}
        if a.node_selector is not None:
            alloc["nodeSelector"] = {"nodeSelectorTerms": [_term(t) for t in a.node_selector]}
        if a.allocation_timestamp is not None:
            alloc["allocationTimestamp"] = _time(a.allocation_timestamp)
        out["allocation"] = alloc
    if claim.reserved_for:
        out["reservedFor"] = [_prune({"resource": r.resource, "name": r.name, "uid": r.uid,
                                      "apiGroup": r.api_group}) for r in claim.reserved_for]
    if claim.devices:
        out["devices"] = [_prune({
            "driver": d.driver, "pool": d.pool, "device": d.device, "shareID": d.share_id,
            "conditions": [_prune({"type": c.type, "status": c.status, "reason": c.reason,
                                   "message": c.message}) for c in d.conditions]})
            for d in claim.devices]
    return out


def encode_resource_claim(claim: ResourceClaim) -> dict[str, Any]:
    """A new ResourceClaim as resource.k8s.io/v1 JSON (what ``Create`` sends: metadata
    without uid or version, the spec's requests; no status)."""
    md = encode_meta(dataclasses.replace(claim.metadata, uid="", resource_version=""))
    for ref in md.get("ownerReferences", ()):
        ref["apiVersion"] = "v1"  # the only owners the scheduler writes are pods

    def sub(r: Any) -> dict[str, Any]:
        return _prune({"deviceClassName": r.device_class_name,
                       "selectors": [{"cel": {"expression": e}} for e in r.selectors],
                       "allocationMode": r.allocation_mode, "count": r.count,
                       "adminAccess": r.admin_access})

    requests: list[dict[str, Any]] = []
    for req in claim.spec.requests:
        if req.exactly is not None:
            requests.append({"name": req.name, "exactly": sub(req.exactly)})
        else:
            requests.append({"name": req.name, "firstAvailable": [
                {"name": s.name, **sub(s)} for s in req.first_available]})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md,
            "spec": {"devices": {"requests": requests}}}


def encode_persistent_volume(pv: PersistentVolume) -> dict[str, Any]:
    """A PersistentVolume as its document, parsing back to the same object (a volume the
    simulated provisioner made, for ``--state-out``)."""
    s = pv.spec
    spec: dict[str, Any] = {
        "capacity": {"storage": format_quantity(Fraction(s.capacity or 0))},
        "accessModes": list(s.access_modes),
        "storageClassName": s.storage_class_name,
        "volumeMode": s.volume_mode,
        "persistentVolumeReclaimPolicy": s.reclaim_policy,
    }
    if s.claim_ref is not None:
        spec["claimRef"] = _prune({"kind": "PersistentVolumeClaim",
                                   "namespace": s.claim_ref.namespace,
                                   "name": s.claim_ref.name, "uid": s.claim_ref.uid})
    if s.node_affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms":
                                             [_term(t) for t in s.node_affinity]}}
    if s.source_kind:
        spec[s.source_kind] = dict(s.source)
    if s.volume_attributes_class_name is not None:
        spec["volumeAttributesClassName"] = s.volume_attributes_class_name
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": encode_meta(pv.metadata),
            "spec": spec, "status": {"phase": pv.status.phase}}
