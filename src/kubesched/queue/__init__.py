"""The scheduling queue: activeQ, backoff queues, unschedulable pool, nominator."""

from kubesched.queue.cluster_events import (
    is_wildcard,
    le_priority_pre_check,
    match_any_cluster_event,
    match_cluster_events,
    pod_scheduling_properties_change,
)
from kubesched.queue.nominator import Nominator
from kubesched.queue.scheduling_queue import (
    ACTIVE,
    BACKOFF,
    ERROR_BACKOFF,
    GATED,
    IN_FLIGHT,
    UNSCHEDULABLE,
    QueueingStrategy,
    SchedulingQueue,
    build_queueing_hint_map,
)

__all__ = [
    "ACTIVE",
    "BACKOFF",
    "ERROR_BACKOFF",
    "GATED",
    "IN_FLIGHT",
    "UNSCHEDULABLE",
    "Nominator",
    "QueueingStrategy",
    "SchedulingQueue",
    "build_queueing_hint_map",
    "is_wildcard",
    "le_priority_pre_check",
    "match_any_cluster_event",
    "match_cluster_events",
    "pod_scheduling_properties_change",
]
