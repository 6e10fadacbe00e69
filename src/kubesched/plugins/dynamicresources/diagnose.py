"""Why DynamicResources "cannot allocate all claims" on a node: for ``explain``.

Upstream's Filter says only ``cannot allocate all claims``. This counts, for each request of
each claim the node would have to allocate, the devices the node can reach, how many of them
the request's DeviceClass selects, how many the request's own selectors keep, and how many of
those are still free (not held by another claim, not tainted against the request) — the
narrowing that usually tells the story. When every request alone has enough free devices,
the claims fail together (constraints, or two requests wanting the same devices), and it
says so. It decides nothing: the verdict stays the allocator's. (Taints counted are the
device's own; one a DeviceTaintRule adds shows as a device counted free that the allocator
skips, hence the "together" line.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubesched.api.dra.cel import CelCompileError, CelRuntimeError, compile_selector, device_input
from kubesched.api.dra.store import DeviceID
from kubesched.api.dra.types import ALL, Device, DeviceSubRequest, ResourceClaim
from kubesched.api.types import Node
from kubesched.plugins.dynamicresources.extended import is_special
from kubesched.plugins.dynamicresources.structured import (
    Allocator,
    gather_pools,
    node_matches,
    taint_prevents_allocation,
)


@dataclass(frozen=True, slots=True)
class _Reachable:
    id: DeviceID
    device: Device


def _reachable(allocator: Allocator, node: Node) -> tuple[list[_Reachable], list[str]]:
    """The devices of the pools the node reaches (what the allocator searches), and notes on
    pools it would skip."""
    out: list[_Reachable] = []
    notes: list[str] = []
    for pool in gather_pools(allocator.slices, node, allocator.features):
        if pool.invalid:
            notes.append(f"pool {pool.pool_id} is invalid ({pool.invalid_reason})")
        elif pool.incomplete:
            # an incomplete pool carries no slices: the count is on the ones published
            count = next(s.resource_slice_count for s in allocator.slices
                         if (s.driver, s.pool) == (pool.driver, pool.name))
            notes.append(f"pool {pool.pool_id} is incomplete (not all of its "
                         f"{count} slices are published)")
        for s in pool.targeting:
            for d in s.devices:
                if s.per_device_node_selection and not node_matches(
                        node, d.node_name, d.all_nodes, d.node_selector):
                    continue
                out.append(_Reachable((pool.driver, pool.name, d.name), d))
    return out, notes


def _selects(selectors: Iterable[str], dev: _Reachable) -> bool | str:
    """True/False, or the error that stops the allocator on this device."""
    for expr in selectors:
        compiled = compile_selector(expr)
        if isinstance(compiled, CelCompileError):
            return f"CEL compile error: {compiled.detail}"
        try:
            if not compiled.device_matches(device_input(dev.id[0], dev.device.attributes,
                                                        dev.device.capacity)):
                return False
        except CelRuntimeError as e:
            return f"CEL runtime error on device {'/'.join(dev.id)}: {e}"
    return True


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _request_detail(allocator: Allocator, claim: ResourceClaim, name: str,
                    req: DeviceSubRequest, devices: list[_Reachable]) -> tuple[str, bool]:
    """One request's line and whether it alone could be satisfied."""
    owner = ("the pod's extended-resource claim" if is_special(claim)
             else f"claim {claim.key}")
    head = f"{owner}, request {name}"
    cls = allocator.classes.get(req.device_class_name)
    if cls is None:
        return f"{head}: device class {req.device_class_name} does not exist", False
    of_class: list[_Reachable] = []
    for d in devices:
        hit = _selects(cls.selectors, d)
        if isinstance(hit, str):
            return f"{head}: class {cls.name}: {hit}", False
        if hit:
            of_class.append(d)
    selected: list[_Reachable] = []
    for d in of_class:
        hit = _selects(req.selectors, d)
        if isinstance(hit, str):
            return f"{head}: {hit}", False
        if hit:
            selected.append(d)
    taken = [d for d in selected if d.id in allocator.allocated and not req.admin_access]
    tainted = [d for d in selected if d not in taken and allocator.features.device_taints
               and taint_prevents_allocation(d.device.taints, req)]
    free = len(selected) - len(taken) - len(tainted)
    want = len(selected) if req.allocation_mode == ALL else req.count
    enough = free >= want and (req.allocation_mode != ALL or (free > 0 and free == want))
    needs = ("all devices" if req.allocation_mode == ALL
             else _plural(want, "device"))
    counts = [_plural(len(devices), "device") + " on the node",
              f"{len(of_class)} of class {cls.name}"]
    if req.selectors:
        counts.append(f"{len(selected)} matching the request's selectors")
    counts.append(f"{free} free")
    held = []
    if taken:
        held.append(f"{len(taken)} allocated to other claims")
    if tainted:
        held.append(f"{len(tainted)} tainted")
    tail = f" ({', '.join(held)})" if held else ""
    return f"{head}: needs {needs} of class {cls.name}; {', '.join(counts)}{tail}", enough


def explain_allocation(allocator: Allocator, node: Node,
                       claims: list[ResourceClaim]) -> list[str]:
    """Lines saying why ``claims`` cannot all be allocated on ``node``."""
    devices, notes = _reachable(allocator, node)
    lines: list[str] = []
    all_enough = True
    for claim in claims:
        for req in claim.spec.requests:
            if req.exactly is not None:
                line, enough = _request_detail(allocator, claim, req.name, req.exactly,
                                               devices)
                lines.append(line)
                all_enough = all_enough and enough
                continue
            # a prioritized list: the claim fails only when no alternative fits
            alternatives = [_request_detail(allocator, claim, f"{req.name}/{sub.name}", sub,
                                            devices) for sub in req.first_available]
            if not any(ok for _, ok in alternatives):
                lines.extend(line for line, _ in alternatives)
                all_enough = False
    if all_enough:
        lines.append("every request alone has enough free devices; together they cannot "
                     "be satisfied (constraints, or requests competing for the same devices)")
    return lines + notes
