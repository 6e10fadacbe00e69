"""The algorithm: one pod's filter and score pass, and the choice of a host.

Upstream's schedulePod, findNodesThatFitPod, findNodesThatPassFilters,
findNodesThatPassExtenders, prioritizeNodes and selectHost (``schedule_one.go``; newer
releases gather them in ``algorithm.go``'s SchedulingAlgorithm). It reads the snapshot and
the extenders and moves ``next_start_node_index``; it never touches the queue, the
binding cycle or the failure handling (``schedule_one``).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.cache.cache import Cache
from kubesched.clock import Clock
from kubesched.framework.adjusted import AdjustedSnapshot, NominatedPods
from kubesched.framework.batch import SortedScoredNodes
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    Extender,
    ExtenderError,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, NodeList, PluginError, PreFilterResult
from kubesched.framework.runtime import FilterOutcome, Framework, ScoreOutcome
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    NO_NODES_AVAILABLE,
    AtRows,
    Diagnosis,
    FitError,
    ScheduleResult,
)
from kubesched.queue import SchedulingQueue
from kubesched.scheduler.observer import DecisionObserver

log = logging.getLogger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to find before scoring (upstream numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class CycleResult:
    """What one filter+score pass found (also what ``explain`` reports)."""

    feasible: np.ndarray  # table rows, in evaluation order
    diagnosis: Diagnosis
    scores: ScoreOutcome | None = None
    nominated_fast_path: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # OpportunisticBatching: the node hinted to this pod ("" for none) and its signature
    hint: str = ""
    signature: Hashable | None = None
    # explain only: node -> what each extender said of it at Filter
    extender_verdicts: dict[str, list[dict[str, Any]]] | None = None


class NoNodesAvailable(Exception):
    pass


class Algorithm:
    """The Scheduler's algorithm methods (a base of ``Scheduler``), with the parts of its
    state they read."""

    snapshot: Snapshot
    cache: Cache
    handle: Handle
    extenders: list[Extender]
    queue: SchedulingQueue  # only its scheduling_cycle, which OpportunisticBatching keys on
    clock: Clock
    next_start_node_index: int
    _batching: bool  # OpportunisticBatching
    decisions: DecisionObserver | None  # the decision record (simulate --decisions)
    object_changes: int  # EventHandlers': objects other than pods and nodes changed
    _rows: np.ndarray = np.zeros(0, dtype=np.int64)  # _all_rows's

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod) -> ScheduleResult:
        self.cache.update_snapshot(self.snapshot)
        snap = self.snapshot
        if snap.num_nodes == 0:
            raise NoNodesAvailable(NO_NODES_AVAILABLE)
        found = self.find_nodes_that_fit(fwk, state, pod)
        feasible = found.feasible
        if len(feasible) == 0:
            raise FitError(pod, snap.num_nodes, found.diagnosis)
        evaluated = len(feasible) + len(found.diagnosis.node_to_status)
        names = snap.table.names
        if len(feasible) == 1:
            host = names[int(feasible[0])]
            if self._batching:
                fwk.batch.store_schedule_results(found.signature, found.hint, host, None, 0,
                                                 self.queue.scheduling_cycle, self.clock.now())
            return ScheduleResult(host, evaluated, 1)
        scores = self.prioritize_nodes(fwk, state, pod, feasible)
        if self.decisions is not None:
            self.decisions.scored(snap.table, feasible, scores)
        pick = self._select_host_index(scores.totals, scores.extender_scored)
        host = names[int(feasible[pick])]
        if self._batching:
            totals = scores.totals

            def others() -> SortedScoredNodes:
                return SortedScoredNodes(names, np.delete(feasible, pick),
                                         np.delete(totals, pick))

            fwk.batch.store_schedule_results(found.signature, found.hint, host, others,
                                             len(feasible) - 1, self.queue.scheduling_cycle,
                                             self.clock.now())
        return ScheduleResult(host, evaluated, len(feasible))

    def find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod,
                            *, exhaustive: bool = False,
                            pre: tuple[PreFilterResult, Status, list[str]] | None = None
                            ) -> CycleResult:
        """PreFilter then Filter from nextStartNodeIndex until enough feasible nodes are found,
        then the filter extenders on those (``exhaustive``: every node, from the first, and
        the extenders' verdicts recorded, as explain wants). ``pre``: PreFilter's outcome,
        already in ``state`` (a caller that has run it over this snapshot)."""
        snap = self.snapshot
        table = snap.table
        n_all = snap.num_nodes
        diagnosis = Diagnosis()
        pre_res, st, with_nodes = fwk.run_pre_filter(state, pod, snap) if pre is None else pre
        if not st.is_success():
            if not st.is_rejected():
                raise PluginError(st.message())
            diagnosis.node_to_status.absent = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            return CycleResult(np.zeros(0, dtype=np.int64), diagnosis)

        hint: str = ""
        signature: Hashable | None = None
        if self._batching and not exhaustive:
            # (upstream gets the hint even when the pod has a nominated node)
            hint, signature = fwk.batch.get_node_hint(
                fwk, state, pod, self.queue.scheduling_cycle, snap, self.clock.now(),
                self.handle.rng)
        # The nominated node, else the hinted one, is tried first (evaluateNominatedNode).
        nnn = pod.status.nominated_node_name or hint
        if nnn and not exhaustive and nnn in table.index:
            ni = snap.get(nnn)
            if ni is not None:
                nst = fwk.run_filter_with_nominated(state, pod, ni)
                if nst.code == Code.ERROR:
                    raise PluginError(nst.message())
                if nst.is_success():
                    # evaluateNominatedNode: the extenders judge the nominated node too; an
                    # error there is logged and the full scan follows, as upstream
                    try:
                        kept = self._pass_extenders(pod, np.array([table.index[nnn]]),
                                                    diagnosis)
                    except ExtenderError as e:
                        log.error("evaluation failed on nominated node %s for %s: %s",
                                  nnn, pod.key, e)
                        kept = np.zeros(0, dtype=np.int64)
                    if len(kept):
                        return CycleResult(kept, diagnosis, nominated_fast_path=True,
                                           hint=hint, signature=signature)
                else:
                    diagnosis.node_to_status.set(nnn, nst)
                    diagnosis.add_plugin_status(nst)

        if pre_res.all_nodes():
            nodes = self._all_rows(n_all)
        else:
            names = pre_res.node_names or set()
            nodes = np.array(sorted(table.index[n] for n in names if n in table.index),
                             dtype=np.int64)
            diagnosis.node_to_status.absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{' '.join(with_nodes)}]",))
        if len(nodes) == 0:
            return CycleResult(nodes, diagnosis, hint=hint, signature=signature)

        if exhaustive:
            to_find, start = len(nodes), 0
        else:
            to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, len(nodes))
            if not self._has_extender_filters() and not self._has_scoring(fwk):
                to_find = 1
            start = self.next_start_node_index % len(nodes)
        feasible = self._filter_in_order(fwk, state, pod, nodes, start, to_find, diagnosis)
        if not exhaustive:
            processed = len(feasible) + len(diagnosis.node_to_status)
            self.next_start_node_index = (self.next_start_node_index + processed) % n_all
        verdicts: dict[str, list[dict[str, Any]]] | None = {} if exhaustive else None
        feasible = self._pass_extenders(pod, feasible, diagnosis, verdicts)
        return CycleResult(feasible, diagnosis, extender_verdicts=verdicts, hint=hint,
                           signature=signature)

    def _has_extender_filters(self) -> bool:
        return any(e.is_filter() for e in self.extenders)

    def _has_scoring(self, fwk: Framework) -> bool:
        return fwk.has_score() or any(e.is_prioritizer() for e in self.extenders)

    def _pass_extenders(self, pod: Pod, feasible: np.ndarray, diagnosis: Diagnosis,
                        verdicts: dict[str, list[dict[str, Any]]] | None = None
                        ) -> np.ndarray:
        """findNodesThatPassExtenders: each interested extender in turn narrows the feasible
        nodes (one call per extender, not per node); the nodes it fails get its message as
        their status. An error skips an ignorable extender and fails the cycle otherwise."""
        if not self.extenders or not len(feasible):
            return feasible
        index = self.snapshot.table.index
        infos = self.snapshot.node_infos
        n2s = diagnosis.node_to_status
        before = len(feasible)
        for ext in self.extenders:
            if not len(feasible):
                break
            if not ext.is_interested(pod):
                continue
            given = [infos[int(i)] for i in feasible.tolist()]
            try:
                res = ext.filter(pod, given)
            except ExtenderError as e:
                if ext.is_ignorable():
                    log.info("skipping extender %s as it returned error and has ignorable "
                             "flag set: %s", ext.name, e)
                    if verdicts is not None:
                        for ni in given:
                            verdicts.setdefault(ni.name, []).append(
                                {"extender": ext.name, "verdict": "Error (ignored)",
                                 "reasons": [str(e)]})
                    continue
                raise
            for name, msg in res.failed_and_unresolvable.items():
                n2s.set(name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)))
            for name, msg in res.failed.items():
                if name not in res.failed_and_unresolvable:
                    n2s.set(name, Status(Code.UNSCHEDULABLE, (msg,)))
            if verdicts is not None and ext.is_filter():
                passed = set(res.passed)
                for ni in given:
                    if ni.name in passed:
                        v: dict[str, Any] = {"extender": ext.name, "verdict": "Success"}
                    elif ni.name in res.failed_and_unresolvable:
                        v = {"extender": ext.name, "verdict": "UnschedulableAndUnresolvable",
                             "reasons": [res.failed_and_unresolvable[ni.name]]}
                    elif ni.name in res.failed:
                        v = {"extender": ext.name, "verdict": "Unschedulable",
                             "reasons": [res.failed[ni.name]]}
                    else:
                        v = {"extender": ext.name, "verdict": "Unschedulable", "reasons": []}
                    verdicts.setdefault(ni.name, []).append(v)
            feasible = np.fromiter((index[n] for n in res.passed if n in index),
                                   dtype=np.int64)
        if len(feasible) != before:
            # extenders register no events: any cluster event may make the pod schedulable
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return feasible

    def _all_rows(self, n: int) -> np.ndarray:
        """Every row of an ``n``-node table, in order (kept; read-only)."""
        rows = self._rows
        if len(rows) != n:
            rows = self._rows = np.arange(n, dtype=np.int64)
            rows.flags.writeable = False
        return rows

    def _filter_in_order(self, fwk: Framework, state: CycleState, pod: Pod,
                         nodes: np.ndarray, start: int, to_find: int, diagnosis: Diagnosis
                         ) -> np.ndarray:
        """Nodes of ``nodes`` taken from ``start`` on, round to the start (the scan's
        order), that pass every filter, stopping after ``to_find``; failures
        of the nodes passed on the way are recorded, as a sequential upstream scan would."""
        snap = self.snapshot
        nominated_pods = NominatedPods.of(state, self.handle, pod)
        nominated = nominated_pods.pods
        first_pass_batch = bool(nominated) and fwk.filters_read_only_resources(state)
        ks_none = np.zeros(0, dtype=np.int64)
        batch_all = fwk.per_node_filters <= state.skip_filter  # (the rest have batch forms)
        kept = fwk.rows_kept_key(state, pod)
        if not batch_all:
            chunk = max(to_find, 64)
        elif kept is None:
            chunk = len(nodes)
        else:
            # kept verdicts cost per row asked (their staleness, their decoding), not per
            # pass: ask about twice the nodes still needed, not every node
            chunk = max(2 * to_find, 512)
        found: list[np.ndarray] = []
        n_found = 0
        for lo in range(0, len(nodes), chunk):
            sub = _rotated(nodes, start, lo, lo + chunk)
            out = (fwk.filter_batch(state, pod, snap, sub) if kept is None else
                   fwk.filter_batch_kept(state, pod, snap, sub, (kept, self.object_changes)))
            codes = out.codes
            overrides: dict[int, Status] = {}
            need = to_find - n_found
            ok = codes == 0
            cut = _cut(ok, need)
            first_pass: list[_Failures] = []
            ks_all = np.flatnonzero(nominated_pods.mask()[sub]) if nominated else ks_none
            if first_pass_batch and np.count_nonzero(ks_all < cut) >= FIRST_PASS_BATCH_MIN:
                # Upstream's first pass (with the nominated pods), in batches, for the nodes
                # with some that the scan reaches: the second pass is the batch verdict, so
                # a node can only drop out, which moves the cut further on (and may reach
                # more of them) — where the per-node scan below would stop too. Nodes
                # evaluated beyond the final cut change nothing: a second batch takes all.
                done = 0
                while done < len(ks_all) and ks_all[done] < cut:
                    end = int(np.searchsorted(ks_all, cut)) if not done else len(ks_all)
                    ks = ks_all[done:end]
                    done = end
                    out1 = self._with_nominated(fwk, state, pod, sub[ks], nominated_pods)
                    bad = np.flatnonzero(out1.codes != 0)
                    if len(bad):
                        ok[ks[bad]] = False
                        cut = _cut(ok, need)
                        first_pass.append((ks[bad], out1, bad))
            elif nominated:
                # Nodes with nominated pods get upstream's two passes, per node, but only
                # those the scan reaches: the second pass is the batch verdict, so a node can
                # only drop out, which moves the cut further on (and may reach more of them).
                for k in ks_all.tolist():
                    if k >= cut:
                        break
                    st = fwk.run_filter_with_nominated(state, pod, snap.node_infos[int(sub[k])])
                    if st.code == Code.ERROR:
                        raise PluginError(st.message())
                    if not st.is_success():
                        overrides[k] = st
                        if ok[k]:
                            ok[k] = False
                            cut = _cut(ok, need)
            if overrides or first_pass or np.count_nonzero(ok[:cut]) != cut:
                self._record_failures(diagnosis, out, fwk.filter_names, sub, ok, cut,
                                      overrides, first_pass)
                hit = sub[:cut][ok[:cut]]
            else:  # every node the scan reached fits: no failure to record
                hit = sub[:cut]
            found.append(hit)
            n_found += len(hit)
            if n_found >= to_find:
                break
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

    def _with_nominated(self, fwk: Framework, state: CycleState, pod: Pod, rows: np.ndarray,
                        nominated: NominatedPods) -> FilterOutcome:
        """The Filter plugins on ``rows`` with their nominated pods added (upstream's first
        pass), as column changes (``fwk.filters_read_only_resources`` holds)."""
        adjusted = AdjustedSnapshot(self.snapshot)
        adjusted.set(rows, *nominated.deltas(rows))
        return fwk.filter_batch(state, pod, adjusted.view(), rows)

    def _record_failures(self, diagnosis: Diagnosis, out: FilterOutcome, plugin_names: list[str],
                         sub: np.ndarray, ok: np.ndarray, cut: int,
                         overrides: dict[int, Status], first_pass: Sequence[_Failures] = ()
                         ) -> None:
        """Record the nodes the scan rejected before ``cut``: in bulk from the batch verdicts
        — or from ``first_pass`` (positions in ``sub``, an outcome, positions in that) where
        the first pass with nominated pods rejected — and one by one where the per-node two
        passes decided."""
        failed = np.flatnonzero(~ok[:cut])
        if overrides:
            failed = failed[~np.isin(failed, list(overrides))]
            for k, st in overrides.items():
                if k < cut:
                    diagnosis.node_to_status.set(self.snapshot.table.names[int(sub[k])], st)
                    diagnosis.add_plugin_status(st)
        chunks = []
        for at, out1, where in first_pass:
            keep = at < cut
            failed = failed[~np.isin(failed, at)]
            chunks.append((out1, where[keep], sub[at[keep]]))
        chunks.append((out, failed, sub[failed]))
        names = self.snapshot.table.names
        for outcome, positions, rows in chunks:
            if not len(positions):
                continue
            chunk = outcome.failed_nodes(positions, AtRows(names, rows),
                                         plugin_names, rows)
            diagnosis.node_to_status.add_failed(chunk)
            # each (plugin, code) pair once: plugin indices and codes are small ints
            pairs = np.bincount(chunk.plugin.astype(np.int64) * _CODES + chunk.codes)
            for key in np.flatnonzero(pairs).tolist():
                pid, code = divmod(key, _CODES)
                diagnosis.add_plugin_status(Status(Code(code), (), plugin_names[pid]))

    def prioritize_nodes(self, fwk: Framework, state: CycleState, pod: Pod,
                         feasible: np.ndarray) -> ScoreOutcome:
        snap = self.snapshot
        nodes = NodeList(None, feasible, source=snap.node_infos)
        if not self.extenders and not fwk.has_score():
            ones = np.ones(len(feasible), dtype=np.int64)
            return ScoreOutcome([], np.zeros((0, len(feasible)), dtype=np.int64),
                                np.zeros(0, dtype=np.int64), ones)
        if fwk.has_score():
            fwk.run_pre_score(state, pod, nodes)
            out = fwk.run_score(state, pod, snap, feasible)
        else:
            out = ScoreOutcome([], np.zeros((0, len(feasible)), dtype=np.int64),
                               np.zeros(0, dtype=np.int64), np.zeros(len(feasible), np.int64))
        if self.extenders:
            self._prioritize_extenders(pod, feasible, out)
        return out

    def _prioritize_extenders(self, pod: Pod, feasible: np.ndarray, out: ScoreOutcome) -> None:
        """Each interested extender's scores × its weight × MaxNodeScore/MaxExtenderPriority
        (integer division: 10), added to the totals. A failing prioritizer is skipped,
        ignorable or not, as upstream does."""
        infos = self.snapshot.node_infos
        given = [infos[int(i)] for i in feasible.tolist()]
        pos = {ni.name: k for k, ni in enumerate(given)}
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        scored = np.zeros(len(feasible), dtype=bool)
        per_ext: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for ext in self.extenders:
            if not ext.is_interested(pod):
                continue
            if not ext.is_prioritizer():
                # upstream's Prioritize answers 0 for every node without a call: nothing
                # to add, but every node counts as extender-scored for the tie-break
                scored[:] = True
                continue
            try:
                hosts, weight = ext.prioritize(pod, given)
            except ExtenderError as e:
                log.info("failed to run extender's priority function %s for %s; no score "
                         "given by this extender: %s", ext.name, pod.key, e)
                continue
            raw, add = per_ext.setdefault(ext.name, (np.zeros(len(feasible), dtype=np.int64),
                                                     np.zeros(len(feasible), dtype=np.int64)))
            ks = [pos.get(host, -1) for host, _ in hosts]
            known = np.array([k >= 0 for k in ks], dtype=bool)
            if known.any():
                at = np.array(ks, dtype=np.int64)[known]
                vals = np.array([s for _, s in hosts], dtype=np.int64)[known]
                np.add.at(raw, at, vals)  # a host listed twice counts twice, as in Go
                np.add.at(add, at, vals * weight * scale)
                scored[at] = True
        for _raw, add in per_ext.values():
            out.totals = out.totals + add
        out.extender_scores = per_ext
        out.extender_scored = scored

    def select_host(self, feasible: np.ndarray, totals: np.ndarray,
                    extender_scored: np.ndarray | None = None) -> str:
        pick = self._select_host_index(totals, extender_scored)
        return self.snapshot.table.names[int(feasible[pick])]

    def _select_host_index(self, totals: np.ndarray,
                           extender_scored: np.ndarray | None = None) -> int:
        top = np.flatnonzero(totals == totals.max())
        if extender_scored is not None and len(top) > 1 and extender_scored[top].any():
            # v1.35's heap: only extender-scored nodes get a random tie-breaker, so among
            # the top nodes they win over the others, uniformly among themselves
            top = top[extender_scored[top]]
        return int(top[0]) if len(top) == 1 else int(top[self.handle.rng.randrange(len(top))])


_CODES = max(Code) + 1  # Code values are 0 .. _CODES - 1


def _rotated(nodes: np.ndarray, start: int, lo: int, hi: int) -> np.ndarray:
    """``order[lo:hi]`` of ``order``, ``nodes`` rotated to begin at ``start``: the scan's
    chunk, without the whole rotated order."""
    n = len(nodes)
    a, b = start + lo, min(start + hi, start + n)
    if b <= n:
        return nodes[a:b]
    if a >= n:
        return nodes[a - n: b - n]
    return np.concatenate([nodes[a:], nodes[:b - n]])


def _cut(ok: np.ndarray, need: int) -> int:
    """How far a sequential scan over ``ok`` goes before it has ``need`` feasible nodes."""
    if 0 < need <= len(ok) and np.count_nonzero(ok[:need]) == need:  # (every node fits)
        return need
    cum = np.cumsum(ok)
    if len(cum) and cum[-1] >= need:
        return int(np.searchsorted(cum, need)) + 1
    return len(ok)


# Below this many nodes with nominated pods to evaluate, the per-node two passes cost less
# than a batch over an AdjustedSnapshot (same verdicts either way).
FIRST_PASS_BATCH_MIN = 8

# Filter failures of the first pass with nominated pods: positions in the scanned rows, the
# outcome, positions in the outcome.
_Failures = tuple[np.ndarray, FilterOutcome, np.ndarray]
