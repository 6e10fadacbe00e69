"""resource.k8s.io objects: DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate,
DeviceTaintRule — typed like upstream's ``resource/v1`` structs (what scheduling reads).

Every served version is read into the v1 shape: v1beta1's requests carry the class and
selectors directly (v1: under ``exactly``) and its devices wrap attributes and capacity in
``basic``. The objects are immutable once stored; whoever changes a claim (the simulator
writing an allocation) stores a new one (``dataclasses.replace``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from kubesched.api.dra.cel import Semver
from kubesched.api.parse import (
    _bool,
    _dict,
    _err,
    _int,
    _list,
    _one_of,
    _req_str,
    _str,
    _str_list,
    locate_error,
    parse_meta,
    parse_node_selector_term,
    parse_quantity_field,
    parse_time,
)
from kubesched.api.types import Named, NodeSelectorTerm, ObjectMeta, OwnerReference
from kubesched.errors import InputError

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
             "DeviceTaintRule")
CLUSTER_SCOPED_DRA_KINDS = ("DeviceClass", "ResourceSlice", "DeviceTaintRule")

EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_MODES = (EXACT_COUNT, ALL)

TAINT_NO_SCHEDULE = "NoSchedule"
TAINT_NO_EXECUTE = "NoExecute"
TAINT_NONE = "None"

#: resource.k8s.io AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32

#: the finalizer the scheduler adds before writing an allocation
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"


# ---------------------------------------------------------------- shared parts


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceclaim.ToleratesTaint."""
        if self.key and self.key != taint.key:
            return False
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return True
        return self.operator == "Equal" and self.value == taint.value


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str = TAINT_NO_SCHEDULE
    time_added: float | None = None


@dataclass(frozen=True, slots=True)
class OpaqueConfig:
    driver: str
    parameters: Any = None


@dataclass(frozen=True, slots=True)
class DeviceConfiguration:
    """A class's ``spec.config[]`` or a claim's ``spec.devices.config[]`` entry."""

    requests: tuple[str, ...] = ()
    opaque: OpaqueConfig | None = None


# ---------------------------------------------------------------- DeviceClass


@dataclass(slots=True)
class DeviceClass(Named):
    kind: ClassVar[str] = "DeviceClass"
    metadata: ObjectMeta
    selectors: tuple[str, ...] = ()  # CEL expressions
    config: tuple[DeviceConfiguration, ...] = ()
    extended_resource_name: str = ""


# ---------------------------------------------------------------- ResourceSlice


@dataclass(frozen=True, slots=True)
class DeviceCounterConsumption:
    counter_set: str
    counters: dict[str, Fraction]


@dataclass(frozen=True, slots=True)
class CounterSet:
    name: str
    counters: dict[str, Fraction]


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicyRange:
    """A DeviceCapacity's ``requestPolicy.validRange``: ``min`` is required by the API."""

    min: Fraction
    max: Fraction | None = None
    step: Fraction | None = None


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    """A DeviceCapacity's ``requestPolicy`` (KEP-5075): what one allocation of a device that
    allows multiple allocations may consume of that capacity."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    valid_range: CapacityRequestPolicyRange | None = None


#: a device attribute's value: one scalar, or (DRAListTypeAttributes, KEP-5491) a list of
#: scalars of one kind, kept as a tuple
AttributeScalar = int | bool | str | Semver
AttributeValue = AttributeScalar | tuple[AttributeScalar, ...]


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    # None: an attribute without a value (upstream: a DeviceAttribute with no field set).
    # The API server and kubesched's loader refuse one; only objects built directly (as
    # upstream's allocator tests build them) carry it, and CEL then fails on the device
    # as upstream's ("unsupported attribute value")
    attributes: dict[str, AttributeValue | None] = field(default_factory=dict)
    # the capacities' values, as CEL sees them; their request policies are kept apart
    # (only the allocator's capacity accounting reads those)
    capacity: dict[str, Fraction] = field(default_factory=dict)
    capacity_policies: dict[str, CapacityRequestPolicy] = field(default_factory=dict)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str = ""
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    taints: tuple[DeviceTaint, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    allow_multiple_allocations: bool = False


@dataclass(slots=True)
class ResourceSlice(Named):
    kind: ClassVar[str] = "ResourceSlice"
    metadata: ObjectMeta
    driver: str
    pool: str
    pool_generation: int = 0
    resource_slice_count: int = 1
    node_name: str = ""
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()


# ---------------------------------------------------------------- ResourceClaim


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """One ``firstAvailable`` entry; also the shape of a request's ``exactly``."""

    name: str
    device_class_name: str
    # CEL expressions; "" for a selector without `cel` (upstream: CEL nil, an unknown future
    # selector type), which the loader refuses (`is required`) and the allocator too
    selectors: tuple[str, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    # capacity.requests; None: no ``capacity`` field (upstream tells nil from empty)
    capacity_requests: dict[str, Fraction] | None = None


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    share_id: str | None = None
    consumed_capacity: dict[str, Fraction] = field(default_factory=dict)
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AllocatedDeviceConfiguration:
    source: str  # FromClass, FromClaim
    requests: tuple[str, ...]
    opaque: OpaqueConfig | None


@dataclass(frozen=True, slots=True)
class AllocationResult:
    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[AllocatedDeviceConfiguration, ...] = ()
    node_selector: tuple[NodeSelectorTerm, ...] | None = None  # None: every node
    # set by PreBind when binding conditions are in use (epoch seconds; virtual time in the
    # simulator): the start of the binding timeout
    allocation_timestamp: float | None = None


@dataclass(frozen=True, slots=True)
class DeviceCondition:
    """A ``metav1.Condition`` of an allocated device (``status.devices[].conditions``)."""

    type: str
    status: str  # True, False, Unknown
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class AllocatedDeviceStatus:
    """``status.devices[]`` of a claim (DRAResourceClaimDeviceStatus), written by drivers:
    the conditions binding conditions wait for."""

    driver: str
    pool: str
    device: str
    share_id: str | None = None
    conditions: tuple[DeviceCondition, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceClaimConsumerReference:
    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(slots=True)
class ResourceClaim(Named):
    kind: ClassVar[str] = "ResourceClaim"
    metadata: ObjectMeta
    spec: DeviceClaim = field(default_factory=DeviceClaim)
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[AllocatedDeviceStatus, ...] = ()


@dataclass(slots=True)
class ResourceClaimTemplate(Named):
    kind: ClassVar[str] = "ResourceClaimTemplate"
    metadata: ObjectMeta
    # the template's spec.metadata (labels, annotations copied to generated claims)
    claim_labels: dict[str, str] = field(default_factory=dict)
    claim_annotations: dict[str, str] = field(default_factory=dict)
    spec: DeviceClaim = field(default_factory=DeviceClaim)


@dataclass(slots=True)
class DeviceTaintRule(Named):
    kind: ClassVar[str] = "DeviceTaintRule"
    metadata: ObjectMeta
    driver: str = ""
    pool: str = ""
    device: str = ""
    device_class_name: str = ""
    selectors: tuple[str, ...] = ()
    taint: DeviceTaint = field(default_factory=lambda: DeviceTaint(key=""))


# ---------------------------------------------------------------- parsing


def _selectors(v: Any, path: str) -> tuple[str, ...]:
    out = []
    for i, s in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        cel = _dict(_dict(s, p).get("cel"), f"{p}.cel")
        out.append(_req_str(cel.get("expression"), f"{p}.cel.expression"))
    return tuple(out)


def _configs(v: Any, path: str) -> tuple[DeviceConfiguration, ...]:
    out = []
    for i, c in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        c = _dict(c, p)
        op = c.get("opaque")
        opaque = None
        if op is not None:
            op = _dict(op, f"{p}.opaque")
            opaque = OpaqueConfig(_req_str(op.get("driver"), f"{p}.opaque.driver"),
                                  op.get("parameters"))
        out.append(DeviceConfiguration(_str_list(c.get("requests"), f"{p}.requests"), opaque))
    return tuple(out)


def _tolerations(v: Any, path: str) -> tuple[DeviceToleration, ...]:
    out = []
    for i, t in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        t = _dict(t, p)
        out.append(DeviceToleration(
            key=_str(t.get("key"), f"{p}.key"),
            operator=_one_of(t.get("operator"), f"{p}.operator", ("Exists", "Equal"), "Equal"),
            value=_str(t.get("value"), f"{p}.value"),
            effect=_str(t.get("effect"), f"{p}.effect"),
            toleration_seconds=_int(t.get("tolerationSeconds"), f"{p}.tolerationSeconds")))
    return tuple(out)


def _taint(t: Any, p: str) -> DeviceTaint:
    t = _dict(t, p)
    return DeviceTaint(key=_req_str(t.get("key"), f"{p}.key"),
                       value=_str(t.get("value"), f"{p}.value"),
                       effect=_str(t.get("effect"), f"{p}.effect") or TAINT_NO_SCHEDULE)


def _quantities(v: Any, path: str, *, wrapped: bool) -> dict[str, Fraction]:
    """A map of quantities; ``wrapped``: each is ``{value: …}`` (DeviceCapacity, Counter)."""
    out = {}
    for name, q in _dict(v, path).items():
        p = f"{path}[{name}]"
        if wrapped and isinstance(q, dict):
            q = q.get("value")
            p += ".value"
        out[str(name)] = parse_quantity_field(q, p)
    return out


def _capacity_policies(v: Any, path: str) -> dict[str, CapacityRequestPolicy]:
    """The ``requestPolicy`` of each DeviceCapacity that has one."""
    out = {}
    for name, cap in _dict(v, path).items():
        if not isinstance(cap, dict) or cap.get("requestPolicy") is None:
            continue
        p = f"{path}[{name}].requestPolicy"
        rp = _dict(cap["requestPolicy"], p)
        default = rp.get("default")
        rng = rp.get("validRange")
        valid_range = None
        if rng is not None:
            r = _dict(rng, f"{p}.validRange")
            mn, mx, st = r.get("min"), r.get("max"), r.get("step")
            valid_range = CapacityRequestPolicyRange(
                # a missing min is the API server's error (validation.py), zero here
                min=Fraction(0) if mn is None else parse_quantity_field(mn, f"{p}.validRange.min"),
                max=None if mx is None else parse_quantity_field(mx, f"{p}.validRange.max"),
                step=None if st is None else parse_quantity_field(st, f"{p}.validRange.step"))
        out[str(name)] = CapacityRequestPolicy(
            default=None if default is None else parse_quantity_field(default, f"{p}.default"),
            valid_values=tuple(parse_quantity_field(q, f"{p}.validValues[{i}]") for i, q in
                               enumerate(_list(rp.get("validValues"), f"{p}.validValues"))),
            valid_range=valid_range)
    return out


def _node_selector(v: Any, path: str) -> tuple[NodeSelectorTerm, ...] | None:
    if v is None:
        return None
    terms = _list(_dict(v, path).get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")
    return tuple(parse_node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]")
                 for i, t in enumerate(terms))


def _sub_request(d: dict[str, Any], p: str, name: str) -> DeviceSubRequest:
    mode = _one_of(d.get("allocationMode"), f"{p}.allocationMode", ALLOCATION_MODES,
                   EXACT_COUNT)
    count = _int(d.get("count"), f"{p}.count")
    if count is None:
        count = 1 if mode == EXACT_COUNT else 0
    cap = d.get("capacity")
    caps = (_quantities(_dict(cap, f"{p}.capacity").get("requests"), f"{p}.capacity.requests",
                        wrapped=False) if cap is not None else None)
    aa = d.get("adminAccess")
    return DeviceSubRequest(
        name=name,
        device_class_name=_str(d.get("deviceClassName"), f"{p}.deviceClassName"),
        selectors=_selectors(d.get("selectors"), f"{p}.selectors"),
        allocation_mode=mode, count=count,
        admin_access=None if aa is None else _bool(aa, f"{p}.adminAccess"),
        tolerations=_tolerations(d.get("tolerations"), f"{p}.tolerations"),
        capacity_requests=caps)


def parse_device_claim(v: Any, path: str) -> DeviceClaim:
    d = _dict(v, path)
    requests = []
    for i, r in enumerate(_list(d.get("requests"), f"{path}.requests")):
        p = f"{path}.requests[{i}]"
        r = _dict(r, p)
        name = _req_str(r.get("name"), f"{p}.name")
        first = tuple(
            _sub_request(_dict(s, f"{p}.firstAvailable[{j}]"), f"{p}.firstAvailable[{j}]",
                         _req_str(_dict(s, f"{p}.firstAvailable[{j}]").get("name"),
                                  f"{p}.firstAvailable[{j}].name"))
            for j, s in enumerate(_list(r.get("firstAvailable"), f"{p}.firstAvailable")))
        exactly = None
        if r.get("exactly") is not None:
            exactly = _sub_request(_dict(r["exactly"], f"{p}.exactly"), f"{p}.exactly", name)
        elif not first:  # v1beta1 / v1beta2-less shape: the request itself
            exactly = _sub_request(r, p, name)
        requests.append(DeviceRequest(name, exactly, first))
    constraints = []
    for i, c in enumerate(_list(d.get("constraints"), f"{path}.constraints")):
        p = f"{path}.constraints[{i}]"
        c = _dict(c, p)
        ma, da = c.get("matchAttribute"), c.get("distinctAttribute")
        constraints.append(DeviceConstraint(
            requests=_str_list(c.get("requests"), f"{p}.requests"),
            match_attribute=None if ma is None else _str(ma, f"{p}.matchAttribute"),
            distinct_attribute=None if da is None else _str(da, f"{p}.distinctAttribute")))
    return DeviceClaim(tuple(requests), tuple(constraints),
                       _configs(d.get("config"), f"{path}.config"))


def _attribute(v: Any, p: str) -> AttributeValue:
    """A DeviceAttribute's value. The lists (``ints``, ``bools``, ``strings``, ``versions``)
    come first, as upstream's CEL environment and constraints look at them first; the API
    server's validation refuses an attribute with more than one (api/dra/validation.py)."""
    a = _dict(v, p)
    for key in ("ints", "bools", "strings", "versions"):
        if a.get(key) is not None:
            items = _list(a[key], f"{p}.{key}")
            return tuple(_attribute_scalar(key[:-1], x, f"{p}.{key}[{i}]")
                         for i, x in enumerate(items))
    for key in ("int", "bool", "string", "version"):
        if a.get(key) is not None:
            return _attribute_scalar(key, a[key], f"{p}.{key}")
    raise _err("exactly one value must be specified", p, v)


def _attribute_scalar(kind: str, value: Any, p: str) -> AttributeScalar:
    if kind == "int":
        return _int(value, p) or 0
    if kind == "bool":
        return _bool(value, p)
    text = _str(value, p)
    return Semver(text) if kind == "version" else text


def _device(v: Any, p: str) -> Device:
    d = _dict(v, p)
    body = d
    if isinstance(d.get("basic"), dict):  # v1beta1
        body = {**d["basic"], "name": d.get("name")}
        p_body = f"{p}.basic"
    else:
        p_body = p
    attrs: dict[str, AttributeValue | None] = {
        str(k): _attribute(a, f"{p_body}.attributes[{k}]")
             for k, a in _dict(body.get("attributes"), f"{p_body}.attributes").items()}
    consumes = tuple(
        DeviceCounterConsumption(
            _req_str(_dict(c, f"{p_body}.consumesCounters[{i}]").get("counterSet"),
                     f"{p_body}.consumesCounters[{i}].counterSet"),
            _quantities(c.get("counters"), f"{p_body}.consumesCounters[{i}].counters",
                        wrapped=True))
        for i, c in enumerate(_list(body.get("consumesCounters"),
                                    f"{p_body}.consumesCounters")))
    return Device(
        name=_req_str(d.get("name"), f"{p}.name"),
        attributes=attrs,
        capacity=_quantities(body.get("capacity"), f"{p_body}.capacity", wrapped=True),
        capacity_policies=_capacity_policies(body.get("capacity"), f"{p_body}.capacity"),
        consumes_counters=consumes,
        node_name=_str(body.get("nodeName"), f"{p_body}.nodeName"),
        node_selector=_node_selector(body.get("nodeSelector"), f"{p_body}.nodeSelector"),
        all_nodes=_bool(body.get("allNodes"), f"{p_body}.allNodes"),
        taints=tuple(_taint(t, f"{p_body}.taints[{i}]")
                     for i, t in enumerate(_list(body.get("taints"), f"{p_body}.taints"))),
        binding_conditions=_str_list(body.get("bindingConditions"),
                                     f"{p_body}.bindingConditions"),
        binding_failure_conditions=_str_list(body.get("bindingFailureConditions"),
                                             f"{p_body}.bindingFailureConditions"),
        binds_to_node=_bool(body.get("bindsToNode"), f"{p_body}.bindsToNode"),
        allow_multiple_allocations=_bool(body.get("allowMultipleAllocations"),
                                         f"{p_body}.allowMultipleAllocations"))


def _located(kind: str, d: Any, namespaced: bool, source: str | None,
             parse: Any) -> Any:
    try:
        return parse(_dict(d, ""))
    except InputError as e:
        raise locate_error(e, kind, d if isinstance(d, dict) else {}, namespaced).located(
            file=source) from None


def parse_device_class(d: Any, *, source: str | None = None) -> DeviceClass:
    def parse(d: dict[str, Any]) -> DeviceClass:
        spec = _dict(d.get("spec"), "spec")
        return DeviceClass(
            metadata=parse_meta(d.get("metadata"), namespaced=False),
            selectors=_selectors(spec.get("selectors"), "spec.selectors"),
            config=_configs(spec.get("config"), "spec.config"),
            extended_resource_name=_str(spec.get("extendedResourceName"),
                                        "spec.extendedResourceName"))
    result: DeviceClass = _located("DeviceClass", d, False, source, parse)
    return result


def parse_resource_slice(d: Any, *, source: str | None = None) -> ResourceSlice:
    def parse(d: dict[str, Any]) -> ResourceSlice:
        spec = _dict(d.get("spec"), "spec")
        pool = _dict(spec.get("pool"), "spec.pool")
        counters = tuple(
            CounterSet(_req_str(_dict(c, f"spec.sharedCounters[{i}]").get("name"),
                                f"spec.sharedCounters[{i}].name"),
                       _quantities(c.get("counters"), f"spec.sharedCounters[{i}].counters",
                                   wrapped=True))
            for i, c in enumerate(_list(spec.get("sharedCounters"), "spec.sharedCounters")))
        return ResourceSlice(
            metadata=parse_meta(d.get("metadata"), namespaced=False),
            driver=_req_str(spec.get("driver"), "spec.driver"),
            pool=_req_str(pool.get("name"), "spec.pool.name"),
            pool_generation=_int(pool.get("generation"), "spec.pool.generation", 0) or 0,
            resource_slice_count=_int(pool.get("resourceSliceCount"),
                                      "spec.pool.resourceSliceCount", 1) or 0,
            node_name=_str(spec.get("nodeName"), "spec.nodeName"),
            node_selector=_node_selector(spec.get("nodeSelector"), "spec.nodeSelector"),
            all_nodes=_bool(spec.get("allNodes"), "spec.allNodes"),
            per_device_node_selection=_bool(spec.get("perDeviceNodeSelection"),
                                            "spec.perDeviceNodeSelection"),
            devices=tuple(_device(x, f"spec.devices[{i}]")
                          for i, x in enumerate(_list(spec.get("devices"), "spec.devices"))),
            shared_counters=counters)
    result: ResourceSlice = _located("ResourceSlice", d, False, source, parse)
    return result


def _allocation(v: Any, path: str) -> AllocationResult | None:
    if v is None:
        return None
    a = _dict(v, path)
    devs = _dict(a.get("devices"), f"{path}.devices")
    results = []
    for i, r in enumerate(_list(devs.get("results"), f"{path}.devices.results")):
        p = f"{path}.devices.results[{i}]"
        r = _dict(r, p)
        aa = r.get("adminAccess")
        results.append(DeviceRequestAllocationResult(
            request=_req_str(r.get("request"), f"{p}.request"),
            driver=_req_str(r.get("driver"), f"{p}.driver"),
            pool=_req_str(r.get("pool"), f"{p}.pool"),
            device=_req_str(r.get("device"), f"{p}.device"),
            admin_access=None if aa is None else _bool(aa, f"{p}.adminAccess"),
            tolerations=_tolerations(r.get("tolerations"), f"{p}.tolerations"),
            share_id=None if r.get("shareID") is None else _str(r.get("shareID"),
                                                                  f"{p}.shareID"),
            consumed_capacity=_quantities(r.get("consumedCapacity"), f"{p}.consumedCapacity",
                                          wrapped=False),
            binding_conditions=_str_list(r.get("bindingConditions"), f"{p}.bindingConditions"),
            binding_failure_conditions=_str_list(r.get("bindingFailureConditions"),
                                                 f"{p}.bindingFailureConditions")))
    config = []
    for i, c in enumerate(_list(devs.get("config"), f"{path}.devices.config")):
        p = f"{path}.devices.config[{i}]"
        c = _dict(c, p)
        op = c.get("opaque")
        config.append(AllocatedDeviceConfiguration(
            source=_str(c.get("source"), f"{p}.source"),
            requests=_str_list(c.get("requests"), f"{p}.requests"),
            opaque=None if not isinstance(op, dict) else OpaqueConfig(
                _str(op.get("driver"), f"{p}.opaque.driver"), op.get("parameters"))))
    return AllocationResult(tuple(results), tuple(config),
                            _node_selector(a.get("nodeSelector"), f"{path}.nodeSelector"),
                            parse_time(a.get("allocationTimestamp"),
                                       f"{path}.allocationTimestamp"))


def parse_allocation_result(v: Any, path: str) -> AllocationResult | None:
    """A claim's ``status.allocation`` as resource.k8s.io/v1 JSON (``path``: where it is,
    for the InputError of one not as the API writes it)."""
    return _allocation(v, path)


def parse_device_statuses(v: Any, path: str) -> tuple[AllocatedDeviceStatus, ...]:
    """A claim's ``status.devices``: per allocated device, the driver's conditions."""
    out = []
    for i, d in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        d = _dict(d, p)
        conditions = []
        for j, c in enumerate(_list(d.get("conditions"), f"{p}.conditions")):
            cp = f"{p}.conditions[{j}]"
            c = _dict(c, cp)
            conditions.append(DeviceCondition(
                type=_req_str(c.get("type"), f"{cp}.type"),
                status=_one_of(c.get("status"), f"{cp}.status", ("True", "False", "Unknown"),
                               "Unknown"),
                reason=_str(c.get("reason"), f"{cp}.reason"),
                message=_str(c.get("message"), f"{cp}.message")))
        share = d.get("shareID")
        out.append(AllocatedDeviceStatus(
            driver=_req_str(d.get("driver"), f"{p}.driver"),
            pool=_req_str(d.get("pool"), f"{p}.pool"),
            device=_req_str(d.get("device"), f"{p}.device"),
            share_id=None if share is None else _str(share, f"{p}.shareID"),
            conditions=tuple(conditions)))
    return tuple(out)


def parse_resource_claim(d: Any, *, source: str | None = None) -> ResourceClaim:
    def parse(d: dict[str, Any]) -> ResourceClaim:
        spec = _dict(d.get("spec"), "spec")
        status = _dict(d.get("status"), "status")
        reserved = []
        for i, r in enumerate(_list(status.get("reservedFor"), "status.reservedFor")):
            p = f"status.reservedFor[{i}]"
            r = _dict(r, p)
            reserved.append(ResourceClaimConsumerReference(
                resource=_req_str(r.get("resource"), f"{p}.resource"),
                name=_req_str(r.get("name"), f"{p}.name"),
                uid=_str(r.get("uid"), f"{p}.uid"),
                api_group=_str(r.get("apiGroup"), f"{p}.apiGroup")))
        return ResourceClaim(
            metadata=parse_meta(d.get("metadata")),
            spec=parse_device_claim(spec.get("devices"), "spec.devices"),
            allocation=_allocation(status.get("allocation"), "status.allocation"),
            reserved_for=tuple(reserved),
            devices=parse_device_statuses(status.get("devices"), "status.devices"))
    result: ResourceClaim = _located("ResourceClaim", d, True, source, parse)
    return result


def parse_resource_claim_template(d: Any, *,
                                  source: str | None = None) -> ResourceClaimTemplate:
    def parse(d: dict[str, Any]) -> ResourceClaimTemplate:
        spec = _dict(d.get("spec"), "spec")
        md = _dict(spec.get("metadata"), "spec.metadata")
        inner = _dict(spec.get("spec"), "spec.spec")
        return ResourceClaimTemplate(
            metadata=parse_meta(d.get("metadata")),
            claim_labels={str(k): str(v) for k, v in
                          _dict(md.get("labels"), "spec.metadata.labels").items()},
            claim_annotations={str(k): str(v) for k, v in _dict(
                md.get("annotations"), "spec.metadata.annotations").items()},
            spec=parse_device_claim(inner.get("devices"), "spec.spec.devices"))
    result: ResourceClaimTemplate = _located("ResourceClaimTemplate", d, True, source, parse)
    return result


def parse_device_taint_rule(d: Any, *, source: str | None = None) -> DeviceTaintRule:
    def parse(d: dict[str, Any]) -> DeviceTaintRule:
        spec = _dict(d.get("spec"), "spec")
        sel = _dict(spec.get("deviceSelector"), "spec.deviceSelector")
        return DeviceTaintRule(
            metadata=parse_meta(d.get("metadata"), namespaced=False),
            driver=_str(sel.get("driver"), "spec.deviceSelector.driver"),
            pool=_str(sel.get("pool"), "spec.deviceSelector.pool"),
            device=_str(sel.get("device"), "spec.deviceSelector.device"),
            device_class_name=_str(sel.get("deviceClassName"),
                                   "spec.deviceSelector.deviceClassName"),
            selectors=_selectors(sel.get("selectors"), "spec.deviceSelector.selectors"),
            taint=_taint(spec.get("taint"), "spec.taint"))
    result: DeviceTaintRule = _located("DeviceTaintRule", d, False, source, parse)
    return result


DRA_PARSERS: dict[str, Any] = {
    "DeviceClass": parse_device_class,
    "ResourceSlice": parse_resource_slice,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
    "DeviceTaintRule": parse_device_taint_rule,
}


# ---------------------------------------------------------------- claims of pods


def claim_is_for_pod(claim: ResourceClaim, pod_uid: str) -> bool:
    """resourceclaim.IsForPod: the pod is the claim's controller owner."""
    return any(r.controller and r.uid == pod_uid and r.kind == "Pod"
               for r in claim.metadata.owner_references)


def generated_claim_name(pod_name: str, pod_claim_name: str) -> str:
    """The name the resourceclaim controller's GenerateName yields, deterministically:
    ``<pod>-<claim>-`` (each part cut to keep it short) plus five characters, here derived
    from the two names instead of random ones, so a scenario replays identically."""
    prefix = f"{pod_name[:16]}-{pod_claim_name[:16]}-"
    digest = hashlib.sha256(f"{pod_name}/{pod_claim_name}".encode()).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand alphanums
    return prefix + "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def claim_for_pod_from_template(template: ResourceClaimTemplate, pod_name: str,
                                pod_namespace: str, pod_uid: str,
                                pod_claim_name: str) -> ResourceClaim:
    """The ResourceClaim the resourceclaim controller creates for a pod's template claim:
    owned (controller) by the pod, annotated with the pod claim's name."""
    name = generated_claim_name(pod_name, pod_claim_name)
    meta = ObjectMeta(
        name=name, namespace=pod_namespace, uid=f"{pod_namespace}/{name}",
        labels=dict(template.claim_labels),
        annotations={**template.claim_annotations,
                     "resource.kubernetes.io/pod-claim-name": pod_claim_name},
        owner_references=[OwnerReference(kind="Pod", name=pod_name, uid=pod_uid,
                                         controller=True)])
    return ResourceClaim(metadata=meta, spec=template.spec)


def create_template_claims(pods: list[Any], objects: dict[str, list[Any]]) -> list[str]:
    """The resourceclaim controller, once, over a scenario as loaded: every pod claim made
    from a template (of a pod not done) gets its ResourceClaim (unless the scenario already
    records one in ``status.resourceClaimStatuses``) and the status entry naming it. A
    missing template leaves the pod without the entry, so it waits at PreEnqueue as upstream;
    returns one warning per such pod."""
    templates = {(t.metadata.namespace, t.metadata.name): t
                 for t in objects.get("ResourceClaimTemplate", ())}
    claims = objects.setdefault("ResourceClaim", [])
    existing = {(c.metadata.namespace, c.metadata.name) for c in claims}
    warnings = []
    for pod in pods:
        if pod.status.phase in ("Succeeded", "Failed"):
            continue  # (the controller's syncPod: nothing to do for a pod that is done)
        for pc in pod.spec.pod_resource_claims:
            if not pc.resource_claim_template_name or \
                    pc.name in pod.status.resource_claim_statuses:
                continue
            template = templates.get((pod.namespace, pc.resource_claim_template_name))
            if template is None:
                warnings.append(
                    f"Pod {pod.key}: resourceClaimTemplate "
                    f"{pc.resource_claim_template_name!r} not found; the pod waits for it")
                continue
            claim = claim_for_pod_from_template(template, pod.name, pod.namespace, pod.uid,
                                                pc.name)
            if (pod.namespace, claim.name) not in existing:
                claims.append(claim)
                existing.add((pod.namespace, claim.name))
            pod.status.resource_claim_statuses[pc.name] = claim.name
    return warnings
