"""Cache: node tree order, assume / forget, incremental snapshots."""

import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.node_tree import NodeTree, zone_key
from kubesched.framework.snapshot import Snapshot


def node(name, zone=None, cpu="4", region=None):
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    if region:
        labels["topology.kubernetes.io/region"] = region
    return parse_node({"metadata": {"name": name, "labels": labels},
                       "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})


def pod(name, node_name="", cpu="100m"):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return parse_pod({"metadata": {"name": name, "uid": name}, "spec": spec})


def test_zone_key():
    assert zone_key(node("a")) == ""
    assert zone_key(node("a", zone="z1", region="r")) == "r:\x00:z1"


def test_tree_interleaves_zones_in_first_seen_order():
    t = NodeTree()
    for n in [node("a1", "a"), node("a2", "a"), node("a3", "a"), node("b1", "b"),
              node("c1", "c"), node("c2", "c")]:
        t.add(n)
    assert t.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]
    t.remove(node("b1", "b"))
    assert t.list() == ["a1", "c1", "a2", "c2", "a3"]
    t.add(node("b1", "b"))  # zone b re-appears at the end
    assert t.list() == ["a1", "c1", "b1", "a2", "c2", "a3"]


def test_assume_forget_and_snapshot_rows():
    c = Cache()
    c.add_node(node("n1"))
    c.add_node(node("n2"))
    snap = Snapshot()
    c.update_snapshot(snap)
    cpu = snap.table.res_index["cpu"]
    assert list(snap.table.requested[cpu]) == [0, 0]
    p = pod("p", "n2", cpu="500m")
    c.assume_pod(p)
    assert c.is_assumed(p)
    with pytest.raises(CacheError):
        c.assume_pod(p)
    c.update_snapshot(snap)
    assert list(snap.table.requested[cpu]) == [0, 500]
    assert list(snap.table.pod_count) == [0, 1]
    c.forget_pod(p)
    c.update_snapshot(snap)
    assert list(snap.table.requested[cpu]) == [0, 0]
    with pytest.raises(CacheError):
        c.forget_pod(p)


def test_snapshot_refreshes_only_changed_nodes():
    c = Cache()
    for i in range(3):
        c.add_node(node(f"n{i}"))
    snap = Snapshot()
    c.update_snapshot(snap)
    table = snap.table
    c.add_pod(pod("p", "n1", cpu="1"))
    # Corrupt an unchanged row: an incremental update must leave it alone.
    cpu = table.res_index["cpu"]
    table.requested[cpu, 0] = 77
    c.update_snapshot(snap)
    assert snap.table is table  # no rebuild without node add/remove
    assert list(table.requested[cpu]) == [77, 1000, 0]


def test_confirming_an_assumed_pod_keeps_one_copy():
    c = Cache()
    c.add_node(node("n1"))
    p = pod("p", "n1", cpu="1")
    c.assume_pod(p)
    c.finish_binding(p)
    c.add_pod(pod("p", "n1", cpu="1"))
    assert not c.is_assumed(p)
    assert len(c.nodes["n1"].pods) == 1
    assert c.nodes["n1"].requested["cpu"] == 1000


def test_removed_node_with_pods_leaves_snapshot():
    c = Cache()
    c.add_node(node("n1"))
    c.add_node(node("n2"))
    c.add_pod(pod("p", "n1"))
    c.remove_node(node("n1"))
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.table.names == ["n2"]
    c.remove_pod(pod("p", "n1"))
    assert "n1" not in c.nodes


def test_new_extended_resource_gets_a_column():
    c = Cache()
    n = parse_node({"metadata": {"name": "g"}, "status": {"capacity": {
        "cpu": "4", "memory": "1Gi", "pods": "10", "nvidia.com/gpu": "2"}}})
    c.add_node(n)
    snap = Snapshot()
    c.update_snapshot(snap)
    row = snap.table.res_index["nvidia.com/gpu"]
    assert snap.table.alloc[row, 0] == 2
    r2 = snap.table.resource_row("example.com/foo")
    assert snap.table.alloc[r2, 0] == 0


def _affinity_pod(name, node_name, kind):
    """A pod with no pod affinity, with only a preferred one, or with a required
    anti-affinity term."""
    term = {"labelSelector": {"matchLabels": {"app": "x"}},
            "topologyKey": "kubernetes.io/hostname"}
    affinity = {"none": None,
                "preferred": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": term}]}},
                "anti": {"podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}[kind]
    spec = {"containers": [{"name": "c"}], "nodeName": node_name}
    if affinity:
        spec["affinity"] = affinity
    return parse_pod({"metadata": {"name": name, "uid": name, "labels": {"app": "x"}},
                      "spec": spec})


@pytest.mark.parametrize("seed", range(8))
def test_snapshot_affinity_answers_follow_the_pods_of_their_own_kind(seed):
    """Whether any node holds pods with affinity, and with required anti-affinity, stays
    what a fresh scan says whatever pods come, change and go; the required anti-affinity
    answer is kept (not scanned for again) when only other pods moved."""
    import random

    rng = random.Random(seed)
    c = Cache()
    names = [f"n{i}" for i in range(5)]
    for n in names:
        c.add_node(node(n))
    snap = Snapshot()
    c.update_snapshot(snap)
    assert not snap.has_pods_with_required_anti_affinity()
    live: dict[str, tuple[str, object]] = {}
    for step in range(80):
        name = f"p{step}"
        kind = rng.choice(["none", "preferred", "anti"])
        op = rng.random()
        if live and op < 0.3:
            gone_kind, gone = live.pop(rng.choice(sorted(live)))
            c.remove_pod(gone)
            moved_anti = gone_kind == "anti"
        elif live and op < 0.45:
            old_name = rng.choice(sorted(live))
            old_kind, old = live[old_name]
            new = _affinity_pod(old_name, old.spec.node_name, kind)
            c.update_pod(old, new)
            live[old_name] = (kind, new)
            moved_anti = "anti" in (old_kind, kind)
        else:
            p = _affinity_pod(name, rng.choice(names), kind)
            c.add_pod(p)
            live[name] = (kind, p)
            moved_anti = kind == "anti"
        c.update_snapshot(snap)
        if not moved_anti:
            assert snap._any_required_anti is not None  # the last step's answer, kept
        assert snap.has_pods_with_affinity() == any(
            ni.pods_with_affinity for ni in snap.node_infos)
        assert snap.has_pods_with_required_anti_affinity() == any(
            ni.pods_with_required_anti_affinity for ni in snap.node_infos)
