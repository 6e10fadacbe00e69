"""What the workload controllers put on the objects they create, and the Deployment
controller's part that needs no clock: the ReplicaSet of a Deployment's current template.

The other controllers (ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job) create
pods over the run, in the simulator (``backends/sim/controllers.py``); a Deployment only
creates ReplicaSets, so that is done once, when a scenario is loaded, and every part of
kubesched (the simulator, ``explain``, the disruption budgets) sees the same ReplicaSets.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from kubesched.api.naming import ALPHANUMS
from kubesched.api.parse import parse_meta
from kubesched.api.types import GenericObject, OwnerReference

POD_TEMPLATE_HASH = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
CONTROLLER_REVISION_HASH = "controller-revision-hash"  # DaemonSet / StatefulSet pods
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOB_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
REVISION = "deployment.kubernetes.io/revision"

API_VERSIONS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                "DaemonSet": "apps/v1", "ReplicationController": "v1", "Job": "batch/v1",
                "CronJob": "batch/v1"}


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """apimachinery's ``rand.SafeEncodeString``: each byte mapped into the alphabet of
    generated names, so a hash never spells a word."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in s.encode())


def template_hash(template: dict[str, Any], collision_count: int = 0) -> str:
    """The ``pod-template-hash`` of a pod template: FNV-32a, then ``SafeEncodeString`` of its
    decimal value, as upstream's ``controller.ComputeHash``. Upstream hashes Go's printed
    form of the defaulted template struct, which Python cannot reproduce; this hashes the
    template's canonical JSON instead, so the values differ from a real cluster's (the form,
    up to 10 characters of that alphabet, is the same). The ``pod-template-hash`` label
    itself is left out, so the hash of a ReplicaSet's template equals its Deployment's."""
    t = copy.deepcopy(template)
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    data = json.dumps(t, sort_keys=True, separators=(",", ":"), default=str).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(_fnv32a(data)))


def label_uid(obj: GenericObject) -> str:
    """The object's uid as a label value. A scenario written by hand has none (kubesched
    defaults it to ``namespace/name``, not a valid label value): then a uid derived from
    the object's identity, the same at every load."""
    uid = obj.metadata.uid
    if uid and "/" not in uid and len(uid) <= 63:
        return uid
    return str(uuid.uuid5(uuid.NAMESPACE_URL,
                          f"kubesched:{obj.kind}/{obj.metadata.namespace}/{obj.metadata.name}"))


def controller_ref(obj: GenericObject) -> OwnerReference:
    return OwnerReference(kind=obj.kind, name=obj.metadata.name, uid=obj.metadata.uid,
                          controller=True)


def owner_ref_doc(obj: GenericObject) -> dict[str, Any]:
    return {"apiVersion": API_VERSIONS.get(obj.kind, "v1"), "kind": obj.kind,
            "name": obj.metadata.name, "uid": obj.metadata.uid, "controller": True,
            "blockOwnerDeletion": True}


def controlled_by(meta_refs: list[OwnerReference], obj: GenericObject) -> bool:
    """Whether ``obj`` is the controller among these ownerReferences (by kind and name,
    as the simulator matches owners: hand-written scenarios rarely keep uids)."""
    return any(r.controller and r.kind == obj.kind and r.name == obj.metadata.name
               for r in meta_refs)


def has_controller(meta_refs: list[OwnerReference]) -> bool:
    return any(r.controller for r in meta_refs)


def _without_hash(template: dict[str, Any]) -> dict[str, Any]:
    t = copy.deepcopy(template)
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    return t


def expand_deployments(objects: dict[str, list[Any]]) -> list[str]:
    """The Deployment controller at rest, for each Deployment: adopt the ReplicaSets its
    selector matches, find the one whose template is the Deployment's (ignoring the hash
    label, as ``EqualIgnoreHash``) or create it (``<name>-<hash>``, the hash label on its
    selector, template and itself, owned by the Deployment), give it ``spec.replicas`` and
    scale the others to 0 — the end state of a rollout, whatever its strategy. Returns
    warnings."""
    from kubesched.api.parse import parse_label_selector
    from kubesched.api.selectors import label_selector_matches

    warnings: list[str] = []
    replica_sets: list[GenericObject] = objects.setdefault("ReplicaSet", [])
    for d in objects.get("Deployment", ()):
        spec = d.raw.get("spec") or {}
        ns = d.metadata.namespace
        if spec.get("paused"):
            warnings.append(f"Deployment {ns}/{d.metadata.name} is paused: its ReplicaSets "
                            "are left as they are")
            continue
        template = spec.get("template") or {}
        selector = parse_label_selector(spec.get("selector"), "spec.selector")
        replicas = spec.get("replicas", 1)
        owned: list[GenericObject] = []
        for rs in replica_sets:
            if rs.metadata.namespace != ns:
                continue
            refs = rs.metadata.owner_references
            if controlled_by(refs, d):
                owned.append(rs)
            elif (not has_controller(refs) and selector is not None
                  and label_selector_matches(selector, rs.metadata.labels)):
                rs.metadata.owner_references.append(controller_ref(d))  # adopted
                rs.raw.setdefault("metadata", {}).setdefault("ownerReferences", []).append(
                    owner_ref_doc(d))
                owned.append(rs)
        want = _without_hash(template)
        new = next((rs for rs in owned
                    if _without_hash((rs.raw.get("spec") or {}).get("template") or {}) == want),
                   None)
        if new is None:
            taken = {rs.metadata.name for rs in replica_sets if rs.metadata.namespace == ns}
            collisions = int((d.raw.get("status") or {}).get("collisionCount") or 0)
            while True:
                h = template_hash(template, collisions)
                name = f"{d.metadata.name}-{h}"
                if name not in taken:
                    break
                collisions += 1
            new = _new_replica_set(d, name, h, template, replicas)
            replica_sets.append(new)
        new.raw.setdefault("spec", {})["replicas"] = replicas
        for rs in owned:
            if rs is not new:
                rs.raw.setdefault("spec", {})["replicas"] = 0
    return warnings


def _new_replica_set(d: GenericObject, name: str, h: str, template: dict[str, Any],
                     replicas: int) -> GenericObject:
    spec = d.raw.get("spec") or {}
    t = copy.deepcopy(template)
    t.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH] = h
    selector = copy.deepcopy(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH] = h
    labels = dict(t["metadata"]["labels"])
    md: dict[str, Any] = {"name": name, "namespace": d.metadata.namespace, "labels": labels,
                          "annotations": {DESIRED_REPLICAS: str(replicas), REVISION: "1"},
                          "ownerReferences": [owner_ref_doc(d)]}
    raw = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": md,
           "spec": {"replicas": replicas, "selector": selector, "template": t}}
    return GenericObject(kind="ReplicaSet", metadata=parse_meta(md), raw=raw)


# A StatefulSet's volumeClaimTemplates (pkg/controller/statefulset/stateful_set_utils.go)

def claim_templates(sts: GenericObject) -> list[dict[str, Any]]:
    return list((sts.raw.get("spec") or {}).get("volumeClaimTemplates") or ())


def claim_name(template: dict[str, Any], sts_name: str, ordinal: int) -> str:
    """getPersistentVolumeClaimName: ``<template>-<statefulset>-<ordinal>``."""
    return f"{(template.get('metadata') or {}).get('name', '')}-{sts_name}-{ordinal}"


def statefulset_claims(sts: GenericObject, ordinal: int) -> list[dict[str, Any]]:
    """getPersistentVolumeClaims, as documents: each template with the pod's claim name, the
    set's namespace and the set's ``selector.matchLabels`` over the template's labels; with
    ``persistentVolumeClaimRetentionPolicy.whenDeleted: Delete`` the set is the claim's
    controller (updateClaimOwnerRefForSetAndPod; ``whenScaled`` only touches the claims of
    pods scaled down, which the controller never creates)."""
    spec = sts.raw.get("spec") or {}
    match = (spec.get("selector") or {}).get("matchLabels") or {}
    policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    out = []
    for t in claim_templates(sts):
        doc = copy.deepcopy(t)
        md = dict(doc.get("metadata") or {})
        md["name"] = claim_name(t, sts.metadata.name, ordinal)
        md["namespace"] = sts.metadata.namespace
        md["labels"] = {**(md.get("labels") or {}), **match}
        if policy.get("whenDeleted") == "Delete":
            md["ownerReferences"] = [owner_ref_doc(sts)]
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md,
                    "spec": doc.get("spec") or {}})
    return out


def with_claim_volumes(pod_spec: dict[str, Any], sts: GenericObject, ordinal: int
                       ) -> dict[str, Any]:
    """updateStorage: a volume per template, named after it, mounting the pod's claim, in
    place of any volume of that name (in template order: upstream's is a map's)."""
    ours = [{"name": (t.get("metadata") or {}).get("name", ""),
             "persistentVolumeClaim": {"claimName": claim_name(t, sts.metadata.name,
                                                               ordinal)}}
            for t in claim_templates(sts)]
    names = {v["name"] for v in ours}
    rest = [v for v in pod_spec.get("volumes") or () if v.get("name") not in names]
    return {**pod_spec, "volumes": [*ours, *rest]}


def new_claim(doc: dict[str, Any], storage_classes: list[Any]) -> Any:
    """The PersistentVolumeClaim the API server stores for ``doc`` (a claim the StatefulSet
    controller creates): parsed, ``storageClassName`` defaulted as the DefaultStorageClass
    admission plugin does, and that default written into ``doc`` too (as stored)."""
    from kubesched.api.storage import (
        assign_default_storage_class,
        parse_persistent_volume_claim,
    )

    pvc = parse_persistent_volume_claim(doc)
    assign_default_storage_class([pvc], storage_classes)
    if pvc.spec.storage_class_name is not None:
        doc["spec"] = {**doc["spec"], "storageClassName": pvc.spec.storage_class_name}
    return pvc
