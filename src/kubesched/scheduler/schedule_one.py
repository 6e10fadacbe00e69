"""schedule_one: one scheduling attempt, its binding cycle, and failure handling
(upstream's ``schedule_one.go``).

A step acts on the outcomes of pods waiting at Permit if any came, else pops a pod and runs
the scheduling cycle (the algorithm, then PostFilter on a FitError, or assume, Reserve and
Permit); the binding cycle (PreBind, Bind, PostBind) runs right after it, or when the
pod's wait at Permit ends, or on the backend's thread (``binding_runner``). Every failure
goes through ``handle_scheduling_failure``.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext

from kubesched.api.types import Pod, PodCondition, bound_copy
from kubesched.framework import events as ev
from kubesched.framework.backend import Backend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderError
from kubesched.framework.interface import PREEMPTION_VICTIMS, PluginError
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import Diagnosis, FitError, QueuedPodInfo, ScheduleResult
from kubesched.framework.waiting import PERMIT_WAIT_MESSAGES, WaitingPod, WaitingPods
from kubesched.scheduler.algorithm import Algorithm, NoNodesAvailable
from kubesched.scheduler.failures import Draw, Failed, Failure, FailureMemo
from kubesched.scheduler.observer import Recorder, SchedulerObserver, StepSharing

log = logging.getLogger(__name__)

_PERMIT_WAIT = "kubesched.io/permit-wait"  # CycleState key: the waiting plugins' timeouts
EVENT_MESSAGE_LIMIT = 1024
_UNSCHEDULABLE = Status(Code.UNSCHEDULABLE)  # a FitError's status (never changed)


class ScheduleOne(Algorithm):
    """The Scheduler's scheduling and binding cycles (a base of ``Scheduler``), with the
    parts of its state they read besides the algorithm's."""

    backend: Backend
    profiles: dict[str, Framework]
    pending: dict[str, Pod]
    recorder: Recorder | None
    observer: SchedulerObserver | None
    lock: threading.RLock
    binding_runner: Callable[[Callable[[], None]], None] | None
    _cancel_pre_bind: bool  # v1.36: preempting a pod in PreBind cancels its binding cycle
    failures: FailureMemo  # failed attempts an identical pod replays
    world_changes: int
    # A backend that can tell when nothing would happen between two steps (the
    # simulator's run loop), so that replayed failures may share a step; None: one
    # attempt a step.
    step_sharing: StepSharing | None = None

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
                             messages, context=(qpi, cycle, state))
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

    def park_again(self, qpi: QueuedPodInfo, node: str, cycle: int,
                   pending: dict[str, tuple[float, float]], messages: dict[str, str],
                   choose: Callable[[CycleState], None] = lambda state: None) -> None:
        """A pod a checkpoint found waiting at Permit on ``node`` (a resumed run): assumed
        there again and waiting until the same deadlines (``pending``: plugin -> (deadline,
        timeout)). The cycle state its binding cycle reads is made again as the cycle made
        it (PreFilter, Filter on that node, ``choose``: Reserve's choices as the checkpoint
        holds them, then Reserve); Permit is not run again: its verdict is known, and what
        it did besides (siblings activated, the plugins' own records) is in the
        checkpoint."""
        pod = qpi.pod
        fwk = self.profiles[pod.spec.scheduler_name]
        state = CycleState()
        self.cache.update_snapshot(self.snapshot)
        _res, st, _with = fwk.run_pre_filter(state, pod, self.snapshot)
        ni = self.snapshot.get(node)
        if st.is_success() and ni is not None:
            fwk.run_filter(state, pod, ni)
        choose(state)
        assumed = bound_copy(pod, node)
        self.cache.assume_pod(assumed)
        fwk.run_reserve(state, assumed, node)
        r = ScheduleResult(node)
        wp = self.waiting.add(
            assumed, node, {}, self.clock.now(),
            lambda wp: self._after_wait(fwk, state, qpi, r, assumed, cycle, wp),
            messages, context=(qpi, cycle, state))
        wp.pending = dict(pending)

    def next_waiting_deadline(self) -> float | None:
        """When a pod waiting at Permit next times out (backends wake up for it)."""
        return self.waiting.next_deadline()

    def _after_wait(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                    result: ScheduleResult, assumed: Pod, cycle: int, wp: WaitingPod) -> None:
        st = fwk.wait_on_permit(wp)
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
        memo = self.failures
        attempt = memo.begin(self, fwk, pod)  # an identical pod's failure over this cluster
        failure = memo.recall(attempt) if attempt is not None else None
        if failure is not None:
            self._fail_as_before(fwk, qpi, failure, cycle)
            return None, None
        hinted: list[int] = []
        draws: list[Draw] = []
        try:
            try:
                with memo.watching_hints(fwk, hinted) if attempt is not None else nullcontext():
                    result = self.schedule_pod(fwk, state, pod)
            finally:
                if self.observer is not None:
                    self.observer.algorithm_done(time.perf_counter() - t0)
        except FitError as fe:
            nominated: str | None = ""  # no PostFilter plugin: clear the nomination
            preemption = None
            node: str | None = None
            st = Status()
            if fwk.post_filter:
                with memo.recording(self, draws) if attempt is not None else nullcontext():
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
                if node and st.is_success() and self.decisions is not None:
                    preemption = {"node": node,
                                  "victims": sorted(state.read(PREEMPTION_VICTIMS) or [])}
            failed = self._failed_as(_UNSCHEDULABLE, fe)
            self._fail_pod(qpi, failed, nominated)
            evaluated = len(fe.diagnosis.node_to_status)
            if self.decisions is not None:
                self.decisions.decided(qpi, self.clock.now(), None, evaluated, 0,
                                       failed.message, preemption)
            if (attempt is not None and not node
                    and (not fwk.post_filter or st.is_rejected())):
                memo.keep(self, attempt, Failure(
                    failed, evaluated, self.next_start_node_index, bool(hinted),
                    (node, st) if fwk.post_filter else None, draws))
            return None, None
        except (PluginError, NoNodesAvailable, ExtenderError) as err:
            # no node at all is unschedulable, not an error (upstream's schedulingCycle:
            # UnschedulableAndUnresolvable with the error, no plugin named, so the queue
            # still counts it as an error's retry)
            code = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if isinstance(err, NoNodesAvailable)
                    else Code.ERROR)
            message = self.handle_scheduling_failure(fwk, qpi, Status(code, (str(err),)),
                                                     None, "", cycle)
            if self.decisions is not None:
                self.decisions.decided(qpi, self.clock.now(), None, 0, 0, message, None)
            return None, None

        assumed = bound_copy(pod, result.suggested_host)
        self.cache.assume_pod(assumed)
        self.queue.delete_nominated_pod_if_exists(pod)

        st = fwk.run_reserve(state, assumed, result.suggested_host)
        if not st.is_success():
            self._undo_assume(fwk, state, qpi, st, result, assumed, cycle)
            return None, None
        st, timeouts = fwk.run_permit(state, assumed, result.suggested_host)
        if st.code == Code.WAIT:
            state.write(_PERMIT_WAIT, timeouts)
        elif not st.is_success():
            self._undo_assume(fwk, state, qpi, st, result, assumed, cycle)
            return None, None
        self._decided(qpi, result.suggested_host, result, None)
        return result, assumed

    def _fail_as_before(self, fwk: Framework, qpi: QueuedPodInfo, failure: Failure,
                        cycle: int) -> None:
        """A failure replayed; then, when the backend lets attempts share the step
        (``step_sharing``), the pods queued next while each replays a kept failure too:
        after a finishing pod requeues every pod waiting for room, they are retried at one
        instant over one unchanged cluster, and most fail as the first of their shape did.
        Each attempt does what it would in a step of its own, in the same order; the
        queue's and the failure's bookkeeping is done for them together."""
        replays = [(fwk, qpi, failure, cycle)]
        while replays:
            self._fail_all_as_before(replays)
            replays = self._pop_replays()

    def _pop_replays(self) -> list[tuple[Framework, QueuedPodInfo, Failure, int]]:
        """The pods ``pop`` gives next, popped, with their profiles, the failures they
        replay and their cycles, while each replays one and the backend lets it join the
        step (none: the next pod waits for a step of its own)."""
        sharing = self.step_sharing
        if sharing is None or len(self.waiting):
            return []
        profiles, cache, memo = self.profiles, self.cache, self.failures
        start = self.next_start_node_index  # where each one's scan starts: the last's end
        got: list[tuple[Framework, QueuedPodInfo, Failure]] = []
        room = 0

        def take(qpi: QueuedPodInfo) -> bool:
            nonlocal start, room
            pod = qpi.pod
            fwk = profiles.get(pod.spec.scheduler_name)
            if fwk is None or pod.metadata.deletion_timestamp is not None \
                    or cache.is_assumed(pod):
                return False
            if got:
                failure = memo.recall_next(fwk, pod, start)
            else:
                attempt = memo.begin(self, fwk, pod, start)
                failure = memo.recall(attempt) if attempt is not None else None
            if failure is None:
                return False
            if not got:
                room = sharing.first(qpi)
            elif len(got) >= room or not sharing.fresh(qpi.uid):
                return False
            if not room:
                return False
            got.append((fwk, qpi, failure))
            start = failure.next_start
            return True

        queue = self.queue
        popped = queue.pop_while(take)
        if len(popped) != len(got):
            raise RuntimeError("the queue popped other pods than those taken")
        if got:
            sharing.joined(len(got) - 1)
        base = queue.scheduling_cycle - len(got)
        return [(fwk, qpi, failure, base + k) for k, (fwk, qpi, failure) in enumerate(got, 1)]

    def _fail_all_as_before(self, replays: list[tuple[Framework, QueuedPodInfo, Failure, int]]
                            ) -> None:
        """What the FitError path of ``_scheduling_cycle`` does, with each kept outcome
        (PostFilter's answer, kept when the profile has PostFilter plugins: the profile
        is part of the key), and what the scan did besides: the start index moved,
        OpportunisticBatching asked (which, the cluster unchanged since a failure, hints
        nothing: the last cycle did not succeed)."""
        self.cache.update_snapshot(self.snapshot)  # (unchanged between the replays)
        failed: list[tuple[QueuedPodInfo, Failed, str | None]] = []
        # (whether each profile's batch may hint: asking it changes no batch's nodes)
        may_hint: dict[Framework, bool] = {}
        for fwk, qpi, failure, cycle in replays:
            if failure.hinted:
                hints = may_hint.get(fwk)
                if hints is None:
                    hints = may_hint[fwk] = not fwk.batch.hints_nothing()
                if hints:
                    hint, _sig = fwk.batch.get_node_hint(fwk, CycleState(), qpi.pod, cycle,
                                                         self.snapshot, self.clock.now(),
                                                         self.handle.rng)
                    if hint:
                        raise RuntimeError(f"a batch hint ({hint}) for a replayed failure")
            self.next_start_node_index = failure.next_start
            nominated: str | None = ""  # no PostFilter plugin: clear the nomination
            if failure.post is not None:
                self.failures.redraw(self, failure)
                nominated = failure.post[0]
            failed.append((qpi, failure.failed, nominated))
        self._fail_pods(failed)
        if self.decisions is not None:
            now = self.clock.now()
            for _fwk, qpi, failure, _cycle in replays:
                self.decisions.decided(qpi, now, None, failure.evaluated, 0,
                                       failure.failed.message, None)

    def _undo_assume(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                     st: Status, result: ScheduleResult, assumed: Pod, cycle: int) -> None:
        """Reserve or Permit refused the chosen node: unreserve, forget, and fail."""
        fwk.run_unreserve(state, assumed, result.suggested_host)
        self.cache.forget_pod(assumed)
        message = self._fail_on_node(fwk, qpi, st, result.suggested_host, cycle)
        self._decided(qpi, None, result, message)

    def _decided(self, qpi: QueuedPodInfo, node: str | None, result: ScheduleResult,
                 message: str | None) -> None:
        """The decision record of a cycle that found a host: the pod assumed there (waiting
        at Permit or not), or rejected by Reserve or Permit."""
        if self.decisions is not None:
            self.decisions.decided(qpi, self.clock.now(), node, result.evaluated_nodes,
                                   result.feasible_nodes, message, None)

    def _fail_on_node(self, fwk: Framework, qpi: QueuedPodInfo, st: Status, node: str,
                      cycle: int) -> str:
        """A Reserve/Permit rejection: a FitError over one node, as upstream. Returns the
        failure's message."""
        if st.is_rejected():
            d = Diagnosis()
            d.node_to_status.set(node, st)
            d.add_plugin_status(st)
            return self.handle_scheduling_failure(fwk, qpi, st, FitError(qpi.pod, 1, d), "",
                                                  cycle)
        return self.handle_scheduling_failure(fwk, qpi, st, None, "", cycle)

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
                self.handle_scheduling_failure(fwk, qpi, st, None, "", cycle)
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

    def handle_scheduling_failure(self, fwk: Framework, qpi: QueuedPodInfo, status: Status,
                                  fit_error: FitError | None, nominated: str | None,
                                  cycle: int) -> str:
        """handleSchedulingFailure: the pod back to the unschedulable pods (or backoffQ),
        its nomination set (None keeps it, "" clears it), the FailedScheduling event and
        the PodScheduled condition. Returns the failure's message."""
        failed = self._failed_as(status, fit_error)
        self._fail_pod(qpi, failed, nominated)
        return failed.message

    @staticmethod
    def _failed_as(status: Status, fit_error: FitError | None) -> Failed:
        """What a failure with ``status`` (or ``fit_error``) does to its pod."""
        rejected = fit_error is not None or status.is_rejected()
        unschedulable = pending = None
        if fit_error is not None:
            unschedulable = frozenset(fit_error.diagnosis.unschedulable_plugins)
            pending = frozenset(fit_error.diagnosis.pending_plugins)
            message = str(fit_error)
        else:
            message = status.message()
            if status.is_rejected() and status.plugin:
                unschedulable = frozenset((status.plugin,))
        if len(message) > EVENT_MESSAGE_LIMIT:
            event_msg = message[: EVENT_MESSAGE_LIMIT - 4] + " ..."
        else:
            event_msg = message
        reason = "Unschedulable" if rejected else "SchedulerError"
        return Failed(rejected, unschedulable, pending, message, event_msg,
                      PodCondition("PodScheduled", "False", reason, message))

    def _fail_pod(self, qpi: QueuedPodInfo, failed: Failed, nominated: str | None) -> None:
        """``failed`` done to ``qpi``'s pod."""
        self._fail_pods([(qpi, failed, nominated)])

    def _fail_pods(self, failures: list[tuple[QueuedPodInfo, Failed, str | None]]) -> None:
        """Each failure done to its pod: all back to the queue first, in turn, then each
        one's nomination, then each one's event and condition, then each one's record.
        (Of several failures at once, as replays are, none has a nomination to set or
        clear, so none of these reads what the others' earlier parts changed; the backend's
        and the recorder's forms for many at once are used when they have them.)"""
        pending, queue, backend, recorder = self.pending, self.queue, self.backend, self.recorder
        back: list[QueuedPodInfo] = []
        told: list[tuple[Pod, Pod | None, Failed, str | None]] = []
        for qpi, failed, nominated in failures:
            pod = qpi.pod
            if failed.unschedulable is not None:
                qpi.unschedulable_plugins = set(failed.unschedulable)
            if failed.pending is not None:
                qpi.pending_plugins = set(failed.pending)
            current = pending.get(qpi.uid)
            if current is not None and not current.spec.node_name:
                qpi.pod = current
                back.append(qpi)
            else:
                current = None
            told.append((pod, current, failed, nominated))
        queue.add_unschedulable_all(back)
        node_of = queue.nominator.node_of
        for pod, current, _failed, nominated in told:
            if current is None:
                queue.done(pod.uid)
            # (nothing to do: no pod is nominated and this one gets none)
            elif node_of or nominated or (nominated is None
                                          and current.status.nominated_node_name):
                queue.add_nominated_pod(current, nominated)
        reports = getattr(backend, "failed_scheduling", None)
        if reports is not None:
            reports([(pod, failed.condition, nominated, failed.event_message)
                     for pod, _current, failed, nominated in told])
        else:
            for pod, _current, failed, nominated in told:
                backend.record_event(pod, "Warning", "FailedScheduling", failed.event_message)
                backend.update_pod_status(pod, failed.condition, nominated)
        if recorder is None:
            return
        many = getattr(recorder, "failed_attempts", None)
        if many is not None:
            many([(pod, "unschedulable" if failed.rejected else "error", failed.message)
                  for pod, _current, failed, _nominated in told])
            return
        for pod, _current, failed, _nominated in told:
            recorder.attempt(pod, "unschedulable" if failed.rejected else "error", None,
                             failed.message)
