"""The structured allocator: kubesched's own cases (the features through kubesched's
objects, one case each). Upstream's shared table is ported in
``test_dra_allocator_upstream.py``.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

from kubesched.api.dra.cel import Semver
from kubesched.api.dra.types import (
    ALL,
    CounterSet,
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.api.types import Node, NodeSelectorRequirement, NodeSelectorTerm, ObjectMeta
from kubesched.plugins.dynamicresources.structured import AllocationError, Allocator, Features

driverA, driverB = "driver-a", "driver-b"
pool1, pool2 = "pool-1", "pool-2"
node1, node2 = "node-1", "node-2"
region1, region2 = "region-1", "region-2"
slice1, slice2 = "slice-1", "slice-2"
device1, device2, device3 = "device-1", "device-2", "device-3"
classA, classB = "class-a", "class-b"
claim0, claim1 = "claim-0", "claim-1"
req0, req1 = "req-0", "req-1"

ALL_FEATURES = Features(admin_access=True, prioritized_list=True, partitionable_devices=True,
                        device_taints=True)


def node(name: str, region: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={"region": region}))


def dra_class(name: str, driver: str) -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=name),
                       selectors=(f'device.driver == "{driver}"',))


def sub(name: str, cls: str, count: int = 1, *selectors: str, **kw: Any) -> DeviceSubRequest:
    return DeviceSubRequest(name=name, device_class_name=cls, selectors=selectors,
                            count=count, **kw)


def request(name: str, cls: str, count: int = 1, *selectors: str,
            **kw: Any) -> DeviceRequest:
    return DeviceRequest(name, sub(name, cls, count, *selectors, **kw))


def claim(name: str, *requests: DeviceRequest,
          constraints: tuple[DeviceConstraint, ...] = ()) -> ResourceClaim:
    return ResourceClaim(metadata=ObjectMeta(name=name, namespace="default"),
                         spec=DeviceClaim(requests, constraints))


def claim_with_request(name: str, req: str, cls: str) -> ResourceClaim:
    return claim(name, request(req, cls))


def device(name: str, capacity: dict[str, str] | None = None,
           attributes: dict[str, Any] | None = None, **kw: Any) -> Device:
    from kubesched.api.quantity import parse_quantity
    return Device(name=name, attributes=attributes or {},
                  capacity={k: parse_quantity(v) for k, v in (capacity or {}).items()}, **kw)


def slice_with_devices(name: str, node_name: str, pool: str, driver: str, *devices: Device,
                       count: int = 1, generation: int = 0, **kw: Any) -> ResourceSlice:
    return ResourceSlice(metadata=ObjectMeta(name=name), driver=driver, pool=pool,
                         pool_generation=generation, resource_slice_count=count,
                         node_name=node_name, devices=devices, **kw)


def slice_with_one_device(name: str, node_name: str, pool: str, driver: str,
                          **kw: Any) -> ResourceSlice:
    return slice_with_devices(name, node_name, pool, driver, device(device1), **kw)


def local(node_name: str) -> tuple[NodeSelectorTerm, ...]:
    return (NodeSelectorTerm(match_fields=(
        NodeSelectorRequirement("metadata.name", "In", (node_name,)),)),)


def run(claims: list[ResourceClaim], classes: list[DeviceClass], slices: list[ResourceSlice],
        n: Node, *, allocated: set[tuple[str, str, str]] | None = None,
        features: Features = ALL_FEATURES) -> list[list[tuple[Any, ...]]] | None:
    """The results as [(request, driver, pool, device, adminAccess)] per claim, the node
    selector checked to be the node's own where every device is node-local."""
    a = Allocator(features, allocated or set(), {c.name: c for c in classes}, slices)
    results = a.allocate(n, claims)
    if results is None:
        return None
    out = []
    for r in results:
        assert r.node_selector in (local(n.name), None) or r.node_selector is not None
        out.append([(d.request, d.driver, d.pool, d.device, d.admin_access)
                    for d in r.results])
    return out


def dev(req: str, driver: str, pool: str, name: str, admin: bool = False) -> tuple[Any, ...]:
    return (req, driver, pool, name, True if admin else None)


MEM1 = f'device.capacity["{driverA}"].memory.compareTo(quantity("1Gi")) >= 0'
MEM2 = f'device.capacity["{driverA}"].memory.compareTo(quantity("2Gi")) >= 0'


# kubesched's own cases, beside upstream's table (test_dra_allocator_upstream.py)


def all_request(name: str, cls: str) -> DeviceRequest:
    return DeviceRequest(name, sub(name, cls, 0, allocation_mode=ALL))




def test_already_allocated_devices_are_skipped() -> None:
    got = run([claim(claim0, request(req0, classA))], [dra_class(classA, driverA)],
              [slice_with_devices(slice1, node1, pool1, driverA, device(device1),
                                  device(device2))], node(node1, region1),
              allocated={(driverA, pool1, device1)})
    assert got == [[dev(req0, driverA, pool1, device2)]]


def test_all_mode_fails_when_one_is_allocated() -> None:
    assert run([claim(claim0, all_request(req0, classA))], [dra_class(classA, driverA)],
               [slice_with_devices(slice1, node1, pool1, driverA, device(device1),
                                   device(device2))], node(node1, region1),
               allocated={(driverA, pool1, device1)}) is None


def test_match_attribute_backtracks() -> None:
    numa = f"{driverA}/numa"
    got = run([claim(claim0, request(req0, classA), request(req1, classA),
                     constraints=(DeviceConstraint(match_attribute=numa),))],
              [dra_class(classA, driverA)],
              [slice_with_devices(slice1, node1, pool1, driverA,
                                  device(device1, attributes={"numa": 1}),
                                  device(device2, attributes={"numa": 2}),
                                  device(device3, attributes={"numa": 2}))],
              node(node1, region1))
    assert got == [[dev(req0, driverA, pool1, device2), dev(req1, driverA, pool1, device3)]]


def test_match_attribute_missing_attribute() -> None:
    assert run([claim(claim0, request(req0, classA),
                      constraints=(DeviceConstraint(match_attribute=f"{driverA}/nope"),))],
               [dra_class(classA, driverA)],
               [slice_with_one_device(slice1, node1, pool1, driverA)],
               node(node1, region1)) is None


def test_distinct_attribute() -> None:
    # distinctAttribute is KEP-5075's: only the incubating allocator knows it
    got = run([claim(claim0, request(req0, classA, 2),
                     constraints=(DeviceConstraint(distinct_attribute=f"{driverA}/numa"),))],
              [dra_class(classA, driverA)],
              [slice_with_devices(slice1, node1, pool1, driverA,
                                  device(device1, attributes={"numa": 1}),
                                  device(device2, attributes={"numa": 1}),
                                  device(device3, attributes={"numa": 2}))],
              node(node1, region1), features=replace(ALL_FEATURES, consumable_capacity=True))
    assert got == [[dev(req0, driverA, pool1, device1), dev(req0, driverA, pool1, device3)]]


def test_first_available_falls_back() -> None:
    big = f'device.attributes["{driverA}"].model == "big"'
    req = DeviceRequest(req0, None, (sub("large", classA, 1, big), sub("small", classA, 2)))
    got = run([claim(claim0, req)], [dra_class(classA, driverA)],
              [slice_with_devices(slice1, node1, pool1, driverA,
                                  device(device1, attributes={"model": "small"}),
                                  device(device2, attributes={"model": "small"}))],
              node(node1, region1))
    assert got == [[dev("req-0/small", driverA, pool1, device1),
                    dev("req-0/small", driverA, pool1, device2)]]


def test_first_available_off() -> None:
    req = DeviceRequest(req0, None, (sub("a", classA),))
    with pytest.raises(AllocationError, match="DRAPrioritizedList feature is disabled"):
        run([claim(claim0, req)], [dra_class(classA, driverA)],
            [slice_with_one_device(slice1, node1, pool1, driverA)], node(node1, region1),
            features=Features(prioritized_list=False))


def test_taints_and_tolerations() -> None:
    taint = DeviceTaint("taint-key", "taint-value", "NoSchedule")
    slices = [slice_with_devices(slice1, node1, pool1, driverA,
                                 device(device1, taints=(taint,)))]
    assert run([claim(claim0, request(req0, classA))], [dra_class(classA, driverA)], slices,
               node(node1, region1)) is None
    tol = DeviceToleration(key="taint-key", operator="Exists", effect="NoSchedule")
    got = run([claim(claim0, request(req0, classA, tolerations=(tol,)))],
              [dra_class(classA, driverA)], slices, node(node1, region1))
    assert got == [[dev(req0, driverA, pool1, device1)]]
    # the None effect never prevents allocation; with the feature off nothing does
    none = [slice_with_devices(slice1, node1, pool1, driverA, device(
        device1, taints=(replace(taint, effect="None"),)))]
    assert run([claim(claim0, request(req0, classA))], [dra_class(classA, driverA)], none,
               node(node1, region1)) is not None
    assert run([claim(claim0, request(req0, classA))], [dra_class(classA, driverA)], slices,
               node(node1, region1), features=Features(device_taints=False)) is not None


def test_admin_access_ignores_allocation() -> None:
    got = run([claim(claim0, request(req0, classA, admin_access=True))],
              [dra_class(classA, driverA)],
              [slice_with_one_device(slice1, node1, pool1, driverA)], node(node1, region1),
              allocated={(driverA, pool1, device1)})
    assert got == [[dev(req0, driverA, pool1, device1, admin=True)]]
    with pytest.raises(AllocationError, match="admin access is requested, but the feature"):
        run([claim(claim0, request(req0, classA, admin_access=True))],
            [dra_class(classA, driverA)],
            [slice_with_one_device(slice1, node1, pool1, driverA)], node(node1, region1),
            features=Features(admin_access=False))


def test_shared_counters_partitions() -> None:
    def part(name: str, mem: str) -> Device:
        return device(name, consumes_counters=(
            DeviceCounterConsumption("gpu-0", {"memory": Fraction(int(mem))}),))
    # the counters in a slice of their own, as the API requires (devices and sharedCounters
    # are never in one slice); both slices make up the pool
    slices = [slice_with_devices(slice1, node1, pool1, driverA, part(device1, "8"),
                                 part(device2, "4"), part(device3, "4"), count=2),
              ResourceSlice(metadata=ObjectMeta(name=slice2), driver=driverA, pool=pool1,
                            resource_slice_count=2,
                            shared_counters=(CounterSet("gpu-0", {"memory": Fraction(8)}),))]
    got = run([claim(claim0, request(req0, classA, 2))], [dra_class(classA, driverA)], slices,
              node(node1, region1))
    assert got == [[dev(req0, driverA, pool1, device2), dev(req0, driverA, pool1, device3)]]
    # the whole GPU taken: its partitions are gone
    assert run([claim(claim0, request(req0, classA))], [dra_class(classA, driverA)], slices,
               node(node1, region1), allocated={(driverA, pool1, device1)}) is None
    # the feature off: devices consuming counters are never allocated
    assert run([claim(claim0, request(req0, classA))], [dra_class(classA, driverA)], slices,
               node(node1, region1), features=Features()) is None


def test_node_selector_and_all_nodes_pools() -> None:
    sel = (NodeSelectorTerm(match_expressions=(
        NodeSelectorRequirement("region", "In", (region1,)),)),)
    s = ResourceSlice(metadata=ObjectMeta(name=slice1), driver=driverA, pool=pool1,
                      node_selector=sel, devices=(device(device1),))
    a = Allocator(ALL_FEATURES, set(), {classA: dra_class(classA, driverA)}, [s])
    r = a.allocate(node(node1, region1), [claim_with_request(claim0, req0, classA)])
    assert r is not None and r[0].node_selector == sel
    assert a.allocate(node(node2, region2), [claim_with_request(claim0, req0, classA)]) is None
    s2 = replace(s, node_selector=None, all_nodes=True)
    a = Allocator(ALL_FEATURES, set(), {classA: dra_class(classA, driverA)}, [s2])
    r = a.allocate(node(node2, region2), [claim_with_request(claim0, req0, classA)])
    assert r is not None and r[0].node_selector is None


def test_cel_runtime_error_is_an_error() -> None:
    with pytest.raises(AllocationError, match=r"claim default/claim-0: selector #0 on device "
                       r"driver-a/pool-1/device-1: CEL runtime error"):
        run([claim(claim0, request(req0, classA, 1,
                                   f'device.attributes["{driverA}"].missing == 1'))],
            [dra_class(classA, driverA)],
            [slice_with_one_device(slice1, node1, pool1, driverA)], node(node1, region1))


def test_semver_attribute_selector() -> None:
    expr = f'device.attributes["{driverA}"].driverVersion.isGreaterThan(semver("1.0.0"))'
    got = run([claim(claim0, request(req0, classA, 1, expr))], [dra_class(classA, driverA)],
              [slice_with_devices(slice1, node1, pool1, driverA,
                                  device(device1, attributes={"driverVersion": Semver("0.9.0")}),
                                  device(device2, attributes={"driverVersion": Semver("1.1.0")}))],
              node(node1, region1))
    assert got == [[dev(req0, driverA, pool1, device2)]]


def test_consumed_capacity_rounds_in_whole_units() -> None:
    """roundUpRange works on Quantity.Value() (rounded up to whole units) in int64: a
    fractional minimum and request round as upstream's arithmetic does, not exactly."""
    from kubesched.api.dra.types import CapacityRequestPolicy, CapacityRequestPolicyRange
    from kubesched.plugins.dynamicresources.structured import consumed_capacity
    half = Fraction(1, 2)
    rng = CapacityRequestPolicy(valid_range=CapacityRequestPolicyRange(half, None, Fraction(1)))
    # Value(): 1.2 -> 2, 0.5 -> 1; 1 + 1 step = 2 (exactly: 0.5 + 1 = 1.5 would do)
    assert consumed_capacity(Fraction(6, 5), Fraction(10), rng) == 2
    assert consumed_capacity(Fraction(1, 4), Fraction(10), rng) == half  # below min: min
    assert consumed_capacity(None, Fraction(10), rng) == 10  # no default: all of it
    values = CapacityRequestPolicy(default=Fraction(1), valid_values=(Fraction(1), Fraction(4)))
    assert consumed_capacity(Fraction(2), Fraction(10), values) == 4  # next valid value
    assert consumed_capacity(Fraction(5), Fraction(10), values) == 5  # none: as requested
    assert consumed_capacity(None, Fraction(10), values) == 1  # the default


LISTS = replace(ALL_FEATURES, list_type_attributes=True)
KIND = f'device.attributes["{driverA}"].kind'


def _numa_devices() -> ResourceSlice:
    # req-0 takes two "x" devices, req-1 one "y"; all of them share a NUMA node
    return slice_with_devices(
        slice1, node1, pool1, driverA,
        device(device1, attributes={"kind": "x", "numa": ("a", "b")}),
        device(device2, attributes={"kind": "x", "numa": ("b",)}),
        device(device3, attributes={"kind": "x", "numa": ("a",)}),
        device("device-4", attributes={"kind": "y", "numa": ("a",)}))


def test_match_attribute_intersection_is_not_widened_on_backtracking() -> None:
    """Upstream's matchAttribute narrows its intersection as devices are added and only
    counts down when one is taken back: after device-2 ({b}) is given back, the set stays
    {b}, so device-3 ({a}) no longer fits beside device-1 ({a, b}) and the claim cannot be
    allocated, although device-1, device-3 and device-4 share "a". kubesched takes the same
    (no) devices."""
    claims = [claim(claim0, request(req0, classA, 2, f'{KIND} == "x"'),
                    request(req1, classA, 1, f'{KIND} == "y"'),
                    constraints=(DeviceConstraint(match_attribute=f"{driverA}/numa"),))]
    assert run(claims, [dra_class(classA, driverA)], [_numa_devices()], node(node1, region1),
               features=LISTS) is None
    # device-2 out of the way, the same claim is allocated
    without = replace(_numa_devices(), devices=tuple(
        d for d in _numa_devices().devices if d.name != device2))
    assert run(claims, [dra_class(classA, driverA)], [without], node(node1, region1),
               features=LISTS) == [[dev(req0, driverA, pool1, device1),
                                    dev(req0, driverA, pool1, device3),
                                    dev(req1, driverA, pool1, "device-4")]]


def test_list_type_attributes_pick_the_experimental_channel() -> None:
    # upstream's experimental allocator is incubating's plus lists: distinctAttribute works
    # with DRAListTypeAttributes on even when DRAConsumableCapacity is off
    assert LISTS.incubating
    got = run([claim(claim0, request(req0, classA, 2),
                     constraints=(DeviceConstraint(distinct_attribute=f"{driverA}/numa"),))],
              [dra_class(classA, driverA)], [_numa_devices()], node(node1, region1),
              features=LISTS)
    assert got == [[dev(req0, driverA, pool1, device2), dev(req0, driverA, pool1, device3)]]
