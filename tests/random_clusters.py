"""Pieces of the random clusters that the scheduler's equivalence tests draw."""

from __future__ import annotations

import random
from typing import Any


def replica_set(rng: random.Random, j: int, spec: dict[str, Any], min_replicas: int = 1
                ) -> dict[str, Any]:
    """ReplicaSet ``rs<j>`` of pods with ``spec``: ``min_replicas`` to 12 of them, each
    running 30, 200 or 2000 s, the set arriving at 0 or 50 s."""
    annotations = {"kubesched.io/duration": str(rng.choice([30, 200, 2000]))}
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"rs{j}", "namespace": "default",
                     "annotations": {"kubesched.io/arrival": str(rng.choice([0, 0, 50]))}},
        "spec": {"replicas": rng.randint(min_replicas, 12),
                 "selector": {"matchLabels": {"a": f"{j}"}},
                 "template": {"metadata": {"labels": {"a": f"{j}"}, "annotations": annotations},
                              "spec": spec}}}


def crowded_cluster(rng: random.Random, min_replicas: int = 1) -> list[dict[str, Any]]:
    """A few small nodes (some tainted, some holding few pods) and ReplicaSets of pods that
    do not all fit (some of higher priority, some with a node selector or a toleration),
    each pod running for a while: pods wait for others to finish."""
    docs: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 7)):
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}},
            "status": {"capacity": {"cpu": str(rng.choice([2, 4])), "memory": "8Gi",
                                    "pods": str(rng.choice([3, 110]))}}}
        if rng.random() < 0.2:
            node["spec"] = {"taints": [{"key": "t", "value": "x", "effect": "NoSchedule"}]}
        docs.append(node)
    for j in range(rng.randint(2, 5)):
        spec: dict[str, Any] = {
            "priority": rng.choice([0, 0, 0, 100]),
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {
                "cpu": f"{rng.choice([500, 1500, 3000, 5000])}m",
                "memory": f"{rng.choice([256, 2048])}Mi"}}}]}
        if rng.random() < 0.3:
            spec["nodeSelector"] = {"zone": rng.choice(["z0", "z1", "z9"])}
        if rng.random() < 0.3:
            spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
        docs.append(replica_set(rng, j, spec, min_replicas))
    return docs
