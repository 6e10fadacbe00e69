"""The queue's shortlist of pool pods an event may move (``_may_move``, kept while the pool
is unchanged) against the whole pool asked every time, over random sequences of queue
operations with the default profile's hints and a PreEnqueue that gates some pods."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.clock import VirtualClock
from kubesched.explain import ReadOnlyBackend
from kubesched.framework import events as ev
from kubesched.framework.status import Code, Status
from kubesched.queue import SchedulingQueue
from kubesched.scheduler import Scheduler

REJECTORS = ["NodeResourcesFit", "NodeAffinity", "TaintToleration", "PodTopologySpread",
             "InterPodAffinity", "NodePorts", "SchedulingGates"]


def _pod(i: int, cpu: int, gates: bool = False) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {
        "cpu": f"{cpu}m"}}}]}
    if gates:
        spec["schedulingGates"] = [{"name": "g"}]
    return parse_pod({"metadata": {"name": f"p{i}", "uid": f"p{i}", "labels": {"app": "x"}},
                      "spec": spec})


def _node(i: int, cpu: int) -> Any:
    return parse_node({"metadata": {"name": f"n{i}"},
                       "status": {"capacity": {"cpu": str(cpu), "pods": "110"}}})


def _run(seed: int, memo: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    rng = random.Random(seed)
    clock = VirtualClock()
    q: SchedulingQueue = Scheduler(ReadOnlyBackend(), clock).queue
    if not memo:
        monkeypatch.setattr(q, "_may_move", lambda event: list(q._unschedulable.values()))
    gated: set[str] = set()

    def pre_enqueue(pod: Any) -> Status:
        if pod.uid in gated:
            return Status(Code.UNSCHEDULABLE, ("gated",), rng.choice(REJECTORS[:2]))
        return Status()

    for fw in q.frameworks.values():
        monkeypatch.setattr(fw, "run_pre_enqueue", pre_enqueue)
    pods: dict[str, Any] = {}
    trace: list[Any] = []
    for step in range(300):
        clock.advance_to(step * rng.choice([0.1, 1.0, 7.0]) / 2 + clock.now())
        op = rng.random()
        if op < 0.2:
            i = len(pods)
            pods[f"p{i}"] = _pod(i, rng.choice([100, 2000, 8000]))
            q.add(pods[f"p{i}"])
        elif op < 0.45:
            qpi = q.pop()
            if qpi is not None:
                qpi.unschedulable_plugins = set(rng.sample(REJECTORS, rng.choice([0, 1, 2])))
                q.add_unschedulable_if_not_present(qpi)
        elif op < 0.55 and pods:
            uid = rng.choice(sorted(pods))
            (gated.add if rng.random() < 0.5 else gated.discard)(uid)
        elif op < 0.65 and pods:
            uid = rng.choice(sorted(pods))
            new = _pod(int(uid[1:]), rng.choice([100, 2000]))
            q.update(pods[uid], new)
            pods[uid] = new
        elif op < 0.8:
            q.move_all_to_active_or_backoff(ev.ASSIGNED_POD_ADD, None, _pod(999, 100))
        elif op < 0.88:
            q.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, _pod(998, 100), None)
        elif op < 0.93:
            q.move_all_to_active_or_backoff(ev.NODE_ADD, None, _node(step, rng.choice([1, 16])))
        elif op < 0.96 and pods:
            q.activate([pods[rng.choice(sorted(pods))]])
        else:
            q.flush_backoff_completed()
            q.flush_unschedulable_pods_leftover()
        for _ in range(rng.choice([0, 1, 3])):  # events in a row, nothing queued between
            event = rng.choice([ev.ASSIGNED_POD_ADD, ev.ASSIGNED_POD_DELETE, ev.NODE_ADD])
            q.move_all_to_active_or_backoff(event, _pod(997, 100), _node(step, 16))
        trace.append(([x.pod.uid for x in q.active_pods()],
                      [x.pod.uid for x in q.backoff_pods()],
                      [(x.pod.uid, x.gated) for x in q.unschedulable_pods()]))
    return trace


@pytest.mark.parametrize("seed", range(25))
def test_shortlist_moves_what_the_whole_pool_moves(seed: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(seed, True, monkeypatch) == _run(seed, False, monkeypatch)
