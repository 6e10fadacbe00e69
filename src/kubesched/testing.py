"""Helpers for testing scheduling policies, out-of-tree plugins above all (docs/plugins.md):
run a scenario with your plugins enabled, ask why a pod goes where it goes, and check that
a plugin's batch form agrees with its per-node form on every node.

Scenarios are YAML text (or a loaded Scenario); configurations a KubeSchedulerConfiguration
as YAML text or a dict. Every simulation runs with the invariant checker on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import yaml

from kubesched.api.scenario import Scenario, load_scenario_text
from kubesched.api.types import Node, Pod
from kubesched.backends.sim.cluster import SimCluster, SimResult
from kubesched.cache.cache import Cache
from kubesched.config import SchedulerConfiguration, default_config, load_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    FilterBatch,
    FilterPlugin,
    NodeList,
    NormalizeScore,
    Plugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreBatch,
    ScorePlugin,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.loading import check_plugin_class

ScenarioLike = str | Scenario
ConfigLike = str | Mapping[str, Any] | None


def _scenario(scenario: ScenarioLike) -> Scenario:
    return load_scenario_text(scenario, "<test>") if isinstance(scenario, str) else scenario


def _config(config: ConfigLike, plugins: Iterable[type[Plugin]],
            scenario: Scenario) -> SchedulerConfiguration:
    if config is None and scenario.config is not None:
        config = scenario.config
    if config is None:
        cfg = default_config()
    else:
        doc = yaml.safe_load(config) if isinstance(config, str) else dict(config)
        cfg = load_config(doc, "<test config>")
    cfg.out_of_tree = {cls.name: check_plugin_class(cls, "plugins", repr(cls))
                       for cls in plugins}
    return cfg


def simulate(scenario: ScenarioLike, *, config: ConfigLike = None,
             plugins: Iterable[type[Plugin]] = (), seed: int = 0) -> SimResult:
    """The scenario simulated to its end with ``plugins`` registered (enable them in
    ``config`` by name); the invariant checker is on."""
    sc = _scenario(scenario)
    return SimCluster(sc, _config(config, plugins, sc), seed=seed, check=True).run()


def placements(scenario: ScenarioLike, *, config: ConfigLike = None,
               plugins: Iterable[type[Plugin]] = (), seed: int = 0) -> dict[str, str | None]:
    """Pod key → the node it was bound to (None: still pending)."""
    result = simulate(scenario, config=config, plugins=plugins, seed=seed)
    return {r.key: r.node for r in result.records}


def explain_pod(scenario: ScenarioLike, pod: str, *, config: ConfigLike = None,
                plugins: Iterable[type[Plugin]] = ()) -> dict[str, Any]:
    """``kubesched explain -o json`` for pending pod ``pod`` ("ns/name")."""
    from kubesched.explain import explain

    sc = _scenario(scenario)
    return explain(sc, _config(config, plugins, sc), pod)


def assert_forms_agree(plugin: Plugin, scenario: ScenarioLike, pod: str) -> None:
    """The plugin's batch forms (FilterBatch, ScoreBatch) give, for pending pod ``pod`` on
    every node of the scenario, exactly what its per-node forms give: Filter codes and
    reasons, raw scores. PreFilter / PreScore run first, as in a cycle. Raises
    AssertionError naming the first node that differs."""
    from kubesched.clock import VirtualClock
    from kubesched.explain import ReadOnlyBackend, find_target
    from kubesched.scheduler import Scheduler

    sc = _scenario(scenario)
    target = find_target(sc, pod)
    sched = Scheduler(ReadOnlyBackend(), VirtualClock(), default_config())
    sched.handle.objects = sc.objects
    sched.handle.namespaces = sc.namespaces
    plugin.handle = sched.handle
    for node in sc.nodes:
        sched.cache.add_node(node)
    for p in sc.pods:
        if p.spec.node_name and p.spec.node_name in sched.cache.nodes:
            sched.cache.add_pod(p)
    sched.cache.update_snapshot(sched.snapshot)
    snap = sched.snapshot
    infos = snap.node_infos
    idx = np.arange(len(infos))
    state = CycleState()
    if isinstance(plugin, PreFilterPlugin):
        _res, st = plugin.pre_filter(state, target, snap)
        if st is not None and not st.is_success():
            raise AssertionError(f"PreFilter of {plugin.name} returned {st}: nothing to compare")
    if isinstance(plugin, FilterPlugin) and isinstance(plugin, FilterBatch):
        batch = plugin.filter_batch(state, target, snap, idx)
        for i, ni in enumerate(infos):
            one = plugin.filter(state, target, ni) or Status()
            many = batch.status_at(i, plugin.name)
            if (one.code, one.reasons if one.code != Code.SUCCESS else ()) != (
                    many.code, many.reasons if many.code != Code.SUCCESS else ()):
                raise AssertionError(f"{plugin.name} on node {ni.name}: per-node {one}, "
                                     f"batch {many}")
    if isinstance(plugin, ScorePlugin) and isinstance(plugin, ScoreBatch):
        if isinstance(plugin, PreScorePlugin):
            plugin.pre_score(state, target, NodeList(None, idx, infos))
        raw = np.asarray(plugin.score_batch(state, target, snap, idx), dtype=np.int64)
        for i, ni in enumerate(infos):
            score = plugin.score(state, target, ni)
            if score != int(raw[i]):
                raise AssertionError(f"{plugin.name} on node {ni.name}: per-node score "
                                     f"{score}, batch {int(raw[i])}")
        if isinstance(plugin, NormalizeScore):
            plugin.normalize_score(state, target, raw.copy())


def snapshot_from_nodes(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> Snapshot:
    """A snapshot of ``nodes`` (in upstream's tree order) with the assigned ``pods`` on
    them, filled through a Cache as the scheduler fills its own: for a plugin's unit tests
    and tools that ask a plugin about a cluster without running one."""
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    return snap
