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
