"""``simulate --state-out``: the simulated cluster's end state, as a scenario.

Read back by ``simulate`` or ``explain`` it is the same state: every node as it is now (taints
a fault added included; deleted nodes left out); bound pods with ``spec.nodeName`` and their
remaining ``kubesched.io/duration``; pending pods without it, keeping
``status.nominatedNodeName``; pods not yet arrived (a run cut by ``--until``) with their
remaining ``kubesched.io/arrival``; finished pods as ``status.phase: Succeeded`` (a Job counts
them); evicted and terminating pods left out. Controllers and the other objects are written
as loaded (a Deployment's ReplicaSet too): their pods are adopted on reading, not created
again. Claims and volumes carry their binding; faults still to come keep their remaining time.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, cast

import yaml

from kubesched.api.dra.store import dra_index
from kubesched.api.encode import encode_claim_status, encode_resource_claim
from kubesched.api.types import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, Node, Pod
from kubesched.api.workloads import API_VERSIONS
from kubesched.backends.sim.ports import EndState


def _time(t: float) -> str:
    d = _dt.datetime.fromtimestamp(t, tz=_dt.UTC)
    text = d.isoformat(timespec="microseconds" if t % 1 else "seconds")
    return text.replace("+00:00", "Z")


def _seconds(t: float) -> str:
    return f"{t:g}" if abs(t) < 1e15 else str(t)


def _quantity(resource: str, value: int) -> str | int:
    return f"{value}m" if resource == "cpu" else value


def node_doc(node: Node) -> dict[str, Any]:
    md: dict[str, Any] = {"name": node.name, "labels": dict(node.metadata.labels)}
    if node.metadata.annotations:
        md["annotations"] = dict(node.metadata.annotations)
    spec: dict[str, Any] = {}
    if node.spec.unschedulable:
        spec["unschedulable"] = True
    if node.spec.taints:
        spec["taints"] = [{k: v for k, v in (("key", t.key), ("value", t.value),
                                             ("effect", t.effect)) if v}
                          for t in node.spec.taints]
    status: dict[str, Any] = {
        "capacity": {r: _quantity(r, v) for r, v in node.status.capacity.items()},
        "allocatable": {r: _quantity(r, v) for r, v in node.status.allocatable.items()}}
    if node.status.images:
        status["images"] = [{"names": list(i.names), "sizeBytes": i.size_bytes}
                            for i in node.status.images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": spec, "status": status}


def pod_doc(pod: Pod, *, node: str = "", phase: str = "Pending",
            annotations: dict[str, str] | None = None) -> dict[str, Any]:
    m = pod.metadata
    md: dict[str, Any] = {"name": m.name, "namespace": m.namespace, "uid": m.uid}
    if m.labels:
        md["labels"] = dict(m.labels)
    ann = dict(m.annotations if annotations is None else annotations)
    if ann:
        md["annotations"] = ann
    if m.owner_references:
        md["ownerReferences"] = [
            {"apiVersion": API_VERSIONS.get(r.kind, "v1"), "kind": r.kind, "name": r.name,
             "uid": r.uid, **({"controller": True} if r.controller else {})}
            for r in m.owner_references]
    if m.creation_timestamp is not None:
        md["creationTimestamp"] = _time(m.creation_timestamp)
    if m.deletion_timestamp is not None:
        md["deletionTimestamp"] = _time(m.deletion_timestamp)
    spec = dict(pod.raw_spec or {})
    spec.pop("nodeName", None)
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase}
    if node and pod.status.start_time is not None:
        status["startTime"] = _time(pod.status.start_time)
    if not node and pod.status.nominated_node_name:
        status["nominatedNodeName"] = pod.status.nominated_node_name
    if pod.status.conditions:  # (DisruptionTarget: a victim terminating by preemption)
        status["conditions"] = [{k: v for k, v in (("type", c.type), ("status", c.status),
                                                   ("reason", c.reason),
                                                   ("message", c.message)) if v}
                                for c in pod.status.conditions]
    ext = pod.status.extended_resource_claim_status
    if ext is not None:  # the claim DynamicResources made for its extended resources
        status["extendedResourceClaimStatus"] = {
            "resourceClaimName": ext.resource_claim_name,
            "requestMappings": [{"containerName": m.container_name,
                                 "resourceName": m.resource_name,
                                 "requestName": m.request_name}
                                for m in ext.request_mappings]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def state_documents(sim: EndState) -> list[dict[str, Any]]:
    now = float(sim.clock.now())
    docs: list[dict[str, Any]] = [node_doc(n) for n in sim.nodes.values()]
    sc = sim.scenario
    keys = {p.key for p in sim.pods.values()}
    for pod in sim.pods_in_order():
        ann = {k: v for k, v in pod.metadata.annotations.items() if k != ARRIVAL_ANNOTATION}
        if pod.spec.node_name:
            finish = sim.finish_time(pod.uid)
            if finish is not None:
                ann[DURATION_ANNOTATION] = _seconds(max(finish - now, 0.0))
            docs.append(pod_doc(pod, node=pod.spec.node_name, phase="Running",
                                annotations=ann))
        else:
            docs.append(pod_doc(pod, annotations=ann))
    for at, pod in sim.arrivals():
        keys.add(pod.key)
        ann = dict(pod.metadata.annotations)
        ann[ARRIVAL_ANNOTATION] = _seconds(max(at - now, 0.0))
        docs.append(pod_doc(pod, annotations=ann))
    done = [p for p in sc.pods if p.status.phase in ("Succeeded", "Failed")]
    for pod in [*done, *sim.finished]:
        if pod.key in keys:
            continue  # a later pod of that name (a StatefulSet's) is the one on the server
        keys.add(pod.key)
        phase = pod.status.phase if pod.status.phase in ("Succeeded", "Failed") else "Succeeded"
        ann = {k: v for k, v in pod.metadata.annotations.items() if k != ARRIVAL_ANNOTATION}
        docs.append(pod_doc(pod, node=pod.spec.node_name, phase=phase, annotations=ann))
    objects = sim.objects
    claims = dict(dra_index(objects).claims)
    # the claims and volumes made during the run come after the scenario's
    for doc in [*sc.documents, *sim.made_objects]:
        out = _current(doc, objects, now, keys, sim)
        if out is not None and out.get("kind") == "ResourceClaim":
            out = _claim_now(out, claims)
        if out is not None:
            docs.append(out)
    # the claims made during the run (from templates, for extended resources), with theirs
    docs.extend({**encode_resource_claim(c), "status": encode_claim_status(c)}
                for c in claims.values())
    docs.append(sim.checkpoint(keys))
    return docs


def _claim_now(doc: dict[str, Any], claims: dict[str, Any]) -> dict[str, Any] | None:
    """A scenario's claim as it is now (its status: allocation, reservedFor), or None when
    it is gone; taken out of ``claims`` (what is left was made during the run)."""
    md = doc.get("metadata") or {}
    cur = claims.pop(f"{md.get('namespace') or 'default'}/{md.get('name')}", None)
    if cur is None:
        return None
    out = {**doc, "status": encode_claim_status(cur)}
    finalizers = list(cur.metadata.finalizers)
    if finalizers or md.get("finalizers"):  # (PreBind protects the claims it allocates)
        out["metadata"] = {**md, "finalizers": finalizers}
    return out


def _current(doc: dict[str, Any], objects: dict[str, list[Any]], now: float, pods: set[str],
             sim: EndState) -> dict[str, Any] | None:
    kind = doc.get("kind")
    if kind == "Fault":
        spec = doc.get("spec") or {}
        at = float(spec.get("at") or 0)
        if at <= now or (spec.get("node") and spec["node"] not in sim.nodes):
            return None  # done (its effect is in the state), or its node is gone
        target = spec.get("pod")
        if target and (target if "/" in target else f"default/{target}") not in pods:
            return None
        return {**doc, "spec": {**spec, "at": at - now}}
    if kind not in ("PersistentVolume", "PersistentVolumeClaim"):
        return doc
    md = doc.get("metadata") or {}
    name, ns = md.get("name"), md.get("namespace") or "default"
    cur = next((o for o in objects.get(kind, ())
                if o.name == name and (kind == "PersistentVolume" or o.namespace == ns)), None)
    if cur is None:
        return doc
    out = {**doc, "metadata": {**md, "annotations": dict(cur.metadata.annotations)},
           "spec": dict(doc.get("spec") or {}), "status": {"phase": cur.status.phase}}
    spec = cast(dict[str, Any], out["spec"])
    if kind == "PersistentVolumeClaim" and cur.spec.volume_name:
        spec["volumeName"] = cur.spec.volume_name
    ref = getattr(cur.spec, "claim_ref", None)
    if kind == "PersistentVolume" and ref is not None:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ref.namespace,
                            "name": ref.name, "uid": ref.uid}
    return out


def write_state(sim: EndState) -> str:
    return yaml.safe_dump_all(state_documents(sim), sort_keys=False, default_flow_style=None,
                              width=100)
