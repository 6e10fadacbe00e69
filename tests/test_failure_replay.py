"""Failed attempts replayed for identical pods (``scheduler/failures.py``) against every
attempt run in full, on random clusters with ReplicaSets that do not fit, pods finishing,
priorities that preempt and nodes tainted: the same placements, attempts, events and
messages, preemptions, random draws and start index."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.apiserver import ApiServer
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import default_config
from kubesched.scheduler.failures import FailureMemo
from random_clusters import replica_set


def _docs(rng: random.Random) -> list[dict[str, Any]]:
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
        docs.append(replica_set(rng, j, spec))
    return docs


def _run(text: str, seed: int, replay: bool, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[Any, ...]:
    events: list[tuple[str, str, str]] = []
    monkeypatch.setattr(ApiServer, "record_event",
                        lambda self, pod, _t, reason, message: events.append(
                            (pod.key, reason, message)))
    kept = []
    real_keep = FailureMemo.keep

    def keep(self: FailureMemo, *a: Any) -> None:
        kept.append(1)
        real_keep(self, *a)

    monkeypatch.setattr(FailureMemo, "keep", keep)
    if not replay:
        monkeypatch.setattr(FailureMemo, "recall", lambda self, key: None)
    sim = SimCluster(load_scenario_text(text, "<test>"), default_config(), seed=seed)
    res = sim.run()
    sched = sim.scheduler
    monkeypatch.undo()
    return ([(r.key, r.node, r.time, r.attempts, r.message) for r in res.records],
            res.preemptions, events, sched.handle.rng.getstate(),
            sched.next_start_node_index, sched.queue.scheduling_cycle,
            {n: f.batch.flushes for n, f in sched.profiles.items()}), len(kept)


@pytest.mark.parametrize("seed", range(30))
def test_replayed_failures_change_nothing(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text = yaml.safe_dump_all(_docs(random.Random(seed)))
    full, _ = _run(text, seed, False, monkeypatch)
    replayed, kept = _run(text, seed, True, monkeypatch)
    assert replayed == full
    if seed == 0:
        assert kept  # the replays were there to compare
