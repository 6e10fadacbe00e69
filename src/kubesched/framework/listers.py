"""Typed listers over the handle's cluster objects (upstream's informer listers).

``Handle.objects`` maps a kind to the stored objects of that kind; the backend fills it in and
replaces lists or the whole mapping as the cluster changes. A plugin reads it through these
methods, which look the kind up on every call (so a replaced list is seen at once) and return
the stored list itself, typed: read-only, never a copy. The loaders (the scenario's and the
kube backend's) store every kind typed as below; the index builders (``storage_index``,
``dra_index``, the gang look-ups) read the same mapping.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from kubesched.api.dra.types import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubesched.api.gangs import POD_GROUP_KIND, WORKLOAD_KIND
from kubesched.api.policy import PodDisruptionBudget
from kubesched.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

if TYPE_CHECKING:
    from kubesched.api.types import GenericObject

log = logging.getLogger(__name__)


class ObjectStore(Protocol):
    """Whatever holds the objects by kind (the Handle)."""

    objects: dict[str, list[Any]]


class Listers:
    """One method per kind a plugin reads; each returns the stored objects of its kind
    (empty when there are none)."""

    __slots__ = ("_store",)

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def _kind(self, kind: str) -> Sequence[Any]:
        return self._store.objects.get(kind) or ()

    # ---------------------------------------------------------------- core / apps / policy

    def services(self) -> Sequence[GenericObject]:
        return cast("Sequence[GenericObject]", self._kind("Service"))

    def replica_sets(self) -> Sequence[GenericObject]:
        return cast("Sequence[GenericObject]", self._kind("ReplicaSet"))

    def stateful_sets(self) -> Sequence[GenericObject]:
        return cast("Sequence[GenericObject]", self._kind("StatefulSet"))

    def replication_controllers(self) -> Sequence[GenericObject]:
        return cast("Sequence[GenericObject]", self._kind("ReplicationController"))

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        """The PDBs, typed. A backend that stored some raw (GenericObject) has them parsed
        here, on each call (then the list is a new one), those that do not parse left out
        with a warning."""
        pdbs = self._kind("PodDisruptionBudget")
        if all(isinstance(p, PodDisruptionBudget) for p in pdbs):
            return cast("Sequence[PodDisruptionBudget]", pdbs)
        from kubesched.api.policy import parse_pod_disruption_budget
        from kubesched.errors import InputError

        out: list[PodDisruptionBudget] = []
        for obj in pdbs:
            if not isinstance(obj, PodDisruptionBudget):
                try:
                    obj = parse_pod_disruption_budget(obj.raw)
                except (InputError, AttributeError) as e:
                    log.warning("skipping a PodDisruptionBudget that does not parse: %s", e)
                    continue
            out.append(obj)
        return out

    # ---------------------------------------------------------------- storage

    def persistent_volumes(self) -> Sequence[PersistentVolume]:
        return cast("Sequence[PersistentVolume]", self._kind("PersistentVolume"))

    def persistent_volume_claims(self) -> Sequence[PersistentVolumeClaim]:
        return cast("Sequence[PersistentVolumeClaim]", self._kind("PersistentVolumeClaim"))

    def storage_classes(self) -> Sequence[StorageClass]:
        return cast("Sequence[StorageClass]", self._kind("StorageClass"))

    def csi_nodes(self) -> Sequence[CSINode]:
        return cast("Sequence[CSINode]", self._kind("CSINode"))

    def csi_drivers(self) -> Sequence[CSIDriver]:
        return cast("Sequence[CSIDriver]", self._kind("CSIDriver"))

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return cast("Sequence[CSIStorageCapacity]", self._kind("CSIStorageCapacity"))

    # ---------------------------------------------------------------- resource.k8s.io

    def device_classes(self) -> Sequence[DeviceClass]:
        return cast("Sequence[DeviceClass]", self._kind("DeviceClass"))

    def resource_slices(self) -> Sequence[ResourceSlice]:
        return cast("Sequence[ResourceSlice]", self._kind("ResourceSlice"))

    def resource_claims(self) -> Sequence[ResourceClaim]:
        return cast("Sequence[ResourceClaim]", self._kind("ResourceClaim"))

    def resource_claim_templates(self) -> Sequence[ResourceClaimTemplate]:
        return cast("Sequence[ResourceClaimTemplate]", self._kind("ResourceClaimTemplate"))

    def device_taint_rules(self) -> Sequence[DeviceTaintRule]:
        return cast("Sequence[DeviceTaintRule]", self._kind("DeviceTaintRule"))

    # ---------------------------------------------------------------- gangs

    def pod_groups(self) -> Sequence[GenericObject]:
        """scheduler-plugins' and upstream's PodGroups alike (``api.gangs`` tells them
        apart by apiVersion)."""
        return cast("Sequence[GenericObject]", self._kind(POD_GROUP_KIND))

    def workloads(self) -> Sequence[GenericObject]:
        return cast("Sequence[GenericObject]", self._kind(WORKLOAD_KIND))
