"""Upstream's structured-parameters allocator (``k8s.io/dynamic-resource-allocation/
structured``): the "stable" channel of kubernetes commit 03ab440c and, when consumable
capacity or binding conditions are on, the "incubating" one (staging mirror
kubernetes/dynamic-resource-allocation 3d036712, July 2026 = v1.37 development; the same
code as v1.36.2's for what is implemented here).

Upstream's ``NewAllocator`` picks the first channel whose features cover the enabled ones:
"stable" (admin access, prioritized lists, partitionable devices, taints), "incubating"
(+ DRAConsumableCapacity, + DRADeviceBindingConditions with DRAResourceClaimDeviceStatus) or
"experimental" (+ DRAListTypeAttributes; otherwise the same code as "incubating" at 3d036712).
kubesched has one implementation; ``Features.incubating`` switches on what only
"incubating" does: distinctAttribute constraints, combinations instead of permutations of
devices within a request (its ``startLocation``), pools with binding conditions tried last,
the capacity requests check, and ``bindsToNode`` in the node selector;
``Features.list_type_attributes`` what only "experimental" does: matchAttribute and
distinctAttribute compare attribute values as sets (``constraint.go`` and
``allocator_experimental.go`` of 3d036712).

``Allocator(features, allocated, classes, slices).allocate(node, claims)`` returns one
``AllocationResult`` per claim, or ``None`` when the claims cannot all be satisfied on the
node, or raises ``AllocationError`` when a claim or class is broken (upstream's errors,
which abort scheduling of the pod). The search is upstream's: claims in order, requests in
order, for each needed device the pools in order (sorted by driver and pool name), slices
in order (by name), devices in order; the first complete solution wins, backtracking on
constraints. Deterministic, so the same devices as upstream's allocator.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.dra.cel import (
    CelCompileError,
    CelRuntimeError,
    DeviceInput,
    compile_selector,
    device_input,
)
from kubesched.api.dra.store import (
    AllocatedState,
    add_capacity,
    remove_capacity,
)
from kubesched.api.dra.types import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    TAINT_NO_EXECUTE,
    TAINT_NO_SCHEDULE,
    AllocatedDeviceConfiguration,
    AllocationResult,
    AttributeScalar,
    AttributeValue,
    CapacityRequestPolicy,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.api.quantity import int_value
from kubesched.api.selectors import node_matches_terms
from kubesched.api.types import Node, NodeSelectorRequirement, NodeSelectorTerm

DeviceID = tuple[str, str, str]  # driver, pool, device


class AllocationError(Exception):
    """A claim or class the allocator cannot work with (upstream returns an error)."""


class AllocationAborted(AllocationError):
    """The caller's deadline passed during the search (upstream: allocateOne finds its
    context done, "filter operation aborted: context deadline exceeded")."""


class FailedOnNode(AllocationError):
    """An error that concerns only the node tried (upstream's ErrFailedAllocationOnNode):
    the scheduler reports it as the node's unschedulable reason and tries other nodes."""


@dataclass(frozen=True, slots=True)
class Features:
    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    # DeviceBindingAndStatus: DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    device_binding: bool = False
    consumable_capacity: bool = False
    # DRAListTypeAttributes: set semantics for matchAttribute and distinctAttribute
    list_type_attributes: bool = False

    @property
    def channel(self) -> str:
        """The name of the allocator upstream's NewAllocator picks for these features."""
        if self.list_type_attributes:
            return "experimental"
        return "incubating" if self.incubating else "stable"

    @property
    def incubating(self) -> bool:
        """Whether upstream would use its "incubating" allocator, or its "experimental" one,
        which is "incubating" plus list-type attributes (see the module doc)."""
        return self.device_binding or self.consumable_capacity or self.list_type_attributes


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    targeting: list[ResourceSlice] = field(default_factory=list)  # device slices for the node
    not_targeting: list[ResourceSlice] = field(default_factory=list)  # the pool's others
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node: Node | None, node_name: str, all_nodes: bool,
                 selector: tuple[NodeSelectorTerm, ...] | None) -> bool:
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_matches_terms(node, selector)
    return False


def gather_pools(slices: list[ResourceSlice], node: Node | None,
                 features: Features) -> list[Pool]:
    """GatherPools: the pools with slices relevant for ``node``, sorted by driver and pool
    name, each at the newest generation among its relevant slices, flagged incomplete (not
    all of that generation's slices published) or invalid (duplicate device or counter set
    names, counters consumed from unknown counter sets); a pool whose generation another
    slice has superseded is left out. Slices sharing counters are relevant everywhere for
    the stable allocator, only where they select the node for the incubating one (which
    then finds them among all the pool's slices)."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if not features.partitionable_devices and (s.per_device_node_selection
                                                   or s.shared_counters):
            continue
        if s.shared_counters and not features.incubating:
            relevant = True
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        elif s.per_device_node_selection:
            relevant = any(node_matches(node, d.node_name, d.all_nodes, d.node_selector)
                           for d in s.devices)
        else:
            continue  # some future way of selecting nodes
        if not relevant:
            continue
        key = (s.driver, s.pool)
        found = pools.get(key)
        if found is None or s.pool_generation > found[0].pool_generation:
            pools[key] = [s]
        elif s.pool_generation == found[0].pool_generation:
            found.append(s)
    result = []
    for key in sorted(pools):
        for_node = pools[key]
        count = for_node[0].resource_slice_count
        if len(for_node) == count:
            result.append(_build_pool(key, for_node, features, None))
            continue
        # Slices left out above (other nodes') may complete the pool, or show that a newer
        # generation replaces it.
        generation = for_node[0].pool_generation
        same = [s for s in slices if (s.driver, s.pool) == key]
        if any(s.pool_generation > generation for s in same):
            continue
        everything = [s for s in same if s.pool_generation == generation]
        if len(everything) != count:
            result.append(Pool(*key, incomplete=True))
            continue
        result.append(_build_pool(key, for_node, features, everything))
    if features.incubating:
        # incubating's GatherPools: pools offering devices with binding conditions come
        # after all others (each group sorted by ID), so devices that bind at once win
        result = ([p for p in result if not _has_binding_conditions(p)]
                  + [p for p in result if _has_binding_conditions(p)])
    return result


def _build_pool(key: tuple[str, str], relevant: list[ResourceSlice], features: Features,
                everything: list[ResourceSlice] | None) -> Pool:
    """buildPool: the slices split into device slices for the node, the pool's other slices
    and its counter sets, and the pool checked."""
    pool = Pool(*key)
    partitionable = features.partitionable_devices
    relevant = sorted(relevant, key=lambda s: s.name)
    counter_slices = [s for s in relevant if partitionable and s.shared_counters]
    pool.targeting = [s for s in relevant if not (partitionable and s.shared_counters)]
    names = {s.name for s in relevant}
    for s in everything or ():
        if s.name in names:
            continue
        if partitionable and s.shared_counters:
            counter_slices.append(s)
        else:
            pool.not_targeting.append(s)
    seen: set[str] = set()
    for s in pool.targeting:
        for d in s.devices:
            if d.name in seen:
                return _invalid(pool, f"duplicate device name {d.name}")
            seen.add(d.name)
    if not partitionable:
        return pool
    for s in counter_slices:
        for cs in s.shared_counters:
            if cs.name in pool.counter_sets:
                return _invalid(pool, f"duplicate counter set name {cs.name}")
            pool.counter_sets[cs.name] = cs.counters
    for s in (*pool.targeting, *pool.not_targeting):
        for d in s.devices:
            for cc in d.consumes_counters:
                counters = pool.counter_sets.get(cc.counter_set)
                if counters is None:
                    return _invalid(pool, f"counter set {cc.counter_set} not found")
                for name in cc.counters:
                    if name not in counters:
                        return _invalid(pool, f"counter {name} not found in counter set "
                                              f"{cc.counter_set}")
    return pool


def _invalid(pool: Pool, reason: str) -> Pool:
    return Pool(pool.driver, pool.name, invalid=True, invalid_reason=reason)


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions for s in pool.targeting for d in s.devices)


@dataclass(slots=True)
class _Candidate:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@dataclass(slots=True)
class _RequestData:
    request: DeviceSubRequest
    parent: str | None  # the parent request's name for a firstAvailable subrequest
    cls: DeviceClass | None
    num_devices: int = 0
    all_devices: list[_Candidate] = field(default_factory=list)
    selected_sub: int = 0

    @property
    def name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent else self.request.name


class _MatchAttribute:
    """matchAttributeConstraint: every device the constraint applies to has the attribute,
    with the same value. With list-type attributes a value is a set (a scalar: a set of one)
    and devices match while the intersection of their sets is not empty."""

    def __init__(self, requests: tuple[str, ...], attribute: str,
                 list_types: bool = False) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.list_types = list_types
        self.value: AttributeValue | None = None
        self.common: AttributeSet | None = None
        self.count = 0

    def _applies(self, request: str, sub: str) -> bool:
        return not self.requests or request in self.requests or (
            bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, c: _Candidate) -> bool:
        if not self._applies(request, sub):
            return True
        value = lookup_attribute(c.device, c.id[0], self.attribute)
        if value is None:
            return False
        if self.list_types:
            values = attribute_set(value)
            if values is None:
                return False
            if self.count:
                values = _intersection(self.common, values)
                if values is None:
                    return False
            self.common = values
        elif not self.count:
            self.value = value
        elif not _same_value(self.value, value):
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str, c: _Candidate) -> None:
        # Upstream's remove only counts down: a narrowed intersection stays narrowed until
        # the constraint is empty again, and so does kubesched's, to take the same devices.
        if self._applies(request, sub):
            self.count -= 1


class _DistinctAttribute(_MatchAttribute):
    """distinctAttributeConstraint: no two devices share a value; with list-type attributes
    the devices' sets are pairwise disjoint."""

    def __init__(self, requests: tuple[str, ...], attribute: str,
                 list_types: bool = False) -> None:
        super().__init__(requests, attribute, list_types)
        self.values: list[AttributeValue] = []

    def add(self, request: str, sub: str, c: _Candidate) -> bool:
        if not self._applies(request, sub):
            return True
        value = lookup_attribute(c.device, c.id[0], self.attribute)
        if value is None or (self.values and not self._distinct(value)):
            return False
        self.values.append(value)
        return True

    def _distinct(self, value: AttributeValue) -> bool:
        if self.list_types:
            new = attribute_set(value)
            if new is None:
                return False
            # devices whose value is no set (an empty list) are not compared with
            return all(_intersection(old, new) is None
                       for old in map(attribute_set, self.values) if old is not None)
        if isinstance(value, tuple):
            return False  # without list-type attributes a list is of no known type
        return not any(_same_value(v, value) for v in self.values)

    def remove(self, request: str, sub: str, c: _Candidate) -> None:
        if self._applies(request, sub):
            self.values.pop()


def _same_value(a: Any, b: Any) -> bool:
    # Without list-type attributes upstream compares the scalar fields only, so a list is
    # never the same as anything; bool is an int in Python: compare the kinds as upstream's
    # typed fields do.
    return not isinstance(a, tuple) and type(a) is type(b) and a == b


# an attribute's values as a set, with the kind of its items (int, bool, str, Semver)
AttributeSet = tuple[type, frozenset[AttributeScalar]]


def attribute_set(value: AttributeValue) -> AttributeSet | None:
    """attributeAsSet: a list's items, or a scalar alone; None for an empty list (its kind
    is unknown, so it matches nothing)."""
    if not isinstance(value, tuple):
        return type(value), frozenset((value,))
    if not value:
        return None
    return type(value[0]), frozenset(value)


def _intersection(a: AttributeSet | None, b: AttributeSet) -> AttributeSet | None:
    """The common values of two sets of one kind, None when there are none (sets of
    different kinds have none)."""
    if a is None or a[0] is not b[0]:
        return None
    common = a[1] & b[1]
    return (a[0], common) if common else None


def lookup_attribute(device: Device, driver: str, name: str) -> AttributeValue | None:
    """A fully-qualified attribute; the driver's own domain may be left out on the device."""
    if name in device.attributes:
        return device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


def taint_prevents_allocation(taints: Iterable[DeviceTaint], request: DeviceSubRequest) -> bool:
    return any(t.effect in (TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE)
               and not any(tol.tolerates(t) for tol in request.tolerations) for t in taints)


# ---------------------------------------------------------------- consumable capacity
# (upstream's consumable_capacity.go, KEP-5075)


def _go_rem(a: int, b: int) -> int:
    """Go's ``%``: the remainder takes the dividend's sign."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def consumed_capacity(requested: Fraction | None, value: Fraction,
                      policy: CapacityRequestPolicy | None) -> Fraction:
    """calculateConsumedCapacity: what one allocation consumes of a capacity. No request:
    the policy's default, else the whole capacity. A request is rounded up to the valid
    range's next step (in whole units, as upstream's int64 ``Value()`` arithmetic) or to the
    first valid value not below it."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if policy is None:
        return requested
    rng = policy.valid_range
    if rng is not None:
        if requested < rng.min:
            return rng.min
        if rng.step is None:
            return requested
        step, low = int_value(rng.step), int_value(rng.min)
        added = int_value(requested) - low
        n = added // step if added >= 0 else -(-added // step)  # Go's truncating division
        if _go_rem(added, step) != 0:
            n += 1
        return Fraction(low + step * n)
    for valid in policy.valid_values:
        if requested <= valid:
            return valid
    return requested


def violates_policy(consumed: Fraction, policy: CapacityRequestPolicy | None) -> bool:
    """violatesPolicy: above the range's max, off its step, or not a valid value. The
    default is always allowed (upstream compares the Quantity structs; equal values here)."""
    if policy is None:
        return False
    if policy.default is not None and consumed == policy.default:
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and consumed > rng.max:
            return True
        if rng.step is not None:
            added = int_value(consumed) - int_value(rng.min)
            return _go_rem(added, int_value(rng.step)) != 0
        return False
    if policy.valid_values:
        return not any(consumed == v for v in policy.valid_values)
    return False


def capacity_fits(current: Mapping[str, Fraction] | None, requests: Mapping[str, Fraction],
                  device: Device, allocating: Mapping[str, Fraction] | None) -> bool | None:
    """CmpRequestOverCapacity: whether one more allocation of ``device`` for ``requests``
    fits beside what allocated claims (``current``) and this Allocate call (``allocating``)
    already consume of each capacity. None is upstream's error (a requested capacity the
    device does not have), which its callers treat as "does not fit"."""
    if any(name not in device.capacity for name in requests):
        return None
    for name, value in device.capacity.items():
        policy = device.capacity_policies.get(name)
        consumed = consumed_capacity(requests.get(name), value, policy)
        if violates_policy(consumed, policy):
            return False
        total = consumed
        if current is not None and name in current:
            total += current[name]
        if allocating is not None and name in allocating:
            total += allocating[name]
        if total > value:
            return False
    return True


def consumed_from_request(requests: Mapping[str, Fraction], device: Device
                          ) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what one allocation consumes of every capacity."""
    return {name: consumed_capacity(requests.get(name), value,
                                    device.capacity_policies.get(name))
            for name, value in device.capacity.items()}


def share_id(claim: ResourceClaim, request: str, device: DeviceID, index: int) -> str:
    """A ShareID for one allocation of a device that allows multiple allocations. Upstream:
    a random UUID; here one derived from the claim, request, device and the result's index,
    so runs replay (unique per claim, as the claim's uid or key is part of it)."""
    name = "/".join((claim.uid or claim.key, request, *device, str(index)))
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "kubesched:share:" + name))


def kobj(claim: ResourceClaim) -> str:
    """klog.KObj: ``namespace/name``, or the name alone for an empty namespace."""
    return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name


class _Stop(Exception):
    pass


class _MaxSizeExceeded(Exception):
    pass


class Allocator:
    """One per scheduling cycle (upstream: built in PreFilter), used for every node."""

    def __init__(self, features: Features, allocated: set[DeviceID] | AllocatedState,
                 classes: Mapping[str, DeviceClass], slices: list[ResourceSlice],
                 taint_rules: Iterable[DeviceTaintRule] = ()) -> None:
        """``allocated``: the allocated state, or just the exclusively held devices."""
        self.features = features
        self.state = (allocated if isinstance(allocated, AllocatedState)
                      else AllocatedState(set(allocated)))
        self.allocated = self.state.devices
        self.classes = classes
        self.slices = slices
        self.taint_rules = list(taint_rules)
        # device (by identity) and expression -> selected?; the devices are immutable
        self._matches: dict[tuple[int, str], bool] = {}
        self._inputs: dict[int, DeviceInput] = {}
        self._available_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        self.num_allocate_one = 0

    # ---------------------------------------------------------------- selectors

    def _device_input(self, driver: str, device: Device) -> DeviceInput:
        key = id(device)
        found = self._inputs.get(key)
        if found is None:
            multi = (device.allow_multiple_allocations
                     if self.features.consumable_capacity else None)
            found = self._inputs[key] = device_input(driver, device.attributes,
                                                     device.capacity, multi)
        return found

    def _selectors_match(self, claim: ResourceClaim, cls: DeviceClass | None,
                         selectors: tuple[str, ...], c: _Candidate) -> bool:
        for i, expr in enumerate(selectors):
            key = (id(c.device), expr)
            hit = self._matches.get(key)
            if hit is not None:
                if not hit:
                    return False
                continue
            compiled = compile_selector(expr)
            who = f"class {cls.name}" if cls is not None else f"claim {kobj(claim)}"
            if isinstance(compiled, CelCompileError):
                raise AllocationError(f"{who}: selector #{i}: CEL compile error: "
                                      f"{compiled.detail}")
            try:
                hit = compiled.device_matches(self._device_input(c.id[0], c.device))
            except CelRuntimeError as e:
                raise AllocationError(
                    f"{who}: selector #{i} on device {'/'.join(c.id)}: CEL runtime error: "
                    f"{e}") from None
            self._matches[key] = hit
            if not hit:
                return False
        return True

    def _is_selectable(self, node: Node | None, claim: ResourceClaim, rd: _RequestData,
                       c: _Candidate) -> bool:
        if not self.features.device_binding and c.device.binding_conditions:
            return False
        if rd.cls is not None and not self._selectors_match(claim, rd.cls, rd.cls.selectors,
                                                            c):
            return False
        if not self._selectors_match(claim, None, rd.request.selectors, c):
            return False
        if c.slice.per_device_node_selection:
            d = c.device
            return node_matches(node, d.node_name, d.all_nodes, d.node_selector)
        return True

    def _device_taints(self, c: _Candidate) -> tuple[DeviceTaint, ...]:
        if not self.taint_rules:
            return c.device.taints
        extra = tuple(r.taint for r in self.taint_rules if self._rule_selects(r, c))
        return c.device.taints + extra

    def _rule_selects(self, rule: DeviceTaintRule, c: _Candidate) -> bool:
        driver, pool, name = c.id
        if (rule.driver and rule.driver != driver) or (rule.pool and rule.pool != pool) or \
                (rule.device and rule.device != name):
            return False
        if rule.device_class_name:
            cls = self.classes.get(rule.device_class_name)
            if cls is None:
                return False
            selectors = cls.selectors + rule.selectors
        else:
            selectors = rule.selectors
        for expr in selectors:
            compiled = compile_selector(expr)
            if isinstance(compiled, CelCompileError):
                return False
            try:
                if not compiled.device_matches(self._device_input(driver, c.device)):
                    return False
            except CelRuntimeError:
                return False
        return True

    # ---------------------------------------------------------------- counters

    def _available(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """The pool's counters less what allocated devices (this node's or not) consume."""
        key = (pool.driver, pool.name)
        found = self._available_counters.get(key)
        if found is not None:
            return found
        avail = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        for s in (*pool.targeting, *pool.not_targeting):
            for d in s.devices:
                if not self.state.is_allocated((pool.driver, pool.name, d.name)):
                    continue
                for cc in d.consumes_counters:
                    cset = avail.get(cc.counter_set)
                    if cset is None:
                        continue
                    for name, v in cc.counters.items():
                        if name in cset:
                            cset[name] -= v
        self._available_counters[key] = avail
        return avail

    # ---------------------------------------------------------------- allocation

    def allocate(self, node: Node | None, claims: list[ResourceClaim],
                 expired: Callable[[], bool] | None = None) -> list[AllocationResult] | None:
        """``expired``: asked before every step of the search; True aborts it with
        AllocationAborted (upstream's context deadline, DynamicResourcesArgs.filterTimeout)."""
        pools = gather_pools(self.slices, node, self.features)
        run = _Run(self, node, claims, pools, expired)
        return run.run()


@dataclass(slots=True)
class _Result:
    """internalDeviceResult: one device chosen for a request."""

    rd: _RequestData
    c: _Candidate
    admin: bool | None
    share_id: str | None = None
    consumed: dict[str, Fraction] | None = None


class _Run:
    """One Allocate call (upstream's unexported ``allocator``)."""

    def __init__(self, a: Allocator, node: Node | None, claims: list[ResourceClaim],
                 pools: list[Pool], expired: Callable[[], bool] | None = None) -> None:
        self.a = a
        self.expired = expired
        self.node = node
        self.claims = claims
        self.pools = pools
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.consumed: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        # allocatingCapacity: what this call's allocations consume of shared devices
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}

    def _class(self, claim: ResourceClaim, req: DeviceSubRequest) -> DeviceClass:
        if not req.device_class_name:
            raise AllocationError(f"claim {kobj(claim)}, request {req.name}: missing device "
                                  "class name (unsupported request type?)")
        cls = self.a.classes.get(req.device_class_name)
        if cls is None:
            raise AllocationError(
                f"claim {kobj(claim)}, request {req.name}: could not retrieve device class "
                f'{req.device_class_name}: deviceclass.resource.k8s.io "'
                f'{req.device_class_name}" not found')
        return cls

    def _validate(self, ci: int, req: DeviceSubRequest, parent: str | None) -> _RequestData:
        claim = self.claims[ci]
        for i, expr in enumerate(req.selectors):
            if not expr:
                raise AllocationError(f"claim {kobj(claim)}, request {req.name}, selector "
                                      f"#{i}: CEL expression empty (unsupported selector type?)")
        if not self.a.features.admin_access and req.admin_access is not None:
            raise AllocationError(f"claim {kobj(claim)}, request {req.name}: admin access is "
                                  "requested, but the feature is disabled")
        rd = _RequestData(req, parent, self._class(claim, req))
        if req.allocation_mode == EXACT_COUNT:
            rd.num_devices = req.count
        elif req.allocation_mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {kobj(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.pool_id} is currently being updated")
                if pool.invalid:
                    raise AllocationError(
                        f"claim {kobj(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.pool_id} is currently invalid")
                for s in pool.targeting:
                    for d in s.devices:
                        c = _Candidate((pool.driver, pool.name, d.name), d, s, pool)
                        if self.a._is_selectable(self.node, claim, rd, c) and \
                                self._capacity_fits(req, c):
                            rd.all_devices.append(c)
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {kobj(claim)}, request {req.name}: unsupported count "
                                  f"mode {req.allocation_mode}")
        return rd

    def _capacity_fits(self, req: DeviceSubRequest, c: _Candidate) -> bool:
        """The capacity check (consumable capacity on; always true when off)."""
        if not self.a.features.consumable_capacity:
            return True
        return bool(capacity_fits(self.a.state.capacity.get(c.id), req.capacity_requests or {},
                                  c.device, self.allocating_capacity.get(c.id)))

    def _check_capacity_requests(self, claim: ResourceClaim, request: DeviceRequest) -> None:
        """incubating refuses capacity requests while DRAConsumableCapacity is off (the
        stable allocator, used then unless binding conditions are on, ignores them)."""
        if self.a.features.consumable_capacity or not self.a.features.incubating:
            return
        if request.exactly is not None and request.exactly.capacity_requests is not None:
            raise AllocationError(f"claim {kobj(claim)}, request {request.name}: has capacity "
                                  "requests, but the DRAConsumableCapacity feature is disabled")
        for sub in request.first_available:
            if sub.capacity_requests is not None:
                raise AllocationError(
                    f"claim {kobj(claim)}, subrequest {sub.name}: has capacity requests, but "
                    "the DRAConsumableCapacity feature is disabled")

    def run(self) -> list[AllocationResult] | None:
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available and not self.a.features.prioritized_list:
                    raise AllocationError(
                        f"claim {kobj(claim)}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled")
                self._check_capacity_requests(claim, request)
                if request.first_available:
                    least = None
                    for si, sub in enumerate(request.first_available):
                        rd = self._validate(ci, sub, request.name)
                        self.request_data[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least,
                                                                         rd.num_devices)
                    min_devices += least or 0
                else:
                    assert request.exactly is not None
                    rd = self._validate(ci, request.exactly, None)
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {kobj(claim)}: number of requested devices {min_devices} exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            constraints: list[_MatchAttribute] = []
            for i, c in enumerate(claim.spec.constraints):
                lists = self.a.features.list_type_attributes
                if c.match_attribute is not None:
                    constraints.append(_MatchAttribute(c.requests, c.match_attribute, lists))
                elif c.distinct_attribute is not None and self.a.features.incubating:
                    constraints.append(_DistinctAttribute(c.requests, c.distinct_attribute,
                                                          lists))
                else:
                    raise AllocationError(f"claim {kobj(claim)}, constraint #{i}: empty "
                                          "constraint (unsupported constraint type?)")
            self.constraints.append(constraints)
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _Stop:
            return None
        except _MaxSizeExceeded:
            done = False
        if not done:
            for pool in self.pools:
                if pool.invalid:
                    raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    # -- the search

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool,
                      start: tuple[int, int, int] = (0, 0, 0)) -> bool:
        """allocateOne: device ``di`` of request ``ri`` (subrequest ``si``) of claim ``ci``.
        ``start`` (incubating's startLocation: pool, slice, device) is where the search for
        this device begins, just after the request's previous device, so a request tries
        combinations of devices rather than every permutation."""
        self.a.num_allocate_one += 1
        if self.expired is not None and self.expired():
            raise AllocationAborted("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        rd = self.request_data[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        req = rd.request
        do_all = req.allocation_mode == ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if do_all:
            c = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, c, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = bool(req.admin_access)
        combinations = self.a.features.incubating
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            first_slice = start[1] if pi == start[0] else 0
            for sj in range(first_slice, len(pool.targeting)):
                s = pool.targeting[sj]
                first_device = start[2] if (pi, sj) == start[:2] else 0
                for dk in range(first_device, len(s.devices)):
                    d = s.devices[dk]
                    did = (pool.driver, pool.name, d.name)
                    if admin:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    c = _Candidate(did, d, s, pool)
                    if not self.a._is_selectable(self.node, claim, rd, c):
                        continue
                    if not self._capacity_fits(req, c):
                        continue
                    undo = self._allocate_device(ci, rd, c, must=False)
                    if undo is None:
                        continue
                    nxt = (pi, sj, dk + 1) if combinations else (0, 0, 0)
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub, nxt)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        """deviceInUse: held exclusively by an allocated claim or by this call."""
        return did in self.a.allocated or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        """deviceCapacityInUse: an allocated claim or this call shares the device."""
        return did in self.a.state.capacity or did in self.allocating_capacity

    def _allocate_device(self, ci: int, rd: _RequestData, c: _Candidate, *,
                         must: bool) -> Callable[[], None] | None:
        """allocateDevice: take ``c`` for ``rd`` if it is free, fits and keeps the claim's
        constraints; returns how to give it back, or None.

        As upstream, counters a candidate took are not given back when a taint or a
        constraint then rejects it (they stay consumed until this Allocate call ends), and a
        device allowing multiple allocations never gives its counters back."""
        req = rd.request
        admin = bool(req.admin_access)
        multi = self.a.features.consumable_capacity and c.device.allow_multiple_allocations
        if not multi and admin and ci in self.allocating.get(c.id, ()):
            return None
        if not admin and self._in_use(c.id):
            return None
        if c.device.consumes_counters:
            if not self.a.features.partitionable_devices:
                return None
            # a shared device already in use has had its counters taken
            if not (multi and self._capacity_in_use(c.id)) and not self._take_counters(c):
                return None
        if self.a.features.device_taints and taint_prevents_allocation(
                self.a._device_taints(c), req):
            return None
        base = rd.parent or req.name
        sub = req.name if rd.parent else ""
        constraints = self.constraints[ci]
        for i, con in enumerate(constraints):
            if not con.add(base, sub, c):
                if must:
                    raise AllocationError(
                        f"claim {kobj(self.claims[ci])}, request {req.name}: cannot add device "
                        f"{'/'.join(c.id)} because a claim constraint would not be satisfied")
                for done in constraints[:i]:
                    done.remove(base, sub, c)
                return None
        holders = self.allocating.setdefault(c.id, set())
        if not multi:
            holders.add(ci)
        share: str | None = None
        consumed: dict[str, Fraction] | None = None
        if self.a.features.consumable_capacity:
            # Checked by every caller before; upstream returns without undoing the above
            # if it fails here (possible only for "All" requests whose devices another
            # request of the call has filled since), and so does kubesched.
            if not self._capacity_fits(req, c):
                return None
            if multi:
                consumed = consumed_from_request(req.capacity_requests or {}, c.device)
                share = share_id(self.claims[ci], rd.name, c.id, len(self.results[ci]))
                add_capacity(self.allocating_capacity, c.id, consumed)
        self.results[ci].append(_Result(rd, c, True if admin else None, share,
                                        consumed or None))

        def undo() -> None:
            for con in constraints:
                con.remove(base, sub, c)
            holders.discard(ci)
            if multi:
                # an allocation consuming nothing stays recorded as a share (upstream)
                if consumed:
                    remove_capacity(self.allocating_capacity, c.id, consumed)
            elif self.a.features.partitionable_devices and c.device.consumes_counters:
                self._release_counters(c)
            self.results[ci].pop()
        return undo

    def _take_counters(self, c: _Candidate) -> bool:
        avail = self.a._available(c.pool)
        consumed = self.consumed.setdefault((c.pool.driver, c.pool.name), {})
        for cc in c.device.consumes_counters:
            cset = consumed.setdefault(cc.counter_set, {})
            for name, v in cc.counters.items():
                cset[name] = cset.get(name, Fraction(0)) + v
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._release_counters(c)
                    return False
        return True

    def _release_counters(self, c: _Candidate) -> None:
        consumed = self.consumed[(c.pool.driver, c.pool.name)]
        for cc in c.device.consumes_counters:
            cset = consumed[cc.counter_set]
            for name, v in cc.counters.items():
                cset[name] -= v

    # -- results

    def _result(self, ci: int) -> AllocationResult:
        claim = self.claims[ci]
        binding = self.a.features.device_binding
        results = tuple(
            DeviceRequestAllocationResult(
                request=r.rd.name, driver=r.c.id[0], pool=r.c.id[1], device=r.c.id[2],
                admin_access=r.admin, tolerations=r.rd.request.tolerations,
                share_id=r.share_id, consumed_capacity=dict(r.consumed or {}),
                binding_conditions=r.c.device.binding_conditions if binding else (),
                binding_failure_conditions=(r.c.device.binding_failure_conditions
                                            if binding else ()))
            for r in self.results[ci])
        config: list[AllocatedDeviceConfiguration] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(claim.spec.requests)):
            rd = self.request_data[(ci, ri, 0)]
            if rd.parent is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub)]
            cls = rd.cls
            if cls is None:
                continue
            if cls.name in class_ranges:
                start, end = class_ranges[cls.name]
                for i in range(start, end):
                    old = config[i]
                    config[i] = AllocatedDeviceConfiguration(
                        old.source, (*old.requests, rd.name), old.opaque)
                continue
            start = len(config)
            for cfg in cls.config:
                config.append(AllocatedDeviceConfiguration("FromClass", (rd.name,), cfg.opaque))
            class_ranges[cls.name] = (start, len(config))
        # the names a config may use for each request: its own, or the chosen subrequest's
        names = []
        for ri, request in enumerate(claim.spec.requests):
            rd = self.request_data[(ci, ri, 0)]
            chosen = (f"{request.name}/{request.first_available[rd.selected_sub].name}"
                      if rd.parent is not None else None)
            names.append((request.name, chosen))
        for cfg in claim.spec.config:
            # empty requests apply to all; otherwise the config is kept once if it names
            # any request (or its chosen subrequest)
            if not cfg.requests or any(name in cfg.requests or chosen in cfg.requests
                                       for name, chosen in names):
                config.append(AllocatedDeviceConfiguration("FromClaim", cfg.requests,
                                                            cfg.opaque))
        # a config naming every request applies to all: "empty means all"
        config = [AllocatedDeviceConfiguration(c.source, (), c.opaque)
                  if c.requests and all(name in c.requests or chosen in c.requests
                                        for name, chosen in names) else c
                  for c in config]
        return AllocationResult(results, tuple(config),
                                self._node_selector([r.c for r in self.results[ci]]))

    def _node_selector(self, cands: list[_Candidate]) -> tuple[NodeSelectorTerm, ...] | None:
        """createNodeSelector: a node-local device (or, incubating, one that binds to its
        node) pins the claim to the node; otherwise the devices' selectors merged."""
        fields: list[NodeSelectorRequirement] = []
        exprs: list[NodeSelectorRequirement] = []
        for c in cands:
            if c.slice.per_device_node_selection:
                name, sel = c.device.node_name, c.device.node_selector
            else:
                name, sel = c.slice.node_name, c.slice.node_selector
            binds = self.a.features.incubating and c.device.binds_to_node
            if name or binds:
                # the node the allocation is for (the device's own for a node-local one)
                target = self.node.name if self.node is not None else name
                return (NodeSelectorTerm(match_fields=(
                    NodeSelectorRequirement("metadata.name", "In", (target,)),)),)
            if sel is not None:
                if len(sel) > 1:
                    raise AllocationError(f"create NodeSelector for claim: unsupported "
                                          f"ResourceSlice.NodeSelector with {len(sel)} terms")
                if sel:
                    for req in sel[0].match_fields:
                        if not any(_same_requirement(req, r) for r in fields):
                            fields.append(req)
                    for req in sel[0].match_expressions:
                        if not any(_same_requirement(req, r) for r in exprs):
                            exprs.append(req)
        if fields or exprs:
            return (NodeSelectorTerm(match_expressions=tuple(exprs),
                                     match_fields=tuple(fields)),)
        return None


def _same_requirement(a: NodeSelectorRequirement, b: NodeSelectorRequirement) -> bool:
    return a.key == b.key and a.operator == b.operator and set(a.values) == set(b.values)
