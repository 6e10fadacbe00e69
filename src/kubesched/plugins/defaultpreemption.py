"""DefaultPreemption (upstream ``plugins/defaultpreemption/default_preemption.go``, v1.35):
the PostFilter plugin that preempts lower-priority pods for a pod that fits nowhere.

The work is done by :class:`kubesched.preemption.Evaluator`; this plugin wires it to its
profile (the framework that runs its filters), and prefixes its status message with
``"preemption: "`` as upstream does. Preemption is synchronous (DESIGN.md): victims are
deleted through the backend before ``post_filter`` returns; the preemptor is nominated to
the node and retried in a later cycle. Async preemption's PreEnqueue gate therefore never
holds a pod back, and the plugin registers no events (upstream: none without async
preemption).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.api.types import Pod
from kubesched.config.plugin_args import DefaultPreemptionArgs, typed_args
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import (
    PREEMPTION_VICTIMS,
    EnqueueExtensions,
    PostFilterPlugin,
)
from kubesched.framework.status import Status
from kubesched.framework.types import NodeToStatus
from kubesched.preemption import Evaluator, PreemptResult

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.runtime import Framework

NAME = "DefaultPreemption"
PREFIX = "preemption: "


class DefaultPreemption(PostFilterPlugin, EnqueueExtensions):
    name = NAME

    args: DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | dict[str, Any] | None,
                 handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = a = typed_args(DefaultPreemptionArgs, args, handle.features)
        self.min_candidate_nodes_percentage = a.min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = a.min_candidate_nodes_absolute
        self._evaluator: Evaluator | None = None

    def set_framework(self, framework: Framework) -> None:
        """Called by the runtime once the profile's plugins exist (upstream: the plugin's
        Handle is its framework)."""
        self._evaluator = Evaluator(
            NAME, framework.handle, framework,
            min_candidate_nodes_percentage=self.min_candidate_nodes_percentage,
            min_candidate_nodes_absolute=self.min_candidate_nodes_absolute)

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            raise RuntimeError("DefaultPreemption is not attached to a framework")
        return self._evaluator

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []

    def post_filter(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
                    ) -> tuple[str | None, Status]:
        res = self.evaluator.preempt(state, pod, node_to_status)
        if res.candidate is not None:
            state.write(PREEMPTION_VICTIMS, [v.key for v in res.candidate.victims.pods])
        return res.nominated, with_prefix(res.status)

    def decide(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
               ) -> PreemptResult:
        """What ``post_filter`` would do — the node and the victims — without evicting
        anything (``kubesched explain``); the status carries the ``preemption: `` prefix."""
        res = self.evaluator.preempt(state, pod, node_to_status, actuate=False)
        res.status = with_prefix(res.status)
        return res


def with_prefix(st: Status) -> Status:
    msg = st.message()
    if msg:
        return Status(st.code, (PREFIX + msg,), st.plugin)
    return st
