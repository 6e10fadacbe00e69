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
# per kind: the id of its list (held by the index: see ``_stamp``) and its length (-1: none)
_IndexKey = tuple[int, ...]


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
    # where it was taken (DraIndex.allocated_state): the index, the length of its
    # allocation log then, the in-flight claims' devices added, and its sizes and number
    # of ``add`` calls then (``seal``), to tell a state changed since it was taken
    index: DraIndex | None = field(default=None, repr=False, compare=False)
    log_pos: int = field(default=0, repr=False, compare=False)
    extra: frozenset[DeviceID] = field(default=frozenset(), repr=False, compare=False)
    edits: int = field(default=0, repr=False, compare=False)
    sealed: tuple[int, int, int, int] | None = field(default=None, repr=False,
                                                     compare=False)

    def seal(self) -> None:
        """Record the state's sizes: ``unchanged`` is False once it is extended."""
        self.sealed = (len(self.devices), len(self.shared), len(self.capacity), self.edits)

    def unchanged(self) -> bool:
        """Sealed and neither extended (``add``) nor resized since (a change in place of a
        capacity sum alone is not seen: nobody makes one)."""
        return self.sealed == (len(self.devices), len(self.shared), len(self.capacity),
                               self.edits)

    def changed_since(self, before: AllocatedState) -> Iterable[DeviceID] | None:
        """A superset of the devices whose part of the state (held, shared, consumed
        capacity) differs between ``before`` and this state; None when it cannot be told
        from the log (another index, or a state changed after it was taken). The
        in-flight devices of both count whole: two in-flight claims sharing one device
        may consume differently."""
        if self.index is None or before.index is not self.index or \
                not self.unchanged() or not before.unchanged() or \
                before.log_pos > self.log_pos:
            return None
        return [*self.index.allocation_log[before.log_pos:self.log_pos],
                *(self.extra | before.extra)]

    def add(self, claim: ResourceClaim, consumable: bool) -> None:
        """foreachAllocatedDevice's three callbacks for one claim."""
        self.edits += 1
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

    __slots__ = ("_allocated", "_by_pod", "_cap_holders", "_capacity", "_exclusive", "_pos",
                 "_shared", "_shift", "allocation_log", "claims", "classes", "held", "key",
                 "objects", "slices", "taint_rules")

    def __init__(self, objects: Mapping[str, list[Any]], key: _IndexKey) -> None:
        self.objects = objects
        self.key = key
        self.held: tuple[list[Any] | None, ...] = ()
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
        # consumed capacity summed in _capacity. From then on every device of a claim that
        # is stored or removed is appended to ``allocation_log`` (whatever changed of it:
        # held or freed, shared, consumed capacity).
        self._allocated: dict[DeviceID, int] | None = None
        self._shared: dict[DeviceID, int] = {}
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # device -> how many shares consume some of it: its _capacity entry lives as long
        # (as in a GatherAllocatedState afresh, where a share consuming 0 still makes one)
        self._cap_holders: dict[DeviceID, int] = {}
        # the devices some claim holds without a share (more holders than shares): the
        # exclusively held devices of GatherAllocatedState, kept as claims change
        self._exclusive: set[DeviceID] = set()
        self.allocation_log: list[DeviceID] = []
        # pod uid -> keys of the claims reserved for it or owned by it; built on first use
        self._by_pod: dict[str, set[str]] | None = None
        # claim key -> its position in objects["ResourceClaim"] when recorded; built on
        # first use. ``_shift`` claims were deleted since it was built: a claim is at most
        # that many places before its recorded position (see ``find``).
        self._pos: dict[str, int] | None = None
        self._shift = 0

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def allocated(self) -> dict[DeviceID, int]:
        if self._allocated is None:
            self._allocated = {}
            self._shared, self._capacity, self._cap_holders = {}, {}, {}
            self._exclusive = set()
            for c in self.claims.values():
                self._count(c, 1, log=False)
        return self._allocated

    def claims_of_pod(self, uid: str) -> list[ResourceClaim]:
        """The claims reserved for the pod ``uid`` or owned by it (the resourceclaim
        controller's and garbage collector's concern when it is gone), in list order."""
        if self._by_pod is None:
            self._by_pod = {}
            for c in self.claims.values():
                for u in _pod_uids(c):
                    self._by_pod.setdefault(u, set()).add(c.key)
        keys = self._by_pod.get(uid)
        if not keys:
            return []
        if len(keys) == 1:
            return [self.claims[k] for k in keys]
        if self._shift:  # recorded positions may be out of order: exact ones
            self._pos = None
        pos = self._positions()
        return [self.claims[k] for k in sorted(keys, key=pos.__getitem__)]

    def _positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {c.key: i for i, c in enumerate(self.objects.get("ResourceClaim", ()))
                         if isinstance(c, ResourceClaim)}
            self._shift = 0
        return self._pos

    def find(self, lst: list[Any], claim: ResourceClaim) -> int:
        """The position of ``claim`` (by identity) in ``lst``, the claims' list; -1 if
        absent. Looks between its recorded position and as many places before it as
        claims were deleted since, then everywhere."""
        p = self._positions().get(claim.key, -1)
        if p >= 0:
            for j in range(min(p, len(lst) - 1), max(0, p - self._shift) - 1, -1):
                if lst[j] is claim:
                    return j
        return next((j for j, c in enumerate(lst) if c is claim), -1)

    def allocated_state(self, consumable: bool,
                        in_flight: Iterable[ResourceClaim] = ()) -> AllocatedState:
        """The allocated claims' AllocatedState plus the ``in_flight`` claims' devices (a
        new state the caller may extend), knowing where in ``allocation_log`` it was taken
        (``AllocatedState.changed_since``)."""
        counts = self.allocated()
        if not consumable:
            state = AllocatedState(set(counts))
        else:
            state = AllocatedState(
                set(self._exclusive), set(self._shared),
                {d: dict(c) for d, c in self._capacity.items()})
        extra: set[DeviceID] = set()
        for claim in in_flight:
            state.add(claim, consumable)
            extra.update(allocated_devices(claim))
        state.index, state.log_pos, state.extra = self, len(self.allocation_log), \
            frozenset(extra)
        state.seal()
        return state

    def _count(self, claim: ResourceClaim, sign: int, log: bool = True) -> None:
        assert self._allocated is not None
        devices = allocated_devices(claim)
        if log:
            # every device of the claim: its holders, shares or consumed capacity changed
            self.allocation_log.extend(devices)
        for d in devices:
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
            if not consumed:
                continue
            holders = self._cap_holders.get(d, 0) + sign
            if sign > 0:
                add_capacity(self._capacity, d, consumed)
            elif holders <= 0:
                self._capacity.pop(d, None)
            else:
                cur = self._capacity[d]
                for name, q in consumed.items():
                    cur[name] -= q
            if holders > 0:
                self._cap_holders[d] = holders
            else:
                self._cap_holders.pop(d, None)
        exclusive, shared, allocated = self._exclusive, self._shared, self._allocated
        for d in devices:
            if allocated.get(d, 0) > shared.get(d, 0):
                exclusive.add(d)
            else:
                exclusive.discard(d)

    def _stored(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        if new is not None:
            self.claims[new.key] = new
        elif old is not None:
            self.claims.pop(old.key, None)
        by_pod = self._by_pod
        if by_pod is not None:
            if old is not None:
                for u in _pod_uids(old):
                    keys = by_pod.get(u)
                    if keys is not None:
                        keys.discard(old.key)
                        if not keys:
                            del by_pod[u]
            if new is not None:
                for u in _pod_uids(new):
                    by_pod.setdefault(u, set()).add(new.key)
        if self._allocated is None:
            return
        if old is not None:
            self._count(old, -1)
        if new is not None:
            self._count(new, 1)

    def allocated_set(self, extra: Iterable[DeviceID] = ()) -> AllocatedDevices:
        """The allocated devices now, plus ``extra`` (in-flight allocations), as a set that
        knows where in ``allocation_log`` it was taken."""
        out = AllocatedDevices(self.allocated())
        extra = frozenset(extra)
        out.update(extra)
        out.index, out.log_pos, out.extra, out.size = self, len(self.allocation_log), extra, \
            len(out)
        return out


class AllocatedDevices(set[DeviceID]):
    """A set of allocated devices taken from a DraIndex (``allocated_set``): the devices
    that can differ between two such sets of one index are those logged between their
    ``log_pos`` and those of their ``extra`` (while neither was changed since: ``size``)."""

    __slots__ = ("extra", "index", "log_pos", "size")

    index: DraIndex | None
    log_pos: int
    extra: frozenset[DeviceID]
    size: int

    def changed_since(self, before: AllocatedDevices) -> Iterable[DeviceID] | None:
        """A superset of the devices in one set and not the other; None when it cannot be
        told from the log (another index, or a set changed after it was taken)."""
        if self.index is None or before.index is not self.index or \
                len(self) != self.size or len(before) != before.size or \
                before.log_pos > self.log_pos:
            return None
        return [*self.index.allocation_log[before.log_pos:self.log_pos],
                *(self.extra ^ before.extra)]


def _pod_uids(claim: ResourceClaim) -> set[str]:
    """The pods a claim is reserved for, and its controlling owner when that is a pod."""
    out = {r.uid for r in claim.reserved_for}
    out.update(r.uid for r in claim.metadata.owner_references
               if r.controller and r.kind == "Pod")
    return out


# The indexes of the last objects dicts asked about, most recent first (tests build many
# clusters; a scheduler asks about its own). Each holds its dict, so identity is safe.
_RECENT: list[DraIndex] = []
_RECENT_MAX = 16


def _key(objects: Mapping[str, list[Any]]) -> _IndexKey:
    out: list[int] = []
    for kind in _KINDS:
        lst = objects.get(kind)
        out.append(id(lst))
        out.append(len(lst) if lst is not None else -1)
    return tuple(out)


def _stamp(idx: DraIndex, objects: Mapping[str, list[Any]]) -> None:
    """``idx`` is up to date with ``objects``' lists as they are now: it holds them, so no
    other list takes the ids its key names while it lives."""
    idx.key = _key(objects)
    idx.held = tuple(objects.get(kind) for kind in _KINDS)


def dra_index(objects: Mapping[str, list[Any]] | None) -> DraIndex:
    if objects is None:
        objects = {}
    key = _key(objects)
    if _RECENT:  # mostly the last one asked about
        idx = _RECENT[0]
        if idx.objects is objects and idx.key == key:
            return idx
    for i, idx in enumerate(_RECENT):
        if idx.objects is objects:
            if idx.key == key:
                if i:
                    _RECENT.insert(0, _RECENT.pop(i))
                return idx
            del _RECENT[i]
            break
    idx = DraIndex(objects, key)
    _stamp(idx, objects)
    _RECENT.insert(0, idx)
    del _RECENT[_RECENT_MAX:]
    return idx


def replace_claim(objects: dict[str, list[Any]], new: ResourceClaim) -> ResourceClaim | None:
    """Store ``new`` in place of the claim of the same key (or add it); returns the old one."""
    idx = dra_index(objects)
    lst = objects.setdefault("ResourceClaim", [])
    old = idx.claims.get(new.key)
    i = idx.find(lst, old) if old is not None else -1
    pos = idx._positions()
    if i >= 0:
        lst[i] = new
        pos[new.key] = i
    else:
        pos[new.key] = len(lst)
        lst.append(new)
    idx._stored(old, new)
    _stamp(idx, objects)
    return old


def remove_claim(objects: dict[str, list[Any]], claim: ResourceClaim) -> ResourceClaim | None:
    """Delete the claim of ``claim``'s key; returns what was stored, or None."""
    idx = dra_index(objects)
    old = idx.claims.get(claim.key)
    if old is None:
        return None
    lst = objects.setdefault("ResourceClaim", [])
    i = idx.find(lst, old)
    if i >= 0:
        del lst[i]
        pos = idx._positions()
        pos.pop(old.key, None)
        idx._shift += 1  # the claims after it moved up one place
        if idx._shift > 256:
            idx._pos = None
    idx._stored(old, None)
    _stamp(idx, objects)
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
