"""The queue's shortlist of pool pods an event may move (``_may_move``, kept while the pool
is unchanged) against the whole pool asked every time, over random sequences of queue
operations with the default profile's hints and a PreEnqueue that gates some pods; and the
pool's oldest pod (``_Pool.oldest``, a heap) against a scan, at every step."""

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
        pool = q._unschedulable  # the pool's oldest, from its heap, is the scan's
        oldest = pool.oldest()
        assert (oldest.timestamp if oldest is not None else None) == min(
            (x.timestamp for x in pool.values()), default=None)
        assert oldest is None or pool[oldest.pod.uid] is oldest
        trace.append(([x.pod.uid for x in q.active_pods()],
                      [x.pod.uid for x in q.backoff_pods()],
                      [(x.pod.uid, x.gated) for x in q.unschedulable_pods()]))
    return trace


@pytest.mark.parametrize("seed", range(25))
def test_shortlist_moves_what_the_whole_pool_moves(seed: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(seed, True, monkeypatch) == _run(seed, False, monkeypatch)


@pytest.mark.parametrize("seed", range(10))
def test_the_pools_oldest_through_replacements_removals_and_compactions(seed: int) -> None:
    from kubesched.queue.scheduling_queue import QueuedPodInfo, _Pool

    rng = random.Random(seed)
    pool = _Pool(["default-scheduler"])
    pool._heap_slack = 0  # compact as soon as stale entries outnumber the pool
    made: dict[str, QueuedPodInfo] = {}
    for step in range(2000):
        uid = f"p{rng.randrange(40)}"
        op = rng.random()
        if op < 0.5:
            qpi = made.get(uid)
            if qpi is None or uid in pool or rng.random() < 0.3:
                qpi = made[uid] = QueuedPodInfo(pod=_pod(int(uid[1:]), 100), timestamp=0.0,
                                                seq=step)
            # a pod back in the pool (the same object, as after another failure) comes
            # with a new timestamp, set while it was out
            qpi.timestamp = float(rng.randrange(50))
            pool[uid] = qpi
        elif op < 0.8:
            pool.pop(uid, None)
        elif op < 0.95 and uid in pool:
            del pool[uid]
        elif op >= 0.99:
            pool.clear()
        oldest = pool.oldest()
        assert (oldest.timestamp if oldest is not None else None) == min(
            (x.timestamp for x in pool.values()), default=None)
        if op < 0.5:  # compacted at insertions: entries stay within twice the pool
            assert len(pool._by_time) <= 2 * len(pool) + 1


@pytest.mark.parametrize("seed", range(10))
def test_the_pools_bulk_forms_count_as_one_by_one(seed: int) -> None:
    """``add_all`` and ``remove_all`` (a step's failures, a move's pods) leave the pool's
    order, its counts by plugin, its special pods and its oldest as the per-pod forms."""
    from kubesched.queue.scheduling_queue import QueuedPodInfo, _Pool

    rng = random.Random(seed)
    bulk, single = _Pool(["default-scheduler"]), _Pool(["default-scheduler"])
    for step in range(400):
        if rng.random() < 0.5:
            batch = []
            # (a pod may come twice, or replace one of the pool's)
            for i in rng.choices(range(60), k=rng.randrange(12)):
                qpi = QueuedPodInfo(pod=_pod(i, 100), timestamp=float(step), seq=step)
                qpi.unschedulable_plugins = set(rng.sample(REJECTORS, rng.choice([0, 1, 1, 2])))
                if rng.random() < 0.3:
                    qpi.pending_plugins = {rng.choice(REJECTORS)}
                if rng.random() < 0.1:
                    qpi.gating_plugin = "SchedulingGates"
                if rng.random() < 0.1:
                    qpi.pod.spec.scheduler_name = "other"
                batch.append(qpi)
            bulk.add_all(batch)
            for qpi in batch:
                single[qpi.uid] = qpi
        else:
            uids = [f"p{i}" for i in rng.sample(range(60), rng.randrange(15))]
            bulk.remove_all(uids)
            for uid in uids:
                single.pop(uid, None)
        assert list(bulk) == list(single)
        # the counts, worked out from what the pool holds
        want: dict[tuple[str, str], int] = {}
        for qpi in bulk.values():
            for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                key = (qpi.pod.spec.scheduler_name, plugin)
                want[key] = want.get(key, 0) + 1
        assert {k: n for k, n in bulk.by_plugin.items() if n} == want
        assert {k: n for k, n in single.by_plugin.items() if n} == want
        assert bulk.special == single.special == sum(
            1 for q in bulk.values() if q.gated or not (q.unschedulable_plugins | q.pending_plugins)
            or q.pod.spec.scheduler_name != "default-scheduler")
        assert {u: (set(keys), bool(sp)) for u, (keys, sp) in bulk._counted.items()} == \
            {u: (set(keys), bool(sp)) for u, (keys, sp) in single._counted.items()}
        assert bulk.oldest() is single.oldest()


def test_the_pool_refuses_a_pod_under_another_uid() -> None:
    from kubesched.queue.scheduling_queue import QueuedPodInfo, _Pool

    pool = _Pool(["default-scheduler"])
    with pytest.raises(KeyError, match="p1"):
        pool["p2"] = QueuedPodInfo(pod=_pod(1, 100))
    assert not pool and not pool.by_plugin and pool.special == 0
