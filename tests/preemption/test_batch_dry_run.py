"""The preemption dry run over the node table (``preemption/batch.py``) against the per-node
form (``Evaluator.dry_run_per_node``, upstream's algorithm on copied NodeInfos), on random
clusters: priorities with ties, pods without start times (upstream's inconsistent "now"),
PDBs, nominated pods of every priority (the preemptor itself among them), pod limits,
extended resources, tainted and unschedulable nodes, node selectors.

Both must give the same candidates (order, victims in order, PDB violations), the same
statuses for the nodes that are not candidates, the same errors — and, through
``Evaluator.preempt``, the same nominated node, victims and message.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from _preempt_util import Env, build, make_pdb, make_pod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Node, Pod
from kubesched.clock import VirtualClock
from kubesched.explain import ReadOnlyBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import NodeToStatus
from kubesched.scheduler import Scheduler

EXT = "example.com/gpu"
PROFILES = {
    "resources": ["NodeResourcesFit"],
    "node-and-resources": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                           "NodeResourcesFit"],
}
PRIORITIES = [-5, 0, 5, 10]
PREEMPTOR_PRIORITY = 8

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _node(i: int, draw: Any) -> Node:
    cap = {"cpu": f"{draw(st.integers(2, 8)) * 500}m",
           "memory": str(draw(st.integers(2, 8)) * 500),
           "pods": str(draw(st.integers(1, 6)))}
    if draw(st.booleans()):
        cap[EXT] = str(draw(st.integers(0, 2)))
    spec: dict[str, Any] = {}
    if draw(st.integers(0, 9)) == 0:
        spec["unschedulable"] = True
    if draw(st.integers(0, 6)) == 0:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return parse_node({"metadata": {"name": f"node-{i}", "labels": {"zone": f"z{i % 2}"}},
                       "spec": spec, "status": {"capacity": cap, "allocatable": dict(cap)}})


def _req(draw: Any, gpu: bool) -> dict[str, str]:
    req = {"cpu": f"{draw(st.integers(0, 12)) * 100}m",
           "memory": str(draw(st.integers(0, 12)) * 100)}
    if gpu and draw(st.booleans()):
        req[EXT] = "1"
    return req


def _preemptor(draw: Any, nominated: str) -> Pod:
    container: dict[str, Any] = {"name": "c", "resources": {"requests": _req(draw, True)}}
    spec: dict[str, Any] = {"priority": PREEMPTOR_PRIORITY, "containers": [container]}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"zone": "z0"}
    d: dict[str, Any] = {"metadata": {"name": "preemptor", "uid": "preemptor"}, "spec": spec}
    if nominated:
        d["status"] = {"nominatedNodeName": nominated}
    return parse_pod(d)


@st.composite
def clusters(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 7))
    nodes = [_node(i, draw) for i in range(n)]
    pods = []
    for i in range(n):
        for j in range(draw(st.integers(0, 5))):
            app = draw(st.sampled_from(["a", "b", ""]))
            pods.append(make_pod(
                f"p{i}-{j}", node=f"node-{i}", priority=draw(st.sampled_from(PRIORITIES)),
                req=_req(draw, True), labels={"app": app} if app else None,
                start=draw(st.sampled_from([None, None, 1.0, 2.0, 3.0]))))
    pdbs = [make_pdb({"app": app}, draw(st.integers(0, 2)), name=f"pdb-{app}",
                     disrupted=tuple(draw(st.sets(st.sampled_from(
                         [p.name for p in pods] or ["none"]), max_size=2))))
            for app in draw(st.sets(st.sampled_from(["a", "b"])))]
    nominated: dict[str, list[Pod]] = {}
    self_nominated = ""
    for k in range(draw(st.integers(0, 4))):
        node = f"node-{draw(st.integers(0, n - 1))}"
        if k == 0 and draw(st.booleans()):
            self_nominated = node  # the preemptor's own nomination is never added
            continue
        pod = make_pod(f"nom-{k}", priority=draw(st.sampled_from([5, 8, 15])),
                       req=_req(draw, False), nominated=node)
        nominated.setdefault(node, []).append(pod)
    preemptor = _preemptor(draw, self_nominated)
    if self_nominated:
        nominated.setdefault(self_nominated, []).append(preemptor)
    return {"nodes": nodes, "pods": pods, "pdbs": pdbs, "nominated": nominated,
            "pod": preemptor, "profile": draw(st.sampled_from(sorted(PROFILES))),
            "offset": draw(st.integers(0, n - 1)), "num": draw(st.integers(1, n)),
            "seed": draw(st.integers(0, 1000))}


def _env(c: dict[str, Any]) -> Env:
    return build(PROFILES[c["profile"]], c["nodes"], c["pods"], pdbs=c["pdbs"],
                 nominated=c["nominated"], seed=c["seed"])


def _statuses(n2s: NodeToStatus) -> dict[str, tuple]:
    return {k: (v.code, v.reasons, v.plugin) for k, v in n2s.statuses.items()}


def _candidates(cands: list) -> list[tuple]:
    return [(c.name, [p.uid for p in c.victims.pods], c.victims.num_pdb_violations)
            for c in cands]


@SETTINGS
@given(clusters())
def test_dry_run_matches_the_per_node_form(c: dict[str, Any]) -> None:
    env = _env(c)
    ev, pod = env.evaluator, c["pod"]
    infos = env.snapshot.node_infos
    pdbs = ev.pdbs()
    state = env.pre_filter(pod)
    assert ev._batch_rows(state, infos, c["offset"]) is not None  # the batch form runs
    got = ev.dry_run_preemption(state, pod, infos, pdbs, c["offset"], c["num"])
    want = ev.dry_run_per_node(env.pre_filter(pod), pod, infos, pdbs, c["offset"], c["num"])
    assert _candidates(got[0]) == _candidates(want[0])
    assert _statuses(got[1]) == _statuses(want[1])
    assert got[2] == want[2]
    # the per-node form told the nodes' table rows (as find_candidates does) skips the
    # nodes without lower-priority pods through the victim cache: same answer
    rows = np.arange(len(infos))
    told = ev.dry_run_per_node(env.pre_filter(pod), pod, infos, pdbs, c["offset"], c["num"],
                               rows=rows)
    assert _candidates(told[0]) == _candidates(want[0])
    assert _statuses(told[1]) == _statuses(want[1])
    assert told[2] == want[2]


@SETTINGS
@given(clusters())
def test_preempt_matches_the_per_node_form(c: dict[str, Any]) -> None:
    results = []
    for batch in (True, False):
        env = _env(c)
        ev, pod = env.evaluator, c["pod"]
        if not batch:
            ev.dry_run_preemption = (  # type: ignore[method-assign]
                lambda *args, per_node=ev.dry_run_per_node, rows=None: per_node(*args))
        state = env.pre_filter(pod)
        n2s = NodeToStatus({ni.name: env.fwk.run_filter_with_nominated(state, pod, ni)
                            for ni in env.snapshot.node_infos})
        env.handle.rng = random.Random(c["seed"])
        res = ev.preempt(state, pod, n2s, actuate=False)
        cand = res.candidate
        results.append((res.nominated, res.status.code, res.status.reasons,
                        cand and (cand.name, [p.uid for p in cand.victims.pods])))
    assert results[0] == results[1]


def test_victims_cached_before_the_table_gained_a_resource() -> None:
    # A node's potential victims are kept across preemptions; a pod bringing a new extended
    # resource widens the table's columns, and only the changed node's victims are redone.
    sched = Scheduler(ReadOnlyBackend(), VirtualClock())
    for i in range(2):
        sched.cache.add_node(parse_node({"metadata": {"name": f"n{i}"}, "status": {
            "capacity": {"cpu": "2", "memory": "4Gi", "pods": "10", EXT: "2"}}}))
        sched.cache.add_pod(make_pod(f"low{i}", node=f"n{i}", priority=0,
                                     req={"cpu": "1500m"}))
    ev = next(p for p in sched.profiles["default-scheduler"].post_filter
              if p.name == "DefaultPreemption").evaluator

    def both(name: str) -> None:
        sched.cache.update_snapshot(sched.snapshot)
        pod = make_pod(name, priority=10, req={"cpu": "1"})
        infos, fwk = sched.snapshot.node_infos, sched.profiles["default-scheduler"]
        states = [CycleState(), CycleState()]
        for st_ in states:
            fwk.run_pre_filter(st_, pod, sched.snapshot)
        assert ev._batch_rows(states[0], infos, 0) is not None
        got = ev.dry_run_preemption(states[0], pod, infos, [], 0, len(infos))
        want = ev.dry_run_per_node(states[1], pod, infos, [], 0, len(infos))
        assert _candidates(got[0]) == _candidates(want[0]) and len(got[0]) == 2

    both("first")
    sched.cache.add_pod(make_pod("new", node="n0", priority=0, req={"example.com/new": "1"}))
    both("second")
