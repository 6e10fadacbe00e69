"""cluster-autoscaler rules checked against answers worked out by hand from its code
(kubernetes/autoscaler: estimator/threshold_based_limiter.go with --max-nodes-per-scaleup,
simulator/utilization/info.go, core/scaledown/eligibility and planner).

Sizes: "1" cpu is 1000m."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.scenario import load_scenario
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.scaledown import utilization
from kubesched.autoscaler.scaleup import scale_up_options
from kubesched.cli import main
from kubesched.config import default_config

GROUP_LABEL = "kubesched.io/node-group"


def node(name: str, cpu: str, mem: str = "16Gi", gpus: int = 0,
         group: str | None = None) -> dict[str, Any]:
    cap = {"cpu": cpu, "memory": mem, "pods": "110"}
    if gpus:
        cap["nvidia.com/gpu"] = str(gpus)
    labels = {GROUP_LABEL: group} if group else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": cap}}


def pod(name: str, cpu: str, *, gpus: int = 0, node_name: str | None = None,
        mem: str = "1Gi") -> dict[str, Any]:
    req = {"cpu": cpu, "memory": mem}
    if gpus:
        req["nvidia.com/gpu"] = str(gpus)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x",
                                            "resources": {"requests": req, "limits": req}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "web", "uid": "uid-web",
                                              "controller": True}]},
            "spec": spec}


def group(name: str, cpu: str, max_size: int, gpus: int = 0) -> dict[str, Any]:
    cap = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    if gpus:
        cap["nvidia.com/gpu"] = str(gpus)
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "NodeGroup",
            "metadata": {"name": name},
            "spec": {"maxSize": max_size, "template": {"status": {"capacity": cap}}}}


def scenario(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


# -- scale-up: --max-nodes-per-scaleup (default 1000) caps one option's estimate


def test_one_option_adds_at_most_1000_nodes(tmp_path: Path) -> None:
    # 1001 pending 1-cpu pods, a 1-cpu group of maxSize 2000: one pod per new node, the
    # limiter refuses the 1001st node, so the option is 1000 nodes for 1000 pods
    docs = [group("one", "1", 2000), *(pod(f"p{i}", "1") for i in range(1001))]
    scen = load_scenario([str(scenario(tmp_path, docs))])
    config = default_config()

    def new_checker() -> PredicateChecker:
        return PredicateChecker(config, scen.objects, scen.namespaces)

    opts = scale_up_options(list(scen.pods), list(scen.objects["NodeGroup"]), {"one": 0},
                            new_checker)
    assert [(o.group.name, o.node_count, len(o.pods)) for o in opts.options] == \
        [("one", 1000, 1000)]
    # the group's room binds when it is less
    opts = scale_up_options(list(scen.pods), list(scen.objects["NodeGroup"]), {"one": 1997},
                            new_checker)
    assert [(o.node_count, len(o.pods)) for o in opts.options] == [(3, 3)]


# -- scale-down utilisation (simulator/utilization.Calculate)


def test_a_gpu_node_is_as_used_as_its_gpus() -> None:
    # 8 cpu, 4 GPUs; a pod of 7 cpu and 1 GPU: cpu 7/8 = 0.875, but on a GPU node only the
    # GPUs count: 1/4 = 0.25
    n = parse_node(node("g", "8", gpus=4))
    p = parse_pod(pod("a", "7", gpus=1, node_name="g"))
    assert utilization(n, [p]) == 0.25
    # without GPUs: the larger of cpu 7/8 and memory 1/16
    assert utilization(parse_node(node("c", "8")), [p]) == 0.875


def test_no_memory_allocatable_is_no_utilisation() -> None:
    # Calculate fails on a resource with no allocatable; the node's utilisation stays 0
    n = parse_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                    "status": {"capacity": {"cpu": "4", "pods": "110"}}})
    assert utilization(n, [parse_pod(pod("a", "3", node_name="n"))]) == 0.0


def _scale_down(tmp_path: Path, docs: list[dict[str, Any]]) -> list[str]:
    res = CliRunner().invoke(main, ["plan", str(scenario(tmp_path, docs)), "-o", "json",
                                    "--scale-down"])
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.output[res.output.index("{"):])
    return list(out["remove"])


def test_a_gpu_node_with_idle_gpus_is_removed(tmp_path: Path) -> None:
    # g-a: 7 cpu of 8 used, 1 GPU of 4: GPU utilisation 0.25 < 0.5 (the GPU threshold): a
    # candidate; its pod fits on g-b (8 cpu, 4 GPUs free), so g-a goes. g-b then holds it
    # and g-a is gone: g-b stays.
    docs = [group("g", "8", 10, gpus=4), node("g-a", "8", gpus=4, group="g"),
            node("g-b", "8", gpus=4, group="g"), pod("a", "7", gpus=1, node_name="g-a")]
    assert _scale_down(tmp_path, docs) == ["g-a"]


def test_pods_moved_by_a_removal_stay_moved(tmp_path: Path) -> None:
    # g-a holds a 1-cpu pod (1/4 = 0.25), g-b is empty (0): both candidates, utilisation
    # taken before the simulation. g-a first: its pod moves to g-b, g-a goes. g-b now holds
    # that pod, which fits nowhere else (g-a is gone): g-b stays.
    docs = [group("g", "4", 10), node("g-a", "4", group="g"), node("g-b", "4", group="g"),
            pod("a", "1", node_name="g-a")]
    assert _scale_down(tmp_path, docs) == ["g-a"]
