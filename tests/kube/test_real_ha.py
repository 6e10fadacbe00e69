"""Two ``kubesched run`` processes on a real kube-apiserver, as deploy/ installs them: the
ServiceAccount, ClusterRole and leader-election Role of ``deploy/rbac.yaml`` (a bound token
from TokenRequest, as a pod would mount it) and the configuration of ``deploy/config.yaml``
with shorter lease timings. Only the leader binds; on SIGTERM it releases the Lease and the
other takes over; no request is refused by RBAC."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_envtest import ApiFailure
from kube_helpers import wait_until
from kube_real import Cluster, pod

import kubesched

pytestmark = pytest.mark.real_server

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SRC = Path(kubesched.__file__).resolve().parents[1]
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"
BOUND = "Successfully bound pod to node"


def _collection(doc: dict[str, Any]) -> str:
    ns = doc["metadata"].get("namespace")
    if doc["kind"] == "ServiceAccount":
        return f"/api/v1/namespaces/{ns}/serviceaccounts"
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    plural = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
              "Role": "roles", "RoleBinding": "rolebindings"}[doc["kind"]]
    return f"{rbac}/namespaces/{ns}/{plural}" if ns else f"{rbac}/{plural}"


def install_rbac(c: Cluster) -> None:
    for doc in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()):
        if not doc:
            continue
        try:
            c.request("POST", _collection(doc), doc)
        except ApiFailure as e:
            if e.code != 409:  # left by an earlier test of the session
                raise


def deploy_config(tmp: Path) -> Path:
    cm = next(d for d in yaml.safe_load_all((DEPLOY / "config.yaml").read_text()) if d)
    conf = yaml.safe_load(cm["data"]["config.yaml"])
    conf["leaderElection"].update(leaseDuration="4s", renewDeadline="3s", retryPeriod="500ms")
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(conf))
    return path


class Instance:
    def __init__(self, name: str, kubeconfig: str, config: Path, tmp: Path) -> None:
        self.name = name
        self.log = tmp / f"{name}.log"
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kubesched", "run", "--kubeconfig", kubeconfig,
                 "--config", str(config), "--address", "127.0.0.1:0", "--id", name,
                 "--shutdown-timeout", "5"],
                stdout=out, stderr=subprocess.STDOUT, env=env)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def bound(self) -> int:
        return self.text().count(BOUND)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def holder(c: Cluster) -> str | None:
    try:
        return str(c.request("GET", LEASE)["spec"].get("holderIdentity") or "")
    except ApiFailure:
        return None


def test_two_instances_under_deploy_rbac_hand_over_on_sigterm(
        cluster: Cluster, tmp_path: Path) -> None:
    install_rbac(cluster)
    token = cluster.cp.service_account_token("kube-system", "kubesched")
    kubeconfig = str(cluster.cp.kubeconfig(tmp_path / "sa-kubeconfig", token=token,
                                           user="kubesched"))
    config = deploy_config(tmp_path)
    cluster.ready_node("n0", cpu="8")
    started: list[Instance] = []
    try:
        a = Instance("a", kubeconfig, config, tmp_path)
        started.append(a)
        wait_until(lambda: holder(cluster) == "a", timeout=60, interval=0.2, what="a leads")
        b = Instance("b", kubeconfig, config, tmp_path)
        started.append(b)
        wait_until(lambda: "kubesched starting" in b.text(), timeout=60, interval=0.2,
                   what="b started")
        for i in range(5):
            cluster.create_pod(pod(f"first{i}"))
        wait_until(lambda: len(cluster.bound()) == 5, timeout=30, what="first pods bound")
        wait_until(lambda: a.bound() == 5, what="a's log")
        assert b.bound() == 0
        a.proc.send_signal(signal.SIGTERM)
        assert a.proc.wait(30) == 0, a.text()[-3000:]
        assert "released lease kube-system/kubesched" in a.text()
        wait_until(lambda: holder(cluster) == "b", timeout=10, interval=0.1,
                   what="b takes the lease")
        for i in range(5):
            cluster.create_pod(pod(f"second{i}"))
        wait_until(lambda: len(cluster.bound()) == 10, timeout=30, what="second pods bound")
        wait_until(lambda: b.bound() == 5, what="b's log")
        assert a.bound() == 5
        for inst in started:
            text = inst.text().lower()
            assert "forbidden" not in text and " 403 " not in text, inst.text()[-3000:]
    finally:
        for inst in started:
            inst.stop()
