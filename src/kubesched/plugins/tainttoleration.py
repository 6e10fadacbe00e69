"""TaintToleration (upstream ``tainttoleration/taint_toleration.go``, v1.35).

* Filter: the first NoSchedule / NoExecute taint of the node (in ``spec.taints`` order) that no
  toleration of the pod tolerates ⇒ UnschedulableAndUnresolvable
  ``"node(s) had untolerated taint(s)"``. (v1.35 no longer names the taint in the reason,
  kubernetes#134740; ``TaintToleration.legacy_reason = True`` restores the older
  ``"node(s) had untolerated taint {key: value}"`` of v1.26–v1.34.)
* PreScore keeps the pod's tolerations with an empty or PreferNoSchedule effect; Score counts
  the node's PreferNoSchedule taints none of them tolerates; NormalizeScore is
  ``DefaultNormalizeScore(100, reverse=True)``.

The batch forms evaluate each distinct taint list of the node table once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from kubesched.api.types import Node, Pod, Taint, Toleration
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
from kubesched.framework.interface import (
    READS_NODE,
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    NodeList,
    PluginError,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper import (
    PREFER_NO_SCHEDULE,
    default_normalize_score,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

@dataclass(frozen=True, slots=True)
class _PreScoreState:
    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """``getAllTolerationPreferNoSchedule``: an empty effect matches every effect."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(taints: Sequence[Taint],
                                         tolerations: Sequence[Toleration]) -> int:
    return sum(1 for t in taints
               if t.effect == PREFER_NO_SCHEDULE
               and not tolerations_tolerate_taint(tolerations, t))


def _groups(table: NodeTable, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct taint-set ids to evaluate, index into them per candidate)."""
    groups = table.taint_group[idx]
    if len(table.taint_sets) <= len(idx):
        return np.arange(len(table.taint_sets)), groups
    uniq, inverse = np.unique(groups, return_inverse=True)
    return uniq, inverse.reshape(-1)


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        return ((signers.TOLERATIONS, signers.tolerations(pod)),)
    filter_reads = READS_NODE

    # True: name the taint in the reason as v1.26–v1.34 did (and the v1.30 golden data).
    legacy_reason: ClassVar[bool] = False

    def _reason(self, taint: Taint) -> str:
        if self.legacy_reason:
            return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
        return ERR_REASON_UNTOLERATED

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        taints = node.spec.taints if node is not None else ()
        taint = find_matching_untolerated_taint(taints, pod.spec.tolerations)
        if taint is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (self._reason(taint),))

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        table = snapshot.table
        out = BatchStatus.success(len(idx))
        if len(idx) == 0:
            return out
        gids, pos = _groups(table, idx)
        tolerations = pod.spec.tolerations
        reason_of: dict[str, int] = {}
        set_reason = np.full(len(gids), -1, dtype=np.int32)
        for k, gid in enumerate(gids.tolist()):
            taint = find_matching_untolerated_taint(table.taint_sets[gid], tolerations)
            if taint is None:
                continue
            reason = self._reason(taint)
            rid = reason_of.get(reason)
            if rid is None:
                rid = reason_of[reason] = len(out.reasons)
                out.reasons.append((reason,))
            set_reason[k] = rid
        if not out.reasons:
            return out
        rids = set_reason[pos]
        failing = rids >= 0
        out.codes[failing] = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        out.reason_ids[failing] = rids[failing]
        return out

    # ------------------------------------------------------------------ PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY,
                    _PreScoreState(prefer_no_schedule_tolerations(pod.spec.tolerations)))
        return None

    @staticmethod
    def _tolerations(state: CycleState) -> tuple[Toleration, ...]:
        s = state.read(PRE_SCORE_STATE_KEY)
        if s is None:
            raise PluginError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: '
                              "not found")
        return s.tolerations_prefer_no_schedule

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        taints = node.spec.taints if node is not None else ()
        return count_intolerable_prefer_no_schedule(taints, self._tolerations(state))

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        tolerations = self._tolerations(state)
        table = snapshot.table
        sets = table.taint_sets
        if len(idx) == 0 or (len(sets) == 1 and not sets[0]):
            return np.zeros(len(idx), dtype=np.int64)  # (no node has a taint)
        gids, pos = _groups(table, idx)
        counts = np.fromiter(
            (count_intolerable_prefer_no_schedule(sets[g], tolerations)
             for g in gids.tolist()), dtype=np.int64, count=len(gids))
        return counts[pos]

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize_score(scores, reverse=True)

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if feature_enabled(self.handle, "SchedulerQueueingHints"):
            return [
                ClusterEventWithHint(
                    ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                    self.is_schedulable_after_node_change),
                ClusterEventWithHint(
                    ClusterEvent(Resource.POD, ActionType.UPDATE_POD_TOLERATION),
                    self.is_schedulable_after_pod_toleration_change),
            ]
        return [ClusterEventWithHint(
            ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT
                         | ActionType.UPDATE_NODE_LABEL),
            self.is_schedulable_after_node_change)]

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        was_untolerated = True
        if old is not None:
            was_untolerated = find_matching_untolerated_taint(
                old.spec.taints, pod.spec.tolerations) is not None
        is_untolerated = find_matching_untolerated_taint(
            new.spec.taints, pod.spec.tolerations) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod
                                                   ) -> QueueingHint:
        return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.SKIP
