"""The scheduler's shared DRA state (upstream's SharedDRAManager, ``dra_manager.go``): claims
whose allocation a scheduling cycle decided (Reserve) but PreBind has not written yet. They
count as allocated for every other pod, and a pod sharing such a claim waits for the write.
Shared by all profiles, as upstream's one manager per scheduler."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.dra.store import AllocatedState, DeviceID, allocated_devices, dra_index
from kubesched.api.dra.types import ResourceClaim


class DraManager:
    def __init__(self) -> None:
        self.in_flight: dict[str, ResourceClaim] = {}  # claim uid -> claim with allocation

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def signal_claim_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        self.in_flight[uid] = claim

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        return self.in_flight.pop(uid, None) is not None

    def allocated_devices(self, objects: Mapping[str, list[Any]] | None) -> set[DeviceID]:
        """ListAllAllocatedDevices: devices of allocated claims plus in-flight ones (an
        ``AllocatedDevices``: what changed since an earlier one can be asked of it)."""
        extra = [d for claim in self.in_flight.values() for d in allocated_devices(claim)]
        return dra_index(objects).allocated_set(extra)

    def allocated_state(self, objects: Mapping[str, list[Any]] | None,
                        consumable: bool) -> AllocatedState:
        """GatherAllocatedState (DRAConsumableCapacity on) or ListAllAllocatedDevices
        wrapped in an AllocatedState (off), as upstream's PreFilter chooses: allocated
        claims plus in-flight ones (what changed since an earlier one can be asked of it:
        ``AllocatedState.changed_since``)."""
        return dra_index(objects).allocated_state(consumable, self.in_flight.values())
