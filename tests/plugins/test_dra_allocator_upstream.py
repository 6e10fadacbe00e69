"""Upstream's shared allocator test table, ported case by case.

Source: kubernetes ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`` at the staging mirror's commit 3d036712 (kubernetes
dde51bfc, July 2026, v1.37 development: the newest stored; 219 cases). Every case of
``TestAllocator``'s table is here under its upstream name, written with the Go helpers'
names (``_dra_gotypes``) so it can be read beside the Go file. All pass. Like upstream's,
some cases build objects the API server (and kubesched's loader) refuses — a selector
without ``cel``, an attribute without a value — and the allocator answers them as
upstream's does.
"""

# ruff: noqa: E501, F403, F405

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _dra_gotypes import *

nonExistentAttribute = driverA + "/" + "NonExistentAttribute"
boolAttribute = driverA + "/" + "boolAttribute"
stringAttribute = driverA + "/" + "stringAttribute"
versionAttribute = driverA + "/" + "driverVersion"
intAttribute = driverA + "/" + "numa"
taintKey = "taint-key"
taintValue = "taint-value"
taintValue2 = "taint-value-2"
taintNone = DeviceTaint(Key=taintKey, Value=taintValue, Effect=DeviceTaintEffectNone)
taintNoSchedule = DeviceTaint(Key=taintKey, Value=taintValue, Effect=DeviceTaintEffectNoSchedule)
taintNoExecute = DeviceTaint(Key=taintKey, Value=taintValue2, Effect=DeviceTaintEffectNoExecute)
tolerationNoSchedule = DeviceToleration(
    Operator=DeviceTolerationOpExists, Key=taintKey, Effect=DeviceTaintEffectNoSchedule
)
tolerationNoExecute = DeviceToleration(
    Operator=DeviceTolerationOpEqual,
    Key=taintKey,
    Value=taintValue2,
    Effect=DeviceTaintEffectNoExecute,
)
tolerationNoScheduleKey1 = DeviceToleration(
    Operator=DeviceTolerationOpExists, Key="key1", Effect=DeviceTaintEffectNoSchedule
)


def _case_000() -> AllocatorTestCase:  # empty
    return AllocatorTestCase()


def _case_001() -> AllocatorTestCase:  # simple
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_002() -> AllocatorTestCase:  # other-node
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverB),
            sliceWithOneDevice(slice2, node2, pool2, driverA),
        ),
        node=node(node2, region2),
        expectResults=[
            allocationResult(
                localNodeSelector(node2),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    )


def _case_003() -> AllocatorTestCase:  # small-and-large
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0',
                                driverA,
                            )
                        )
                    ),
                ),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                driverA,
                            )
                        )
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {"memory": MustParse("1Gi")}, None),
                device(device2, {"memory": MustParse("2Gi")}, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_004() -> AllocatorTestCase:  # small-and-large-backtrack-requests
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0',
                                driverA,
                            )
                        )
                    ),
                ),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                driverA,
                            )
                        )
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device2, {"memory": MustParse("2Gi")}, None),
                device(device1, {"memory": MustParse("1Gi")}, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_005() -> AllocatorTestCase:  # small-and-large-backtrack-claims
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0',
                                driverA,
                            )
                        )
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                driverA,
                            )
                        )
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device2, {"memory": MustParse("2Gi")}, None),
                device(device1, {"memory": MustParse("1Gi")}, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            ),
        ],
    )


def _case_006() -> AllocatorTestCase:  # devices-split-across-different-slices
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        Count=2,
                        AllocationMode=DeviceAllocationModeExactCount,
                        DeviceClassName=classA,
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice2, node1, pool2, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    )


def _case_007() -> AllocatorTestCase:  # obsolete-slice
    def _f1() -> Any:
        slice_ = sliceWithDevices(
            "slice-1-obsolete", node1, resourcePool(pool1, 2), driverA, device(device2, None, None)
        )
        slice_.Spec.Pool.Generation += 1
        return slice_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                "slice-1-obsolete",
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
            ),
            _f1(),
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_008() -> AllocatorTestCase:  # duplicate-slice
    def _f1() -> Any:
        sliceA_ = sliceWithOneDevice(slice1, node1, pool1, driverA).obj()
        sliceA_.Spec.Pool.ResourceSliceCount = 2
        sliceB_ = sliceA_.DeepCopy()
        sliceB_.Name += "-2"
        return [sliceA_, sliceB_]

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=_f1(),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_009() -> AllocatorTestCase:  # no-slices
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    )


def _case_010() -> AllocatorTestCase:  # not-enough-suitable-devices
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req1, classA)
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_011() -> AllocatorTestCase:  # no-classes
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=None,
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("could not retrieve device class class-a")),
    )


def _case_012() -> AllocatorTestCase:  # unknown-class
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, "unknown-class")),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("could not retrieve device class unknown-class")),
    )


def _case_013() -> AllocatorTestCase:  # empty-class
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, "")),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: missing device class name (unsupported request type?)"
            )
        ),
    )


def _case_014() -> AllocatorTestCase:  # no-claims-to-allocate
    return AllocatorTestCase(
        claimsToAllocate=None,
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_015() -> AllocatorTestCase:  # all-devices-single
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_016() -> AllocatorTestCase:  # all-devices-with-consumed-counters
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_017() -> AllocatorTestCase:  # all-devices-many
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool2, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    )


def _case_018() -> AllocatorTestCase:  # all-devices-of-the-incomplete-pool
    def _f1() -> Any:
        slice_ = sliceWithOneDevice(slice1, node1, pool1, driverA)
        slice_.Spec.Pool.ResourceSliceCount += 1
        return slice_

    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, Count=1, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(_f1()),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated"
            )
        ),
    )


def _case_019() -> AllocatorTestCase:  # all-devices-plus-another
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
        ],
    )


def _case_020() -> AllocatorTestCase:  # all-devices-plus-another-reversed
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
        ],
    )


def _case_021() -> AllocatorTestCase:  # all-devices-many-plus-another
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
        ],
    )


def _case_022() -> AllocatorTestCase:  # all-devices-many-plus-another-reversed
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classB,
                    ),
                ),
            ),
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            ),
        ],
    )


def _case_023() -> AllocatorTestCase:  # all-devices-no-solution
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classA,
                    ),
                ),
            ),
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
    )


def _case_024() -> AllocatorTestCase:  # all-devices-no-solution-reversed
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeExactCount,
                        Count=1,
                        DeviceClassName=classA,
                    ),
                ),
            ),
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
    )


def _case_025() -> AllocatorTestCase:  # all-devices-slice-without-devices
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithNoDevices(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_026() -> AllocatorTestCase:  # all-devices-no-slices
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    )


def _case_027() -> AllocatorTestCase:  # all-devices-some-allocated
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_028() -> AllocatorTestCase:  # all-devices-some-allocated-admin-access
    def _f1() -> Any:
        c_ = claimWithRequest(claim0, req0, classA)
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        c_.Spec.Devices.Requests[0].Exactly.AllocationMode = DeviceAllocationModeAll
        return [c_]

    return AllocatorTestCase(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f1(),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
                deviceAllocationResult(req0, driverA, pool1, device2, True),
            )
        ],
    )


def _case_029() -> AllocatorTestCase:  # all-devices-some-allocating-admin-access
    def _f1() -> Any:
        c_ = claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        c_.Spec.Devices.Requests[1].Exactly.AdminAccess = ptrTo(True)
        c_.Spec.Devices.Requests[1].Exactly.AllocationMode = DeviceAllocationModeAll
        return [c_]

    return AllocatorTestCase(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f1(),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_030() -> AllocatorTestCase:  # count-devices-some-allocated-admin-access
    def _f1() -> Any:
        c_ = claimWithRequest(claim0, req0, classA)
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        c_.Spec.Devices.Requests[0].Exactly.AllocationMode = DeviceAllocationModeExactCount
        c_.Spec.Devices.Requests[0].Exactly.Count = 2
        return [c_]

    return AllocatorTestCase(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f1(),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
                deviceAllocationResult(req0, driverA, pool1, device2, True),
            )
        ],
    )


def _case_031() -> AllocatorTestCase:  # separate-claims-share-device-admin-access
    def _f1() -> Any:
        c1_ = claimWithRequest(claim0, req0, classA)
        c1_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        c2_ = claimWithRequest(claim1, req0, classA)
        c2_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        return [c1_, c2_]

    return AllocatorTestCase(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f1(),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
            ),
        ],
    )


def _case_032() -> AllocatorTestCase:  # admin-access-claims-device-allocating-for-non-admin-access
    def _f1() -> Any:
        admin_ = claimWithRequest(claim1, req0, classA)
        admin_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        return [claimWithRequest(claim0, req0, classA), admin_]

    return AllocatorTestCase(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f1(),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
            ),
        ],
    )


def _case_033() -> AllocatorTestCase:  # all-devices-slice-without-devices-prioritized-list
    def _f1() -> Any:
        claim_ = claim(claim0).withRequests(
            requestWithPrioritizedList(
                req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1)
            )
        )
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].AllocationMode = DeviceAllocationModeAll
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].Count = 0
        return claim_

    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithNoDevices(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice2, node1, pool2, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False),
            )
        ],
    )


def _case_034() -> AllocatorTestCase:  # all-devices-no-slices-prioritized-list
    def _f1() -> Any:
        claim_ = claim(claim0).withRequests(
            requestWithPrioritizedList(
                req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1)
            )
        )
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].AllocationMode = DeviceAllocationModeAll
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].Count = 0
        return claim_

    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice2, node1, pool2, driverB)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False),
            )
        ],
    )


def _case_035() -> AllocatorTestCase:  # all-devices-some-allocated-prioritized-list
    def _f1() -> Any:
        claim_ = claim(claim0).withRequests(
            requestWithPrioritizedList(
                req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1)
            )
        )
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].AllocationMode = DeviceAllocationModeAll
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].Count = 0
        return claim_

    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(_f1()),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice2, node1, pool2, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False),
            )
        ],
    )


def _case_036() -> AllocatorTestCase:  # network-attached-device
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                nodeLabelSelector(regionKey, region1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_037() -> AllocatorTestCase:  # unsuccessful-allocation-network-attached-device
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)
        ),
        node=node(node2, region2),
        expectResults=None,
    )


def _case_038() -> AllocatorTestCase:  # many-network-attached-devices
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 4))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA),
            sliceWithOneDevice(slice1, nodeSelectionAll, pool2, driverA),
            sliceWithOneDevice(
                slice1, nodeLabelSelector(planetKey, planetValueEarth), pool3, driverA
            ),
            sliceWithOneDevice(slice1, localNodeSelector(node1), pool4, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                NodeSelector(
                    NodeSelectorTerms=[
                        NodeSelectorTerm(
                            MatchExpressions=[
                                NodeSelectorRequirement(
                                    Key=regionKey, Operator=NodeSelectorOpIn, Values=[region1]
                                ),
                                NodeSelectorRequirement(
                                    Key=planetKey,
                                    Operator=NodeSelectorOpIn,
                                    Values=[planetValueEarth],
                                ),
                            ],
                            MatchFields=[
                                NodeSelectorRequirement(
                                    Key=fieldNameKey, Operator=NodeSelectorOpIn, Values=[node1]
                                )
                            ],
                        )
                    ]
                ),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
                deviceAllocationResult(req0, driverA, pool3, device1, False),
                deviceAllocationResult(req0, driverA, pool4, device1, False),
            )
        ],
    )


def _case_039() -> AllocatorTestCase:  # local-and-network-attached-devices
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool2, driverA),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    )


def _case_040() -> AllocatorTestCase:  # several-different-drivers
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req0, classB)
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverB, pool1, device1, False),
            ),
        ],
    )


def _case_041() -> AllocatorTestCase:  # already-allocated-devices
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
            MakeDeviceID(driverA, pool1, device2),
        ],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_042() -> AllocatorTestCase:  # admin-access-disabled
    def _f1() -> Any:
        c_ = claimWithRequest(claim0, req0, classA)
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        return [c_]

    return AllocatorTestCase(
        features=Features(AdminAccess=False),
        claimsToAllocate=_f1(),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: admin access is requested, but the feature is disabled"
            )
        ),
    )


def _case_043() -> AllocatorTestCase:  # admin-access-enabled
    def _f1() -> Any:
        c_ = claimWithRequest(claim0, req0, classA)
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        return [c_]

    return AllocatorTestCase(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f1(),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
            MakeDeviceID(driverA, pool1, device2),
        ],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
            )
        ],
    )


def _case_044() -> AllocatorTestCase:  # with-constraint
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(MatchAttribute=intAttribute),
                    DeviceConstraint(MatchAttribute=versionAttribute),
                    DeviceConstraint(MatchAttribute=stringAttribute),
                    DeviceConstraint(MatchAttribute=boolAttribute),
                ],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0")),
                        "numa": DeviceAttribute(IntValue=ptrTo(int64(1))),
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue")
                        ),
                        "boolAttribute": DeviceAttribute(BoolValue=ptrTo(True)),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0")),
                        "numa": DeviceAttribute(IntValue=ptrTo(int64(1))),
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue")
                        ),
                        "boolAttribute": DeviceAttribute(BoolValue=ptrTo(True)),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_045() -> AllocatorTestCase:  # with-constraint-non-existent-attribute
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequest(
                claim0, req0, classA, DeviceConstraint(MatchAttribute=nonExistentAttribute)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_046() -> AllocatorTestCase:  # with-constraint-not-matching-int-attribute
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"numa": DeviceAttribute(IntValue=ptrTo(int64(1)))}),
                device(device2, None, {"numa": DeviceAttribute(IntValue=ptrTo(int64(2)))}),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_047() -> AllocatorTestCase:  # with-constraint-not-matching-int-attribute-all-devices
    def _f1() -> Any:
        claim_ = claimWithRequests(
            claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 0)
        )
        claim_.Spec.Devices.Requests[0].Exactly.AllocationMode = DeviceAllocationModeAll
        return claim_

    return AllocatorTestCase(
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"numa": DeviceAttribute(IntValue=ptrTo(int64(1)))}),
                device(device2, None, {"numa": DeviceAttribute(IntValue=ptrTo(int64(2)))}),
            )
        ),
        node=node(node1, region1),
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied"
            )
        ),
    )


def _case_048() -> AllocatorTestCase:  # with-constraint-not-matching-string-attribute
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValue=ptrTo("stringAttributeValue"))},
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue2")
                        )
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_049() -> AllocatorTestCase:  # with-constraint-not-matching-bool-attribute
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"boolAttribute": DeviceAttribute(BoolValue=ptrTo(True))}),
                device(device2, None, {"boolAttribute": DeviceAttribute(BoolValue=ptrTo(False))}),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_050() -> AllocatorTestCase:  # with-constraint-not-matching-version-attribute
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=versionAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0"))}
                ),
                device(
                    device2, None, {"driverVersion": DeviceAttribute(VersionValue=ptrTo("2.0.0"))}
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_051() -> AllocatorTestCase:  # with-constraint-for-request
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(Requests=[req0], MatchAttribute=versionAttribute)],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0"))}
                ),
                device(
                    device2, None, {"driverVersion": DeviceAttribute(VersionValue=ptrTo("2.0.0"))}
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_052() -> AllocatorTestCase:  # with-constraint-for-request-retry
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [
                    DeviceConstraint(Requests=[req0], MatchAttribute=versionAttribute),
                    DeviceConstraint(MatchAttribute=stringAttribute),
                ],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0")),
                        "stringAttribute": DeviceAttribute(StringValue=ptrTo("a")),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("2.0.0")),
                        "stringAttribute": DeviceAttribute(StringValue=ptrTo("b")),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("3.0.0")),
                        "stringAttribute": DeviceAttribute(StringValue=ptrTo("b")),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    )


def _case_053() -> AllocatorTestCase:  # with-class-device-config
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(classWithConfig(classA, driverA, "classAttribute")),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(deviceAllocationResult(req0, driverA, pool1, device1, False)),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverA, "classAttribute"),
                    )
                ],
            )
        ],
    )


def _case_054() -> AllocatorTestCase:  # with-class-device-config-with-multiple-request-and-configs
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [],
                request(req0, classA, 1),
                request(req1, classA, 1),
                request(req2, classB, 1),
            )
        ),
        classes=objects(
            classWithConfig(classA, driverA, "classAttribute-A"),
            classWithConfig(classB, driverB, "classAttribute-B"),
        ),
        slices=unwrap(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2),
            sliceWithOneDevice(slice2, node1, pool1, driverB),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                    deviceAllocationResult(req2, driverB, pool1, device1, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=[req0, req1],
                        DeviceConfiguration=deviceConfiguration(driverA, "classAttribute-A"),
                    ),
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=[req2],
                        DeviceConfiguration=deviceConfiguration(driverB, "classAttribute-B"),
                    ),
                ],
            )
        ],
    )


def _case_055() -> AllocatorTestCase:  # with-claim-config-for-two-requests
    def _f1() -> Any:
        c_ = claimWithRequests(
            claim0,
            None,
            request(req0, classA, 1),
            request(req1, classA, 1),
            request(req2, classA, 1),
        )
        c_.Spec.Devices.Config = [
            DeviceClaimConfiguration(
                Requests=[req0, req1],
                DeviceConfiguration=deviceConfiguration(driverA, "deviceAttribute"),
            )
        ]
        return [c_]

    return AllocatorTestCase(
        claimsToAllocate=_f1(),
        classes=objects(class_(classA, driverA)),
        slices=unwrap(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 3)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                    deviceAllocationResult(req2, driverA, pool1, device2, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=[req0, req1],
                        DeviceConfiguration=deviceConfiguration(driverA, "deviceAttribute"),
                    )
                ],
            )
        ],
    )


def _case_056() -> AllocatorTestCase:  # claim-with-device-config
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithDeviceConfig(claim0, req0, classA, driverA, "deviceAttribute")
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfig(
                localNodeSelector(node1),
                driverA,
                AllocationConfigSourceClaim,
                "deviceAttribute",
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_057() -> AllocatorTestCase:  # unknown-selector
    def _f1() -> Any:
        claim_ = claimWithRequest(claim0, req0, classA)
        claim_.Spec.Devices.Requests[0].Exactly.Selectors = [DeviceSelector()]
        return claim_

    return AllocatorTestCase(
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectError=MatchError(
            ContainSubstring("CEL expression empty (unsupported selector type?)")
        ),
    )


def _case_058() -> AllocatorTestCase:  # unknown-allocation-mode
    def _f1() -> Any:
        claim_ = claimWithRequest(claim0, req0, classA)
        claim_.Spec.Devices.Requests[0].Exactly.AllocationMode = DeviceAllocationMode("future-mode")
        return claim_

    return AllocatorTestCase(
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("unsupported count mode future-mode")),
    )


def _case_059() -> AllocatorTestCase:  # unknown-constraint
    def _f1() -> Any:
        claim_ = claimWithRequest(claim0, req0, classA)
        claim_.Spec.Devices.Constraints = [DeviceConstraint()]
        return claim_

    return AllocatorTestCase(
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("empty constraint (unsupported constraint type?)")),
    )


def _case_060() -> AllocatorTestCase:  # invalid-CEL-one-device
    def _f1() -> Any:
        claim_ = claimWithRequest(claim0, req0, classA)
        claim_.Spec.Devices.Requests[0].Exactly.Selectors = [
            DeviceSelector(CEL=CELDeviceSelector(Expression="noSuchVar"))
        ]
        return claim_

    return AllocatorTestCase(
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("undeclared reference")),
    )


def _case_061() -> AllocatorTestCase:  # invalid-CEL-one-device-class
    def _f1() -> Any:
        c_ = class_(classA, driverA)
        c_.Spec.Selectors[0].CEL.Expression = "noSuchVar"
        return c_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(_f1()),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("undeclared reference")),
    )


def _case_062() -> AllocatorTestCase:  # invalid-CEL-all-devices
    def _f1() -> Any:
        claim_ = claimWithRequest(claim0, req0, classA)
        claim_.Spec.Devices.Requests[0].Exactly.Selectors = [
            DeviceSelector(CEL=CELDeviceSelector(Expression="noSuchVar"))
        ]
        claim_.Spec.Devices.Requests[0].Exactly.AllocationMode = DeviceAllocationModeAll
        return claim_

    return AllocatorTestCase(
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("undeclared reference")),
    )


def _case_063() -> AllocatorTestCase:  # too-many-devices-single-request
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 500))),
        classes=objects(class_(classA, driverA)),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    )


def _case_064() -> AllocatorTestCase:  # many-devices-okay
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, AllocationResultsMaxSize))
        ),
        classes=objects(class_(classA, driverA)),
    )


def _case_065() -> AllocatorTestCase:  # too-many-devices-total
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, AllocationResultsMaxSize),
                request(req1, classA, 1),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize + 1)
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    )


def _case_066() -> AllocatorTestCase:  # all-devices-invalid-CEL
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 500))),
        classes=objects(class_(classA, driverA)),
        expectError=MatchError(ContainSubstring("exceeds the claim limit")),
    )


def _case_067() -> AllocatorTestCase:  # prioritized-list-first-unavailable
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1)
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_068() -> AllocatorTestCase:  # prioritized-list-non-available
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classB, 2), subRequest(subReq1, classA, 2)
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithOneDevice(slice1, node1, pool1, driverA),
            sliceWithOneDevice(slice2, node1, pool2, driverB),
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_069() -> AllocatorTestCase:  # prioritized-list-device-config
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 2)
                )
            )
            .withConfigs(
                objects(
                    deviceClaimConfig([req0SubReq0], deviceConfiguration(driverA, "foo")),
                    deviceClaimConfig([req0SubReq1], deviceConfiguration(driverB, "bar")),
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, pool1, driverB, device(device1, None, {}), device(device2, None, {})
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False),
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverB, "bar"),
                    )
                ],
            )
        ],
    )


def _case_070() -> AllocatorTestCase:  # prioritized-list-class-config
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 2), subRequest(subReq1, classB, 2)
                )
            )
        ),
        classes=objects(
            classWithConfig(classA, driverA, "foo"), classWithConfig(classB, driverB, "bar")
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverB,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device3, None, None)),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False),
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClass,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverB, "bar"),
                    )
                ],
            )
        ],
    )


def _case_071() -> AllocatorTestCase:  # claim-config-scoped-to-subrequests-of-one-request
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1)
                ),
                deviceRequest(req1, classA, 1),
            )
            .withConfigs(
                objects(
                    deviceClaimConfig(
                        [req0SubReq0, req0SubReq1], deviceConfiguration(driverA, "scoped")
                    )
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrap(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=[req0SubReq0, req0SubReq1],
                        DeviceConfiguration=deviceConfiguration(driverA, "scoped"),
                    )
                ],
            )
        ],
    )


def _case_072() -> AllocatorTestCase:  # claim-config-covering-all-requests-is-cleared
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1)
                ),
                deviceRequest(req1, classA, 1),
            )
            .withConfigs(
                objects(deviceClaimConfig([req0SubReq0, req1], deviceConfiguration(driverA, "all")))
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrap(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2)),
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                objects(
                    deviceAllocationResult(req0SubReq0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                ),
                [
                    DeviceAllocationConfiguration(
                        Source=AllocationConfigSourceClaim,
                        Requests=None,
                        DeviceConfiguration=deviceConfiguration(driverA, "all"),
                    )
                ],
            )
        ],
    )


def _case_073() -> AllocatorTestCase:  # prioritized-list-subrequests-with-expressions
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0',
                                driverA,
                            )
                        )
                    )
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        2,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {"memory": MustParse("2Gi")}, None),
                device(device2, {"memory": MustParse("2Gi")}, None),
                device(device3, {"memory": MustParse("1Gi")}, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_074() -> (
    AllocatorTestCase
):  # prioritized-list-subrequests-with-constraints-ref-parent-request
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(Requests=[req0, req1], MatchAttribute=versionAttribute)
            )
            .withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0',
                                driverA,
                            )
                        )
                    )
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {"memory": MustParse("8Gi")},
                    {"driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0"))},
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device2,
                    {"memory": MustParse("2Gi")},
                    {"driverVersion": DeviceAttribute(VersionValue=ptrTo("2.0.0"))},
                ),
                device(
                    device3,
                    {"memory": MustParse("1Gi")},
                    {"driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0"))},
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool2, device3, False),
            )
        ],
    )


def _case_075() -> (
    AllocatorTestCase
):  # prioritized-list-subrequests-with-constraints-ref-sub-request
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(Requests=[req0, req1SubReq0], MatchAttribute=versionAttribute)
            )
            .withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0',
                                driverA,
                            )
                        )
                    )
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    {"memory": MustParse("8Gi")},
                    {"driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0"))},
                ),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(
                    device2,
                    {"memory": MustParse("2Gi")},
                    {"driverVersion": DeviceAttribute(VersionValue=ptrTo("2.0.0"))},
                ),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool2, device2, False),
            )
        ],
    )


def _case_076() -> AllocatorTestCase:  # prioritized-list-subrequests-with-allocation-mode-all
    def _f1() -> Any:
        claim_ = claim(claim0).withRequests(
            requestWithPrioritizedList(
                req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classA, 1)
            )
        )
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].AllocationMode = DeviceAllocationModeAll
        claim_.Spec.Devices.Requests[0].FirstAvailable[0].Count = 0
        return claim_

    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_077() -> AllocatorTestCase:  # prioritized-list-allocation-mode-all-multiple-requests
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, 0).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(subReq1, classA, 1),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_078() -> AllocatorTestCase:  # prioritized-list-disabled
    def _f1() -> Any:
        claim_ = claim(claim0).withRequests(
            requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1))
        )
        return claim_

    return AllocatorTestCase(
        features=Features(PrioritizedList=False),
        claimsToAllocate=objects(_f1()),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"
            )
        ),
    )


def _case_079() -> AllocatorTestCase:  # prioritized-list-multi-request
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req1, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0',
                                driverA,
                            )
                        )
                    )
                ),
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {"memory": MustParse("8Gi")}, {})
            ),
            sliceWithDevices(
                slice2, node1, pool2, driverA, device(device2, {"memory": MustParse("4Gi")}, {})
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False),
            )
        ],
    )


def _case_080() -> AllocatorTestCase:  # prioritized-list-with-backtracking
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
                deviceRequest(req1, classA, 1).withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0',
                                driverA,
                            )
                        )
                    )
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {"memory": MustParse("8Gi")}, {})
            ),
            sliceWithDevices(
                slice2, node1, pool2, driverA, device(device2, {"memory": MustParse("4Gi")}, {})
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_081() -> AllocatorTestCase:  # prioritized-list-too-many-in-first-subrequest
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classB, 500), subRequest(subReq1, classA, 1)
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_082() -> AllocatorTestCase:  # partitionable-devices-single-device
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_083() -> AllocatorTestCase:  # partitionable-devices-prioritized-list
    return AllocatorTestCase(
        features=Features(PrioritizedList=True, PartitionableDevices=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
            )
        ],
    )


def _case_084() -> AllocatorTestCase:  # partitionable-devices-multiple-devices
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    )


def _case_085() -> AllocatorTestCase:  # partitionable-devices-multiple-capacity-pools
    return AllocatorTestCase(
        features=Features(PrioritizedList=True, PartitionableDevices=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")}),
                    deviceCounterConsumption(counterSet2, {"cpus": MustParse("4")}),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")}),
                    deviceCounterConsumption(counterSet2, {"cpus": MustParse("6")}),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")}),
                    deviceCounterConsumption(counterSet2, {"cpus": MustParse("4")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
                counterSet(counterSet2, {"cpus": MustParse("8")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
            )
        ],
    )


def _case_086() -> AllocatorTestCase:  # partitionable-devices-multiple-counters
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"memory": MustParse("4Gi"), "cpus": MustParse("6")}
                    ),
                    deviceCounterConsumption(
                        counterSet2, {"cpus": MustParse("4"), "memory": MustParse("2Gi")}
                    ),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"memory": MustParse("6Gi"), "cpus": MustParse("4")}
                    ),
                    deviceCounterConsumption(
                        counterSet2, {"cpus": MustParse("6"), "memory": MustParse("6Gi")}
                    ),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"memory": MustParse("4Gi"), "cpus": MustParse("4")}
                    ),
                    deviceCounterConsumption(
                        counterSet2, {"cpus": MustParse("4"), "memory": MustParse("4Gi")}
                    ),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"cpus": MustParse("8"), "memory": MustParse("18Gi")}),
                counterSet(counterSet2, {"cpus": MustParse("12"), "memory": MustParse("18Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    )


def _case_087() -> AllocatorTestCase:  # partitionable-devices-multiple-pools
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"cpus": MustParse("6"), "memory": MustParse("4Gi")}
                    )
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"cpus": MustParse("4"), "memory": MustParse("6Gi")}
                    )
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"cpus": MustParse("4"), "memory": MustParse("4Gi")}
                    )
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"cpus": MustParse("8"), "memory": MustParse("18Gi")}),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"cpus": MustParse("6"), "memory": MustParse("4Gi")}
                    )
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"cpus": MustParse("1"), "memory": MustParse("7Gi")}
                    )
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(
                        counterSet1, {"cpus": MustParse("1"), "memory": MustParse("7Gi")}
                    )
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool2, 2),
                driverA,
                counterSet(counterSet1, {"cpus": MustParse("8"), "memory": MustParse("18Gi")}),
            ),
        ),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device2),
            MakeDeviceID(driverA, pool1, device3),
            MakeDeviceID(driverA, pool2, device1),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool2, device2, False),
                deviceAllocationResult(req1, driverA, pool2, device3, False),
            )
        ],
    )


def _case_088() -> AllocatorTestCase:  # partitionable-devices-unused-counters-in-counter-set
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("5Gi")})
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi"), "unused": MustParse("1Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_089() -> AllocatorTestCase:  # partitionable-devices-no-capacity-available
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("16Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=None,
    )


def _case_090() -> AllocatorTestCase:  # partitionable-devices-overallocated-capacity-pool
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("20Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=None,
    )


def _case_091() -> AllocatorTestCase:  # partitionable-devices-disabled-device-consumes-counters
    return AllocatorTestCase(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                pool1,
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_092() -> (
    AllocatorTestCase
):  # partitionable-devices-disabled-other-device-do-not-consume-counters
    return AllocatorTestCase(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
                device(device2, None, None),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_093() -> AllocatorTestCase:  # partitionable-devices-disabled-per-device-node-selection
    return AllocatorTestCase(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                pool1,
                driverA,
                device(device2, None, None).withNodeSelection(node1),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_094() -> AllocatorTestCase:  # partitionable-devices-per-device-node-selection-nodename
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withNodeSelection(node1),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                )
                .withNodeSelection(node2),
            ),
            sliceWithCounterSets(
                slice2,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_095() -> (
    AllocatorTestCase
):  # partitionable-devices-per-device-node-selection-node-selector
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withNodeSelection(nodeLabelSelector(regionKey, region1)),
            ),
            sliceWithCounterSets(
                slice2,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                NodeSelector(
                    NodeSelectorTerms=[
                        NodeSelectorTerm(
                            MatchExpressions=[
                                NodeSelectorRequirement(
                                    Key=regionKey, Operator=NodeSelectorOpIn, Values=[region1]
                                )
                            ]
                        )
                    ]
                ),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_096() -> (
    AllocatorTestCase
):  # partitionable-devices-per-device-node-selection-node-selector-multiple-devices
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 3), request(req1, classB, 3))
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withNodeSelection(nodeLabelSelector(regionKey, region1)),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withNodeSelection(node1),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withNodeSelection(nodeSelectionAll),
            ),
            sliceWithCounterSets(
                slice2,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("18Gi")}),
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverB,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": MustParse("4Gi")})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": MustParse("4Gi")})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice4,
                node1,
                resourcePool(pool2, 2),
                driverB,
                counterSet(counterSet2, {"memory": MustParse("12Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                NodeSelector(
                    NodeSelectorTerms=[
                        NodeSelectorTerm(
                            MatchFields=[
                                NodeSelectorRequirement(
                                    Key=fieldNameKey, Operator=NodeSelectorOpIn, Values=[node1]
                                )
                            ]
                        )
                    ]
                ),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverB, pool2, device1, False),
                deviceAllocationResult(req1, driverB, pool2, device2, False),
                deviceAllocationResult(req1, driverB, pool2, device3, False),
            )
        ],
    )


def _case_097() -> AllocatorTestCase:  # tainted-two-devices
    return AllocatorTestCase(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ),
        node=node(node1, region1),
    )


def _case_098() -> AllocatorTestCase:  # tainted-one-device-two-taints
    return AllocatorTestCase(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute),
            )
        ),
        node=node(node1, region1),
    )


def _case_099() -> AllocatorTestCase:  # tainted-two-devices-tolerated
    return AllocatorTestCase(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoExecute)
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False, tolerationNoExecute),
            )
        ],
    )


def _case_100() -> AllocatorTestCase:  # tainted-two-devices-prioritized-list-tolerated
    return AllocatorTestCase(
        features=Features(DeviceTaints=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1),
                    subRequest(subReq1, classA, 1, tolerationNoExecute),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(
                    req0SubReq1, driverA, pool1, device2, False, tolerationNoExecute
                ),
            )
        ],
    )


def _case_101() -> AllocatorTestCase:  # tainted-no-effect
    return AllocatorTestCase(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNone)
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_102() -> AllocatorTestCase:  # tainted-one-device-two-taints-both-tolerated
    return AllocatorTestCase(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(
            claimWithRequest(claim0, req0, classA).withTolerations(
                tolerationNoSchedule, tolerationNoExecute
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(
                    req0, driverA, pool1, device1, False, tolerationNoSchedule, tolerationNoExecute
                ),
            )
        ],
    )


def _case_103() -> AllocatorTestCase:  # tainted-disabled
    return AllocatorTestCase(
        features=Features(DeviceTaints=False),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_104() -> AllocatorTestCase:  # tainted-prioritized-list
    return AllocatorTestCase(
        features=Features(DeviceTaints=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1)
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
    )


def _case_105() -> AllocatorTestCase:  # tainted-prioritized-list-disabled
    return AllocatorTestCase(
        features=Features(DeviceTaints=False, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1)
                )
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_106() -> AllocatorTestCase:  # tainted-admin-access
    def _f1() -> Any:
        c_ = claimWithRequest(claim0, req0, classA)
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        return [c_]

    return AllocatorTestCase(
        features=Features(DeviceTaints=True, AdminAccess=True),
        claimsToAllocate=_f1(),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
            MakeDeviceID(driverA, pool1, device2),
        ],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
    )


def _case_107() -> AllocatorTestCase:  # tainted-admin-access-disabled
    def _f1() -> Any:
        c_ = claimWithRequest(claim0, req0, classA)
        c_.Spec.Devices.Requests[0].Exactly.AdminAccess = ptrTo(True)
        return [c_]

    return AllocatorTestCase(
        features=Features(DeviceTaints=False, AdminAccess=True),
        claimsToAllocate=_f1(),
        allocatedDevices=[
            MakeDeviceID(driverA, pool1, device1),
            MakeDeviceID(driverA, pool1, device2),
        ],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
            )
        ],
    )


def _case_108() -> AllocatorTestCase:  # tainted-all-devices-single
    return AllocatorTestCase(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
    )


def _case_109() -> AllocatorTestCase:  # tainted-all-devices-single-disabled
    return AllocatorTestCase(
        features=Features(DeviceTaints=False),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_110() -> AllocatorTestCase:  # prioritized-list-allocation-mode-all
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 0).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(subReq1, classA, 1),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            )
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_111() -> AllocatorTestCase:  # prioritized-list-allocation-mode-all-with-selectors
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v6"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v5"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"generation": DeviceAttribute(StringValue=ptrTo("v5"))}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_112() -> (
    AllocatorTestCase
):  # prioritized-list-allocation-mode-all-with-selectors-multiple-pools
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v6"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v5"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"generation": DeviceAttribute(StringValue=ptrTo("v5"))}),
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(device1, None, {"generation": DeviceAttribute(StringValue=ptrTo("v5"))}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device1, False),
            )
        ],
    )


def _case_113() -> (
    AllocatorTestCase
):  # prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v6"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v5"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"generation": DeviceAttribute(StringValue=ptrTo("v5"))}),
            ),
            sliceWithDevices(
                slice2,
                node2,
                pool2,
                driverA,
                device(device1, None, {"generation": DeviceAttribute(StringValue=ptrTo("v5"))}),
                device(device2, None, {"generation": DeviceAttribute(StringValue=ptrTo("v6"))}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_114() -> (
    AllocatorTestCase
):  # prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v6"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.attributes["%s"].generation == "v5"', driverA
                                )
                            )
                        ),
                    ).withAllocationMode(DeviceAllocationModeAll),
                )
            )
        ),
        classes=objects(
            DeviceClass(
                ObjectMeta=ObjectMeta(Name=classA),
                Spec=DeviceClassSpec(
                    Selectors=[
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.driver == "%s" && device.attributes["%s"].selected',
                                    driverA,
                                    driverA,
                                )
                            )
                        )
                    ]
                ),
            )
        ),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=ptrTo("v6")),
                        "selected": DeviceAttribute(BoolValue=ptrTo(False)),
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=ptrTo("v5")),
                        "selected": DeviceAttribute(BoolValue=ptrTo(False)),
                    },
                ),
                device(
                    device3,
                    None,
                    {
                        "generation": DeviceAttribute(StringValue=ptrTo("v5")),
                        "selected": DeviceAttribute(BoolValue=ptrTo(True)),
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device3, False),
            )
        ],
    )


def _case_115() -> AllocatorTestCase:  # max-number-devices
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, AllocationResultsMaxSize))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize)
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                *multipleDeviceAllocationResults(req0, driverA, pool1, AllocationResultsMaxSize, 0),
            )
        ],
    )


def _case_116() -> AllocatorTestCase:  # partitionable-devices-with-attribute-selector
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 2),
                request(
                    req1,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf('device.attributes["%s"].special', driverA)
                        )
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1, None, {"special": DeviceAttribute(BoolValue=ptrTo(True))}
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpu1": MustParse("1")}),
                    deviceCounterConsumption(counterSet2, {"mem": MustParse("10Gi")}),
                ),
                device(
                    device2, None, {"special": DeviceAttribute(BoolValue=ptrTo(False))}
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpu2": MustParse("1")}),
                    deviceCounterConsumption(counterSet2, {"mem": MustParse("10Gi")}),
                ),
                device(
                    device3, None, {"special": DeviceAttribute(BoolValue=ptrTo(False))}
                ).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpu3": MustParse("1")}),
                    deviceCounterConsumption(counterSet2, {"mem": MustParse("10Gi")}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(
                    counterSet1,
                    {"cpu1": MustParse("1"), "cpu2": MustParse("1"), "cpu3": MustParse("1")},
                ),
                counterSet(counterSet2, {"mem": MustParse("30Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
            )
        ],
    )


def _case_117() -> AllocatorTestCase:  # prioritized-list-max-allocation-limit-request
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, AllocationResultsMaxSize),
                    subRequest(subReq1, classA, AllocationResultsMaxSize // 2),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(subReq0, classA, AllocationResultsMaxSize),
                    subRequest(subReq1, classA, AllocationResultsMaxSize // 2),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize * 2)
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                *slicesConcat(
                    multipleDeviceAllocationResults(
                        req0SubReq1, driverA, pool1, AllocationResultsMaxSize // 2, 0
                    ),
                    multipleDeviceAllocationResults(
                        req1SubReq1,
                        driverA,
                        pool1,
                        AllocationResultsMaxSize // 2,
                        AllocationResultsMaxSize // 2,
                    ),
                ),
            )
        ],
        expectNumAllocateOneInvocations=75,
    )


def _case_118() -> AllocatorTestCase:  # prioritized-list-max-allocation-allocation-mode-all
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 0).withAllocationMode(DeviceAllocationModeAll),
                    subRequest(subReq1, classA, 2),
                ),
                deviceRequest(req1, classB, 2),
            )
        ),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, AllocationResultsMaxSize - 1),
            sliceWithMultipleDevices(slice2, node1, pool2, driverB, 2),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, "device-0", False),
                deviceAllocationResult(req0SubReq1, driverA, pool1, "device-1", False),
                deviceAllocationResult(req1, driverB, pool2, "device-0", False),
                deviceAllocationResult(req1, driverB, pool2, "device-1", False),
            )
        ],
        expectNumAllocateOneInvocations=42,
    )


def _case_119() -> AllocatorTestCase:  # device-binding-conditions
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        )
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_120() -> AllocatorTestCase:  # binding-conditions-multiple-devices
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 2), request(req1, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, None, None).withBindingConditions(
                    ["IsPrepare2"], ["BindingFailed2"]
                ),
                device(device3, None, None).withBindingConditions(
                    ["IsPrepare3"], ["BindingFailed3"]
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req1, driverA, pool1, device3, ["IsPrepare3"], ["BindingFailed3"]
                        ),
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_121() -> AllocatorTestCase:  # binding-conditions-with-and-without
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceAllocationResult(req0, driverA, pool1, device1, False),
                        deviceRequestAllocationResultWithBindingConditions(
                            req1, driverA, pool1, device2, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_122() -> AllocatorTestCase:  # binding-conditions-without-feature-gate
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_123() -> AllocatorTestCase:  # node-restriction
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                nodeLabelSelector(planetKey, planetValueEarth),
                pool1,
                driverA,
                device(device1, None, None).withBindsToNode(True),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_124() -> AllocatorTestCase:  # partitionable-devices-with-binding-conditions
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        )
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_125() -> AllocatorTestCase:  # partitionable-devices-with-binding-conditions-multiple
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsPrepare2"], ["BindingFailed2"]),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_126() -> (
    AllocatorTestCase
):  # partitionable-devices-with-binding-conditions-some-devices-no-conditions
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 3))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("2Gi")})
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("2Gi")})
                ),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsReady"], ["BindingTimeout"]),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, None, None
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device3, ["IsReady"], ["BindingTimeout"]
                        ),
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_127() -> AllocatorTestCase:  # partitionable-devices-with-binding-conditions-multi-slices
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice4,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            ),
            sliceWithCounterSets(
                slice3,
                node1,
                resourcePool(pool1, 4),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 4),
                driverA,
                counterSet(counterSet2, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, None, None
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_128() -> AllocatorTestCase:  # partitionable-devices-with-binding-conditions-and-taints
    return AllocatorTestCase(
        features=Features(
            PartitionableDevices=True, DeviceBindingAndStatus=True, DeviceTaints=True
        ),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"])
                .withTaints(
                    DeviceTaint(Key="key1", Value="value1", Effect=DeviceTaintEffectNoSchedule)
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": MustParse("8Gi")})
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_129() -> (
    AllocatorTestCase
):  # partitionable-devices-with-binding-conditions-and-taints-tolerated
    return AllocatorTestCase(
        features=Features(
            PartitionableDevices=True, DeviceBindingAndStatus=True, DeviceTaints=True
        ),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 2)).withTolerations(
                tolerationNoScheduleKey1
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withBindingConditions(["IsPrepare"], ["BindingFailed"])
                .withTaints(
                    DeviceTaint(Key="key1", Value="value1", Effect=DeviceTaintEffectNoSchedule)
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            AllocationResult(
                Devices=DeviceAllocationResult(
                    Results=[
                        deviceRequestAllocationResultWithBindingConditions(
                            req0,
                            driverA,
                            pool1,
                            device1,
                            ["IsPrepare"],
                            ["BindingFailed"],
                            tolerationNoScheduleKey1,
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, None, None, tolerationNoScheduleKey1
                        ),
                    ]
                ),
                NodeSelector=localNodeSelector(node1),
            )
        ],
    )


def _case_130() -> AllocatorTestCase:  # consumable-capacity-disabled-feature
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrap(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
            )
        ),
    )


def _case_131() -> AllocatorTestCase:  # consumable-capacity-disabled-feature-with-prioritized-list
    return AllocatorTestCase(
        features=Features(PrioritizedList=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1).withCapacityRequest(ptrTo(one)),
                    subRequest(subReq1, classA, 1).withCapacityRequest(ptrTo(one)),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrap(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(
            ContainSubstring(
                "claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
            )
        ),
    )


def _case_132() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-missing-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity1: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_133() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity1: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_134() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, None
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, None
                ),
            ),
        ],
    )


def _case_135() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
        ],
    )


def _case_136() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_137() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
            claim(claim1).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            ),
        ],
    )


def _case_138() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    )


def _case_139() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-zero-request-policy
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req0, classA, 1)),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: zero}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: zero}
                ),
            ),
        ],
    )


def _case_140() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-violates-zero-request-policy
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_141() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
            claim(claim1).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    )


def _case_142() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-range-policy-step
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(3, BinarySI))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: four}
                ),
            )
        ],
    )


def _case_143() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-valid-values-policy
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(2, BinarySI))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(one, {capacity0: four}, [two]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    )


def _case_144() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(2, BinarySI))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(one, {capacity0: three}, [three]),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: three}
                ),
            )
        ],
    )


def _case_145() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
            claim(claim1).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_146() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(6, BinarySI))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: NewQuantity(10, BinarySI)}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_147() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two))
            )
        ),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(two)}},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    )


def _case_148() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two))
            )
        ),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(two)}},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
                device(device2, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    )


def _case_149() -> AllocatorTestCase:  # consumable-capacity-with-multi-allocatable-device-backtrack
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(MatchAttribute=stringAttribute))
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two)),
                deviceRequest(req1, classA, 1).withCapacityRequest(ptrTo(two)),
            ),
            claim(claim1).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two))
            ),
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue1")
                        )
                    },
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue2")
                        )
                    },
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            ),
        ],
    )


def _case_150() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-subrequest
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1).withCapacityRequest(ptrTo(four)),
                    subRequest(subReq1, classA, 1).withCapacityRequest(ptrTo(two)),
                    subRequest(subReq1, classA, 1),
                )
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(
                    req0SubReq1, driverA, pool1, device1
                ).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    )


def _case_151() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two))
            )
        ),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(two)}},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_152() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(ptrTo(two))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, None, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    )


def _case_153() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(ptrTo(two))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    )


def _case_154() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one)),
                allDeviceRequest(req1, classA).withCapacityRequest(ptrTo(one)),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            )
        ],
    )


def _case_155() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(one)}},
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            )
        ],
    )


def _case_156() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one)),
                allDeviceRequest(req1, classA).withCapacityRequest(ptrTo(one)),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_157() -> (
    AllocatorTestCase
):  # consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(one)}},
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                allDeviceRequest(req0, classA).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: one}
                ),
            )
        ],
    )


def _case_158() -> (
    AllocatorTestCase
):  # consumable-capacity-dedicated-device-with-consumable-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None))
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_159() -> (
    AllocatorTestCase
):  # consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
            claim(claim1).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            ),
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_160() -> (
    AllocatorTestCase
):  # allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_161() -> (
    AllocatorTestCase
):  # allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_162() -> (
    AllocatorTestCase
):  # allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one))
            )
        ),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(one)}},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_163() -> AllocatorTestCase:  # allow-multiple-allocations-with-partitionable-device
    return AllocatorTestCase(
        features=Features(PrioritizedList=True, PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withAllowMultipleAllocations(),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                )
                .withAllowMultipleAllocations(),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")})
                )
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {"memory": MustParse("4Gi")}
                ),
                deviceRequestAllocationResult(
                    req1SubReq1, driverA, pool1, device3
                ).withConsumedCapacity(fixedShareID, {"memory": MustParse("4Gi")}),
            )
        ],
    )


def _case_164() -> (
    AllocatorTestCase
):  # allow-multiple-allocations-with-shared-device-counter-cross-cycle
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1)
                .withCapacityRequest(ptrTo(one))
                .withSelectors(
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf('device.attributes["%s"].mode == "b"', driverA)
                        )
                    )
                )
            )
        ),
        allocatedSharedDeviceIDs=setsNew(
            MakeSharedDeviceID(MakeDeviceID(driverA, pool1, device1), fixedShareID)
        ),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: ptrTo(one)}},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, {"mode": DeviceAttribute(StringValue=ptrTo("a"))})
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: one})
                )
                .withAllowMultipleAllocations(),
                device(device2, fromCounters, {"mode": DeviceAttribute(StringValue=ptrTo("b"))})
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: one})
                )
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: one}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_165() -> (
    AllocatorTestCase
):  # consumable-capacity-with-partitionable-device-multiple-capacity-pools
    return AllocatorTestCase(
        features=Features(PrioritizedList=True, PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one)),
                deviceRequest(req2, classA, 1).withCapacityRequest(ptrTo(two)),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"]["%s"].compareTo(quantity("4")) >= 0',
                                    driverA,
                                    capacity0,
                                )
                            )
                        ),
                    ).withCapacityRequest(ptrTo(one)),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"]["%s"].compareTo(quantity("2")) >= 0',
                                    driverA,
                                    capacity0,
                                )
                            )
                        ),
                    ).withCapacityRequest(ptrTo(one)),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: two}),
                    deviceCounterConsumption(counterSet2, {capacity1: four}),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: four}),
                    deviceCounterConsumption(counterSet2, {capacity1: four}),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: two}),
                    deviceCounterConsumption(counterSet2, {capacity1: four}),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
                counterSet(counterSet2, {capacity1: MustParse("8")}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one, capacity1: two}
                ),
                deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, {capacity0: two, capacity1: two}
                ),
                deviceRequestAllocationResult(
                    req1SubReq1, driverA, pool1, device1
                ).withConsumedCapacity(fixedShareID, {capacity0: one, capacity1: two}),
            )
        ],
    )


def _case_166() -> AllocatorTestCase:  # with-distinct-constraints
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0, req1]),
                DeviceConstraint(DistinctAttribute=versionAttribute, Requests=[req0, req1, req2]),
                DeviceConstraint(DistinctAttribute=intAttribute, Requests=[req0, req1, req2, req3]),
            )
            .withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
                deviceRequest(req2, classA, 1),
                deviceRequest(req3, classA, 1),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0")),
                        "numa": DeviceAttribute(IntValue=ptrTo(int64(0))),
                        "boolAttribute": DeviceAttribute(BoolValue=ptrTo(True)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.1")),
                        "numa": DeviceAttribute(IntValue=ptrTo(int64(1))),
                        "boolAttribute": DeviceAttribute(BoolValue=ptrTo(False)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device3,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.2")),
                        "numa": DeviceAttribute(IntValue=ptrTo(int64(2))),
                        "boolAttribute": DeviceAttribute(BoolValue=ptrTo(True)),
                    },
                ).withAllowMultipleAllocations(),
                device(
                    device4,
                    None,
                    {
                        "driverVersion": DeviceAttribute(VersionValue=ptrTo("1.0.0")),
                        "numa": DeviceAttribute(IntValue=ptrTo(int64(3))),
                        "boolAttribute": DeviceAttribute(BoolValue=ptrTo(True)),
                    },
                ).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, None
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, None
                ),
                deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, None
                ),
                deviceRequestAllocationResult(req3, driverA, pool1, device4).withConsumedCapacity(
                    fixedShareID, None
                ),
            )
        ],
    )


def _case_167() -> AllocatorTestCase:  # with-distinct-constraints-attribute-not-set
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0]))
            .withRequests(deviceRequest(req0, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_168() -> AllocatorTestCase:  # with-distinct-constraints-unknown-type-attribute
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0]))
            .withRequests(deviceRequest(req0, classA, 1))
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"boolAttribute": DeviceAttribute()}
                ).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
        expectError=MatchError(ContainSubstring("unsupported attribute value")),
    )


def _case_169() -> AllocatorTestCase:  # with-distinct-constraints-with-subrequests
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(
                DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0, req1])
            )
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf('device.attributes["%s"].boolAttribute', driverA)
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 1),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf('device.attributes["%s"].boolAttribute', driverA)
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 1),
                ),
                requestWithPrioritizedList(
                    req2,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf('device.attributes["%s"].boolAttribute', driverA)
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 1),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"boolAttribute": DeviceAttribute(BoolValue=ptrTo(True))}
                ).withAllowMultipleAllocations(),
                device(
                    device2, None, {"boolAttribute": DeviceAttribute(BoolValue=ptrTo(False))}
                ).withAllowMultipleAllocations(),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(
                    req0SubReq0, driverA, pool1, device1
                ).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(
                    req1SubReq1, driverA, pool1, device2
                ).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(
                    req2SubReq0, driverA, pool1, device1
                ).withConsumedCapacity(fixedShareID, None),
            )
        ],
    )


def _case_170() -> (
    AllocatorTestCase
):  # distinct-constraint-one-multi-allocatable-device-with-distinct-constraint
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=stringAttribute))
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(one)),
                deviceRequest(req1, classA, 1).withCapacityRequest(ptrTo(one)),
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValue=ptrTo("stringAttributeValue"))},
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ),
        node=node(node1, region1),
        expectResults=[],
    )


def _case_171() -> (
    AllocatorTestCase
):  # distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint
    return AllocatorTestCase(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(
            claim(claim0)
            .withConstraints(DeviceConstraint(DistinctAttribute=stringAttribute))
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(ptrTo(two)),
                deviceRequest(req1, classA, 1).withCapacityRequest(ptrTo(two)),
            )
        ),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue1")
                        )
                    },
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValue=ptrTo("stringAttributeValue2")
                        )
                    },
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    )


def _case_172() -> AllocatorTestCase:  # list-attributes-match-constaint-scalar-string-values
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_173() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-list-of-string-values-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value1", "value2", "value3"]
                        )
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value2", "value3", "value4"]
                        )
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_174() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-list-of-string-values-with-partially-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 3)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])},
                ),
                device(
                    device3,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value3", "value1"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_175() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-list-of-string-values-without-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=stringAttribute)],
                request(req0, classA, 1),
                request(req0, classA, 1),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value3", "value4"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_176() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_177() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 3)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
                device(
                    device3,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_178() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_179() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-list-of-int-values-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"numa": DeviceAttribute(IntValues=[0, 1, 2])}),
                device(device2, None, {"numa": DeviceAttribute(IntValues=[1, 2, 3])}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_180() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-list-of-bool-values-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"boolAttribute": DeviceAttribute(BoolValues=[True, False])}),
                device(device2, None, {"boolAttribute": DeviceAttribute(BoolValues=[True])}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_181() -> (
    AllocatorTestCase
):  # list-attributes-match-constaint-list-of-version-values-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(MatchAttribute=versionAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"driverVersion": DeviceAttribute(VersionValues=["1.0.0", "1.1.0", "2.0.0"])},
                ),
                device(
                    device2,
                    None,
                    {"driverVersion": DeviceAttribute(VersionValues=["1.1.0", "2.0.0", "2.1.0"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_182() -> AllocatorTestCase:  # list-attributes-match-constaint-with-empty-or-unknown-type
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"stringAttribute": DeviceAttribute()}),
                device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=[])}),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("unsupported attribute value")),
    )


def _case_183() -> AllocatorTestCase:  # list-attributes-disabled-match-constraint-with-lists
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=False),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value1", "value2", "value3"]
                        )
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value2", "value3", "value4"]
                        )
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_184() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-scalar-string-values-all-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2, None, {"stringAttribute": DeviceAttribute(StringValue=new("value2"))}
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_185() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-scalar-string-values-not-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_186() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-list-of-string-values-all-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])},
                ),
                device(
                    device3,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value3", "value4"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_187() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-list-of-string-values-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value1", "value2", "value3"]
                        )
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value2", "value4", "value5"]
                        )
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_188() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
                device(
                    device3,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_189() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"stringAttribute": DeviceAttribute(StringValue=new("value1"))}
                ),
                device(
                    device2,
                    None,
                    {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_190() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-list-of-int-values-all-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0, [DeviceConstraint(DistinctAttribute=intAttribute)], request(req0, classA, 2)
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"numa": DeviceAttribute(IntValues=[0, 1])}),
                device(device2, None, {"numa": DeviceAttribute(IntValues=[1, 2])}),
                device(device3, None, {"numa": DeviceAttribute(IntValues=[2, 3])}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_191() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-list-of-bool-values-all-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=boolAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"boolAttribute": DeviceAttribute(BoolValues=[True])}),
                device(device2, None, {"boolAttribute": DeviceAttribute(BoolValues=[True, False])}),
                device(device3, None, {"boolAttribute": DeviceAttribute(BoolValues=[False])}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_192() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constraint-list-of-version-values-all-distinct
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=versionAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {"driverVersion": DeviceAttribute(VersionValues=["1.0.0", "1.1.0"])},
                ),
                device(
                    device2,
                    None,
                    {"driverVersion": DeviceAttribute(VersionValues=["1.1.0", "2.0.0"])},
                ),
                device(
                    device3,
                    None,
                    {"driverVersion": DeviceAttribute(VersionValues=["2.0.0", "2.1.0"])},
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_193() -> (
    AllocatorTestCase
):  # list-attributes-distinct-constaint-with-empty-or-unknown-type
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=versionAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"driverVersion": DeviceAttribute(VersionValues=[])}),
                device(device2, None, {"driverVersion": DeviceAttribute(VersionValues=None)}),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
        expectError=MatchError(ContainSubstring("unsupported attribute value")),
    )


def _case_194() -> AllocatorTestCase:  # list-attributes-disabled-distinct-constraint-with-lists
    return AllocatorTestCase(
        features=Features(ListTypeAttributes=False, ConsumableCapacity=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                [DeviceConstraint(DistinctAttribute=stringAttribute)],
                request(req0, classA, 2),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value1", "value2", "value3"]
                        )
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "stringAttribute": DeviceAttribute(
                            StringValues=["value2", "value3", "value4"]
                        )
                    },
                ),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
    )


def _case_195() -> AllocatorTestCase:  # allocation-mode-all-with-multi-host-resource-pool
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                DeviceRequest(
                    Name=req0,
                    Exactly=ExactDeviceRequest(
                        AllocationMode=DeviceAllocationModeAll, DeviceClassName=classA
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice2, node2, resourcePool(pool1, 2), driverA, device(device2, None, None)
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_196() -> AllocatorTestCase:  # multi-host-resource-pool-with-stale-slice-for-current-node
    def _f1() -> Any:
        s_ = sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f2() -> Any:
        s_ = sliceWithDevices(slice2, node2, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(_f1(), _f2()),
        node=node(node1, region1),
    )


def _case_197() -> (
    AllocatorTestCase
):  # multi-host-resource-pool-complete-update-from-node-1-to-node-2
    def _f1() -> Any:
        s_ = sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f2() -> Any:
        s_ = sliceWithDevices(slice1, node1, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f3() -> Any:
        s_ = sliceWithDevices(slice2, node2, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f4() -> Any:
        s_ = sliceWithDevices(slice2, node2, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(_f1(), _f2(), _f3(), _f4()),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_198() -> (
    AllocatorTestCase
):  # multi-host-resource-pool-complete-update-from-node-2-to-node-1
    def _f1() -> Any:
        s_ = sliceWithDevices(slice1, node2, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f2() -> Any:
        s_ = sliceWithDevices(slice1, node2, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f3() -> Any:
        s_ = sliceWithDevices(slice2, node1, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f4() -> Any:
        s_ = sliceWithDevices(slice2, node1, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(_f1(), _f2(), _f3(), _f4()),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_199() -> (
    AllocatorTestCase
):  # multi-host-resource-pool-incomplete-update-from-node-1-to-node-2
    def _f1() -> Any:
        s_ = sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f2() -> Any:
        s_ = sliceWithDevices(slice1, node1, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f3() -> Any:
        s_ = sliceWithDevices(slice2, node2, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(_f1(), _f2(), _f3()),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    )


def _case_200() -> (
    AllocatorTestCase
):  # multi-host-resource-pool-incomplete-update-from-node-2-to-node-1
    def _f1() -> Any:
        s_ = sliceWithDevices(slice1, node2, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f2() -> Any:
        s_ = sliceWithDevices(slice1, node2, pool1, driverA, device(device2, None, None))
        s_.Spec.Pool.Generation = 1
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    def _f3() -> Any:
        s_ = sliceWithDevices(slice2, node1, pool1, driverA, device(device1, None, None))
        s_.Spec.Pool.Generation = 2
        s_.Spec.Pool.ResourceSliceCount = 2
        return s_

    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(_f1(), _f2(), _f3()),
        node=node(node1, region1),
    )


def _case_201() -> (
    AllocatorTestCase
):  # partitionable-devices-same-counter-set-name-in-different-resource-slices
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 4), driverA, device(device1, None, None)
            ),
            sliceWithCounterSets(
                slice2, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, None)
            ),
            sliceWithDevices(
                slice3, node1, resourcePool(pool1, 4), driverA, device(device2, None, None)
            ),
            sliceWithCounterSets(
                slice4, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, None)
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_202() -> (
    AllocatorTestCase
):  # partitionable-devices-device-counter-consumption-references-unknown-counter-set
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, None)
                ),
            ),
            sliceWithCounterSets(
                slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, None)
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_203() -> (
    AllocatorTestCase
):  # partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"other-memory": MustParse("8Gi")}),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_204() -> (
    AllocatorTestCase
):  # partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")})
                ),
            ),
            sliceWithCounterSets(
                slice2, node1, pool2, driverA, counterSet(counterSet1, {"memory": MustParse("8Gi")})
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_205() -> (
    AllocatorTestCase
):  # partitionable-devices-devices-on-different-nodes-consume-same-counter-set
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0',
                                    driverA,
                                )
                            )
                        ),
                    ),
                )
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("2Gi")})
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
            ),
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device3)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False),
            )
        ],
    )


def _case_206() -> (
    AllocatorTestCase
):  # partitionable-devices-devices-consume-counter-set-in-different-nodes
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("2Gi")})
                ),
            ),
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        node=node(node2, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node2),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    )


def _case_207() -> (
    AllocatorTestCase
):  # partitionable-devices-validation-error-on-non-targeting-slice
    return AllocatorTestCase(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithCounterSets(
                slice1,
                node1,
                resourcePool(pool1, 3),
                driverA,
                counterSet(counterSet1, {"memory": MustParse("8Gi")}),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": MustParse("6Gi")})
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": MustParse("6Gi")})
                ),
            ),
        ),
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_208() -> AllocatorTestCase:  # different-resourceslices-in-pool-can-target-different-nodes
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node2, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, None)
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            )
        ],
    )


def _case_209() -> AllocatorTestCase:  # invalid-pool-is-ok-if-devices-can-be-allocated-from-other
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice2, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice3, node1, resourcePool(pool2, 1), driverA, device(device2, None, None)
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool2, device2, False),
            )
        ],
    )


def _case_210() -> AllocatorTestCase:  # invalid-pool-is-error-if-no-other-device-can-be-allocated
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice2, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice3, node1, resourcePool(pool2, 1), driverA, device(device2, None, None)
            ),
        ),
        allocatedDevices=[MakeDeviceID(driverA, pool2, device2)],
        node=node(node1, region1),
        expectError=MatchError(ContainSubstring("invalid resource pools were encountered")),
    )


def _case_211() -> AllocatorTestCase:  # no-allocation-from-incomplete-pools
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            )
        ),
        node=node(node1, region1),
    )


def _case_212() -> (
    AllocatorTestCase
):  # check-combinations-within-single-request-single-pool-single-slice
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
                device(device3, None, None),
                device(device4, None, None),
            )
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={Stable: 65},
    )


def _case_213() -> (
    AllocatorTestCase
):  # check-combinations-within-single-request-single-pool-multiple-slices
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None),
                device(device2, None, None),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device3, None, None),
                device(device4, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={Stable: 65},
    )


def _case_214() -> (
    AllocatorTestCase
):  # check-combinations-within-single-request-multiple-pools-multiple-slices
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)
            ),
            sliceWithDevices(
                slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, None)
            ),
            sliceWithDevices(
                slice3,
                node1,
                pool2,
                driverA,
                device(device3, None, None),
                device(device4, None, None),
            ),
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={Stable: 65},
    )


def _case_215() -> AllocatorTestCase:  # check-combinations-within-single-request-many-pools
    return AllocatorTestCase(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device2, None, None)),
            sliceWithDevices(slice3, node1, pool3, driverA, device(device3, None, None)),
            sliceWithDevices(slice4, node1, pool4, driverA, device(device4, None, None)),
        ),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={Stable: 65},
    )


def _case_216() -> AllocatorTestCase:  # check-combinations-with-backtracking
    return AllocatorTestCase(
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req1, classA, 2),
                request(
                    req2,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf('device.attributes["%s"].type == "X"', driverA)
                        )
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"type": DeviceAttribute(StringValue=ptrTo("X"))}),
                device(device2, None, {"type": DeviceAttribute(StringValue=ptrTo("Y"))}),
                device(device3, None, {"type": DeviceAttribute(StringValue=ptrTo("Y"))}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
                deviceAllocationResult(req2, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={Stable: 14},
    )


def _case_217() -> (
    AllocatorTestCase
):  # check-combinations-with-backtracking-across-slices-and-pools
    return AllocatorTestCase(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(
            claimWithRequests(
                claim0,
                None,
                request(req1, classA, 2),
                request(
                    req2,
                    classA,
                    1,
                    DeviceSelector(
                        CEL=CELDeviceSelector(
                            Expression=Sprintf('device.attributes["%s"].type == "X"', driverA)
                        )
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"type": DeviceAttribute(StringValue=ptrTo("X"))}),
            ),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device2, None, {"type": DeviceAttribute(StringValue=ptrTo("Y"))}),
            ),
            sliceWithDevices(
                slice3,
                node1,
                pool2,
                driverA,
                device(
                    device3, None, {"type": DeviceAttribute(StringValue=ptrTo("Y"))}
                ).withBindingConditions(["IsPrepare"], []),
            ),
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceRequestAllocationResultWithBindingConditions(
                    req1, driverA, pool2, device3, ["IsPrepare"], []
                ),
                deviceAllocationResult(req2, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={Stable: 14},
    )


def _case_218() -> AllocatorTestCase:  # check-combinations-with-prioritized-list
    return AllocatorTestCase(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        3,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf('device.attributes["%s"].type == "Y"', driverA)
                            )
                        ),
                    ),
                    subRequest(subReq1, classA, 2),
                ),
                requestWithPrioritizedList(
                    req2,
                    subRequest(subReq0, classA, 2),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        DeviceSelector(
                            CEL=CELDeviceSelector(
                                Expression=Sprintf('device.attributes["%s"].type == "X"', driverA)
                            )
                        ),
                    ),
                ),
            )
        ),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"type": DeviceAttribute(StringValue=ptrTo("X"))}),
                device(device2, None, {"type": DeviceAttribute(StringValue=ptrTo("Y"))}),
                device(device3, None, {"type": DeviceAttribute(StringValue=ptrTo("Y"))}),
            )
        ),
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
                deviceAllocationResult(req2SubReq1, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=26,
        expectNumAllocateOneInvocationsByChannel={Stable: 32},
    )


CASES: dict[str, Callable[[], Any]] = {
    "empty": _case_000,
    "simple": _case_001,
    "other-node": _case_002,
    "small-and-large": _case_003,
    "small-and-large-backtrack-requests": _case_004,
    "small-and-large-backtrack-claims": _case_005,
    "devices-split-across-different-slices": _case_006,
    "obsolete-slice": _case_007,
    "duplicate-slice": _case_008,
    "no-slices": _case_009,
    "not-enough-suitable-devices": _case_010,
    "no-classes": _case_011,
    "unknown-class": _case_012,
    "empty-class": _case_013,
    "no-claims-to-allocate": _case_014,
    "all-devices-single": _case_015,
    "all-devices-with-consumed-counters": _case_016,
    "all-devices-many": _case_017,
    "all-devices-of-the-incomplete-pool": _case_018,
    "all-devices-plus-another": _case_019,
    "all-devices-plus-another-reversed": _case_020,
    "all-devices-many-plus-another": _case_021,
    "all-devices-many-plus-another-reversed": _case_022,
    "all-devices-no-solution": _case_023,
    "all-devices-no-solution-reversed": _case_024,
    "all-devices-slice-without-devices": _case_025,
    "all-devices-no-slices": _case_026,
    "all-devices-some-allocated": _case_027,
    "all-devices-some-allocated-admin-access": _case_028,
    "all-devices-some-allocating-admin-access": _case_029,
    "count-devices-some-allocated-admin-access": _case_030,
    "separate-claims-share-device-admin-access": _case_031,
    "admin-access-claims-device-allocating-for-non-admin-access": _case_032,
    "all-devices-slice-without-devices-prioritized-list": _case_033,
    "all-devices-no-slices-prioritized-list": _case_034,
    "all-devices-some-allocated-prioritized-list": _case_035,
    "network-attached-device": _case_036,
    "unsuccessful-allocation-network-attached-device": _case_037,
    "many-network-attached-devices": _case_038,
    "local-and-network-attached-devices": _case_039,
    "several-different-drivers": _case_040,
    "already-allocated-devices": _case_041,
    "admin-access-disabled": _case_042,
    "admin-access-enabled": _case_043,
    "with-constraint": _case_044,
    "with-constraint-non-existent-attribute": _case_045,
    "with-constraint-not-matching-int-attribute": _case_046,
    "with-constraint-not-matching-int-attribute-all-devices": _case_047,
    "with-constraint-not-matching-string-attribute": _case_048,
    "with-constraint-not-matching-bool-attribute": _case_049,
    "with-constraint-not-matching-version-attribute": _case_050,
    "with-constraint-for-request": _case_051,
    "with-constraint-for-request-retry": _case_052,
    "with-class-device-config": _case_053,
    "with-class-device-config-with-multiple-request-and-configs": _case_054,
    "with-claim-config-for-two-requests": _case_055,
    "claim-with-device-config": _case_056,
    "unknown-selector": _case_057,
    "unknown-allocation-mode": _case_058,
    "unknown-constraint": _case_059,
    "invalid-CEL-one-device": _case_060,
    "invalid-CEL-one-device-class": _case_061,
    "invalid-CEL-all-devices": _case_062,
    "too-many-devices-single-request": _case_063,
    "many-devices-okay": _case_064,
    "too-many-devices-total": _case_065,
    "all-devices-invalid-CEL": _case_066,
    "prioritized-list-first-unavailable": _case_067,
    "prioritized-list-non-available": _case_068,
    "prioritized-list-device-config": _case_069,
    "prioritized-list-class-config": _case_070,
    "claim-config-scoped-to-subrequests-of-one-request": _case_071,
    "claim-config-covering-all-requests-is-cleared": _case_072,
    "prioritized-list-subrequests-with-expressions": _case_073,
    "prioritized-list-subrequests-with-constraints-ref-parent-request": _case_074,
    "prioritized-list-subrequests-with-constraints-ref-sub-request": _case_075,
    "prioritized-list-subrequests-with-allocation-mode-all": _case_076,
    "prioritized-list-allocation-mode-all-multiple-requests": _case_077,
    "prioritized-list-disabled": _case_078,
    "prioritized-list-multi-request": _case_079,
    "prioritized-list-with-backtracking": _case_080,
    "prioritized-list-too-many-in-first-subrequest": _case_081,
    "partitionable-devices-single-device": _case_082,
    "partitionable-devices-prioritized-list": _case_083,
    "partitionable-devices-multiple-devices": _case_084,
    "partitionable-devices-multiple-capacity-pools": _case_085,
    "partitionable-devices-multiple-counters": _case_086,
    "partitionable-devices-multiple-pools": _case_087,
    "partitionable-devices-unused-counters-in-counter-set": _case_088,
    "partitionable-devices-no-capacity-available": _case_089,
    "partitionable-devices-overallocated-capacity-pool": _case_090,
    "partitionable-devices-disabled-device-consumes-counters": _case_091,
    "partitionable-devices-disabled-other-device-do-not-consume-counters": _case_092,
    "partitionable-devices-disabled-per-device-node-selection": _case_093,
    "partitionable-devices-per-device-node-selection-nodename": _case_094,
    "partitionable-devices-per-device-node-selection-node-selector": _case_095,
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": _case_096,
    "tainted-two-devices": _case_097,
    "tainted-one-device-two-taints": _case_098,
    "tainted-two-devices-tolerated": _case_099,
    "tainted-two-devices-prioritized-list-tolerated": _case_100,
    "tainted-no-effect": _case_101,
    "tainted-one-device-two-taints-both-tolerated": _case_102,
    "tainted-disabled": _case_103,
    "tainted-prioritized-list": _case_104,
    "tainted-prioritized-list-disabled": _case_105,
    "tainted-admin-access": _case_106,
    "tainted-admin-access-disabled": _case_107,
    "tainted-all-devices-single": _case_108,
    "tainted-all-devices-single-disabled": _case_109,
    "prioritized-list-allocation-mode-all": _case_110,
    "prioritized-list-allocation-mode-all-with-selectors": _case_111,
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": _case_112,
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": _case_113,
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": _case_114,
    "max-number-devices": _case_115,
    "partitionable-devices-with-attribute-selector": _case_116,
    "prioritized-list-max-allocation-limit-request": _case_117,
    "prioritized-list-max-allocation-allocation-mode-all": _case_118,
    "device-binding-conditions": _case_119,
    "binding-conditions-multiple-devices": _case_120,
    "binding-conditions-with-and-without": _case_121,
    "binding-conditions-without-feature-gate": _case_122,
    "node-restriction": _case_123,
    "partitionable-devices-with-binding-conditions": _case_124,
    "partitionable-devices-with-binding-conditions-multiple": _case_125,
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": _case_126,
    "partitionable-devices-with-binding-conditions-multi-slices": _case_127,
    "partitionable-devices-with-binding-conditions-and-taints": _case_128,
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": _case_129,
    "consumable-capacity-disabled-feature": _case_130,
    "consumable-capacity-disabled-feature-with-prioritized-list": _case_131,
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": _case_132,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": _case_133,
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": _case_134,
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": _case_135,
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": _case_136,
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": _case_137,
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": _case_138,
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": _case_139,
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": _case_140,
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": _case_141,
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": _case_142,
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": _case_143,
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": _case_144,
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": _case_145,
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": _case_146,
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": _case_147,
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": _case_148,
    "consumable-capacity-with-multi-allocatable-device-backtrack": _case_149,
    "consumable-capacity-multi-allocatable-device-with-subrequest": _case_150,
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": _case_151,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": _case_152,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": _case_153,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": _case_154,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": _case_155,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": _case_156,
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": _case_157,
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": _case_158,
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": _case_159,
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": _case_160,
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": _case_161,
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": _case_162,
    "allow-multiple-allocations-with-partitionable-device": _case_163,
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": _case_164,
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": _case_165,
    "with-distinct-constraints": _case_166,
    "with-distinct-constraints-attribute-not-set": _case_167,
    "with-distinct-constraints-unknown-type-attribute": _case_168,
    "with-distinct-constraints-with-subrequests": _case_169,
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": _case_170,
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": _case_171,
    "list-attributes-match-constaint-scalar-string-values": _case_172,
    "list-attributes-match-constaint-list-of-string-values-with-common-elements": _case_173,
    "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": _case_174,
    "list-attributes-match-constaint-list-of-string-values-without-common-elements": _case_175,
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements": _case_176,
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements": _case_177,
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements": _case_178,
    "list-attributes-match-constaint-list-of-int-values-with-common-elements": _case_179,
    "list-attributes-match-constaint-list-of-bool-values-with-common-elements": _case_180,
    "list-attributes-match-constaint-list-of-version-values-with-common-elements": _case_181,
    "list-attributes-match-constaint-with-empty-or-unknown-type": _case_182,
    "list-attributes-disabled-match-constraint-with-lists": _case_183,
    "list-attributes-distinct-constraint-scalar-string-values-all-distinct": _case_184,
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": _case_185,
    "list-attributes-distinct-constraint-list-of-string-values-all-distinct": _case_186,
    "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": _case_187,
    "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": _case_188,
    "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": _case_189,
    "list-attributes-distinct-constraint-list-of-int-values-all-distinct": _case_190,
    "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": _case_191,
    "list-attributes-distinct-constraint-list-of-version-values-all-distinct": _case_192,
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": _case_193,
    "list-attributes-disabled-distinct-constraint-with-lists": _case_194,
    "allocation-mode-all-with-multi-host-resource-pool": _case_195,
    "multi-host-resource-pool-with-stale-slice-for-current-node": _case_196,
    "multi-host-resource-pool-complete-update-from-node-1-to-node-2": _case_197,
    "multi-host-resource-pool-complete-update-from-node-2-to-node-1": _case_198,
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": _case_199,
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": _case_200,
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": _case_201,
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": _case_202,
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": _case_203,
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": _case_204,
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": _case_205,
    "partitionable-devices-devices-consume-counter-set-in-different-nodes": _case_206,
    "partitionable-devices-validation-error-on-non-targeting-slice": _case_207,
    "different-resourceslices-in-pool-can-target-different-nodes": _case_208,
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": _case_209,
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": _case_210,
    "no-allocation-from-incomplete-pools": _case_211,
    "check-combinations-within-single-request-single-pool-single-slice": _case_212,
    "check-combinations-within-single-request-single-pool-multiple-slices": _case_213,
    "check-combinations-within-single-request-multiple-pools-multiple-slices": _case_214,
    "check-combinations-within-single-request-many-pools": _case_215,
    "check-combinations-with-backtracking": _case_216,
    "check-combinations-with-backtracking-across-slices-and-pools": _case_217,
    "check-combinations-with-prioritized-list": _case_218,
}

@pytest.mark.parametrize("name", list(CASES))
def test_allocator(name: str) -> None:
    run_case(CASES[name]())
