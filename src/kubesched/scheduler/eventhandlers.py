"""The event handlers: what the scheduler does with each object event (upstream's
``eventhandlers.go``).

The backend (the simulator's API server, or the kube backend's informers) calls the ``on_*``
methods; each updates the cache or the queue's unscheduled side, then tells the queue the
cluster event so that queueing hints move the pods it may help.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.types import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.framework import events as ev
from kubesched.framework.handle import Handle
from kubesched.framework.runtime import Framework
from kubesched.queue import SchedulingQueue
from kubesched.queue.cluster_events import le_priority_pre_check, pod_scheduling_properties_change


class EventHandlers:
    """The Scheduler's event handlers (a base of ``Scheduler``), with the parts of its state
    they read."""

    cache: Cache
    queue: SchedulingQueue
    profiles: dict[str, Framework]
    handle: Handle
    pending: dict[str, Pod]
    # whether a pending pod's arrival is an event some plugin waits for
    # (``waits_for_unscheduled_add``)
    _unscheduled_add_matters: bool
    # events that may change what the plugins read besides the cache (a failed attempt is
    # replayed only while it stays the same, ``failures``): every event but a pending pod's
    # arrival, update or deletion — nothing a signing PreFilter, Filter or PostFilter plugin
    # reads of it, since failures are replayed only while no pod is nominated anywhere, and
    # each nomination and its clearing counts
    world_changes: int = 0
    # events of objects other than pods and nodes (what a node's row of the table does not
    # hold: Filter verdicts kept per row are dropped when it moves)
    object_changes: int = 0

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.profiles

    def not_served(self, pod: Pod) -> str:
        """What is said of a pending pod no profile serves (upstream's scheduler ignores it:
        another scheduler's, or a typo that leaves it Pending for ever)."""
        return (f'no profile serves schedulerName "{pod.spec.scheduler_name}" '
                f"(profiles: {', '.join(self.profiles)})")

    def on_node_add(self, node: Node) -> None:
        self.world_changes += 1
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, node)

    def on_nodes_add(self, nodes: list[Node]) -> None:
        """``on_node_add`` for each of ``nodes`` (added at one instant), the queue told of
        them together (``move_all_after_nodes_added``: the pods upstream's one event per node
        moves, asked less often)."""
        self.world_changes += 1
        for node in nodes:
            self.cache.add_node(node)
        self.queue.move_all_after_nodes_added(nodes)

    def on_node_update(self, old: Node, new: Node) -> None:
        self.world_changes += 1
        self.cache.update_node(old, new)
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def on_node_delete(self, node: Node) -> None:
        self.world_changes += 1
        self.cache.remove_node(node)
        self.queue.move_all_to_active_or_backoff(ev.NODE_DELETE, node, None)

    # With queueing hints on (v1.35's default) every assigned-pod event goes through the
    # hints of all unschedulable pods.
    def on_pod_add(self, pod: Pod) -> None:
        if pod.spec.node_name or pod.status.nominated_node_name:
            self.world_changes += 1
        if pod.spec.node_name:
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_ADD, None, pod)
        elif self.responsible_for(pod):
            self.pending[pod.uid] = pod
            self.queue.add(pod)
            if self._unscheduled_add_matters:
                uid = pod.uid
                self.queue.move_all_to_active_or_backoff(ev.EVENT_UNSCHEDULED_POD_ADD, None, pod,
                                                         lambda p: p.uid != uid)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if (new.spec.node_name or old.spec.node_name
                or new.status.nominated_node_name != old.status.nominated_node_name):
            self.world_changes += 1
        if new.spec.node_name:
            if old.spec.node_name:
                self.cache.update_pod(old, new)
                for event in pod_scheduling_properties_change(new, old):
                    self.queue.move_all_to_active_or_backoff(event, old, new)
                return
            # just bound: leaves the unscheduled side, joins the assigned side
            if self.pending.pop(new.uid, None) is not None:
                self.queue.delete(old)
            self.on_pod_add(new)
        elif self.responsible_for(new):
            self.pending[new.uid] = new
            nnn = old.status.nominated_node_name
            if nnn and nnn != new.status.nominated_node_name:
                # the room held for it may now serve pods of lower or equal priority
                self.queue.move_all_to_active_or_backoff(
                    ev.ASSIGNED_POD_DELETE, old, None, le_priority_pre_check(old.priority))
            if self.cache.is_assumed(new):
                return
            self.queue.update(old, new)

    def on_pod_delete(self, pod: Pod) -> None:
        if pod.spec.node_name or pod.status.nominated_node_name:
            self.world_changes += 1
        if pod.spec.node_name:
            if self.cache.get_pod(pod.uid) is not None:
                self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
        else:
            self.pending.pop(pod.uid, None)
            self.queue.delete(pod)
            self.handle.reject_waiting_pod(pod.uid)  # its binding cycle fails, forgetting it
            if pod.status.nominated_node_name:
                self.queue.move_all_to_active_or_backoff(
                    ev.ASSIGNED_POD_DELETE, pod, None, le_priority_pre_check(pod.priority))

    # PersistentVolume / PersistentVolumeClaim / StorageClass / CSINode events. The backend
    # has already stored the object in handle.objects (the informers' caches); the queue
    # hears of it as upstream's event handlers tell it (a plain Add / Update / Delete).
    def on_storage_object_add(self, obj: Any) -> None:
        self._storage_event(obj.kind, ev.ActionType.ADD, None, obj)

    def on_storage_object_update(self, old: Any, new: Any) -> None:
        self._storage_event(new.kind, ev.ActionType.UPDATE, old, new)

    def on_storage_object_delete(self, obj: Any) -> None:
        self._storage_event(obj.kind, ev.ActionType.DELETE, obj, None)

    def _storage_event(self, kind: str, action: ev.ActionType, old: Any, new: Any) -> None:
        self.on_object_event(STORAGE_EVENT_RESOURCES[kind], action, old, new)

    def on_object_event(self, resource: str, action: ev.ActionType, old: Any, new: Any
                        ) -> None:
        """Any other object's change (a gang's PodGroup or Workload, ...), already stored in
        handle.objects by the backend: the queue hears of it under ``resource``, the name
        the plugins register their events with."""
        self.world_changes += 1
        self.object_changes += 1
        label = f"{resource}{STORAGE_EVENT_ACTIONS[action]}"
        self.queue.move_all_to_active_or_backoff(ev.ClusterEvent(resource, action, label),
                                                 old, new)


STORAGE_EVENT_RESOURCES = {
    "PersistentVolume": ev.Resource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": ev.Resource.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": ev.Resource.STORAGE_CLASS,
    "CSINode": ev.Resource.CSI_NODE,
    "CSIDriver": ev.Resource.CSI_DRIVER,
    "CSIStorageCapacity": ev.Resource.CSI_STORAGE_CAPACITY,
    # DRA objects take the same path (stored by the backend, then the queue told)
    "ResourceClaim": ev.Resource.RESOURCE_CLAIM,
    "ResourceSlice": ev.Resource.RESOURCE_SLICE,
    "DeviceClass": ev.Resource.DEVICE_CLASS,
}
STORAGE_EVENT_ACTIONS = {ev.ActionType.ADD: "Add", ev.ActionType.UPDATE: "Update",
                         ev.ActionType.DELETE: "Delete"}


def node_update_events(old: Node, new: Node) -> list[ev.ClusterEvent]:
    """The Node update events upstream derives from what changed
    (nodeSchedulingPropertiesChange)."""
    out = []
    if old.status.allocatable != new.status.allocatable:
        out.append(ev.ClusterEvent(ev.Resource.NODE, ev.ActionType.UPDATE_NODE_ALLOCATABLE,
                                   "NodeAllocatableChange"))
    if old.metadata.labels != new.metadata.labels:
        out.append(ev.ClusterEvent(ev.Resource.NODE, ev.ActionType.UPDATE_NODE_LABEL,
                                   "NodeLabelChange"))
    if old.spec.taints != new.spec.taints or old.spec.unschedulable != new.spec.unschedulable:
        out.append(ev.ClusterEvent(ev.Resource.NODE, ev.ActionType.UPDATE_NODE_TAINT,
                                   "NodeTaintChange"))
    if old.metadata.annotations != new.metadata.annotations:
        out.append(ev.ClusterEvent(ev.Resource.NODE, ev.ActionType.UPDATE_NODE_ANNOTATION,
                                   "NodeAnnotationChange"))
    if old.status.declared_features != new.status.declared_features:
        out.append(ev.ClusterEvent(ev.Resource.NODE, ev.ActionType.UPDATE_NODE_DECLARED_FEATURE,
                                   "NodeDeclaredFeatureChange"))
    return out


def waits_for_unscheduled_add(fwk: Framework) -> bool:
    """Whether a PreEnqueue or Permit plugin of ``fwk`` (the gang plugins) registered for
    unscheduled pods' Add. Other plugins' hints skip unscheduled pods, so the event is sent
    only when it can matter (on every arrival it would cost a pass over the unschedulable
    pods)."""
    waiting = {p.name for p in (*fwk.pre_enqueue, *fwk.permit)}
    for name, events in fwk.enqueue_extensions().items():
        if name not in waiting:
            continue
        for e in events:
            ce = e.event
            if ce.resource in (ev.Resource.POD, ev.Resource.UNSCHEDULED_POD) and \
                    ce.action & ev.ActionType.ADD:
                return True
    return False
