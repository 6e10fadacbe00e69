"""``kubesched compare``: one scenario under two configurations (or two seeds), side by side.

Each side is a whole ``simulate`` run. What differs: the pods bound to different nodes, the
pods pending on one side only; and per side the end state's utilisation and fragmentation.

Fragmentation of a resource R (cpu, and each GPU resource: an extended resource whose name
ends in ``gpu``) is the share of the cluster's free R that no more pod of the workload's
typical shape could use. The typical shape is the median (the lower one) of each of cpu,
memory and R over the pods of the run that request some R. A node's free R counts as
fragmented when that shape does not fit in what the node has left (cpu, memory, R, or a pod
slot). So 0 % is free R all usable, 100 % is free R all stranded; ``None`` when no pod
requests R or nothing of R is free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.scenario import Scenario
from kubesched.api.types import Pod
from kubesched.backends.sim.cluster import SimCluster, SimResult
from kubesched.config import SchedulerConfiguration
from kubesched.framework.node_info import NodeInfo


def is_gpu(resource: str) -> bool:
    return "/" in resource and resource.rsplit("/", 1)[1].endswith("gpu")


@dataclass
class Side:
    name: str  # what the user named: the configuration file, or the seed
    config: str | None
    seed: int
    result: SimResult | None = None
    placements: dict[str, str | None] = field(default_factory=dict)  # pod -> node
    utilisation: dict[str, float | None] = field(default_factory=dict)
    fragmentation: dict[str, float | None] = field(default_factory=dict)
    # what a layer above measured of the run (the autoscaler's node-hours and cost)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        r = self.result
        assert r is not None
        return {"name": self.name, "config": self.config, "seed": self.seed,
                "scheduled": r.scheduled, "pending": len(r.pending),
                "utilisation": self.utilisation, "fragmentation": self.fragmentation,
                **self.extra}


def _lower_median(values: list[int]) -> int:
    values = sorted(values)
    return values[(len(values) - 1) // 2]


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def fragmentation(nodes: list[NodeInfo], pods: list[Pod], resource: str) -> float | None:
    """The share (%) of the free ``resource`` that the typical pod requesting it could not
    use (see the module's docstring)."""
    asking = [p for p in pods if p.requests.get(resource, 0) > 0]
    if not asking:
        return None
    shape = {r: _lower_median([p.requests.get(r, 0) for p in asking])
             for r in {"cpu", "memory", resource}}
    free_total = stranded = 0
    for ni in nodes:
        free = ni.allocatable.get(resource, 0) - ni.requested.get(resource, 0)
        if free <= 0:
            continue
        free_total += free
        fits = len(ni.pods) < ni.allocatable.get("pods", 0) and all(
            ni.allocatable.get(r, 0) - ni.requested.get(r, 0) >= want
            for r, want in shape.items())
        if not fits:
            stranded += free
    return _pct(stranded, free_total)


def measure(side: Side, sim: SimCluster, result: SimResult) -> None:
    side.result = result
    side.placements = {r.key: r.node for r in result.records if not r.evicted}
    nodes = [ni for ni in sim.scheduler.cache.nodes.values() if ni.node is not None]
    resources = ["cpu", "memory", *sorted({r for ni in nodes for r in ni.allocatable
                                          if is_gpu(r)})]
    for r in resources:
        side.utilisation[r] = _pct(sum(ni.requested.get(r, 0) for ni in nodes),
                                   sum(ni.allocatable.get(r, 0) for ni in nodes))
    side.utilisation["pods"] = _pct(sum(len(ni.pods) for ni in nodes),
                                    sum(ni.allocatable.get("pods", 0) for ni in nodes))
    pods = [*sim.scenario.pods, *sim.created]
    for r in resources:
        if r == "cpu" or is_gpu(r):
            side.fragmentation[r] = fragmentation(nodes, pods, r)


Prepare = Callable[[SimCluster], Callable[[float], dict[str, Any]] | None]


def run_side(side: Side, scenario: Scenario, config: SchedulerConfiguration,
             names_seed: int, prepare: Prepare | None = None) -> None:
    """``prepare``: what a layer above wires into the run before it starts (the
    autoscaler); the function it returns, if any, gives the side's ``autoscaler`` entry
    from the run's end time."""
    sim = SimCluster(scenario, config, seed=side.seed, names_seed=names_seed)
    after = prepare(sim) if prepare is not None else None
    result = sim.run()
    measure(side, sim, result)
    if after is not None:
        side.extra["autoscaler"] = after(result.virtual_seconds)


def differences(a: Side, b: Side) -> dict[str, Any]:
    placed: list[dict[str, Any]] = []
    only_a: list[str] = []
    only_b: list[str] = []
    for key, na in a.placements.items():
        if key not in b.placements:
            continue
        nb = b.placements[key]
        if na is not None and nb is not None and na != nb:
            placed.append({"pod": key, "a": na, "b": nb})
        elif na is None and nb is not None:
            only_a.append(key)
        elif nb is None and na is not None:
            only_b.append(key)
    return {"sides": [a.as_json(), b.as_json()], "placed_differently": placed,
            "pending_only": {"a": only_a, "b": only_b}}
