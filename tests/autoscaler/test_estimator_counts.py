"""The estimator places a group whose filters read only resources by counts (how many of
its identical pods each node takes, from the filters' batch forms on changed columns); the
answer must be the one its pods get one by one. Random groups — resources, pod limits,
anti-affinity, spread and host ports (which read the pods on a node, so go one by one and
make the counted pods be placed in the snapshot first) — on random templates and limits,
both ways."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.estimator import (
    Estimate,
    _Binpacking,
    equivalence_groups,
    order_groups,
)
from kubesched.config import default_config

CONFIG = default_config()


def pod(i: int, rs: str, cpu: str, mem: str, extra: dict[str, Any]) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"cpu": cpu, "memory": mem}}}]}
    spec.update(extra)
    return parse_pod({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}",
                     "labels": {"app": rs},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": rs, "uid": f"uid-{rs}",
                                          "controller": True}]},
        "spec": spec})


def node(name: str, cpu: str, mem: str, pods: str) -> Node:
    return parse_node({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                       "status": {"capacity": {"cpu": cpu, "memory": mem, "pods": pods}}})


def extra_spec(rng: random.Random, app: str, cpu: str, mem: str) -> dict[str, Any]:
    r = rng.random()
    if r < 0.15:
        return {"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": app}},
                "topologyKey": "kubernetes.io/hostname"}]}}}
    if r < 0.25:
        return {"topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}}}]}
    if r < 0.3:
        return {"containers": [{"name": "c", "image": "x",
                                "ports": [{"containerPort": 80, "hostPort": 8080}],
                                "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    return {}


def both_ways(seed: int) -> tuple[Estimate, Estimate]:
    rng = random.Random(seed)
    cpu, mem = rng.choice(["1", "2", "4", "8"]), rng.choice(["2Gi", "4Gi", "16Gi"])
    max_pods = rng.choice(["3", "10", "110"])
    pods: list[Pod] = []
    for g in range(rng.randint(1, 5)):
        pcpu = rng.choice(["100m", "250m", "500m", "1", "3", "9"])
        pmem = rng.choice(["100Mi", "1Gi", "3Gi"])
        extra = extra_spec(rng, f"rs{g}", pcpu, pmem)
        pods += [pod(len(pods) + k, f"rs{g}", pcpu, pmem, extra)
                 for k in range(rng.randint(1, 40))]
    groups = order_groups(equivalence_groups(pods), node("t", cpu, mem, max_pods))
    limit = rng.choice([1, 3, 10, 1000])

    def new_node(i: int) -> Node:
        return node(f"n-{i}", cpu, mem, max_pods)

    def run(counts: bool) -> Estimate:
        checker = PredicateChecker(CONFIG, {}, {})
        return _Binpacking(new_node, limit, checker, counts=counts).run(groups)

    return run(True), run(False)


@pytest.mark.parametrize("seed", range(40))
def test_counts_give_the_one_by_one_answer(seed: int) -> None:
    counted, one_by_one = both_ways(seed)
    assert counted.node_count == one_by_one.node_count
    assert [p.uid for p in counted.pods] == [p.uid for p in one_by_one.pods]
