"""The cache service keyed on the node table (``framework.table_cache``): what invalidates a
kept value (a node change, a row change, a new table, a table at a reused address), what an
adjusted table is served, and the bounds."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.framework.adjusted import AdjustedSnapshot
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.table_cache import (
    IdentityMemo,
    NodeMemo,
    NodeStamp,
    NodeValue,
    RowMemo,
    RowState,
)
from kubesched.testing import snapshot_from_nodes


def node(name: str, zone: str = "z1") -> Node:
    return parse_node({"metadata": {"name": name, "labels": {"zone": zone}},
                       "status": {"capacity": {"cpu": "4", "memory": "4Gi", "pods": "10"}}})


def pod(name: str, node_name: str, cpu: str = "1") -> Pod:
    return parse_pod({"metadata": {"name": name, "uid": name},
                      "spec": {"nodeName": node_name, "containers": [
                          {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})


def cluster(*names: str) -> tuple[Cache, Snapshot]:
    cache = Cache()
    for n in names:
        cache.add_node(node(n))
    snap = Snapshot()
    cache.update_snapshot(snap)
    return cache, snap


class Builds:
    """A build function that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, table: NodeTable) -> list[str | None]:
        self.calls += 1
        return list(table.label_column("zone"))


# ---------------------------------------------------------------- node values


def test_node_value_is_kept_until_a_node_changes() -> None:
    cache, snap = cluster("a", "b")
    kept: NodeValue[list[str | None]] = NodeValue()
    build = Builds()
    assert kept.get(snap.table, build) == ["z1", "z1"]
    cache.add_pod(pod("p", "a"))  # pods are not the node side
    cache.update_snapshot(snap)
    assert kept.get(snap.table, build) == ["z1", "z1"]
    assert build.calls == 1
    cache.update_node(node("b"), node("b", zone="z2"))
    cache.update_snapshot(snap)
    assert kept.get(snap.table, build) == ["z1", "z2"]
    assert build.calls == 2


def test_node_value_of_a_new_table_is_built_again() -> None:
    cache, snap = cluster("a")
    kept: NodeValue[list[str | None]] = NodeValue()
    build = Builds()
    kept.get(snap.table, build)
    cache.add_node(node("b", zone="z2"))
    cache.update_snapshot(snap)
    assert kept.get(snap.table, build) == ["z1", "z2"]
    assert build.calls == 2


def _table_at_a_freed_address(
        infos: list[NodeInfo], build: Builds
) -> tuple[NodeTable, NodeValue[list[str | None]], list[Any]] | None:
    """Many tables, each with a value kept for it, every other one freed (the rest keep the
    allocator's pools in use): a new table soon takes a freed one's memory. The new table,
    the value kept for the freed one, and what must stay alive meanwhile; None when no new
    table landed on a freed address (the allocator's choice: the caller tries again)."""
    kept: dict[int, NodeValue[list[str | None]]] = {}
    tables = [NodeTable(infos) for _ in range(400)]
    alive: list[Any] = tables[1::2]
    for t in tables[::2]:
        kept[id(t)] = NodeValue()
        kept[id(t)].get(t, build)
    del t, tables
    gc.collect()
    while len(alive) < 5200:
        other = NodeTable(infos)
        if id(other) in kept:
            return other, kept[id(other)], alive
        alive.append(other)
    return None


def test_a_table_at_a_freed_tables_address_is_a_new_table() -> None:
    infos = snapshot_from_nodes([node("a")], []).node_infos
    build = Builds()
    for _ in range(5):
        found = _table_at_a_freed_address(infos, build)
        if found is not None:
            break
    else:
        raise AssertionError("no table was built at a freed table's address in 5 tries")
    other, value, alive = found
    assert other.node_version == 1  # the same versions as the freed table had
    calls = build.calls
    value.get(other, build)
    assert build.calls == calls + 1
    assert alive


def test_node_value_depends_on_deps() -> None:
    _, snap = cluster("a")
    kept: NodeValue[list[str | None]] = NodeValue()
    build = Builds()
    a, b = object(), object()
    kept.get(snap.table, build, (a,))
    kept.get(snap.table, build, (a,))
    assert build.calls == 1
    kept.get(snap.table, build, (b,))
    assert build.calls == 2


def test_node_memo_drops_the_least_recently_used_past_its_bound() -> None:
    _, snap = cluster("a")
    memo: NodeMemo[int] = NodeMemo(max_entries=2)
    built: list[str] = []

    def build(key: str) -> int:
        built.append(key)
        return len(built)

    for key in ("x", "y", "x", "z", "x", "y"):
        memo.get(snap.table, key, lambda _t, k=key: build(k))
    # z pushed out y (x was used since); y built again
    assert built == ["x", "y", "z", "y"]


def test_node_memo_by_identity_tells_equal_objects_apart() -> None:
    _, snap = cluster("a")
    memo: NodeMemo[int] = NodeMemo()
    one, two = ("t",), tuple(["t"])  # equal, not the same object
    assert one == two and one is not two
    assert memo.by_identity(snap.table, one, lambda _t: 1) == 1
    assert memo.by_identity(snap.table, two, lambda _t: 2) == 2
    assert memo.by_identity(snap.table, one, lambda _t: 3) == 1


def test_node_stamp_tells_an_adjusted_table_from_the_real_one() -> None:
    cache, snap = cluster("a")
    stamp = NodeStamp(snap.table)
    assert stamp.matches(snap.table)
    assert not stamp.matches(AdjustedSnapshot(snap).table)  # type: ignore[arg-type]
    cache.update_node(node("a"), node("a", zone="z2"))
    cache.update_snapshot(snap)
    assert not stamp.matches(snap.table)


# ---------------------------------------------------------------- row values


class RowCalls:
    """Per-row values (each row's requested cpu plus ``add``) that record the rows asked."""

    def __init__(self, add: int = 0) -> None:
        self.add = add
        self.rows: list[int] = []

    def __call__(self, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        self.rows.extend(rows.tolist())
        out: np.ndarray = table.requested[table.res_index["cpu"], rows] + self.add
        return out


def test_row_values_are_computed_again_only_for_changed_rows() -> None:
    cache, snap = cluster("a", "b", "c")
    memo = RowMemo()
    calls = RowCalls()
    rows = np.arange(3)
    assert memo.rows(snap.table, "k", rows, calls).tolist() == [0, 0, 0]
    calls.rows.clear()
    assert memo.rows(snap.table, "k", rows, calls).tolist() == [0, 0, 0]
    assert calls.rows == []
    cache.add_pod(pod("p", "b"))
    cache.update_snapshot(snap)
    assert memo.rows(snap.table, "k", rows, calls).tolist() == [0, 1000, 0]
    assert calls.rows == [snap.table.index["b"]]


def test_row_values_follow_a_node_change_of_their_row() -> None:
    cache, snap = cluster("a", "b")
    memo = RowMemo()
    table = snap.table
    zone = table.label_factors("zone")

    def zones(t: NodeTable, rows: np.ndarray) -> np.ndarray:
        out: np.ndarray = t.label_factors("zone").codes[rows].astype(np.int64)
        return out

    assert memo.rows(table, "zone", np.arange(2), zones).tolist() == [0, 0]
    cache.update_node(node("b"), node("b", zone="z2"))
    cache.update_snapshot(snap)
    assert snap.table is table and table.label_factors("zone") is not zone
    assert memo.rows(table, "zone", np.arange(2), zones).tolist() == [0, 1]


def test_row_values_of_a_new_table_start_afresh() -> None:
    cache, snap = cluster("a")
    memo = RowMemo()
    memo.rows(snap.table, "k", np.arange(1), RowCalls())
    cache.add_node(node("b"))
    cache.add_pod(pod("p", "b"))
    cache.update_snapshot(snap)
    calls = RowCalls()
    assert memo.rows(snap.table, "k", np.arange(2), calls).tolist() == [0, 1000]
    assert sorted(calls.rows) == [0, 1]


def test_an_adjusted_table_is_never_served_nor_stores_row_values() -> None:
    _, snap = cluster("a", "b")
    memo = RowMemo()
    rows = np.arange(2)
    memo.rows(snap.table, "k", rows, RowCalls())
    adjusted = AdjustedSnapshot(snap)
    adjusted.set(np.array([1]), np.array([[500], [0], [0]]), np.array([1]))
    calls = RowCalls()
    got = memo.rows(adjusted.view().table, "k", rows, calls)
    assert got.tolist() == [0, 500]
    assert calls.rows == [0, 1]  # every row computed for it
    calls = RowCalls()
    assert memo.rows(snap.table, "k", rows, calls).tolist() == [0, 0]
    assert calls.rows == []  # the real table's values untouched
    assert memo.all_rows(adjusted.view().table, "n", lambda r: 7).tolist() == [7, 7]
    assert len(memo) == 1


def test_an_adjusted_table_is_served_the_real_tables_node_values() -> None:
    _, snap = cluster("a", "b")
    kept: NodeValue[list[str | None]] = NodeValue()
    build = Builds()
    kept.get(snap.table, build)
    adjusted = AdjustedSnapshot(snap)
    assert kept.get(adjusted.view().table, build) == ["z1", "z1"]
    assert build.calls == 1
    fresh: NodeValue[NodeTable] = NodeValue()
    assert fresh.get(adjusted.view().table, lambda t: t) is snap.table  # built from it


def test_row_memo_keeps_at_most_max_keys() -> None:
    _, snap = cluster("a")
    memo = RowMemo(max_keys=2)
    rows = np.arange(1)
    for key in ("x", "y", "x", "z"):
        memo.rows(snap.table, key, rows, RowCalls())
    assert len(memo) == 2
    calls = RowCalls()
    memo.rows(snap.table, "y", rows, calls)  # pushed out by z
    assert calls.rows == [0]
    calls = RowCalls()
    memo.rows(snap.table, "z", rows, calls)
    assert calls.rows == []


def test_all_rows_and_row_state_refresh_the_changed_rows() -> None:
    cache, snap = cluster("a", "b", "c")
    memo = RowMemo()
    asked: list[int] = []

    def count(row: int) -> int:
        asked.append(row)
        return len(snap.node_infos[row].pods)

    assert memo.all_rows(snap.table, "n", count).tolist() == [0, 0, 0]
    state: RowState[list[int]] = RowState()
    refreshed: list[list[int]] = []

    def refresh(s: list[int], changed: list[int]) -> None:
        refreshed.append(changed)
        for r in changed:
            s[r] = len(snap.node_infos[r].pods)

    assert state.get(snap.table, lambda t: [0] * t.size, refresh) == [0, 0, 0]
    asked.clear()
    cache.add_pod(pod("p", "c"))
    cache.update_snapshot(snap)
    c = snap.table.index["c"]
    assert memo.all_rows(snap.table, "n", count)[c] == 1
    assert asked == [c]
    assert state.get(snap.table, lambda t: [0] * t.size, refresh)[c] == 1
    assert refreshed == [[c]]
    assert state.get(snap.table, lambda t: [0] * t.size, refresh)[c] == 1
    assert refreshed == [[c]]  # nothing changed since


def test_label_factors_are_kept_with_the_column() -> None:
    cache, snap = cluster("a", "b")
    table = snap.table
    f = table.label_factors("zone")
    assert f.codes.tolist() == [0, 0] and f.values == ["z1"]
    assert table.label_factors("zone") is f
    cache.update_node(node("b"), node("b", zone="z2"))
    cache.update_snapshot(snap)
    g = table.label_factors("zone")
    assert g is not f and g.values == ["z1", "z2"]


def test_identity_memo_is_bounded_and_holds_its_keys() -> None:
    memo: IdentityMemo[int] = IdentityMemo(max_entries=2)
    a, b, c = [1], [1], [1]
    memo.put(a, 1)
    memo.put(b, 2)
    assert memo.get(a) == 1 and memo.get(b) == 2 and memo.get(c) is None
    memo.put(c, 3)  # past the bound: the others are dropped
    assert memo.get(a) is None and memo.get(c) == 3
