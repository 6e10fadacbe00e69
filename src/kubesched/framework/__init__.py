"""The public plugin API: what a plugin author imports (DESIGN.md's contract).

A plugin is a class deriving from the extension points it implements, with upstream's method
names; a per-node plugin is all it takes::

    from kubesched.framework import FilterPlugin, ScorePlugin, unschedulable

    class GpuFirst(ScorePlugin):
        name = "GpuFirst"

        def score(self, state, pod, node_info) -> int:
            return 100 if "nvidia.com/gpu" in node_info.allocatable else 0

Its constructor may take nothing, ``args`` (its ``pluginConfig`` args), ``handle``, or both.
The optional capabilities are Protocols the framework resolves once per plugin when a profile
is built: ``FilterBatch``, ``ScoreBatch``, ``NormalizeScore``, ``EnqueueExtensions``,
``FrameworkAware``, ``PostFilterDecide``, ``PodSigner``; and for a Filter that reads only the
node table's columns, ``FilterPasses`` and ``FilterRow`` (which the autoscaler's scale-down
simulation looks up when it asks). See docs/plugins.md.
"""

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchStatus,
    BindPlugin,
    EnqueueExtensions,
    FilterBatch,
    FilterPasses,
    FilterPlugin,
    FilterRow,
    FrameworkAware,
    NodeList,
    NormalizeScore,
    PermitPlugin,
    Plugin,
    PluginError,
    PodSigner,
    PostBindPlugin,
    PostFilterDecide,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreBatch,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status, error, skip, unresolvable, unschedulable

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "ActionType",
    "BatchStatus",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "FilterBatch",
    "FilterPasses",
    "FilterPlugin",
    "FilterRow",
    "FrameworkAware",
    "Handle",
    "NodeInfo",
    "NodeList",
    "NormalizeScore",
    "PermitPlugin",
    "Plugin",
    "PluginError",
    "PodSigner",
    "PostBindPlugin",
    "PostFilterDecide",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueueingHint",
    "ReservePlugin",
    "ScoreBatch",
    "ScorePlugin",
    "Status",
    "error",
    "skip",
    "unresolvable",
    "unschedulable",
]
