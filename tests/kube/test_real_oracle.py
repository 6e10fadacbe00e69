"""The oracle harness (kube_oracle.py) on a small tie-free scenario: kube-scheduler v1.36.2
places the pending pods one at a time on a real kube-apiserver, and ``kubesched simulate
--kubernetes-version 1.36`` decides the same pods arriving in the same order: the same
node for every pod, the same FailedScheduling message for the one that fits nowhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_oracle import Oracle, with_arrivals
from kube_real import Cluster

pytestmark = pytest.mark.real_server


def scenario(ns: str) -> list[dict[str, Any]]:
    def node(name: str, cpu: str, memory: str, **labels: str) -> dict[str, Any]:
        res = {"cpu": cpu, "memory": memory, "pods": "110"}
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                      **labels}},
                "spec": {}, "status": {"capacity": res, "allocatable": res}}

    def pod(name: str, cpu: str, memory: str, **spec: Any) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"containers": [{"name": "c", "image": "registry.example/app:1",
                                         "resources": {"requests": {"cpu": cpu,
                                                                    "memory": memory}}}],
                         **spec}}

    return [
        node("small", "2", "4Gi", disk="ssd"),
        node("mid", "4", "6Gi"),
        node("big", "8", "32Gi", disk="ssd"),
        pod("web", "500m", "1Gi"),
        pod("db", "3", "2Gi", nodeSelector={"disk": "ssd"}),
        pod("cache", "1", "4Gi"),
        pod("batch", "1500m", "512Mi"),
        pod("huge", "16", "1Gi"),
    ]


def test_kube_scheduler_and_simulate_agree(cluster: Cluster, envtest_assets: Path,
                                           tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kubesched.cli import main

    objects = scenario(cluster.namespace)
    oracle = Oracle(cluster.cp, envtest_assets, tmp_path)
    pending = oracle.load(objects)
    oracle.start_scheduler()
    try:
        verdicts = oracle.place(pending, timeout=60)
    finally:
        oracle.stop_scheduler()
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(with_arrivals(objects)))
    placements = tmp_path / "placements.jsonl"
    res = CliRunner().invoke(main, ["simulate", str(path), "--kubernetes-version", "1.36",
                                    "--placements", str(placements)])
    assert res.exit_code == 0, res.output
    ours = {r["pod"]: r for r in map(json.loads, placements.read_text().splitlines())}
    for v in verdicts:
        got = ours[v["pod"]]
        assert got["node"] == v["node"], (v, got)
        if v["message"] is not None:
            assert got["message"] == v["message"], (v, got)
    assert [v["node"] for v in verdicts][-1] is None  # huge fits nowhere
