"""The PodTopologySpread plugin (upstream ``podtopologyspread/plugin.go``, v1.35).

Args (after config defaulting): ``{"defaultConstraints": [constraint dict], "defaultingType":
"System" | "List"}``. With ``System`` the built-in constraints (hostname maxSkew 3, zone
maxSkew 5, both ScheduleAnyway) replace ``defaultConstraints``. Default constraints apply to
a pod without constraints of its own, with the selector of the Services, ReplicationController,
ReplicaSet or StatefulSet that select / own it (the handle's listers; their specs read raw).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.parse import parse_label_selector, parse_topology_spread_constraint
from kubesched.api.selectors import (
    Selector,
    SelectorError,
    label_selector_as_selector,
    selector_from_set,
)
from kubesched.api.types import (
    HOSTNAME_LABEL,
    ZONE_LABEL,
    GenericObject,
    Node,
    Pod,
    TopologySpreadConstraint,
)
from kubesched.config.plugin_args import PodTopologySpreadArgs, typed_args
from kubesched.errors import InputError
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
    PluginError,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.listers import Listers
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.pod_counts import PodCountCache
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, skip
from kubesched.framework.table_cache import NodeMemo
from kubesched.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    Constraint,
    PodCounts,
    and_selectors,
    filter_constraints,
    node_labels_match_spread_constraints,
    pod_counts,
    pod_labels_match_spread_constraints,
)
from kubesched.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    calc_pre_filter_state,
    filter_node,
    filter_rows,
    state_error,
    update_with_pod,
)
from kubesched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    build_pre_score_state,
    normalize,
    score_node,
    score_rows,
)

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

NAME = "PodTopologySpread"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME_LABEL,
                             when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_LABEL,
                             when_unsatisfiable=SCHEDULE_ANYWAY),
)

# kind -> (apiVersion, its lister) of the controllers DefaultSelector follows.
_CONTROLLERS: dict[str, tuple[str, Callable[[Listers], Sequence[GenericObject]]]] = {
    "ReplicationController": ("v1", Listers.replication_controllers),
    "ReplicaSet": ("apps/v1", Listers.replica_sets),
    "StatefulSet": ("apps/v1", Listers.stateful_sets),
}


class PodTopologySpread(PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin,
                        ScorePlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Spreading is not local to a pod and a node: no signature for a pod with
        # constraints, explicit or defaulted (the system defaults included, so none in the
        # default profile).
        if pod.spec.topology_spread_constraints or self.default_constraints:
            return None
        return ()

    def sign_pod_for_filter(self, pod: Pod) -> SignFragments | None:
        """``sign_pod`` for PreFilter and Filter only (a failed attempt's verdicts): default
        constraints that only score (ScheduleAnyway, as the system defaults) leave the
        filters out of it."""
        if pod.spec.topology_spread_constraints or any(
                c.when_unsatisfiable == DO_NOT_SCHEDULE for c in self.default_constraints):
            return None
        return ()

    args: PodTopologySpreadArgs

    def __init__(self, args: PodTopologySpreadArgs | dict[str, Any] | None,
                 handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = typed_args(PodTopologySpreadArgs, args, handle.features)
        self.system_defaulted = self.args.defaulting_type == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[TopologySpreadConstraint, ...] = (
                SYSTEM_DEFAULT_CONSTRAINTS)
        else:
            self.default_constraints = tuple(
                c if isinstance(c, TopologySpreadConstraint)
                else parse_topology_spread_constraint(c, f"defaultConstraints[{i}]")
                for i, c in enumerate(self.args.default_constraints))
        # Kept across cycles: matching-pod counts per node (only nodes whose pods changed
        # are recounted) and per-pod-shape data for the node table's current nodes.
        # (None disables the cache: every cycle counts directly.)
        self.pod_count_cache: PodCountCache | None = PodCountCache()
        self.shapes: NodeMemo[Any] = NodeMemo()

    # ------------------------------------------------------------------ constraints

    def default_selector(self, pod: Pod) -> Selector:
        """helper.DefaultSelector: the Services selecting the pod, merged, ANDed with the
        selector of its controlling ReplicationController / ReplicaSet / StatefulSet."""
        ns = pod.metadata.namespace
        pod_labels = pod.metadata.labels
        label_set: dict[str, str] = {}
        listers = self.handle.listers
        for svc in listers.services():
            if svc.metadata.namespace != ns:
                continue
            raw_sel = (svc.raw.get("spec") or {}).get("selector")
            if not isinstance(raw_sel, Mapping):
                continue  # a nil selector matches nothing
            sel = {str(k): str(v) for k, v in raw_sel.items()}
            if all(pod_labels.get(k) == v for k, v in sel.items()):
                label_set.update(sel)
        selector = selector_from_set(label_set)

        owner = next((o for o in pod.metadata.owner_references if o.controller), None)
        if owner is None:
            return selector
        api_version = getattr(owner, "api_version", None)
        controller = _CONTROLLERS.get(owner.kind)
        if controller is None or api_version not in (None, controller[0]):
            return selector
        obj = next((o for o in controller[1](listers)
                    if o.metadata.namespace == ns and o.metadata.name == owner.name), None)
        if obj is None:
            return selector
        spec_sel = (obj.raw.get("spec") or {}).get("selector")
        if owner.kind == "ReplicationController":
            if isinstance(spec_sel, Mapping):
                label_set.update({str(k): str(v) for k, v in spec_sel.items()})
            return selector_from_set(label_set)
        try:
            other = label_selector_as_selector(parse_label_selector(spec_sel, "spec.selector"))
        except (InputError, SelectorError):
            return selector
        # Requirements() of labels.Nothing() is not ok: nothing is added then.
        return and_selectors(selector, other)

    def build_default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        # (the selector before the constraints: default constraints have no selector of
        # their own, which the configuration's validation enforces, so neither order fails,
        # and a pod no Service or controller selects — most of them — needs no constraint)
        if not any(c.when_unsatisfiable == action for c in self.default_constraints):
            return []
        selector = self.default_selector(pod)
        if selector.empty():
            return []
        constraints = filter_constraints(self.default_constraints, pod.metadata.labels, action)
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains,
                           c.node_affinity_policy, c.node_taints_policy) for c in constraints]

    def _constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's constraints for ``action``, or the default ones when it has none;
        raises SelectorError (worded as upstream) for a selector that does not parse."""
        kind = "hard" if action == DO_NOT_SCHEDULE else "soft"
        if pod.spec.topology_spread_constraints:
            try:
                return filter_constraints(pod.spec.topology_spread_constraints,
                                          pod.metadata.labels, action)
            except SelectorError as e:
                raise SelectorError(
                    f"obtaining pod's {kind} topology spread constraints: {e}") from None
        try:
            return self.build_default_constraints(pod, action)
        except SelectorError as e:
            raise SelectorError(
                f"setting default {kind} topology spread constraints: {e}") from None

    def get_constraints(self, pod: Pod) -> list[Constraint]:
        """The pod's hard constraints (or the hard default constraints)."""
        return self._constraints(pod, DO_NOT_SCHEDULE)

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            constraints = self.get_constraints(pod)
        except SelectorError as e:
            return None, Status(Code.ERROR, (f"get constraints from pod: {e}",))
        if not constraints:
            return None, skip()  # (calPreFilterState's empty state)
        s = calc_pre_filter_state(pod, constraints, snapshot,
                                  self._pod_counts(state, snapshot, pod), self.shapes)
        if not s.constraints:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                node_info: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return state_error(PRE_FILTER_STATE_KEY)
        update_with_pod(s, pod_to_add, pod_to_schedule, node_info.node, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                   node_info: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return state_error(PRE_FILTER_STATE_KEY)
        update_with_pod(s, pod_to_remove, pod_to_schedule, node_info.node, -1)
        return None

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return state_error(PRE_FILTER_STATE_KEY)
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, ("node not found",))
        return filter_node(s, pod, node)

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            st = state_error(PRE_FILTER_STATE_KEY)
            return BatchStatus.from_mask(np.ones(len(idx), dtype=bool), Code.ERROR, st.reasons)
        return filter_rows(s, pod, snapshot, np.asarray(idx, dtype=np.int64), self.shapes)

    # ------------------------------------------------------------------ PreScore / Score

    def _pod_counts(self, state: CycleState, snapshot: Snapshot, pod: Pod) -> PodCounts:
        return pod_counts(state, snapshot.node_infos, pod.metadata.namespace, snapshot,
                          self.pod_count_cache)

    def _snapshot(self) -> Snapshot:
        return self.handle.snapshot

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                  ) -> Status | None:
        snapshot = self._snapshot()
        if snapshot.num_nodes == 0:
            return skip()
        try:
            constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError as e:
            return Status(Code.ERROR, (f"calculating preScoreState: {e}",))
        if not constraints:
            return skip()
        rows = getattr(nodes, "idx", None)
        source = getattr(nodes, "source", None)
        if rows is None or (source is not None and source is not snapshot.node_infos):
            index = snapshot.table.index
            rows = np.fromiter((index[ni.name] for ni in nodes), dtype=np.int64,
                               count=len(nodes))
        # Only non-system-default rules require every topology key on a node; so nodes
        # without a zone label still get hostname spreading.
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        s = build_pre_score_state(pod, constraints, nodes, np.asarray(rows, dtype=np.int64),
                                  snapshot, require_all, self._pod_counts(state, snapshot, pod),
                                  self.shapes)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def _pre_score_state(self, state: CycleState) -> PreScoreState:
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            raise PluginError(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: '
                              "not found")
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return score_node(self._pre_score_state(state), pod, node_info)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        return score_rows(self._pre_score_state(state), snapshot, np.asarray(idx, dtype=np.int64),
                          self._pod_counts(state, snapshot, pod), self.shapes)

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        s = self._pre_score_state(state)
        n = len(scores)
        if s.last_ignored is not None and len(s.last_ignored) == n:
            ignored = s.last_ignored
        elif len(s.prescore_ignored) == n:
            ignored = s.prescore_ignored
        else:
            raise PluginError("PodTopologySpread: NormalizeScore got "
                              f"{n} scores for {len(s.prescore_ignored)} scored nodes")
        return normalize(scores, ignored)

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # v1.35 with SchedulerQueueingHints on: a new toleration can help a pod whose
        # constraint honors node taints, so UpdatePodToleration is registered too.
        pod_actions = (ActionType.ADD | ActionType.UPDATE_POD_LABEL
                       | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE)
        node_actions = (ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                        | ActionType.UPDATE_NODE_TAINT)
        return [
            ClusterEventWithHint(ClusterEvent(Resource.POD, pod_actions),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, node_actions),
                                 self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old: Pod | None, new: Pod | None
                                        ) -> QueueingHint:
        if (new is not None and not _involved_in_topology_spreading(new, pod)) or (
                old is not None and not _involved_in_topology_spreading(old, pod)):
            return QueueingHint.SKIP
        try:
            constraints = self.get_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            if (pod.uid == new.uid and new.spec.tolerations != old.spec.tolerations
                    and any(c.node_taints_policy == "Honor" for c in constraints)):
                return QueueingHint.QUEUE
            if new.metadata.labels == old.metadata.labels:
                return QueueingHint.SKIP
            for c in constraints:
                if c.selector.matches(old.metadata.labels) != c.selector.matches(
                        new.metadata.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        changed = new if new is not None else old
        if changed is not None and pod_labels_match_spread_constraints(
                constraints, changed.metadata.labels):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None
                                         ) -> QueueingHint:
        try:
            constraints = self.get_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        old_match = old is not None and node_labels_match_spread_constraints(
            old.metadata.labels, constraints)
        new_match = new is not None and node_labels_match_spread_constraints(
            new.metadata.labels, constraints)
        if old is not None and new is not None:
            if old_match != new_match:
                return QueueingHint.QUEUE
            if new_match and (
                    any(old.metadata.labels.get(c.topology_key, "")
                        != new.metadata.labels.get(c.topology_key, "") for c in constraints)
                    or old.spec.taints != new.spec.taints):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_match else QueueingHint.SKIP
        return QueueingHint.QUEUE if old_match else QueueingHint.SKIP


def _involved_in_topology_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    return incoming.uid == pod_with_spreading.uid or (
        incoming.spec.node_name != "" and incoming.metadata.namespace
        == pod_with_spreading.metadata.namespace)
