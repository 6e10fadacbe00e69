"""GangScheduling (upstream ``pkg/scheduler/framework/plugins/gangscheduling``): all-or-nothing
scheduling of the pods of a gang in upstream's Workload API, as each release has it.

* v1.35: a pod names its ``Workload`` and pod group in ``spec.workloadRef`` (with an optional
  replica key: each replica is a gang of its own); the Workload's
  ``spec.podGroups[].policy.gang.minCount`` is the quorum. Permit waits until the group's
  scheduling deadline (5 minutes from its first waiting member).
* v1.36, v1.37: a pod names a ``PodGroup`` object in ``spec.schedulingGroup.podGroupName``;
  its ``spec.schedulingPolicy.gang.minCount`` is the quorum. Permit waits 5 minutes.

PreEnqueue keeps a member out of the queue until its object exists and ``minCount`` members
are known; Reserve counts it as assumed; Permit waits until ``minCount`` members are assumed
or bound, then lets them all bind; a member timing out or failing releases only itself (the
others wait out their own time), as upstream. The default profile has the plugin when the
release's gate is on (GangScheduling in v1.35/v1.36, GenericWorkload in v1.37).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.api.gangs import (
    GangObjects,
    GangPolicy,
    pod_group_policy,
    workload_pod_group_policy,
)
from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.events import QueueingHint as Hint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    EnqueueExtensions,
    PermitPlugin,
    PreEnqueuePlugin,
    ReservePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.releases import version_tuple

NAME = "GangScheduling"
# v1.35's workloadmanager.DefaultSchedulingTimeoutDuration; v1.36+'s permitTimeoutDuration
SCHEDULING_TIMEOUT_SECONDS = 5 * 60.0
WORKLOAD_RESOURCE = "scheduling.k8s.io/Workload"
POD_GROUP_RESOURCE = "scheduling.k8s.io/PodGroup"

# (namespace, workload, pod group, replica key) in v1.35; (namespace, "", pod group, "") later
GroupKey = tuple[str, str, str, str]


@dataclass(slots=True)
class _GroupState:
    """What upstream's workload manager keeps of a pod group: the assumed pods (the other
    sets come from the pod lister) and v1.35's scheduling deadline."""

    assumed: set[str] = field(default_factory=set)
    deadline: float | None = None


def _quote(s: str) -> str:
    """Go's ``%q`` of a name (names hold no characters it would escape)."""
    return f'"{s}"'


class GangScheduling(PreEnqueuePlugin, ReservePlugin, PermitPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        version = handle.kubernetes_version
        # v1.35 reads spec.workloadRef and Workloads; v1.36 on spec.schedulingGroup and PodGroups
        self.workload_api = version_tuple(version) < (1, 36)
        self.gangs = GangObjects()
        self.groups: dict[GroupKey, _GroupState] = {}

    def checkpoint_state(self) -> dict[str, Any]:
        return {"groups": [[list(k), sorted(st.assumed), st.deadline]
                           for k, st in self.groups.items()]}

    def restore_state(self, saved: dict[str, Any]) -> None:
        groups: dict[GroupKey, _GroupState] = {}
        for key, assumed, deadline in saved["groups"]:
            ns, workload, group, replica = (str(k) for k in key)
            groups[(ns, workload, group, replica)] = _GroupState(
                {str(u) for u in assumed}, None if deadline is None else float(deadline))
        self.groups = groups

    # ------------------------------------------------------------------ look-ups

    def _now(self) -> float:
        clock = self.handle.clock
        return clock.now() if clock is not None else 0.0

    def _objects(self) -> dict[str, list[Any]]:
        return self.handle.objects

    def group_key(self, pod: Pod) -> GroupKey | None:
        if self.workload_api:
            ref = pod.spec.workload_ref
            if ref is None:
                return None
            return (pod.namespace, ref.name, ref.pod_group, ref.replica_key)
        if pod.spec.scheduling_group is None:
            return None
        return (pod.namespace, "", pod.spec.scheduling_group, "")

    def _policy(self, key: GroupKey) -> tuple[GangPolicy | None, str | None]:
        """The group's policy, or None with the reason it cannot be read (PreEnqueue's
        wording; Permit turns it into an error)."""
        ns, workload, group, _replica = key
        if self.workload_api:
            wl = self.gangs.workload(self._objects(), ns, workload)
            if wl is None:
                return None, (f"waiting for pods's workload {_quote(workload)} to appear in "
                              "scheduling queue")
            policy = workload_pod_group_policy(wl, group)
            if policy is None:
                return None, (f"pod group {_quote(group)} doesn't exist for a workload "
                              f"{_quote(workload)}")
            return policy, None
        pg = self.gangs.upstream_pod_group(self._objects(), ns, group)
        if pg is None:
            return None, (f"waiting for pods's pod group {_quote(group)} to appear in "
                          "scheduling queue")
        return pod_group_policy(pg), None

    def _state(self, key: GroupKey) -> _GroupState:
        st = self.groups.get(key)
        if st is None:
            st = self.groups[key] = _GroupState()
        return st

    def group_pods(self, key: GroupKey) -> list[Pod]:
        """The pods of the group the scheduler knows (its workload manager's allPods)."""
        return [p for p in self.handle.list_pods()
                if p.namespace == key[0] and self.group_key(p) == key]

    def scheduled_count(self, key: GroupKey) -> int:
        """Members assumed (past Reserve) or assigned (bound)."""
        pods = self.group_pods(key)
        st = self._state(key)
        uids = {p.uid for p in pods} & st.assumed
        uids.update(p.uid for p in pods if p.spec.node_name)
        return len(uids)

    def scheduling_timeout(self, key: GroupKey) -> float:
        """v1.35's ``SchedulingTimeout``: the time left until the group's deadline, a new
        one (5 minutes on) when there is none or it has passed."""
        st = self._state(key)
        now = self._now()
        if st.deadline is None or st.deadline < now:
            st.deadline = now + SCHEDULING_TIMEOUT_SECONDS
        return st.deadline - now

    # ------------------------------------------------------------------ PreEnqueue

    def pre_enqueue(self, pod: Pod) -> Status | None:
        key = self.group_key(pod)
        if key is None:
            return None
        policy, why = self._policy(key)
        if policy is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (why or "",))
        if policy.min_count is None:  # only gangs concern this plugin
            return None
        if len(self.group_pods(key)) < policy.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          ("waiting for minCount pods from a gang to appear in scheduling queue",))
        return None

    # ------------------------------------------------------------------ Reserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        key = self.group_key(pod)
        if key is not None:
            self._state(key).assumed.add(pod.uid)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key = self.group_key(pod)
        if key is not None:
            self._state(key).assumed.discard(pod.uid)

    # ------------------------------------------------------------------ Permit

    def permit(self, state: CycleState, pod: Pod, node_name: str
               ) -> tuple[Status | None, float]:
        key = self.group_key(pod)
        if key is None:
            return None, 0.0
        policy, _why = self._policy(key)
        if policy is None:
            # the object went away: an error, so that the pod is retried when it comes back
            ns, workload, group, _r = key
            what = f"workload {ns}/{workload}" if self.workload_api else f"podGroup {ns}/{group}"
            return Status(Code.ERROR, (f'failed to get {what}: not found',)), 0.0
        if policy.min_count is None:
            return None, 0.0
        scheduled = self.scheduled_count(key)
        st = self._state(key)
        if scheduled < policy.min_count:
            # the unscheduled members may have waited for this one: bring them forward
            unscheduled = [p for p in self.group_pods(key)
                           if not p.spec.node_name and p.uid not in st.assumed]
            if unscheduled:
                self.handle.activate(unscheduled)
            if self.workload_api:
                return Status(Code.WAIT, ("waiting for minCount pods from a gang to be "
                                          "waiting on permit",)), self.scheduling_timeout(key)
            return Status(Code.WAIT, ("waiting for minCount pods from a gang to be "
                                      "scheduled",)), SCHEDULING_TIMEOUT_SECONDS
        # quorum: this pod and every waiting member go on to bind
        for uid in sorted(st.assumed):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None, 0.0

    # ------------------------------------------------------------------ events

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if self.workload_api:
            return [
                ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.ADD),
                                     self.is_schedulable_after_pod_added),
                ClusterEventWithHint(ClusterEvent(WORKLOAD_RESOURCE, ActionType.ADD)),
            ]
        return [
            ClusterEventWithHint(ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.ADD),
                                 self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(Resource.ASSIGNED_POD, ActionType.ADD),
                                 self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(POD_GROUP_RESOURCE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(POD_GROUP_RESOURCE, ActionType.UPDATE)),
        ]

    def is_schedulable_after_pod_added(self, pod: Pod, old: Any, new: Any) -> Hint:
        """A pod of the same gang (same namespace and group; in v1.35 the whole workload
        reference) may complete its quorum."""
        if not isinstance(new, Pod):
            return Hint.QUEUE
        key = self.group_key(pod)
        if key is None or key != self.group_key(new):
            return Hint.SKIP
        return Hint.QUEUE
