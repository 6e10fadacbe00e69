"""What DynamicResources keeps across scheduling cycles, for speed only: every decision is
the structured allocator's (``structured.py``), on the same inputs.

- :class:`SliceIndex`: the ResourceSlices by node. ``gather_pools`` keeps the pools with a
  slice targeting the node; a pool whose slices name nodes (``spec.nodeName``) targets only
  those, so the allocator for a node is given every slice of the pools naming it plus every
  slice of the pools that select nodes otherwise (node selector, all nodes, per-device
  selection) — the pools it would find among all slices, with all their slices (generations,
  incompleteness, duplicate names and counters are judged per pool as before). It also
  holds what the CEL selectors said of each device, per set of allocator features (a
  device's CEL input depends on them: ``allowMultipleAllocations`` with consumable
  capacity): a selector's verdict depends only on the device, the features and the
  expression, and the devices live as long as the slices do.
- :class:`IndexedAllocator`: the allocator reading its slices from a SliceIndex and its
  CEL verdicts from the index's cache instead of a per-cycle one.

A new index (and so an empty verdict cache) is built whenever the set of slices changes
(:func:`slice_index`), so nothing is kept for a device that was replaced or removed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.dra.cel import DeviceInput
from kubesched.api.dra.store import AllocatedState
from kubesched.api.dra.types import (
    AllocationResult,
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.api.types import Node
from kubesched.framework.table_cache import IdentityMemo, NodeValue
from kubesched.plugins.dynamicresources.structured import (
    Allocator,
    DeviceID,
    Features,
    share_id,
)

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable

PoolKey = tuple[str, str]  # driver, pool


class SliceIndex:
    """The slices of one state of the cluster, by the node names their pools name."""

    __slots__ = ("_for_node", "by_pool", "caches", "ids", "local", "node_devices", "shared",
                 "slices")

    def __init__(self, slices: list[ResourceSlice]) -> None:
        self.slices = slices
        self.ids = tuple(map(id, slices))
        self.by_pool: dict[PoolKey, list[ResourceSlice]] = {}
        self.local: dict[str, list[PoolKey]] = {}  # node name -> pools naming it
        shared: list[PoolKey] = []  # pools that may target any node
        for s in slices:
            key = (s.driver, s.pool)
            self.by_pool.setdefault(key, []).append(s)
            if s.per_device_node_selection or s.all_nodes or s.node_selector is not None:
                if key not in shared:
                    shared.append(key)
            elif s.node_name:
                pools = self.local.setdefault(s.node_name, [])
                if key not in pools:
                    pools.append(key)
        self.shared = shared
        self._for_node: dict[str, list[ResourceSlice]] = {}
        # node name -> the devices of its pools (node-local indexes only, see node_local)
        self.node_devices: dict[str, tuple[DeviceID, ...]] = {}
        # per allocator Features: CEL verdicts and inputs per device (by identity: the
        # slices keep them alive). A device's CEL input depends on the features
        # (allowMultipleAllocations is known to CEL only with consumable capacity on).
        self.caches: dict[Features, tuple[dict[tuple[int, str], bool],
                                          dict[int, DeviceInput]]] = {}

    def for_node(self, node: Node | None) -> list[ResourceSlice]:
        """The slices ``gather_pools`` needs for ``node`` (every slice when there is none)."""
        if node is None:
            return self.slices
        found = self._for_node.get(node.name)
        if found is None:
            keys = [*self.local.get(node.name, ()), *self.shared]
            found = [s for k in dict.fromkeys(keys) for s in self.by_pool[k]]
            self._for_node[node.name] = found
        return found

    @property
    def node_local(self) -> bool:
        """Whether every pool names its nodes: a node's allocation then depends on no other
        node's devices, nor on anything of the node but its name."""
        return not self.shared

    def devices_of(self, node_name: str) -> tuple[DeviceID, ...]:
        """The devices of the pools naming ``node_name`` (every generation: a superset)."""
        found = self.node_devices.get(node_name)
        if found is None:
            found = tuple(dict.fromkeys(
                (s.driver, s.pool, d.name) for k in self.local.get(node_name, ())
                for s in self.by_pool[k] for d in s.devices))
            self.node_devices[node_name] = found
        return found


_LAST: list[SliceIndex] = []  # the index of the newest slices seen (one cluster at a time)


def slice_index(slices: list[ResourceSlice]) -> SliceIndex:
    """The index of ``slices``: the last one while the slices are the same objects."""
    if _LAST:
        last = _LAST[0]
        if last.slices is slices or last.ids == tuple(map(id, slices)):
            return last
    idx = SliceIndex(slices)
    _LAST[:] = [idx]
    return idx


class IndexedAllocator(Allocator):
    """``Allocator`` over a SliceIndex: the node's slices only, the index's CEL verdicts."""

    def __init__(self, features: Features, allocated: set[DeviceID] | AllocatedState,
                 classes: Mapping[str, DeviceClass], index: SliceIndex,
                 taint_rules: Iterable[DeviceTaintRule] = ()) -> None:
        super().__init__(features, allocated, classes, index.slices, taint_rules)
        self.index = index
        caches = index.caches.get(features)
        if caches is None:
            caches = index.caches[features] = ({}, {})
        self._matches, self._inputs = caches

    def allocate(self, node: Node | None, claims: list[ResourceClaim],
                 expired: Callable[[], bool] | None = None) -> list[AllocationResult] | None:
        # the base class gathers its pools from ``slices``: the node's ones (all of them
        # again afterwards, for whoever reads ``slices``: explain's diagnosis)
        self.slices = self.index.for_node(node)
        try:
            return super().allocate(node, claims, expired)
        finally:
            self.slices = self.index.slices


# ---------------------------------------------------------------- results per node


class Shape:
    """One shape of claims to allocate: per node-table row, whether the allocator was asked
    (``known``), its answer (None: the claims do not fit) and whether that answer is one
    allocation per claim (``fit``). An answer sharing a device (consumable capacity) names
    its claims in its shareIDs (``structured.share_id``): such rows are marked in
    ``shares`` with the claims they were asked for (``owners``), and ``owned_by`` gives
    them to other claims of the same shape with the shareIDs those would have had."""

    __slots__ = ("fit", "known", "owners", "results", "shares", "wrapped")

    def __init__(self, n: int) -> None:
        self.known = np.zeros(n, dtype=bool)
        self.fit = np.zeros(n, dtype=bool)
        self.shares = np.zeros(n, dtype=bool)
        self.results: list[list[AllocationResult] | None] = [None] * n
        self.owners: dict[int, tuple[str, ...]] = {}
        # wrap key -> per row: whether wrapped, the results as the caller wraps them
        self.wrapped: dict[Hashable, tuple[np.ndarray, list[Any]]] = {}

    def wrapped_for(self, key: Hashable, rows: np.ndarray,
                    wrap: Callable[[list[AllocationResult]], Any]) -> list[Any]:
        """The results of ``rows`` (fitting) as ``wrap`` makes them, by row; made once per
        answer kept."""
        found = self.wrapped.get(key)
        if found is None:
            if len(self.wrapped) >= 8:
                self.wrapped.clear()
            n = len(self.results)
            found = self.wrapped[key] = (np.zeros(n, dtype=bool), [None] * n)
        have, objs = found
        results = self.results
        for row in rows[~have[rows]].tolist():
            objs[row] = wrap(results[row])  # fitting: not None
            have[row] = True
        return objs

    def _changed(self, row: int) -> None:
        for have, _ in self.wrapped.values():
            have[row] = False

    def keep(self, row: int, results: list[AllocationResult] | None, fit: bool,
             claims: list[ResourceClaim]) -> None:
        self._changed(row)
        self.results[row] = results
        self.fit[row] = fit
        self.known[row] = True
        shares = results is not None and any(
            r.share_id is not None for a in results for r in a.results)
        self.shares[row] = shares
        if shares:
            self.owners[row] = owner_key(claims)
        else:
            self.owners.pop(row, None)

    def owned_by(self, rows: np.ndarray, claims: list[ResourceClaim]) -> None:
        """Re-derive the shareIDs of the kept answers of ``rows`` (known, fitting) that
        share a device for ``claims``, where they were asked for other claims."""
        owner = owner_key(claims)
        for row in rows[self.shares[rows]].tolist():
            if self.owners.get(row) == owner:
                continue
            results = self.results[row]
            assert results is not None
            self.results[row] = [_reowned(a, c) for a, c in zip(results, claims, strict=True)]
            self.owners[row] = owner
            self._changed(row)


def owner_key(claims: list[ResourceClaim]) -> tuple[str, ...]:
    """What ``structured.share_id`` reads of the claims."""
    return tuple(c.uid or c.key for c in claims)


def _reowned(a: AllocationResult, claim: ResourceClaim) -> AllocationResult:
    """``a`` with the shareIDs the allocator gives ``claim``'s results (by request, device
    and place in the results)."""
    if all(r.share_id is None for r in a.results):
        return a
    return dataclasses.replace(a, results=tuple(
        r if r.share_id is None else dataclasses.replace(
            r, share_id=share_id(claim, r.request, (r.driver, r.pool, r.device), i))
        for i, r in enumerate(a.results)))


class AllocationMemo:
    """The allocator's answers per node-table row, kept across cycles while they cannot
    change: when every pool names its nodes (``SliceIndex.node_local``), a node's answer for
    some claims depends only on the node's name, its pools' slices, the allocated state of
    their devices (held exclusively, shared, the capacity shares consume: the allocator's
    ``AllocatedState``), the claims' specs, the device classes, the taint rules and the
    features. The answers are kept per shape (the claims' specs, compared by value) and
    forgotten for a row when one of its devices' state changes (the allocated state is
    compared with the previous cycle's: through the DRA index's allocation log, which logs
    every device of a claim stored or removed, shares and consumed capacity included), and
    altogether when anything else of that list changes or the node table is a new one.
    Errors (a broken claim or class, an invalid pool) are never kept.

    The allocated state is compared by identity first: a state changed after an earlier
    call (rather than replaced) is caught by its sizes and ``add`` calls
    (``AllocatedState.unchanged``), then every row is asked again — so whoever needs another
    allocated state (preemption's "as if") should give the allocator a new one."""

    MAX_SHAPES = 64
    MAX_SPECS = 4096

    def __init__(self) -> None:
        # per node table (its nodes) and what else the answers depend on: see ``shape``
        self._answers: NodeValue[_Answers] = NodeValue()
        # the allocated state of the last call (a new one each cycle: PreFilter's; whoever
        # changes an allocator's state should make a new one, see ``shape``) and its sizes
        self._prev: AllocatedState | None = None
        self._prev_sizes: tuple[int, int, int, int] = (0, 0, 0, 0)
        self._spec_keys: IdentityMemo[str] = IdentityMemo(self.MAX_SPECS)

    def _spec_key(self, spec: object) -> str:
        found = self._spec_keys.get(spec)
        if found is None:
            found = self._spec_keys.put(spec, repr(spec))
        return found

    def shape(self, allocator: IndexedAllocator, claims: list[ResourceClaim],
              table: NodeTable) -> Shape | None:
        """The answers for ``claims`` on ``table``'s rows, brought up to date with the
        allocator's allocated state; None when they cannot be kept (not node-local)."""
        index = allocator.index
        if not index.node_local:
            return None
        deps = (index, allocator.features, tuple(allocator.classes.items()),
                tuple(allocator.taint_rules))
        answers = self._answers.get(table, lambda t: _Answers(t, index), deps)
        state = allocator.state
        prev = self._prev
        if answers.fresh:
            answers.fresh = False
        elif prev is not None and _sizes(prev) != self._prev_sizes:
            # the last state was changed in place since: what the answers saw is unknown
            for s in answers.shapes.values():
                s.known[:] = False
        elif prev is not None and state is not prev:
            changed = state.changed_since(prev)  # no pass over every device
            if changed is None:
                changed = _difference(state, prev)
            for d in changed:
                rows = answers.device_rows.get(d)
                if rows:
                    for s in answers.shapes.values():
                        s.known[rows] = False
        self._prev, self._prev_sizes = state, _sizes(state)
        key = tuple(self._spec_key(c.spec) for c in claims)
        shapes = answers.shapes
        found = shapes.get(key)
        if found is None:
            if len(shapes) >= self.MAX_SHAPES:
                shapes.clear()
            found = shapes[key] = Shape(len(table.names))
        return found


class _Answers:
    """The shapes kept for one node table, and which rows each device is on."""

    __slots__ = ("device_rows", "fresh", "shapes")

    def __init__(self, table: NodeTable, index: SliceIndex) -> None:
        self.fresh = True
        self.shapes: dict[tuple[str, ...], Shape] = {}
        self.device_rows: dict[DeviceID, list[int]] = {}
        for row, name in enumerate(table.names):
            for d in index.devices_of(name):
                self.device_rows.setdefault(d, []).append(row)


def _sizes(state: AllocatedState) -> tuple[int, int, int, int]:
    return len(state.devices), len(state.shared), len(state.capacity), state.edits


def _difference(a: AllocatedState, b: AllocatedState) -> set[DeviceID]:
    """The devices whose part of the state differs between ``a`` and ``b``."""
    out = a.devices.symmetric_difference(b.devices)
    out.update(a.shared.symmetric_difference(b.shared))
    out.update(d for d in a.capacity.keys() | b.capacity.keys()
               if a.capacity.get(d) != b.capacity.get(d))
    return out
