"""The simulator's accounting: each pending pod's fate (``PodRecord``), the scheduler's
attempts as its ``Recorder``, events by reason, preemptions, and the run's result
(``SimResult``) with the words said of the pods still pending when it ends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.scenario import ClusterState
from kubesched.api.types import Pod
from kubesched.backends.sim.faults import EVICTED_PREFIX
from kubesched.scheduler import Scheduler

PREEMPTED_BY = "preempted by "


@dataclass(slots=True)
class PodRecord:
    """One pending pod's fate, for the placements log and the summary."""

    key: str
    node: str | None = None
    time: float = 0.0
    attempts: int = 0
    message: str | None = None
    gates: tuple[str, ...] = ()  # a pod never attempted because it is still gated
    evicted_from: str | None = None  # the node a deleted / evicted pod was bound to
    unserved: bool = False  # no profile serves its schedulerName: never attempted

    @property
    def evicted(self) -> bool:
        return self.message is not None and self.message.startswith(EVICTED_PREFIX)

    @property
    def preempted(self) -> bool:
        return (self.node is None and self.message is not None
                and self.message.startswith(PREEMPTED_BY))

    @property
    def is_pending(self) -> bool:
        """Not bound, and not taken away."""
        return self.node is None and not self.evicted and not self.preempted

    def pending_reason(self) -> str:
        if self.message:
            return self.message
        if self.gates:
            return f"waiting for scheduling gates: [{' '.join(self.gates)}]"
        return "never attempted"

    def as_json(self) -> dict[str, Any]:
        # a bound pod's line has no message: its earlier failures are history (--decisions
        # has them; ``message`` keeps the last one)
        out = {"pod": self.key, "node": self.node, "time": self.time,
               "attempts": self.attempts,
               "message": None if self.node is not None else self.message}
        if self.evicted_from is not None:
            out["evicted_from"] = self.evicted_from
        return out


@dataclass
class SimResult:
    # the pods this scheduler serves that entered the queue, in arrival order
    records: list[PodRecord]
    nodes: list[dict[str, Any]]
    wall_seconds: float
    virtual_seconds: float
    events: dict[str, int] = field(default_factory=dict)
    missing_node_pods: dict[str, str] = field(default_factory=dict)  # pod key -> its node
    # preemptor key -> the keys of the victims it evicted, in order
    preemptions: dict[str, list[str]] = field(default_factory=dict)
    # DeviceClass -> devices allocated at the end of the run
    devices: dict[str, int] = field(default_factory=dict)
    # pods no profile serves (another scheduler's): never attempted here
    unserved: list[PodRecord] = field(default_factory=list)
    # every line of --placements: ``records`` and ``unserved``, in arrival order
    placements: list[PodRecord] = field(default_factory=list)

    @property
    def scheduled(self) -> int:
        return sum(1 for r in self.records if r.node is not None)

    @property
    def pending(self) -> list[PodRecord]:
        return [r for r in self.records if r.is_pending]

    @property
    def preempted(self) -> list[PodRecord]:
        """Pods preemption took away (their deletion asked for by a preemptor)."""
        return [r for r in self.records if r.preempted]


    @property
    def evicted(self) -> list[PodRecord]:
        """Pods a fault or the controllers it set off took away (node removed, NotReady,
        deleted)."""
        return [r for r in self.records if r.node is None and r.evicted]


class Accounting:
    """The scheduler's ``Recorder`` in the simulator, and what the API server tells of pods
    arriving, going and being preempted. ``alive(uid)`` says whether a pod is still on the
    API server and not being deleted (an attempt's outcome for one that is not leaves its
    record as its deletion wrote it); ``now`` is the virtual clock."""

    def __init__(self, alive: Callable[[str], bool], now: Callable[[], float]) -> None:
        self.records: dict[str, PodRecord] = {}
        self.event_counts: dict[str, int] = {}
        self.preemptions: dict[str, list[str]] = {}  # preemptor key -> victims' keys
        self.attempts = 0  # scheduling attempts, every pod's
        # simulate --explain: the pods whose cluster at their last failed attempt is kept
        self.explain_keys: set[str] = set()
        self.last_attempt: dict[str, tuple[Pod, ClusterState]] = {}
        self.scheduler: Scheduler | None = None  # set once built (--explain's snapshots)
        self._alive = alive
        self._now = now

    # the Recorder

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None:
        self.attempts += 1
        if node is None and self.explain_keys and pod.key in self.explain_keys:
            self._keep_attempt(pod)
        rec = self.records.get(pod.uid)
        if rec is None:
            return
        rec.attempts += 1
        if not self._alive(pod.uid):
            return  # deleted meanwhile (during its cycle or binding, or waiting): its fate
        rec.time = self._now()
        if node is not None:
            rec.node = node
        else:
            rec.message = message

    def failed_attempts(self, outcomes: Sequence[tuple[Pod, str, str]]) -> None:
        """``attempt(pod, result, None, message)`` for each, in turn."""
        if self.explain_keys:
            for pod, result, message in outcomes:
                self.attempt(pod, result, None, message)
            return
        self.attempts += len(outcomes)
        records, alive, now = self.records, self._alive, self._now()
        for pod, _result, message in outcomes:
            uid = pod.uid
            rec = records.get(uid)
            if rec is None:
                continue
            rec.attempts += 1
            if alive(uid):
                rec.time = now
                rec.message = message

    def _keep_attempt(self, pod: Pod) -> None:
        """The cluster as this failed attempt saw it: references to the nodes and pods of
        the moment (objects are replaced, never changed, when they change), and the
        nominations; enough to explain the attempt after the run."""
        sched = self.scheduler
        if sched is None:
            return
        cache = sched.cache
        nodes = [ni.node for ni in cache.nodes.values() if ni.node is not None]
        running = [p for ni in cache.nodes.values() for p in ni.pods]
        nom = sched.queue.nominator
        nominated = [(p, nom.node_of[u]) for u in nom.node_of
                     if u != pod.uid and (p := nom.pod(u)) is not None]
        h = sched.handle
        self.last_attempt[pod.key] = (pod, ClusterState(
            nodes, running, nominated, {k: list(v) for k, v in h.objects.items()},
            h.namespaces))

    # what the API server tells

    def event(self, reason: str, n: int = 1) -> None:
        self.event_counts[reason] = self.event_counts.get(reason, 0) + n

    def arrived(self, pod: Pod, now: float, refused: str | None = None, *,
                unserved: bool = False) -> None:
        self.records[pod.uid] = PodRecord(pod.key, time=now, message=refused,
                                          unserved=unserved)

    def deleted(self, pod: Pod, reason: str, now: float) -> None:
        """The deletion of ``pod`` was asked for: ``reason`` is its fate."""
        rec = self.records.get(pod.uid)
        if rec is not None:
            rec.node, rec.message, rec.time = None, reason, now
            if pod.spec.node_name:
                rec.evicted_from = pod.spec.node_name

    def preempted(self, pod: Pod, reason: str) -> None:
        if reason.startswith(PREEMPTED_BY):
            self.preemptions.setdefault(reason[len(PREEMPTED_BY):], []).append(pod.key)

    def bound_elsewhere(self, pod: Pod, node: str, now: float) -> None:
        rec = self.records.get(pod.uid)
        if rec is not None:
            rec.node, rec.time = node, now

    # the end of the run

    def say_why_pending(self, pods: dict[str, Pod], scheduler: Scheduler) -> None:
        """The words for the pods still pending: gated, waiting at Permit (the run ended
        while it waited), or kept out of the queue by a PreEnqueue plugin."""
        waiting = scheduler.waiting
        for uid, rec in self.records.items():
            pod = pods.get(uid)
            if rec.node is not None or pod is None:
                continue
            rec.gates = pod.spec.scheduling_gates
            wp = waiting.get(uid)
            if wp is not None:
                rec.message = (f"waiting at Permit on node {wp.node} for "
                               f"{', '.join(sorted(wp.pending))}")
                why = [wp.messages[p] for p in sorted(wp.pending) if p in wp.messages]
                if why:
                    rec.message += ": " + "; ".join(why)
            elif rec.message is None and not rec.gates:
                # never let into the queue by a PreEnqueue plugin (a gang short of members):
                # its words say why
                rec.message = scheduler.pre_enqueue_message(pod)
