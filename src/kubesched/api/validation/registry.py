"""Which kinds are validated how. Work that teaches kubesched a new kind (or new fields of a
known one) registers its validator here, and its schema with ``api.schema``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.validation import objects

Validator = Callable[[Mapping[str, Any]], None]

_VALIDATORS: dict[str, list[Validator]] = {
    "Pod": [objects.validate_pod],
    "Node": [objects.validate_node],
    "Namespace": [objects.validate_namespace],
    "PriorityClass": [objects.validate_priority_class],
    "PodDisruptionBudget": [objects.validate_pod_disruption_budget],
    "ReplicaSet": [objects.validate_controller],
    "ReplicationController": [objects.validate_controller],
    "StatefulSet": [objects.validate_controller],
    "Deployment": [objects.validate_controller],
    "DaemonSet": [objects.validate_controller],
    "Job": [objects.validate_job],
    "CronJob": [objects.validate_cron_job],
    "Service": [objects.validate_service],
    "PersistentVolume": [objects.validate_cluster_meta],
    "StorageClass": [objects.validate_cluster_meta],
    "CSINode": [objects.validate_cluster_meta],
    "CSIDriver": [objects.validate_cluster_meta],
    "CSIStorageCapacity": [objects.validate_namespaced_meta],
    "PersistentVolumeClaim": [objects.validate_namespaced_meta],
}


def register_validator(kind: str, validator: Validator) -> None:
    """Add ``validator`` for ``kind``; it raises ``InputError`` naming the field."""
    _VALIDATORS.setdefault(kind, []).append(validator)


def validate_object(kind: str, doc: Mapping[str, Any]) -> None:
    """The API server's validation of one object (already structurally checked)."""
    for validator in _VALIDATORS.get(kind, ()):
        validator(doc)
