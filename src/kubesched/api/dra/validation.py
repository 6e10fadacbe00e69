"""The API server's validation of resource.k8s.io objects, the parts a scenario can get wrong
in ways that matter to scheduling: CEL selectors that do not compile (the API server compiles
every stored expression), duplicate device names in a ResourceSlice, device attributes (with
DRAListTypeAttributes' lists), duplicate request names, counts, and constraints naming
unknown requests. Raw documents, already structurally checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, NoReturn

from kubesched.api.dra.cel import (
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    MAX_ATTRIBUTE_VALUES_PER_DEVICE,
    CelCompileError,
    compile_selector,
    is_semver,
)
from kubesched.api.dra.gates import LIST_ATTRIBUTE_FIELDS
from kubesched.api.quantity import int_value, parse_quantity
from kubesched.api.validation.errors import duplicate, first, forbidden, invalid, required
from kubesched.api.validation.names import qualified_name_errors
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
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    names: set[str] = set()
    for i, dev in enumerate(_list(spec.get("devices"))):
        dev = _map(dev)
        name = dev.get("name")
        if name in names:
            duplicate(f"spec.devices[{i}].name", name)
        names.add(str(name))
        basic = dev.get("basic")  # v1beta1 wraps the device's fields
        _validate_device(_map(basic) if basic is not None else dev,
                         f"spec.devices[{i}].basic" if basic is not None else
                         f"spec.devices[{i}]")


#: resource.k8s.io BindingConditionsMaxSize / BindingFailureConditionsMaxSize
BINDING_CONDITIONS_MAX_SIZE = 4


def _validate_device(dev: Mapping[str, Any], path: str) -> None:
    """validateDevice's parts for attributes, consumable capacity and binding conditions."""
    _validate_attributes(dev, path)
    multi = dev.get("allowMultipleAllocations") is True
    for name, cap in _map(dev.get("capacity")).items():
        policy = _map(cap).get("requestPolicy")
        if policy is None:
            continue
        p = f"{path}.capacity[{name}].requestPolicy"
        if not multi:
            forbidden(p, "allowMultipleAllocations must be true")
        _validate_request_policy(_q(_map(cap).get("value")), _map(policy), p)
    _validate_binding_conditions(dev, path)


#: resource.k8s.io ResourceSliceMaxAttributesAndCapacitiesPerDevice,
#: DeviceAttributeMaxValueLength
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64

_SCALAR_FIELDS = ("bool", "int", "string", "version")


def _validate_attributes(dev: Mapping[str, Any], path: str) -> None:
    """validateDevice's attribute checks (newest stored validation.go, 009801d9): how many
    attributes and capacities, how many values (a list counts each item: 48 at most, the
    limit list-type attributes brought in 1.36; without lists it cannot be reached below the
    first limit), then each attribute: exactly one value, lists not empty, strings and
    versions within 64 bytes, versions semver 2.0.0."""
    attributes = _map(dev.get("attributes"))
    count = len(attributes) + len(_map(dev.get("capacity")))
    if count > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        invalid(path, count, "the total number of attributes and capacities must not exceed "
                             f"{MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}")
    values = sum(sum(len(_list(_map(a).get(k))) for k in LIST_ATTRIBUTE_FIELDS) or 1
                 for a in attributes.values())
    if values > MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        invalid(path, values, "the total number of attribute values must not exceed "
                              f"{MAX_ATTRIBUTE_VALUES_PER_DEVICE}")
    for name, attr in attributes.items():
        _validate_attribute(_map(attr), f"{path}.attributes[{name}]")


def _validate_attribute(attr: Mapping[str, Any], path: str) -> None:
    """validateDeviceAttribute."""
    present = [k for k in (*_SCALAR_FIELDS, *LIST_ATTRIBUTE_FIELDS) if attr.get(k) is not None]
    for key in present:
        value = attr[key]
        if key in LIST_ATTRIBUTE_FIELDS:
            if not _list(value):
                invalid(f"{path}.{key}", value, "must not be empty if specified")
            if key in ("strings", "versions"):
                for i, item in enumerate(_list(value)):
                    _validate_text(key == "versions", item, f"{path}.{key}[{i}]")
        elif key in ("string", "version"):
            _validate_text(key == "version", value, f"{path}.{key}")
    if len(present) != 1:
        invalid(path, "" if not present else dict(attr), "exactly one value must be specified")


def _validate_text(version: bool, value: Any, path: str) -> None:
    """A string or version value: semver 2.0.0 for a version, 64 bytes at most."""
    text = str(value)
    if version and not is_semver(text):
        invalid(path, text, "must be a string compatible with semver.org spec 2.0.0")
    if len(text.encode()) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        raise InputError(f"Too long: may not be more than {DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH} "
                         "bytes", field=path)


def _q(v: Any) -> Fraction:
    try:
        return parse_quantity(v)
    except (TypeError, ValueError):
        return Fraction(0)  # the structural check reports a bad quantity


def _validate_request_policy(capacity: Fraction, policy: Mapping[str, Any], path: str) -> None:
    """validateRequestPolicy: one of validValues and validRange, each with a default that
    is one of its values, within the capacity."""
    values = _list(policy.get("validValues"))
    rng = policy.get("validRange")
    if values and rng is not None:
        forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" '
                        'and "validRange" at the same time')
    default = policy.get("default")
    if values:
        if default is None:
            required(f"{path}.default", "required when validValues is defined")
        vp = f"{path}.validValues"
        qs = [_q(v) for v in values]
        for i in range(len(qs) - 1):
            if qs[i] > qs[i + 1]:
                invalid(f"{vp}[{i + 1}]", values[i + 1], "values must be sorted in ascending "
                                                         "order")
        if len(qs) > CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS:
            raise_too_many(vp, len(qs), CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS)
        seen: set[int] = set()
        for i, q in enumerate(qs):
            if q > capacity:
                invalid(f"{vp}[{i}]", values[i], "option is larger than capacity value: "
                                                  f"{capacity}")
            if int_value(q) in seen:  # upstream's key: the value rounded up
                duplicate(f"{vp}[{i}]", str(int_value(q)))
            seen.add(int_value(q))
        if _q(default) not in qs:
            invalid(vp, default, "default value is not valid according to the requestPolicy")
    elif rng is not None:
        if default is None:
            required(f"{path}.default", "required when validRange is defined")
        _validate_range(_q(default), capacity, _map(rng), f"{path}.validRange")


#: resource.k8s.io CapacityRequestPolicyDiscreteMaxOptions
CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS = 10


def raise_too_many(path: str, have: int, limit: int) -> NoReturn:
    raise InputError(f"Too many: {have}: must have at most {limit} items", field=path)


def _validate_range(default: Fraction, capacity: Fraction, rng: Mapping[str, Any],
                    path: str) -> None:
    if rng.get("min") is None:
        required(f"{path}.min", "required when validRange is defined")
    low = _q(rng["min"])
    if low > capacity:
        invalid(f"{path}.min", rng["min"], f"min is larger than capacity value: {capacity}")
    if default < low:
        invalid(f"{path}.min", default, f"default is less than min: {rng['min']}")
    high = rng.get("max")
    if high is not None:
        if low > _q(high):
            invalid(f"{path}.max", rng["min"], f"min is larger than max: {high}")
        if _q(high) > capacity:
            invalid(f"{path}.max", high, f"max is larger than capacity value: {capacity}")
        if default > _q(high):
            invalid(f"{path}.max", default, f"default is more than max: {high}")
    step = rng.get("step")
    if step is not None:
        if low + _q(step) > capacity:
            invalid(f"{path}.step", step, f"one step {low + _q(step)} is larger than capacity "
                                          f"value: {capacity}")
        # in whole units, as upstream's int64 Value() arithmetic
        for value in (default, *(() if high is None else (_q(high),))):
            if (int_value(value) - int_value(low)) % int_value(_q(step)) != 0:
                invalid(f"{path}.step", str(value), f"value is not a multiple of a given step "
                                                    f"({step}) from ({rng['min']})")


def _validate_binding_conditions(dev: Mapping[str, Any], path: str) -> None:
    """validateDeviceBindingParameters."""
    conds = [str(c) for c in _list(dev.get("bindingConditions"))]
    fails = [str(c) for c in _list(dev.get("bindingFailureConditions"))]
    for key, items in (("bindingConditions", conds), ("bindingFailureConditions", fails)):
        if len(items) > BINDING_CONDITIONS_MAX_SIZE:
            raise_too_many(f"{path}.{key}", len(items), BINDING_CONDITIONS_MAX_SIZE)
        seen: set[str] = set()
        for i, c in enumerate(items):
            first(qualified_name_errors(c), f"{path}.{key}[{i}]", c)
            if c in seen:
                duplicate(f"{path}.{key}[{i}]", c)
            seen.add(c)
    for i, c in enumerate(fails):
        if c in conds:
            invalid(f"{path}.bindingFailureConditions[{i}]", c,
                    "bindingFailureConditions must not overlap with bindingConditions")
    if not conds and fails:
        invalid(f"{path}.bindingConditions", conds,
                "bindingConditions are required to use bindingFailureConditions")
    if not fails and conds:
        invalid(f"{path}.bindingFailureConditions", fails,
                "bindingFailureConditions are required to use bindingConditions")


def validate_device_taint_rule(doc: Mapping[str, Any]) -> None:
    sel = _map(_map(doc.get("spec")).get("deviceSelector"))
    validate_selectors(sel.get("selectors"), "spec.deviceSelector.selectors")


register_validator("DeviceClass", validate_device_class)
register_validator("ResourceClaim", validate_resource_claim)
register_validator("ResourceClaimTemplate", validate_resource_claim_template)
register_validator("ResourceSlice", validate_resource_slice)
register_validator("DeviceTaintRule", validate_device_taint_rule)
