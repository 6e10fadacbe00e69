"""``kubesched capacity`` schedules the scenario once, then only the copies; and the state a
run writes (``simulate --state-out``) answers the same question without scheduling the
scenario's pending pods again (docs/performance.md, "Answers on a large state")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.state import state_documents
from kubesched.capacity import capacity
from kubesched.config import default_config
from kubesched.scheduler.algorithm import Algorithm

ZONES = ("z1", "z2", "z3")


def node(i: int, cpu: int) -> dict[str, Any]:
    name = f"n{i}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone":
                                                      ZONES[i % len(ZONES)]}},
            "status": {"capacity": {"cpu": str(cpu), "memory": "8Gi", "pods": "20"}}}


def pod(name: str, cpu_m: int, *, app: str, priority: int = 0, on: str | None = None,
        shape: str = "plain") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu_m}m"}}}]}
    if on is not None:
        spec["nodeName"] = on
    sel = {"matchLabels": {"app": app}}
    if shape == "spread":
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
             "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}]
    elif shape == "anti":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": sel}]}}
    elif shape == "affinity":
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"topologyKey": "topology.kubernetes.io/zone",
                                               "labelSelector": sel}}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
            "spec": spec}


SHAPES = ("plain", "spread", "anti", "affinity")


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, int | None]:
    n = draw(st.integers(1, 5))
    docs = [node(i, draw(st.integers(1, 4))) for i in range(n)]
    for j in range(draw(st.integers(0, 6))):  # running, low priority: preemption's victims
        docs.append(pod(f"run-{j}", draw(st.sampled_from((250, 500, 1000))),
                        app=draw(st.sampled_from(("a", "b"))),
                        on=f"n{draw(st.integers(0, n - 1))}"))
    for j in range(draw(st.integers(0, 6))):  # pending: some preempt
        docs.append(pod(f"pend-{j}", draw(st.sampled_from((250, 500, 1500))),
                        app=draw(st.sampled_from(("a", "b"))),
                        priority=draw(st.sampled_from((0, 100))),
                        shape=draw(st.sampled_from(SHAPES))))
    copy = pod("copy", draw(st.sampled_from((250, 500))), app=draw(st.sampled_from(("a", "b"))),
               shape=draw(st.sampled_from(SHAPES)))
    max_count = draw(st.none() | st.integers(0, 8))
    return (json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), json.dumps(copy),
            max_count)


def answer(scenario_text: str, pod_text: str, max_count: int | None) -> dict[str, Any]:
    scenario = load_scenario_text(scenario_text, "s.json", strict=True)
    template = load_scenario_text(pod_text, "pod.json").pods[0]
    out = capacity(scenario, default_config(), template, max_count=max_count)
    return {**out.as_json(), "copies": out.copies}


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_capacity_of_the_state_after_the_run_is_the_scenarios(case: tuple[str, str, int | None]
                                                             ) -> None:
    scenario_text, pod_text, max_count = case
    sim = SimCluster(load_scenario_text(scenario_text, "s.json", strict=True),
                     default_config())
    sim.run()
    state = json.dumps({"apiVersion": "v1", "kind": "List", "items": state_documents(sim)})
    assert answer(state, pod_text, max_count) == answer(scenario_text, pod_text, max_count)


def test_the_scenario_is_scheduled_once_then_one_cycle_a_copy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cycles: list[str] = []
    runs: list[int] = []
    schedule_pod = Algorithm.schedule_pod
    run = SimCluster.run

    def count_cycle(self: Any, fwk: Any, state: Any, pod: Any) -> Any:
        cycles.append(pod.name)
        return schedule_pod(self, fwk, state, pod)

    def count_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return run(self, *args, **kwargs)

    monkeypatch.setattr(Algorithm, "schedule_pod", count_cycle)
    monkeypatch.setattr(SimCluster, "run", count_run)
    docs = [node(i, 4) for i in range(3)] + [pod(f"pend-{j}", 500, app="a") for j in range(4)]
    scenario = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    out = answer(scenario, json.dumps(pod("copy", 1000, app="b")), None)
    # 3 nodes of 4 CPUs, the pending pods' 2 spread 1 + 0.5 + 0.5: 3 + 3 + 3 copies of one
    # CPU, then the one that fails
    assert out["count"] == 9
    assert runs == [1]
    assert cycles == [f"pend-{j}" for j in range(4)] + [f"copy-{i}" for i in range(10)]
