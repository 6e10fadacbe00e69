"""DynamicResources' Filter over many node-table rows at once (the batch form), giving for
every row what the per-node ``filter`` gives (``tests/plugins/test_dra_batch.py`` compares
both on random clusters):

- claims already allocated: their node selectors, matched over the table's columns
  (``CompiledNodeSelector.match_table``, NodeAffinity's batch matching);
- claims to allocate: the structured allocator per node, its answers kept across cycles by
  ``AllocationMemo`` where they cannot change, so a cycle asks only about the nodes whose
  devices moved since the last one (the node a pod just went to).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.dra.types import AllocationResult, ResourceClaim
from kubesched.api.selectors import compile_node_selector
from kubesched.api.types import NodeSelectorTerm
from kubesched.framework.interface import BatchStatus
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.cache import AllocationMemo, IndexedAllocator
from kubesched.plugins.dynamicresources.structured import AllocationError

if TYPE_CHECKING:
    from kubesched.framework.snapshot import Snapshot

CANNOT_ALLOCATE = ("cannot allocate all claims",)
NOT_AVAILABLE = ("resourceclaim not available on the node",)


def filter_rows(snapshot: Snapshot, idx: np.ndarray,
                available_on: list[tuple[NodeSelectorTerm, ...] | None],
                allocator: IndexedAllocator | None, to_allocate: list[ResourceClaim],
                memo: AllocationMemo,
                ) -> tuple[BatchStatus, set[int], dict[str, list[AllocationResult]]]:
    """Filter's verdicts for the rows ``idx``; the claims (by index) unavailable on some
    passing-allocation node (for PostFilter); the allocations of the nodes that pass.

    Per-node ``filter`` checks the allocation first and the allocated claims' selectors
    after, and keeps a node's allocation only when the selectors match too: the same here,
    so an allocation error on a node is reported whatever its selectors say."""
    n = len(idx)
    out = BatchStatus.success(n)
    unavailable_claims: set[int] = set()
    allocations: dict[str, list[AllocationResult]] = {}
    names = snapshot.table.names
    cannot = np.zeros(n, dtype=bool)
    ok_alloc = np.ones(n, dtype=bool)
    row_results: list[list[AllocationResult] | None] = []
    if allocator is not None:
        errors: dict[int, str] = {}
        row_results = _allocate_rows(snapshot, idx, allocator, to_allocate, memo, errors)
        want = len(to_allocate)
        for k, res in enumerate(row_results):
            if k in errors:
                continue
            if res is None or len(res) != want:
                cannot[k] = True
        if errors:
            err = np.zeros(n, dtype=bool)
            for k, msg in errors.items():
                err[:] = False
                err[k] = True
                out.fail(err, Code.ERROR, (msg,))
            ok_alloc[list(errors)] = False
        out.fail(cannot, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE)
        ok_alloc &= ~cannot
    unavailable = np.zeros(n, dtype=bool)
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
    if allocator is not None:
        for k in np.flatnonzero(ok_alloc & ~unavailable).tolist():
            res = row_results[k]
            assert res is not None
            allocations[names[int(idx[k])]] = res
    return out, unavailable_claims, allocations


def _allocate_rows(snapshot: Snapshot, idx: np.ndarray, allocator: IndexedAllocator,
                   claims: list[ResourceClaim], memo: AllocationMemo,
                   errors: dict[int, str]) -> list[list[AllocationResult] | None]:
    infos = snapshot.node_infos
    shape = memo.shape(allocator, claims, snapshot.table)

    def ask(k: int, row: int) -> list[AllocationResult] | None:
        try:
            return allocator.allocate(infos[row].node, claims)
        except AllocationError as e:
            errors[k] = str(e)
            return None

    rows = idx.tolist()
    if shape is None:
        return [ask(k, row) for k, row in enumerate(rows)]
    known, results = shape.known, shape.results
    todo = np.flatnonzero(~known[idx]).tolist()
    for k in todo:
        row = rows[k]
        res = ask(k, row)
        if k not in errors:
            results[row] = res
            known[row] = True
    return [results[row] for row in rows]

