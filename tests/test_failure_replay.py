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
from kubesched.config import default_config, load_config
from kubesched.config.features import FeatureGates
from kubesched.scheduler.failures import FailureMemo
from random_clusters import crowded_cluster


def _run(text: str, seed: int, replay: bool, monkeypatch: pytest.MonkeyPatch,
         config: Any = None, release: str | None = None) -> tuple[Any, ...]:
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
    scenario = load_scenario_text(text, "<test>", release=release) if release \
        else load_scenario_text(text, "<test>")
    sim = SimCluster(scenario, config or default_config(), seed=seed)
    res = sim.run()
    sched = sim.scheduler
    monkeypatch.undo()
    return ([(r.key, r.node, r.time, r.attempts, r.message) for r in res.records],
            res.preemptions, events, sched.handle.rng.getstate(),
            sched.next_start_node_index, sched.queue.scheduling_cycle,
            {n: f.batch.flushes for n, f in sched.profiles.items()}), len(kept)


@pytest.mark.parametrize("seed", range(30))
def test_replayed_failures_change_nothing(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text = yaml.safe_dump_all(crowded_cluster(random.Random(seed)))
    full, _ = _run(text, seed, False, monkeypatch)
    replayed, kept = _run(text, seed, True, monkeypatch)
    assert replayed == full
    if seed == 0:
        assert kept  # the replays were there to compare


def _pods(prefix: str, n: int, cpu: str) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{prefix}-{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                 "requests": {"cpu": cpu}}}]}} for i in range(n)]


def test_replays_ask_a_kept_batch_as_the_full_attempts_do(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Pods placed one after another leave OpportunisticBatching's sorted nodes behind;
    the identical pods that then fail each ask it for a hint, replayed or not (its flush
    counts say so)."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
              "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
             for i in range(5)]
    text = yaml.safe_dump_all([*nodes, *_pods("small", 3, "1"), *_pods("big", 12, "8")])
    # signatures as in tests/e2e/test_opportunistic_batching.py: v1.35, no default spread
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1",
           "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
               {"name": "PodTopologySpread",
                "args": {"defaultingType": "List", "defaultConstraints": []}}]}]}
    full, _ = _run(text, 0, False, monkeypatch,
                   load_config(cfg, features=FeatureGates("1.35")), "1.35")
    replayed, kept = _run(text, 0, True, monkeypatch,
                          load_config(cfg, features=FeatureGates("1.35")), "1.35")
    assert replayed == full
    assert kept
    flushes = full[-1]["default-scheduler"]
    assert flushes.get("pod_skipped", 0) + flushes.get("pod_failed", 0) >= 11
