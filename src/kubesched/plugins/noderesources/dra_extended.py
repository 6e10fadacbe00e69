"""Scoring extended resources backed by a DeviceClass (DRAExtendedResource), as upstream's
``noderesources/resource_allocation.go`` (stored version with ``getDRAPreScoredParams`` and
``calculateDRAResourceTotals``).

When a scoring strategy names an extended resource the pod requests and the node's
allocatable lacks (or has at zero), and a DeviceClass maps that name (explicitly or as
``deviceclass.resource.kubernetes.io/<class>``), the resource's allocatable is the number
of devices on the node the class selects and its requested amount the number of those held
by allocated or in-flight claims (exclusively or shared), plus the pod's request. Devices
count from every ResourceSlice whose node selection reaches the node (per device with
per-device node selection), whatever the pool's state; a device taint does not matter; a
class selector that fails to compile or evaluate leaves the resource out for the node, as
upstream's logged error does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.api.dra.cel import CelCompileError, CelRuntimeError, compile_selector, device_input
from kubesched.api.dra.store import AllocatedState, dra_index
from kubesched.api.dra.types import Device, DeviceClass, ResourceSlice
from kubesched.api.types import Node
from kubesched.framework.handle import Handle, feature_enabled
from kubesched.plugins.dynamicresources.extended import (
    class_mapping_of,
    is_dra_extended_resource_name,
)
from kubesched.plugins.dynamicresources.structured import node_matches


class DraScoreState:
    """draPreScoreState: the allocated state and the slices, read once per cycle, and the
    classes the scored resource names map to; totals are kept per (node, resource)."""

    def __init__(self, classes: Mapping[str, DeviceClass], allocated: AllocatedState,
                 slices: list[ResourceSlice]) -> None:
        self.classes = classes
        self.allocated = allocated
        self.slices = slices
        self._totals: dict[tuple[str, str], tuple[int, int]] = {}
        # (expression, driver, pool, device) -> selected? (upstream's deviceMatchCache)
        self._matches: dict[tuple[str, str, str, str], bool] = {}

    def totals(self, node: Node | None, resource: str) -> tuple[int, int]:
        """calculateDRAExtendedResourceAllocatableRequest: (devices of the class on the
        node, how many of them are allocated); (0, 0) for a name no class maps."""
        cls = self.classes.get(resource)
        if cls is None or node is None:
            return 0, 0
        key = (node.name, resource)
        found = self._totals.get(key)
        if found is None:
            found = self._totals[key] = self._count(node, cls)
        return found

    def _count(self, node: Node, cls: DeviceClass) -> tuple[int, int]:
        capacity = allocated = 0
        for s in self.slices:
            if s.per_device_node_selection:
                devices: Iterable[Device] = (
                    d for d in s.devices
                    if node_matches(node, d.node_name, d.all_nodes, d.node_selector))
            elif node_matches(node, s.node_name, s.all_nodes, s.node_selector):
                devices = s.devices
            else:
                continue
            for d in devices:
                selected = self._selected(cls, s, d)
                if selected is None:
                    return 0, 0  # a broken selector: upstream logs it, the resource is out
                if selected:
                    capacity += 1
                    if self.allocated.is_allocated((s.driver, s.pool, d.name)):
                        allocated += 1
        return capacity, allocated

    def _selected(self, cls: DeviceClass, s: ResourceSlice, d: Device) -> bool | None:
        """deviceMatchesClass: every class selector true; None on a CEL error."""
        for expr in cls.selectors:
            key = (expr, s.driver, s.pool, d.name)
            hit = self._matches.get(key)
            if hit is None:
                compiled = compile_selector(expr)
                if isinstance(compiled, CelCompileError):
                    return None
                try:
                    hit = compiled.device_matches(device_input(s.driver, d.attributes,
                                                               d.capacity, None))
                except CelRuntimeError:
                    return None
                self._matches[key] = hit
            if not hit:
                return False
        return True


def dra_score_state(objects: Mapping[str, list[Any]] | None, dra: Any,
                    resources: Iterable[str]) -> DraScoreState | None:
    """getDRAPreScoredParams: the state when a DeviceClass backs one of the scored
    ``resources``, else None. ``dra``: the handle's DraManager (in-flight allocations
    count as allocated), or None."""
    names = [r for r in resources if is_dra_extended_resource_name(r)]
    if not names:
        return None  # cpu and memory, as by default: nothing to look up
    idx = dra_index(objects)
    mapping = class_mapping_of(idx.classes)
    classes = {r: idx.classes[mapping[r]] for r in names if r in mapping}
    if not classes:
        return None
    allocated = (dra.allocated_state(objects, True) if dra is not None
                 else idx.allocated_state(True))
    return DraScoreState(classes, allocated, list(idx.slices))


def pre_score_dra(handle: Handle, resources: Sequence[str]) -> DraScoreState | None:
    """PreScore's part for NodeResourcesFit and NodeResourcesBalancedAllocation: the state
    for the scored ``resources`` while DRAExtendedResource is on. ``resources`` may be just
    the scored names ``is_dra_extended_resource_name`` accepts (``dra_scored_names``): the
    others are never looked up."""
    if not resources or not feature_enabled(handle, "DRAExtendedResource"):
        return None
    return dra_score_state(handle.objects, handle.dra, resources)


def dra_scored_names(resources: Iterable[str]) -> tuple[str, ...]:
    """The scored resources a DeviceClass could back: with cpu and memory, as by default,
    none, and PreScore skips the DRA lookup for every pod."""
    return tuple(r for r in resources if is_dra_extended_resource_name(r))
