"""Pod importance as upstream's ``pkg/scheduler/util`` defines it for preemption.

A pod without ``status.startTime`` (assumed, or bound but not started — and every running pod
of a scenario that does not give one) has upstream's start time ``time.Now()``, read anew at
every call. kubesched models that instant as "later than every real start time", and two such
instants as "the first one read is the earlier": ``more_important_pod(a, b)`` is then true for
two equal-priority pods without start times, exactly as upstream's comparator answers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kubesched.api.types import Pod

MAX_INT32 = 2**31 - 1


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: spec.priority, or 0."""
    return pod.priority


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """``util.MoreImportantPod``: higher priority first, then the earlier start time."""
    p1, p2 = pod1.priority, pod2.priority
    if p1 != p2:
        return p1 > p2
    t1, t2 = pod1.status.start_time, pod2.status.start_time
    if t1 is None:  # now₁.Before(now₂) is true; now.Before(a past start time) is not
        return t2 is None
    if t2 is None:
        return True
    return t1 < t2


def earliest_pod_start_time(victims: Sequence[Pod]) -> float:
    """``util.GetEarliestPodStartTime``: the earliest start time among the highest-priority
    victims (``victims`` sorted by importance); ``inf`` stands for "now" (no start time)."""
    if not victims:
        return -math.inf
    max_priority = victims[0].priority
    earliest = _start(victims[0])
    for p in victims:
        prio = p.priority
        if prio == max_priority:
            t = _start(p)
            if t < earliest:
                earliest = t
        elif prio > max_priority:
            max_priority = prio
            earliest = _start(p)
    return earliest


def _start(pod: Pod) -> float:
    t = pod.status.start_time
    return math.inf if t is None else t


def terminating_by_preemption(pod: Pod) -> bool:
    """``podTerminatingByPreemption``: deleting, and its DisruptionTarget condition says the
    scheduler preempted it."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for c in pod.status.conditions:
        if c.type == "DisruptionTarget":
            return c.status == "True" and c.reason == "PreemptionByScheduler"
    return False
