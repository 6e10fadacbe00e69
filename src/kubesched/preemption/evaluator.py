"""DefaultPreemption's evaluator (upstream ``framework/preemption/preemption.go`` and the
``SelectVictimsOnNode`` / ``PodEligibleToPreemptOthers`` / ``filterPodsWithPDBViolation`` of
``plugins/defaultpreemption/default_preemption.go``, v1.35).

``Evaluator.preempt`` is upstream's ``Evaluator.Preempt`` with synchronous actuation:

1. the pod must be eligible (``preemptionPolicy: Never``; a nominated node whose victims are
   still terminating);
2. candidates come only from nodes whose filter status is ``Unschedulable``; a dry run, in
   snapshot order from a random offset (the handle's seeded generator), removes every
   lower-priority pod from a copy of the node, checks the pod fits, then reprieves the
   victims by importance — PDB-violating ones first — and stops once it has a candidate that
   violates no PDB and ``numCandidates`` candidates in all;
3. ``pickOneNodeForPreemption`` picks among them by upstream's criteria, in order;
4. the victims get the ``DisruptionTarget`` condition, are deleted through the backend and get
   a ``Preempted`` event; lower-priority pods nominated to the node lose their nomination.

Where upstream depends on Go's map iteration order (the order of the potential nodes, the
final tie between candidates) kubesched uses the snapshot order and the seeded generator.
Upstream runs the dry run in parallel and may overshoot ``numCandidates`` by up to its
parallelism; kubesched runs it sequentially, as upstream with parallelism 1.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.selectors import Selector, SelectorError, label_selector_as_selector
from kubesched.api.types import Pod, PodCondition
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderError, Victims
from kubesched.framework.interface import PluginError
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import AtRows, Diagnosis, NodeToStatus, fit_error_message
from kubesched.preemption.batch import BatchDryRun, VictimCache
from kubesched.preemption.gosort import sort_slice
from kubesched.preemption.util import (
    MAX_INT32,
    earliest_pod_start_time,
    more_important_pod,
    terminating_by_preemption,
)
from kubesched.releases import at_least

if TYPE_CHECKING:
    from kubesched.api.policy import PodDisruptionBudget
    from kubesched.framework.handle import Handle
    from kubesched.framework.runtime import Framework

log = logging.getLogger(__name__)

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE = "no candidate node for preemption"
NO_VICTIMS_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))  # never mutated
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

# (node, victim, preemptor) -> may the victim be preempted (beyond its lower priority)?
IsEligiblePod = Callable[[NodeInfo, Pod, Pod], bool]
MoreImportantPod = Callable[[Pod, Pod], bool]


@dataclass(slots=True)
class Candidate:
    name: str
    victims: Victims


@dataclass(slots=True)
class PreemptResult:
    """``nominated``: the PostFilterResult's node — None is "no result" (keep the pod's
    nomination), "" clears it. ``candidate``: the chosen node and its victims."""

    nominated: str | None
    status: Status
    candidate: Candidate | None = None


@dataclass(slots=True)
class PDBView:
    """What ``filterPodsWithPDBViolation`` reads of one PodDisruptionBudget."""

    namespace: str
    selector: Selector | None  # None: invalid, matches nothing
    disruptions_allowed: int
    disrupted_pods: frozenset[str] = field(default_factory=frozenset)


def pdb_views(pdbs: Sequence[PodDisruptionBudget], pods: Callable[[], list[Pod]],
              objects: Any = None) -> list[PDBView]:
    """The PDBs as the scheduler's lister shows them; ``pods()`` (all known pods) is called
    only if some PDB's status has to be computed."""
    out: list[PDBView] = []
    all_pods: list[Pod] | None = None
    for pdb in pdbs:
        try:
            sel: Selector | None = label_selector_as_selector(pdb.selector)
        except SelectorError:
            sel = None
        allowed = pdb.status.disruptions_allowed
        if allowed is None:
            if all_pods is None:
                all_pods = pods()
            allowed = pdb.disruptions_allowed(all_pods, objects)
        out.append(PDBView(pdb.namespace, sel, allowed, frozenset(pdb.status.disrupted_pods)))
    return out


def filter_pods_with_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[PDBView]
                                   ) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating), each in the order of ``pods``: a pod violates when some
    PDB selecting it (same namespace, non-empty selector, pod not already in its
    disruptedPods) runs out of allowed disruptions after counting it."""
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                sel = pdb.selector
                if sel is None or sel.empty() or not sel.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def _aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or "[a, b]" deduplicated."""
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class Evaluator:
    def __init__(self, plugin_name: str, handle: Handle, framework: Framework, *,
                 min_candidate_nodes_percentage: int = 10,
                 min_candidate_nodes_absolute: int = 100,
                 is_eligible_pod: IsEligiblePod | None = None,
                 more_important: MoreImportantPod = more_important_pod) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.framework = framework
        self.min_pct = min_candidate_nodes_percentage
        self.min_abs = min_candidate_nodes_absolute
        self.is_eligible_pod: IsEligiblePod = is_eligible_pod or (lambda _ni, _v, _p: True)
        self.more_important: MoreImportantPod = more_important
        # The batch dry run assumes every lower-priority pod may be evicted.
        self._victim_cache = VictimCache(more_important) if is_eligible_pod is None else None

    # ------------------------------------------------------------------ Preempt

    def preempt(self, state: CycleState, pod: Pod, n2s: NodeToStatus, *,
                actuate: bool = True) -> PreemptResult:
        """Upstream ``Evaluator.Preempt``; ``actuate=False`` only decides (explain)."""
        nnn = pod.status.nominated_node_name
        # (``get`` of a name makes Status objects of every bulk-recorded failure)
        ok, msg = self.pod_eligible_to_preempt_others(pod, n2s.get(nnn) if nnn else None)
        if not ok:
            return PreemptResult(None, Status(Code.UNSCHEDULABLE, (msg,)))
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return PreemptResult(None, Status(Code.ERROR, ("no nodes available",)))
        candidates, statuses, errs = self.find_candidates(state, all_nodes, pod, n2s)
        if errs and not candidates:
            return PreemptResult(None, Status(Code.ERROR, (_aggregate(errs),)))
        if not candidates:
            statuses.absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))
            msg = fit_error_message(len(all_nodes), Diagnosis(node_to_status=statuses))
            return PreemptResult("", Status(Code.UNSCHEDULABLE, (msg,)))
        candidates, st = self.call_extenders(pod, candidates)
        if not st.is_success():
            return PreemptResult(None, st)
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return PreemptResult(None, Status(Code.UNSCHEDULABLE, (NO_CANDIDATE,)))
        if actuate:
            st = self.prepare_candidate(best, pod)
            if not st.is_success():
                return PreemptResult(None, st)
        return PreemptResult(best.name, Status(), best)

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None
                                       ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``."""
        if pod.spec.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nnn = pod.status.nominated_node_name
        if nnn:
            if (nominated_node_status is not None
                    and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                return True, ""
            ni = self.handle.snapshot.get(nnn)
            if ni is not None:
                for p in ni.pods:
                    if self.is_preemption_allowed(ni, p, pod) and terminating_by_preemption(p):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def is_preemption_allowed(self, ni: NodeInfo, victim: Pod, preemptor: Pod) -> bool:
        return victim.priority < preemptor.priority and self.is_eligible_pod(
            ni, victim, preemptor)

    # ------------------------------------------------------------------ candidates

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_pct // 100
        n = max(n, self.min_abs)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def pdbs(self) -> list[PDBView]:
        pdbs = self.handle.listers.pod_disruption_budgets()
        if not pdbs:
            return []
        snap = self.handle.snapshot
        # the whole store: a PDB without a status finds its pods' controllers in it
        return pdb_views(pdbs, lambda: [p for ni in snap.node_infos for p in ni.pods],
                         self.handle.objects)

    def find_candidates(self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod,
                        n2s: NodeToStatus) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        rows: np.ndarray | None = None
        table = self.handle.snapshot.table
        by_row = (n2s.codes_by_row(table.index, table.size)
                  if all_nodes is self.handle.snapshot.node_infos else None)
        if by_row is not None:  # table row i is all_nodes[i]
            rows = np.flatnonzero(by_row == int(Code.UNSCHEDULABLE))  # an int: faster
            potential: Sequence[NodeInfo] = AtRows(all_nodes, rows)
        else:
            codes, absent = n2s.codes(), int(n2s.absent.code)
            potential = [ni for ni in all_nodes
                         if codes.get(ni.name, absent) == Code.UNSCHEDULABLE]
        if not len(potential):
            return [], NodeToStatus(), []
        pdbs = self.pdbs()
        offset, num = self.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num, rows=rows)

    def dry_run_preemption(self, state: CycleState, pod: Pod,
                           potential_nodes: Sequence[NodeInfo], pdbs: Sequence[PDBView],
                           offset: int, num_candidates: int, *, rows: np.ndarray | None = None
                           ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Candidates (non-violating first, each list capped at ``num_candidates``), the
        statuses of the nodes that are not candidates, and the errors met: over the node
        table when that gives the per-node form's answer (``preemption/batch.py``).
        ``rows``: the table rows of ``potential_nodes``, when the caller knows them."""
        given = rows
        rows = self._batch_rows(state, potential_nodes, offset, rows)
        if rows is not None:
            assert self._victim_cache is not None
            try:
                return BatchDryRun(self.framework, self._victim_cache, state, pod,
                                   pdbs).run(rows, num_candidates)
            except PluginError:
                pass  # the per-node form words the errors as upstream does
        return self.dry_run_per_node(state, pod, potential_nodes, pdbs, offset, num_candidates,
                                     rows=given)

    def dry_run_per_node(self, state: CycleState, pod: Pod,
                         potential_nodes: Sequence[NodeInfo], pdbs: Sequence[PDBView],
                         offset: int, num_candidates: int, *, rows: np.ndarray | None = None
                         ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """``dry_run_preemption`` as upstream: ``select_victims_on_node`` on a copy of each
        node in turn (the reference the batch form is checked against). ``rows``: the
        snapshot table's rows of ``potential_nodes``, when the caller knows them."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        explicit: dict[str, Status] = {}
        errs: list[str] = []
        n = len(potential_nodes)
        order = (np.arange(n) + offset) % n if n else np.zeros(0, dtype=np.int64)
        # Nodes without a lower-priority pod get NO_VICTIMS (what select_victims_on_node
        # answers) in bulk, without copying node and state: when every pod has one
        # priority, as in the GPU traces, that is every node of every dry run. The counts
        # come from the batch form's cache when the rows are known (a node with no
        # lower-priority pod has no victims, whatever is_eligible_pod says).
        none = np.zeros(n, dtype=bool)
        names: list[str] | None = None
        if rows is not None and self._victim_cache is not None:
            snap = self.handle.snapshot
            counts, _ = self._victim_cache.lookup(snap.table, snap.node_infos, rows,
                                                  pod.priority)
            none = counts == 0
            names = snap.table.names
        visited = n  # positions in ``order`` visited before the loop stopped
        for j in order[~none[order]].tolist():
            src = potential_nodes[j]
            if not any(self.is_preemption_allowed(src, p, pod) for p in src.pods):
                none[j] = True
                continue
            ni = src.clone()
            victims, num_viol, st = self.select_victims_on_node(state.clone(), pod, ni, pdbs)
            if st.is_success() and victims:
                c = Candidate(ni.name, Victims(victims, num_viol))
                lst = non_violating if num_viol == 0 else violating
                if len(lst) < num_candidates:
                    lst.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    visited = (j - offset) % n + 1
                    break
                continue
            if st.is_success():
                st = Status(Code.ERROR, (f'expected at least one victim pod on node "{ni.name}"',))
            if st.code == Code.ERROR:
                errs.append(st.message())
            explicit[ni.name] = st
        statuses = NodeToStatus(explicit)
        seen = order[:visited]
        seen = seen[none[seen]]
        if names is not None and rows is not None:
            statuses.add_same(AtRows(names, rows[seen]), NO_VICTIMS_STATUS, rows[seen])
        else:
            statuses.add_same([potential_nodes[j].name for j in seen.tolist()],
                              NO_VICTIMS_STATUS)
        return non_violating + violating, statuses, errs

    def call_extenders(self, pod: Pod, candidates: list[Candidate]
                       ) -> tuple[list[Candidate], Status]:
        """callExtenders: each interested extender with a preempt verb narrows the
        candidates (node → victims) in turn. An ignorable extender's error, or a node it
        returns without victims, is skipped; otherwise either fails preemption."""
        extenders = self.handle.extenders
        if not extenders or not candidates:
            return candidates, Status()
        victims_map: dict[str, Victims] = {c.name: c.victims for c in candidates}
        node_infos = self.handle.snapshot.by_name
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                answered = ext.process_preemption(pod, victims_map, node_infos)
            except ExtenderError as e:
                if ext.is_ignorable():
                    log.info("skipped extender %s as it returned error and has ignorable "
                             "flag set: %s", ext.name, e)
                    continue
                return [], Status(Code.ERROR, (str(e),))
            for node_name, v in list(answered.items()):
                if not v.pods:
                    if ext.is_ignorable():
                        del answered[node_name]
                        continue
                    return [], Status(Code.ERROR, (
                        f'expected at least one victim pod on node "{node_name}"',))
            victims_map = answered
            if not victims_map:
                break
        return [Candidate(n, v) for n, v in victims_map.items()], Status()

    def _batch_rows(self, state: CycleState, potential_nodes: Sequence[NodeInfo],
                    offset: int, rows: np.ndarray | None = None) -> np.ndarray | None:
        """The table rows of ``potential_nodes`` in dry-run order, when the batch dry run
        gives the per-node form's answer for this pod (``preemption/batch.py``); else None."""
        if self._victim_cache is None or not self.framework.filters_read_only_resources(state):
            return None
        if rows is not None:
            return np.roll(rows, -offset)
        snap = self.handle.snapshot
        index, infos = snap.table.index, snap.node_infos
        n = len(potential_nodes)
        rows = np.empty(n, dtype=np.int64)
        for i in range(n):
            ni = potential_nodes[(offset + i) % n]
            row = index.get(ni.name)
            if row is None or infos[row] is not ni:  # not the snapshot's NodeInfo
                return None
            rows[i] = row
        return rows

    # ------------------------------------------------------------------ one node

    def select_victims_on_node(self, state: CycleState, pod: Pod, ni: NodeInfo,
                               pdbs: Sequence[PDBView]) -> tuple[list[Pod], int, Status]:
        """``SelectVictimsOnNode`` on ``ni`` and ``state`` (both copies, changed here): the
        fewest pods, least important first, whose removal lets ``pod`` fit."""
        fwk = self.framework
        try:
            potential = [p for p in ni.pods if self.is_preemption_allowed(ni, p, pod)]
            for p in potential:
                ni.remove_pod(p)
                fwk.run_remove_pod(state, pod, p, ni)
            if not potential:
                return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
            st = fwk.run_filter_with_nominated(state, pod, ni)
            if not st.is_success():
                return [], 0, st
            sort_slice(potential, self.more_important)
            violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
            victims: list[Pod] = []

            def reprieve(p: Pod) -> bool:
                ni.add_pod(p)
                fwk.run_add_pod(state, pod, p, ni)
                fits = fwk.run_filter_with_nominated(state, pod, ni).is_success()
                if not fits:
                    ni.remove_pod(p)
                    fwk.run_remove_pod(state, pod, p, ni)
                    victims.append(p)
                return fits

            num_violating = 0
            for p in violating:
                if not reprieve(p):
                    num_violating += 1
            for p in non_violating:
                reprieve(p)
        except PluginError as e:
            return [], 0, Status(Code.ERROR, (str(e),))
        if violating and non_violating:
            sort_slice(victims, self.more_important)
        return victims, num_violating, Status()

    # ------------------------------------------------------------------ choosing

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        by_name = {c.name: c for c in candidates}
        name = self.pick_one_node_for_preemption({n: c.victims for n, c in by_name.items()})
        return by_name.get(name, candidates[0])

    def pick_one_node_for_preemption(self, nodes_to_victims: dict[str, Victims]) -> str:
        """``pickOneNodeForPreemption``: fewest PDB violations, lowest highest-priority
        victim, smallest sum of (priority + 2³¹), fewest victims, latest start of the
        highest-priority victims; a tie left after that is broken at random (upstream:
        the first of a Go map's iteration order)."""
        if not nodes_to_victims:
            return ""
        shift = MAX_INT32 + 1

        def scores(v: Victims) -> tuple[float, ...]:
            prios = [p.priority for p in v.pods]
            return (-v.num_pdb_violations, -prios[0], -(sum(prios) + shift * len(prios)),
                    -len(prios), earliest_pod_start_time(v.pods))

        # Keeping the best by each criterion in turn keeps the lexicographically best.
        keyed = [(scores(v), name) for name, v in nodes_to_victims.items()]
        best = max(k for k, _ in keyed)
        remaining = [name for k, name in keyed if k == best]
        if len(remaining) == 1:
            return remaining[0]
        return remaining[self.handle.rng.randrange(len(remaining))]

    # ------------------------------------------------------------------ actuation

    def _preempt_in_memory(self, victim: Pod) -> bool:
        """v1.36's ``PreemptPod`` without an API call: a victim waiting at Permit is
        preempted (an Error: backoffQ, kubernetes#135719), one in PreBind has its binding
        cycle cancelled (kubernetes#135502); False when neither applies (any more), and the
        victim is deleted through the API."""
        waiting = self.handle.get_waiting_pod(victim.uid)
        if waiting is not None:
            return waiting.preempt(self.plugin_name, "preempted")
        in_pre_bind = self.handle.get_pod_in_pre_bind(victim.uid)
        if in_pre_bind is not None:
            return in_pre_bind.cancel_pod(f"preempted by {self.plugin_name}")
        return False

    def prepare_candidate(self, c: Candidate, pod: Pod) -> Status:
        """``prepareCandidate``: evict the victims (DisruptionTarget condition, delete,
        ``Preempted`` event) — from v1.36 a victim waiting at Permit or in PreBind is
        stopped in memory instead, without an API call —, then clear the nominations of
        lower-priority pods nominated to the node."""
        backend = self.handle.backend
        if backend is None:
            return Status(Code.ERROR, ("preemption needs a cluster backend",))
        cond = PodCondition(DISRUPTION_TARGET, "True", PREEMPTION_BY_SCHEDULER,
                            f"{pod.spec.scheduler_name}: preempting to accommodate a higher "
                            "priority pod")
        in_memory = at_least(self.handle.kubernetes_version, "1.36")
        try:
            for victim in c.victims.pods:
                if victim.metadata.deletion_timestamp is not None:
                    continue  # graceful deletion already started
                message = f"Preempted by pod {pod.uid} on node {c.name}"
                if in_memory and self._preempt_in_memory(victim):
                    message += " (in kube-scheduler memory)."
                elif not in_memory and (waiting := self.handle.get_waiting_pod(victim.uid)):
                    # v1.35: parked at Permit, rejected (unschedulable), not deleted
                    waiting.reject(self.plugin_name, "preempted")
                else:
                    backend.update_pod_status(victim, cond, None)
                    backend.delete_pod(victim, f"preempted by {pod.key}")
                backend.record_event(victim, "Normal", "Preempted", message)
        except Exception as e:  # a backend failure is this cycle's error, not a crash
            return Status(Code.ERROR, (str(e),))
        prio = pod.priority
        for p in self.handle.nominated_pods_for_node(c.name):
            if p.priority < prio and p.uid != pod.uid:
                try:
                    backend.update_pod_status(p, None, "")
                except Exception as e:  # not critical, as upstream
                    log.warning("cannot clear the nominated node of %s: %s", p.key, e)
        return Status()
