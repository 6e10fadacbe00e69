"""What the API server does differently with new DRA objects when a feature gate is off:
the registry strategies' ``dropDisabledFields`` (run before validation) drop the fields of
DRAConsumableCapacity (KEP-5075), of DRADeviceBindingConditions with
DRAResourceClaimDeviceStatus (KEP-5007) and of DRAListTypeAttributes (KEP-5491: the list
values of device attributes, resourceslice ``strategy.go`` 02d4c8c3), and the CEL environment
for new expressions has no ``device.allowMultipleAllocations`` without DRAConsumableCapacity
and no ``includes`` function without DRAListTypeAttributes. The simulated API server
runs with the run's gates (``--kubernetes-version``'s defaults and ``--feature-gates``), as a
cluster started with the same flags for every component would.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from kubesched.api.validation.errors import invalid

Gates = Callable[[str], bool]

#: a DeviceAttribute's list values (DRAListTypeAttributes)
LIST_ATTRIBUTE_FIELDS = ("ints", "bools", "strings", "versions")


def _devices(spec: Any) -> Iterator[tuple[str, MutableMapping[str, Any]]]:
    for i, d in enumerate(spec.get("devices") or () if isinstance(spec, dict) else ()):
        if isinstance(d, dict):
            basic = d.get("basic")  # v1beta1 wraps the fields
            if isinstance(basic, dict):
                yield f"spec.devices[{i}].basic", basic
            else:
                yield f"spec.devices[{i}]", d


def _drop(obj: MutableMapping[str, Any], key: str, path: str, dropped: list[str]) -> None:
    if obj.pop(key, None) is not None:
        dropped.append(f"{path}.{key}")


def _slice(doc: MutableMapping[str, Any], enabled: Gates, dropped: list[str]) -> None:
    consumable = enabled("DRAConsumableCapacity")
    binding = (enabled("DRADeviceBindingConditions")
               and enabled("DRAResourceClaimDeviceStatus"))
    lists = enabled("DRAListTypeAttributes")
    for path, dev in _devices(doc.get("spec")):
        if not consumable:
            _drop(dev, "allowMultipleAllocations", path, dropped)
            for name, cap in (dev.get("capacity") or {}).items():
                if isinstance(cap, dict):
                    _drop(cap, "requestPolicy", f"{path}.capacity[{name}]", dropped)
        if not binding:
            for key in ("bindingConditions", "bindingFailureConditions", "bindsToNode"):
                _drop(dev, key, path, dropped)
        if not lists:
            # an attribute left without a value is then refused by validation, as upstream
            for name, attr in (dev.get("attributes") or {}).items():
                if isinstance(attr, dict):
                    for key in LIST_ATTRIBUTE_FIELDS:
                        _drop(attr, key, f"{path}.attributes[{name}]", dropped)


def _claim_spec(devices: Any, path: str, enabled: Gates, dropped: list[str]) -> None:
    if enabled("DRAConsumableCapacity") or not isinstance(devices, dict):
        return
    for i, c in enumerate(devices.get("constraints") or ()):
        if isinstance(c, dict):
            _drop(c, "distinctAttribute", f"{path}.constraints[{i}]", dropped)
    for i, r in enumerate(devices.get("requests") or ()):
        if not isinstance(r, dict):
            continue
        p = f"{path}.requests[{i}]"
        exactly = r.get("exactly")
        if isinstance(exactly, dict):
            _drop(exactly, "capacity", f"{p}.exactly", dropped)
        elif "deviceClassName" in r:  # v1beta1: the request itself
            _drop(r, "capacity", p, dropped)
        for j, sub in enumerate(r.get("firstAvailable") or ()):
            if isinstance(sub, dict):
                _drop(sub, "capacity", f"{p}.firstAvailable[{j}]", dropped)


def drop_disabled_fields(kind: str, doc: MutableMapping[str, Any], enabled: Gates) -> list[str]:
    """Remove from ``doc`` (in place) the fields its kind's strategy drops with the gates
    ``enabled`` says are off; returns their paths."""
    dropped: list[str] = []
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return dropped
    if kind == "ResourceSlice":
        _slice(doc, enabled, dropped)
    elif kind == "ResourceClaim":
        _claim_spec(spec.get("devices"), "spec.devices", enabled, dropped)
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        if isinstance(inner, dict):
            _claim_spec(inner.get("devices"), "spec.spec.devices", enabled, dropped)
    return dropped


_MULTI_ALLOC = re.compile(r"\bdevice\s*\.\s*allowMultipleAllocations\b")


def _selectors(kind: str, spec: Any) -> Iterator[tuple[str, Any]]:
    """Every CEL selector of a new object, with its field path."""
    def of(selectors: Any, path: str) -> Iterator[tuple[str, Any]]:
        for i, sel in enumerate(selectors or () if isinstance(selectors, list) else ()):
            cel = sel.get("cel") if isinstance(sel, dict) else None
            if isinstance(cel, dict):
                yield f"{path}[{i}].cel.expression", cel.get("expression")

    if kind == "DeviceClass":
        yield from of(spec.get("selectors"), "spec.selectors")
    elif kind == "DeviceTaintRule":
        sel = spec.get("deviceSelector")
        if isinstance(sel, dict):
            yield from of(sel.get("selectors"), "spec.deviceSelector.selectors")
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        base, devices = "spec.devices", spec.get("devices")
        if kind == "ResourceClaimTemplate":
            inner = spec.get("spec")
            base, devices = "spec.spec.devices", (inner.get("devices")
                                                  if isinstance(inner, dict) else None)
        for i, r in enumerate((devices or {}).get("requests") or ()
                              if isinstance(devices, dict) else ()):
            if not isinstance(r, dict):
                continue
            p = f"{base}.requests[{i}]"
            exactly = r.get("exactly")
            if isinstance(exactly, dict):
                yield from of(exactly.get("selectors"), f"{p}.exactly.selectors")
            else:
                yield from of(r.get("selectors"), f"{p}.selectors")
            for j, sub in enumerate(r.get("firstAvailable") or ()):
                if isinstance(sub, dict):
                    yield from of(sub.get("selectors"), f"{p}.firstAvailable[{j}].selectors")


_INCLUDES = re.compile(r"\.\s*includes\s*\(")


def check_new_expressions(kind: str, doc: MutableMapping[str, Any], enabled: Gates) -> None:
    """The API server compiles new selectors in the environment of its gates: with
    DRAConsumableCapacity off the device has no ``allowMultipleAllocations`` (upstream's
    type checker: "undefined field"), with DRAListTypeAttributes off there is no
    ``includes`` function ("undeclared reference"). kubesched's one CEL environment has both
    (as upstream's for stored expressions), so the check is made here."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    consumable = enabled("DRAConsumableCapacity")
    lists = enabled("DRAListTypeAttributes")
    if consumable and lists:
        return
    for path, expr in _selectors(kind, spec):
        if not isinstance(expr, str):
            continue
        if not consumable and _MULTI_ALLOC.search(expr):
            invalid(path, expr, "compilation failed: undefined field "
                                "'allowMultipleAllocations'")
        if not lists and _INCLUDES.search(expr):
            invalid(path, expr, "compilation failed: undeclared reference to 'includes' "
                                "(in container '')")
