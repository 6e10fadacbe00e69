"""The scheduler, along upstream's seams: ``scheduler`` (the Scheduler, its construction and
run state), ``eventhandlers`` (object events into the cache and the queue),
``schedule_one`` (the scheduling cycle, the binding cycle, failure handling) and
``algorithm`` (one pod's filter and score pass, the choice of a host)."""

from kubesched.scheduler.algorithm import (
    CycleResult,
    NoNodesAvailable,
    num_feasible_nodes_to_find,
)
from kubesched.scheduler.eventhandlers import node_update_events
from kubesched.scheduler.observer import Recorder, SchedulerObserver
from kubesched.scheduler.scheduler import Scheduler

__all__ = [
    "CycleResult",
    "NoNodesAvailable",
    "Recorder",
    "Scheduler",
    "SchedulerObserver",
    "node_update_events",
    "num_feasible_nodes_to_find",
]
