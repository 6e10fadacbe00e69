"""The API server's validation of resource.k8s.io objects, the parts a scenario can get wrong
in ways that matter to scheduling: CEL selectors that do not compile (the API server compiles
every stored expression), duplicate device names in a ResourceSlice, duplicate request names,
counts, and constraints naming unknown requests. Raw documents, already structurally checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from kubesched.api.dra.cel import (
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CelCompileError,
    compile_selector,
)
from kubesched.api.validation.errors import duplicate, forbidden, invalid, required
from kubesched.api.validation.registry import register_validator
from kubesched.errors import InputError


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, dict) else {}


def validate_selectors(selectors: Any, path: str) -> None:
    for i, s in enumerate(_list(selectors)):
        p = f"{path}[{i}].cel.expression"
        expr = _map(_map(s).get("cel")).get("expression")
        if not isinstance(expr, str) or not expr:
            required(p)
        if len(expr) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            raise_too_long(p, expr)
        compiled = compile_selector(expr)
        if isinstance(compiled, CelCompileError):
            invalid(p, expr, compiled.detail)


def raise_too_long(path: str, expr: str) -> NoReturn:
    raise InputError(f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} "
                     "bytes", field=path, value=expr[:40] + "...")


def _validate_sub_request(r: Mapping[str, Any], p: str, *, class_required: bool) -> None:
    if class_required and not r.get("deviceClassName"):
        required(f"{p}.deviceClassName")
    validate_selectors(r.get("selectors"), f"{p}.selectors")
    mode = r.get("allocationMode") or "ExactCount"
    count = r.get("count")
    if mode == "ExactCount" and count is not None and (not isinstance(count, int)
                                                        or count <= 0):
        invalid(f"{p}.count", count, "must be greater than zero")
    if mode == "All" and count is not None:
        forbidden(f"{p}.count", "must not be specified when allocationMode is 'All'",
                  count)


def validate_device_claim(devices: Any, path: str) -> None:
    d = _map(devices)
    names: set[str] = set()
    sub_names: set[str] = set()
    for i, r in enumerate(_list(d.get("requests"))):
        p = f"{path}.requests[{i}]"
        r = _map(r)
        name = r.get("name")
        if name in names:
            duplicate(f"{p}.name", name)
        names.add(str(name))
        first = _list(r.get("firstAvailable"))
        if r.get("exactly") is not None:
            _validate_sub_request(_map(r["exactly"]), f"{p}.exactly", class_required=True)
        elif first:
            seen: set[str] = set()
            for j, s in enumerate(first):
                s = _map(s)
                sp = f"{p}.firstAvailable[{j}]"
                if s.get("name") in seen:
                    duplicate(f"{sp}.name", s.get("name"))
                seen.add(str(s.get("name")))
                sub_names.add(f"{name}/{s.get('name')}")
                _validate_sub_request(s, sp, class_required=True)
        elif "deviceClassName" in r:  # v1beta1 shape
            _validate_sub_request(r, p, class_required=True)
        else:
            required(p, "exactly one of `exactly` or `firstAvailable` is required")
    for i, c in enumerate(_list(d.get("constraints"))):
        p = f"{path}.constraints[{i}]"
        c = _map(c)
        for j, name in enumerate(_list(c.get("requests"))):
            if name not in names and name not in sub_names:
                invalid(f"{p}.requests[{j}]", name, "must be the name of a request in the "
                        "claim or the name of a request and a subrequest separated by '/'")
        if c.get("matchAttribute") is None and c.get("distinctAttribute") is None:
            required(p, "exactly one of `matchAttribute` or `distinctAttribute` is required")


def validate_device_class(doc: Mapping[str, Any]) -> None:
    validate_selectors(_map(doc.get("spec")).get("selectors"), "spec.selectors")


def validate_resource_claim(doc: Mapping[str, Any]) -> None:
    validate_device_claim(_map(doc.get("spec")).get("devices"), "spec.devices")


def validate_resource_claim_template(doc: Mapping[str, Any]) -> None:
    spec = _map(_map(doc.get("spec")).get("spec"))
    validate_device_claim(spec.get("devices"), "spec.spec.devices")


def validate_resource_slice(doc: Mapping[str, Any]) -> None:
    spec = _map(doc.get("spec"))
    where = [k for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
             if spec.get(k) not in (None, False, "")]
    if len(where) != 1 and (spec.get("devices") or not spec.get("sharedCounters")):
        required("spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                 "`perDeviceNodeSelection` is required")
    names: set[str] = set()
    for i, dev in enumerate(_list(spec.get("devices"))):
        name = _map(dev).get("name")
        if name in names:
            duplicate(f"spec.devices[{i}].name", name)
        names.add(str(name))


def validate_device_taint_rule(doc: Mapping[str, Any]) -> None:
    sel = _map(_map(doc.get("spec")).get("deviceSelector"))
    validate_selectors(sel.get("selectors"), "spec.deviceSelector.selectors")


register_validator("DeviceClass", validate_device_class)
register_validator("ResourceClaim", validate_resource_claim)
register_validator("ResourceClaimTemplate", validate_resource_claim_template)
register_validator("ResourceSlice", validate_resource_slice)
register_validator("DeviceTaintRule", validate_device_taint_rule)
