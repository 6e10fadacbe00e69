"""Pods' requests as int64 vectors over a node table's resources — what ``NodeInfo`` adds
to ``requested`` for a pod, in the table's resource order — for evaluating pods added to or
removed from nodes as column changes (``framework/adjusted.py``, the preemption dry run).

Every scheduling cycle that meets nominated pods sums the requests of all of them, so the
vectors are kept as the rows of one matrix, found by pod UID (checked against the pod's
``requests`` object, which is built once per pod version); summing is then one gather.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.types import PODS, Pod

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable


class RequestVectors:
    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.epoch = 0
        self.reset()

    def reset(self) -> None:
        """Forget every vector (the table gained a resource: they are too short)."""
        self.epoch += 1
        self._by_contents: dict[tuple[tuple[str, int], ...], np.ndarray] = {}
        self._by_uid: dict[str, tuple[dict[str, int], int]] = {}
        self._matrix = np.zeros((64, len(self.table.resources)), dtype=np.int64)
        self._used = 0

    def _row(self, pod: Pod) -> int:
        req = pod.requests
        hit = self._by_uid.get(pod.uid)
        if hit is not None and hit[0] is req:
            return hit[1]
        key = tuple(req.items())
        v = self._by_contents.get(key)
        if v is None:
            cols = [(self.table.resource_row(r), q) for r, q in key if r != PODS]  # may reset
            v = np.zeros(len(self.table.resources), dtype=np.int64)
            for col, q in cols:
                v[col] += q
            self._by_contents[key] = v
        if self._used > 4 * self.table.size + 4096:  # pods come and go: stay bounded
            self.reset()
            self._by_contents[key] = v
        if self._used == len(self._matrix):
            self._matrix = np.vstack([self._matrix, np.zeros_like(self._matrix)])
        row = self._used
        self._matrix[row] = v
        self._used += 1
        self._by_uid[pod.uid] = (req, row)
        return row

    def vector(self, pod: Pod) -> np.ndarray:
        """``pod``'s vector, as wide as the table's resources now. Read-only."""
        row = self._row(pod)
        vec: np.ndarray = self._matrix[row]
        return vec

    def totals(self, groups: Sequence[Sequence[Pod]]) -> np.ndarray:
        """[resources, len(groups)]: each group of pods' summed requests."""
        epoch = self.epoch
        rows = self._rows(groups)
        if self.epoch != epoch:  # a pod added a resource: rows made before are gone
            rows = self._rows(groups)
        out = np.zeros((len(groups), len(self.table.resources)), dtype=np.int64)
        if rows:
            sizes = np.array([len(g) for g in groups], dtype=np.int64)
            some = sizes > 0
            starts = np.cumsum(sizes) - sizes
            out[some] = np.add.reduceat(self._matrix[rows], starts[some], axis=0)
        return out.T

    def _rows(self, groups: Sequence[Sequence[Pod]]) -> list[int]:
        by_uid, rows = self._by_uid.get, []
        for g in groups:
            for p in g:  # ``_row``'s first lines inlined: this runs over every nominated pod
                hit = by_uid(p.metadata.uid)
                rows.append(hit[1] if hit is not None and hit[0] is p.requests
                            else self._row(p))
        return rows
