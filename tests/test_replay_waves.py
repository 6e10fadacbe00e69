"""Waves of replayed failures (``ScheduleOne._fail_as_before`` with the run loop's
``step_sharing``): the pods retried at one instant over one unchanged cluster attempted
within one step, against one attempt a step — the same placements, attempts, events,
decision records, time series, random draws and end of the run, on random clusters where
pods that do not fit wait for others to finish."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.apiserver import ApiServer
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.runloop import RunLoop
from kubesched.backends.sim.series import Series
from kubesched.backends.sim.timeline import PodFinished
from kubesched.config import default_config
from kubesched.scheduler.decisions import DecisionLog
from kubesched.scheduler.schedule_one import ScheduleOne
from random_clusters import crowded_cluster


def _run(text: str, seed: int, waves: bool, monkeypatch: pytest.MonkeyPatch,
         series: bool = True) -> tuple[tuple[Any, ...], int]:
    events: list[tuple[str, str, str]] = []
    monkeypatch.setattr(ApiServer, "record_event",
                        lambda self, pod, _t, reason, message: events.append(
                            (pod.key, reason, message)))
    more: list[int] = []
    real_pop = ScheduleOne._pop_replays

    def pop_replays(self: ScheduleOne) -> Any:
        got = real_pop(self)
        more.append(len(got))
        return got

    monkeypatch.setattr(ScheduleOne, "_pop_replays", pop_replays)
    if not waves:
        monkeypatch.setattr(RunLoop, "first", lambda self, qpi: 0)
    sim = SimCluster(load_scenario_text(text, "<test>"), default_config(), seed=seed)
    decisions: list[dict[str, Any]] = []
    sim.scheduler.decisions = DecisionLog([decisions.append], 2)
    if series:  # (without one, a step takes every pod that replays)
        sim.series = Series(sim, max_points=8)  # small: its stride doubles during the run
    res = sim.run()
    sched = sim.scheduler
    monkeypatch.undo()
    samples = [(s.time, s.attempts, s.running, s.pending, s.resources)
               for s in (sim.series.samples if sim.series is not None else ())]
    return ([(r.key, r.node, r.time, r.attempts, r.message) for r in res.records],
            res.preemptions, events, decisions, samples, sim.clock.now(),
            sched.handle.rng.getstate(), sched.next_start_node_index,
            sched.queue.scheduling_cycle, sim.accounting.attempts), sum(more)


@pytest.mark.parametrize("series", [True, False])
@pytest.mark.parametrize("seed", range(25))
def test_waves_change_nothing(seed: int, series: bool, monkeypatch: pytest.MonkeyPatch
                              ) -> None:
    text = yaml.safe_dump_all(crowded_cluster(random.Random(seed), 6))
    alone, none = _run(text, seed, False, monkeypatch, series)
    waved, joined = _run(text, seed, True, monkeypatch, series)
    assert none == 0
    assert waved == alone
    if seed < 3:
        assert joined > 0  # attempts did join a step under way


def test_a_pod_tried_in_the_round_ends_the_wave(monkeypatch: pytest.MonkeyPatch) -> None:
    """The end rule looks at a round when a pod is tried a second time in it: such a pod
    has its own step, so the rule sees it as it would."""
    text = yaml.safe_dump_all(crowded_cluster(random.Random(0), 6))
    seen: list[bool] = []
    real_first, real_fresh = RunLoop.first, RunLoop.fresh

    def first(self: RunLoop, qpi: Any) -> int:
        tried = qpi.pod.uid in self.rounds._tried
        got = real_first(self, qpi)
        seen.append(tried)
        assert not (got and tried)
        return got

    def fresh(self: RunLoop, uid: str) -> bool:
        tried = uid in self.rounds._tried
        got = real_fresh(self, uid)
        seen.append(tried)
        assert got != tried
        return got

    monkeypatch.setattr(RunLoop, "first", first)
    monkeypatch.setattr(RunLoop, "fresh", fresh)
    sim = SimCluster(load_scenario_text(text, "<test>"), default_config(), seed=0)
    sim.run()
    assert seen


def test_attempts_join_a_step_up_to_the_series_next_sample() -> None:
    """With a series, the attempts that share a step stop where a tick would take a
    sample: the sample sees every attempt before it done."""
    text = yaml.safe_dump_all(crowded_cluster(random.Random(2), 6))
    sim = SimCluster(load_scenario_text(text, "<test>"), default_config(), seed=2)
    sim.series = Series(sim, max_points=1000)
    sim.series.stride = 4
    sizes: list[tuple[int, int]] = []
    real_pop = ScheduleOne._pop_replays

    def pop_replays(self: ScheduleOne) -> Any:
        ticks = sim.series._ticks
        got = real_pop(self)
        if got:
            sizes.append((ticks, len(got)))
        return got

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ScheduleOne, "_pop_replays", pop_replays)
        sim.run()
    assert sizes
    for ticks, n in sizes:  # the first's tick may sample; the n - 1 ticks after it may not
        assert all((ticks + k) % 4 for k in range(2, n + 1))
    assert max(n for _t, n in sizes) > 1

def _loop_at_step() -> tuple[SimCluster, Any]:
    """A run loaded and a step begun, with a pending pod's queue record to ask about."""
    text = yaml.safe_dump_all(crowded_cluster(random.Random(1), 6))
    sim = SimCluster(load_scenario_text(text, "<test>"), default_config(), seed=1)
    sim.load()
    sim.series = sim.loop.series = Series(sim)
    sim.loop.deliver_due()
    sim.loop.rounds.step_started()
    return sim, sim.scheduler.queue.pending_pods()[0]


def test_a_step_takes_another_attempt_only_when_nothing_comes_between() -> None:
    """What the run loop would do between two steps is nothing: else the next attempt
    waits for its own step. When it says yes, the series has ticked for the step that
    ended, as the loop ticks after every step."""
    sim, qpi = _loop_at_step()
    loop, rounds = sim.loop, sim.loop.rounds
    ticks = sim.series._ticks
    assert loop.first(qpi) == 1 + sim.series.quiet_ticks()
    assert sim.series._ticks == ticks + 1

    def refused(change: Any) -> None:
        sim2, qpi2 = _loop_at_step()
        change(sim2, qpi2)
        ticks2 = sim2.series._ticks
        assert not sim2.loop.first(qpi2)
        assert sim2.series._ticks == ticks2

    # an event due now: the next step delivers it first
    refused(lambda s, q: s.timeline.push(s.clock.now(), PodFinished(q.pod)))
    # the pod was tried in this round: its retry makes the end rule look at the round
    refused(lambda s, q: s.loop.rounds._tried.__setitem__(q.pod.uid, (None, "x")))
    # another pod was retried in this round: the end rule looks at it after this step
    refused(lambda s, q: setattr(s.loop.rounds, "_retried", True))
    # a pod left Permit in the step: the end rule updates what it saw waiting
    refused(lambda s, q: s.loop.rounds._waiting.add("someone"))
    # the cluster changed during the step: the next step starts from another count
    refused(lambda s, q: setattr(s.api, "changes", s.api.changes + 1))
    assert rounds.steps_on(qpi.pod.uid)
