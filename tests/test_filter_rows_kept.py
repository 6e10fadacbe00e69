"""Filter verdicts kept per node for pods of one signature (``Framework.filter_batch_kept``):
on random clusters with ReplicaSets of identical pods, host ports, node selectors, taints,
pods finishing, nodes going NotReady and Ready again, deleted, and bindings failing, every
verdict read back equals the one every Filter plugin gives on that node now, and a run
decides exactly as one that filters every node in every cycle."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from kept_filter import checking_kept_verdicts
from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import default_config, load_config
from kubesched.framework.runtime import Framework
from random_clusters import replica_set


def _docs(rng: random.Random) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    n_nodes = rng.randint(3, 8)
    for i in range(n_nodes):
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}},
            "status": {"capacity": {"cpu": str(rng.choice([2, 4, 8])), "memory": "8Gi",
                                    "pods": str(rng.choice([3, 110]))}}}
        if rng.random() < 0.2:
            node["spec"] = {"taints": [{"key": "t", "value": "x", "effect": "NoSchedule"}]}
        elif rng.random() < 0.1:
            node["spec"] = {"unschedulable": True}
        docs.append(node)
    for j in range(rng.randint(2, 5)):
        container: dict[str, Any] = {"name": "c", "image": "x", "resources": {"requests": {
            "cpu": f"{rng.choice([250, 500, 1500, 3000])}m",
            "memory": f"{rng.choice([256, 2048])}Mi"}}}
        if rng.random() < 0.3:
            container["ports"] = [{"containerPort": 80, "hostPort": rng.choice([80, 81])}]
        spec: dict[str, Any] = {"containers": [container]}
        if rng.random() < 0.3:
            spec["nodeSelector"] = {"zone": rng.choice(["z0", "z1"])}
        if rng.random() < 0.3:
            spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
        docs.append(replica_set(rng, j, spec, min_replicas=3))
    faults: list[dict[str, Any]] = []
    for k in range(rng.randint(0, 4)):
        node = f"n{rng.randrange(n_nodes)}"
        at = rng.choice([10, 40, 100, 300])
        action = rng.choice(["NodeNotReady", "NodeReady", "DeleteNode", "BindError"])
        spec = {"at": at, "action": action, "node": node}
        if action == "BindError":
            spec["count"] = rng.randint(1, 3)
        faults.append({"apiVersion": "kubesched.io/v1alpha1", "kind": "Fault",
                       "metadata": {"name": f"f{k}"}, "spec": spec})
    return docs + faults


def _placements(text: str, seed: int, config: Any) -> list[tuple[Any, ...]]:
    sim = SimCluster(load_scenario_text(text, "<test>"), config, seed=seed)
    res = sim.run()
    return [(r.key, r.node, r.time, r.attempts, r.message) for r in res.records]


@pytest.mark.parametrize("seeds", [range(0, 12), range(12, 24)])
def test_kept_verdicts_are_the_filters_verdicts(seeds: range,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    reused = 0
    for seed in seeds:
        text = yaml.safe_dump_all(_docs(random.Random(seed)))
        with checking_kept_verdicts() as stats:
            kept = _placements(text, seed, default_config())
        assert stats.calls > 0, seed
        reused += stats.read_back > 0
        with monkeypatch.context() as m:
            m.setattr(Framework, "rows_kept_key", lambda self, state, pod: None)
            assert _placements(text, seed, default_config()) == kept, seed
    # most runs read verdicts back (the others' pods fitted at the nominated or hinted node,
    # or failed as an identical pod had: failures.py)
    assert reused >= len(seeds) * 2 // 3, reused


def test_pods_of_one_shape_are_filtered_on_the_nodes_that_changed() -> None:
    """Ten identical pods on ten nodes: the first is filtered on every node, each next one
    on the node the one before went to (its row changed) only."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
         "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for i in range(10)]
    docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                 "metadata": {"name": "rs", "namespace": "default"},
                 "spec": {"replicas": 10, "selector": {"matchLabels": {"a": "b"}},
                          "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                              "containers": [{"name": "c", "image": "x", "resources": {
                                  "requests": {"cpu": "1", "memory": "1Gi"}}}]}}}})
    with checking_kept_verdicts() as stats:
        placed = _placements(yaml.safe_dump_all(docs), 1, default_config())
    assert len({node for _k, node, *_ in placed}) == 10
    assert (stats.calls, stats.rows, stats.computed) == (10, 100, 10 + 9)


def test_plugins_that_are_not_row_local_keep_nothing() -> None:
    """A pod with required anti-affinity runs InterPodAffinity's Filter, whose verdict on a
    node depends on the pods of other nodes in its zone: nothing is kept for it."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}},
         "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for i in range(4)]
    term = {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}
    docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                 "metadata": {"name": "rs", "namespace": "default"},
                 "spec": {"replicas": 3, "selector": {"matchLabels": {"a": "b"}},
                          "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                              "affinity": {"podAntiAffinity": {
                                  "requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                              "containers": [{"name": "c", "image": "x"}]}}}})
    with checking_kept_verdicts() as stats:
        placed = _placements(yaml.safe_dump_all(docs), 1, load_config(
            {"apiVersion": "kubescheduler.config.k8s.io/v1",
             "kind": "KubeSchedulerConfiguration"}, "<test>"))
    assert sorted(node is not None for _k, node, *_ in placed) == [False, True, True]
    assert stats.calls == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kept_verdicts_on_a_cluster_scanned_in_several_chunks(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """1 200 nodes, few of which fit: the kept verdicts are asked for in chunks of about
    twice the nodes still needed, so the scan goes through several of them (and through
    all, for the pods that fit nowhere); where it stops, what it records of the failures
    and where the next scan starts are those of a pass over every node."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(1200):
        zone = "z0" if rng.random() < 0.12 else "z1"
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n{i:04d}", "labels": {"zone": zone}},
            "status": {"capacity": {"cpu": str(rng.choice([2, 2, 2, 8])), "memory": "8Gi",
                                    "pods": "110"}}}
        if rng.random() < 0.1:
            node["spec"] = {"taints": [{"key": "t", "value": "x", "effect": "NoSchedule"}]}
        docs.append(node)
    shapes: list[dict[str, Any]] = [
        {"nodeSelector": {"zone": "z0"}},
        {"nodeSelector": {"zone": "nowhere"}},
        {},
    ]
    for j, extra in enumerate(shapes):
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {
            "requests": {"cpu": rng.choice(["500m", "3"]), "memory": "256Mi"}}}], **extra}
        docs.append(replica_set(rng, j, spec, min_replicas=12))
    docs.append({"apiVersion": "kubescheduler.config.k8s.io/v1",
                 "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 5})
    text = yaml.safe_dump_all(docs)
    sc = load_scenario_text(text, "<test>")
    config = load_config(sc.config, "<test>")
    with checking_kept_verdicts() as stats:
        kept = _placements(text, seed, config)
    assert stats.calls > 0
    assert any(node is None for _k, node, *_ in kept)
    with monkeypatch.context() as m:
        m.setattr(Framework, "rows_kept_key", lambda self, state, pod: None)
        assert _placements(text, seed, config) == kept
