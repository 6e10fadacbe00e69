"""``kubesched run`` while the real control plane restarts under it: kube-apiserver killed and
started again (watches resumed, or relisted after 410 Gone), etcd killed under a stream of
bindings and started again. Every pod bound once, nowhere overcommitted, and kubesched's
cache agreeing with the server afterwards."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kube_helpers import make_runner, wait_until
from kube_real import Cluster, pod
from test_real_run import assert_fits

pytestmark = pytest.mark.real_server


def cache_agrees(r: Any, c: Cluster) -> bool:
    """kubesched's cache holds this test's pods where the server has them, none assumed."""
    with r.sched.lock:
        cached = {st.pod.name: st.pod.spec.node_name for st in r.sched.cache.pod_states.values()
                  if st.pod.namespace == c.namespace}
        assumed = any(st.assumed for st in r.sched.cache.pod_states.values())
    return not assumed and cached == c.bound()


def test_api_server_restart(cluster: Cluster, runners: list) -> None:
    cp = cluster.cp
    for i in range(2):
        cluster.ready_node(f"n{i}", cpu="4")
    for i in range(4):
        cluster.create_pod(pod(f"before{i}", cpu="500m"))
    r = make_runner(cluster.kubeconfig, runners)
    wait_until(lambda: len(cluster.bound()) == 4, timeout=30, what="first pods bound")
    pods_informer = next(i for i in r.informers if i.spec.kind == "Pod")
    lists, watches = pods_informer.relists, pods_informer.watches
    cp.apiserver.stop(kill=True)
    time.sleep(1.0)
    cp.start_apiserver()
    for i in range(4):
        cluster.create_pod(pod(f"after{i}", cpu="500m"))
    wait_until(lambda: len(cluster.bound()) == 8, timeout=60, what="pods after the restart")
    # the watch was opened again: resumed, or (410 Gone: its resourceVersion too old for
    # the new watch cache) after a relist
    assert pods_informer.watches > watches or pods_informer.relists > lists
    assert not r.stop_requested.is_set()
    assert_fits(cluster)
    wait_until(lambda: cache_agrees(r, cluster), timeout=30, what="the cache agreeing")


def test_etcd_restart_under_bindings(cluster: Cluster, runners: list) -> None:
    """The nodes have room for exactly the pods: a binding taken for refused while it landed
    (the 409 defect) would leave one pod pending and the cache overcommitting a node."""
    cp = cluster.cp
    n_nodes, per_node = 4, 8
    for i in range(n_nodes):
        cluster.ready_node(f"n{i}", cpu=str(per_node), pods=per_node)
    for i in range(n_nodes * per_node):
        cluster.create_pod(pod(f"p{i:02}", cpu="1"))
    r = make_runner(cluster.kubeconfig, runners, qps=0, request_timeout=30.0)
    outage = threading.Event()

    def kill_after_first_bindings() -> None:
        wait_until(lambda: r.backend.bound >= 3, timeout=60, interval=0.005,
                   what="first bindings")
        cp.etcd.stop(kill=True)
        outage.set()
        time.sleep(3.0)
        cp.start_etcd(same_ports=True)

    t = threading.Thread(target=kill_after_first_bindings, daemon=True)
    t.start()
    t.join(90)
    assert outage.is_set()
    wait_until(lambda: len(cluster.bound()) == n_nodes * per_node, timeout=90, interval=0.5,
               what="every pod bound")
    wait_until(lambda: r.bindings_in_flight == 0, timeout=30, what="binding cycles done")
    assert_fits(cluster)
    assert r.backend.bound == n_nodes * per_node
    assert not r.backend.unknown_outcomes
    wait_until(lambda: cache_agrees(r, cluster), timeout=30, what="the cache agreeing")
