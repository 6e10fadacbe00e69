"""cluster-autoscaler in ``simulate``: its loop (``StaticAutoscaler.RunOnce``) on the virtual
clock, as the run loop's periodic controller (docs/autoscaling.md, "In simulate").

One loop, every ``--scan-interval``:

1. nodes asked for that have joined stop being upcoming; drained nodes whose pods are gone
   are deleted;
2. the pods the scheduler marked unschedulable, less those that fit on the upcoming nodes
   (template nodes standing in for them, as ``addUpcomingNodesToClusterSnapshot`` injects),
   are the pods to help; when every one of them is younger than 2 s the loop waits for
   more (and does no scale-down); else the scale-up (``scaleup`` and the expander) adds one
   group's nodes, which join ``provisioningDelaySeconds`` later — and a loop that scaled up
   does no scale-down;
3. scale-down: the nodes the simulation (``scaledown.scale_down``) could remove are
   *unneeded* since the first loop that found them so; unless in cooldown (within
   ``--scale-down-delay-after-add`` of a scale-up or ``--scale-down-delay-after-delete`` of
   a deletion), those unneeded for ``--scale-down-unneeded-time`` go — empty ones first,
   at most 10 per loop and one being drained at a time, never below the group's
   ``minSize`` (``RemovableAt`` and the deletion budgets). An empty node is deleted at once;
   another is tainted ``ToBeDeletedByClusterAutoscaler``, its pods evicted (their
   controllers make new ones), and deleted at the first loop after they are gone.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from typing import Any

from kubesched.api.naming import generator_state, set_generator_state
from kubesched.api.nodegroups import GROUP_LABEL, NodeGroup
from kubesched.api.types import Node, Pod, Taint, bound_copy
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.expanders import best_option
from kubesched.autoscaler.options import (
    MAX_DRAIN_PARALLELISM,
    MAX_SCALE_DOWN_PARALLELISM,
    NEW_POD_BUFFER,
    UNREMOVABLE_RECHECK,
    AutoscalerOptions,
)
from kubesched.autoscaler.scaledown import SCALE_DOWN_DISABLED, pods_to_move, scale_down
from kubesched.autoscaler.scaleup import scale_up_options
from kubesched.autoscaler.snapshots import CheckerPool, ClusterMirror
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.faults import EVICTED_PREFIX
from kubesched.backends.sim.timeline import NodeAdded
from kubesched.framework.types import NO_NODES_AVAILABLE

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"


def scaled_down(node: str) -> str:
    """The placement message of a pod evicted by a scale-down."""
    return f"{EVICTED_PREFIX}node {node} scaled down by cluster-autoscaler"


@dataclass
class NodeLife:
    """A node of a group: asked for (billed from then), joined, deleted (None: not yet)."""

    group: str
    requested: float
    ready: float
    removed: float | None = None

    def hours(self, end: float) -> float:
        stop = end if self.removed is None else min(self.removed, end)
        return max(0.0, stop - self.requested) / 3600.0


@dataclass
class GroupSummary:
    name: str
    price: float
    min_size: int
    max_size: int
    at_start: int
    at_end: int
    peak: int
    added: int
    removed: int
    node_hours: float
    # (virtual time, nodes billed: joined or asked for, nodes joined) at each change
    series: list[tuple[float, int, int]] = field(default_factory=list)

    @property
    def cost(self) -> float:
        return self.node_hours * self.price

    def as_json(self) -> dict[str, Any]:
        return {"group": self.name, "minSize": self.min_size, "maxSize": self.max_size,
                "atStart": self.at_start, "atEnd": self.at_end, "peak": self.peak,
                "added": self.added, "removed": self.removed,
                "nodeHours": round(self.node_hours, 6), "price": self.price,
                "cost": round(self.cost, 6),
                "series": [{"t": t, "nodes": billed, "ready": ready}
                           for t, billed, ready in self.series]}


@dataclass
class AutoscaleSummary:
    groups: list[GroupSummary]
    cannot_help: list[str]  # pods still pending that no group's template node can host
    scale_ups: list[tuple[float, str, int]]  # (time, group, nodes)
    scale_downs: list[tuple[float, str]]  # (time, node) deletions decided

    @property
    def node_hours(self) -> float:
        return sum(g.node_hours for g in self.groups)

    @property
    def cost(self) -> float:
        return sum(g.cost for g in self.groups)

    def as_json(self) -> dict[str, Any]:
        return {"groups": [g.as_json() for g in self.groups],
                "nodeHours": round(self.node_hours, 6), "cost": round(self.cost, 6),
                "cannotHelp": self.cannot_help,
                "scaleUps": [{"t": t, "group": g, "nodes": n} for t, g, n in self.scale_ups],
                "scaleDowns": [{"t": t, "node": n} for t, n in self.scale_downs]}


class ClusterAutoscaler:
    """The run loop's ``PeriodicController`` for ``sim`` (``attach`` wires it in)."""

    def __init__(self, sim: SimCluster, options: AutoscalerOptions, seed: int = 0) -> None:
        self.sim = sim
        self.options = options
        self.interval = options.scan_interval
        self.groups: list[NodeGroup] = list(sim.scenario.objects.get("NodeGroup", ()))
        self.by_name = {g.name: g for g in self.groups}
        self.rng = random.Random(seed)
        self.started = False
        self.target: dict[str, int] = {}  # each group's target size
        self.upcoming: dict[str, str] = {}  # node asked for, not joined yet -> group
        self.draining: dict[str, str] = {}  # node tainted and drained -> group
        self.unneeded: dict[str, float] = {}  # node -> since when
        self.last_scale_up = -math.inf
        self.last_delete = -math.inf
        self.lives: dict[str, NodeLife] = {}
        self.initial: set[str] = set()  # the group nodes there at the start
        self._movers: dict[str, list[Pod]] = {}  # unneeded node -> the pods a drain evicts
        self.scale_ups: list[tuple[float, str, int]] = []
        self.scale_downs: list[tuple[float, str]] = []
        self.cannot_help: dict[str, str] = {}  # uid -> key, at the last loop that saw them
        # node -> until when it is not simulated again (found unremovable: its pods cannot
        # all move; --unremovable-node-recheck-timeout)
        self.unremovable: dict[str, float] = {}
        self._pool = CheckerPool(self._new_checker)
        self._mirror: ClusterMirror | None = None

    # ------------------------------------------------------------------ the loop

    def _start(self, now: float) -> None:
        self.started = True
        self.target = dict.fromkeys(self.by_name, 0)
        for name, node in self.sim.api.nodes.items():
            g = node.metadata.labels.get(GROUP_LABEL)
            if g in self.target:
                self.target[g] += 1
                self.lives[name] = NodeLife(g, now, now)
                self.initial.add(name)

    def run(self, now: float) -> float | None:
        if not self.started:
            self._start(now)
        self._pool.reset()
        self._settle(now)
        pending = self._unschedulable()
        to_help = self._not_for_upcoming(pending)
        wait_for_more = bool(to_help) and all(t > now - NEW_POD_BUFFER for _p, t in to_help)
        if to_help and not wait_for_more and self._scale_up([p for p, _t in to_help], now):
            self.last_scale_up = now
            return self._wake(now, in_cooldown=True)
        if not self.options.scale_down_enabled:
            return now + self.interval if wait_for_more else None
        self._find_unneeded(now)
        o = self.options
        cooldown = (wait_for_more or self.last_scale_up + o.scale_down_delay_after_add > now
                    or self.last_delete + o.scale_down_delay_after_delete > now)
        if not cooldown:
            self._scale_down(now)
        want = self._wake(now, in_cooldown=cooldown)
        if wait_for_more:
            want = now + self.interval if want is None else min(want, now + self.interval)
        return want

    def _settle(self, now: float) -> None:
        api = self.sim.api
        for name in [n for n in self.upcoming if n in api.nodes]:
            del self.upcoming[name]
        for name in list(self.draining):
            if name in api.nodes and pods_to_move(self._pods_on(name)):
                continue
            del self.draining[name]
            self._delete_node(name, now)
        for name, life in self.lives.items():
            # a node gone otherwise (a fault): its group's target follows
            if life.removed is None and name not in api.nodes and name not in self.upcoming:
                life.removed = now
                self.target[life.group] -= 1
                self.unneeded.pop(name, None)

    def _pods_on(self, name: str) -> list[Pod]:
        """The pods on node ``name``, by namespace/name: the drain simulation places them
        in this order, which must be the same every run (and after a resume) —
        cluster-autoscaler's, its informer's list, is not defined."""
        pods = self.sim.api.pods
        return sorted((pods[u] for u in self.sim.api.pods_on_node(name) if u in pods),
                      key=lambda p: p.key)

    def _unschedulable(self) -> list[tuple[Pod, float]]:
        """The pods the scheduler marked unschedulable (condition PodScheduled False,
        reason Unschedulable — or, in a cluster with no node, the scheduler's error that
        says so, which upstream reports as Unschedulable too), with when they were first
        tried (their creation, in a simulator that tries a pod as it arrives)."""
        api = self.sim.api
        out = []
        for qpi in self.sim.scheduler.queue.pending_pods():
            if qpi.gated:
                continue
            pod = api.pods.get(qpi.pod.uid)
            if pod is None or pod.spec.node_name or pod.uid in api.deleted:
                continue
            if any(c.type == "PodScheduled" and c.status == "False"
                   and (c.reason == "Unschedulable" or c.message == NO_NODES_AVAILABLE)
                   for c in pod.status.conditions):
                t = qpi.initial_attempt_timestamp
                out.append((pod, qpi.timestamp if t is None else t))
        return out

    def _new_checker(self) -> PredicateChecker:
        sim = self.sim
        return PredicateChecker(sim.scheduler.config, sim.objects, sim.scenario.namespaces)

    def _not_for_upcoming(self, pending: list[tuple[Pod, float]]) -> list[tuple[Pod, float]]:
        """``pending`` less the pods that fit on the nodes still to join (each placed there
        in turn), so that one scale-up is not made twice for the same pods."""
        if not self.upcoming or not pending:
            return pending
        checker = self._pool.get()
        names = []
        for name, g in self.upcoming.items():
            checker.add_node(self.by_name[g].node(name))
            names.append(name)
        out = []
        for pod, t in pending:
            where = checker.fits_any(pod, names)
            if where is None:
                out.append((pod, t))
            else:
                checker.add_pod(bound_copy(pod, where))
        return out

    # ------------------------------------------------------------------ scale-up

    def _scale_up(self, pods: list[Pod], now: float) -> bool:
        api = self.sim.api
        o = self.options
        total = len(api.nodes) + len(self.upcoming)
        if o.max_nodes_total and len(api.nodes) >= o.max_nodes_total:
            return False
        opts = scale_up_options(pods, self.groups, self.target, self._pool.get)
        self.cannot_help = {p.uid: p.key for p in opts.cannot_help}
        best = best_option(o.expander, opts.options, self.rng)
        if best is None:
            return False
        n = best.node_count
        if o.max_nodes_total:
            n = min(n, o.max_nodes_total - total)
        if n <= 0:
            return False
        g = best.group
        for _ in range(n):
            name = self._new_name(g.name)
            ready = now + g.provisioning_delay
            self.upcoming[name] = g.name
            self.lives[name] = NodeLife(g.name, now, ready)
            self.sim.timeline.push(ready, NodeAdded(g.node(name)))
        self.target[g.name] += n
        self.scale_ups.append((now, g.name, n))
        return True

    def _new_name(self, group: str) -> str:
        used = self.sim.api.nodes
        i = sum(1 for life in self.lives.values() if life.group == group)
        while f"{group}-{i}" in used or f"{group}-{i}" in self.lives:
            i += 1
        return f"{group}-{i}"

    # ------------------------------------------------------------------ scale-down

    def _find_unneeded(self, now: float) -> None:
        sim = self.sim
        api, cache = sim.api, sim.scheduler.cache
        threshold = self.options.scale_down_utilization_threshold
        candidates: set[str] = set()
        for name, node in api.nodes.items():
            if node.metadata.labels.get(GROUP_LABEL) not in self.by_name \
                    or name in self.draining \
                    or node.metadata.annotations.get(SCALE_DOWN_DISABLED) == "true":
                continue
            ni = cache.nodes.get(name)
            if ni is None or self.unremovable.get(name, -math.inf) > now:
                continue
            if _utilization(ni.allocatable, ni.requested) < threshold:
                candidates.add(name)
        if not candidates:
            self.unneeded = {}
            return
        pods_on = {name: self._pods_on(name) for name in candidates}
        movers = {name: pods_to_move(pods) for name, pods in pods_on.items()}
        dest = {name: node for name, node in api.nodes.items() if name not in self.draining}
        pdbs = list(sim.objects.get("PodDisruptionBudget", ()))
        bound = [p for p in api.pods.values() if p.spec.node_name] if pdbs else []
        if any(movers.values()):
            if self._mirror is None:
                self._mirror = ClusterMirror(self._new_checker)
            checker = self._mirror.sync(dest, api.pods)
        else:
            checker = self._pool.get()  # nothing to place: never asked
        # every group as if far above its minSize: minSize is judged when a node would go
        # (RemovableAt), so that time unneeded is counted at the group's minimum too
        sizes = dict.fromkeys(self.by_name, 2**31)
        res = scale_down(list(dest.values()), pods_on, self.groups, sizes, pdbs, bound,
                         sim.objects, checker, threshold, candidates=candidates)
        self.unneeded = {n: self.unneeded.get(n, now) for n in res.removed}
        self._movers = {n: movers[n] for n in res.removed}
        for name in res.kept:
            self.unremovable[name] = now + UNREMOVABLE_RECHECK

    def _scale_down(self, now: float) -> None:
        unneeded_time = self.options.scale_down_unneeded_time
        ripe = [n for n, since in self.unneeded.items() if now - since >= unneeded_time]
        empty = [n for n in ripe if not self._movers[n]]
        drain = [n for n in ripe if self._movers[n]]
        left = dict(self.target)
        budget = MAX_SCALE_DOWN_PARALLELISM - len(self.draining)
        drains = MAX_DRAIN_PARALLELISM - len(self.draining)
        nodes = self.sim.api.nodes
        for name in empty + drain:
            g = self.by_name[nodes[name].metadata.labels[GROUP_LABEL]]
            if left[g.name] <= g.min_size:
                continue
            movers = self._movers[name]
            if budget <= 0 or (movers and drains <= 0):
                continue
            budget -= 1
            left[g.name] -= 1
            self.target[g.name] -= 1
            self.scale_downs.append((now, name))
            del self.unneeded[name]
            self.last_delete = now
            if not movers:
                self._delete_node(name, now)
                continue
            drains -= 1
            self._drain(nodes[name], movers)

    def _drain(self, node: Node, movers: list[Pod]) -> None:
        api = self.sim.api
        taint = Taint(TO_BE_DELETED_TAINT, str(int(self.sim.clock.now())), "NoSchedule")
        new = replace(node, spec=replace(node.spec, taints=(*node.spec.taints, taint)))
        api.update_node(node, new)
        self.draining[node.name] = node.metadata.labels[GROUP_LABEL]
        for pod in movers:
            current = api.pods.get(pod.uid)
            if current is not None:
                api.delete(current, scaled_down(node.name))

    def _delete_node(self, name: str, now: float) -> None:
        self.sim.api.remove_node(name)
        life = self.lives.get(name)
        if life is not None and life.removed is None:
            life.removed = now
        self.unneeded.pop(name, None)

    def _wake(self, now: float, *, in_cooldown: bool) -> float | None:
        """When a loop must come even if nothing changes: when the next unneeded node has
        been so for the unneeded time, or (one already has) when the cooldown is over.
        Nodes held by minSize or the deletion budgets wait for a change."""
        o = self.options
        if not o.scale_down_enabled or not self.unneeded:
            return None
        ends = [since + o.scale_down_unneeded_time for since in self.unneeded.values()]
        future = [t for t in ends if t > now]
        want = min(future) if future else None
        if in_cooldown and len(future) < len(ends):
            over = max(self.last_scale_up + o.scale_down_delay_after_add,
                       self.last_delete + o.scale_down_delay_after_delete)
            if over > now:
                want = over if want is None else min(want, over)
        return want

    # ------------------------------------------------------------------ --state-out

    def memory(self) -> dict[str, Any]:
        def t(v: float) -> float | None:
            return None if v == -math.inf else v

        return {"started": self.started, "target": dict(self.target),
                "upcoming": dict(self.upcoming), "draining": dict(self.draining),
                "unneeded": dict(self.unneeded), "lastScaleUp": t(self.last_scale_up),
                "lastDelete": t(self.last_delete), "initial": sorted(self.initial),
                "nodes": {n: [life.group, life.requested, life.ready, life.removed]
                          for n, life in self.lives.items()},
                "scaleUps": [list(x) for x in self.scale_ups],
                "scaleDowns": [list(x) for x in self.scale_downs],
                "cannotHelp": dict(self.cannot_help), "unremovable": dict(self.unremovable),
                "rng": generator_state(self.rng)}

    def restore(self, memory: dict[str, Any]) -> None:
        """``memory`` as ``memory`` wrote it; KeyError, TypeError or ValueError when not."""
        def t(v: Any) -> float:
            return -math.inf if v is None else float(v)

        def names(m: Any) -> dict[str, str]:
            return {str(k): str(v) for k, v in dict(m).items()}

        self.started = bool(memory["started"])
        self.target = {str(k): int(v) for k, v in dict(memory["target"]).items()}
        self.upcoming, self.draining = names(memory["upcoming"]), names(memory["draining"])
        self.unneeded = {str(k): float(v) for k, v in dict(memory["unneeded"]).items()}
        self.last_scale_up, self.last_delete = t(memory["lastScaleUp"]), t(memory["lastDelete"])
        self.initial = {str(n) for n in memory["initial"]}
        self.lives = {str(n): NodeLife(str(g), float(req), float(ready),
                                       None if gone is None else float(gone))
                      for n, (g, req, ready, gone) in dict(memory["nodes"]).items()}
        self.scale_ups = [(float(a), str(g), int(n)) for a, g, n in memory["scaleUps"]]
        self.scale_downs = [(float(a), str(n)) for a, n in memory["scaleDowns"]]
        self.cannot_help = names(memory["cannotHelp"])
        self.unremovable = {str(k): float(v) for k, v in dict(memory["unremovable"]).items()}
        set_generator_state(self.rng, memory["rng"])
        unknown = (set(self.target) | set(self.upcoming.values())) - set(self.by_name)
        if unknown:
            raise ValueError(f"names NodeGroup {sorted(unknown)[0]}, not in the state")

    # ------------------------------------------------------------------ after the run

    def summary(self, end: float) -> AutoscaleSummary:
        out = []
        api = self.sim.api
        still = {uid for uid in self.cannot_help if uid in api.pods
                 and not api.pods[uid].spec.node_name and uid not in api.deleted}
        for g in self.groups:
            lives = [life for life in self.lives.values() if life.group == g.name]
            changes: dict[float, list[int]] = {}
            for life in lives:
                changes.setdefault(life.requested, [0, 0])[0] += 1
                changes.setdefault(life.ready, [0, 0])[1] += 1
                if life.removed is not None:
                    d = changes.setdefault(life.removed, [0, 0])
                    d[0] -= 1
                    d[1] -= 1
            billed = ready = peak = 0
            series = []
            for t in sorted(changes):
                billed += changes[t][0]
                ready += changes[t][1]
                peak = max(peak, billed)
                series.append((t, billed, ready))
            at_start = sum(1 for n in self.initial if self.lives[n].group == g.name)
            out.append(GroupSummary(
                g.name, g.price, g.min_size, g.max_size, at_start,
                sum(1 for life in lives if life.removed is None), peak,
                sum(n for _t, name, n in self.scale_ups if name == g.name),
                sum(1 for life in lives if life.removed is not None),
                sum(life.hours(end) for life in lives), series))
        return AutoscaleSummary(out, [self.cannot_help[u] for u in self.cannot_help if u in still],
                                list(self.scale_ups), list(self.scale_downs))


def _utilization(alloc: dict[str, int], req: dict[str, int]) -> float:
    """The larger of cpu's and memory's requested share of what is allocatable (resources
    with none allocatable left out): which nodes the scale-down simulation looks at (it
    judges them by ``scaledown.utilization``). Asked of every node at every loop."""
    util = 0.0
    cpu = alloc.get("cpu", 0)
    if cpu > 0:
        util = req.get("cpu", 0) / cpu
    mem = alloc.get("memory", 0)
    if mem > 0:
        util = max(util, req.get("memory", 0) / mem)
    return util


def attach(sim: SimCluster, options: AutoscalerOptions, seed: int = 0) -> ClusterAutoscaler:
    """cluster-autoscaler as ``sim``'s periodic controller."""
    ca = ClusterAutoscaler(sim, options, seed)
    sim.loop.periodic = ca
    return ca
