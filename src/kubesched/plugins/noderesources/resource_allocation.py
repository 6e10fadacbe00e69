"""The resource-allocation scorer shared by NodeResourcesFit's strategies and
NodeResourcesBalancedAllocation (upstream ``noderesources/resource_allocation.go``, v1.35).

For every configured resource the scorer needs the node's allocatable and the node's requested
amount *including the incoming pod*:

* cpu / memory: ``NonZeroRequested`` (100m / 200Mi per container missing a request) unless
  ``use_requested`` (BalancedAllocation), then the plain ``Requested``;
* ephemeral-storage: ``Requested``;
* a scalar resource (extended, hugepages, ...) the pod does not request: ``(0, 0)``, i.e. left
  out; a scalar the pod requests: the node's allocatable and ``Requested`` — or, where the
  node's allocatable has none of it and a DeviceClass backs it (DRAExtendedResource, a
  ``DraScoreState`` given), the class's devices on the node and those allocated
  (``dra_extended.py``);
* any other name: ``(0, 0)``.

A resource whose allocatable is 0 is left out of the score (its slots stay 0). The per-node form
works on one NodeInfo with Python ints; the batch form on NodeTable columns with numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, Node, Pod
from kubesched.config.plugin_args import ResourceSpec
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins.helper import is_scalar_resource_name

if TYPE_CHECKING:
    from kubesched.plugins.noderesources.dra_extended import DraScoreState

# requested, allocatable (one node) -> score
ScorerPy = Callable[[Sequence[int], Sequence[int]], int]
# requested, allocatable ([resources, nodes] int64) -> scores [nodes] int64
ScorerNp = Callable[[np.ndarray, np.ndarray], np.ndarray]


class ResourceAllocationScorer:
    """``resourceAllocationScorer``: resources, ``use_requested`` and the strategy's scorer."""

    def __init__(self, name: str, resources: Sequence[ResourceSpec], use_requested: bool,
                 scorer_py: ScorerPy, scorer_np: ScorerNp) -> None:
        self.strategy_name = name
        self.resources = tuple(resources)
        self.use_requested = use_requested
        self.scorer_py = scorer_py
        self.scorer_np = scorer_np
        # kind per resource: 0 cpu, 1 memory, 2 ephemeral-storage, 3 scalar, 4 other (ignored)
        kinds = []
        for spec in self.resources:
            if spec.name == CPU:
                kinds.append(0)
            elif spec.name == MEMORY:
                kinds.append(1)
            elif spec.name == EPHEMERAL_STORAGE:
                kinds.append(2)
            elif is_scalar_resource_name(spec.name):
                kinds.append(3)
            else:
                kinds.append(4)
        self._kinds = tuple(kinds)

    # ------------------------------------------------------------------ the pod

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """``calculatePodResourceRequestList``: the pod's request per configured resource;
        cpu / memory with the non-zero defaults unless ``use_requested``."""
        reqs = pod.requests
        out = []
        for spec in self.resources:
            if not self.use_requested and spec.name == CPU:
                out.append(pod.non_zero_cpu)
            elif not self.use_requested and spec.name == MEMORY:
                out.append(pod.non_zero_memory)
            else:
                out.append(reqs.get(spec.name, 0))
        return tuple(out)

    # ------------------------------------------------------------------ per node

    def node_values(self, ni: NodeInfo, pod_requests: Sequence[int],
                    dra: DraScoreState | None = None) -> tuple[list[int], list[int]]:
        """(requested incl. the pod, allocatable) per resource; zeros where left out."""
        alloc_map = ni.allocatable
        req_map = ni.requested
        requested = [0] * len(self.resources)
        allocatable = [0] * len(self.resources)
        for i, (spec, kind, preq) in enumerate(zip(self.resources, self._kinds, pod_requests,
                                                   strict=True)):
            name = spec.name
            if kind == 0:
                used = req_map.get(CPU, 0) if self.use_requested else ni.non_zero_cpu
            elif kind == 1:
                used = req_map.get(MEMORY, 0) if self.use_requested else ni.non_zero_memory
            elif kind == 2:
                used = req_map.get(EPHEMERAL_STORAGE, 0)
            elif kind == 3 and preq != 0:
                backed = _dra_backed(dra, ni.node, name, alloc_map.get(name, 0), preq)
                if backed is not None:
                    requested[i], allocatable[i] = backed
                    continue
                if name not in alloc_map:
                    continue
                used = req_map.get(name, 0)
            else:
                continue
            alloc = alloc_map.get(name, 0)
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = used + preq
        return requested, allocatable

    def score_node(self, ni: NodeInfo, pod_requests: Sequence[int],
                   dra: DraScoreState | None = None) -> int:
        requested, allocatable = self.node_values(ni, pod_requests, dra)
        return int(self.scorer_py(requested, allocatable))

    # ------------------------------------------------------------------ batch

    def table_values(self, table: NodeTable, idx: np.ndarray, pod_requests: Sequence[int],
                     dra: DraScoreState | None = None,
                     nodes: Sequence[Node | None] = ()) -> tuple[np.ndarray, np.ndarray]:
        """``node_values`` for the table rows ``idx``: two [resources, nodes] int64 arrays.
        With ``dra``, ``nodes`` are the rows' Node objects (DRA-backed resources are
        counted node by node, only for the pods that request one)."""
        n = len(idx)
        r = len(self.resources)
        requested = np.zeros((r, n), dtype=np.int64)
        allocatable = np.zeros((r, n), dtype=np.int64)
        res_index = table.res_index
        for i, (spec, kind, preq) in enumerate(zip(self.resources, self._kinds, pod_requests,
                                                   strict=True)):
            row = res_index.get(spec.name)
            if dra is not None and kind == 3 and preq != 0:
                alloc_row = (table.alloc[row, idx] if row is not None
                             else np.zeros(n, dtype=np.int64))
                for j in np.flatnonzero(alloc_row == 0).tolist():
                    backed = _dra_backed(dra, nodes[j], spec.name, 0, preq)
                    if backed is not None:
                        requested[i, j], allocatable[i, j] = backed
            if row is None or kind == 4 or (kind == 3 and preq == 0):
                continue
            if kind == 0 and not self.use_requested:
                used = table.non_zero_cpu[idx]
            elif kind == 1 and not self.use_requested:
                used = table.non_zero_memory[idx]
            else:
                used = table.requested[row, idx]
            alloc = table.alloc[row, idx]
            present = alloc != 0
            # DRA-backed entries (set above where the allocatable is 0) stay
            allocatable[i] = np.where(present, alloc, allocatable[i])
            requested[i] = np.where(present, used + preq, requested[i])
        return requested, allocatable

    def score_table(self, table: NodeTable, idx: np.ndarray, pod_requests: Sequence[int],
                    dra: DraScoreState | None = None,
                    nodes: Sequence[Node | None] = ()) -> np.ndarray:
        requested, allocatable = self.table_values(table, idx, pod_requests, dra, nodes)
        return np.asarray(self.scorer_np(requested, allocatable), dtype=np.int64)


def _dra_backed(dra: DraScoreState | None, node: Node | None, name: str, alloc: int,
                preq: int) -> tuple[int, int] | None:
    """(requested incl. the pod, allocatable) of a requested extended resource the node's
    allocatable lacks (``alloc`` 0) when a DeviceClass backs it with devices on the node;
    None otherwise (the device plugin's amount decides)."""
    if dra is None or alloc != 0:
        return None
    capacity, allocated = dra.totals(node, name)
    if capacity <= 0:
        return None
    return allocated + preq, capacity


def is_best_effort(pod_requests: Sequence[int]) -> bool:
    """``isBestEffortPod``: no request for any configured resource."""
    return all(r == 0 for r in pod_requests)


