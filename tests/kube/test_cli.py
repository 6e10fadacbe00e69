"""The ``kubesched run`` and ``snapshot`` commands: a real process stopped by SIGTERM with
bindings in flight, bad input, and a snapshot that simulate and explain load."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import kube_double as kd
from click.testing import CliRunner
from kube_double import ApiServerDouble, node, pod
from kube_helpers import assert_bound_once, assert_fits, make_runner, wait_until

from kubesched.cli import main


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_mid_run_leaves_nothing_half_bound(double: ApiServerDouble, kubeconfig: str,
                                                   tmp_path: Path, runners: list) -> None:
    for i in range(3):
        double.create(node(f"n{i}", cpu="4"))
    for i in range(30):
        double.create(pod(f"p{i}", cpu="100m"))
    double.hang = 3.0
    # the first bindings, and the retries after them, get no answer in time: they are in
    # flight when SIGTERM comes, even when a loaded machine is slow to deliver it
    double.bind_faults.extend([kd.HANG_BEFORE, kd.HANG_AFTER] * 4)
    port = free_port()
    log_path = tmp_path / "run.log"
    cfg = tmp_path / "config.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "kind: KubeSchedulerConfiguration\n"
                   "leaderElection: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 200ms}\n"
                   "profiles: [{schedulerName: kubesched}]\n")
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli", "run", "--kubeconfig", kubeconfig,
             "--config", str(cfg), "--address", f"127.0.0.1:{port}", "--request-timeout",
             "1", "--shutdown-timeout", "15", "--log-format", "json", "--id", "first"],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        wait_until(lambda: len(double.stats.binding_requests) >= 3, timeout=20,
                   what="bindings under way")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [json.loads(x) for x in log_path.read_text().splitlines() if x.startswith("{")]
    stopping = [x for x in lines if x["msg"] == "shutting down"]
    assert stopping and stopping[0]["bindingsInFlight"] >= 1, "SIGTERM came mid-binding"
    done = [x for x in lines if x["msg"] == "shutdown complete"]
    assert done and done[0]["bindingsInFlight"] == 0, log_path.read_text()[-3000:]
    assert done[0]["bindRetries"] >= 1
    assert not [x for x in lines if "outcome is unknown" in x["msg"]]
    # every pod kubesched started to bind is bound, once
    asked = {k for k, _n, _f in double.stats.binding_requests}
    bound = double.bound_pods()
    assert asked <= set(bound), f"half-bound: {asked - set(bound)}"
    assert_bound_once(double)
    lease = double.get("Lease", "kubesched", "kube-system")
    assert not lease["spec"].get("holderIdentity"), "the lease was released"
    # a new instance binds the rest
    make_runner(kubeconfig, runners)
    wait_until(lambda: len(double.bound_pods()) == 30, what="the rest bound")
    assert_bound_once(double)
    assert_fits(double)


def test_run_refuses_bad_configuration_and_kubeconfig(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "kind: KubeSchedulerConfiguration\nparallelism: -1\n")
    res = CliRunner().invoke(main, ["run", "--kubeconfig", str(tmp_path / "none"),
                                    "--config", str(bad)])
    assert res.exit_code == 2 and "bad.yaml" in res.output and "parallelism" in res.output
    good = tmp_path / "good.yaml"
    good.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\n")
    res = CliRunner().invoke(main, ["run", "--kubeconfig", str(tmp_path / "none"),
                                    "--config", str(good)])
    assert res.exit_code == 2 and "no such file" in res.output
    res = CliRunner().invoke(main, ["run", "--kubeconfig", str(tmp_path / "none"),
                                    "--address", "nonsense"])
    assert res.exit_code == 2


def test_snapshot_loads_in_simulate_and_explain(double: ApiServerDouble, kubeconfig: str,
                                               tmp_path: Path) -> None:
    double.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    double.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                   "metadata": {"name": "high"}, "value": 1000})
    for i in range(2):
        double.create(node(f"n{i}", cpu="2"))
    double.create(pod("running", cpu="1", node_name="n0", scheduler="default-scheduler"))
    double.create(pod("pending", cpu="1", scheduler="default-scheduler"))
    double.create(pod("team-pod", cpu="500m", namespace="team",
                      scheduler="default-scheduler"))
    done = pod("done", node_name="n1", scheduler="default-scheduler")
    done["status"]["phase"] = "Succeeded"
    double.create(done)
    bad = pod("bad", scheduler="default-scheduler")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "x"
    double.create(bad)
    double.create({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "web", "namespace": "default"},
                   "spec": {"selector": {"app": "web"}}})
    out = tmp_path / "snap.yaml"
    res = CliRunner().invoke(main, ["snapshot", "--kubeconfig", kubeconfig, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "skipping Pod default/bad" in res.output
    text = out.read_text()
    assert "managedFields" not in text and "done" not in text
    res = CliRunner().invoke(main, ["simulate", str(out), "--check", "--placements", "-"])
    assert res.exit_code == 0, res.output
    placed = {json.loads(x)["pod"]: json.loads(x)["node"] for x in res.output.splitlines()
              if x.startswith("{")}
    assert placed == {"default/pending": "n1", "team/team-pod": "n1"} or \
        set(placed) == {"default/pending", "team/team-pod"}
    res = CliRunner().invoke(main, ["explain", str(out), "--pod", "default/pending",
                                    "-o", "json"])
    assert res.exit_code == 0, res.output
    verdict = json.loads(res.output)
    assert [n["node"] for n in verdict["nodes"]] == ["n0", "n1"]
    # stdout works too
    res = CliRunner().invoke(main, ["snapshot", "--kubeconfig", kubeconfig])
    assert res.exit_code == 0 and "kind: Node" in res.output


def test_snapshot_of_unreachable_server(tmp_path: Path) -> None:
    d = ApiServerDouble()
    port = free_port()
    d.port = port
    kc = d.kubeconfig(str(tmp_path / "kc"))
    res = CliRunner().invoke(main, ["snapshot", "--kubeconfig", kc])
    assert res.exit_code == 1 and "reading the cluster" in res.output
    time.sleep(0)
