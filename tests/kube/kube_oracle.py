"""The real kube-scheduler as an oracle (issue 23, point 3 — the harness; banking verdicts is
still to do): a scenario put into a real kube-apiserver, kube-scheduler v1.36 placing its
pending pods one at a time, each pod's node or FailedScheduling message recorded.

    python tests/kube/kube_oracle.py SCENARIO.yaml [--out VERDICTS.json]

The scenario's Namespaces, PriorityClasses, Nodes (made Ready, as no kubelet runs here: the
not-ready taint admission adds replaced by the scenario's own taints, status written through
the status subresource) and bound pods are created first; then the pending pods, in file
order, each created only once the previous one is bound or has a FailedScheduling event (a
pod the API server refuses is recorded with its refusal). Other kinds are not loaded yet. A
``KubeSchedulerConfiguration`` in the scenario is kube-scheduler's ``--config``.
``with_arrivals`` gives the same scenario for ``kubesched simulate``: the pending pods
arriving one virtual second apart, in that order.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kube_envtest import ApiFailure, ControlPlane, stop, track

SCHEDULER_KIND = "KubeSchedulerConfiguration"
ARRIVAL = "kubesched.io/arrival"
SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
_DROP_MD = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
            "selfLink", "ownerReferences")


def load_objects(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(path.read_text()):
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

    # -------------------------------------------------------------- the scenario

    def _namespaces(self, objects: list[dict[str, Any]]) -> None:
        names = {o["metadata"].get("namespace", "default") for o in objects
                 if o.get("kind") == "Pod"}
        names |= {o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"}
        labels = {o["metadata"]["name"]: o["metadata"].get("labels") or {}
                  for o in objects if o.get("kind") == "Namespace"}
        for ns in sorted(names - SYSTEM_NAMESPACES):
            self._create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": ns,
                                                              "labels": labels.get(ns, {})}})

    def _create(self, path: str, body: dict[str, Any]) -> Any:
        try:
            return self.cp.request("POST", path, body)
        except ApiFailure as e:
            if e.code != 409:
                raise
            return None

    def _node(self, obj: dict[str, Any]) -> None:
        obj = _clean(obj)
        status = obj.pop("status", {}) or {}
        name = obj["metadata"]["name"]
        self.cp.request("POST", "/api/v1/nodes", obj)
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
        """Everything but the pending pods created; those returned, in file order."""
        self._namespaces(objects)
        for obj in objects:
            kind = obj.get("kind")
            if kind == "PriorityClass":
                self._create("/apis/scheduling.k8s.io/v1/priorityclasses", _clean(obj))
            elif kind == "Node":
                self._node(obj)
        for obj in objects:
            if obj.get("kind") == "Pod" and not is_pending(obj):
                self._pod(obj)
        return [o for o in objects if is_pending(o)]

    def _pod(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = _clean(obj)
        obj.pop("status", None)
        obj["spec"].pop("priority", None)  # the Priority admission plugin sets it
        ns = obj["metadata"].setdefault("namespace", "default")
        return self.cp.request("POST", f"/api/v1/namespaces/{ns}/pods", obj)  # type: ignore[no-any-return]

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
                evs = self.cp.request(
                    "GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
                failed = [e for e in evs if e.get("reason") == "FailedScheduling"
                          and e["regarding"].get("uid") == uid]
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
