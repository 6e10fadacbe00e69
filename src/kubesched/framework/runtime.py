"""The runtime that runs one profile's plugins (upstream's frameworkImpl).

Filter and Score run in the batch form over the snapshot's NodeTable where a plugin has one,
and loop the per-node form otherwise; either way the first failing Filter plugin decides a
node's status, as upstream.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import logging
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from kubesched.api.types import Pod
from kubesched.errors import InputError, debug
from kubesched.framework import signers
from kubesched.framework.batch import OpportunisticBatch
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import WILDCARD, ClusterEventWithHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    READS_NODE,
    READS_RESOURCES,
    BatchStatus,
    BindPlugin,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    FrameworkAware,
    NodeList,
    NormalizeScore,
    Plugin,
    PluginError,
    PodSigner,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreBatch,
    ScorePlugin,
    SignsNoPod,
    implements,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.observer import Observer, instrumented, status_label
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.table_cache import RowMemo
from kubesched.framework.types import FailedNodes, NodeToStatus, QueuedPodInfo
from kubesched.framework.waiting import MAX_TIMEOUT_SECONDS, PERMIT_WAIT_MESSAGES, WaitingPod

log = logging.getLogger(__name__)

FilterCall = Callable[[CycleState, Pod, NodeInfo], "Status | None"]
BatchCall = Callable[[CycleState, Pod, Snapshot, np.ndarray], BatchStatus]

F = TypeVar("F", bound=Callable[..., Any])


def _point(name: str) -> Callable[[F], F]:
    """Marks a Framework method as extension point ``name``: while an observer is set, the
    method is timed for it (``Framework.set_observer``). Unobserved, it is the method
    itself, without a wrapper's call in every cycle."""

    def deco(fn: F) -> F:
        fn.extension_point = name  # type: ignore[attr-defined]  # read by _timed_points
        return fn

    return deco


def _timed(fwk: Framework, name: str, fn: Callable[..., Any], obs: Observer
           ) -> Callable[..., Any]:
    """``fn`` (a bound extension-point method) reporting its duration and status."""

    @functools.wraps(fn)
    def run(*args: Any) -> Any:
        obs.point_started(name)
        t0 = time.perf_counter()
        ret = fn(*args)
        obs.point_done(name, fwk.profile_name, status_label(ret), time.perf_counter() - t0)
        return ret

    return run


NOT_YET_IMPLEMENTED: frozenset[str] = frozenset()

# The codes a Filter plugin rejects a node with, as a lookup over code values (numpy compares
# an array with an IntEnum member several times slower than with a lookup or an int).
_REJECTING = np.zeros(max(Code) + 1, dtype=bool)
_REJECTING[[Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING]] = True


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

    def failed_nodes(self, positions: np.ndarray, names: Sequence[str],
                     plugin_names: list[str], rows: np.ndarray | None = None) -> FailedNodes:
        """The rejected candidates at ``positions`` (their node ``names``, table ``rows``),
        in bulk."""
        return FailedNodes(names, self.codes[positions], self.plugin[positions],
                           self.reason_ids[positions], self.reasons, plugin_names, rows)


@dataclass(slots=True)
class ScoreOutcome:
    plugins: list[str]  # score plugins that ran (not skipped)
    scores: np.ndarray  # [plugins, nodes] normalized, before weight
    weights: np.ndarray  # [plugins]
    totals: np.ndarray  # [nodes] Σ weight × score (+ the extenders' scores, when any)
    # Per extender name: the scores it answered and their contribution to the totals
    # (score × weight × MaxNodeScore/MaxExtenderPriority); ``extender_scored`` marks the
    # nodes some extender scored (upstream gives only those a random tie-breaker).
    extender_scores: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    extender_scored: np.ndarray | None = None


# pods whose filter signature a profile keeps (a pod is signed once, retried many times)
_MAX_SIGNATURES = 65536
_SIGNATURE_IDS = itertools.count()


def _filter_signer(p: Plugin) -> Callable[[Pod], Any] | None:
    """What signs a pod for ``p``'s PreFilter and Filter: ``sign_pod_for_filter`` where its
    scoring reads more than they do, else ``sign_pod``; None when it cannot sign."""
    sign: Callable[[Pod], Any] | None = (getattr(p, "sign_pod_for_filter", None)
                                         or getattr(p, "sign_pod", None))
    return sign


def _filter_signers(pre_filter: Sequence[Plugin], filters: Sequence[Plugin]
                    ) -> list[Callable[[Pod], Any]] | None:
    """Each PreFilter and Filter plugin's signer, once per plugin; None when one has none."""
    out = []
    seen: set[str] = set()
    for p in (*pre_filter, *filters):
        if p.name in seen:
            continue
        seen.add(p.name)
        sign = _filter_signer(p)
        if sign is None:
            return None
        out.append(sign)
    return out


class Framework:
    """One profile: its plugins per extension point, in order, and how to run them."""

    def __init__(self, profile: Any, registry: dict[str, type[Plugin]], handle: Handle,
                 global_percentage: int = 0, *, guarded: frozenset[str] = frozenset()
                 ) -> None:
        # plugins loaded from outside (--plugin, entry points): an exception they raise
        # fails the pod's cycle with an Error status, as a returned error would, instead of
        # ending the run; in-tree plugins are not wrapped (their hot path stays as it is)
        self.guarded = guarded
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
                instances[name] = construct(registry[name], profile.plugin_config.get(name),
                                            handle)
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
        # (0 is 1 already; a negative weight counts as given, as upstream counts it)
        self.score_weights = dict(plan.get("score", []))
        self.reserve: list[ReservePlugin] = at("reserve")
        self.permit = at("permit")
        self.pre_bind: list[PreBindPlugin] = at("preBind")
        self.bind: list[BindPlugin] = at("bind")
        self.post_bind: list[PostBindPlugin] = at("postBind")
        if not self.bind:
            raise InputError("at least one bind plugin is needed",
                             obj=f"profile {self.profile_name}", field="plugins.bind")
        self.plugins = instances
        self.observer: Observer | None = None
        self._filter_signers = _filter_signers(self.pre_filter, self.filter)
        self._each_filter_signer = [_filter_signer(p) for p in self.filter]
        self._filter_signatures: dict[str, tuple[Pod, Hashable | None]] = {}
        # each distinct signature as a number: a failure memo looks one up per attempt, and
        # hashing the nested tuple every time was a large part of a replayed attempt
        self._signature_ids: dict[Hashable, int] = {}
        self._kept_signatures: dict[str, tuple[Pod, tuple[bool, ...], Hashable | None]] = {}
        # filter_batch_kept: each row's encoded verdict per key, and the reasons it names
        self._kept_rows = RowMemo(max_keys=128)
        self._kept_reasons: list[tuple[str, ...]] = []
        self._kept_reason_ids: dict[tuple[str, ...], int] = {}
        self.batch = OpportunisticBatch()
        self._resolve()
        for p in instances.values():  # plugins that drive the framework (DefaultPreemption)
            if isinstance(p, FrameworkAware):
                p.set_framework(self)

    def set_observer(self, observer: Observer | None) -> None:
        """Record extension-point and (sampled) plugin durations from now on: every
        plugin call is resolved again, wrapped as upstream's instrumented plugins."""
        self.observer = observer
        for attr, value in vars(Framework).items():
            name = getattr(value, "extension_point", None)
            if name is None:
                continue
            if observer is None:
                self.__dict__.pop(attr, None)  # the class's method again
            else:
                setattr(self, attr, _timed(self, name, value.__get__(self), observer))
        self._resolve()

    def _resolve(self) -> None:
        """Each plugin's calls at each extension point, its optional capabilities looked
        up once (the batch forms, NormalizeScore), instrumented when observed."""
        obs = self.observer

        def call(p: Plugin, fn: Any, point: str) -> Any:
            if p.name in self.guarded:
                fn = guarded_call(fn, p.name, point)
            return fn if obs is None else instrumented(fn, p.name, point, obs)

        self._pre_filter_calls = [(p, call(p, p.pre_filter, "PreFilter"))
                                  for p in self.pre_filter]
        self._filter_calls: list[tuple[FilterPlugin, FilterCall, BatchCall | None]] = [
            (p, call(p, p.filter, "Filter"),
             call(p, p.filter_batch, "Filter") if isinstance(p, FilterBatch) else None)
            for p in self.filter]
        self.batch_filters = frozenset(p.name for p, _f, b in self._filter_calls
                                       if b is not None)
        self.per_node_filters = frozenset(p.name for p in self.filter) - self.batch_filters
        # Filters whose verdict a change of the table's columns answers (filter_reads), and
        # PreFilters keeping state AddPod/RemovePod update: filters_read_only_resources
        self._column_filters = frozenset(
            p.name for p in self.filter if p.filter_reads == READS_NODE
            or (p.filter_reads == READS_RESOURCES and p.name in self.batch_filters))
        self._row_local = frozenset(
            p.name for p in self.filter
            if p.filter_reads in (READS_NODE, READS_RESOURCES) or p.filter_row_local)
        self._extended_pre_filters = frozenset(
            p.name for p in self.pre_filter if p.pre_filter_extensions() is not None)
        # computeBatchablePlugins: every PreFilter, Filter, PreScore and Score plugin signs
        named = {p.name: p for p in (*self.pre_filter, *self.filter, *self.pre_score,
                                     *self.score)}
        self._signers = [p for p in named.values() if isinstance(p, PodSigner)]
        self._all_sign = len(self._signers) == len(named) and not any(
            isinstance(p, SignsNoPod) and p.signs_no_pod() for p in self._signers)
        self._post_filter_calls = [(p, call(p, p.post_filter, "PostFilter"))
                                   for p in self.post_filter]
        self._pre_score_calls = [(p, call(p, p.pre_score, "PreScore")) for p in self.pre_score]
        self._score_calls = [
            (p, call(p, p.score, "Score"),
             call(p, p.score_batch, "Score") if isinstance(p, ScoreBatch) else None,
             call(p, p.normalize_score, "ScoreExtensionNormalize")
             if isinstance(p, NormalizeScore) else None)
            for p in self.score]
        self._reserve_calls = [(p, call(p, p.reserve, "Reserve"),
                                call(p, p.unreserve, "Unreserve")) for p in self.reserve]
        self._permit_calls = [(p, call(p, p.permit, "Permit")) for p in self.permit]
        self._pre_bind_calls = [(p, call(p, p.pre_bind, "PreBind")) for p in self.pre_bind]
        self._bind_calls = [(p, call(p, p.bind, "Bind")) for p in self.bind]
        self._post_bind_calls = [(p, call(p, p.post_bind, "PostBind")) for p in self.post_bind]

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
        return SUCCESS  # (read only: a pod's every requeue asks)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    # ------------------------------------------------------------------ PreFilter

    @_point("PreFilter")
    def run_pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                       ) -> tuple[PreFilterResult, Status, list[str]]:
        """(merged result, status, sorted names of plugins that narrowed the node set)."""
        result = PreFilterResult()
        with_nodes: list[str] = []
        returned = Status()
        if self.observer is not None:
            state.record_plugin_metrics = self.observer.sample_cycle()
        for p, pre_filter in self._pre_filter_calls:
            res, st = pre_filter(state, pod, snapshot)
            if st is not None:
                code = st.code
                if code == Code.SKIP:
                    state.skip_filter.add(p.name)
                    continue
                if code != Code.SUCCESS:
                    st.plugin = p.name
                    if code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return result, st, []
                    if code == Code.UNSCHEDULABLE:
                        returned = st
                        continue
                    return result, Status(
                        Code.ERROR, (f'running PreFilter plugin "{p.name}": {st.message()}',),
                        p.name), []
            if res is None or res.node_names is None:
                continue  # (all nodes: the merged result stays as it is)
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
        for p, filter_one, _batch in self._filter_calls:
            if p.name in state.skip_filter:
                continue
            st = filter_one(state, pod, ni)
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

    def filters_read_only_resources(self, state: CycleState) -> bool:
        """Whether adding or removing pods on a node can be evaluated as a change of its
        requested and pod-count columns (``framework/adjusted.py``) for this cycle's pod:
        every Filter that runs reads nothing else of the pods on a node, and no PreFilter
        that runs keeps state its AddPod/RemovePod would update."""
        skip = state.skip_filter
        return (all(p.name in skip or p.name in self._column_filters for p in self.filter)
                and all(p.name in skip or p.name not in self._extended_pre_filters
                        for p in self.pre_filter))

    def filters_row_local(self, state: CycleState) -> bool:
        """Whether every Filter plugin that runs in this cycle judges a node by that node's
        row alone (``filter_row_local``): other nodes, their pods, or nodes that are not
        there change no verdict."""
        skip = state.skip_filter
        return all(p.name in skip or p.name in self._row_local for p in self.filter)

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

    @_point("Filter")
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
        for pi, (p, filter_one, batch) in enumerate(self._filter_calls):
            if p.name in state.skip_filter or len(alive) == 0:
                continue
            sub = idx[alive]
            if batch is not None:
                res = batch(state, pod, snapshot, sub)
                res_codes, res_rids, res_reasons = res.codes, res.reason_ids, res.reasons
            else:
                res_codes, res_rids, res_reasons = self._loop_filter(filter_one, state, pod,
                                                                     snapshot, sub)
            failed = res_codes != 0
            if not failed.any():
                continue
            bad = res_codes[failed]
            if not _REJECTING[bad].all():
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

    def rows_kept_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """What this cycle's Filter verdicts on a node are kept under
        (``filter_batch_kept``): the pod's filter signature and which Filter plugins run;
        None when some plugin that runs is not row-local (``filter_row_local``), when one
        cannot sign the pod, or when plugins are timed (metrics count their calls)."""
        if self.observer is not None:
            return None
        skip = state.skip_filter
        running = tuple([p.name not in skip for p in self.filter])
        kept = self._kept_signatures
        got = kept.get(pod.uid)
        if got is not None and got[0] is pod and got[1] == running:
            return got[2]
        # A row-local plugin's verdicts depend on the pod through what it signs: the
        # fragments of the plugins that run are the key.
        key: Hashable | None = None
        fragments: list[Any] = [running]
        local = self._row_local
        for p, sign, on in zip(self.filter, self._each_filter_signer, running, strict=True):
            if not on:
                continue
            got_fragments = sign(pod) if p.name in local and sign is not None else None
            if got_fragments is None:
                break
            fragments.append(tuple(got_fragments))
        else:
            key = tuple(fragments)
        if len(kept) >= _MAX_SIGNATURES:
            kept.clear()
        kept[pod.uid] = (pod, running, key)
        return key

    def filter_batch_kept(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                          idx: np.ndarray, key: Hashable) -> FilterOutcome:
        """``filter_batch``, a node's verdict kept for the pods of ``key``
        (``rows_kept_key``, with whatever else the caller knows the verdicts depend on) and
        computed again only when the node's row of the table changed: pods of one shape
        arriving one after another are filtered on the few nodes the last ones went to."""
        table = snapshot.table
        if table.base is not table:
            return self.filter_batch(state, pod, snapshot, idx)
        infos = snapshot.node_infos
        skip = state.skip_filter

        def one_row(r: int) -> int:
            # the per-node forms, for the one or two rows that changed since the last pod
            # of this shape (a batch pass costs tens of µs whatever its size)
            ni = infos[r]
            for pi, (p, filter_one, _batch) in enumerate(self._filter_calls):
                if p.name in skip:
                    continue
                st = filter_one(state, pod, ni)
                if st is None or st.is_success():
                    continue
                if not _REJECTING[st.code]:
                    raise PluginError(f'running "{p.name}" filter plugin: '
                                      f'{", ".join(st.reasons)}')
                return int(st.code) | (pi + 1) << 8 | self._reason_id(st.reasons) << 24
            return 0

        values = self._kept_rows.rows(
            table, key, idx,
            lambda _t, rows: self._encoded(self.filter_batch(state, pod, snapshot, rows)),
            one_row)
        n = len(values)
        if not values.any():  # every node passes (the common answer): nothing to decode
            return FilterOutcome(np.zeros(n, dtype=np.int8), np.full(n, -1, dtype=np.int16),
                                 np.zeros(n, dtype=np.int32), self._kept_reasons)
        plugin = ((values >> 8) & 0xFFFF).astype(np.int16)
        plugin -= 1
        return FilterOutcome((values & 0xFF).astype(np.int8), plugin,
                             (values >> 24).astype(np.int32), self._kept_reasons)

    def _encoded(self, out: FilterOutcome) -> np.ndarray:
        """Each node's verdict as one int64: code, rejecting plugin + 1 and the id of its
        reasons in ``_kept_reasons`` (the ids of every key, never reused)."""
        values = out.codes.astype(np.int64) | ((out.plugin.astype(np.int64) + 1) << 8)
        failed = out.codes != 0
        if failed.any():
            interned = np.array([self._reason_id(r) for r in out.reasons], dtype=np.int64)
            values[failed] |= interned[out.reason_ids[failed]] << 24
        return values

    def _reason_id(self, reasons: tuple[str, ...]) -> int:
        got = self._kept_reason_ids.get(reasons)
        if got is None:
            got = self._kept_reason_ids[reasons] = len(self._kept_reasons)
            self._kept_reasons.append(reasons)
        return got

    def filter_signature(self, pod: Pod) -> Hashable | None:
        """Every PreFilter and Filter plugin's fragments for ``pod`` (``sign_pod_for_filter``
        where a plugin's scoring reads more than its filters, else ``sign_pod``): pods with
        equal signatures get the same PreFilter and Filter verdicts over the same cluster.
        None when a plugin cannot sign the pod, or when the pod has an ephemeral volume,
        whose claim is named after the pod (two pods with equal templates have different
        claims). Kept per pod: a pod is retried many times."""
        kept = self._filter_signatures
        got = kept.get(pod.uid)
        if got is not None and got[0] is pod:
            return got[1]
        sig: Hashable | None = None
        if self._filter_signers is not None and not any(
                v.source is not None and v.source.get("ephemeral") is not None
                for v in pod.spec.volumes):
            fragments: dict[str, Hashable] = {}
            for sign in self._filter_signers:
                got_fragments = sign(pod)
                if got_fragments is None:
                    break
                fragments.update(got_fragments)
            else:
                ids = self._signature_ids
                sig = ids.setdefault(tuple(sorted(fragments.items(), key=lambda kv: kv[0])),
                                     next(_SIGNATURE_IDS))
        if len(kept) >= _MAX_SIGNATURES:
            kept.clear()
            # numbers are never reused: one kept elsewhere never names another signature
            self._signature_ids.clear()
        kept[pod.uid] = (pod, sig)
        return sig

    @staticmethod
    def _loop_filter(filter_one: Callable[[CycleState, Pod, NodeInfo], Status | None],
                     state: CycleState, pod: Pod, snapshot: Snapshot, sub: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
        codes = np.zeros(len(sub), dtype=np.int8)
        rids = np.zeros(len(sub), dtype=np.int32)
        reasons: list[tuple[str, ...]] = []
        seen: dict[tuple[str, ...], int] = {}
        infos = snapshot.node_infos
        for k, i in enumerate(sub.tolist()):
            st = filter_one(state, pod, infos[i])
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

    @_point("PostFilter")
    def run_post_filter(self, state: CycleState, pod: Pod, n2s: NodeToStatus
                        ) -> tuple[str | None, Status]:
        nominated: str | None = None
        reasons: list[str] = []
        rejector = ""
        for p, post_filter in self._post_filter_calls:
            node, st = post_filter(state, pod, n2s)
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

    # ------------------------------------------------------------------ signatures

    def signatures_enabled(self) -> bool:
        """``computeBatchablePlugins``: every PreFilter, Filter, PreScore and Score plugin
        can sign pods (``sign_pod``), and no extender is configured."""
        return self._all_sign and not self.handle.extenders

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """``SignPod``: the pod's signature, or None when some plugin cannot sign it (or
        signatures are off for this profile). Pods with equal signatures get the same
        feasibility and scores on the same nodes."""
        if not self.signatures_enabled():
            return None
        sig: dict[str, Hashable] = {signers.SCHEDULER_NAME: pod.spec.scheduler_name}
        for p in self._signers:
            fragments = p.sign_pod(pod)
            if fragments is None:
                return None
            sig.update(fragments)
        return tuple(sorted(sig.items(), key=lambda kv: kv[0]))

    # ------------------------------------------------------------------ Score

    def has_score(self) -> bool:
        return bool(self.score)

    @_point("PreScore")
    def run_pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> None:
        for p, pre_score in self._pre_score_calls:
            st = pre_score(state, pod, nodes)
            if st is None or st.is_success():
                continue
            if st.is_skip():
                state.skip_score.add(p.name)
                continue
            raise PluginError(f'running PreScore plugin "{p.name}": {st.message()}')

    @_point("Score")
    def run_score(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                  idx: np.ndarray) -> ScoreOutcome:
        names: list[str] = []
        rows: list[np.ndarray] = []
        for p, score_one, batch, norm in self._score_calls:
            if p.name in state.skip_score:
                continue
            if batch is not None:
                raw = np.asarray(batch(state, pod, snapshot, idx), dtype=np.int64)
            else:
                infos = snapshot.node_infos
                raw = np.fromiter((score_one(state, pod, infos[i]) for i in idx.tolist()),
                                  dtype=np.int64, count=len(idx))
            if norm is not None:
                raw = np.asarray(norm(state, pod, raw), dtype=np.int64)
            names.append(p.name)
            rows.append(raw)
        weights = np.array([self.score_weights[n] for n in names], dtype=np.int64)
        scores = np.array(rows, dtype=np.int64) if rows else np.zeros((0, len(idx)),
                                                                      dtype=np.int64)
        if scores.size and (scores.min() < MIN_NODE_SCORE or scores.max() > MAX_NODE_SCORE):
            # (one range check over every plugin's row; the first plugin out of range names
            # the error)
            for name, raw in zip(names, rows, strict=True):
                out = raw[(raw < MIN_NODE_SCORE) | (raw > MAX_NODE_SCORE)]
                if len(out):
                    raise PluginError(f'plugin "{name}" returns an invalid score '
                                      f"{int(out[0])}, it should in the range of "
                                      f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after "
                                      "normalizing")
        totals = weights @ scores if rows else np.zeros(len(idx), dtype=np.int64)
        return ScoreOutcome(names, scores, weights, totals)

    # ------------------------------------------------------------------ Reserve .. PostBind

    @_point("Reserve")
    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        return _first_failure([(p, r) for p, r, _u in self._reserve_calls], "Reserve",
                              lambda fn: fn(state, pod, node))

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        for _p, _reserve, unreserve in reversed(self._reserve_calls):
            unreserve(state, pod, node)

    @_point("Permit")
    def run_permit(self, state: CycleState, pod: Pod, node: str
                   ) -> tuple[Status, dict[str, float]]:
        """Success, a rejection, or Wait with each waiting plugin's timeout (capped at
        upstream's maxTimeout), as RunPermitPlugins."""
        timeouts: dict[str, float] = {}
        for p, permit in self._permit_calls:
            st, t = permit(state, pod, node)
            if st is None or st.is_success():
                continue
            if st.is_rejected():
                st.plugin = p.name
                return st, {}
            if st.code == Code.WAIT:
                timeouts[p.name] = min(float(t), MAX_TIMEOUT_SECONDS)
                if st.reasons:
                    messages = state.read(PERMIT_WAIT_MESSAGES) or {}
                    messages[p.name] = st.message()
                    state.write(PERMIT_WAIT_MESSAGES, messages)
                continue
            return Status(Code.ERROR,
                          (f'running Permit plugin "{p.name}": {st.message()}',), p.name), {}
        if timeouts:
            return Status(Code.WAIT, ("one or more plugins asked to wait and no plugin "
                                      f'rejected pod "{pod.name}"',)), timeouts
        return Status(), {}

    def wait_on_permit(self, wp: WaitingPod) -> Status:
        """WaitOnPermit, once ``wp``'s outcome is known: Success, the rejection as it came,
        or any other failure (a preemption, v1.36) as an Error. The core never blocks: the
        waiting-pods map hands each outcome to the scheduler as it comes, and the binding
        cycle starts from here."""
        st = wp.status or Status()
        if st.is_success() or st.is_rejected():
            return st
        return Status(Code.ERROR, (f"waiting on permit for pod: {st.message()}",), st.plugin)

    @_point("PreBind")
    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        return _first_failure(self._pre_bind_calls, "PreBind", lambda fn: fn(state, pod, node))

    @_point("Bind")
    def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """The first bind plugin that does not Skip binds; Skip if all skipped."""
        for p, bind in self._bind_calls:
            st = bind(state, pod, node)
            if st is not None and st.is_skip():
                continue
            return _first_failure([(p, bind)], "Bind", _returning(st))
        return Status(Code.SKIP)

    @_point("PostBind")
    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        for _p, post_bind in self._post_bind_calls:
            post_bind(state, pod, node)


# How a guarded plugin's exception is returned at each point: as the Error its method would
# return; where the method returns no status (scores, batch forms), as a PluginError, which
# fails the cycle like any plugin error; PostBind and Unreserve cannot fail (logged).
_ERROR_RETURNS: dict[str, Callable[[Status], Any]] = {
    "PreFilter": lambda st: (None, st),
    "Filter": lambda st: st,
    "PostFilter": lambda st: (None, st),
    "PreScore": lambda st: st,
    "Reserve": lambda st: st,
    "Permit": lambda st: (st, 0.0),
    "PreBind": lambda st: st,
    "Bind": lambda st: st,
    "PostBind": lambda st: None,
    "Unreserve": lambda st: None,
}


def guarded_call(fn: F, plugin: str, point: str) -> F:
    """``fn`` with any exception it raises turned into the plugin's error at ``point``;
    the first one is reported (with its traceback under ``--debug``), the others are not:
    a plugin that fails on every node would otherwise say so thousands of times."""
    on_error = _ERROR_RETURNS.get(point)
    reported = False

    def run(*args: Any) -> Any:
        nonlocal reported
        try:
            return fn(*args)
        except (PluginError, InputError):
            raise
        except Exception as e:
            detail = f"{type(e).__name__}: {e}"
            if on_error is None:
                raise PluginError(f'running {point} plugin "{plugin}": {detail}') from e
            if not reported:
                reported = True
                log.error("plugin %s raised at %s: %s (reported once%s)", plugin, point,
                          detail, "" if debug() else "; --debug shows the traceback",
                          exc_info=debug())
            return on_error(Status(Code.ERROR, (detail,), plugin))

    return run  # type: ignore[return-value]  # same signature as fn


def construct(cls: type[Plugin], args: dict[str, Any] | None, handle: Handle) -> Plugin:
    """A plugin instance, whatever its constructor takes: nothing, ``args`` (its
    pluginConfig args), ``handle``, or both, by those names; ``args`` and ``handle`` are
    set on it either way."""
    params = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {}
    if "args" in params:
        kwargs["args"] = args if args is not None else {}  # no pluginConfig: empty args
    if "handle" in params:
        kwargs["handle"] = handle
    try:
        plugin = cls(**kwargs)
    except InputError:
        raise
    except Exception as e:
        raise InputError(f"plugin {cls.name or cls.__name__} could not be built: "
                         f"{type(e).__name__}: {e}") from None
    if "args" not in params or getattr(plugin, "args", None) is None:
        plugin.args = args or {}
    if "handle" not in params or getattr(plugin, "handle", None) is None:
        plugin.handle = handle
    return plugin


def _returning(st: Status | None) -> Callable[[Any], Status | None]:
    return lambda _fn: st


def _first_failure(calls: Sequence[tuple[Any, Any]], point: str,
                   call: Callable[[Any], Status | None]) -> Status:
    """Run ``call`` on each (plugin, its method) until one fails: a rejection keeps its
    code, anything else becomes an Error naming the plugin, as upstream's Run*Plugins do."""
    for p, fn in calls:
        st = call(fn)
        if st is not None and not st.is_success():
            if not st.is_rejected():
                st = Status(Code.ERROR, (f'running {point} plugin "{p.name}": {st.message()}',))
            st.plugin = p.name
            return st
    return Status()
