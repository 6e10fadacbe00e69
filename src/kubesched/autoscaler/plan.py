"""``kubesched plan``: cluster-autoscaler's answer for a scenario — the nodes per group its
scale-up loop adds for the pending pods, the pods it cannot help, and (``--scale-down``) the
nodes its scale-down simulation removes.

The scenario runs first (its pending pods scheduled on the existing nodes); then, while pods
stay pending: the options (``scaleup``), the expander's choice, its nodes added to the
running simulation and the scheduler run on the grown cluster. The loop stops when nothing is
pending, no group helps, or a round's new nodes took none of the pending pods.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.nodegroups import GROUP_LABEL, NodeGroup
from kubesched.api.scenario import Scenario
from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.expanders import DEFAULT_EXPANDER, best_option
from kubesched.autoscaler.scaledown import DEFAULT_UTILIZATION_THRESHOLD, scale_down
from kubesched.autoscaler.scaleup import scale_up_options
from kubesched.autoscaler.snapshots import CheckerPool
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import SchedulerConfiguration


@dataclass
class PlanResult:
    add: dict[str, int] = field(default_factory=dict)
    cannot_help: list[str] = field(default_factory=list)
    pending_after: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    # (group, nodes) per round of the scale-up loop, in order
    rounds: list[tuple[str, int]] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)  # scale-down: candidate → why kept

    def as_json(self) -> dict[str, Any]:
        return {"add": dict(sorted(self.add.items())), "cannot_help": self.cannot_help,
                "pending_after": self.pending_after, "remove": self.remove}


def group_sizes(nodes: list[Node], groups: list[NodeGroup]) -> dict[str, int]:
    """Each group's current size: the nodes labelled with its name."""
    sizes = {g.name: 0 for g in groups}
    for n in nodes:
        g = n.metadata.labels.get(GROUP_LABEL)
        if g in sizes:
            sizes[g] += 1
    return sizes


def _pending(sim: SimCluster) -> list[Pod]:
    """The pods the scheduler tried and could not place, in the order they were recorded
    (gated pods wait for their gates, not for nodes)."""
    return [sim.pods[uid] for uid, rec in sim.records.items()
            if rec.node is None and not rec.gates and sim.api.alive(uid)]


def plan(scenario: Scenario, config: SchedulerConfiguration, *,
         expander: str = DEFAULT_EXPANDER, seed: int = 0, scale_down_nodes: bool = False,
         threshold: float = DEFAULT_UTILIZATION_THRESHOLD) -> PlanResult:
    groups: list[NodeGroup] = list(scenario.objects.get("NodeGroup", ()))
    rng = random.Random(seed)
    sim = SimCluster(scenario, config, seed=seed)
    sim.run()

    def new_checker() -> PredicateChecker:
        return PredicateChecker(config, sim.objects, scenario.namespaces)

    checkers = CheckerPool(new_checker)  # the scale-up's, emptied and reused each round

    out = PlanResult()
    sizes = group_sizes(list(sim.nodes.values()), groups)
    next_index = dict.fromkeys(sizes, 0)
    cannot: list[Pod] = []
    while True:
        pending = _pending(sim)
        if not pending:
            cannot = []
            break
        checkers.reset()
        opts = scale_up_options(pending, groups, sizes, checkers.get)
        cannot = opts.cannot_help
        best = best_option(expander, opts.options, rng)
        if best is None:
            break
        g = best.group
        added = []
        for _ in range(best.node_count):
            name = f"{g.name}-{next_index[g.name]}"
            while name in sim.nodes:
                next_index[g.name] += 1
                name = f"{g.name}-{next_index[g.name]}"
            next_index[g.name] += 1
            added.append(g.node(name))
        sim.api.add_nodes(added)
        sizes[g.name] += best.node_count
        out.add[g.name] = out.add.get(g.name, 0) + best.node_count
        out.rounds.append((g.name, best.node_count))
        sim.run_until_idle()
        if len(_pending(sim)) == len(pending):
            break
    out.cannot_help = [p.key for p in cannot]
    out.pending_after = [p.key for p in _pending(sim)]
    if scale_down_nodes:
        nodes = list(sim.nodes.values())
        running = [p for p in sim.pods.values() if p.spec.node_name and sim.api.alive(p.uid)]
        pods_on: dict[str, list[Pod]] = {}
        for p in running:
            pods_on.setdefault(p.spec.node_name, []).append(p)
        checker = new_checker()
        checker.load(nodes, running)
        res = scale_down(nodes, pods_on, groups, sizes,
                         list(sim.objects.get("PodDisruptionBudget", ())), running,
                         sim.objects, checker, threshold)
        out.remove, out.kept = res.removed, res.kept
    return out
