"""``Cache.grow_tables``: nodes appended at the end of the node order grow the snapshot's
table by their rows (``NodeTable.grown``) instead of rebuilding it; the table must hold
what a rebuilt one holds, and a change of order still rebuilds."""

from typing import Any

import numpy as np

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.framework.node_table import NodeTable
from kubesched.framework.snapshot import Snapshot

COLUMNS = ("alloc", "requested", "non_zero_cpu", "non_zero_memory", "pod_count",
           "allowed_pods", "unschedulable")


def node(name: str, zone: str | None = None, cpu: str = "4", **spec: Any) -> Node:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return parse_node({"metadata": {"name": name, "labels": labels}, "spec": spec,
                       "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})


def pod(name: str, node_name: str, cpu: str) -> Pod:
    return parse_pod({"metadata": {"name": name, "uid": name}, "spec": {
        "nodeName": node_name,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})


def same_as_rebuilt(snap: Snapshot) -> None:
    fresh = NodeTable(snap.node_infos)
    t = snap.table
    assert t.names == fresh.names and t.index == fresh.index and t.size == fresh.size
    for col in COLUMNS:
        a, b = getattr(t, col), getattr(fresh, col)
        if a.ndim == 2:  # resources may come in another order
            a = a[[t.res_index[r] for r in fresh.resources]]
        assert np.array_equal(a, b), col
    assert [t.taint_sets[g] for g in t.taint_group] == \
        [fresh.taint_sets[g] for g in fresh.taint_group]
    assert list(t.label_column("kubernetes.io/hostname")) == \
        list(fresh.label_column("kubernetes.io/hostname"))


def gpu_node(name: str) -> Node:
    return parse_node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                       "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
                       "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110",
                                               "nvidia.com/gpu": "2"}}})


def test_appended_nodes_grow_the_table() -> None:
    cache = Cache()
    cache.grow_tables = True
    snap = Snapshot()
    cache.add_node(node("a"))
    cache.add_pod(pod("p1", "a", cpu="1"))
    cache.update_snapshot(snap)
    first = snap.table
    cache.add_node(node("b", cpu="8"))
    cache.add_node(gpu_node("c"))  # a taint set and a resource the table had not seen
    cache.add_pod(pod("p2", "a", cpu="2"))  # an old row changed too
    cache.add_pod(pod("p3", "c", cpu="3"))
    cache.update_snapshot(snap)
    assert snap.table is not first and snap.table.names == ["a", "b", "c"]
    assert snap.table.table_id != first.table_id  # caches keyed by table start afresh
    same_as_rebuilt(snap)
    assert first.size == 1  # the old table is left as it was


def test_a_change_of_order_rebuilds() -> None:
    cache = Cache()
    cache.grow_tables = True
    snap = Snapshot()
    cache.add_node(node("a", zone="z1"))
    cache.add_node(node("b", zone="z1"))
    cache.update_snapshot(snap)
    cache.add_node(node("c", zone="z2"))  # interleaved: a, c, b
    cache.update_snapshot(snap)
    assert snap.table.names == ["a", "c", "b"]
    same_as_rebuilt(snap)
    cache.remove_node(node("c", zone="z2"))
    cache.update_snapshot(snap)
    assert snap.table.names == ["a", "b"]
    same_as_rebuilt(snap)
