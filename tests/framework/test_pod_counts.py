"""PodCountCache: counts stay right across cycles while only changed nodes are recounted."""

from __future__ import annotations

from kubesched.api.parse import parse_node, parse_pod
from kubesched.cache.cache import Cache
from kubesched.framework.pod_counts import PodCountCache
from kubesched.framework.snapshot import Snapshot


def node(name):
    return parse_node({"metadata": {"name": name},
                       "status": {"capacity": {"cpu": "4", "memory": "4Gi", "pods": "10"}}})


def pod(name, node_name, app):
    return parse_pod({"metadata": {"name": name, "uid": name, "labels": {"app": app}},
                      "spec": {"nodeName": node_name, "containers": [{"name": "c"}]}})


def test_counts_follow_pod_changes_and_recount_only_changed_nodes():
    cache = Cache()
    for n in ("a", "b", "c"):
        cache.add_node(node(n))
    cache.add_pod(pod("p1", "a", "web"))
    cache.add_pod(pod("p2", "b", "db"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    calls: list[int] = []

    def web(pods):
        calls.append(len(pods))
        return sum(p.labels.get("app") == "web" for p in pods)

    pc = PodCountCache()
    assert pc.counts(snap, "web", web).tolist() == [1, 0, 0]
    assert len(calls) == 3
    calls.clear()
    assert pc.counts(snap, "web", web).tolist() == [1, 0, 0]
    assert calls == []  # nothing changed: nothing recounted
    cache.add_pod(pod("p3", "c", "web"))
    cache.update_snapshot(snap)
    assert pc.counts(snap, "web", web).tolist() == [1, 0, 1]
    assert calls == [1]  # only node c
    cache.remove_pod(pod("p1", "a", "web"))
    cache.update_snapshot(snap)
    assert pc.counts(snap, "web", web).tolist() == [0, 0, 1]


def test_new_table_starts_afresh():
    cache = Cache()
    cache.add_node(node("a"))
    cache.add_pod(pod("p1", "a", "web"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    pc = PodCountCache()

    def web(pods):
        return sum(p.labels.get("app") == "web" for p in pods)

    assert pc.counts(snap, "web", web).tolist() == [1]
    cache.add_node(node("b"))
    cache.add_pod(pod("p2", "b", "web"))
    cache.update_snapshot(snap)
    assert pc.counts(snap, "web", web).tolist() == [1, 1]
