"""The real kube-scheduler as an oracle (issue 23, point 3; ``bank_oracle.py`` banks its
verdicts): a scenario put into a real kube-apiserver, kube-scheduler v1.36 placing its
pending pods one at a time, each pod's node or FailedScheduling message recorded.

    python tests/kube/kube_oracle.py SCENARIO.yaml [--out VERDICTS.json]

The scenario's objects of the kinds in ``KINDS`` (namespaces, priority classes, storage,
workload controllers, DRA; their ``status`` written through the status subresource, as
their controllers would; one the scenario has as being deleted created with a finalizer and
deleted), its Nodes (made Ready, as no kubelet runs here: the not-ready taint
admission adds replaced by the scenario's own taints) and bound pods are created first, each
pod adopted by the ReplicaSet, ReplicationController or StatefulSet its controller reference
names or whose selector matches it (as the controller-manager, absent here, would); then
the pending pods, in file order, each created only once the previous one is decided: bound,
nominated before a PreBind that waits on a controller this control plane lacks (a volume to
provision or bind; kube-scheduler v1.36 writes ``nominatedNodeName`` first), or given a
FailedScheduling event (a pod the API server refuses is recorded with its refusal). A
``KubeSchedulerConfiguration`` in the scenario is kube-scheduler's ``--config``. ``clear``
removes everything a scenario made, so that one control plane serves many.
``with_arrivals`` gives the same scenario for ``kubesched simulate``: the pending pods
arriving one virtual second apart, in that order.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kube_envtest import ApiFailure, ControlPlane, stop, track

SCHEDULER_KIND = "KubeSchedulerConfiguration"
ARRIVAL = "kubesched.io/arrival"
HOLD = "kubesched.io/oracle-hold"  # keeps an object the scenario has as being deleted
SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
_DROP_MD = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
            "selfLink", "ownerReferences", "finalizers")


@dataclass(frozen=True)
class Kind:
    prefix: str  # /api/v1 or /apis/GROUP/VERSION
    plural: str
    namespaced: bool
    status: bool = False  # its status is written through the status subresource

    def path(self, namespace: str | None, name: str = "") -> str:
        p = self.prefix + (f"/namespaces/{namespace}" if self.namespaced else "")
        return f"{p}/{self.plural}" + (f"/{name}" if name else "")


# In creation order: what a kind refers to comes before it.
KINDS = {
    "PriorityClass": Kind("/apis/scheduling.k8s.io/v1", "priorityclasses", False),
    "StorageClass": Kind("/apis/storage.k8s.io/v1", "storageclasses", False),
    "CSIDriver": Kind("/apis/storage.k8s.io/v1", "csidrivers", False),
    "CSINode": Kind("/apis/storage.k8s.io/v1", "csinodes", False),
    "CSIStorageCapacity": Kind("/apis/storage.k8s.io/v1", "csistoragecapacities", True),
    "PersistentVolume": Kind("/api/v1", "persistentvolumes", False, status=True),
    "PersistentVolumeClaim": Kind("/api/v1", "persistentvolumeclaims", True, status=True),
    "Service": Kind("/api/v1", "services", True),
    "ReplicationController": Kind("/api/v1", "replicationcontrollers", True),
    "ReplicaSet": Kind("/apis/apps/v1", "replicasets", True),
    "StatefulSet": Kind("/apis/apps/v1", "statefulsets", True),
    "PodDisruptionBudget": Kind("/apis/policy/v1", "poddisruptionbudgets", True, status=True),
    "DeviceClass": Kind("/apis/resource.k8s.io/v1", "deviceclasses", False),
    "ResourceSlice": Kind("/apis/resource.k8s.io/v1", "resourceslices", False),
    "ResourceClaim": Kind("/apis/resource.k8s.io/v1", "resourceclaims", True, status=True),
    "ResourceClaimTemplate": Kind("/apis/resource.k8s.io/v1", "resourceclaimtemplates", True),
}
POD = Kind("/api/v1", "pods", True)
NODE = Kind("/api/v1", "nodes", False)


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Refused(Exception):
    """The API server refused an object of the scenario (422 and the like)."""


# The controllers that adopt orphan pods their selector matches, in the order the simulator's
# controllers adopt (backends/sim/controllers.py), as upstream's do within moments of a pod's
# creation; this control plane runs no controller-manager, so the harness adopts for them.
ADOPTERS = ("ReplicaSet", "ReplicationController", "StatefulSet")


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str],
                     *, set_based: bool = True) -> bool:
    """A controller's ``spec.selector`` against a pod's labels (a ReplicationController's is
    a plain map); an empty or missing selector matches nothing, as for adoption."""
    if not selector:
        return False
    if not set_based:
        return all(labels.get(k) == v for k, v in selector.items())
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = {"In": key in labels and labels[key] in values,
              "NotIn": key not in labels or labels[key] not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return bool(selector.get("matchLabels") or selector.get("matchExpressions"))


def load_objects(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in yaml.load_all(path.read_text(), Loader=_Loader):
        if not isinstance(doc, dict):
            continue
        if doc.get("kind", "").endswith("List") and "items" in doc:
            out += [d for d in doc["items"] if isinstance(d, dict)]
        else:
            out.append(doc)
    return out


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    md = obj.setdefault("metadata", {})
    for k in _DROP_MD:
        md.pop(k, None)
    return obj


def is_pending(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Pod" and not (obj.get("spec") or {}).get("nodeName")


def with_arrivals(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scenario as ``simulate`` should read it to decide as the harness asks: pending pod
    i arrives at virtual second i."""
    out, i = [], 0
    for obj in objects:
        if is_pending(obj):
            obj = copy.deepcopy(obj)
            obj["metadata"].setdefault("annotations", {})[ARRIVAL] = str(i)
            i += 1
        out.append(obj)
    return out


class Oracle:
    def __init__(self, cp: ControlPlane, assets: Path, workdir: Path) -> None:
        self.cp = cp
        self.assets = assets
        self.dir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.controllers: list[dict[str, Any]] = []  # as created: their uids

    # -------------------------------------------------------------- the scenario

    def _namespaces(self, objects: list[dict[str, Any]]) -> None:
        names = {o["metadata"].get("namespace", "default") for o in objects
                 if (o.get("kind") in KINDS and KINDS[o["kind"]].namespaced)
                 or o.get("kind") == "Pod"}
        names |= {o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"}
        labels = {o["metadata"]["name"]: o["metadata"].get("labels") or {}
                  for o in objects if o.get("kind") == "Namespace"}
        for ns in sorted(names - SYSTEM_NAMESPACES):
            if self._create("/api/v1/namespaces", {
                    "apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": ns, "labels": labels.get(ns, {})}}) is None:
                # a namespace outlives its scenario (no namespace controller): its labels
                # are this scenario's
                self.cp.request("PATCH", f"/api/v1/namespaces/{ns}",
                                {"metadata": {"labels": labels.get(ns) or None}},
                                content_type="application/merge-patch+json")

    def _create(self, path: str, body: dict[str, Any]) -> Any:
        try:
            return self.cp.request("POST", path, body)
        except ApiFailure as e:
            if e.code != 409:
                raise
            return None

    def _object(self, obj: dict[str, Any]) -> None:
        kind = KINDS[obj["kind"]]
        obj = _clean(obj)
        status = obj.pop("status", None)
        ns = obj["metadata"].setdefault("namespace", "default") if kind.namespaced else None
        if not kind.namespaced:
            obj["metadata"].pop("namespace", None)
        path = kind.path(ns)
        deleting = obj["metadata"].pop("deletionTimestamp", None)
        if deleting:
            # held by a finalizer, then deleted: the server sets its own deletionTimestamp
            obj["metadata"]["finalizers"] = [HOLD]
        try:
            created = self.cp.request("POST", path, obj)
        except ApiFailure as e:
            raise Refused(f"{obj['kind']} {obj['metadata']['name']}: {e}") from None
        if deleting:
            self.cp.request("DELETE", kind.path(ns, obj["metadata"]["name"]))
        elif obj["kind"] == "PriorityClass":
            self.cp.await_priority_class(obj["metadata"]["name"])
        if obj["kind"] in ADOPTERS:
            self.controllers.append(created)
        if status and kind.status:
            self.cp.request("PATCH", kind.path(ns, obj["metadata"]["name"]) + "/status",
                            {"status": status}, content_type="application/merge-patch+json")

    def _node(self, obj: dict[str, Any]) -> None:
        obj = _clean(obj)
        status = obj.pop("status", {}) or {}
        name = obj["metadata"]["name"]
        try:
            self.cp.request("POST", "/api/v1/nodes", obj)
        except ApiFailure as e:
            raise Refused(f"Node {name}: {e}") from None
        # admission's node.kubernetes.io/not-ready taint replaced by the scenario's taints
        self.cp.request("PATCH", f"/api/v1/nodes/{name}",
                        {"spec": {"taints": (obj.get("spec") or {}).get("taints")}},
                        content_type="application/merge-patch+json")
        status.setdefault("allocatable", status.get("capacity"))
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
        status["conditions"] = [*conds, {"type": "Ready", "status": "True",
                                         "reason": "KubeletReady"}]
        self.cp.request("PATCH", f"/api/v1/nodes/{name}/status", {"status": status},
                        content_type="application/merge-patch+json")

    def load(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Everything but the pending pods created; those returned, in file order.
        ``Refused`` when the API server refuses one of them."""
        self._namespaces(objects)
        self.controllers = []
        for kind in KINDS:
            for obj in objects:
                if obj.get("kind") == kind:
                    self._object(obj)
        for obj in objects:
            if obj.get("kind") == "Node":
                self._node(obj)
        for obj in objects:
            if obj.get("kind") == "Pod" and not is_pending(obj):
                try:
                    self._pod(obj)
                except ApiFailure as e:
                    raise Refused(f"Pod {obj['metadata']['name']}: {e}") from None
        return [o for o in objects if is_pending(o)]

    def _owner(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        """The controller reference of ``pod`` on this server: the controller its own
        reference names, else the first to adopt it (see ADOPTERS)."""
        md = pod["metadata"]
        ns = md.get("namespace", "default")
        mine = [c for c in self.controllers if c["metadata"]["namespace"] == ns]
        ref = next((r for r in md.get("ownerReferences") or [] if r.get("controller")), None)
        if ref is not None:
            found = [c for c in mine if (c["kind"], c["metadata"]["name"]) == (
                ref.get("kind"), ref.get("name"))]
        else:
            labels = md.get("labels") or {}
            found = [c for kind in ADOPTERS for c in mine if c["kind"] == kind
                     and selector_matches(c["spec"].get("selector"), labels,
                                          set_based=kind != "ReplicationController")]
        if not found:
            return None
        c = found[0]
        return {"apiVersion": c["apiVersion"], "kind": c["kind"],
                "name": c["metadata"]["name"], "uid": c["metadata"]["uid"],
                "controller": True, "blockOwnerDeletion": True}

    def _pod(self, obj: dict[str, Any]) -> dict[str, Any]:
        owner = self._owner(obj)
        obj = _clean(obj)
        obj.pop("status", None)
        obj["spec"].pop("priority", None)  # the Priority admission plugin sets it
        if owner is not None:
            obj["metadata"]["ownerReferences"] = [owner]
        ns = obj["metadata"].setdefault("namespace", "default")
        return self.cp.request("POST", f"/api/v1/namespaces/{ns}/pods", obj)  # type: ignore[no-any-return]

    def clear(self) -> None:
        """Every object a scenario may have made removed (pods with grace period 0, as no
        kubelet confirms a deletion; finalizers dropped, as no controller would)."""
        namespaces = [n["metadata"]["name"]
                      for n in self.cp.request("GET", "/api/v1/namespaces")["items"]]
        for kind in [POD, *reversed(KINDS.values()), NODE]:
            for ns in namespaces if kind.namespaced else [None]:
                path = kind.path(ns)
                items = self.cp.request("GET", path)["items"]
                for o in items:
                    if o["metadata"].get("finalizers"):
                        self.cp.request("PATCH", kind.path(ns, o["metadata"]["name"]),
                                        {"metadata": {"finalizers": None}},
                                        content_type="application/merge-patch+json")
                if kind.plural in ("priorityclasses", "services"):
                    # the built-in ones stay: system-* classes, the kubernetes Service
                    for o in items:
                        name = o["metadata"]["name"]
                        if not name.startswith("system-") and name != "kubernetes":
                            self.cp.request("DELETE", kind.path(ns, name))
                elif items:
                    query = "?gracePeriodSeconds=0" if kind is POD else ""
                    self.cp.request("DELETE", path + query)

    # -------------------------------------------------------------- kube-scheduler

    def start_scheduler(self, config: dict[str, Any] | None = None) -> None:
        kubeconfig = self.cp.kubeconfig(self.dir / "scheduler.kubeconfig")
        args = [str(self.assets / "kube-scheduler"), f"--kubeconfig={kubeconfig}",
                "--leader-elect=false", "--secure-port=0"]
        if config is not None:
            config = copy.deepcopy(config)
            config.setdefault("clientConnection", {})["kubeconfig"] = str(kubeconfig)
            config.setdefault("leaderElection", {})["leaderElect"] = False
            path = self.dir / "scheduler-config.yaml"
            path.write_text(yaml.safe_dump(config))
            args.append(f"--config={path}")
        log = (self.dir / "kube-scheduler.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        track(self.proc)

    def stop_scheduler(self) -> None:
        if self.proc is not None:
            stop(self.proc)
        self.proc = None

    # -------------------------------------------------------------- one at a time

    def _failed(self, ns: str, uid: str) -> list[dict[str, Any]]:
        evs = self.cp.request("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
                              "?fieldSelector=reason%3DFailedScheduling")["items"]
        return [e for e in evs if e["regarding"].get("uid") == uid]

    def place(self, pending: list[dict[str, Any]], timeout: float = 30.0
              ) -> list[dict[str, Any]]:
        """Each pending pod created and decided before the next: its node, or the message
        of its first FailedScheduling event."""
        verdicts = []
        for obj in pending:
            try:
                created = self._pod(obj)
            except ApiFailure as e:
                if e.code != 422:
                    raise
                md = obj["metadata"]
                verdicts.append({"pod": f"{md.get('namespace', 'default')}/{md['name']}",
                                 "node": None, "refused": json.loads(e.body)["message"]})
                continue  # a pod the API server refuses (some golden cases hold them)
            ns, name = created["metadata"]["namespace"], created["metadata"]["name"]
            uid = created["metadata"]["uid"]
            deadline = time.monotonic() + timeout
            verdict: dict[str, Any] | None = None
            nominated_at = 0.0
            while verdict is None:
                if self.proc is not None and self.proc.poll() is not None:
                    raise RuntimeError("kube-scheduler exited; see "
                                       f"{self.dir / 'kube-scheduler.log'}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{ns}/{name}: no decision after {timeout}s")
                cur = self.cp.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
                if cur["spec"].get("nodeName"):
                    verdict = {"pod": f"{ns}/{name}", "node": cur["spec"]["nodeName"],
                               "message": None}
                    break
                failed = self._failed(ns, uid)
                nominated = (cur.get("status") or {}).get("nominatedNodeName")
                if nominated and not failed:
                    # set before a PreBind that waits for a volume controller; preemption
                    # nominates too, but with a FailedScheduling event right behind
                    nominated_at = nominated_at or time.monotonic()
                    if time.monotonic() - nominated_at > 1.0:
                        verdict = {"pod": f"{ns}/{name}", "node": nominated,
                                   "message": None, "nominated": True}
                        break
                if failed:
                    verdict = {"pod": f"{ns}/{name}", "node": None,
                               "message": failed[0]["note"]}
                    break
                time.sleep(0.05)
            verdicts.append(verdict)
        return verdicts


def main(argv: list[str] | None = None) -> int:
    import argparse

    from kube_envtest import find_assets, temp_dir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    objects = load_objects(args.scenario)
    config = next((o for o in objects if o.get("kind") == SCHEDULER_KIND), None)
    assets = find_assets()
    work = temp_dir("kubesched-oracle-")
    with ControlPlane(assets, work) as cp:
        oracle = Oracle(cp, assets, work)
        pending = oracle.load(objects)
        oracle.start_scheduler(config)
        try:
            verdicts = oracle.place(pending)
        finally:
            oracle.stop_scheduler()
    text = json.dumps({"scenario": str(args.scenario), "scheduler": "kube-scheduler v1.36.2",
                       "verdicts": verdicts}, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
