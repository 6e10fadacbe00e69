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

from operator import itemgetter
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
    fit = np.ones(n, dtype=bool)
    results: list[list[AllocationResult] | None] = []
    at = idx  # where each row's results are in ``results``
    if allocator is not None:
        errors: dict[int, str] = {}
        fit, results, at = _allocate_rows(snapshot, idx, allocator, to_allocate, memo,
                                            errors)
        for k, msg in errors.items():
            err = np.zeros(n, dtype=bool)
            err[k] = True
            out.fail(err, Code.ERROR, (msg,))
        out.fail(~fit, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE)
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
    allocations: dict[str, list[AllocationResult]] = {}
    if allocator is not None:
        names = snapshot.table.names
        ok = fit & ~unavailable
        passing, where = idx[ok].tolist(), at[ok].tolist()
        if len(passing) == 1:
            allocations = {names[passing[0]]: results[where[0]]}  # fit: not None
        elif passing:  # (itemgetter: the lookups without a Python loop)
            allocations = dict(zip(itemgetter(*passing)(names), itemgetter(*where)(results),
                                   strict=True))
    return out, unavailable_claims, allocations


def _allocate_rows(snapshot: Snapshot, idx: np.ndarray, allocator: IndexedAllocator,
                   claims: list[ResourceClaim], memo: AllocationMemo, errors: dict[int, str],
                   ) -> tuple[np.ndarray, list[list[AllocationResult] | None], np.ndarray]:
    """Whether the claims fit each row of ``idx`` (errors: False, their messages in
    ``errors`` by position), and where to read each one's results: a list and the index
    into it of every position (the memo's rows, or the positions themselves)."""
    infos = snapshot.node_infos
    want = len(claims)

    def ask(k: int, row: int) -> list[AllocationResult] | None:
        try:
            return allocator.allocate(infos[row].node, claims)
        except AllocationError as e:
            errors[k] = str(e)
            return None

    shape = memo.shape(allocator, claims, snapshot.table)
    if shape is None:
        results = [ask(k, row) for k, row in enumerate(idx.tolist())]
        fit = np.array([r is not None and len(r) == want for r in results], dtype=bool)
        fit[list(errors)] = False
        return fit.reshape(len(idx)), results, np.arange(len(idx))
    known = shape.known
    for k in np.flatnonzero(~known[idx]).tolist():
        row = int(idx[k])
        res = ask(k, row)
        if k not in errors:
            shape.results[row] = res
            shape.fit[row] = res is not None and len(res) == want
            known[row] = True
    fit = shape.fit[idx]
    if errors:
        fit[list(errors)] = False
    return fit, shape.results, idx
