"""DynamicResources' Filter over many node-table rows at once (the batch form), giving for
every row what the per-node ``filter`` gives (``tests/plugins/test_dra_batch.py`` compares
both on random clusters):

- claims already allocated: their node selectors, matched over the table's columns
  (``CompiledNodeSelector.match_table``, NodeAffinity's batch matching), and those whose
  devices' binding failed or timed out (``stuck``, unavailable on every node);
- claims to allocate: the structured allocator per node, its answers kept across cycles by
  ``AllocationMemo`` where they cannot change, so a cycle asks only about the nodes whose
  devices moved since the last one (the node a pod just went to). An invalid pool
  (``FailedOnNode``) fails its node only, with the allocator's message.

A pod with extended resources backed by a DeviceClass has a special claim sized per node:
the plugin gives those pods the per-node Filter (``DynamicResources._filter_each``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from kubesched.api.dra.types import AllocationResult, ResourceClaim
from kubesched.api.selectors import compile_node_selector
from kubesched.api.types import NodeSelectorTerm
from kubesched.framework.interface import BatchStatus
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.cache import AllocationMemo, IndexedAllocator, Shape
from kubesched.plugins.dynamicresources.structured import AllocationError, FailedOnNode

if TYPE_CHECKING:
    from kubesched.framework.snapshot import Snapshot

CANNOT_ALLOCATE = ("cannot allocate all claims",)
NOT_AVAILABLE = ("resourceclaim not available on the node",)

T = TypeVar("T")


def filter_rows(snapshot: Snapshot, idx: np.ndarray,
                available_on: list[tuple[NodeSelectorTerm, ...] | None],
                allocator: IndexedAllocator | None, to_allocate: list[ResourceClaim],
                memo: AllocationMemo, wrap: Callable[[list[AllocationResult]], T],
                wrap_key: Hashable, stuck: Sequence[int] = (),
                ) -> tuple[BatchStatus, set[int], dict[str, T]]:
    """Filter's verdicts for the rows ``idx``; the claims (by index) unavailable on some
    passing-allocation node (for PostFilter): those whose node selector misses it and the
    ``stuck`` ones; the allocations of the nodes that pass, each as ``wrap`` makes it of
    the node's results (kept by the memo with them, under ``wrap_key``: the same ``wrap``
    for the same key).

    Per-node ``filter`` checks the allocation first and the allocated claims' selectors
    after, and keeps a node's allocation only when the selectors match too: the same here,
    so an allocation error on a node is reported whatever its selectors say."""
    n = len(idx)
    out = BatchStatus.success(n)
    unavailable_claims: set[int] = set()
    fit = np.ones(n, dtype=bool)
    results: list[list[AllocationResult] | None] = []
    shape: Shape | None = None
    if allocator is not None:
        errors: dict[int, AllocationError] = {}
        fit, results, shape = _allocate_rows(snapshot, idx, allocator, to_allocate, memo,
                                             errors)
        for k, e in errors.items():
            err = np.zeros(n, dtype=bool)
            err[k] = True
            # an invalid pool fails its node only; a broken claim or class is an error
            out.fail(err, Code.UNSCHEDULABLE_AND_UNRESOLVABLE if isinstance(e, FailedOnNode)
                     else Code.ERROR, (str(e),))
        out.fail(~fit, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE)
    unavailable = np.zeros(n, dtype=bool)
    if stuck:
        unavailable[:] = True
        if (out.codes == 0).any():
            unavailable_claims.update(stuck)
    for ci, sel in enumerate(available_on):
        if sel is None:
            continue
        miss = ~compile_node_selector(sel).match_table(snapshot.table, idx)
        if miss.any():
            unavailable |= miss
            # per-node filter records the claim whenever it reaches the selector check
            if (miss & (out.codes == 0)).any():
                unavailable_claims.add(ci)
    out.fail(unavailable, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_AVAILABLE)
    allocations: dict[str, T] = {}
    if allocator is not None:
        names = snapshot.table.names
        ok = fit & ~unavailable
        wrapped: list[Any]
        if shape is not None:  # the memo's rows, wrapped once per answer
            where = idx[ok]
            wrapped = shape.wrapped_for(wrap_key, where, wrap)
        else:  # the positions' results
            where = np.flatnonzero(ok)
            wrapped = [None] * n
            for k in where.tolist():
                wrapped[k] = wrap(results[k])  # type: ignore[arg-type]  # fit: not None
        passing, at = idx[ok].tolist(), where.tolist()
        if len(passing) == 1:
            allocations = {names[passing[0]]: wrapped[at[0]]}
        elif passing:  # (itemgetter: the lookups without a Python loop)
            allocations = dict(zip(itemgetter(*passing)(names), itemgetter(*at)(wrapped),
                                   strict=True))
    return out, unavailable_claims, allocations


def _allocate_rows(snapshot: Snapshot, idx: np.ndarray, allocator: IndexedAllocator,
                   claims: list[ResourceClaim], memo: AllocationMemo,
                   errors: dict[int, AllocationError],
                   ) -> tuple[np.ndarray, list[list[AllocationResult] | None], Shape | None]:
    """Whether the claims fit each row of ``idx`` (errors: False, in ``errors`` by
    position), and each one's results: the memo's shape (results by row) or, without
    one, a list by position."""
    infos = snapshot.node_infos
    want = len(claims)

    def ask(k: int, row: int) -> list[AllocationResult] | None:
        try:
            return allocator.allocate(infos[row].node, claims)
        except AllocationError as e:
            errors[k] = e
            return None

    shape = memo.shape(allocator, claims, snapshot.table)
    if shape is None:
        results = [ask(k, row) for k, row in enumerate(idx.tolist())]
        fit = np.array([r is not None and len(r) == want for r in results], dtype=bool)
        fit[list(errors)] = False
        return fit.reshape(len(idx)), results, None
    for k in np.flatnonzero(~shape.known[idx]).tolist():
        row = int(idx[k])
        res = ask(k, row)
        if k not in errors:
            shape.keep(row, res, res is not None and len(res) == want, claims)
    fit = shape.fit[idx]
    if errors:
        fit[list(errors)] = False
    if shape.owners:  # answers sharing devices, asked for other claims of this shape
        shape.owned_by(idx[fit], claims)
    return fit, shape.results, shape
