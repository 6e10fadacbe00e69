#!/usr/bin/env python3
"""A large cluster dump for loading benchmarks (issue 22): nodes and pods as a cluster's API
server returns them, in scheduler_perf's shape (node-default: 4 CPU, 32 Gi, 110 pods, in 3
zones; pod-default: 100m / 500 Mi), the running pods spread round-robin over the nodes.

    python bench/make_large_scenario.py --nodes 5000 --pods-per-node 10 --pending 10000 \\
        -o /tmp/cluster-5000.yaml

``--detail`` says how much of each object is written:

- ``kubectl`` (the default): what ``kubectl get nodes,pods,replicasets -A -o yaml`` writes,
  managedFields, node conditions and addresses, container statuses and all;
- ``snapshot``: what ``kubesched snapshot`` keeps (no managedFields; a pod's status only its
  phase, conditions and start time; a node's only capacity and allocatable);
- ``minimal``: scheduler_perf's templates bare, as ``kubesched bench --write-scenario``
  writes them (about 20 MB at 5 000 nodes and 50 000 pods: the file issue 22 timed).

The pods belong to ReplicaSets of 10 pods (one Deployment's worth each, in 10 namespaces);
with ``kubectl`` and ``snapshot`` the ReplicaSets are in the file, so their controllers adopt
the pods. ``-o x.json`` writes one JSON ``kind: List`` (as ``kubectl get -o json``) instead of
multi-document YAML. Deterministic: the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

import yaml

try:
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper

ZONES = ("zone1", "zone2", "zone3")
NAMESPACES = 10
PODS_PER_SET = 10
CREATED = "2026-11-30T08:00:00Z"
STARTED = "2026-11-30T08:05:00Z"


def _uid(*parts: object) -> str:
    h = hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _hash(i: int) -> str:
    return hashlib.md5(str(i).encode()).hexdigest()[:10].translate(
        str.maketrans("0123456789", "bcdfghjklm"))


def _suffix(j: int) -> str:
    """Five characters of the alphabet the API server's generateName draws from, one
    string per pod (up to 27**5)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    k = (j * 2_654_435_761) % 27**5  # (spread, so neighbours do not look alike)
    out = ""
    for _ in range(5):
        k, r = divmod(k, 27)
        out += alphabet[r]
    return out


def node(i: int, detail: str) -> dict[str, Any]:
    name = f"node-{i:05d}"
    zone = ZONES[i % len(ZONES)]
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    capacity = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    if detail == "minimal":
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "spec": {}, "status": {"capacity": capacity, "allocatable": capacity}}
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type":
              "n2-standard-4", "beta.kubernetes.io/os": "linux",
              "failure-domain.beta.kubernetes.io/region": "region1",
              "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64",
              "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "n2-standard-4",
              "topology.kubernetes.io/region": "region1", **labels}
    md: dict[str, Any] = {
        "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        "creationTimestamp": CREATED, "labels": labels, "name": name,
        "resourceVersion": str(1000 + i), "uid": _uid("node", i)}
    ip = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
    spec = {"podCIDR": f"10.{64 + i // 256 % 64}.{i % 256}.0/24",
            "podCIDRs": [f"10.{64 + i // 256 % 64}.{i % 256}.0/24"],
            "providerID": f"gce://project/{zone}/{name}"}
    status: dict[str, Any] = {"allocatable": dict(capacity), "capacity": capacity}
    if detail == "kubectl":
        md["managedFields"] = [
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:annotations": {
                    ".": {}, "f:volumes.kubernetes.io/controller-managed-attach-detach": {}},
                    "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}}},
                "f:spec": {"f:providerID": {}}},
             "manager": "kubelet", "operation": "Update", "time": CREATED},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}},
                "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, 'v:"10.0.0.0/24"': {}}}},
             "manager": "kube-controller-manager", "operation": "Update", "time": CREATED},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {
                "f:allocatable": {"f:cpu": {}, "f:memory": {}, "f:pods": {}},
                "f:conditions": {'k:{"type":"Ready"}': {"f:lastHeartbeatTime": {},
                                                        "f:status": {}}}}},
             "manager": "kubelet", "operation": "Update", "subresource": "status",
             "time": STARTED}]
        status |= {
            "addresses": [{"address": ip, "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}],
            "conditions": [
                {"lastHeartbeatTime": STARTED, "lastTransitionTime": CREATED,
                 "message": f"kubelet has no {what}", "reason": f"KubeletHas{reason}",
                 "status": "False", "type": kind}
                for kind, what, reason in (
                    ("MemoryPressure", "memory pressure", "SufficientMemory"),
                    ("DiskPressure", "disk pressure", "NoDiskPressure"),
                    ("PIDPressure", "PID pressure", "SufficientPID"))] + [
                {"lastHeartbeatTime": STARTED, "lastTransitionTime": CREATED,
                 "message": "kubelet is posting ready status", "reason": "KubeletReady",
                 "status": "True", "type": "Ready"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "bootID": _uid("boot", i),
                         "containerRuntimeVersion": "containerd://1.7.22",
                         "kernelVersion": "6.1.0-26-cloud-amd64", "kubeProxyVersion": "",
                         "kubeletVersion": "v1.35.0", "machineID": _hash(i) * 3 + "aa",
                         "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)",
                         "systemUUID": _uid("system", i)}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": spec, "status": status}


def _container(detail: str) -> dict[str, Any]:
    res = {"limits": {"cpu": "100m", "memory": "500Mi"},
           "requests": {"cpu": "100m", "memory": "500Mi"}}
    c: dict[str, Any] = {"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                         "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": res}
    if detail != "minimal":
        c |= {"imagePullPolicy": "IfNotPresent",
              "terminationMessagePath": "/dev/termination-log",
              "terminationMessagePolicy": "File",
              "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                "name": "kube-api-access", "readOnly": True}]}
    return c


def _set_name(s: int) -> tuple[str, str, str]:
    """A ReplicaSet's namespace, its Deployment's app name, its pod-template-hash."""
    return f"team-{s % NAMESPACES}", f"app-{s:05d}", _hash(s)


def replica_set(s: int, pods: int) -> dict[str, Any]:
    ns, app, h = _set_name(s)
    name = f"{app}-{h}"
    labels = {"app": app, "pod-template-hash": h}
    md: dict[str, Any] = {
        "annotations": {"deployment.kubernetes.io/desired-replicas": str(pods),
                        "deployment.kubernetes.io/max-replicas": str(pods + 3),
                        "deployment.kubernetes.io/revision": "1"},
        "creationTimestamp": CREATED, "generation": 1, "labels": labels, "name": name,
        "namespace": ns, "resourceVersion": str(500_000 + s), "uid": _uid("rs", s)}
    spec = {"replicas": pods, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [_container("snapshot")],
                                  "restartPolicy": "Always",
                                  "terminationGracePeriodSeconds": 30}}}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": md, "spec": spec,
            "status": {"availableReplicas": pods, "fullyLabeledReplicas": pods,
                       "observedGeneration": 1, "readyReplicas": pods, "replicas": pods}}


def pod(j: int, node_name: str | None, detail: str) -> dict[str, Any]:
    s = j // PODS_PER_SET
    ns, app, h = _set_name(s)
    name = f"{app}-{h}-{_suffix(j)}"
    if detail == "minimal":
        spec: dict[str, Any] = {"containers": [_container(detail)]}
        if node_name:
            spec["nodeName"] = node_name
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}
    labels = {"app": app, "pod-template-hash": h}
    md: dict[str, Any] = {
        "creationTimestamp": CREATED, "generateName": f"{app}-{h}-", "labels": labels,
        "name": name, "namespace": ns,
        "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True,
                             "controller": True, "kind": "ReplicaSet", "name": f"{app}-{h}",
                             "uid": _uid("rs", s)}],
        "resourceVersion": str(2_000_000 + j), "uid": _uid("pod", j)}
    spec = {"containers": [_container(detail)], "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": key, "operator": "Exists",
                             "tolerationSeconds": 300}
                            for key in ("node.kubernetes.io/not-ready",
                                        "node.kubernetes.io/unreachable")],
            "volumes": [{"name": "kube-api-access", "projected": {
                "defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                                   "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {
                        "apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        "path": "namespace"}]}}]}}]}
    status: dict[str, Any]
    if node_name:
        spec["nodeName"] = node_name
        status = {"conditions": [{"lastProbeTime": None, "lastTransitionTime": STARTED,
                                  "status": "True", "type": t}
                                 for t in ("PodReadyToStartContainers", "Initialized",
                                           "Ready", "ContainersReady", "PodScheduled")],
                  "phase": "Running", "startTime": STARTED}
    else:
        status = {"conditions": [{"lastProbeTime": None, "lastTransitionTime": STARTED,
                                  "message": "0/1 nodes are available: 1 Too many pods.",
                                  "reason": "Unschedulable", "status": "False",
                                  "type": "PodScheduled"}],
                  "phase": "Pending", "qosClass": "Guaranteed"}
    if detail == "kubectl":
        md["managedFields"] = [
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:generateName": {}, "f:labels": {
                    ".": {}, "f:app": {}, "f:pod-template-hash": {}},
                    "f:ownerReferences": {".": {}, f'k:{{"uid":"{_uid("rs", s)}"}}': {}}},
                "f:spec": {"f:containers": {'k:{"name":"pause"}': {
                    ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                    "f:ports": {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': {
                        ".": {}, "f:containerPort": {}, "f:protocol": {}}},
                    "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}},
                                    "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
                    "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                    "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                    "f:schedulerName": {}, "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {}}},
             "manager": "kube-controller-manager", "operation": "Update", "time": CREATED}]
        if node_name:
            i = int(node_name.rpartition("-")[2])
            status |= {
                "containerStatuses": [{
                    "containerID": f"containerd://{_hash(j) * 6}abcd",
                    "image": "registry.k8s.io/pause:3.10.1",
                    "imageID": "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be"
                               "1ac3f505666ef0e3c98fae8199917a",
                    "lastState": {}, "name": "pause", "ready": True, "restartCount": 0,
                    "started": True, "state": {"running": {"startedAt": STARTED}}}],
                "hostIP": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
                "podIP": f"10.{64 + j // 65536 % 64}.{j // 256 % 256}.{j % 256}",
                "qosClass": "Guaranteed"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def objects(nodes: int, pods_per_node: int, pending: int, detail: str
            ) -> list[dict[str, Any]]:
    total = nodes * pods_per_node
    running = total - pending
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"creationTimestamp": CREATED,
                      "labels": {"kubernetes.io/metadata.name": f"team-{n}"},
                      "name": f"team-{n}", "resourceVersion": str(100 + n),
                      "uid": _uid("ns", n)},
         "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
        for n in range(NAMESPACES)] if detail != "minimal" else []
    out += [node(i, detail) for i in range(nodes)]
    if detail != "minimal":
        sets = -(-total // PODS_PER_SET)
        out += [replica_set(s, min(PODS_PER_SET, total - s * PODS_PER_SET))
                for s in range(sets)]
    # the pending pods are the last ReplicaSets' (a rollout still being scheduled)
    out += [pod(j, f"node-{j % nodes:05d}" if j < running else None, detail)
            for j in range(total)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=10,
                    help="pods in all, per node (running and pending)")
    ap.add_argument("--pending", type=int, default=10000, help="of those, not yet bound")
    ap.add_argument("--detail", choices=("kubectl", "snapshot", "minimal"), default="kubectl")
    ap.add_argument("-o", "--out", default="-", help="file (.json: a JSON List), - stdout")
    args = ap.parse_args()
    if not 0 <= args.pending <= args.nodes * args.pods_per_node:
        ap.error("--pending must be between 0 and nodes × pods-per-node")
    objs = objects(args.nodes, args.pods_per_node, args.pending, args.detail)
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")  # noqa: SIM115
    with out:
        if args.out.endswith(".json"):
            json.dump({"apiVersion": "v1", "kind": "List", "items": objs,
                       "metadata": {"resourceVersion": ""}}, out, indent=4)
            out.write("\n")
        else:
            yaml.dump_all(objs, out, Dumper=_Dumper, sort_keys=False, explicit_start=True,
                          default_flow_style=False, width=100)


if __name__ == "__main__":
    main()
