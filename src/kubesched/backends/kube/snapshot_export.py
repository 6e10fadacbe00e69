"""``kubesched snapshot``: a live cluster's scheduling state as a scenario (multi-document
YAML) that ``kubesched simulate`` and ``explain`` load.

Every kind a scenario holds is listed (the gang and DRA kinds at the first version the
cluster serves, none when it serves none) (paged; pods without the terminal ones, as the
scheduler's informer). Each object keeps what scheduling reads and loses the bulk
(managedFields, the last-applied annotation, container statuses, node conditions and
addresses...). Objects that kubesched cannot decode are left out with a warning, so the
snapshot always loads.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

import yaml

from kubesched.api.jsonlist import json_list
from kubesched.backends.kube.client import ApiError, KubeClient
from kubesched.backends.kube.resources import (
    BY_KIND,
    WATCHED,
    ResourceSpec,
    snapshot_alternatives,
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# kinds in the order a reader would want them: cluster-scoped first, pods last
ORDER = ("Namespace", "PriorityClass", "StorageClass", "CSINode", "CSIDriver",
         "CSIStorageCapacity", "PersistentVolume",
         "PersistentVolumeClaim", "Service", "ReplicationController", "ReplicaSet",
         "StatefulSet", "PodDisruptionBudget", "Node", "Pod")

# resourceClaimStatuses: the names of the claims made from the pod's templates
_POD_STATUS_KEEP = ("phase", "nominatedNodeName", "conditions", "startTime",
                    "resourceClaimStatuses")
_NODE_STATUS_KEEP = ("capacity", "allocatable", "images")

try:
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper


def _clean(spec: ResourceSpec, item: dict[str, Any]) -> dict[str, Any]:
    out = dict(item)
    out["apiVersion"] = spec.api_version
    out["kind"] = spec.kind
    md = dict(out.get("metadata") or {})
    md.pop("managedFields", None)
    md.pop("selfLink", None)
    ann = md.get("annotations")
    if isinstance(ann, dict) and LAST_APPLIED in ann:
        ann = {k: v for k, v in ann.items() if k != LAST_APPLIED}
        md["annotations"] = ann or None
        if not ann:
            md.pop("annotations")
    out["metadata"] = md
    status = out.get("status")
    if isinstance(status, dict):
        if spec.kind == "Pod":
            out["status"] = {k: status[k] for k in _POD_STATUS_KEEP if k in status}
        elif spec.kind == "Node":
            out["status"] = {k: status[k] for k in _NODE_STATUS_KEEP if k in status}
    # ordered as kubectl writes them
    return {k: out[k] for k in ("apiVersion", "kind", "metadata") if k in out} | {
        k: v for k, v in out.items() if k not in ("apiVersion", "kind", "metadata")}


def list_all(client: KubeClient, spec: ResourceSpec, page_size: int = 500
             ) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cont = None
    while True:
        q: dict[str, Any] = {"limit": page_size}
        if spec.field_selector:
            q["fieldSelector"] = spec.field_selector
        if cont:
            q["continue"] = cont
        page = client.request("GET", spec.path(), query=q)
        items.extend(page.get("items") or [])
        cont = (page.get("metadata") or {}).get("continue")
        if not cont:
            return items


def export(client: KubeClient, out: TextIO, *,
           warn: Callable[[str], None] | None = None, as_json: bool = False
           ) -> Counter[str]:
    """Write the scenario to ``out`` (multi-document YAML, or with ``as_json`` one JSON
    List, which loads many times faster); returns how many objects of each kind it
    holds."""
    counts: Counter[str] = Counter()
    docs: list[dict[str, Any]] = []
    specs = [BY_KIND[k] for k in ORDER if k in BY_KIND]
    specs += [s for s in WATCHED if s not in specs]
    # the gang and DRA kinds before the pods, each at the first version the cluster serves
    listed: list[tuple[ResourceSpec, list[dict[str, Any]]]] = []
    for alternatives in snapshot_alternatives():
        for alt in alternatives:
            try:
                listed.append((alt, list_all(client, alt)))
                break
            except ApiError as e:
                if e.status != 404:  # not served at this version (or at all): next
                    raise
    # after the cluster-scoped and workload kinds, before nodes and pods
    at = specs.index(BY_KIND["Node"])
    listed = [(spec, list_all(client, spec)) for spec in specs[:at]] + listed
    listed += [(spec, list_all(client, spec)) for spec in specs[at:]]
    for spec, items in listed:
        for item in items:
            obj = _clean(spec, item)
            try:
                spec.decode(obj)
            except Exception as e:  # left out, so that the scenario loads
                md = obj.get("metadata") or {}
                name = f"{md.get('namespace')}/{md.get('name')}" if md.get("namespace") \
                    else md.get("name")
                if warn is not None:
                    warn(f"skipping {spec.kind} {name}: {e}")
                counts["skipped"] += 1
                continue
            docs.append(obj)
            counts[spec.kind] += 1
    if as_json:  # (JSON has no comments: the header is left out)
        out.write(json_list(docs).decode())
        return counts
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if k != "skipped")
    out.write(f"# kubesched snapshot of {client.host} at {now}\n# {summary}\n")
    yaml.dump_all(docs, out, Dumper=_Dumper, sort_keys=False, explicit_start=True,
                  default_flow_style=False, width=100)
    return counts
