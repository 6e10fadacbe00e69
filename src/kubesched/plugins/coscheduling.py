"""Coscheduling (kubernetes-sigs/scheduler-plugins ``pkg/coscheduling``): all-or-nothing
scheduling of the pods of a ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``), whatever the
Kubernetes release.

Pods join a group with the label ``scheduling.x-k8s.io/pod-group: <name>``. Members wait at
Permit until ``minMember`` of them are assumed or bound, then all go on to bind; a member that
cannot be placed rejects its waiting siblings (PostFilter), which releases what they reserved,
and may back the whole group off for ``podGroupBackoffSeconds``. The QueueSort keeps a group's
pods together in the queue. Semantics and messages follow scheduler-plugins' coscheduling.go
and core/core.go; what differs is in docs/gangs.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubesched.api.gangs import (
    POD_GROUP_LABEL,
    CoschedulingGroup,
    GangObjects,
    coscheduling_full_name,
    coscheduling_label,
)
from kubesched.api.types import PODS, Pod
from kubesched.config.plugin_args import CoschedulingArgs, typed_args
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    EnqueueExtensions,
    PermitPlugin,
    PostFilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueSortPlugin,
    ReservePlugin,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, QueuedPodInfo
from kubesched.framework.waiting import WaitingPod

NAME = "Coscheduling"
# util.DefaultWaitTime: the Permit wait when neither the group nor the args set one
DEFAULT_WAIT_SECONDS = 60.0
# the EventResource scheduler-plugins registers PodGroup events under
POD_GROUP_EVENT_RESOURCE = "podgroups.v1alpha1.scheduling.x-k8s.io"
_PERMIT_STATE = "PermitCoscheduling"  # core.permitStateKey


@dataclass(slots=True)
class _PermitState:
    activate: bool

    def clone(self) -> _PermitState:
        return _PermitState(self.activate)


class Coscheduling(QueueSortPlugin, PreFilterPlugin, PostFilterPlugin, PermitPlugin,
                   ReservePlugin, EnqueueExtensions):
    name = NAME

    args: CoschedulingArgs

    def __init__(self, args: CoschedulingArgs | dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self.args = a = typed_args(CoschedulingArgs, args, handle.features)
        self.schedule_timeout = float(a.permit_waiting_time_seconds)
        backoff = float(a.pod_group_backoff_seconds)
        self.pg_backoff: float | None = backoff if backoff > 0 else None
        self.reject_threshold = a.pod_group_reject_percentage / 100.0
        self.gangs = GangObjects()
        # PodGroupManager's state. assignedPodsByPG: pod names counted at Permit (bound
        # pods are counted from the pod lister, see _assigned_count).
        self.assigned: dict[str, set[str]] = {}
        self.permitted_pg: dict[str, float] = {}  # full name -> expiry (a TTL cache)
        self.backed_off_pg: dict[str, float] = {}  # full name -> expiry (a TTL cache)
        self.last_failed: dict[str, float] = {}  # lastFailedSchedulePG

    def checkpoint_state(self) -> dict[str, Any]:
        return {"assigned": {k: sorted(v) for k, v in self.assigned.items()},
                "permitted": dict(self.permitted_pg), "backedOff": dict(self.backed_off_pg),
                "lastFailed": dict(self.last_failed)}

    def restore_state(self, saved: dict[str, Any]) -> None:
        self.assigned = {str(k): {str(n) for n in v} for k, v in saved["assigned"].items()}
        self.permitted_pg, self.backed_off_pg, self.last_failed = (
            {str(k): float(t) for k, t in saved[f].items()}
            for f in ("permitted", "backedOff", "lastFailed"))

    # ------------------------------------------------------------------ helpers

    def _now(self) -> float:
        clock = self.handle.clock
        return clock.now() if clock is not None else 0.0

    def get_pod_group(self, pod: Pod) -> tuple[str, CoschedulingGroup | None]:
        """``GetPodGroup``: the group's full name ("" for no label) and the PodGroup."""
        label = coscheduling_label(pod)
        if not label:
            return "", None
        objects = self.handle.objects
        return (f"{pod.namespace}/{label}",
                self.gangs.coscheduling_group(objects, pod.namespace, label))

    def _group_pods(self, namespace: str, label: str) -> list[Pod]:
        """The pod lister's pods with the group's label in ``namespace``."""
        return [p for p in self.handle.list_pods()
                if p.namespace == namespace and p.metadata.labels.get(POD_GROUP_LABEL) == label]

    def _assigned_count(self, full: str, namespace: str, label: str) -> int:
        """``GetAssignedPodCount``. Upstream's set gains a name at Permit and when a bound
        pod is added, and loses it at Unreserve and when a bound pod is deleted: here, the
        names counted at Permit of pods that still exist, and every bound member."""
        pods = {p.name: p for p in self._group_pods(namespace, label)}
        names = {n for n in self.assigned.get(full, ()) if n in pods}
        names.update(n for n, p in pods.items() if p.spec.node_name)
        return len(names)

    def _expired(self, cache: dict[str, float], key: str) -> bool:
        exp = cache.get(key)
        if exp is None:
            return True
        if exp <= self._now():
            del cache[key]
            return True
        return False

    def _waiting_siblings(self, namespace: str, label: str) -> list[WaitingPod]:
        out: list[WaitingPod] = []
        self.handle.iterate_over_waiting_pods(
            lambda wp: out.append(wp) if wp.status is None and wp.pod.namespace == namespace
            and coscheduling_label(wp.pod) == label else None)
        return out

    def mark_failure(self, full: str) -> None:
        """``MarkPodGroupScheduleFailure``: the group sorts as if created now."""
        self.last_failed[full] = self._now()

    # ------------------------------------------------------------------ QueueSort

    def creation_time(self, pod: Pod, ts: float) -> float:
        """``GetCreationTimestamp``: the last failure of the pod's group, else the group's
        creation, else ``ts`` (the pod's initial attempt)."""
        label = coscheduling_label(pod)
        if not label:
            return ts
        full = f"{pod.namespace}/{label}"
        failed = self.last_failed.get(full)
        if failed is not None:
            return failed
        _full, pg = self.get_pod_group(pod)
        if pg is None:
            return ts
        return self.handle.creation_time(pg.creation_timestamp)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod.priority, b.pod.priority
        if p1 != p2:
            return p1 > p2
        c1 = self.creation_time(a.pod, _initial_attempt(a))
        c2 = self.creation_time(b.pod, _initial_attempt(b))
        if c1 == c2:
            return a.pod.key < b.pod.key
        return c1 < c2

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        # a failure is UnschedulableAndUnresolvable: preemption cannot help a group
        msg = self.pre_filter_error(pod, snapshot)
        if msg is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))
        return None, None

    def pre_filter_error(self, pod: Pod, snapshot: Snapshot) -> str | None:
        """``PodGroupManager.PreFilter``: why the pod's group cannot be scheduled now."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return None
        if not self._expired(self.backed_off_pg, full):
            return f"podGroup {full} failed recently"
        pods = self._group_pods(pod.namespace, pg.name)
        gap = pg.min_member - len(pods)
        if gap > 0:
            return (f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                    f"number: {len(pods)}, minMember of group: {pg.min_member}")
        for p in pods:  # gated members cannot be counted on
            if p.spec.scheduling_gates:
                gap += 1
            if gap > 0:
                return (f"pre-filter pod {pod.name} cannot proceed due to gated pods in the "
                        "same PodGroup")
        if pg.min_resources is None:
            return None
        if not self._expired(self.permitted_pg, full):
            return None
        request = dict(pg.min_resources)
        request[PODS] = pg.min_member
        gap_left = check_cluster_resource(snapshot.node_infos, request, full)
        if gap_left:
            return f"resource gap: {_go_map(gap_left)}"
        self.permitted_pg[full] = self._now() + self.schedule_timeout
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ PostFilter

    def decide(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
               ) -> PostFilterDecision:
        """What ``post_filter`` would say, rejecting and backing off nothing (explain)."""
        full, pg = self.get_pod_group(pod)
        st = self._keep_group(full, pg, pod)
        if st is None:
            st = Status(Code.UNSCHEDULABLE, (_rejected(full, pod),))
        return PostFilterDecision(st)

    def _keep_group(self, full: str, pg: CoschedulingGroup | None, pod: Pod) -> Status | None:
        """PostFilter's answer when the group is not rejected; None when it is."""
        if pg is None:
            return Status(Code.UNSCHEDULABLE, ("can not find pod group",))
        # enough members already: do not bother rejecting the group
        assigned = self._assigned_count(full, pod.namespace, pg.name)
        if assigned >= pg.min_member:
            return Status(Code.UNSCHEDULABLE)
        # a small gap: later members may still complete the group
        if (pg.min_member - assigned) / pg.min_member <= self.reject_threshold:
            return Status(Code.UNSCHEDULABLE)
        return None

    def post_filter(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
                    ) -> tuple[str | None, Status]:
        full, pg = self.get_pod_group(pod)
        kept = self._keep_group(full, pg, pod)
        if kept is not None or pg is None:
            return None, kept or Status(Code.UNSCHEDULABLE)
        # the nth member failing makes it likely the others would: release them all
        for wp in self._waiting_siblings(pod.namespace, pg.name):
            wp.reject(NAME, "optimistic rejection in PostFilter")
        if self.pg_backoff is not None and \
                len(self._group_pods(pod.namespace, pg.name)) >= pg.min_member:
            self.backed_off_pg[full] = self._now() + self.pg_backoff
        self.permitted_pg.pop(full, None)
        self.mark_failure(full)
        return None, Status(Code.UNSCHEDULABLE, (_rejected(full, pod),))

    # ------------------------------------------------------------------ Permit

    def permit(self, state: CycleState, pod: Pod, node_name: str
               ) -> tuple[Status | None, float]:
        full, pg = self.get_pod_group(pod)
        if not full:
            return None, 0.0
        if pg is None:
            return Status(Code.UNSCHEDULABLE, ("PodGroup not found",)), 0.0
        self.assigned.setdefault(full, set()).add(pod.name)
        assigned = self._assigned_count(full, pod.namespace, pg.name)
        if assigned >= pg.min_member:
            self.last_failed.pop(full, None)
            for wp in self._waiting_siblings(pod.namespace, pg.name):
                wp.allow(NAME)
            return None, 0.0
        if assigned == 1:
            # only the first member to arrive brings its siblings forward (the others
            # would activate them again for nothing)
            state.write(_PERMIT_STATE, _PermitState(True))
        wait = self.schedule_timeout
        if pg.schedule_timeout_seconds is not None:
            wait = float(pg.schedule_timeout_seconds)
        elif wait == 0:
            wait = DEFAULT_WAIT_SECONDS
        if wait == 0:
            wait = self.schedule_timeout
        self.activate_siblings(pod, state)
        # upstream's Wait carries no message; this one says what the group waits for
        return Status(Code.WAIT, (f"waiting for PodGroup {full}: {assigned} of minMember "
                                  f"{pg.min_member} pods assumed or bound",)), wait

    def activate_siblings(self, pod: Pod, state: CycleState) -> None:
        label = coscheduling_label(pod)
        ps = state.read(_PERMIT_STATE)
        if not label or not isinstance(ps, _PermitState) or not ps.activate:
            return
        siblings = [p for p in self._group_pods(pod.namespace, label) if p.uid != pod.uid]
        if siblings:
            self.handle.activate(siblings)

    # ------------------------------------------------------------------ Reserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failing after Reserve (a timeout, a rejection, a failed binding) rejects
        every waiting sibling, releasing what they hold."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return
        names = self.assigned.get(full)
        if names is not None:
            names.discard(pod.name)
            if not names:
                del self.assigned[full]
        for wp in self._waiting_siblings(pod.namespace, pg.name):
            wp.reject(NAME, "rejection in Unreserve")
        self.permitted_pg.pop(full, None)
        self.mark_failure(full)

    # ------------------------------------------------------------------ events

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(POD_GROUP_EVENT_RESOURCE,
                                              ActionType.ADD | ActionType.UPDATE)),
        ]


@dataclass(slots=True)
class PostFilterDecision:
    """``decide``'s answer, as explain reads a PostFilter's (no node, no victims)."""

    status: Status
    nominated: str | None = None
    candidate: None = None


def _rejected(full: str, pod: Pod) -> str:
    return (f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after "
            "PostFilter")


def _initial_attempt(qpi: QueuedPodInfo) -> float:
    t = qpi.initial_attempt_timestamp
    return t if t is not None else qpi.timestamp


def check_cluster_resource(node_infos: Iterable[Any], request: dict[str, int],
                           group: str) -> dict[str, int]:
    """``CheckClusterResource``: what of ``request`` the nodes' free resources (the group's
    own pods counted as free) cannot cover; empty when they can."""
    need = dict(request)
    for ni in node_infos:
        if ni is None or ni.node is None:
            continue
        left = node_resource_left(ni, group)
        for name in list(need):
            rest = need[name] - left.get(name, 0)
            if rest <= 0:
                del need[name]
            else:
                need[name] = rest
        if not need:
            return {}
    return need


def node_resource_left(ni: Any, group: str) -> dict[str, int]:
    """``getNodeResource``: a node's allocatable minus what its pods outside ``group``
    request (pods: the allowed number minus those pods)."""
    requested = dict(ni.requested)
    others = 0
    for p in ni.pods:
        if coscheduling_full_name(p) == group:
            for r, v in p.requests.items():
                requested[r] = requested.get(r, 0) - v
        else:
            others += 1
    left = {r: v - requested.get(r, 0) for r, v in ni.allocatable.items() if r != PODS}
    left[PODS] = ni.allowed_pod_number - others
    return left


def _go_map(m: dict[str, int]) -> str:
    """Go's ``%v`` of a map: sorted keys, ``map[k:v ...]``."""
    return "map[" + " ".join(f"{k}:{m[k]}" for k in sorted(m)) + "]"
