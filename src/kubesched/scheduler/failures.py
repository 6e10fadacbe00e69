"""Failed attempts replayed: a pod identical to one that just failed, over the same cluster,
fails the same way, so its attempt is the first one's outcome again instead of its
PreFilter, Filter over every node and PostFilter.

Identical: the same profile, namespace, priority and preemption policy, no nominated node,
and the same PreFilter/Filter signature (``Framework.filter_signature``). The same
cluster: the cache's generation and the object events the scheduler heard are those of the
first attempt, and no pod is nominated anywhere (the filters count nominated pods).

Kept: a FitError whose PostFilter found no node to nominate (upstream's "no preemption
victims" and "preemption is not helpful" answers: nothing is evicted). Replayed: what the
failure does to its pod (``Failed``: its rejecting plugins, message, event and condition),
the number of nodes judged, the start index's move, the OpportunisticBatching bookkeeping,
PostFilter's answer and its draws from the scheduler's random generator (with the same
arguments: the preemption's offset, which orders a dry run whose answer, with no
candidate, does not depend on it). Not used with extenders, metrics (they time the
plugins), or PostFilter plugins other than the in-tree ones that act only on success.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.api.types import Pod, PodCondition
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.scheduler.schedule_one import ScheduleOne as Scheduler

# PostFilter plugins whose unsuccessful answers change nothing (DefaultPreemption evicts and
# DynamicResources deallocates only when they succeed) and read of the pod only what the
# key holds.
REPLAYABLE_POST_FILTERS = frozenset({"DefaultPreemption", "DynamicResources"})

Draw = tuple[str, tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Failed:
    """What a failure does to the pod it happens to, worked out once from its status or
    FitError (``ScheduleOne.handle_scheduling_failure``): a failure replayed does it
    again."""

    rejected: bool  # Unschedulable, not SchedulerError
    unschedulable: frozenset[str] | None  # the pod's rejecting plugins (None: as popped)
    pending: frozenset[str] | None
    message: str
    event_message: str  # the FailedScheduling event's (cut to the events' limit)
    condition: PodCondition  # PodScheduled False


@dataclass
class Failure:
    """What one failed attempt did, to do again."""

    failed: Failed
    evaluated: int  # nodes the scan judged (the decision record's)
    next_start: int  # next_start_node_index after the scan
    hinted: bool  # whether OpportunisticBatching was asked for a hint
    post: tuple[str | None, Status] | None = None  # PostFilter's answer, if any ran
    draws: list[Draw] = field(default_factory=list)


class _RecordingRandom:
    """The scheduler's generator, with the calls made on it recorded."""

    def __init__(self, rng: Any, draws: list[Draw]) -> None:
        self._rng = rng
        self._draws = draws

    def __getattr__(self, name: str) -> Callable[..., Any]:
        fn = getattr(self._rng, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self._draws.append((name, args, kwargs))
            return fn(*args, **kwargs)

        return call


@dataclass
class Attempt:
    """A scheduling attempt that may be kept or replayed: its profile, its pod and the
    start index it began at (signed only when a failure is kept for this cluster or this
    attempt failed: most successful cycles never need the pod's signature)."""

    fwk: Framework
    pod: Pod
    start: int


class FailureMemo:
    """The failures kept for the cluster as it is now (all forgotten when it changes)."""

    def __init__(self) -> None:
        self._version: tuple[int, int] | None = None
        self._failures: dict[Hashable, Failure] = {}
        self._profiles_replayable: dict[Framework, bool] = {}

    def begin(self, sched: Scheduler, fwk: Framework, pod: Pod, start: int | None = None
              ) -> Attempt | None:
        """The attempt (its scan starting at ``start``, by default where the scheduler's
        next one does), or None when it may not be kept or replayed."""
        if (sched.observer is not None or fwk.observer is not None or sched.extenders
                or pod.status.nominated_node_name or sched.queue.nominator.node_of
                or not self._replayable(fwk)):
            return None
        version = (sched.cache.generation, sched.world_changes)
        if version != self._version:
            self._version = version
            self._failures.clear()
        return Attempt(fwk, pod, sched.next_start_node_index if start is None else start)

    def _replayable(self, fwk: Framework) -> bool:
        """Whether every PostFilter plugin of ``fwk`` is one whose failures are replayed."""
        ok = self._profiles_replayable.get(fwk)
        if ok is None:
            ok = self._profiles_replayable[fwk] = all(
                p.name in REPLAYABLE_POST_FILTERS for p in fwk.post_filter)
        return ok

    @staticmethod
    def _key(fwk: Framework, pod: Pod, start: int) -> Hashable | None:
        sig = fwk.filter_signature(pod)
        if sig is None:
            return None
        return (fwk.profile_name, sig, pod.namespace, pod.priority,
                pod.spec.preemption_policy, start)

    def _signed(self, attempt: Attempt) -> Hashable | None:
        return self._key(attempt.fwk, attempt.pod, attempt.start)

    def recall(self, attempt: Attempt) -> Failure | None:
        if not self._failures:  # none kept for this cluster: no need to sign the pod
            return None
        key = self._signed(attempt)
        return self._failures.get(key) if key is not None else None

    def recall_next(self, fwk: Framework, pod: Pod, start: int) -> Failure | None:
        """``begin`` then ``recall`` for a pod attempted right after one that replayed a
        failure, in the same step (its scan starting at ``start``): what ``begin`` reads of
        the scheduler and the cluster is as it was for that one."""
        if pod.status.nominated_node_name or fwk.observer is not None \
                or not self._replayable(fwk):
            return None
        key = self._key(fwk, pod, start)
        return self._failures.get(key) if key is not None else None

    def keep(self, sched: Scheduler, attempt: Attempt, failure: Failure) -> None:
        """``failure`` for ``attempt`` (from ``begin``), unless the attempt changed the
        cluster."""
        if (sched.cache.generation, sched.world_changes) == self._version:
            key = self._signed(attempt)
            if key is not None:
                self._failures[key] = failure

    @staticmethod
    @contextmanager
    def recording(sched: Scheduler, draws: list[Draw]) -> Iterator[None]:
        """The scheduler's generator recording into ``draws`` meanwhile."""
        rng = sched.handle.rng
        sched.handle.rng = _RecordingRandom(rng, draws)  # type: ignore[assignment]
        try:
            yield
        finally:
            sched.handle.rng = rng

    @staticmethod
    @contextmanager
    def watching_hints(fwk: Framework, calls: list[int]) -> Iterator[None]:
        """OpportunisticBatching's ``get_node_hint`` counting its calls into ``calls``."""
        batch = fwk.batch
        real = batch.get_node_hint

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return real(*args, **kwargs)

        setattr(batch, "get_node_hint", counted)  # noqa: B010 (a method, for a while)
        try:
            yield
        finally:
            delattr(batch, "get_node_hint")

    @staticmethod
    def redraw(sched: Scheduler, failure: Failure) -> None:
        rng = sched.handle.rng
        for name, args, kwargs in failure.draws:
            getattr(rng, name)(*args, **kwargs)
