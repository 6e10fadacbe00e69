"""NodeUnschedulable (upstream ``nodeunschedulable/node_unschedulable.go``, v1.35).

Filter: a node with ``spec.unschedulable`` rejects pods that do not tolerate the taint
``node.kubernetes.io/unschedulable:NoSchedule`` — UnschedulableAndUnresolvable
``"node(s) were unschedulable"``.
"""

from __future__ import annotations

import numpy as np

from kubesched.api.types import Node, Pod, Taint
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.handle import feature_enabled
from kubesched.framework.interface import READS_NODE, BatchStatus, EnqueueExtensions, FilterPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper import NO_SCHEDULE, tolerations_tolerate_taint

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)

def tolerates_unschedulable(pod: Pod) -> bool:
    return tolerations_tolerate_taint(pod.spec.tolerations, UNSCHEDULABLE_TAINT)


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # [upstream's SignPod not read: the tolerations are what its Filter reads of the pod]
        return ((signers.TOLERATIONS, signers.tolerations(pod)),)
    filter_reads = READS_NODE

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or not node.spec.unschedulable:
            return None
        if tolerates_unschedulable(pod):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,))

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        fail = snapshot.table.unschedulable[idx]
        if not fail.any() or tolerates_unschedulable(pod):
            return BatchStatus.success(len(idx))
        return BatchStatus.from_mask(fail, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     (ERR_REASON_UNSCHEDULABLE,))

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not feature_enabled(self.handle, "SchedulerQueueingHints"):
            return [ClusterEventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT
                             | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change)]
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change),
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change),
        ]

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod
                                                   ) -> QueueingHint:
        if new.uid == pod.uid and tolerates_unschedulable(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        if (old is not None and old.spec.unschedulable and not new.spec.unschedulable) or (
                old is None and not new.spec.unschedulable):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
