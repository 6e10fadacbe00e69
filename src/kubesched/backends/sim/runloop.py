"""The simulator's run loop: deliver what is due, run one scheduling step, and when there is
nothing to do now, move the virtual clock to the next wake-up — with one rule for when the
run is over.

**Wake-ups** are kept as upstream times its retries: the next timeline event, a backoff
expiring, a Permit deadline, and (while the timeline holds anything) the 30-second flush of
pods unschedulable for 5 minutes.

**The end rule.** A *round* is a full pass of attempts since the last change of the API
server from outside the scheduler's own steps (an arrival, a pod finishing or gone, a fault,
a controller's pod): every pod queued to be retried (activeQ, the backoff queues, and those
moved there from the unschedulable pool meanwhile) and every pod waiting at Permit has been
tried once — popped and failed, bound or parked at Permit, or, for a waiting pod, timed out or
rejected. A round is *idle* when it would repeat itself: it leaves the same bound and assumed
pods, the same outcome per pod and the same writes of the scheduler's own (``own_writes``:
bindings, deletions, claim and volume updates) as a round before it since that change. The
core is deterministic, so an idle round would come round again for ever. Then the run jumps
to the next timeline event (the clock moves on to its next wake-up even where the cycles
would go on at this instant: upstream's hot loop), or ends when there is none.

A round after which every pod left to retry was tried against the cluster as it is now (no
change at all since its attempt, its own writes included) and nothing waited at Permit is its
own round before: the next round would see the same cluster and repeat it attempt for
attempt — one round of failures against an unchanged cluster ends the run (no second round to
compare with). The comparison is for the rest: gangs (members parked, timed out and rejected
change the assumed pods within a round, and the order of their retries can make the next
round differ), and attempts that write as they fail (DynamicResources' PreBind reserving a
claim and taking the reservation back). A round that matches any round since the last outside
change (not only the one just before) closes a cycle of any length, so the rule ends every run
whose timeline is empty and whose pods keep failing.

**Fidelity.** After an idle round the wake-ups go on as before while the timeline holds
events (the retries upstream would make meanwhile: attempt counts feed backoffs and the
records, and a retry may be the one that sees a change); only a repetition at one instant
(cycles activating each other, which no wake-up would end) makes the clock move on to the next
wake-up at once. docs/differences.md says where this departs from upstream.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.types import Pod
from kubesched.backends.sim.timeline import Event, Timeline
from kubesched.clock import VirtualClock
from kubesched.framework.types import QueuedPodInfo
from kubesched.scheduler import Recorder, Scheduler

Outcome = tuple[str | None, str | None]  # (node, message); ("…", WAITING): parked at Permit
WAITING = "waiting at Permit"
_UNBOUNDED = 1 << 62  # attempts that may share a step with no series to sample


class Cluster(Protocol):
    """What the run loop needs of the simulated API server."""

    @property
    def changes(self) -> int: ...

    @property
    def own_changes(self) -> int: ...

    @property
    def own_writes(self) -> list[tuple[str, str]]: ...

    in_step: bool

    @property
    def bound_count(self) -> int: ...

    def deliver(self, event: Event) -> None: ...

    def raise_violation(self) -> None: ...


class Ticked(Protocol):
    def tick(self) -> None: ...

    def quiet_ticks(self) -> int:
        """How many ticks may come before one takes a sample."""
        ...

    def skip(self, n: int) -> None:
        """``n`` ticks that take no sample."""
        ...


class PeriodicController(Protocol):
    """A controller with a loop of its own on the virtual clock (cluster-autoscaler's): it
    runs every ``interval`` seconds from its first run at the run's start, but a run that
    would find the cluster as the last one left it is skipped, unless the last one asked for
    it (a controller whose decisions depend on time: how long a node has been unneeded).
    ``run(now)`` acts on the cluster and returns the virtual time from which it must run
    again even if nothing changes, or None."""

    interval: float

    def run(self, now: float) -> float | None: ...

    def memory(self) -> dict[str, Any]:
        """Its state (``--state-out``), as ``restore`` takes it back."""

    def restore(self, memory: dict[str, Any]) -> None: ...


_Signature = tuple[int, tuple[tuple[str, str], ...], frozenset[tuple[str, str]],
                   frozenset[tuple[str, Outcome]]]


class Rounds:
    """Tells rounds apart and judges each as it completes (the end rule above). It hears of
    attempts as the scheduler's Recorder, passing them on to ``recorder``, and of parked
    pods from the waiting pods after each step."""

    def __init__(self, scheduler: Scheduler, cluster: Cluster) -> None:
        self.scheduler = scheduler
        self.cluster = cluster
        self.recorder: Recorder | None = None
        self._start = -1  # the outside change count the current round started at
        self._step_start = -1  # the outside change count the current step started at
        self._step_total = -1  # every change counted when the current step started
        self._tried_at: dict[str, int] = {}  # uid -> every change counted when tried
        self._tried: dict[str, Outcome] = {}  # uid -> outcome in this round
        self._waited = False  # a pod was at Permit during the round
        self._waiting: set[str] = set()  # the pods at Permit after the last step
        self._seen: set[_Signature] = set()
        self._retried = False  # a pod was tried a second time in this round

    def _outside(self) -> int:
        """Changes not made by the scheduler's own calls during its steps."""
        return self.cluster.changes - self.cluster.own_changes

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None:
        if self.recorder is not None:
            self.recorder.attempt(pod, result, node, message)
        n = self._outside()
        if n != self._start:
            self._new_round(n, forget=True)
        if n == self._step_start:  # an attempt that saw a change it made belongs to no round
            self._tried_once(pod.uid, (node, message))

    def failed_attempts(self, outcomes: Sequence[tuple[Pod, str, str]]) -> None:
        """``attempt(pod, result, None, message)`` for each, in turn (none changes the
        cluster, so the round is found once)."""
        rec = self.recorder
        if rec is not None:
            many = getattr(rec, "failed_attempts", None)
            if many is not None:
                many(outcomes)
            else:
                for pod, result, message in outcomes:
                    rec.attempt(pod, result, None, message)
        n = self._outside()
        if n != self._start:
            self._new_round(n, forget=True)
        if n == self._step_start:  # (``_tried_once`` for each)
            tried, tried_at, total = self._tried, self._tried_at, self._step_total
            for pod, _result, message in outcomes:
                uid = pod.uid
                if uid in tried:
                    self._retried = True
                tried[uid] = (None, message)
                tried_at[uid] = total

    def step_started(self) -> None:
        self._step_start = self._outside()
        self._step_total = self.cluster.changes

    def step_done(self, busy: bool) -> bool:
        """After a scheduling step: whether a round has just completed idle (looked at when
        there was nothing to do, and when a pod came round again)."""
        n = self._outside()
        if n != self._start:
            self._new_round(n, forget=True)
        waiting = self.scheduler.waiting
        if len(waiting) or self._waiting:
            now = {wp.pod.uid: wp.node for wp in waiting}
            if now:
                self._waited = True
            if n == self._step_start:
                for uid in now.keys() - self._waiting:  # parked at Permit: its try is over
                    self._tried_once(uid, (now[uid], WAITING))
            self._waiting = set(now)
        if busy and not self._retried:
            return False
        self._retried = False
        queued = self._queued()
        if queued is None:
            return False
        cluster = self.cluster
        # every pod left to retry was tried against the cluster as it is now
        unchanged = all(self._tried_at[uid] == cluster.changes for uid in queued)
        sig = (cluster.bound_count, tuple(cluster.own_writes),
               frozenset((wp.pod.uid, wp.node) for wp in waiting),
               frozenset(self._tried.items()))
        idle = (unchanged and not self._waited) or sig in self._seen
        self._seen.add(sig)
        self._new_round(n, forget=False)
        return idle

    def steps_on(self, uid: str) -> bool:
        """Whether a step ending now and the next one, attempting ``uid``, leave the end
        rule with nothing to do between them: no change since the step started, no pod
        retried in this round nor parked at Permit, and ``uid`` not yet tried in it."""
        return (not self._retried and not self._waiting and self.fresh(uid)
                and self.cluster.changes == self._step_total)

    def fresh(self, uid: str) -> bool:
        """Whether ``uid`` has not been tried in this round."""
        return uid not in self._tried

    def _tried_once(self, uid: str, outcome: Outcome) -> None:
        if uid in self._tried:
            self._retried = True
        self._tried[uid] = outcome
        self._tried_at[uid] = self._step_total

    def _queued(self) -> list[str] | None:
        """The pods queued to be retried, when each has been tried in this round (the
        round is complete), else None."""
        tried = self._tried
        queue = self.scheduler.queue
        uids = [q.uid for q in (*queue.active_pods(), *queue.backoff_pods())]
        if all(u in tried for u in uids) and \
                all(wp.pod.uid in tried for wp in self.scheduler.waiting):
            return uids
        return None

    def memory(self) -> dict[str, object]:
        """What the end rule remembers of the round in progress and the rounds since the
        last outside change (``--state-out``; ``restore`` takes it back)."""
        return {"rounds": {
            "start": self._start, "stepStart": self._step_start,
            "stepTotal": self._step_total, "triedAt": dict(self._tried_at),
            "tried": {u: list(o) for u, o in self._tried.items()},
            "waited": self._waited, "waiting": sorted(self._waiting),
            "retried": self._retried,
            "seen": sorted(([b, [list(w) for w in writes], sorted(list(x) for x in wait),
                             sorted([u, list(o)] for u, o in tried)]
                            for b, writes, wait, tried in self._seen), key=repr)}}

    def restore(self, memory: dict[str, Any]) -> None:
        m = memory["rounds"]
        self._start, self._step_start = int(m["start"]), int(m["stepStart"])
        self._step_total = int(m["stepTotal"])
        self._tried_at = {str(u): int(n) for u, n in m["triedAt"].items()}
        self._tried = {str(u): (o[0], o[1]) for u, o in m["tried"].items()}
        self._waited, self._retried = bool(m["waited"]), bool(m["retried"])
        self._waiting = set(m["waiting"])
        self._seen = {(int(b), tuple((w[0], w[1]) for w in writes),
                       frozenset((x[0], x[1]) for x in wait),
                       frozenset((u, (o[0], o[1])) for u, o in tried))
                      for b, writes, wait, tried in m["seen"]}

    def _new_round(self, n: int, *, forget: bool) -> None:
        self._start = n
        self.cluster.own_writes.clear()
        self._tried = {}
        self._tried_at = {}
        self._waited = bool(len(self.scheduler.waiting))
        if forget:  # a change: the rounds before it say nothing of the cluster now
            self._seen.clear()


@dataclass(slots=True)
class Step:
    busy: bool  # the scheduler had something to do
    idle: bool  # a round has just completed idle


class RunLoop:
    """Drives ``scheduler`` on ``clock`` with ``cluster``'s ``timeline``."""

    def __init__(self, cluster: Cluster, scheduler: Scheduler, clock: VirtualClock,
                 timeline: Timeline) -> None:
        self.cluster = cluster
        self.scheduler = scheduler
        self.clock = clock
        self.timeline = timeline
        self.rounds = Rounds(scheduler, cluster)
        self.rounds.recorder, scheduler.recorder = scheduler.recorder, self.rounds
        scheduler.step_sharing = self
        self.series: Ticked | None = None
        # a controller looping on its own period (None: none); when it last ran, the change
        # count it left, and the time it asked to run again by
        self.periodic: PeriodicController | None = None
        self._periodic_last: float | None = None
        self._periodic_seen = -1
        self._periodic_want: float | None = None
        # where a run cut by ``until`` stopped: the wake-up it was about to move to, or
        # whether it was over (``--state-out``); a restored run starts by moving there
        self.wakeup: float | None = None
        self.ended = False
        self._resume: float | None = None
        self._skip = False  # restored from a run that was over: its next run does nothing

    def restore(self, memory: dict[str, Any], wakeup: float | None) -> None:
        """Continue a run a checkpoint stopped (``resume``): the end rule's memory, and
        the wake-up it was about to move to (None: it was over, or had nothing to wait
        for)."""
        self.rounds.restore(memory)
        self.ended = self._skip = bool(memory.get("ended"))
        self._resume = wakeup

    def deliver_due(self) -> None:
        now = self.clock.now()
        timeline, deliver = self.timeline, self.cluster.deliver
        while (event := timeline.pop_due(now)) is not None:
            deliver(event)

    def periodic_due(self) -> float | None:
        """When the periodic controller runs next (on its grid of ``interval``), or None."""
        p = self.periodic
        if p is None:
            return None
        last = self._periodic_last
        if last is None:
            return self.clock.now()
        want = self._periodic_want
        if self.cluster.changes != self._periodic_seen:
            want = last + p.interval if want is None else min(want, last + p.interval)
        if want is None:
            return None
        # a change seen only now (the clock jumped to it) waits for the grid's next point
        want = max(want, self.clock.now())
        return last + max(1, math.ceil((want - last) / p.interval - 1e-9)) * p.interval

    def _run_periodic(self) -> bool:
        """The periodic controller's loop, if due now; whether it ran."""
        due = self.periodic_due()
        now = self.clock.now()
        if due is None or due > now or self.periodic is None:
            return False
        self._periodic_want = self.periodic.run(now)
        self._periodic_last = now
        self._periodic_seen = self.cluster.changes
        return True

    def periodic_memory(self) -> dict[str, Any]:
        """The periodic controller's place on its grid and its own state (``--state-out``;
        ``restore_periodic`` takes it back)."""
        assert self.periodic is not None
        return {"last": self._periodic_last, "seen": self._periodic_seen,
                "want": self._periodic_want, "controller": self.periodic.memory()}

    def restore_periodic(self, memory: dict[str, Any]) -> None:
        assert self.periodic is not None
        last, want = memory["last"], memory["want"]
        self._periodic_last = None if last is None else float(last)
        self._periodic_seen = int(memory["seen"])
        self._periodic_want = None if want is None else float(want)
        self.periodic.restore(memory["controller"])

    def step(self) -> Step:
        """What is due delivered, then one scheduling step."""
        self.deliver_due()
        self.rounds.step_started()
        cluster = self.cluster
        cluster.in_step = True
        try:
            busy = self.scheduler.schedule_one()
        finally:
            cluster.in_step = False
        cluster.raise_violation()
        return Step(busy, self.rounds.step_done(busy))

    # StepSharing, for the scheduler: its steps at one virtual instant, nothing delivered
    # between them and the end rule with nothing to look at, are one step to the loop

    def first(self, qpi: QueuedPodInfo) -> int:
        """How many attempts, ``qpi``'s first, may join the step under way: none when the
        next step would deliver something first or the end rule would look at the round;
        else as many as come before the series' next sample, after its tick for the step
        that ends."""
        due = self.timeline.next_time()
        if (due is not None and due <= self.clock.now()) or not self.rounds.steps_on(qpi.uid):
            return 0
        series = self.series
        if series is None:
            return _UNBOUNDED
        series.tick()
        return 1 + series.quiet_ticks()

    def fresh(self, uid: str) -> bool:
        return self.rounds.fresh(uid)

    def joined(self, n: int) -> None:
        if self.series is not None:
            self.series.skip(n)

    def over(self, step: Step) -> bool:
        """The end rule's verdict: an idle round, nothing on the timeline and no periodic
        controller's loop to come."""
        return step.idle and not self.timeline and self.periodic_due() is None

    def run(self, progress: Callable[[int, int], None] | None = None, *,
            until: float | None = None) -> None:
        """Until the run is over, or (``until``) the next wake-up is past that virtual time.
        ``progress(bindings so far, events at the start)`` is called as bindings are made."""
        total = len(self.timeline)
        series = self.series
        bound = 0
        if self._skip:
            self._skip = False
            return
        self.ended = False
        resume, self._resume = self._resume, None
        if resume is not None and not self._move_to(resume, until):
            return
        while True:
            step = self.step()
            if series is not None:
                series.tick()
            if self.over(step):
                self.ended = True
                break
            if step.busy and not step.idle:
                if progress is not None:
                    n = self.cluster.bound_count
                    if n != bound:
                        bound = n
                        progress(n, total)
                continue
            # the periodic controller sees the instant as the scheduler left it: a node
            # that has just joined has taken the pods it can before the autoscaler looks
            if self.periodic is not None and self._run_periodic():
                continue
            t_next = self.next_wakeup()
            if t_next is None:
                self.ended = True
                break
            if not self._move_to(t_next, until):
                break

    def _move_to(self, t_next: float, until: float | None) -> bool:
        """The clock to the next wake-up and the queue's flushes; False (the clock at
        ``until``) when that is past ``until``."""
        if until is not None and t_next > until:
            self.clock.advance_to(max(until, self.clock.now()))
            self.wakeup = t_next
            return False
        self.wakeup = None
        if self.series is not None and t_next > self.clock.now():
            self.series.tick()  # the state just before the clock moves on
        self.clock.advance_to(t_next)
        queue = self.scheduler.queue
        queue.flush_backoff_completed()
        queue.flush_unschedulable_pods_leftover()
        return True

    def next_wakeup(self) -> float | None:
        """When something can next happen: a timed event, a backoff expiring, a Permit
        deadline. Pods left unschedulable are retried (after 5 minutes) only while other
        events are still due."""
        now = self.clock.now()
        sched = self.scheduler
        head = self.timeline.next_time()
        periodic = self.periodic_due()
        if periodic is not None and (head is None or periodic < head):
            head = max(periodic, now)
        candidates = [] if head is None else [head]
        expiry = sched.queue.next_backoff_expiry()
        if expiry is not None:
            candidates.append(max(expiry, now))
        deadline = sched.next_waiting_deadline()
        if deadline is not None:
            candidates.append(max(deadline, now))
        if not candidates:
            return None
        t = min(candidates)
        if head is not None:
            leftover = sched.queue.next_unschedulable_timeout()
            if leftover is not None and leftover < t:
                t = max(leftover, now)
        if t <= now and (head is None or head > now):
            # a backoff that is already over: move on a tick so flushes see it expired
            t = now + 1.0
        return t
