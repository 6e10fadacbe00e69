"""Two example policies for kubesched (docs/plugins.md walks through them).

``NoFridays`` filters out nodes labelled ``day=friday`` (or the label its args name), in the
per-node form and, because a Filter runs on every node of every cycle, in the batch form too.
``GpuFirst`` prefers nodes with GPUs; the per-node form is all a Score plugin needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    BatchStatus,
    Code,
    CycleState,
    FilterPlugin,
    NodeInfo,
    ScorePlugin,
    Status,
    unschedulable,
)

REASON = "node(s) rest on Fridays"


class NoFridays(FilterPlugin):
    name = "NoFridays"

    def __init__(self, args: dict[str, Any] | None) -> None:
        args = args or {}
        self.key = str(args.get("labelKey", "day"))
        self.value = str(args.get("restDay", "friday"))

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        if node_info.node is not None and node_info.node.labels.get(self.key) == self.value:
            return unschedulable(REASON)
        return None

    def filter_batch(self, state: CycleState, pod: Any, snapshot: Any, idx: np.ndarray
                     ) -> BatchStatus:
        # one label column for all nodes: no Python loop over nodes
        resting = snapshot.table.label_column(self.key)[idx] == self.value
        return BatchStatus.from_mask(resting, Code.UNSCHEDULABLE, (REASON,))


class GpuFirst(ScorePlugin):
    name = "GpuFirst"
    resource = "nvidia.com/gpu"

    def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> int:
        return MAX_NODE_SCORE if node_info.allocatable.get(self.resource, 0) > 0 else 0
