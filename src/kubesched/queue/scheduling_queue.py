"""The scheduling queue (upstream ``pkg/scheduler/backend/queue``, v1.35, with
SchedulerQueueingHints and SchedulerPopFromBackoffQ on).

Four places a pending pod can be:

* **activeQ** — a heap in QueueSort order (the first profile's QueueSort plugin; upstream
  requires all profiles to share it), ties broken by ``QueuedPodInfo.seq``;
* **podBackoffQ** — pods rejected by plugins that are still backing off, ordered by backoff
  expiration, then (same one-second window) in activeQ order. ``pop`` takes from here when
  activeQ is empty (PopFromBackoffQ), even before the backoff expired;
* **podErrorBackoffQ** — pods that failed with an error (no rejecting plugin); only a flush
  moves them on;
* **unschedulable pool** — pods waiting for a cluster event, including *gated* pods (rejected
  by a PreEnqueue plugin).

Popped pods are *in flight* until ``done`` (or ``add_unschedulable_if_not_present``);
cluster events that some plugin registered and that arrive meanwhile are recorded and replayed
through the rejecting plugins' queueing hints when the pod comes back.

Everything is synchronous and deterministic: the queue reads time only from its Clock and
moves pods between sub-queues only when a method is called (``flush_backoff_completed`` and
``flush_unschedulable_pods_leftover`` are upstream's periodic flushes, called by the owner).

Deliberate details (see also ``docs/``):

* ``seq`` is renewed whenever ``timestamp`` is (add, re-add after a failure): together they act
  as a clock finer than the virtual one, so pods queued at the same virtual time keep the order
  in which they were queued, as nanosecond timestamps do upstream.
* Without PopFromBackoffQ (``pop_from_backoff=False``) a pod stops backing off when
  ``now >= expiration`` (upstream ≤ v1.32's rule; v1.33+ keeps it one instant longer, which a
  virtual clock would hit exactly).
* Pods are keyed by UID (upstream keys the heaps by namespace/name).
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kubesched.api.types import Node, Pod
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    FORCE_ACTIVATE,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    QueueingHint,
    Resource,
)
from kubesched.framework.types import QueuedPodInfo
from kubesched.queue.affinity import any_required_affinity_term_matches
from kubesched.queue.cluster_events import (
    is_wildcard,
    match_any_cluster_event,
    match_cluster_events,
    pod_scheduling_properties_change,
)
from kubesched.queue.heap import PodHeap
from kubesched.queue.node_batches import (
    hints_identity_free,
    identity_labels,
    node_signature,
    selects_on_identity,
)
from kubesched.queue.nominator import Nominator, PodLister

_NS = 1_000_000_000
_WINDOW_NS = _NS  # backoffQOrderingWindowDuration = 1s

POD_TOPOLOGY_SPREAD = "PodTopologySpread"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Where a pod is (``SchedulingQueue.where``).
ACTIVE = "active"
BACKOFF = "backoff"
ERROR_BACKOFF = "error_backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
IN_FLIGHT = "in_flight"

# Event labels upstream passes to moveToActiveQ (nominations are refreshed for the first two).
EVENT_POD_ADD = "UnschedulablePodAdd"
EVENT_POD_UPDATE = "UnschedulablePodUpdate"
EVENT_FAILURE = "ScheduleAttemptFailure"
EVENT_BACKOFF_COMPLETE = "BackoffComplete"
EVENT_FORCE_ACTIVATE = "ForceActivate"

HintFn = Callable[[Any, Any, Any], Any]
PreEnqueueCheck = Callable[[Pod], bool]


class QueueingStrategy(IntEnum):
    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


@dataclass(slots=True, frozen=True)
class HintEntry:
    plugin: str
    fn: HintFn


# A profile's hint entries covering one event, in hint-map order, and their plugins.
_Hints = tuple[tuple[HintEntry, ...], frozenset[str]]


@dataclass(slots=True, frozen=True)
class InFlightEvent:
    event: ClusterEvent
    old_obj: Any
    new_obj: Any




def _leftover_movable(qpi: QueuedPodInfo) -> bool:
    """Whether the UnschedulableTimeout event can move ``qpi`` out of the pool."""
    return not qpi.gated or match_any_cluster_event(UNSCHEDULABLE_TIMEOUT,
                                                    qpi.gating_plugin_events)


def _always(_qpi: QueuedPodInfo) -> bool:
    return True


def _default_hint(_pod: Any, _old: Any, _new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def _to_ns(t: float) -> int:
    return round(t * _NS)


def _truncate_ns(t_ns: int) -> int:
    return (t_ns // _WINDOW_NS) * _WINDOW_NS


class _Pool(dict[str, QueuedPodInfo]):
    """The unschedulable pool (uid -> pod, in the order they came): a dict whose
    ``version`` moves at every change, and which counts its pods by the plugins that
    rejected them (per profile), for ``SchedulingQueue._may_move``. A pod changed in place
    while in the pool is counted again with ``recount``. ``oldest`` answers from a heap of
    the pods by timestamp (a pod's timestamp is set before it enters the pool, never while
    in it), where the flushes of every simulation step scanned the whole pool."""

    version = 0
    _heap_slack = 64

    def __init__(self, profiles: Iterable[str]) -> None:
        super().__init__()
        self._profiles = frozenset(profiles)
        # (profile, plugin) -> pods rejected by it; pods any event may move (gated, no
        # rejecting plugin, no known profile); what each pod was counted as
        self.by_plugin: dict[tuple[str, str], int] = {}
        self.special = 0
        self._counted: dict[str, tuple[tuple[tuple[str, str], ...], bool]] = {}
        self._keys: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
        # (timestamp, insertion, uid, pod) per insertion; entries of pods gone, replaced or
        # back with a new timestamp (the same pod object, after another failure) are dropped
        # when they come to the top, and all at once when they outnumber the pool
        self._by_time: list[tuple[float, int, str, QueuedPodInfo]] = []
        self._inserted = itertools.count()

    def oldest(self) -> QueuedPodInfo | None:
        """A pod of the pool with the smallest timestamp (None: the pool is empty)."""
        heap = self._by_time
        while heap:
            stamp, _, key, qpi = heap[0]
            if self.get(key) is qpi and qpi.timestamp == stamp:
                return qpi
            heapq.heappop(heap)
        return None

    def _uncount(self, key: str) -> None:
        old = self._counted.pop(key, None)
        if old is not None:
            by = self.by_plugin
            for k in old[0]:
                by[k] -= 1
            self.special -= old[1]

    def recount(self, qpi: QueuedPodInfo) -> None:
        self.version += 1
        if self.get(qpi.uid) is qpi:
            self._count((qpi,))

    def __setitem__(self, key: str, value: QueuedPodInfo) -> None:
        if key != value.uid:  # (the pool is keyed by uid: ``add_all`` reads it off the pod)
            raise KeyError(f"pod {value.pod.key} put in the pool under {key!r}")
        self.add_all((value,))

    def add_all(self, qpis: Sequence[QueuedPodInfo]) -> None:
        """``self[qpi.uid] = qpi`` for each of ``qpis`` in turn."""
        if not qpis:
            return
        self.version += 1
        inserted = self._inserted
        for qpi in qpis:
            dict.__setitem__(self, qpi.uid, qpi)
        self._count(qpis)
        self._by_time_push([(qpi.timestamp, next(inserted), qpi.uid, qpi) for qpi in qpis])

    def _count(self, qpis: Sequence[QueuedPodInfo]) -> None:
        """Each of ``qpis`` counted as it is now (its old count taken back)."""
        by, keys_of, counted, profiles = self.by_plugin, self._keys, self._counted, self._profiles
        # (most pods of a pool share a few plugin sets, and a step's failures come with the
        # same one in a row: their keys are made once, and looked up once per run)
        last: tuple[str, set[str]] | None = None
        keys: tuple[tuple[str, str], ...] = ()
        special = False
        for qpi in qpis:
            key = qpi.uid
            if key in counted:  # (mostly not: it was not in the pool)
                self._uncount(key)
            name = qpi.pod.spec.scheduler_name
            pending = qpi.pending_plugins
            plugins = qpi.unschedulable_plugins | pending if pending else qpi.unschedulable_plugins
            if last is None or last[0] != name or last[1] != plugins:
                last = (name, plugins)
                memo = (name, *plugins)
                got = keys_of.get(memo)
                if got is None:
                    got = keys_of[memo] = tuple((name, p) for p in plugins)
                keys = got
                special = not plugins or name not in profiles
            for k in keys:
                by[k] = by.get(k, 0) + 1
            gated = special or bool(qpi.gating_plugin)
            self.special += gated
            counted[key] = (keys, gated)

    def _by_time_push(self, entries: Iterable[tuple[float, int, str, QueuedPodInfo]]) -> None:
        heap = self._by_time
        if len(heap) > 2 * len(self) + self._heap_slack:
            heap[:] = [e for e in heap if self.get(e[2]) is e[3] and e[3].timestamp == e[0]]
            heapq.heapify(heap)
        for entry in entries:
            heapq.heappush(heap, entry)

    def __delitem__(self, key: str) -> None:
        self.version += 1
        super().__delitem__(key)
        self._uncount(key)

    def pop(self, key: str, *default: Any) -> Any:
        if default and key not in self:  # nothing changes: the pool's version stays
            return default[0]
        self.version += 1
        got = dict.pop(self, key, *default)
        self._uncount(key)
        return got

    def remove_all(self, keys: Iterable[str]) -> None:
        """``pop(key, None)`` for each of ``keys`` (some)."""
        self.version += 1
        for key in keys:
            if dict.pop(self, key, None) is not None:
                self._uncount(key)

    def setdefault(self, key: str, default: QueuedPodInfo) -> QueuedPodInfo:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        self.version += 1
        super().clear()
        self.by_plugin.clear()
        self.special = 0
        self._counted.clear()
        self._by_time.clear()

    def none_rejected_by(self, plugins: Mapping[str, frozenset[str]]) -> bool:
        """Whether no pod is special and none was rejected by ``plugins`` (per profile)."""
        if self.special:
            return False
        by = self.by_plugin
        return not any(by.get((name, p)) for name, ps in plugins.items() for p in ps)


class _LessKey:
    """Heap key comparing with the QueueSort plugin's ``less``, then ``seq``."""

    __slots__ = ("less", "qpi")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]):
        self.qpi = qpi
        self.less = less

    def __lt__(self, other: _LessKey) -> bool:
        a, b = self.qpi, other.qpi
        if self.less(a, b):
            return True
        if self.less(b, a):
            return False
        return a.seq < b.seq


def build_queueing_hint_map(extensions: Mapping[str, Iterable[Any]]
                            ) -> dict[ClusterEvent, list[HintEntry]]:
    """One profile's event → [(plugin, hint)] map, as upstream's ``buildQueueingHintMap``:
    a missing hint always says Queue; a plugin registering Node/Add without
    Node/UpdateNodeTaint also gets Node/UpdateNodeTaint with the default hint."""
    hint_map: dict[ClusterEvent, list[HintEntry]] = {}
    for plugin, events in extensions.items():
        events = list(events or ())
        if not events:
            continue
        node_added = node_taint = False
        for ewh in events:
            ev: ClusterEvent = ewh.event
            fn = ewh.hint if ewh.hint is not None else _default_hint
            if ev.resource == Resource.NODE:
                node_added |= bool(ev.action & ActionType.ADD)
                node_taint |= bool(ev.action & ActionType.UPDATE_NODE_TAINT)
            hint_map.setdefault(ev, []).append(HintEntry(plugin, fn))
        if node_added and not node_taint:
            ev = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_TAINT)
            hint_map.setdefault(ev, []).append(HintEntry(plugin, _default_hint))
    return hint_map


class SchedulingQueue:
    def __init__(self, frameworks: Mapping[str, Any], clock: Any, *,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_in_unschedulable: float = 300.0, pop_from_backoff: bool = True,
                 leftover_flush_interval: float = 30.0,
                 namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
                 pod_lister: PodLister | None = None,
                 nominate_gated: bool = True) -> None:
        """``frameworks`` by scheduler name. ``nominate_gated`` (v1.37, kubernetes#139057): a
        pod added or updated records its nomination whether or not PreEnqueue gates it, so
        a gated pod's nominatedNodeName holds its space against lower-priority pods; before,
        only pods that reached activeQ were nominated. ``leftover_flush_interval``: upstream
        runs the unschedulable-leftover flush every 30 s; the flush here acts as of the last
        such tick (multiples of the interval from time 0; 0 means "now"). ``namespace_labels(ns)``
        gives a namespace's labels for affinity namespace selectors (default: just the
        ``kubernetes.io/metadata.name`` label). ``pod_lister(pod)`` returns the latest pod or
        None when it no longer exists; the nominator then skips deleted or bound pods, as
        upstream's podLister check."""
        if not frameworks:
            raise ValueError("the scheduling queue needs at least one profile")
        self.frameworks = dict(frameworks)
        self.clock = clock
        self.pop_from_backoff = pop_from_backoff
        self.nominate_gated = nominate_gated
        self.max_in_unschedulable = max_in_unschedulable
        self._leftover_ns = _to_ns(leftover_flush_interval)
        self._initial_ns = _to_ns(initial_backoff)
        self._max_ns = _to_ns(max_backoff)
        self._ns_labels = namespace_labels or (lambda ns: {NAMESPACE_NAME_LABEL: ns})

        first = next(iter(self.frameworks.values()))
        self._queue_sort = first.queue_sort
        self._less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] = first.less
        self._use_sort_key: bool | None = None

        self.hint_maps: dict[str, dict[ClusterEvent, list[HintEntry]]] = {
            name: build_queueing_hint_map(fw.enqueue_extensions())
            for name, fw in self.frameworks.items()}
        self.plugin_events: dict[str, list[ClusterEvent]] = {}
        for hm in self.hint_maps.values():
            for ev, entries in hm.items():
                for e in entries:
                    self.plugin_events.setdefault(e.plugin, []).append(ev)

        self._interest: dict[ClusterEvent, bool] = {}
        self._event_hints: dict[ClusterEvent, dict[str, _Hints]] = {}

        self._active = PodHeap(self._active_key)
        self._backoff = PodHeap(self._backoff_key)
        self._error_backoff = PodHeap(self._backoff_key)
        self._unschedulable = _Pool(self.hint_maps)
        self._may_move_memo: dict[ClusterEvent, tuple[int, list[QueuedPodInfo]]] = {}
        self.nominator = Nominator(pod_lister)

        self.scheduling_cycle = 0
        self._seq = itertools.count(1)
        # in flight: a log of pod markers (uid) and InFlightEvents; None marks a removed pod
        self._in_flight: dict[str, tuple[int, Pod]] = {}
        self._log: deque[Any] = deque()
        self._log_base = 0
        # where in the log (counted from its first entry ever) the newest event is: a pod
        # marked after it has missed none (most failures, which then need no scan)
        self._last_event = -1

    # ------------------------------------------------------------------ keys & backoff

    def _sort_key(self, qpi: QueuedPodInfo) -> Any:
        if self._use_sort_key is None:
            self._use_sort_key = self._queue_sort.sort_key(qpi) is not None
        if self._use_sort_key:
            k = self._queue_sort.sort_key(qpi)
            if k is None:
                raise RuntimeError("QueueSort sort_key returned None after returning keys")
            return (k, qpi.seq)
        return _LessKey(qpi, self._less)

    def _active_key(self, qpi: QueuedPodInfo) -> Any:
        return self._sort_key(qpi)

    def _backoff_key(self, qpi: QueuedPodInfo) -> Any:
        exp = self._backoff_time_ns(qpi)
        return (-1 if exp is None else exp, self._sort_key(qpi))

    def backoff_duration(self, count: int) -> float:
        """``initial << (count-1)`` capped at the maximum; 0 for count 0 (seconds)."""
        return self._backoff_duration_ns(count) / _NS

    def _backoff_duration_ns(self, count: int) -> int:
        if count <= 0:
            return 0
        shift = count - 1
        if self._initial_ns > (self._max_ns >> shift):
            return self._max_ns
        return self._initial_ns << shift

    def _backoff_time_ns(self, qpi: QueuedPodInfo) -> int | None:
        """``getBackoffTime``: None is "no backoff" (Go's zero time); cached in
        ``qpi.backoff_expiration`` (seconds) and ``backoff_expiration_ns`` until the next
        failure."""
        if self._max_ns == 0:
            return None
        count = qpi.consecutive_errors_count or qpi.unschedulable_count
        if count == 0:
            return None
        got = qpi.backoff_expiration_ns
        if got is not None:
            return got
        if qpi.backoff_expiration is None:
            exp = _to_ns(qpi.timestamp) + self._backoff_duration_ns(count)
            if self.pop_from_backoff:
                exp = _truncate_ns(exp)
            qpi.backoff_expiration = exp / _NS
        got = qpi.backoff_expiration_ns = _to_ns(qpi.backoff_expiration)
        return got

    def is_backing_off(self, qpi: QueuedPodInfo, now_ns: int | None = None) -> bool:
        """With PopFromBackoffQ: while ``!expiration.Before(truncate(now, 1s))``
        (``now_ns``: the clock's time in ns, when the caller has it)."""
        exp = self._backoff_time_ns(qpi)
        if exp is None:
            return False
        now = _to_ns(self.clock.now()) if now_ns is None else now_ns
        if self.pop_from_backoff:
            return exp >= _truncate_ns(now)
        return exp > now

    def _flushable_at_ns(self, qpi: QueuedPodInfo) -> int:
        exp = self._backoff_time_ns(qpi)
        if exp is None:  # no backoff at all: flushable now
            return _to_ns(self.clock.now())
        return exp + _WINDOW_NS if self.pop_from_backoff else exp

    def next_backoff_expiry(self) -> float | None:
        """The earliest virtual time at which ``flush_backoff_completed`` moves a pod out of
        either backoff queue (with PopFromBackoffQ: one window after the truncated
        expiration, since a pod is backing off for the whole window its expiration falls
        in), or None when both are empty."""
        best: int | None = None
        for h in (self._backoff, self._error_backoff):
            head = h.peek()
            if head is not None:
                t = self._flushable_at_ns(head)
                best = t if best is None else min(best, t)
        return None if best is None else best / _NS

    # ------------------------------------------------------------------ PreEnqueue

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        fw = self.frameworks.get(qpi.pod.spec.scheduler_name)
        st = fw.run_pre_enqueue(qpi.pod) if fw is not None else None
        if st is None or st.is_success():
            if not qpi.gating_plugin:
                return  # (most requeues: nothing changes, nothing to count again)
            qpi.gating_plugin = ""
        else:
            plugin = st.plugin or "PreEnqueue"
            qpi.unschedulable_plugins.add(plugin)
            qpi.gating_plugin = plugin
            qpi.gating_plugin_events = tuple(self.plugin_events.get(plugin, ()))
        self._unschedulable.recount(qpi)  # it may be in the pool: its plugins changed

    # ------------------------------------------------------------------ moving pods

    def _move_to_active(self, qpi: QueuedPodInfo, event: str, from_backoff: bool = False
                        ) -> bool:
        """``moveToActiveQ``: PreEnqueue (skipped for pods leaving the backoffQ with
        PopFromBackoffQ), then activeQ, or the unschedulable pool when gated."""
        if not (self.pop_from_backoff and from_backoff):
            self._run_pre_enqueue(qpi)
        uid = qpi.uid
        nominate = event in (EVENT_POD_ADD, EVENT_POD_UPDATE)
        if nominate and self.nominate_gated:
            self.nominator.add(qpi.pod, None)  # before the gate (v1.37)
            nominate = False
        if qpi.gated:
            if (uid in self._active or uid in self._backoff or uid in self._error_backoff
                    or uid in self._unschedulable):
                return False
            self._unschedulable[uid] = qpi
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.clock.now()
        self._unschedulable.pop(uid, None)
        self._backoff.delete(uid)
        self._error_backoff.delete(uid)
        self._active.add_or_update(qpi)
        if nominate:
            self.nominator.add(qpi.pod, None)
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, event: str,
                         later: list[QueuedPodInfo] | None = None) -> bool:
        """``moveToBackoffQ``: with PopFromBackoffQ PreEnqueue runs here (a gated pod goes
        to the unschedulable pool instead). ``later``: backoffQ's new pods, for the caller
        to add together."""
        uid = qpi.uid
        if self.pop_from_backoff:
            self._run_pre_enqueue(qpi)
            if qpi.gated:
                self._unschedulable.setdefault(uid, qpi)
                return False
        if uid in self._unschedulable:
            self._unschedulable.pop(uid)
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            self._backoff.delete(uid)
            self._error_backoff.add_or_update(qpi)
        else:
            if uid in self._error_backoff:
                self._error_backoff.delete(uid)
            if later is None:
                self._backoff.add_or_update(qpi)
            else:
                later.append(qpi)
        return True

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, event: str,
                 now_ns: int | None = None, later: list[QueuedPodInfo] | None = None) -> str:
        """``requeuePodWithQueueingStrategy``; returns where the pod went (``now_ns``,
        ``later``: the clock's time, and backoffQ's new pods kept for the caller to add,
        when it moves many)."""
        if strategy == QueueingStrategy.SKIP:
            self._unschedulable[qpi.uid] = qpi
            return UNSCHEDULABLE
        if strategy == QueueingStrategy.AFTER_BACKOFF and self.is_backing_off(qpi, now_ns):
            return BACKOFF if self._move_to_backoff(qpi, event, later) else UNSCHEDULABLE
        return ACTIVE if self._move_to_active(qpi, event) else UNSCHEDULABLE

    # ------------------------------------------------------------------ hints

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Some plugin of some profile registered an event covering ``event``."""
        if is_wildcard(event):
            return True
        hit = self._interest.get(event)
        if hit is None:
            hit = self._interest[event] = any(
                match_cluster_events(reg, event) for hm in self.hint_maps.values() for reg in hm)
        return hit

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                         by_profile: Mapping[str, _Hints] | None = None) -> QueueingStrategy:
        """``isPodWorthRequeuing``; ``by_profile``: ``_hints_by_profile(event)``, when the
        caller has it."""
        unschedulable, pending = qpi.unschedulable_plugins, qpi.pending_plugins
        if not unschedulable and not pending:
            return QueueingStrategy.AFTER_BACKOFF
        if is_wildcard(event):
            if new is not None and (not isinstance(new, Pod) or new.uid != qpi.uid):
                return QueueingStrategy.SKIP  # a wildcard event meant for another pod
            return QueueingStrategy.AFTER_BACKOFF
        if by_profile is None:
            by_profile = self._hints_by_profile(event)
        hints = by_profile.get(qpi.pod.spec.scheduler_name)
        if hints is None:
            return QueueingStrategy.AFTER_BACKOFF
        entries, plugins = hints
        if plugins.isdisjoint(unschedulable) and plugins.isdisjoint(pending):
            return QueueingStrategy.SKIP  # no rejecting plugin registered the event
        rejectors = unschedulable | pending
        strategy = QueueingStrategy.SKIP
        for e in entries:
            if e.plugin not in rejectors:
                continue
            try:
                hint = e.fn(qpi.pod, old, new)
            except Exception:  # a failing hint must not strand the pod
                hint = QueueingHint.QUEUE
            if hint == QueueingHint.SKIP:
                continue
            if e.plugin in pending:
                return QueueingStrategy.IMMEDIATELY
            if not pending:
                return QueueingStrategy.AFTER_BACKOFF
            strategy = QueueingStrategy.AFTER_BACKOFF
        return strategy

    def _hints_by_profile(self, event: ClusterEvent) -> dict[str, _Hints]:
        """Per profile, the hint entries of its registered events that cover ``event``, in
        the hint map's order, and their plugins. Kept per event: an event is checked
        against every unschedulable pod."""
        got = self._event_hints.get(event)
        if got is None:
            got = self._event_hints[event] = {}
            for name, hint_map in self.hint_maps.items():
                entries = tuple(e for reg, es in hint_map.items()
                                if match_cluster_events(reg, event) for e in es)
                got[name] = (entries, frozenset(e.plugin for e in entries))
        return got

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any,
                   checked: bool = False) -> None:
        """``movePodsToActiveOrBackoffQueue``."""
        if not checked and not self.is_event_of_interest(event):
            return
        if not pods:
            self._add_event_if_any_in_flight(event, old, new)
            return
        by_profile = self._hints_by_profile(event)
        skip = QueueingStrategy.SKIP
        moving: list[tuple[QueuedPodInfo, QueueingStrategy]] = []
        for qpi in pods:
            if qpi.gating_plugin and not match_any_cluster_event(event,
                                                                 qpi.gating_plugin_events):
                continue
            strategy = self._worth_requeuing(qpi, event, old, new, by_profile)
            if strategy != skip:
                moving.append((qpi, strategy))
        # Every hint asked first, then the moves: a hint reads its pod and the objects,
        # never where the queue holds other pods. The pool gives up the moving pods at
        # once; a pod PreEnqueue gates comes back to its end, as it would one by one.
        if moving:
            self._unschedulable.remove_all([qpi.uid for qpi, _s in moving])
        label, now_ns = str(event), _to_ns(self.clock.now())
        later: list[QueuedPodInfo] = []
        for qpi, strategy in moving:
            self._requeue(qpi, strategy, label, now_ns, later)
        self._backoff.add_all(later)
        self._add_event_if_any_in_flight(event, old, new)

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None,
                                      new: Any = None,
                                      pre_check: PreEnqueueCheck | None = None) -> None:
        """``MoveAllToActiveOrBackoffQueue``: the unschedulable pods (passing ``pre_check``)
        that ``event`` may make schedulable move to activeQ or backoffQ."""
        if not self.is_event_of_interest(event):
            return
        pods = self._may_move(event)
        if pre_check is not None:
            pods = [q for q in pods if pre_check(q.pod)]
        self._move_pods(pods, event, old, new, checked=True)

    def _may_move(self, event: ClusterEvent) -> list[QueuedPodInfo]:
        """The pool's pods, in its order, less those ``_worth_requeuing`` skips whatever the
        objects: not gated, and no plugin that rejected them registered ``event``. Kept
        while the pool is unchanged: most events (a pod bound) concern none of its pods,
        and the pool can be large."""
        pool = self._unschedulable
        if not pool:
            return []
        got = self._may_move_memo.get(event)
        if got is not None and got[0] == pool.version:
            return got[1]
        if is_wildcard(event):
            pods = list(pool.values())
        else:
            by_profile = self._hints_by_profile(event)
            if pool.none_rejected_by({n: h[1] for n, h in by_profile.items()}):
                return []

            def may(q: QueuedPodInfo) -> bool:
                hints = by_profile.get(q.pod.spec.scheduler_name)
                u, p = q.unschedulable_plugins, q.pending_plugins
                return (q.gated or hints is None or not (u or p)
                        or not (hints[1].isdisjoint(u) and hints[1].isdisjoint(p)))

            pods = [q for q in pool.values() if may(q)]
        self._may_move_memo[event] = (pool.version, pods)
        return pods

    def move_all_after_nodes_added(self, nodes: Sequence[Node]) -> None:
        """A NodeAdd for each of ``nodes`` in turn, as upstream's handler sends them: the
        same pods move, in the same order, to the same places; but each pod's hints are
        asked once per group of nodes they cannot tell apart (``queue/node_batches.py``),
        not once per node, where the profiles' NodeAdd hints allow it."""
        event = NODE_ADD
        if not nodes or not self.is_event_of_interest(event):
            return
        by_profile = self._hints_by_profile(event)
        if len(nodes) == 1 or not all(
                hints_identity_free(e for e in entries if e.fn is not _default_hint)
                for entries, _plugins in by_profile.values()):
            for node in nodes:
                self.move_all_to_active_or_backoff(event, None, node)
            return
        by_signature: dict[Hashable, list[int]] = {}
        for k, node in enumerate(nodes):
            by_signature.setdefault(node_signature(node), []).append(k)
        # each group: its positions in ``nodes`` (ascending) and the labels naming a node
        groups = [(ks, identity_labels(nodes[ks[0]])) for ks in by_signature.values()]
        skip = QueueingStrategy.SKIP

        def first_move(qpi: QueuedPodInfo, start: int) -> tuple[int, QueueingStrategy] | None:
            """The first node from position ``start`` whose event moves ``qpi``, and how."""
            if qpi.gated and not match_any_cluster_event(event, qpi.gating_plugin_events):
                return None
            best: tuple[int, QueueingStrategy] | None = None
            for ks, labels in groups:
                i = bisect_left(ks, start)
                # a pod whose node affinity names a node is asked node by node
                asked = ks[i:] if selects_on_identity(qpi.pod, labels) else ks[i:i + 1]
                for k in asked:
                    if best is not None and k >= best[0]:
                        break
                    s = self._worth_requeuing(qpi, event, None, nodes[k], by_profile)
                    if s != skip:
                        best = (k, s)
                        break
            return best

        # Upstream's node events in order: the pods a node's event moves go in the pool's
        # order, and a pod PreEnqueue sends back to the pool (at its end) is asked again
        # from the next node on; a heap on (node, place in the pool) replays that.
        moves: list[tuple[int, int, QueuedPodInfo, QueueingStrategy]] = []
        place = itertools.count()
        for qpi in self._may_move(event):
            found = first_move(qpi, 0)
            n = next(place)
            if found is not None:
                moves.append((found[0], n, qpi, found[1]))
        heapq.heapify(moves)
        while moves:
            k, _n, qpi, strategy = heapq.heappop(moves)
            uid = qpi.uid
            self._unschedulable.pop(uid, None)
            self._requeue(qpi, strategy, str(event))
            if uid in self._unschedulable:
                found = first_move(qpi, k + 1)
                if found is not None:
                    heapq.heappush(moves, (found[0], next(place), qpi, found[1]))
        for node in nodes:
            self._add_event_if_any_in_flight(event, None, node)

    def _cross_topology_pods(self, pod: Pod) -> list[QueuedPodInfo]:
        """``getUnschedulablePodsWithCrossTopologyTerm``."""
        ns_labels = self._ns_labels(pod.namespace)
        def spread(qpi: QueuedPodInfo) -> bool:
            return (POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins
                    and pod.namespace == qpi.pod.namespace)

        return [q for q in self._unschedulable.values()
                if spread(q) or any_required_affinity_term_matches(q.pod, pod, ns_labels)]

    def assigned_pod_added(self, pod: Pod) -> None:
        """``AssignedPodAdded``: only pods whose required affinity terms match ``pod`` or that
        PodTopologySpread rejected in its namespace are considered. (v1.35's event handlers
        call ``move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)`` instead while
        queueing hints are on.)"""
        self._move_pods(self._cross_topology_pods(pod), ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod, event: ClusterEvent) -> None:
        """``AssignedPodUpdated``: a pure scale-down considers every unschedulable pod, any
        other update only the cross-topology ones."""
        scale_down = ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCALE_DOWN)
        if match_cluster_events(scale_down, event):
            self.move_all_to_active_or_backoff(event, old_pod, new_pod)
        else:
            self._move_pods(self._cross_topology_pods(new_pod), event, old_pod, new_pod)

    def assigned_pod_deleted(self, pod: Pod) -> None:
        """What upstream's handler does when a bound pod is deleted."""
        self.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    # ------------------------------------------------------------------ in flight

    def _add_event_if_any_in_flight(self, event: ClusterEvent, old: Any, new: Any) -> bool:
        if not self._in_flight:
            return False
        self._last_event = self._log_base + len(self._log)
        self._log.append(InFlightEvent(event, old, new))
        return True

    def _add_events_if_pod_in_flight(self, old: Any, new: Pod,
                                     events: Iterable[ClusterEvent]) -> bool:
        if new.uid not in self._in_flight:
            return False
        for ev in events:
            self._last_event = self._log_base + len(self._log)
            self._log.append(InFlightEvent(ev, old, new))
        return True

    def _events_for_pod(self, uid: str) -> list[InFlightEvent] | None:
        rec = self._in_flight.get(uid)
        if rec is None:
            return None
        if rec[0] > self._last_event:
            return []
        start = rec[0] - self._log_base + 1
        return [e for e in itertools.islice(self._log, start, None)
                if isinstance(e, InFlightEvent)]

    def done(self, uid: str) -> None:
        """End of in-flight for ``uid`` (upstream ``Done``); events nobody needs are pruned."""
        rec = self._in_flight.pop(uid, None)
        if rec is None:
            return
        log = self._log
        log[rec[0] - self._log_base] = None
        while log and (log[0] is None or isinstance(log[0], InFlightEvent)):  # (every cycle)
            log.popleft()
            self._log_base += 1

    def _done_all(self, uids: Iterable[str]) -> None:
        """``done`` for each of ``uids``."""
        in_flight, log, base = self._in_flight, self._log, self._log_base
        for uid in uids:
            rec = in_flight.pop(uid, None)
            if rec is not None:
                log[rec[0] - base] = None
        while log and (log[0] is None or isinstance(log[0], InFlightEvent)):
            log.popleft()
            self._log_base += 1

    def in_flight_pods(self) -> list[Pod]:
        return [p for _i, p in self._in_flight.values()]

    def in_flight_log(self) -> list[str | InFlightEvent]:
        """The in-flight log from its oldest entry still needed: pod markers (uids of the
        pods in flight) and the events since (``--state-out``; ``restore_in_flight``)."""
        return [e for e in self._log if e is not None]

    def restore_in_flight(self, log: Iterable[str | InFlightEvent],
                          pods: Mapping[str, Pod]) -> None:
        """The in-flight pods and the events they have missed, as ``in_flight_log`` gave
        them (``pods``: the pods in flight by uid)."""
        self._log.clear()
        self._in_flight.clear()
        self._log_base = 0
        self._last_event = -1
        for entry in log:
            if isinstance(entry, str):
                self._in_flight[entry] = (len(self._log), pods[entry])
            else:
                self._last_event = len(self._log)
            self._log.append(entry)

    def in_flight_events(self) -> list[Any]:
        """The in-flight log (pods and events), oldest first, for tests and debugging."""
        out: list[Any] = []
        for e in self._log:
            if e is None:
                continue
            out.append(e if isinstance(e, InFlightEvent) else self._in_flight[e][1])
        return out

    # ------------------------------------------------------------------ the API

    def _new_qpi(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod, timestamp=self.clock.now(), seq=next(self._seq))

    def add(self, pod: Pod) -> None:
        """A new pending pod: PreEnqueue, then activeQ or (gated) the unschedulable pool."""
        self._move_to_active(self._new_qpi(pod), EVENT_POD_ADD)

    def pop(self) -> QueuedPodInfo | None:
        """The head of activeQ; with PopFromBackoffQ and an empty activeQ, the head of the
        rejected pods' backoffQ (never the error backoffQ); None when there is nothing."""
        if not len(self._active) and not (self.pop_from_backoff and len(self._backoff)):
            return None  # (a loop idling at an empty queue asks often)
        got = self.pop_while(_always, 1)
        return got[0] if got else None

    def pop_while(self, take: Callable[[QueuedPodInfo], bool], limit: int | None = None
                  ) -> list[QueuedPodInfo]:
        """Pods as ``pop`` gives them one after another, each popped when ``take`` says
        yes to it as the head (at most ``limit``). (``take`` reads none of what popping a
        pod changes.)"""
        if limit is None:
            limit = len(self._active) + len(self._backoff)
        active, backoff = self._active, self._backoff if self.pop_from_backoff else None
        in_flight, log = self._in_flight, self._log
        got: list[QueuedPodInfo] = []
        while len(got) < limit:
            if len(active):
                heap = active
            elif backoff is not None and len(backoff):
                heap = backoff
            else:
                break
            # (a pod tracked twice is popped and left out, as upstream discards it)
            popped = heap.pop_while(take, limit - len(got), in_flight)
            now = self.clock.now()
            for qpi in popped:
                qpi.attempts += 1
                if qpi.initial_attempt_timestamp is None:
                    qpi.initial_attempt_timestamp = now
                qpi.unschedulable_plugins = set()
                qpi.pending_plugins = set()
                qpi.backoff_expiration = qpi.backoff_expiration_ns = None
                in_flight[qpi.uid] = (self._log_base + len(log), qpi.pod)
                log.append(qpi.uid)
            self.scheduling_cycle += len(popped)
            got.extend(popped)
            if len(heap):
                break  # ``take`` said no to its head, or the limit is reached
        return got

    def _determine_hint_for_in_flight(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return QueueingStrategy.AFTER_BACKOFF
        events = self._events_for_pod(qpi.uid)
        if events is None:
            return QueueingStrategy.AFTER_BACKOFF
        strategy = QueueingStrategy.SKIP
        for e in events:
            s = self._worth_requeuing(qpi, e.event, e.old_obj, e.new_obj)
            if s == QueueingStrategy.IMMEDIATELY:
                return s
            if s == QueueingStrategy.AFTER_BACKOFF:
                strategy = s
                if not qpi.pending_plugins:
                    return s
        return strategy

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo,
                                         scheduling_cycle: int | None = None) -> bool:
        """The failure path (``AddUnschedulableIfNotPresent``). ``qpi.unschedulable_plugins``
        / ``pending_plugins`` must hold the rejecting plugins (empty: an error). Returns False
        (and changes nothing but in-flight) when the pod is already queued. Ends in-flight."""
        return self.add_unschedulable_all((qpi,)) == 1

    def add_unschedulable_all(self, qpis: Iterable[QueuedPodInfo]) -> int:
        """``add_unschedulable_if_not_present`` for each of ``qpis`` in turn; returns how
        many were added."""
        pool, in_flight = self._unschedulable, self._in_flight
        active, backoff, error_backoff = self._active, self._backoff, self._error_backoff
        now, seq = self.clock.now(), self._seq
        added = 0
        # the pods going straight to the pool, added together before any other move (which
        # may add to the pool too); in-flight ends all at once, as nothing reads it between
        waiting: list[QueuedPodInfo] = []
        ended: list[str] = []
        for qpi in qpis:
            uid = qpi.uid
            ended.append(uid)
            if uid in pool or uid in active or uid in backoff or uid in error_backoff:
                continue
            rejected = qpi.unschedulable_plugins or qpi.pending_plugins
            if not rejected:
                qpi.consecutive_errors_count += 1
            else:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors_count = 0
            qpi.timestamp = now
            qpi.seq = next(seq)
            qpi.backoff_expiration = qpi.backoff_expiration_ns = None
            rec = in_flight.get(uid)
            if rejected and rec is not None and rec[0] > self._last_event:
                waiting.append(qpi)  # no event reached it in flight: it waits for one
            else:
                pool.add_all(waiting)
                waiting.clear()
                self._requeue(qpi, self._determine_hint_for_in_flight(qpi), EVENT_FAILURE)
            added += 1
        pool.add_all(waiting)
        self._done_all(ended)
        return added

    def flush_backoff_completed(self) -> None:
        """Move pods whose backoff completed (both backoff queues) to activeQ."""
        for h in (self._backoff, self._error_backoff):
            while True:
                head = h.peek()
                if head is None or self.is_backing_off(head):
                    break
                h.pop()
                self._move_to_active(head, EVENT_BACKOFF_COMPLETE, from_backoff=True)

    # Both flush helpers run at every step of a simulation, so they read the pool's oldest
    # timestamp first (``_Pool.oldest``): ``_to_ns`` is monotone, so the oldest pod decides
    # whether any pod is stale, and when the first tick that moves one comes.

    def _oldest_timestamp(self, movable_only: bool) -> float | None:
        """The oldest timestamp in the unschedulable pool; ``movable_only``: among the pods
        the UnschedulableTimeout event can move (gated pods only if their gating plugin
        registered the wildcard)."""
        pool = self._unschedulable
        oldest = pool.oldest()
        if oldest is None:
            return None
        if not movable_only or _leftover_movable(oldest):
            return oldest.timestamp
        return min((q.timestamp for q in pool.values() if _leftover_movable(q)), default=None)

    def flush_unschedulable_pods_leftover(self) -> None:
        """``flushUnschedulablePodsLeftover`` as of the last flush tick: pods that have been in
        the unschedulable pool for strictly longer than ``max_in_unschedulable`` (since their
        timestamp) move as the wildcard event UnschedulableTimeout."""
        now = _to_ns(self.clock.now())
        if self._leftover_ns > 0:
            now = (now // self._leftover_ns) * self._leftover_ns
        limit = _to_ns(self.max_in_unschedulable)
        oldest = self._oldest_timestamp(False)
        if oldest is None or now - _to_ns(oldest) <= limit:
            return
        stale = [q for q in self._unschedulable.values() if now - _to_ns(q.timestamp) > limit]
        self._move_pods(stale, UNSCHEDULABLE_TIMEOUT, None, None)

    def next_unschedulable_timeout(self) -> float | None:
        """The first flush tick at which ``flush_unschedulable_pods_leftover`` moves a pod,
        or None when no pod in the unschedulable pool would ever be moved by it."""
        oldest = self._oldest_timestamp(True)
        if oldest is None:
            return None
        limit = _to_ns(self.max_in_unschedulable)
        x = _to_ns(oldest) + limit  # must be strictly exceeded
        if self._leftover_ns > 0:
            return (x // self._leftover_ns + 1) * self._leftover_ns / _NS
        return (x + 1) / _NS

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """A pending pod changed (upstream ``Update``)."""
        events = pod_scheduling_properties_change(new_pod, old_pod) if old_pod is not None \
            else [ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE)]
        if self._add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        uid = old_pod.uid if old_pod is not None else new_pod.uid
        for h in (self._active, self._backoff, self._error_backoff):
            qpi = h.get(uid)
            if qpi is not None:
                qpi.pod = new_pod
                h.add_or_update(qpi)
                self.nominator.update(old_pod, new_pod)
                return
        qpi = self._unschedulable.get(uid)
        if qpi is not None:
            qpi.pod = new_pod
            self._unschedulable.recount(qpi)
            self.nominator.update(old_pod, new_pod)
            for ev in events:
                strategy = self._worth_requeuing(qpi, ev, old_pod, new_pod)
                where = self._requeue(qpi, strategy, str(ev))
                if where == ACTIVE or (self.pop_from_backoff and where == BACKOFF):
                    break
            return
        self._move_to_active(self._new_qpi(new_pod), EVENT_POD_UPDATE)

    def delete(self, pod: Pod) -> None:
        """A pending pod was deleted."""
        self.nominator.delete(pod)
        uid = pod.uid
        if self._active.delete(uid) is not None:
            return
        if self._backoff.delete(uid) is not None or self._error_backoff.delete(uid) is not None:
            return
        self._unschedulable.pop(uid, None)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move the pods to activeQ (ForceActivate); a pod in flight gets the event recorded
        so that it is requeued when it comes back."""
        for pod in pods:
            uid = pod.uid
            qpi = self._unschedulable.get(uid)
            from_backoff = False
            if qpi is None:
                qpi = self._backoff.delete(uid) or self._error_backoff.delete(uid)
                from_backoff = qpi is not None
            if qpi is not None and self._move_to_active(qpi, EVENT_FORCE_ACTIVATE, from_backoff):
                continue
            self._add_events_if_pod_in_flight(None, pod, [FORCE_ACTIVATE])

    # ------------------------------------------------------------------ nominator

    def add_nominated_pod(self, pod: Pod, node_name: str | None) -> None:
        """None keeps ``pod.status.nominated_node_name`` (ModeNoop); a string overrides it
        ("" clears)."""
        self.nominator.add(pod, node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self.nominator.delete(pod)

    def nominated_pods_by_node(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods → those pods (as ``nominated_pods_for_node``)."""
        # ``get`` unrolled: cycles that meet nominated pods run this over all of them
        active, unschedulable = self._active.entry, self._unschedulable.get
        backoff, error_backoff = self._backoff.entry, self._error_backoff.entry
        pod_of = self.nominator.pod
        out: dict[str, list[Pod]] = {}
        for node, uids in self.nominator.nominated.items():
            pods = []
            for uid in uids:
                e = active(uid)
                qpi = e[2] if e is not None else unschedulable(uid)
                if qpi is None:
                    e = backoff(uid) or error_backoff(uid)
                    qpi = e[2] if e is not None else None
                pod = qpi.pod if qpi is not None else pod_of(uid)
                if pod is not None:
                    pods.append(pod)
            out[node] = pods
        return out

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Pods nominated to ``node_name``, in nomination order, as the queue knows them."""
        out = []
        for uid in self.nominator.uids_for_node(node_name):
            qpi = self.get(uid)
            pod = qpi.pod if qpi is not None else self.nominator.pod(uid)
            if pod is not None:
                out.append(pod)
        return out

    # ------------------------------------------------------------------ inspection

    def get(self, uid: str) -> QueuedPodInfo | None:
        return (self._active.get(uid) or self._unschedulable.get(uid)
                or self._backoff.get(uid) or self._error_backoff.get(uid))

    def __contains__(self, uid: object) -> bool:
        return (uid in self._active or uid in self._unschedulable or uid in self._backoff
                or uid in self._error_backoff)

    def __len__(self) -> int:
        return (len(self._active) + len(self._backoff) + len(self._error_backoff)
                + len(self._unschedulable))

    def where(self, uid: str) -> str | None:
        """Which sub-queue holds the pod: active, backoff, error_backoff, unschedulable,
        gated, in_flight, or None."""
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff:
            return BACKOFF
        if uid in self._error_backoff:
            return ERROR_BACKOFF
        qpi = self._unschedulable.get(uid)
        if qpi is not None:
            return GATED if qpi.gated else UNSCHEDULABLE
        if uid in self._in_flight:
            return IN_FLIGHT
        return None

    def next_seq(self) -> int:
        """The ``seq`` the next queued pod will get (``--state-out``)."""
        n = next(self._seq)
        self._seq = itertools.count(n)
        return n

    def restore(self, placed: Iterable[tuple[str, QueuedPodInfo]], scheduling_cycle: int,
                next_seq: int) -> None:
        """Puts each pod back where a checkpoint found it (``where``'s names; in_flight is
        not one), with its queue record as it was; the unschedulable pool keeps the order
        given. For pods already added (their nominations made): they leave the sub-queue
        the add put them in."""
        for where, qpi in placed:
            uid = qpi.uid
            for h in (self._active, self._backoff, self._error_backoff):
                h.delete(uid)
            self._unschedulable.pop(uid, None)
            if qpi.gating_plugin:
                qpi.gating_plugin_events = tuple(self.plugin_events.get(qpi.gating_plugin, ()))
            if where == ACTIVE:
                self._active.add_or_update(qpi)
            elif where == BACKOFF:
                self._backoff.add_or_update(qpi)
            elif where == ERROR_BACKOFF:
                self._error_backoff.add_or_update(qpi)
            elif where in (UNSCHEDULABLE, GATED):
                self._unschedulable[uid] = qpi
            else:
                raise ValueError(f"no sub-queue {where!r}")
        self.scheduling_cycle = scheduling_cycle
        self._seq = itertools.count(next_seq)

    def pending_counts(self) -> dict[str, int]:
        gated = sum(1 for q in self._unschedulable.values() if q.gated)
        return {"active": len(self._active),
                "backoff": len(self._backoff) + len(self._error_backoff),
                "unschedulable": len(self._unschedulable) - gated,
                "gated": gated}

    def pending_pods(self) -> list[QueuedPodInfo]:
        """activeQ in pop order, then the backoff queues in expiration order, then the
        unschedulable pool (gated pods included)."""
        return [*self._active.sorted_items(), *self._backoff.sorted_items(),
                *self._error_backoff.sorted_items(), *self._unschedulable.values()]

    def active_pods(self) -> list[QueuedPodInfo]:
        return self._active.sorted_items()

    def backoff_pods(self) -> list[QueuedPodInfo]:
        return [*self._backoff.sorted_items(), *self._error_backoff.sorted_items()]

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())
