"""Values kept across scheduling cycles, keyed on the node table: the one place that decides
when such a value is still valid.

A plugin (or a research policy) that derives something from the node table and wants to keep
it for the next cycles holds one of these and asks it for the value, giving the table and a
function that builds the value; it never keys anything on the table itself.

- ``NodeValue``: one value derived from the table's Node objects (labels, images, taints,
  allocatable), e.g. an index of the nodes' images. Valid while the table is the same one and
  its ``node_version`` is unchanged.
- ``NodeMemo``: such values per key (a pod shape, a selector), least recently used dropped
  past a bound; ``by_identity`` keys one on an object's identity (the entry holds the object,
  so its id is never reused while the entry lives).
- ``RowMemo``: int64 values per table row for recent keys (a request vector, a selector's
  matching-pod counts). A row's value is valid while the row's ``row_version`` is unchanged
  (``NodeTable`` moves it on every change of the row's node or pods) and the table is the same
  one with the same resource rows; only the stale rows are computed again.
- ``NodeStamp``: for a value kept within one cycle (in its CycleState), which table it was
  made for.
- ``RowState``: one object of per-row state of the plugin's own shape (lists, several
  arrays), brought up to date for the rows that changed; ``RowVersions``, the bookkeeping
  under both, for state that is filled lazily (which rows moved since they were computed).

What makes them valid, in one place:

- *Table identity* is ``NodeTable.table_id``, from a process-wide counter: a table built where
  an old one was freed never has its id (``id()`` would).
- *An adjusted table* (``framework.adjusted.AdjustedTable``: the table with the requested and
  pod-count columns of some rows changed, for the preemption dry run and nominated pods)
  shares the real table's version counters but not its pod side. Values derived from Node
  objects are the same for both, so an adjusted table is served (and builds, from the real
  table) the real table's node values; per-row values are derived from the pod side, so an
  adjusted table is never served the real table's and never stores into them: they are
  computed for it on every call.
- *Lifetime*: each holder keeps the values of the last table it was asked about (a new table
  replaces them), bounded per key as its constructor says.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import numpy as np

from kubesched.framework.node_table import NodeTable

V = TypeVar("V")


class NodeValue(Generic[V]):
    """One value derived from a table's Node objects, rebuilt when they change."""

    __slots__ = ("_deps", "_node_version", "_table_id", "_value")

    def __init__(self) -> None:
        self._table_id = -1
        self._node_version = -1
        self._deps: tuple[object, ...] = ()
        self._value: V | None = None

    def get(self, table: NodeTable, build: Callable[[NodeTable], V],
            deps: tuple[object, ...] = ()) -> V:
        """The value for ``table``, built by ``build(table)`` (the real table for an adjusted
        one) when the table, its nodes or ``deps`` (what else the value depends on, compared
        with ``==``, identity first; held until the next build) changed since the last call."""
        # an AdjustedTable forwards table_id and node_version to its real table
        if (self._table_id != table.table_id or self._node_version != table.node_version
                or self._deps != deps):
            self._value = build(table.base)
            self._table_id = table.table_id
            self._node_version = table.node_version
            self._deps = deps
        return self._value  # type: ignore[return-value]


class NodeStamp:
    """Which table (this very object: a real table and an adjusted one are told apart) and
    which version of its nodes a value of one cycle was made for."""

    __slots__ = ("node_version", "table")

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.node_version = table.node_version

    def matches(self, table: NodeTable) -> bool:
        return self.table is table and self.node_version == table.node_version


class NodeMemo(Generic[V]):
    """Values derived from a table's Node objects (and, optionally, from other objects:
    ``deps``), per key; all dropped when the table, its nodes or ``deps`` change, the least
    recently used past ``max_entries``."""

    __slots__ = ("_data", "_deps", "_node_version", "_table_id", "max_entries")

    def __init__(self, max_entries: int = 256) -> None:
        self._table_id = -1
        self._node_version = -1
        self._deps: tuple[object, ...] = ()
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self.max_entries = max_entries

    def data(self, table: NodeTable, deps: tuple[object, ...] = ()) -> dict[Hashable, Any]:
        """The entries for ``table``'s nodes and ``deps`` (compared with ``==``, identity
        first; the memo holds them), to read and fill directly: empty when anything they
        depend on changed, or when they outgrew ``max_entries``."""
        data = self._data
        if (self._table_id != table.table_id or self._node_version != table.node_version
                or self._deps != deps or len(data) > self.max_entries):
            data = self._data = OrderedDict()
            self._table_id = table.table_id
            self._node_version = table.node_version
            self._deps = deps
        return data

    def get(self, table: NodeTable, key: Hashable, build: Callable[[NodeTable], V]) -> V:
        """The value of ``key``, ``build(table)`` (the real table for an adjusted one) when
        not kept."""
        data = self.data(table)
        if key in data:
            data.move_to_end(key)  # type: ignore[attr-defined]
            value: V = data[key]
            return value
        value = data[key] = build(table.base)
        if len(data) > self.max_entries:
            data.popitem(last=False)  # type: ignore[call-arg]
        return value

    def by_identity(self, table: NodeTable, obj: object, build: Callable[[NodeTable], V]
                    ) -> V:
        """As ``get``, keyed on ``obj``'s identity (for objects that are costly to hash);
        the entry holds ``obj``, so no other object has its id while it is kept."""
        data = self.data(table)
        key = (_IDENTITY, id(obj))
        hit = data.get(key)
        if hit is not None and hit[0] is obj:
            data.move_to_end(key)  # type: ignore[attr-defined]
            value: V = hit[1]
            return value
        value = build(table.base)
        data[key] = (obj, value)
        if len(data) > self.max_entries:
            data.popitem(last=False)  # type: ignore[call-arg]
        return value


_IDENTITY = object()  # tags identity keys, so they never equal a caller's own key


class IdentityMemo(Generic[V]):
    """Values derived from an object that is costly to hash and never changed in place (a
    compiled affinity, say), by the object's identity; the entry holds the object, so no
    other object has its id while it is kept. All dropped past ``max_entries``."""

    __slots__ = ("_data", "max_entries")

    def __init__(self, max_entries: int = 4096) -> None:
        self._data: dict[int, tuple[object, V]] = {}
        self.max_entries = max_entries

    def get(self, obj: object) -> V | None:
        hit = self._data.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        return None

    def put(self, obj: object, value: V) -> V:
        data = self._data
        if len(data) >= self.max_entries:
            data.clear()
        data[id(obj)] = (obj, value)
        return value


class RowVersions:
    """The row versions of a table that per-row values were computed at: a row is stale
    when its ``row_version`` moved since, or after ``forget``."""

    __slots__ = ("seen", "synced")

    def __init__(self, table: NodeTable) -> None:
        self.seen = np.full(table.size, -1, dtype=np.int64)  # versions are >= 0
        self.synced = -1  # the table's rows_version when every row was last marked

    def stale(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        """The rows of ``idx`` whose values must be computed again."""
        out: np.ndarray = idx[table.row_version[idx] != self.seen[idx]]
        return out

    def stale_rows(self, table: NodeTable) -> list[int]:
        """Every row whose value must be computed again, for values kept for every row
        (``mark_all``; after a ``forget``, every row). Do not modify."""
        if self.synced == table.rows_version:
            return []
        return table.rows_changed_since(self.synced)

    def mark(self, table: NodeTable, rows: np.ndarray | list[int]) -> None:
        """``rows`` were computed at the table's current versions."""
        self.seen[rows] = table.row_version[rows]

    def mark_all(self, table: NodeTable) -> None:
        self.seen[:] = table.row_version
        self.synced = table.rows_version

    def forget(self, rows: np.ndarray | list[int]) -> None:
        """``rows`` are stale whatever their versions (something the table does not track
        changed, e.g. a Reserve's device choice)."""
        self.seen[rows] = -1
        self.synced = -1


S = TypeVar("S")


class RowState(Generic[S]):
    """One object of per-row state over a table's rows (a plugin's own lists or arrays,
    e.g. each row's pods' terms), built for a new table and brought up to date for the
    rows that changed since."""

    __slots__ = ("_state", "_table_id", "_versions")

    def __init__(self) -> None:
        self._table_id = -1
        self._state: S | None = None
        self._versions: RowVersions | None = None

    def get(self, table: NodeTable, build: Callable[[NodeTable], S],
            refresh: Callable[[S, list[int]], None]) -> S:
        """The state for ``table``: ``build(table)`` for a new table (and, not kept, for
        an adjusted one), else the kept one after ``refresh(state, rows)`` of the rows that
        changed."""
        if table.base is not table:
            return build(table)
        versions = self._versions
        if self._table_id != table.table_id or versions is None:
            state = self._state = build(table)
            versions = self._versions = RowVersions(table)
            versions.mark_all(table)
            self._table_id = table.table_id
            return state
        kept = self._state
        assert kept is not None
        stale = versions.stale_rows(table)
        if stale:
            refresh(kept, stale)
            versions.mark_all(table)
        return kept


class _RowEntry:
    __slots__ = ("values", "versions")

    def __init__(self, values: np.ndarray, versions: RowVersions) -> None:
        self.values = values
        self.versions = versions


# one row -> its value
RowFn = Callable[[int], int]
# (table, rows) -> the values of those rows, elementwise (a row's value depends on that row)
RowsFn = Callable[[NodeTable, np.ndarray], np.ndarray]

# Up to this many stale rows are computed one by one with ``one_row`` when given: between two
# cycles usually one or two rows changed, and a numpy pass costs about 30 µs whatever its size.
_PER_ROW = 4


class RowMemo:
    """Per-row int64 values over a table's rows for the ``max_keys`` most recently used keys;
    a row is computed again when it changed (``RowVersions``), the others read back."""

    __slots__ = ("_entries", "_resources", "_table_id", "max_keys")

    def __init__(self, max_keys: int = 16) -> None:
        self._entries: OrderedDict[Hashable, _RowEntry] = OrderedDict()
        self._table_id = -1
        self._resources = -1
        self.max_keys = max_keys

    def _entry(self, table: NodeTable, key: Hashable) -> tuple[_RowEntry, bool]:
        """(the entry of ``key``, whether it is new)."""
        entries = self._entries
        if self._table_id != table.table_id or self._resources != len(table.resources):
            entries.clear()
            self._table_id = table.table_id
            self._resources = len(table.resources)
        e = entries.get(key)
        if e is not None:
            entries.move_to_end(key)
            return e, False
        e = entries[key] = _RowEntry(np.zeros(table.size, dtype=np.int64), RowVersions(table))
        if len(entries) > self.max_keys:
            entries.popitem(last=False)
        return e, True

    def rows(self, table: NodeTable, key: Hashable, idx: np.ndarray, compute: RowsFn,
             one_row: RowFn | None = None) -> np.ndarray:
        """The values of rows ``idx`` for ``key``: ``compute(table, rows)`` for the stale
        ones (or ``one_row(row)`` for a few, which must agree with ``compute``). Rows are
        computed when first asked for, so a key that reaches few rows does not pay for the
        whole table; a new key's rows all by ``compute``."""
        if table.base is not table:
            return compute(table, idx)
        e, new = self._entry(table, key)
        stale = e.versions.stale(table, idx)
        if len(stale):
            if one_row is not None and len(stale) <= _PER_ROW and not new:
                for r in stale.tolist():
                    e.values[r] = one_row(r)
            else:
                e.values[stale] = compute(table, stale)
            e.versions.mark(table, stale)
        out: np.ndarray = e.values[idx]
        return out

    def all_rows(self, table: NodeTable, key: Hashable, fn: RowFn,
                 build: Callable[[], np.ndarray] | None = None) -> np.ndarray:
        """The values of every row for ``key`` (do not modify): ``build()`` (all rows at
        once; by default ``fn`` on each) for a new key, then ``fn(row)`` for stale rows."""
        if table.base is not table:
            return build() if build is not None else _each(fn, table.size)
        e, new = self._entry(table, key)
        if new:
            e.values = build() if build is not None else _each(fn, table.size)
            e.versions.mark_all(table)
            return e.values
        stale = e.versions.stale_rows(table)
        if stale:
            values = e.values
            for r in stale:
                values[r] = fn(r)
            e.versions.mark_all(table)
        return e.values

    def __len__(self) -> int:
        return len(self._entries)


def _each(fn: RowFn, n: int) -> np.ndarray:
    return np.fromiter((fn(r) for r in range(n)), dtype=np.int64, count=n)
