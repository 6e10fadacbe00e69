"""The DRA objects of a cluster as the scheduler's listers see them: claims by
``namespace/name``, classes by name, the slices and taint rules, and the devices allocated
by claims (upstream's ``allocateddevices.go`` tracker, recomputed here when claims change).

Whoever changes a claim in ``objects`` (the simulator writing an allocation, the resourceclaim
controller releasing one) goes through :func:`replace_claim` / :func:`remove_claim`, which
keep the index current; any other change to the lists (an object added or removed) makes the
next :func:`dra_index` call rebuild it, keyed on the lists' identity and length.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.dra.types import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
)

DeviceID = tuple[str, str, str]  # driver, pool, device

_KINDS = ("ResourceClaim", "DeviceClass", "ResourceSlice", "DeviceTaintRule")
_IndexKey = tuple[tuple[int, int], ...]


def allocated_devices(claim: ResourceClaim) -> Iterable[DeviceID]:
    """The devices ``claim`` holds exclusively: admin access shares a device with others
    (upstream's foreachAllocatedDevice skips those results)."""
    if claim.allocation is None:
        return ()
    return [(r.driver, r.pool, r.device) for r in claim.allocation.results
            if not r.admin_access]


def shared_allocations(claim: ResourceClaim) -> Iterable[tuple[DeviceID, dict[str, Fraction]]]:
    """The results of ``claim`` that share a device allowing multiple allocations (they
    carry a shareID), with the capacity each consumes; admin access ones aside, as above."""
    if claim.allocation is None:
        return ()
    return [((r.driver, r.pool, r.device), r.consumed_capacity)
            for r in claim.allocation.results if not r.admin_access and r.share_id is not None]


@dataclass(slots=True)
class AllocatedState:
    """structured.AllocatedState: what allocated (and in-flight) claims hold. ``devices``
    are held exclusively; ``shared`` have shared allocations (upstream keeps their share
    IDs, only the device part is ever read); ``capacity`` sums what those consume per
    device (AggregatedCapacity). With DRAConsumableCapacity off every result is exclusive."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[DeviceID] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def add(self, claim: ResourceClaim, consumable: bool) -> None:
        """foreachAllocatedDevice's three callbacks for one claim."""
        shared = list(shared_allocations(claim)) if consumable else []
        exclusive = list(allocated_devices(claim))
        for d, consumed in shared:
            exclusive.remove(d)
            self.shared.add(d)
            if consumed:
                add_capacity(self.capacity, d, consumed)
        self.devices.update(exclusive)

    def is_allocated(self, d: DeviceID) -> bool:
        """IsDeviceAllocated: held exclusively or shared."""
        return d in self.devices or d in self.shared or d in self.capacity


def add_capacity(coll: dict[DeviceID, dict[str, Fraction]], d: DeviceID,
                 consumed: Mapping[str, Fraction]) -> None:
    """ConsumedCapacityCollection.Insert: the entry exists afterwards even when empty."""
    cur = coll.setdefault(d, {})
    for name, q in consumed.items():
        cur[name] = cur.get(name, Fraction(0)) + q


def remove_capacity(coll: dict[DeviceID, dict[str, Fraction]], d: DeviceID,
                    consumed: Mapping[str, Fraction]) -> None:
    """ConsumedCapacityCollection.Remove: names the entry lacks are ignored; an entry left
    all zero is dropped."""
    cur = coll.get(d)
    if cur is None:
        return
    for name, q in consumed.items():
        if name in cur:
            cur[name] -= q
    if all(v == 0 for v in cur.values()):
        del coll[d]


class DraIndex:
    """Lookups over one state of the DRA objects. Claims change through ``replace_claim``
    (which updates the index in place); everything else is rebuilt on a new key."""

    __slots__ = ("_allocated", "_capacity", "_shared", "claims", "classes", "key", "objects",
                 "slices", "taint_rules")

    def __init__(self, objects: Mapping[str, list[Any]], key: _IndexKey) -> None:
        self.objects = objects
        self.key = key
        self.claims: dict[str, ResourceClaim] = {
            c.key: c for c in objects.get("ResourceClaim", ()) if isinstance(c, ResourceClaim)}
        self.classes: dict[str, DeviceClass] = {
            c.name: c for c in objects.get("DeviceClass", ()) if isinstance(c, DeviceClass)}
        self.slices: list[ResourceSlice] = [
            s for s in objects.get("ResourceSlice", ()) if isinstance(s, ResourceSlice)]
        self.taint_rules: list[DeviceTaintRule] = [
            r for r in objects.get("DeviceTaintRule", ()) if isinstance(r, DeviceTaintRule)]
        # device -> how many claims hold it; built on first use. Of those, the shared
        # allocations (results with a shareID) are counted again in _shared, and their
        # consumed capacity summed in _capacity.
        self._allocated: dict[DeviceID, int] | None = None
        self._shared: dict[DeviceID, int] = {}
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def allocated(self) -> dict[DeviceID, int]:
        if self._allocated is None:
            self._allocated = {}
            self._shared, self._capacity = {}, {}
            for c in self.claims.values():
                self._count(c, 1)
        return self._allocated

    def allocated_state(self, consumable: bool) -> AllocatedState:
        """The allocated claims' AllocatedState (a copy the caller may extend)."""
        counts = self.allocated()
        if not consumable:
            return AllocatedState(set(counts))
        return AllocatedState(
            {d for d, n in counts.items() if n > self._shared.get(d, 0)},
            set(self._shared), {d: dict(c) for d, c in self._capacity.items()})

    def _count(self, claim: ResourceClaim, sign: int) -> None:
        assert self._allocated is not None
        for d in allocated_devices(claim):
            n = self._allocated.get(d, 0) + sign
            if n > 0:
                self._allocated[d] = n
            else:
                self._allocated.pop(d, None)
        for d, consumed in shared_allocations(claim):
            n = self._shared.get(d, 0) + sign
            if n > 0:
                self._shared[d] = n
            else:
                self._shared.pop(d, None)
            if consumed and sign > 0:
                add_capacity(self._capacity, d, consumed)
            elif consumed:
                remove_capacity(self._capacity, d, consumed)

    def _stored(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        if new is not None:
            self.claims[new.key] = new
        elif old is not None:
            self.claims.pop(old.key, None)
        if self._allocated is None:
            return
        if old is not None:
            self._count(old, -1)
        if new is not None:
            self._count(new, 1)


_INDEXES: dict[int, DraIndex] = {}  # id(objects) -> its index


def _key(objects: Mapping[str, list[Any]]) -> _IndexKey:
    out = []
    for kind in _KINDS:
        lst = objects.get(kind)
        out.append((id(lst), len(lst) if lst is not None else -1))
    return tuple(out)


def dra_index(objects: Mapping[str, list[Any]] | None) -> DraIndex:
    if objects is None:
        objects = {}
    key = _key(objects)
    idx = _INDEXES.get(id(objects))
    if idx is not None and idx.objects is objects and idx.key == key:
        return idx
    idx = DraIndex(objects, key)
    if len(_INDEXES) > 16:  # tests build many clusters; keep the live ones
        _INDEXES.clear()
    _INDEXES[id(objects)] = idx
    return idx


def replace_claim(objects: dict[str, list[Any]], new: ResourceClaim) -> ResourceClaim | None:
    """Store ``new`` in place of the claim of the same key (or add it); returns the old one."""
    idx = dra_index(objects)
    lst = objects.setdefault("ResourceClaim", [])
    old = idx.claims.get(new.key)
    if old is not None:
        for i, c in enumerate(lst):
            if c is old:
                lst[i] = new
                break
        else:
            lst.append(new)
    else:
        lst.append(new)
    idx._stored(old, new)
    idx.key = _key(objects)
    return old


def remove_claim(objects: dict[str, list[Any]], claim: ResourceClaim) -> ResourceClaim | None:
    """Delete the claim of ``claim``'s key; returns what was stored, or None."""
    idx = dra_index(objects)
    old = idx.claims.get(claim.key)
    if old is None:
        return None
    lst = objects.setdefault("ResourceClaim", [])
    lst[:] = [c for c in lst if c is not old]
    idx._stored(old, None)
    idx.key = _key(objects)
    return old


# ---------------------------------------------------------------- claim status helpers


def reserved_for_pod(claim: ResourceClaim, pod_uid: str) -> bool:
    """resourceclaim.IsReservedForPod."""
    return any(r.resource == "pods" and r.uid == pod_uid and not r.api_group
               for r in claim.reserved_for)


#: resource.k8s.io ResourceClaimReservedForMaxSize
RESERVED_FOR_MAX_SIZE = 256


def can_be_reserved(claim: ResourceClaim) -> bool:
    """resourceclaim.CanBeReserved: room for one more consumer."""
    return len(claim.reserved_for) < RESERVED_FOR_MAX_SIZE


def with_status(claim: ResourceClaim, **changes: Any) -> ResourceClaim:
    """A copy of ``claim`` with new status fields (allocation, reserved_for)."""
    return dataclasses.replace(claim, **changes)


def pod_reference(name: str, uid: str) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(resource="pods", name=name, uid=uid)


def devices_per_class(claims: Iterable[ResourceClaim]) -> dict[str, int]:
    """Allocated devices by the DeviceClass of the request (or subrequest) they serve."""
    out: dict[str, int] = {}
    for claim in claims:
        if claim.allocation is None:
            continue
        classes: dict[str, str] = {}
        for req in claim.spec.requests:
            if req.exactly is not None:
                classes[req.name] = req.exactly.device_class_name
            for sub in req.first_available:
                classes[f"{req.name}/{sub.name}"] = sub.device_class_name
        for r in claim.allocation.results:
            cls = classes.get(r.request, "")
            out[cls] = out.get(cls, 0) + 1
    return dict(sorted(out.items()))
