"""The scheduler: schedule_one with its scheduling cycle, binding cycle and failure handling.

Synchronous and deterministic: the backend calls the ``on_*`` handlers with object events and
calls ``schedule_one`` to run one scheduling attempt; the binding cycle runs right after a
successful scheduling cycle (a backend may apply the binding later and report it back as a
pod update, as an API server would).
"""

from __future__ import annotations

import copy
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from kubesched.api.types import Node, Pod, PodCondition
from kubesched.cache.cache import Cache
from kubesched.clock import Clock
from kubesched.config import SchedulerConfiguration, default_config
from kubesched.config.defaults import gated_profile
from kubesched.framework import events as ev
from kubesched.framework.adjusted import AdjustedSnapshot, NominatedPods
from kubesched.framework.backend import Backend
from kubesched.framework.batch import SortedScoredNodes
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    Extender,
    ExtenderError,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, NodeList, Plugin, PluginError
from kubesched.framework.runtime import FilterOutcome, Framework, ScoreOutcome
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    NO_NODES_AVAILABLE,
    AtRows,
    Diagnosis,
    FitError,
    QueuedPodInfo,
    ScheduleResult,
)
from kubesched.framework.waiting import PERMIT_WAIT_MESSAGES, WaitingPod, WaitingPods
from kubesched.queue import SchedulingQueue
from kubesched.queue.cluster_events import le_priority_pre_check, pod_scheduling_properties_change
from kubesched.releases import at_least

log = logging.getLogger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
_PERMIT_WAIT = "kubesched.io/permit-wait"  # CycleState key: the waiting plugins' timeouts
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
EVENT_MESSAGE_LIMIT = 1024


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to find before scoring (upstream numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


class Recorder(Protocol):
    """Observes attempts (the simulator's placement log, metrics)."""

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None: ...


class SchedulerObserver(Protocol):
    """Timing hooks for metrics: a pod popped for a cycle, the algorithm's duration."""

    def popped(self, qpi: QueuedPodInfo) -> None: ...

    def algorithm_done(self, seconds: float) -> None: ...


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


class Scheduler:
    def __init__(
        self,
        backend: Backend,
        clock: Clock,
        config: SchedulerConfiguration | None = None,
        *,
        seed: int = 0,
        registry: dict[str, type[Plugin]] | None = None,
        recorder: Recorder | None = None,
        extenders: Sequence[Extender] | None = None,
    ) -> None:
        from kubesched.plugins.registry import in_tree_registry

        self.config = config or default_config()
        self.backend = backend
        self.clock = clock
        self.recorder = recorder
        self.observer: SchedulerObserver | None = None  # metrics (kubesched.metrics)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.handle = Handle(snapshot=self.snapshot, backend=backend, clock=clock,
                             rng=random.Random(seed), parallelism=self.config.parallelism,
                             features=self.config.features)
        if extenders is None:
            from kubesched.extender import build_extenders

            extenders = build_extenders(self.config)
        # The only I/O the core does goes through these (tests pass their own).
        self.extenders: list[Extender] = list(extenders)
        self.handle.extenders = self.extenders
        reg = dict(registry if registry is not None else in_tree_registry())
        reg.update(self.config.out_of_tree)
        pct = self.config.percentage_of_nodes_to_score
        features = self.config.features
        self.profiles: dict[str, Framework] = {
            p.scheduler_name: Framework(gated_profile(p, features), reg, self.handle, pct,
                                        guarded=frozenset(self.config.out_of_tree))
            for p in self.config.profiles}
        self.queue = SchedulingQueue(
            self.profiles, clock,
            initial_backoff=float(self.config.pod_initial_backoff_seconds),
            max_backoff=float(self.config.pod_max_backoff_seconds),
            pop_from_backoff=self.config.features.enabled("SchedulerPopFromBackoffQ"),
            nominate_gated=at_least(self.config.features.version, "1.37"))
        self.handle.nominated_pods = self.queue.nominated_pods_for_node
        self.handle.all_nominated_pods = self.queue.nominated_pods_by_node
        self.handle.pod_lister = self._all_pods
        self.handle.activator = self.queue.activate
        # Whether a pending pod's arrival is an event some plugin waits for: a PreEnqueue or
        # Permit plugin (the gang plugins) registered for unscheduled pods' Add. Other
        # plugins' hints skip unscheduled pods, so the event is sent only when it can matter
        # (on every arrival it would cost a pass over the unschedulable pods).
        self._unscheduled_add_matters = any(
            self._waits_for_unscheduled_add(fwk) for fwk in self.profiles.values())
        self.next_start_node_index = 0
        self.pending: dict[str, Pod] = {}  # unassigned pods this scheduler is responsible for
        # A backend that drives the core from several threads (the kube backend: informers,
        # the scheduling loop, binding cycles) holds ``lock`` around on_* and schedule_one;
        # the binding cycle takes it for its own state changes. Uncontended in the simulator.
        self.lock = threading.RLock()
        # None: the binding cycle runs right after the scheduling cycle (the simulator).
        # Set: it is handed the binding cycle to run asynchronously, as upstream's goroutine
        # (PreBind and Bind then run without the lock, concurrently with scheduling).
        self.binding_runner: Callable[[Callable[[], None]], None] | None = None
        self._cancel_pre_bind = at_least(self.handle.kubernetes_version, "1.36")
        self._batching = self.config.features.enabled("OpportunisticBatching")

    # ------------------------------------------------------------------ informer side

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.profiles

    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(old, new)
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node)
        self.queue.move_all_to_active_or_backoff(ev.NODE_DELETE, node, None)

    # With queueing hints on (v1.35's default) every assigned-pod event goes through the
    # hints of all unschedulable pods.
    def on_pod_add(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_ADD, None, pod)
        elif self.responsible_for(pod):
            self.pending[pod.uid] = pod
            self.queue.add(pod)
            if self._unscheduled_add_matters:
                uid = pod.uid
                self.queue.move_all_to_active_or_backoff(ev.EVENT_UNSCHEDULED_POD_ADD, None, pod,
                                                         lambda p: p.uid != uid)

    def _all_pods(self) -> list[Pod]:
        """Every pod known: bound ones from the cache (assumed pods are still pending in the
        API server's eyes) and the pending ones."""
        bound = [st.pod for st in self.cache.pod_states.values() if not st.assumed]
        return bound + list(self.pending.values())

    @staticmethod
    def _waits_for_unscheduled_add(fwk: Framework) -> bool:
        waiting = {p.name for p in (*fwk.pre_enqueue, *fwk.permit)}
        for name, events in fwk.enqueue_extensions().items():
            if name not in waiting:
                continue
            for e in events:
                ce = e.event
                if ce.resource in (ev.Resource.POD, ev.Resource.UNSCHEDULED_POD) and \
                        ce.action & ev.ActionType.ADD:
                    return True
        return False

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if new.spec.node_name:
            if old.spec.node_name:
                self.cache.update_pod(old, new)
                for event in pod_scheduling_properties_change(new, old):
                    self.queue.move_all_to_active_or_backoff(event, old, new)
                return
            # just bound: leaves the unscheduled side, joins the assigned side
            if self.pending.pop(new.uid, None) is not None:
                self.queue.delete(old)
            self.on_pod_add(new)
        elif self.responsible_for(new):
            self.pending[new.uid] = new
            nnn = old.status.nominated_node_name
            if nnn and nnn != new.status.nominated_node_name:
                # the room held for it may now serve pods of lower or equal priority
                self.queue.move_all_to_active_or_backoff(
                    ev.ASSIGNED_POD_DELETE, old, None, le_priority_pre_check(old.priority))
            if self.cache.is_assumed(new):
                return
            self.queue.update(old, new)

    def on_pod_delete(self, pod: Pod) -> None:
        if pod.spec.node_name:
            if self.cache.get_pod(pod.uid) is not None:
                self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
        else:
            self.pending.pop(pod.uid, None)
            self.queue.delete(pod)
            self.handle.reject_waiting_pod(pod.uid)  # its binding cycle fails, forgetting it
            if pod.status.nominated_node_name:
                self.queue.move_all_to_active_or_backoff(
                    ev.ASSIGNED_POD_DELETE, pod, None, le_priority_pre_check(pod.priority))

    # PersistentVolume / PersistentVolumeClaim / StorageClass / CSINode events. The backend
    # has already stored the object in handle.objects (the informers' caches); the queue
    # hears of it as upstream's event handlers tell it (a plain Add / Update / Delete).
    def on_storage_object_add(self, obj: Any) -> None:
        self._storage_event(obj.kind, ev.ActionType.ADD, None, obj)

    def on_storage_object_update(self, old: Any, new: Any) -> None:
        self._storage_event(new.kind, ev.ActionType.UPDATE, old, new)

    def on_storage_object_delete(self, obj: Any) -> None:
        self._storage_event(obj.kind, ev.ActionType.DELETE, obj, None)

    def _storage_event(self, kind: str, action: ev.ActionType, old: Any, new: Any) -> None:
        self.on_object_event(STORAGE_EVENT_RESOURCES[kind], action, old, new)

    def on_object_event(self, resource: str, action: ev.ActionType, old: Any, new: Any
                        ) -> None:
        """Any other object's change (a gang's PodGroup or Workload, ...), already stored in
        handle.objects by the backend: the queue hears of it under ``resource``, the name
        the plugins register their events with."""
        label = f"{resource}{STORAGE_EVENT_ACTIONS[action]}"
        self.queue.move_all_to_active_or_backoff(ev.ClusterEvent(resource, action, label),
                                                 old, new)

    # ------------------------------------------------------------------ schedule_one

    def schedule_one(self) -> bool:
        """One step: the outcomes of pods waiting at Permit if any came (binding cycles or
        failures), else one scheduling attempt; False when there was nothing to do."""
        if self._process_waiting():
            return True
        qpi = self.queue.pop()
        if qpi is None:
            return False
        if self.observer is not None:
            self.observer.popped(qpi)
        pod = qpi.pod
        fwk = self.profiles.get(pod.spec.scheduler_name)
        if fwk is None:
            self.queue.done(pod.uid)
            return True
        if pod.metadata.deletion_timestamp is not None:
            self.backend.record_event(pod, "Warning", "FailedScheduling",
                                      f"skip schedule deleting pod: {pod.key}")
            self.queue.done(pod.uid)
            return True
        if self.cache.is_assumed(pod):
            self.queue.done(pod.uid)
            return True
        state = CycleState()
        cycle = self.queue.scheduling_cycle
        result, assumed = self._scheduling_cycle(fwk, state, qpi, cycle)
        if result is None or assumed is None:
            return True
        r, a = result, assumed
        timeouts = state.read(_PERMIT_WAIT)
        if timeouts:  # parked at Permit: the binding cycle waits for the outcome
            state.delete(_PERMIT_WAIT)
            messages = state.read(PERMIT_WAIT_MESSAGES)
            state.delete(PERMIT_WAIT_MESSAGES)
            self.waiting.add(a, r.suggested_host, timeouts, self.clock.now(),
                             lambda wp: self._after_wait(fwk, state, qpi, r, a, cycle, wp),
                             messages)
            return True
        self._start_binding_cycle(fwk, state, qpi, r, a, cycle)
        return True

    def _start_binding_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                             result: ScheduleResult, assumed: Pod, cycle: int) -> None:
        if self.binding_runner is None:
            self._binding_cycle(fwk, state, qpi, result, assumed, cycle)
        else:
            self.binding_runner(
                lambda: self._binding_cycle(fwk, state, qpi, result, assumed, cycle))

    # ------------------------------------------------------------------ Permit Wait

    @property
    def waiting(self) -> WaitingPods:
        return self.handle.waiting_pods

    def _process_waiting(self) -> bool:
        """Time out waiting pods whose deadline passed, then act on every outcome known,
        in the order they came (WaitOnPermit returning, in upstream's binding goroutine)."""
        waiting = self.waiting
        if not len(waiting):
            return False
        waiting.expire(self.clock.now())
        done = waiting.take_resolved()
        for wp, then in done:
            then(wp)
        return bool(done)

    def pre_enqueue_message(self, pod: Pod) -> str | None:
        """Why a PreEnqueue plugin keeps ``pod`` out of the active queue, or None."""
        qpi = self.queue.get(pod.uid)
        fwk = self.profiles.get(pod.spec.scheduler_name)
        if qpi is None or not qpi.gated or fwk is None:
            return None
        st = fwk.run_pre_enqueue(pod)
        return None if st.is_success() else st.message()

    def next_waiting_deadline(self) -> float | None:
        """When a pod waiting at Permit next times out (backends wake up for it)."""
        return self.waiting.next_deadline()

    def _after_wait(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                    result: ScheduleResult, assumed: Pod, cycle: int, wp: WaitingPod) -> None:
        st = wp.status or Status()
        if st.is_success():
            self._start_binding_cycle(fwk, state, qpi, result, assumed, cycle)
            return
        # handleBindingCycleError: unreserve, forget (an AssignedPodDelete for the others,
        # after the failure handler has requeued this pod), then the failure as a FitError
        # over the one node
        node = result.suggested_host
        fwk.run_unreserve(state, assumed, node)
        forgot = self.cache.is_assumed(assumed)
        if forgot:
            self.cache.forget_pod(assumed)
        if not st.is_rejected():
            st = Status(Code.ERROR, (f"waiting on permit for pod: {st.message()}",), st.plugin)
        self._fail_on_node(fwk, qpi, st, node, cycle)
        if forgot:
            uid = assumed.uid
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, assumed, None,
                                                     lambda p: p.uid != uid)

    def _scheduling_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                          cycle: int) -> tuple[ScheduleResult | None, Pod | None]:
        pod = qpi.pod
        # (wall-clock durations for metrics only: no decision reads them)
        t0 = time.perf_counter() if self.observer is not None else 0.0
        try:
            try:
                result = self.schedule_pod(fwk, state, pod)
            finally:
                if self.observer is not None:
                    self.observer.algorithm_done(time.perf_counter() - t0)
        except FitError as fe:
            nominated: str | None = ""  # no PostFilter plugin: clear the nomination
            if fwk.post_filter:
                node, st = fwk.run_post_filter(state, pod, fe.diagnosis.node_to_status)
                if st.code == Code.ERROR:
                    # upstream's HandleErrorWithContext: an error-level line. DynamicResources
                    # ends here (CycleState's "not found") for every pod an earlier PreFilter
                    # plugin rejected, as upstream's does (dynamicresources.go, PostFilter)
                    log.error("Status after running PostFilter plugins for pod %s: %s",
                              pod.key, st.message())
                fe.diagnosis.post_filter_msg = st.message()
                # None (no PostFilterResult) keeps the pod's nomination; "" clears it
                nominated = node
            self._handle_failure(fwk, qpi, Status(Code.UNSCHEDULABLE), fe, nominated, cycle)
            return None, None
        except (PluginError, NoNodesAvailable, ExtenderError) as err:
            self._handle_failure(fwk, qpi, Status(Code.ERROR, (str(err),)), None, "", cycle)
            return None, None

        assumed = copy.copy(pod)
        assumed.spec = copy.copy(pod.spec)
        assumed.spec.node_name = result.suggested_host
        self.cache.assume_pod(assumed)
        self.queue.delete_nominated_pod_if_exists(pod)

        st = fwk.run_reserve(state, assumed, result.suggested_host)
        if not st.is_success():
            fwk.run_unreserve(state, assumed, result.suggested_host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fwk, qpi, st, result.suggested_host, cycle)
            return None, None
        st, timeouts = fwk.run_permit(state, assumed, result.suggested_host)
        if st.code == Code.WAIT:
            state.write(_PERMIT_WAIT, timeouts)
        elif not st.is_success():
            fwk.run_unreserve(state, assumed, result.suggested_host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fwk, qpi, st, result.suggested_host, cycle)
            return None, None
        return result, assumed

    def _fail_on_node(self, fwk: Framework, qpi: QueuedPodInfo, st: Status, node: str,
                      cycle: int) -> None:
        """A Reserve/Permit rejection: a FitError over one node, as upstream."""
        if st.is_rejected():
            d = Diagnosis()
            d.node_to_status.set(node, st)
            d.add_plugin_status(st)
            self._handle_failure(fwk, qpi, st, FitError(qpi.pod, 1, d), "", cycle)
        else:
            self._handle_failure(fwk, qpi, st, None, "", cycle)

    def _binding_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                       result: ScheduleResult, assumed: Pod, cycle: int) -> None:
        node = result.suggested_host
        with self.lock:
            self.queue.done(assumed.uid)
        st = self._pre_bind(fwk, state, assumed, node)
        if st.is_success():
            # Upstream's precedence: an interested bind extender, then the bind plugins.
            bound, st = self._extenders_binding(assumed, node)
            if not bound:
                st = fwk.run_bind(state, assumed, node)
            if st.code == Code.SKIP:
                st = Status(Code.ERROR, ("no bind plugin bound the pod",))
        with self.lock:
            if not st.is_success():
                fwk.run_unreserve(state, assumed, node)
                # (an informer may already have reported the pod bound elsewhere)
                if self.cache.is_assumed(assumed):
                    self.cache.forget_pod(assumed)
                self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, assumed, None)
                self._handle_failure(fwk, qpi, st, None, "", cycle)
                return
            self.cache.finish_binding(assumed)
            self.backend.record_event(assumed, "Normal", "Scheduled",
                                      f"Successfully assigned {assumed.key} to {node}")
            if self.recorder is not None:
                self.recorder.attempt(assumed, "scheduled", node, None)
            fwk.run_post_bind(state, assumed, node)

    def _pre_bind(self, fwk: Framework, state: CycleState, assumed: Pod, node: str) -> Status:
        """PreBind; from v1.36 (kubernetes#135502) with the pod in ``pods_in_pre_bind`` so
        that preempting it cancels its binding cycle (an Error: backoffQ, the pod is not
        deleted) until PreBind is over. Upstream registers the pod only when some plugin's
        PreBindPreFlight has work to do; kubesched has no PreBindPreFlight and registers it
        whenever the profile has a PreBind plugin."""
        if not fwk.pre_bind or not self._cancel_pre_bind:
            return fwk.run_pre_bind(state, assumed, node)
        uid = assumed.uid
        entry = self.handle.pods_in_pre_bind.add(uid)
        try:
            st = fwk.run_pre_bind(state, assumed, node)
            # Cancelled while PreBind ran but every plugin finished anyway: Bind must not
            # start (upstream's context is cancelled; the cause is the cycle's error).
            if st.is_success() and not entry.mark_prebound():
                st = Status(Code.ERROR, (entry.cause or "context canceled",))
            return st
        finally:
            self.handle.pods_in_pre_bind.remove(uid)

    def _extenders_binding(self, pod: Pod, node: str) -> tuple[bool, Status]:
        """extendersBinding: the first interested bind extender binds (an ignorable one
        that fails is skipped). The extender writes the Binding to the API server itself;
        the backend is told so that a simulated API server records it."""
        for ext in self.extenders:
            if not ext.is_binder() or not ext.is_interested(pod):
                continue
            try:
                self.backend.extender_bind(pod, node, functools.partial(ext.bind, pod, node))
            except ExtenderError as e:
                if ext.is_ignorable():
                    log.info("skipping extender %s in bind as it returned error and has "
                             "ignorable flag set: %s", ext.name, e)
                    continue
                return True, Status(Code.ERROR, (str(e),))
            except Exception as e:  # the (simulated) API server refused the binding
                return True, Status(Code.ERROR, (str(e),))
            return True, Status()
        return False, Status()

    # ------------------------------------------------------------------ failure handling

    def _handle_failure(self, fwk: Framework, qpi: QueuedPodInfo, status: Status,
                        fit_error: FitError | None, nominated: str | None, cycle: int) -> None:
        pod = qpi.pod
        rejected = fit_error is not None or status.is_rejected()
        reason = "Unschedulable" if rejected else "SchedulerError"
        if fit_error is not None:
            qpi.unschedulable_plugins = set(fit_error.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_error.diagnosis.pending_plugins)
            message = str(fit_error)
        else:
            message = status.message()
            if status.is_rejected() and status.plugin:
                qpi.unschedulable_plugins = {status.plugin}
        current = self.pending.get(pod.uid)
        if current is not None and not current.spec.node_name:
            qpi.pod = current
            self.queue.add_unschedulable_if_not_present(qpi, cycle)
            self.queue.add_nominated_pod(current, nominated)
        else:
            self.queue.done(pod.uid)
        if len(message) > EVENT_MESSAGE_LIMIT:
            event_msg = message[: EVENT_MESSAGE_LIMIT - 4] + " ..."
        else:
            event_msg = message
        self.backend.record_event(pod, "Warning", "FailedScheduling", event_msg)
        cond = PodCondition("PodScheduled", "False", reason, message)
        self.backend.update_pod_status(pod, cond, nominated if nominated is not None else None)
        if self.recorder is not None:
            self.recorder.attempt(pod, "unschedulable" if rejected else "error", None, message)

    # ------------------------------------------------------------------ the algorithm

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
                            *, exhaustive: bool = False) -> CycleResult:
        """PreFilter then Filter from nextStartNodeIndex until enough feasible nodes are found,
        then the filter extenders on those (``exhaustive``: every node, from the first, and
        the extenders' verdicts recorded, as explain wants)."""
        snap = self.snapshot
        table = snap.table
        n_all = snap.num_nodes
        diagnosis = Diagnosis()
        pre_res, st, with_nodes = fwk.run_pre_filter(state, pod, snap)
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
            nodes = np.arange(n_all)
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
        order = np.concatenate([nodes[start:], nodes[:start]]) if start else nodes
        feasible = self._filter_in_order(fwk, state, pod, order, to_find, diagnosis)
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

    def _filter_in_order(self, fwk: Framework, state: CycleState, pod: Pod,
                         order: np.ndarray, to_find: int, diagnosis: Diagnosis) -> np.ndarray:
        """Nodes of ``order`` that pass every filter, stopping after ``to_find``; failures
        of the nodes passed on the way are recorded, as a sequential upstream scan would."""
        snap = self.snapshot
        nominated_pods = NominatedPods.of(state, self.handle, pod)
        nominated = nominated_pods.pods
        first_pass_batch = bool(nominated) and fwk.filters_read_only_resources(state)
        ks_none = np.zeros(0, dtype=np.int64)
        batch_all = all(p.name in fwk.batch_filters for p in fwk.filter
                        if p.name not in state.skip_filter)
        chunk = len(order) if batch_all else max(to_find, 64)
        found: list[np.ndarray] = []
        n_found = 0
        for lo in range(0, len(order), chunk):
            sub = order[lo: lo + chunk]
            out = fwk.filter_batch(state, pod, snap, sub)
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
            self._record_failures(diagnosis, out, fwk.filter_names, sub, ok, cut, overrides,
                                  first_pass)
            hit = sub[:cut][ok[:cut]]
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


STORAGE_EVENT_RESOURCES = {
    "PersistentVolume": ev.Resource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": ev.Resource.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": ev.Resource.STORAGE_CLASS,
    "CSINode": ev.Resource.CSI_NODE,
    "CSIDriver": ev.Resource.CSI_DRIVER,
    "CSIStorageCapacity": ev.Resource.CSI_STORAGE_CAPACITY,
    # DRA objects take the same path (stored by the backend, then the queue told)
    "ResourceClaim": ev.Resource.RESOURCE_CLAIM,
    "ResourceSlice": ev.Resource.RESOURCE_SLICE,
    "DeviceClass": ev.Resource.DEVICE_CLASS,
}
STORAGE_EVENT_ACTIONS = {ev.ActionType.ADD: "Add", ev.ActionType.UPDATE: "Update",
                         ev.ActionType.DELETE: "Delete"}


_CODES = max(Code) + 1  # Code values are 0 .. _CODES - 1


def _cut(ok: np.ndarray, need: int) -> int:
    """How far a sequential scan over ``ok`` goes before it has ``need`` feasible nodes."""
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


class NoNodesAvailable(Exception):
    pass


def node_update_events(old: Node, new: Node) -> list[ev.ClusterEvent]:
    """The Node update events upstream derives from what changed."""
    from kubesched.framework.events import ActionType, ClusterEvent, Resource

    out = []
    if old.status.allocatable != new.status.allocatable:
        out.append(ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE,
                                "NodeAllocatableChange"))
    if old.metadata.labels != new.metadata.labels:
        out.append(ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange"))
    if old.spec.taints != new.spec.taints or old.spec.unschedulable != new.spec.unschedulable:
        out.append(ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange"))
    if old.metadata.annotations != new.metadata.annotations:
        out.append(ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_ANNOTATION,
                                "NodeAnnotationChange"))
    if old.status.declared_features != new.status.declared_features:
        out.append(ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_DECLARED_FEATURE,
                                "NodeDeclaredFeatureChange"))
    return out
