"""The columnar node table: one row per node, in snapshot order, as numpy arrays.

Batch plugins read these columns for all candidate nodes in one call instead of looping over
NodeInfo objects. Rows are refreshed from NodeInfos as they change (see Snapshot.update).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from kubesched.api.selectors import FactorizedColumn
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Taint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.request_vectors import RequestVectors

BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
_NONE = np.array(None, dtype=object)  # None as an array, for elementwise comparisons
_table_ids = itertools.count(1)


class NodeTable:
    def __init__(self, node_infos: Sequence[NodeInfo]) -> None:
        # (table_id, node_version) identifies the node-side contents of a table; table_id is
        # from a process-wide counter, so no other table ever has it.
        self.names: list[str] = [ni.name for ni in node_infos]
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        n = len(self.names)
        self.size = n
        self.resources: list[str] = []
        self.res_index: dict[str, int] = {}
        self.alloc = np.zeros((0, n), dtype=np.int64)
        self.requested = np.zeros((0, n), dtype=np.int64)
        self.non_zero_cpu = np.zeros(n, dtype=np.int64)
        self.non_zero_memory = np.zeros(n, dtype=np.int64)
        self.pod_count = np.zeros(n, dtype=np.int64)
        # The NodeInfo generation each row's pod columns were last refreshed at: rows with
        # pod_generation > g are the nodes whose pods changed since generation g.
        self.pod_generation = np.zeros(n, dtype=np.int64)
        # Bumped from a table-wide counter (rows_version) on every refresh of a row's node or
        # pod columns, whatever the NodeInfo's generation (a NodeInfo changed outside a Cache
        # keeps its own): per-row values derived from the row are valid while it is unchanged
        # (framework.table_cache).
        self.row_version = np.zeros(n, dtype=np.int64)
        # the last row version given out: no row changed while it is unchanged
        self.rows_version = 0
        # rows_changed_since's answers at rows_version _changed_at
        self._changed: dict[int, list[int]] = {}
        self._changed_at = 0
        self.allowed_pods = np.zeros(n, dtype=np.int64)
        self.unschedulable = np.zeros(n, dtype=bool)
        # Nodes share few distinct taint lists: plugins evaluate each list once.
        self.taint_group = np.zeros(n, dtype=np.int32)
        self.taint_sets: list[tuple[Taint, ...]] = []
        self._taint_set_ids: dict[tuple[Taint, ...], int] = {}
        self._label_columns: dict[str, np.ndarray] = {}
        self._label_factors: dict[str, FactorizedColumn] = {}
        self.request_vectors = RequestVectors(self)
        # Bumped whenever a node's own columns change: caches of per-node data derived from
        # Node objects (labels, images) are valid while (table, node_version) is unchanged.
        self.node_version = 0
        self.table_id = next(_table_ids)
        self._node_infos = node_infos
        names = set(BASE_RESOURCES)
        for ni in node_infos:
            names.update(ni.allocatable)
            names.update(ni.requested)
        names.discard(PODS)
        for r in [*BASE_RESOURCES, *sorted(names - set(BASE_RESOURCES))]:
            self._add_resource_row(r)
        for i, ni in enumerate(node_infos):
            self.refresh_node(i, ni)
            self.refresh_pods(i, ni)

    @classmethod
    def grown(cls, old: NodeTable, node_infos: Sequence[NodeInfo]) -> NodeTable:
        """The table of ``node_infos``, whose first rows are ``old``'s nodes in its order:
        their rows copied as they are (the caller refreshes those that changed), only the
        new ones computed. A new table, so every cache keyed by table starts afresh."""
        t = cls.__new__(cls)
        n0, n = old.size, len(node_infos)
        more = n - n0
        t.names = old.names + [ni.name for ni in node_infos[n0:]]
        t.index = dict(old.index)
        t.index.update((t.names[i], i) for i in range(n0, n))
        t.size = n
        t.resources = list(old.resources)
        t.res_index = dict(old.res_index)

        def wider(a: np.ndarray) -> np.ndarray:
            pad = np.zeros((*a.shape[:-1], more), dtype=a.dtype)
            return np.concatenate([a, pad], axis=-1)

        t.alloc = wider(old.alloc)
        t.requested = wider(old.requested)
        t.non_zero_cpu = wider(old.non_zero_cpu)
        t.non_zero_memory = wider(old.non_zero_memory)
        t.pod_count = wider(old.pod_count)
        t.pod_generation = wider(old.pod_generation)
        t.row_version = wider(old.row_version)
        t.rows_version = old.rows_version
        t._changed = {}
        t._changed_at = 0
        t.allowed_pods = wider(old.allowed_pods)
        t.unschedulable = wider(old.unschedulable)
        t.taint_group = wider(old.taint_group)
        t.taint_sets = list(old.taint_sets)
        t._taint_set_ids = dict(old._taint_set_ids)
        t._label_columns = {}
        t._label_factors = {}
        t.request_vectors = RequestVectors(t)
        t.node_version = old.node_version
        t.table_id = next(_table_ids)
        t._node_infos = node_infos
        for i in range(n0, n):
            t.refresh_node(i, node_infos[i])
            t.refresh_pods(i, node_infos[i])
        return t

    @property
    def base(self) -> NodeTable:
        """The table whose rows these are: itself (an ``AdjustedTable``'s is the real one, whose
        version counters it shares; ``framework.table_cache`` tells the two apart by this)."""
        return self

    # ------------------------------------------------------------------ resources

    def _add_resource_row(self, name: str) -> int:
        row = len(self.resources)
        self.resources.append(name)
        self.res_index[name] = row
        alloc = np.array([ni.allocatable.get(name, 0) for ni in self._node_infos], dtype=np.int64)
        req = np.array([ni.requested.get(name, 0) for ni in self._node_infos], dtype=np.int64)
        self.alloc = np.vstack([self.alloc, alloc.reshape(1, -1)])
        self.requested = np.vstack([self.requested, req.reshape(1, -1)])
        self.request_vectors.reset()
        return row

    def resource_row(self, name: str) -> int:
        """Row of a resource, adding a column for a resource seen for the first time."""
        row = self.res_index.get(name)
        return row if row is not None else self._add_resource_row(name)

    # ------------------------------------------------------------------ rows

    def refresh_node(self, i: int, ni: NodeInfo) -> None:
        """Static node columns: allocatable, unschedulable, taints, labels."""
        node = ni.node
        alloc = ni.allocatable
        for r in alloc:
            if r != PODS and r not in self.res_index:
                self._add_resource_row(r)
        for r, row in self.res_index.items():
            self.alloc[row, i] = alloc.get(r, 0)
        self.allowed_pods[i] = alloc.get(PODS, 0)
        self.unschedulable[i] = bool(node and node.spec.unschedulable)
        taints = node.spec.taints if node else ()
        gid = self._taint_set_ids.get(taints)
        if gid is None:
            gid = self._taint_set_ids[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        self.taint_group[i] = gid
        self._label_columns.clear()
        self._label_factors.clear()
        self.node_version += 1
        # values derived from a row may read its node too (framework.table_cache.RowMemo)
        self.rows_version += 1
        self.row_version[i] = self.rows_version

    def refresh_pods(self, i: int, ni: NodeInfo) -> None:
        """Columns that change as pods are added to or removed from a node."""
        req = ni.requested
        for r in req:
            if r not in self.res_index and r != PODS:
                self._add_resource_row(r)
        for r, row in self.res_index.items():
            self.requested[row, i] = req.get(r, 0)
        self.non_zero_cpu[i] = ni.non_zero_cpu
        self.non_zero_memory[i] = ni.non_zero_memory
        self.pod_count[i] = len(ni.pods)
        self.pod_generation[i] = ni.generation
        self.rows_version += 1
        self.row_version[i] = self.rows_version

    def rows_changed_since(self, version: int) -> list[int]:
        """The rows refreshed after row version ``version`` (do not modify). Every value kept
        across cycles asks with the version it was brought up to date at, mostly the same
        one: the answer is kept until the next refresh."""
        if self._changed_at != self.rows_version:
            self._changed = {}
            self._changed_at = self.rows_version
        rows = self._changed.get(version)
        if rows is None:
            rows = self._changed[version] = np.flatnonzero(self.row_version > version).tolist()
        return rows

    # ------------------------------------------------------------------ labels

    def label_column(self, key: str) -> np.ndarray:
        """Object array of each node's value for label ``key`` (None where absent)."""
        col = self._label_columns.get(key)
        if col is None:
            col = np.array([ni.node.labels.get(key) if ni.node else None
                            for ni in self._node_infos], dtype=object)
            self._label_columns[key] = col
        return col

    def label_factors(self, key: str) -> FactorizedColumn:
        """``label_column(key)`` factorized (distinct values -> codes), kept with the column."""
        f = self._label_factors.get(key)
        if f is None:
            f = self._label_factors[key] = FactorizedColumn(self.label_column(key))
        return f

    def has_label(self, key: str) -> np.ndarray:
        present: np.ndarray = np.not_equal(self.label_column(key), _NONE)
        return present
