"""NodeAffinity (upstream ``plugins/nodeaffinity/node_affinity.go``, v1.35).

PreFilter: Skip when the pod has no required node affinity, no nodeSelector and the profile no
``addedAffinity``; narrows the candidates to the ``metadata.name`` matchFields when every
required term names nodes ("pod affinity terms conflict" when those sets leave nothing).
Filter: the scheduler-enforced ``addedAffinity`` first, then the pod's nodeSelector AND
required node affinity, both UnschedulableAndUnresolvable. PreScore / Score: Σ weight of the
matching preferred terms (the pod's and the added ones), normalized to 0..100.

Selector semantics live in :mod:`kubesched.api.selectors`; the batch forms evaluate each
requirement once per distinct label value and gather over the node table rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.selectors import (
    OBJECT_NAME_FIELD,
    CompiledNodeSelector,
    PreferredTerms,
    RequiredNodeAffinity,
    SelectorError,
    compile_preferred_terms,
    get_required_node_affinity,
    new_node_selector,
)
from kubesched.api.types import Node, Pod
from kubesched.api.types import NodeAffinity as NodeAffinitySpec
from kubesched.config.plugin_args import NodeAffinityArgs, typed_args
from kubesched.errors import InputError
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.interface import (
    READS_NODE,
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    NodeList,
    PluginError,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, error, skip, unresolvable
from kubesched.plugins.helper import default_normalize_score

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


class _PreFilterState:
    __slots__ = ("required",)

    def __init__(self, required: RequiredNodeAffinity) -> None:
        self.required = required

    def clone(self) -> _PreFilterState:  # not affected by adding / removing pods
        return self


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: PreferredTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreScoreState:
        return self


def _pod_node_affinity(pod: Pod) -> NodeAffinitySpec | None:
    aff = pod.spec.affinity
    return aff.node_affinity if aff is not None else None


def pod_preferred_node_affinity(pod: Pod) -> PreferredTerms | None:
    """``getPodPreferredNodeAffinity``: None without preferred terms; raises SelectorError
    when one does not parse.

    Upstream tells an absent list (nil: PreScore skips) from an empty one (scores 0); the
    object model keeps both as an empty tuple, so both skip."""
    na = _pod_node_affinity(pod)
    if na is None or not na.preferred:
        return None
    return compile_preferred_terms(na.preferred)


def _parse_added_affinity(raw: Any) -> NodeAffinitySpec | None:
    if raw is None or isinstance(raw, NodeAffinitySpec):
        return raw
    from kubesched.api.parse import parse_node_affinity

    return parse_node_affinity(raw, "addedAffinity")


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin,
                   EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # [upstream's SignPod not read: its signer names are NodeAffinity and NodeSelector]
        return ((signers.NODE_AFFINITY, signers.node_affinity(pod)),
                (signers.NODE_SELECTOR, signers.node_selector(pod)))
    filter_reads = READS_NODE

    args: NodeAffinityArgs

    def __init__(self, args: NodeAffinityArgs | dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = typed_args(NodeAffinityArgs, args, handle.features)
        self.added_node_selector: CompiledNodeSelector | None = None
        self.added_pref_sched_terms: PreferredTerms | None = None
        added = _parse_added_affinity(self.args.added_affinity)
        if added is None:
            return
        if added.required is not None:
            try:
                self.added_node_selector = new_node_selector(added.required)
            except SelectorError as e:
                raise InputError(
                    f"parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: {e}",
                    obj=f"plugin {NAME}", field="args.addedAffinity") from None
        if added.preferred:
            try:
                self.added_pref_sched_terms = compile_preferred_terms(added.preferred)
            except SelectorError as e:
                raise InputError(
                    f"parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {e}",
                    obj=f"plugin {NAME}", field="args.addedAffinity") from None

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # With queueing hints on (v1.35 default) only Node Add | UpdateNodeLabel.
        return [ClusterEventWithHint(
            ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterNodeChange``; raises TypeError (counted as Queue) on objects that
        are not nodes."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            raise TypeError(f"expected Node objects, got {type(old).__name__} and "
                            f"{type(new).__name__}")
        if self.added_node_selector is not None and not self.added_node_selector.matches(new):
            return QueueingHint.SKIP
        required = get_required_node_affinity(pod)
        matched, err = required.match(new)
        if err is not None:
            return QueueingHint.QUEUE
        if not matched:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        was_matched, err = required.match(old)
        if err is not None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if was_matched else QueueingHint.QUEUE

    # ------------------------------------------------------------------ PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        na = _pod_node_affinity(pod)
        no_node_affinity = na is None or na.required is None
        if no_node_affinity and self.added_node_selector is None and not pod.spec.node_selector:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(get_required_node_affinity(pod)))
        if no_node_affinity or not na.required:  # type: ignore[union-attr]
            return None, None
        node_names: set[str] | None = None
        for term in na.required:  # type: ignore[union-attr]
            term_names: set[str] | None = None
            for r in term.match_fields:
                if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                    # requirements of a term are ANDed: intersect
                    s = set(r.values)
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                # a term without a metadata.name field: every node may match (terms are ORed)
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, unresolvable(ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def _required(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        s = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(s, _PreFilterState):
            return s.required
        # PreFilter not run (disabled): compute it here, as upstream falls back.
        return get_required_node_affinity(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if self.added_node_selector is not None and not self.added_node_selector.matches(node):
            return unresolvable(ERR_REASON_ENFORCED)
        # parse errors are ignored (no term matched), as upstream does
        if not self._required(state, pod).matches(node):
            return unresolvable(ERR_REASON_POD)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        table = snapshot.table
        out = BatchStatus.success(len(idx))
        alive = np.ones(len(idx), dtype=bool)
        if self.added_node_selector is not None:
            ok = self.added_node_selector.match_table(table, idx)
            out.fail(~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,))
            alive = ok
        required = self._required(state, pod)
        if required.label_selector is None and required.node_selector is None:
            return out
        if alive.any():
            ok = np.ones(len(idx), dtype=bool)
            ok[alive] = required.match_table(table, idx[alive])
            out.fail(~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,))
        return out

    # ------------------------------------------------------------------ PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        try:
            preferred = pod_preferred_node_affinity(pod)
        except SelectorError as e:
            return error(str(e))
        if preferred is None and self.added_pref_sched_terms is None:
            return skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def _preferred(self, state: CycleState, pod: Pod) -> PreferredTerms | None:
        s = state.read(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.preferred
        try:  # PreScore not run (disabled): compute it here, as upstream falls back
            return pod_preferred_node_affinity(pod)
        except SelectorError as e:
            raise PluginError(str(e)) from None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(node)
        preferred = self._preferred(state, pod)
        if preferred is not None:
            count += preferred.score(node)
        return count

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        table = snapshot.table
        out = np.zeros(len(idx), dtype=np.int64)
        if self.added_pref_sched_terms is not None:
            out += self.added_pref_sched_terms.score_table(table, idx)
        preferred = self._preferred(state, pod)
        if preferred is not None:
            out += preferred.score_table(table, idx)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize_score(scores, False)
