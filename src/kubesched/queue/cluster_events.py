"""Cluster-event helpers the queue needs, with upstream's exact semantics.

* ``match_cluster_events`` is upstream's ``framework.MatchClusterEvents`` (v1.35): a registered
  event covers an incoming one when the registered event is the wildcard, or when the resources
  match (a registered ``Pod`` covers ``AssignedPod`` and ``UnschedulablePod``) and the incoming
  action bits are a non-empty subset-by-value of the registered ones
  (``reg & inc != 0 and inc <= reg``). An incoming wildcard event therefore only matches a
  registered wildcard.
* ``pod_scheduling_properties_change`` is ``framework.PodSchedulingPropertiesChange``: the
  Pod/Update events derived from an update, in upstream's order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kubesched.api.types import Pod
from kubesched.framework.events import ActionType, ClusterEvent, Resource


def is_wildcard(ev: ClusterEvent) -> bool:
    """``framework.ClusterEventIsWildCard``."""
    return ev.resource == Resource.WILDCARD and ev.action == ActionType.ALL


def _match_resources(registered: str, incoming: str) -> bool:
    return (registered == Resource.WILDCARD or registered == incoming
            or (registered == Resource.POD
                and incoming in (Resource.ASSIGNED_POD, Resource.UNSCHEDULED_POD)))


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Does the ``registered`` event (from EventsToRegister) cover ``incoming``?"""
    if is_wildcard(registered):
        return True
    reg, inc = int(registered.action), int(incoming.action)
    return _match_resources(registered.resource, incoming.resource) and bool(reg & inc) \
        and inc <= reg


def match_any_cluster_event(incoming: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    """``framework.MatchAnyClusterEvent``."""
    return any(match_cluster_events(r, incoming) for r in registered)


def pod_scheduling_properties_change(new_pod: Pod, old_pod: Pod) -> list[ClusterEvent]:
    """The update events of a pod, as upstream derives them (labels, scale down, scheduling
    gates eliminated, tolerations; the generated-resource-claim event is not derived because
    DRA is not implemented). ``AssignedPod`` or ``UnschedulablePod`` after ``new_pod``'s
    nodeName; a plain ``Update`` when nothing specific changed."""
    resource = Resource.ASSIGNED_POD if new_pod.spec.node_name else Resource.UNSCHEDULED_POD
    actions: list[ActionType] = []
    if new_pod.metadata.labels != old_pod.metadata.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(new_pod, old_pod):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new_pod.spec.scheduling_gates and old_pod.spec.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new_pod.spec.tolerations) != len(old_pod.spec.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, a) for a in actions]


def _scaled_down(new_pod: Pod, old_pod: Pod) -> bool:
    new_req = new_pod.requests
    for name, old_val in old_pod.requests.items():
        if name not in new_req or old_val > new_req[name]:
            return True
    return False


def le_priority_pre_check(priority: int) -> Callable[[Pod], bool]:
    """Upstream's ``getLEPriorityPreCheck``: only pods of lower or equal priority."""
    return lambda pod: pod.priority <= priority
