"""Helpers for the tests against a real kube-apiserver (``test_real_*.py``): a test's view of
the shared control plane (its own namespace; everything it made removed afterwards) and a
Node made Ready by hand, as no kubelet runs here."""

from __future__ import annotations

import itertools
import urllib.parse
from pathlib import Path
from typing import Any

from kube_envtest import ApiFailure, ControlPlane

_NS = itertools.count(1)


def ns_path(namespace: str, plural: str = "pods", name: str = "", sub: str = "") -> str:
    p = f"/api/v1/namespaces/{namespace}/{plural}"
    return p + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


def pod(name: str, cpu: str = "100m", memory: str = "64Mi", *, scheduler: str = "kubesched",
        priority_class: str | None = None, node_name: str | None = None,
        labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}
    if priority_class:
        s["priorityClassName"] = priority_class
    if node_name:
        s["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {}}, "spec": s}


class Cluster:
    """One test's side of the control plane: a fresh namespace, requests as the admin, and
    ``cleanup`` deleting what tests make (pods with grace period 0, as no kubelet confirms a
    deletion; nodes; kubesched's leases; DRA objects; priority classes)."""

    def __init__(self, cp: ControlPlane, workdir: Path) -> None:
        self.cp = cp
        self.namespace = f"t{next(_NS)}"
        self.kubeconfig = str(cp.kubeconfig(workdir / "kubeconfig"))
        self.request = cp.request
        self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})

    def create_pod(self, obj: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        return self.request("POST", ns_path(namespace or self.namespace), obj)  # type: ignore[no-any-return]

    def get_pod(self, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        try:
            return self.request("GET", ns_path(namespace or self.namespace, name=name))  # type: ignore[no-any-return]
        except ApiFailure as e:
            if e.code == 404:
                return None
            raise

    def pods(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.request("GET", ns_path(namespace or self.namespace))["items"]  # type: ignore[no-any-return]

    def bound(self, namespace: str | None = None) -> dict[str, str]:
        """pod name -> node of this test's bound pods."""
        return {p["metadata"]["name"]: p["spec"]["nodeName"]
                for p in self.pods(namespace) if p["spec"].get("nodeName")}

    def events(self, reason: str | None = None) -> list[dict[str, Any]]:
        items = self.request(
            "GET", f"/apis/events.k8s.io/v1/namespaces/{self.namespace}/events")["items"]
        return [e for e in items if reason is None or e.get("reason") == reason]

    def ready_node(self, name: str, cpu: str = "4", memory: str = "8Gi", pods: int = 110,
                   labels: dict[str, str] | None = None) -> dict[str, Any]:
        """A Node as a kubelet would leave it: admission's not-ready taint cleared, capacity,
        allocatable and a Ready condition set through the status subresource."""
        self.request("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  **(labels or {})}}})
        self.request("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": None}},
                     content_type="application/merge-patch+json")
        res = {"cpu": cpu, "memory": memory, "pods": str(pods)}
        return self.request(  # type: ignore[no-any-return]
            "PATCH", f"/api/v1/nodes/{name}/status", {"status": {
                "capacity": res, "allocatable": res,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "message": "kubelet is posting ready status (envtest)"}]}},
            content_type="application/merge-patch+json")

    def cleanup(self) -> None:
        for ns in {p["metadata"]["namespace"]
                   for p in self.request("GET", "/api/v1/pods")["items"]}:
            _delete(self, ns_path(ns) + "?gracePeriodSeconds=0")
        for n in self.request("GET", "/api/v1/nodes")["items"]:
            _delete(self, f"/api/v1/nodes/{n['metadata']['name']}")
        for lease in self.request(
                "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")["items"]:
            if lease["metadata"]["name"].startswith("kubesched"):
                _delete(self, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                        + lease["metadata"]["name"])
        for pc in self.request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")["items"]:
            if not pc["metadata"]["name"].startswith("system-"):
                _delete(self, "/apis/scheduling.k8s.io/v1/priorityclasses/"
                        + pc["metadata"]["name"])
        dra = "/apis/resource.k8s.io/v1"
        for c in self.request("GET", f"{dra}/resourceclaims")["items"]:
            md = c["metadata"]
            path = f"{dra}/namespaces/{md['namespace']}/resourceclaims/{md['name']}"
            if md.get("finalizers"):
                self.request("PATCH", path, {"metadata": {"finalizers": None}},
                             content_type="application/merge-patch+json")
            _delete(self, path)
        for plural in ("resourceslices", "deviceclasses"):
            for o in self.request("GET", f"{dra}/{plural}")["items"]:
                _delete(self, f"{dra}/{plural}/{urllib.parse.quote(o['metadata']['name'])}")


def _delete(c: Cluster, path: str) -> None:
    try:
        c.request("DELETE", path)
    except ApiFailure as e:
        if e.code != 404:
            raise
