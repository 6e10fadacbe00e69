"""Pods waiting at Permit (upstream's waitingPodsMap and waitingPod).

A Permit plugin that returns Wait parks the assumed pod here, with a deadline per waiting
plugin. Any plugin may then ``allow`` it (once every waiting plugin has, it goes on to bind)
or ``reject`` it, through the Handle. The core is synchronous, so nothing blocks: a waiting
pod's outcome is recorded when it happens, and the scheduler acts on it — binding cycle or
failure — at its next step (``Scheduler.schedule_one``), in the order the outcomes came;
a deadline passing on the scheduler's clock (virtual in the simulator) rejects the pod as
upstream's timer does.

Preempting a waiting pod (v1.36, kubernetes#135719) ends its wait with an Error rather than
a rejection, so it goes to backoffQ instead of the unschedulable pods.

``PodsInPreBind`` is upstream's podsInPreBindMap (v1.36, kubernetes#135502): the pods whose
binding cycle is in PreBind, which preemption cancels instead of deleting the pod. The
kube backend runs binding cycles on threads, so it is locked; the simulator's binding
cycle runs to its end before anything else happens, so no victim is ever found there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.types import Pod
from kubesched.framework.status import Code, Status

# upstream's maxTimeout: no plugin makes a pod wait longer
MAX_TIMEOUT_SECONDS = 15 * 60.0
# CycleState key: the Wait statuses' messages by plugin (RunPermitPlugins writes them, the
# scheduler keeps them with the waiting pod so that a report can say why it waits)
PERMIT_WAIT_MESSAGES = "kubesched.io/permit-wait-messages"


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for a whole number of nanoseconds (``10s``,
    ``1m30s``, ``1.5s``, ``500ms``, ``15m0s``, ``0s``)."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:  # below a second: the largest unit that keeps a whole part
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _frac(ns, size) + unit
    h, rest = divmod(ns, 3_600_000_000_000)
    m, rest = divmod(rest, 60_000_000_000)
    text = _frac(rest, 1_000_000_000) + "s"
    if h:
        return f"{sign}{h}h{m}m{text}"
    if m:
        return f"{sign}{m}m{text}"
    return sign + text


def _frac(value: int, unit: int) -> str:
    whole, part = divmod(value, unit)
    if not part:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{str(part).rjust(digits, '0').rstrip('0')}"


@dataclass
class WaitingPod:
    """An assumed pod parked at Permit (upstream's framework.WaitingPod)."""

    pod: Pod
    node: str
    # plugin -> (deadline on the scheduler's clock, the timeout it asked for)
    pending: dict[str, tuple[float, float]]
    _owner: WaitingPods = field(repr=False)
    status: Status | None = None  # set once allowed by all, or rejected
    # plugin -> the message of the Wait status it returned
    messages: dict[str, str] = field(default_factory=dict)
    # the scheduler's record of the cycle that parked it (a checkpoint writes it down)
    context: Any = None

    def pending_plugins(self) -> list[str]:
        return list(self.pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; once every waiting plugin has, it goes on to bind."""
        if self.status is not None:
            return
        self.pending.pop(plugin, None)
        if not self.pending:
            self.resolve(Status())

    def reject(self, plugin: str, message: str) -> bool:
        """The pod goes back to the queue as unschedulable, ``plugin`` the rejector; False
        when its outcome was already known (allowed, rejected or preempted)."""
        if self.status is not None:
            return False
        self.pending.clear()
        self.resolve(Status(Code.UNSCHEDULABLE, (message,), plugin))
        return True

    def preempt(self, plugin: str, message: str) -> bool:
        """Preemption ends the wait (v1.36): an Error, so the pod goes to backoffQ and is
        tried again soon rather than waiting for a cluster event; False when its outcome
        was already known (the preemptor then deletes the pod through the API)."""
        if self.status is not None:
            return False
        self.pending.clear()
        self.resolve(Status(Code.ERROR, (message,), plugin))
        return True

    def resolve(self, status: Status) -> None:
        self.status = status
        self._owner.resolved.append(self)


class WaitingPods:
    """The waiting-pods map of one scheduler, shared by its profiles (as upstream's per
    framework, keyed by pod uid, which is the same)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self.resolved: list[WaitingPod] = []
        # what the scheduler does with a pod once its outcome is known
        self.on_outcome: dict[str, Callable[[WaitingPod], None]] = {}

    def add(self, pod: Pod, node: str, timeouts: dict[str, float], now: float,
            on_outcome: Callable[[WaitingPod], None],
            messages: dict[str, str] | None = None, context: Any = None) -> WaitingPod:
        pending = {name: (now + t, t) for name, t in timeouts.items()}
        wp = WaitingPod(pod, node, pending, self, messages=dict(messages or {}),
                        context=context)
        self._pods[pod.uid] = wp
        self.on_outcome[pod.uid] = on_outcome
        return wp

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def next_deadline(self) -> float | None:
        """The earliest deadline of a pod still waiting, or None."""
        times = [d for wp in self._pods.values() if wp.status is None
                 for d, _t in wp.pending.values()]
        return min(times) if times else None

    def expire(self, now: float) -> None:
        """Reject, as upstream's timers do, every pod a plugin's deadline has passed for
        (earliest deadline first, so outcomes come in the order the timers would fire)."""
        due = sorted(((d, wp.pod.uid, name, t, wp) for wp in self._pods.values()
                      if wp.status is None for name, (d, t) in wp.pending.items() if d <= now),
                     key=lambda x: (x[0], x[1]))
        for _d, _uid, name, t, wp in due:
            wp.reject(name, f"rejected due to timeout after waiting {go_duration(t)} at "
                            f"plugin {name}")

    def take_resolved(self) -> list[tuple[WaitingPod, Callable[[WaitingPod], None]]]:
        """The pods whose outcome is known, in the order it came; they leave the map."""
        out = []
        for wp in self.resolved:
            if self._pods.get(wp.pod.uid) is wp:
                del self._pods[wp.pod.uid]
                out.append((wp, self.on_outcome.pop(wp.pod.uid)))
        self.resolved.clear()
        return out


class PodInPreBind:
    """A pod whose binding cycle is in PreBind (upstream's podInPreBind): preemption may
    cancel it until PreBind is over (``mark_prebound``), never after.

    One is made for every binding cycle with a PreBind plugin, so it is kept cheap: the lock
    is the map's, and the Event a waiting plugin reads is made only when asked for."""

    __slots__ = ("_cancelled", "_lock", "cause", "finished")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self.finished = False
        self.cause: str | None = None
        self._cancelled: threading.Event | None = None

    @property
    def cancelled(self) -> threading.Event:
        """Set on cancel: a PreBind plugin that waits (VolumeBinding polling for the PV
        controller) waits on it, so the cancel ends its wait at once."""
        with self._lock:
            if self._cancelled is None:
                self._cancelled = threading.Event()
                if self.cause is not None:  # cancelled before anyone waited
                    self._cancelled.set()
            return self._cancelled

    def cancel_pod(self, message: str) -> bool:
        """Cancel the binding cycle (``CancelPod``); False once PreBind is over."""
        with self._lock:
            if self.finished:
                return False
            if self.cause is None:
                self.cause = message
                if self._cancelled is not None:
                    self._cancelled.set()
            return True

    def mark_prebound(self) -> bool:
        """PreBind is over and Bind may start (``MarkPrebound``); False if cancelled first."""
        with self._lock:
            if self.cause is not None:
                return False
            self.finished = True
            return True


class PodsInPreBind:
    """Pods in PreBind by uid (upstream's podsInPreBindMap)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, PodInPreBind] = {}

    def add(self, uid: str) -> PodInPreBind:
        entry = PodInPreBind(self._lock)
        with self._lock:
            self._pods[uid] = entry
        return entry

    def get(self, uid: str) -> PodInPreBind | None:
        with self._lock:
            return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
