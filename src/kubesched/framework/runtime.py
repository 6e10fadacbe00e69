"""The runtime that runs one profile's plugins (upstream's frameworkImpl).

Filter and Score run in the batch form over the snapshot's NodeTable where a plugin has one,
and loop the per-node form otherwise; either way the first failing Filter plugin decides a
node's status, as upstream.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import WILDCARD, ClusterEventWithHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    NodeList,
    Plugin,
    PluginError,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    implements,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import FailedNodes, NodeToStatus, QueuedPodInfo

log = logging.getLogger(__name__)

NOT_YET_IMPLEMENTED: frozenset[str] = frozenset()


@dataclass(slots=True)
class FilterOutcome:
    """Filter verdicts for candidate nodes: ``codes[i]`` (0 = feasible); for the others the
    index of the rejecting filter plugin and of its reasons in ``reasons``."""

    codes: np.ndarray
    plugin: np.ndarray
    reason_ids: np.ndarray
    reasons: list[tuple[str, ...]]

    def status_at(self, i: int, plugin_names: list[str]) -> Status:
        """One candidate's status (success, or its rejecting plugin's)."""
        if int(self.codes[i]) == 0:
            return Status()
        return self.failed_nodes(np.array([i]), [""], plugin_names).status(0)

    def failed_nodes(self, positions: np.ndarray, names: list[str],
                     plugin_names: list[str]) -> FailedNodes:
        """The rejected candidates at ``positions`` (their node ``names``), in bulk."""
        return FailedNodes(names, self.codes[positions], self.plugin[positions],
                           self.reason_ids[positions], self.reasons, plugin_names)


@dataclass(slots=True)
class ScoreOutcome:
    plugins: list[str]  # score plugins that ran (not skipped)
    scores: np.ndarray  # [plugins, nodes] normalized, before weight
    weights: np.ndarray  # [plugins]
    totals: np.ndarray  # [nodes] Σ weight × score


class Framework:
    """One profile: its plugins per extension point, in order, and how to run them."""

    def __init__(self, profile: Any, registry: dict[str, type[Plugin]], handle: Handle,
                 global_percentage: int = 0) -> None:
        from kubesched.config import expand_plugins

        self.profile_name: str = profile.scheduler_name
        self.handle = handle
        pct = profile.percentage_of_nodes_to_score
        self.percentage_of_nodes_to_score: int = global_percentage if pct is None else pct

        # Default-profile plugins kubesched does not have yet are left out, loudly
        # (docs/differences.md); any other unknown name is the user's error.
        self.left_out: list[str] = []

        def impl(name: str, point: str) -> bool:
            cls = registry.get(name)
            if cls is None:
                if name in NOT_YET_IMPLEMENTED:
                    if name not in self.left_out:
                        self.left_out.append(name)
                        log.warning("profile %s: plugin %s is not implemented yet; running "
                                    "without it", self.profile_name, name)
                    return False
                raise InputError(f'plugin "{name}" does not exist',
                                 obj=f"profile {self.profile_name}")
            return implements(cls, point)

        # ``known`` first, so that a name no registry has is refused with its field path
        plan = expand_plugins(profile, impl,
                              known=lambda n: n in registry or n in NOT_YET_IMPLEMENTED)
        instances: dict[str, Plugin] = {}

        def get(name: str) -> Plugin:
            if name not in instances:
                instances[name] = registry[name](profile.plugin_config.get(name), handle)
            return instances[name]

        def at(point: str) -> list[Any]:
            return [get(name) for name, _w in plan.get(point, [])]

        self.pre_enqueue: list[PreEnqueuePlugin] = at("preEnqueue")
        queue_sort: list[QueueSortPlugin] = at("queueSort")
        if len(queue_sort) != 1:
            raise InputError("exactly one queue sort plugin must be enabled",
                             obj=f"profile {self.profile_name}", field="plugins.queueSort")
        self.queue_sort = queue_sort[0]
        self.pre_filter: list[PreFilterPlugin] = at("preFilter")
        self.filter: list[FilterPlugin] = at("filter")
        self.filter_names = [p.name for p in self.filter]
        self.post_filter: list[PostFilterPlugin] = at("postFilter")
        self.pre_score: list[PreScorePlugin] = at("preScore")
        self.score: list[ScorePlugin] = at("score")
        self.score_weights = {name: max(w, 1) for name, w in plan.get("score", [])}
        self.reserve: list[ReservePlugin] = at("reserve")
        self.permit = at("permit")
        self.pre_bind: list[PreBindPlugin] = at("preBind")
        self.bind: list[BindPlugin] = at("bind")
        self.post_bind: list[PostBindPlugin] = at("postBind")
        if not self.bind:
            raise InputError("at least one bind plugin is needed",
                             obj=f"profile {self.profile_name}", field="plugins.bind")
        self.plugins = instances
        for p in instances.values():  # plugins that drive the framework (DefaultPreemption)
            attach = getattr(p, "set_framework", None)
            if attach is not None:
                attach(self)

    # ------------------------------------------------------------------ queue

    def enqueue_extensions(self) -> dict[str, list[ClusterEventWithHint]]:
        """Each plugin's events; a plugin that registers none is interested in every event
        (upstream's backward-compatible default)."""
        return {name: (p.events_to_register() if isinstance(p, EnqueueExtensions)
                       else [ClusterEventWithHint(WILDCARD)])
                for name, p in self.plugins.items()}

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for p in self.pre_enqueue:
            st = p.pre_enqueue(pod)
            if st is not None and not st.is_success():
                st.plugin = p.name
                return st
        return Status()

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    # ------------------------------------------------------------------ PreFilter

    def run_pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                       ) -> tuple[PreFilterResult, Status, list[str]]:
        """(merged result, status, sorted names of plugins that narrowed the node set)."""
        result = PreFilterResult()
        with_nodes: list[str] = []
        returned = Status()
        for p in self.pre_filter:
            res, st = p.pre_filter(state, pod, snapshot)
            if st is not None and st.is_skip():
                state.skip_filter.add(p.name)
                continue
            if st is not None and not st.is_success():
                st.plugin = p.name
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return result, st, []
                if st.code == Code.UNSCHEDULABLE:
                    returned = st
                    continue
                return result, Status(
                    Code.ERROR, (f'running PreFilter plugin "{p.name}": {st.message()}',),
                    p.name), []
            if res is not None and not res.all_nodes():
                with_nodes.append(p.name)
            result = result.merge(res)
            if not result.all_nodes() and not result.node_names:
                names = sorted(set(with_nodes))
                msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                       f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously")
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)), names
        return result, returned, sorted(set(with_nodes))

    def _run_add_pod(self, state: CycleState, pod: Pod, other: Pod, ni: NodeInfo) -> None:
        for p in self.pre_filter:
            ext = p.pre_filter_extensions()
            if ext is None or p.name in state.skip_filter:
                continue
            st = ext.add_pod(state, pod, other, ni)
            if st is not None and not st.is_success():
                raise PluginError(f'running AddPod on PreFilter plugin "{p.name}": {st.message()}')

    def run_add_pod(self, state: CycleState, pod: Pod, other: Pod, ni: NodeInfo) -> None:
        """The PreFilter plugins' AddPod extensions (raises PluginError)."""
        self._run_add_pod(state, pod, other, ni)

    def run_remove_pod(self, state: CycleState, pod: Pod, other: Pod, ni: NodeInfo) -> None:
        for p in self.pre_filter:
            ext = p.pre_filter_extensions()
            if ext is None or p.name in state.skip_filter:
                continue
            st = ext.remove_pod(state, pod, other, ni)
            if st is not None and not st.is_success():
                raise PluginError(
                    f'running RemovePod on PreFilter plugin "{p.name}": {st.message()}')

    # ------------------------------------------------------------------ Filter

    def run_filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        """All Filter plugins on one node (per-node form); stops at the first failure."""
        for p in self.filter:
            if p.name in state.skip_filter:
                continue
            st = p.filter(state, pod, ni)
            if st is not None and not st.is_success():
                if not st.is_rejected():
                    st = Status(Code.ERROR,
                                (f'running "{p.name}" filter plugin: {st.message()}',))
                st.plugin = p.name
                return st
        return Status()

    def run_filter_with_nominated(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        """Upstream's two passes: with equal-or-higher-priority nominated pods, then without."""
        added, state1, ni1 = self._add_nominated_pods(state, pod, ni)
        st = self.run_filter(state1, pod, ni1)
        if not added or not st.is_success():
            return st
        return self.run_filter(state, pod, ni)

    def _add_nominated_pods(self, state: CycleState, pod: Pod, ni: NodeInfo
                            ) -> tuple[bool, CycleState, NodeInfo]:
        nominated = self.handle.nominated_pods_for_node(ni.name)
        if not nominated:
            return False, state, ni
        prio = pod.priority
        picked = [p for p in nominated if p.priority >= prio and p.uid != pod.uid]
        if not picked:
            return False, state, ni
        ni_out = ni.clone()
        state_out = state.clone()
        for p in picked:
            ni_out.add_pod(p)
            self._run_add_pod(state_out, pod, p, ni_out)
        return True, state_out, ni_out

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> FilterOutcome:
        """All Filter plugins on the nodes ``idx`` (rows of the node table), without
        nominated pods; a node's status is that of the first plugin rejecting it."""
        n = len(idx)
        codes = np.zeros(n, dtype=np.int8)
        plugin = np.full(n, -1, dtype=np.int16)
        reason_ids = np.zeros(n, dtype=np.int32)
        reasons: list[tuple[str, ...]] = []
        alive = np.arange(n)
        for pi, p in enumerate(self.filter):
            if p.name in state.skip_filter or len(alive) == 0:
                continue
            sub = idx[alive]
            batch = getattr(p, "filter_batch", None)
            if batch is not None:
                res = batch(state, pod, snapshot, sub)
                res_codes, res_rids, res_reasons = res.codes, res.reason_ids, res.reasons
            else:
                res_codes, res_rids, res_reasons = self._loop_filter(p, state, pod, snapshot, sub)
            failed = res_codes != 0
            if not failed.any():
                continue
            bad = res_codes[failed]
            if ((bad != Code.UNSCHEDULABLE) & (bad != Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
                    & (bad != Code.PENDING)).any():
                j = int(np.flatnonzero(failed)[0])
                msg = ", ".join(res_reasons[int(res_rids[j])]) if res_reasons else ""
                raise PluginError(f'running "{p.name}" filter plugin: {msg}')
            where = alive[failed]
            codes[where] = bad
            plugin[where] = pi
            reason_ids[where] = res_rids[failed] + len(reasons)
            reasons.extend(res_reasons)
            alive = alive[~failed]
        return FilterOutcome(codes, plugin, reason_ids, reasons)

    @staticmethod
    def _loop_filter(p: FilterPlugin, state: CycleState, pod: Pod, snapshot: Snapshot,
                     sub: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
        codes = np.zeros(len(sub), dtype=np.int8)
        rids = np.zeros(len(sub), dtype=np.int32)
        reasons: list[tuple[str, ...]] = []
        seen: dict[tuple[str, ...], int] = {}
        infos = snapshot.node_infos
        for k, i in enumerate(sub.tolist()):
            st = p.filter(state, pod, infos[i])
            if st is None or st.is_success():
                continue
            codes[k] = st.code
            rid = seen.get(st.reasons)
            if rid is None:
                rid = seen[st.reasons] = len(reasons)
                reasons.append(st.reasons)
            rids[k] = rid
        return codes, rids, reasons

    # ------------------------------------------------------------------ PostFilter

    def run_post_filter(self, state: CycleState, pod: Pod, n2s: NodeToStatus
                        ) -> tuple[str | None, Status]:
        nominated: str | None = None
        reasons: list[str] = []
        rejector = ""
        for p in self.post_filter:
            node, st = p.post_filter(state, pod, n2s)
            if st.is_success():
                return node, st
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return node, st.with_plugin(p.name)
            if not st.is_rejected():
                return None, Status(Code.ERROR, st.reasons, p.name)
            if node is not None:
                nominated = node
            reasons.extend(st.reasons)
            rejector = rejector or p.name
        return nominated, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # ------------------------------------------------------------------ Score

    def has_score(self) -> bool:
        return bool(self.score)

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> None:
        for p in self.pre_score:
            st = p.pre_score(state, pod, nodes)
            if st is None or st.is_success():
                continue
            if st.is_skip():
                state.skip_score.add(p.name)
                continue
            raise PluginError(f'running PreScore plugin "{p.name}": {st.message()}')

    def run_score(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                  idx: np.ndarray) -> ScoreOutcome:
        names: list[str] = []
        rows: list[np.ndarray] = []
        for p in self.score:
            if p.name in state.skip_score:
                continue
            batch = getattr(p, "score_batch", None)
            if batch is not None:
                raw = np.asarray(batch(state, pod, snapshot, idx), dtype=np.int64)
            else:
                infos = snapshot.node_infos
                raw = np.fromiter((p.score(state, pod, infos[i]) for i in idx.tolist()),
                                  dtype=np.int64, count=len(idx))
            norm = getattr(p, "normalize_score", None)
            if norm is not None:
                raw = np.asarray(norm(state, pod, raw), dtype=np.int64)
            if len(raw) and (raw.min() < MIN_NODE_SCORE or raw.max() > MAX_NODE_SCORE):
                bad = int(raw[(raw < MIN_NODE_SCORE) | (raw > MAX_NODE_SCORE)][0])
                raise PluginError(f'plugin "{p.name}" returns an invalid score {bad}, '
                                  f"it should in the range of [{MIN_NODE_SCORE}, "
                                  f"{MAX_NODE_SCORE}] after normalizing")
            names.append(p.name)
            rows.append(raw)
        weights = np.array([self.score_weights[n] for n in names], dtype=np.int64)
        scores = np.vstack(rows) if rows else np.zeros((0, len(idx)), dtype=np.int64)
        totals = (scores * weights[:, None]).sum(axis=0) if rows else np.zeros(
            len(idx), dtype=np.int64)
        return ScoreOutcome(names, scores, weights, totals)

    # ------------------------------------------------------------------ Reserve .. PostBind

    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        return _first_failure(self.reserve, "Reserve",
                              lambda p: p.reserve(state, pod, node))

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        for p in reversed(self.reserve):
            p.unreserve(state, pod, node)

    def run_permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        """Success, a rejection, or Wait with the shortest timeout asked for."""
        waiting = False
        timeout = float("inf")
        for p in self.permit:
            st, t = p.permit(state, pod, node)
            if st is None or st.is_success():
                continue
            if st.is_rejected():
                st.plugin = p.name
                return st, 0.0
            if st.code == Code.WAIT:
                waiting = True
                timeout = min(timeout, t)
                continue
            return Status(Code.ERROR,
                          (f'running Permit plugin "{p.name}": {st.message()}',), p.name), 0.0
        if waiting:
            return Status(Code.WAIT), timeout
        return Status(), 0.0

    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        return _first_failure(self.pre_bind, "PreBind",
                              lambda p: p.pre_bind(state, pod, node))

    def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """The first bind plugin that does not Skip binds; Skip if all skipped."""
        for p in self.bind:
            st = p.bind(state, pod, node)
            if st is not None and st.is_skip():
                continue
            return _first_failure([p], "Bind", _returning(st))
        return Status(Code.SKIP)

    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        for p in self.post_bind:
            p.post_bind(state, pod, node)


def _returning(st: Status | None) -> Callable[[Any], Status | None]:
    return lambda _p: st


def _first_failure(plugins: Sequence[Any], point: str,
                   call: Callable[[Any], Status | None]) -> Status:
    """Run ``call`` on each plugin until one fails: a rejection keeps its code, anything
    else becomes an Error naming the plugin, as upstream's Run*Plugins do."""
    for p in plugins:
        st = call(p)
        if st is not None and not st.is_success():
            if not st.is_rejected():
                st = Status(Code.ERROR, (f'running {point} plugin "{p.name}": {st.message()}',))
            st.plugin = p.name
            return st
    return Status()
