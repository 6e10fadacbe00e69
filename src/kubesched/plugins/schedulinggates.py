"""SchedulingGates (upstream ``schedulinggates/scheduling_gates.go``, v1.35): a pod with
``spec.schedulingGates`` stays out of the active queue (PreEnqueue) until they are removed."""

from __future__ import annotations

from kubesched.api.types import Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.interface import EnqueueExtensions, PreEnqueuePlugin
from kubesched.framework.status import Code, Status

NAME = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        # Go's %v of a []string: space-separated in brackets.
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      (f"waiting for scheduling gates: [{' '.join(gates)}]",))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            self.is_schedulable_after_update_pod_scheduling_gates_eliminated)]

    @staticmethod
    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
            pod: Pod, old: Pod | None, new: Pod) -> QueueingHint:
        if new.uid != pod.uid:
            return QueueingHint.SKIP  # another pod's gates don't concern this one
        return QueueingHint.QUEUE
