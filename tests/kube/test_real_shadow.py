"""Shadow mode for real (issue 23, point 4): ``kubesched run --shadow default-scheduler
--dry-run`` beside the real kube-scheduler v1.36.2 on one kube-apiserver. kube-scheduler
places a tie-free workload (nodes of unequal sizes in three zones; pods of several sizes,
some spread over zones, some preferring a zone, some avoiding each other), one pod at a
time; kubesched evaluates every binding and agrees with each, as its
``kubesched_shadow_evaluations_total`` counts on ``/metrics``. The dry run binds nothing:
its own pod stays pending. That the workload is tie-free is checked, not assumed:
``kubesched simulate`` on the same objects reports no tie in its score tables (and places
every pod where kube-scheduler did)."""

from __future__ import annotations

import json
import logging
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_helpers import make_runner, wait_until
from kube_oracle import Oracle, with_arrivals
from kube_real import Cluster, pod

from kubesched.backends.kube.commands import default_run_config
from kubesched.config.features import FeatureGates

pytestmark = pytest.mark.real_server

ZONE = "topology.kubernetes.io/zone"
SCHEDULER = "default-scheduler"
NODES = [  # name, cpu, memory, zone: no two alike
    ("n0", "2", "4Gi", "a"), ("n1", "3", "8Gi", "a"), ("n2", "4", "6Gi", "b"),
    ("n3", "6", "12Gi", "b"), ("n4", "8", "10Gi", "c"), ("n5", "5", "16Gi", "c")]


def workload() -> list[dict[str, Any]]:
    pods = []
    for i in range(18):
        cpu = ["100m", "300m", "700m", "1200m"][i % 4]
        memory = ["128Mi", "900Mi", "300Mi", "2Gi", "600Mi"][i % 5]
        app = ["web", "db", "cache"][i % 3]
        spec: dict[str, Any] = {}
        if app == "web":
            spec["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}}]
        elif app == "db":
            prefer_b = {"key": ZONE, "operator": "In", "values": ["b"]}
            spec["affinity"] = {"nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 40, "preference": {"matchExpressions": [prefer_b]}}]}}
        else:
            spec["affinity"] = {"podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 70, "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "cache"}}}}]}}
        pods.append(pod(f"p{i:02}", cpu, memory, scheduler=SCHEDULER, labels={"app": app},
                        **spec))
    pods.append(pod("huge", "9", "1Gi", scheduler=SCHEDULER))  # fits nowhere
    return pods


def _metric(port: int, line_start: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics") as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(line_start):
                return float(line.rsplit(" ", 1)[1])
    return None


def test_shadow_agrees_with_kube_scheduler_on_every_pod(
        cluster: Cluster, envtest_assets: Path, runners: list, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    from click.testing import CliRunner

    from kubesched.cli import main

    caplog.set_level(logging.INFO, logger="kubesched.kube")
    for name, cpu, memory, zone in NODES:
        cluster.ready_node(name, cpu=cpu, memory=memory, labels={ZONE: zone})
    runner = make_runner(cluster.kubeconfig, runners, shadow=SCHEDULER, dry_run=True,
                         config=default_run_config(FeatureGates("1.36")))
    wait_until(lambda: all(i.synced.is_set() for i in runner.informers), what="sync")

    pods = workload()
    for p in pods:
        p["metadata"]["namespace"] = cluster.namespace
    oracle = Oracle(cluster.cp, envtest_assets, tmp_path)
    oracle.start_scheduler()
    try:
        verdicts = oracle.place(pods, timeout=60)
    finally:
        oracle.stop_scheduler()
    bound = [v for v in verdicts if v["node"]]
    assert len(bound) == len(pods) - 1 and verdicts[-1]["node"] is None
    assert len({v["node"] for v in bound}) == len(NODES)  # every node chosen at least once

    wait_until(lambda: sum(runner.shadow.values()) == len(bound), timeout=30,
               what="every binding evaluated")
    assert dict(runner.shadow) == {"agree": len(bound)}
    evaluated = [r.kv for r in caplog.records if r.getMessage() == "shadow evaluation"]
    assert sorted((e["pod"], e["kubesched"]) for e in evaluated) == sorted(
        (v["pod"], [v["node"]]) for v in bound)  # one best node each: no tie
    port = runner.server.port
    key = f'kubesched_shadow_evaluations_total{{result="%s",scheduler="{SCHEDULER}"}}'
    assert _metric(port, key % "agree") == len(bound)
    assert _metric(port, key % "disagree") in (None, 0.0)
    # kubesched's own pod, after the shadowed ones (a dry run keeps its decision in the
    # cache, which would change the scores of what follows): decided, never bound
    cluster.create_pod(pod("ours", "100m"))
    wait_until(lambda: runner.backend.decisions.get("bind") == 1, what="a dry-run decision")
    assert cluster.get_pod("ours")["spec"].get("nodeName") is None  # type: ignore[index]
    assert runner.backend.bound == 0

    # the workload is tie-free by kubesched's own score tables, and simulate agrees too
    nodes = [{"apiVersion": "v1", "kind": "Node", **n}
             for n in cluster.request("GET", "/api/v1/nodes")["items"]]
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump_all(with_arrivals([*nodes, *pods])))
    decisions, placements = tmp_path / "decisions.jsonl", tmp_path / "placements.jsonl"
    res = CliRunner().invoke(main, ["simulate", str(path), "--kubernetes-version", "1.36",
                                    "--decisions", str(decisions), "--decisions-top", "2",
                                    "--placements", str(placements), "--quiet"])
    assert res.exit_code == 0, res.output
    for d in map(json.loads, decisions.read_text().splitlines()):
        top = d["top"]
        assert not d["node"] or len(top) < 2 or top[0]["total"] > top[1]["total"], d
    ours = {r["pod"]: r["node"] for r in map(json.loads, placements.read_text().splitlines())}
    assert ours == {v["pod"]: v["node"] for v in verdicts}
