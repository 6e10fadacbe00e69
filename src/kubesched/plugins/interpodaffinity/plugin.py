"""The InterPodAffinity plugin (upstream v1.35 ``plugins/interpodaffinity/plugin.go``):
PreFilter (+AddPod/RemovePod), Filter, PreScore, Score (+NormalizeScore) and the cluster
events with queueing hints that may make a pod it rejected schedulable.

Args (``InterPodAffinityArgs``, defaulted by ``config``): ``hardPodAffinityWeight`` (1, valid
0..100) and ``ignorePreferredTermsOfExistingPods`` (false). Namespace labels (for
``namespaceSelector``) come from ``handle.namespaces``; PreScore reads the cycle's snapshot
from ``handle.snapshot``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.config.plugin_args import InterPodAffinityArgs, typed_args
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
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    NodeList,
    PluginError,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, skip
from kubesched.plugins.interpodaffinity import filtering, scoring
from kubesched.plugins.interpodaffinity.counting import PodIndex
from kubesched.plugins.interpodaffinity.filtering import (
    NAME,
    PRE_FILTER_STATE_KEY,
    PodAffinityInfo,
    PreFilterState,
    WeightedAffinityTerm,
    merge_namespaces,
    namespace_labels,
    pod_affinity_info,
    pod_matches_all_affinity_terms,
)
from kubesched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY, PreScoreState

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


def _not_found(key: str, verb: str = "error reading") -> str:
    return f'{verb} "{key}" from cycleState: not found'


class InterPodAffinity(PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin,
                       ScorePlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        aff = pod.spec.affinity
        if aff is not None and (aff.pod_affinity or aff.pod_anti_affinity):
            return None  # terms reach beyond the node
        if self.ignore_preferred_terms_of_existing_pods:
            return ()
        # existing pods' preferred terms match against the incoming pod's labels
        return ((signers.LABELS, signers.labels(pod)),)

    args: InterPodAffinityArgs

    def __init__(self, args: InterPodAffinityArgs | dict[str, Any] | None,
                 handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = a = typed_args(InterPodAffinityArgs, args, handle.features)
        self.hard_pod_affinity_weight = a.hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = a.ignore_preferred_terms_of_existing_pods
        w = self.hard_pod_affinity_weight
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {w}: not in valid range "
                             f"[{MIN_HARD_POD_AFFINITY_WEIGHT}-{MAX_HARD_POD_AFFINITY_WEIGHT}]")
        self._pod_index = PodIndex(pod_affinity_info, w)

    # ------------------------------------------------------------------ helpers

    def _index(self, snapshot: Snapshot) -> PodIndex:
        """The counts kept across cycles for ``snapshot``; a snapshot the scheduler cache does
        not maintain (generation 0) is counted afresh."""
        if snapshot.generation > 0:
            return self._pod_index.sync(snapshot)
        return PodIndex(pod_affinity_info, self.hard_pod_affinity_weight).sync(snapshot)

    @property
    def _namespaces(self) -> dict[str, Any]:
        return self.handle.namespaces

    def _merged(self, info: PodAffinityInfo, *, required: bool) -> PodAffinityInfo:
        """The incoming pod's terms with namespace selectors resolved into namespaces: the
        required terms (PreFilter) or the preferred ones (PreScore)."""
        nss = self._namespaces

        def weighted(ws: tuple[WeightedAffinityTerm, ...]) -> tuple[WeightedAffinityTerm, ...]:
            return tuple(WeightedAffinityTerm(merge_namespaces(w.term, nss), w.weight)
                         for w in ws)

        if required:
            return PodAffinityInfo(
                tuple(merge_namespaces(t, nss) for t in info.required_affinity),
                tuple(merge_namespaces(t, nss) for t in info.required_anti_affinity),
                info.preferred_affinity, info.preferred_anti_affinity, info.errors)
        return PodAffinityInfo(info.required_affinity, info.required_anti_affinity,
                               weighted(info.preferred_affinity),
                               weighted(info.preferred_anti_affinity), info.errors)

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        info = pod_affinity_info(pod)
        err = info.parse_error
        if err is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"parsing pod: {err}",))
        if not (info.required_affinity or info.required_anti_affinity
                or snapshot.has_pods_with_required_anti_affinity()):
            # no term to count on either side (the snapshot's answer is kept while no pod
            # with required anti-affinity comes or goes; the index would refresh its rows)
            return None, skip()
        info = self._merged(info, required=True)
        ns_labels = namespace_labels(self._namespaces, pod.metadata.namespace)
        index = self._index(snapshot)
        existing = index.existing_anti_affinity_counts(pod, ns_labels)
        if not existing and not info.required_affinity and not info.required_anti_affinity:
            return None, skip()
        affinity, anti = index.incoming_counts(info)
        state.write(PRE_FILTER_STATE_KEY,
                    PreFilterState(pod, info, ns_labels, existing, affinity, anti))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def _update(self, state: CycleState, pod: Pod, node_info: NodeInfo, mult: int
                ) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (_not_found(PRE_FILTER_STATE_KEY),))
        s.update_with_pod(pod, node_info, mult)
        return None

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                node_info: NodeInfo) -> Status | None:
        return self._update(state, pod_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                   node_info: NodeInfo) -> Status | None:
        return self._update(state, pod_to_remove, node_info, -1)

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (_not_found(PRE_FILTER_STATE_KEY),))
        return filtering.filter_node(s, node_info)

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return BatchStatus.from_mask(np.ones(len(idx), dtype=bool), Code.ERROR,
                                         (_not_found(PRE_FILTER_STATE_KEY),))
        return filtering.filter_batch(s, snapshot.table, idx)

    # ------------------------------------------------------------------ PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        snapshot = self.handle.snapshot
        has_constraints = scoring.has_preferred_terms(pod)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return skip()
        info = pod_affinity_info(pod)
        err = info.parse_error
        if err is not None:
            return Status(Code.ERROR, (f"failed to parse pod: {err}",))
        if not has_constraints and not snapshot.has_pods_with_affinity():
            # no term on either side: upstream's walk over the nodes with affinity pods
            # finds no score (the snapshot's answer is kept while none comes or goes)
            return skip()
        info = self._merged(info, required=False)
        ns_labels = namespace_labels(self._namespaces, pod.metadata.namespace)
        # Without preferred terms of its own (has_constraints), only the existing pods'
        # terms count: the same as upstream's walk over the nodes with affinity pods.
        topo = self._index(snapshot).topology_score(pod, info, ns_labels)
        if not topo:
            return skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topo))
        return None

    def _pre_score_state(self, state: CycleState) -> PreScoreState:
        s = state.read(PRE_SCORE_STATE_KEY)
        if s is None:
            raise PluginError(_not_found(PRE_SCORE_STATE_KEY, "failed to read"))
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return scoring.score_node(self._pre_score_state(state), node_info)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        return scoring.score_batch(self._pre_score_state(state), snapshot.table, idx)

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return scoring.normalize(self._pre_score_state(state), scores)

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # v1.35 (queueing hints on): assigned pods added, relabelled or deleted; nodes added
        # or relabelled (UpdateNodeTaint is registered only when queueing hints are off).
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL
                             | ActionType.DELETE),
                self.is_schedulable_after_pod_change),
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change),
        ]

    @staticmethod
    def _required_terms(pod: Pod) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        info = pod_affinity_info(pod)
        if info.errors[0] is not None or info.errors[1] is not None:
            # GetAffinityTerms failed: upstream returns Queue with the error.
            raise ValueError(info.errors[0] or info.errors[1])
        return info.required_affinity, info.required_anti_affinity

    def is_schedulable_after_pod_change(self, pod: Pod, old: Pod | None, new: Pod | None
                                        ) -> QueueingHint:
        if (new is not None and not new.spec.node_name) or (
                old is not None and not old.spec.node_name):
            return QueueingHint.SKIP  # an unscheduled pod changed
        terms, anti_terms = self._required_terms(pod)
        if new is not None and old is not None:
            # One existing pod must match all affinity terms, so the terms are not checked
            # one by one.
            if (not pod_matches_all_affinity_terms(terms, old)
                    and pod_matches_all_affinity_terms(terms, new)):
                return QueueingHint.QUEUE
            if (pod_matches_all_affinity_terms(anti_terms, old)
                    and not pod_matches_all_affinity_terms(anti_terms, new)):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:  # added
            return (QueueingHint.QUEUE if pod_matches_all_affinity_terms(terms, new)
                    else QueueingHint.SKIP)
        if old is None or not pod_matches_all_affinity_terms(anti_terms, old):  # deleted
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None
                                         ) -> QueueingHint:
        if new is None:
            return QueueingHint.SKIP
        terms, anti_terms = self._required_terms(pod)
        new_labels = new.metadata.labels
        old_labels = old.metadata.labels if old is not None else None
        for t in terms:
            k = t.topology_key
            if old_labels is None:
                if k in new_labels:
                    return QueueingHint.QUEUE  # a node with the affinity key was added
                continue
            if k not in old_labels and k in new_labels:
                return QueueingHint.QUEUE  # the node gained the affinity key
            if k in old_labels and k in new_labels and old_labels[k] != new_labels[k]:
                return QueueingHint.QUEUE  # the node moved to another domain
        for t in anti_terms:
            k = t.topology_key
            if old_labels is None:
                return QueueingHint.QUEUE  # any new node may fit
            if k in old_labels and k not in new_labels:
                return QueueingHint.QUEUE  # the node left the domain
            if k in old_labels and k in new_labels and old_labels[k] != new_labels[k]:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP
