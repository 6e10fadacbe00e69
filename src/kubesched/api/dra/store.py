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


class DraIndex:
    """Lookups over one state of the DRA objects. Claims change through ``replace_claim``
    (which updates the index in place); everything else is rebuilt on a new key."""

    __slots__ = ("_allocated", "_by_pod", "_pos", "claims", "classes", "key", "objects",
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
        # device -> how many claims hold it; built on first use
        self._allocated: dict[DeviceID, int] | None = None
        # pod uid -> keys of the claims reserved for it or owned by it; built on first use
        self._by_pod: dict[str, set[str]] | None = None
        # claim key -> its position in objects["ResourceClaim"]; built on first use
        self._pos: dict[str, int] | None = None

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def allocated(self) -> dict[DeviceID, int]:
        if self._allocated is None:
            counts: dict[DeviceID, int] = {}
            for c in self.claims.values():
                for d in allocated_devices(c):
                    counts[d] = counts.get(d, 0) + 1
            self._allocated = counts
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
        pos = self.positions()
        return [self.claims[k] for k in sorted(keys, key=pos.__getitem__)]

    def positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {c.key: i for i, c in enumerate(self.objects.get("ResourceClaim", ()))
                         if isinstance(c, ResourceClaim)}
        return self._pos

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
        for d in allocated_devices(old) if old is not None else ():
            n = self._allocated.get(d, 0) - 1
            if n > 0:
                self._allocated[d] = n
            else:
                self._allocated.pop(d, None)
        for d in allocated_devices(new) if new is not None else ():
            self._allocated[d] = self._allocated.get(d, 0) + 1


def _pod_uids(claim: ResourceClaim) -> set[str]:
    """The pods a claim is reserved for, and its controlling owner when that is a pod."""
    out = {r.uid for r in claim.reserved_for}
    out.update(r.uid for r in claim.metadata.owner_references
               if r.controller and r.kind == "Pod")
    return out


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
    pos = idx.positions()
    i = -1
    if old is not None:
        i = pos.get(new.key, -1)
        if not (0 <= i < len(lst) and lst[i] is old):
            i = next((j for j, c in enumerate(lst) if c is old), -1)
    if i >= 0:
        lst[i] = new
        pos[new.key] = i
    else:
        pos[new.key] = len(lst)
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
    idx._pos = None  # later claims moved up
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
