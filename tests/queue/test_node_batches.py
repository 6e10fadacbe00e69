"""Nodes added at one instant: ``move_all_after_nodes_added`` against upstream's one NodeAdd
per node (``move_all_to_active_or_backoff`` for each), on random pools and node batches
with the default profile's real hints: the same pods in the same places and orders."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Node
from kubesched.clock import VirtualClock
from kubesched.explain import ReadOnlyBackend
from kubesched.framework.events import NODE_ADD
from kubesched.framework.status import Code, Status
from kubesched.queue import SchedulingQueue
from kubesched.scheduler import Scheduler

HOSTNAME = "kubernetes.io/hostname"
REJECTORS = ["NodeResourcesFit", "NodeAffinity", "TaintToleration", "NodeUnschedulable",
             "PodTopologySpread", "InterPodAffinity", "VolumeBinding", "NodePorts"]


def _template(rng: random.Random, i: int) -> Node:
    labels = {"pool": rng.choice(["a", "b"]), "topology.kubernetes.io/zone": f"z{i % 2}"}
    spec: dict[str, Any] = {}
    if rng.random() < 0.3:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    return parse_node({"metadata": {"name": f"t{i}", "labels": labels}, "spec": spec,
                       "status": {"capacity": {"cpu": str(rng.choice([1, 2, 4, 8])),
                                               "memory": f"{rng.choice([2, 8, 32])}Gi",
                                               "pods": "110"}}})


def _named(t: Node, name: str) -> Node:
    """A node of template ``t`` (as ``NodeGroup.node`` makes them)."""
    return replace(t, metadata=replace(t.metadata, name=name, uid=name,
                                       labels={**t.metadata.labels, HOSTNAME: name}))


def _pod(rng: random.Random, i: int, names: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {
        "cpu": f"{rng.choice([100, 1500, 3000, 6000])}m",
        "memory": f"{rng.choice([128, 4096, 16384])}Mi"}}}]}
    r = rng.random()
    if r < 0.2:
        spec["nodeSelector"] = {"pool": rng.choice(["a", "b"])}
    elif r < 0.3:
        spec["nodeSelector"] = {HOSTNAME: rng.choice(names)}
    elif r < 0.4:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [rng.choice(names)]}]}]}}}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if rng.random() < 0.2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": rng.choice([HOSTNAME, "topology.kubernetes.io/zone"]),
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "x"}}}]
    return {"metadata": {"name": f"p{i}", "uid": f"p{i}", "labels": {"app": "x"}},
            "spec": spec}


def _queue(clock: VirtualClock) -> SchedulingQueue:
    return Scheduler(ReadOnlyBackend(), clock).queue


def _state(q: SchedulingQueue) -> dict[str, Any]:
    return {"active": [x.pod.uid for x in q.active_pods()],
            "backoff": [x.pod.uid for x in q.backoff_pods()],
            "pool": [(x.pod.uid, x.gated, sorted(x.unschedulable_plugins))
                     for x in q.unschedulable_pods()],
            "log": [(str(e.event), e.new_obj.name) for e in q.in_flight_log()
                    if not isinstance(e, str)]}


def _fill(q: SchedulingQueue, clock: VirtualClock, pods: list[dict[str, Any]],
          rejectors: list[set[str]], backoff_at: list[float]) -> None:
    for d in pods:
        q.add(parse_pod(d))
    for rej, t in zip(rejectors, backoff_at, strict=True):
        clock.advance_to(t)
        qpi = q.pop()
        assert qpi is not None
        qpi.unschedulable_plugins = set(rej)
        q.add_unschedulable_if_not_present(qpi)


@pytest.mark.parametrize("seed", range(60))
def test_batch_moves_as_one_event_per_node(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    templates = [_template(rng, i) for i in range(rng.choice([1, 2, 3]))]
    nodes: list[Node] = []
    for k in range(rng.choice([2, 5, 20, 60])):
        nodes.append(_named(templates[rng.randrange(len(templates))], f"new-{k}"))
    names = [n.name for n in nodes] + ["elsewhere"]
    n_pods = rng.choice([5, 30, 80])
    pods = [_pod(rng, i, names) for i in range(n_pods)]
    rejectors = [set(rng.sample(REJECTORS, rng.choice([0, 1, 1, 2]))) for _ in pods]
    backoff_at = sorted(rng.uniform(0, 20) for _ in pods)
    now = 20 + rng.choice([0.0, 0.5, 5.0, 30.0])
    # some pods gated when they move (PreEnqueue refusing them as NodeResourcesFit, which
    # registered NodeAdd): they go back to the pool and later nodes ask them again
    gate = {f"p{i}" for i in range(n_pods) if rng.random() < 0.15}
    in_flight = rng.random() < 0.5

    def pre_enqueue(pod: Any) -> Status:
        if pod.uid in gate:
            return Status(Code.UNSCHEDULABLE, ("gated",), "NodeResourcesFit")
        return Status()

    got = []
    for batched in (False, True):
        clock = VirtualClock()
        q = _queue(clock)
        _fill(q, clock, pods, rejectors, backoff_at)
        clock.advance_to(now)
        for fw in q.frameworks.values():
            monkeypatch.setattr(fw, "run_pre_enqueue", pre_enqueue)
        if in_flight:
            q.add(parse_pod({"metadata": {"name": "flying", "uid": "flying"},
                             "spec": {"containers": [{"name": "c"}]}}))
            assert q.pop() is not None
        if batched:
            asked = []
            real = q._worth_requeuing

            def counting(*a: Any, real: Any = real, asked: list[int] = asked) -> Any:
                asked.append(1)
                return real(*a)

            monkeypatch.setattr(q, "_worth_requeuing", counting)
            q.move_all_after_nodes_added(nodes)
            # asked about once per template and pod (more for pods naming nodes and pods
            # gated again), never once per node and pod
            if len(nodes) >= 20:
                assert len(asked) < len(nodes) * n_pods / 2
        else:
            for node in nodes:
                q.move_all_to_active_or_backoff(NODE_ADD, None, node)
        got.append(_state(q))
    assert got[0] == got[1]


def test_single_node_and_unknown_hints_take_the_per_node_path() -> None:
    clock = VirtualClock()
    q = _queue(clock)
    calls = []
    q.move_all_to_active_or_backoff = lambda *a, **k: calls.append(a)  # type: ignore[method-assign]
    t = _template(random.Random(1), 0)
    q.move_all_after_nodes_added([_named(t, "only")])
    assert len(calls) == 1
