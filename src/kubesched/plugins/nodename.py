"""NodeName (upstream ``nodename/node_name.go``, v1.35).

Filter: a pod with ``spec.nodeName`` fits only the node of that name — otherwise
UnschedulableAndUnresolvable ``"node(s) didn't match the requested node name"``.
"""

from __future__ import annotations

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.interface import READS_NODE, BatchStatus, EnqueueExtensions, FilterPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.spec.node_name or pod.spec.node_name == node_info.name


class NodeName(FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        return ((signers.NODE_NAME, pod.spec.node_name),)
    filter_reads = READS_NODE

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if fits(pod, node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        wanted = pod.spec.node_name
        if not wanted:
            return BatchStatus.success(len(idx))
        row = snapshot.table.index.get(wanted, -1)
        return BatchStatus.from_mask(np.asarray(idx) != row, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     (ERR_REASON,))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # No hint function: the pod is always retried when a node is added (QUEUE).
        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD))]
