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
from random_clusters import crowded_cluster


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
    text = yaml.safe_dump_all(crowded_cluster(random.Random(seed)))
    full, _ = _run(text, seed, False, monkeypatch)
    replayed, kept = _run(text, seed, True, monkeypatch)
    assert replayed == full
    if seed == 0:
        assert kept  # the replays were there to compare
