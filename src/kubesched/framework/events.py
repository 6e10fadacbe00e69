"""Cluster events and queueing hints (upstream fwk.ClusterEvent / QueueingHint)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any


class ActionType(IntFlag):
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_NODE_DECLARED_FEATURE = 1 << 12
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM | UPDATE_NODE_DECLARED_FEATURE
    )
    ALL = ADD | DELETE | UPDATE


class Resource:
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    WILDCARD = "*"


@dataclass(slots=True, frozen=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def __str__(self) -> str:
        return self.label or f"{self.resource}{self.action.name}"


class QueueingHint(IntEnum):
    SKIP = 0
    QUEUE = 1


# hint(pod, old_obj, new_obj) -> QueueingHint; raising counts as QUEUE (as upstream on error).
QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(slots=True, frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None


def _ev(resource: str, action: ActionType, label: str) -> ClusterEvent:
    return ClusterEvent(resource, action, label)


# Events the scheduler core raises (labels as upstream's event names, used in metrics).
NODE_ADD = _ev(Resource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = _ev(Resource.NODE, ActionType.DELETE, "NodeDelete")
ASSIGNED_POD_ADD = _ev(Resource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = _ev(Resource.ASSIGNED_POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = _ev(Resource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
UNSCHEDULABLE_TIMEOUT = _ev(Resource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = _ev(Resource.WILDCARD, ActionType.ALL, "ForceActivate")
EVENT_UNSCHEDULED_POD_ADD = _ev(Resource.UNSCHEDULED_POD, ActionType.ADD, "UnschedulablePodAdd")
EVENT_UNSCHEDULED_POD_UPDATE = _ev(
    Resource.UNSCHEDULED_POD, ActionType.UPDATE, "UnschedulablePodUpdate")
EVENT_UNSCHEDULED_POD_DELETE = _ev(
    Resource.UNSCHEDULED_POD, ActionType.DELETE, "UnschedulablePodDelete")
WILDCARD = _ev(Resource.WILDCARD, ActionType.ALL, "WildCardEvent")
