"""``kubesched run`` against a real etcd and kube-apiserver v1.36 (``kube_envtest.py``):
bindings through the Binding subresource, events, PodScheduled conditions, a 409 resolved by
reading the pod, preemption, DRA, many pods with the rate limit lifted, and ``snapshot``
read back by ``simulate``. Skipped without envtest binaries (KUBEBUILDER_ASSETS); select
them with ``-m real_server``."""

from __future__ import annotations

import concurrent.futures
import copy
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kube_envtest import ApiFailure
from kube_helpers import assert_pods_fit, make_runner, wait_until
from kube_real import Cluster, ns_path, pod

from kubesched.api.parse import parse_pod
from kubesched.backends.kube.backend import KubeBackend
from kubesched.backends.kube.client import KubeClient
from kubesched.framework.backend import BindError

pytestmark = pytest.mark.real_server


def condition(p: dict[str, Any], kind: str = "PodScheduled") -> dict[str, Any] | None:
    return next((c for c in p["status"].get("conditions", []) if c["type"] == kind), None)


def assert_fits(c: Cluster) -> None:
    """No node holds more requested cpu, memory or pods than it has (the server's view)."""
    assert_pods_fit(c.request("GET", "/api/v1/nodes")["items"],
                    c.request("GET", "/api/v1/pods")["items"], terminating_gone=True)


def test_binding_events_and_conditions(cluster: Cluster, runners: list) -> None:
    cluster.ready_node("n0", cpu="1")
    cluster.ready_node("n1", cpu="1")
    for i in range(4):
        cluster.create_pod(pod(f"p{i}", cpu="400m"))
    cluster.create_pod(pod("big", cpu="2"))
    cluster.create_pod(pod("theirs", scheduler="default-scheduler"))
    make_runner(cluster.kubeconfig, runners)
    wait_until(lambda: len(cluster.bound()) == 4, timeout=30, what="4 pods bound")
    bound = cluster.bound()
    assert sorted(bound) == [f"p{i}" for i in range(4)]
    assert sorted(bound.values()) == ["n0", "n0", "n1", "n1"]  # 2 x 400m per 1-cpu node
    for name in bound:
        # the API server sets PodScheduled=True as it applies a Binding
        assert condition(cluster.get_pod(name))["status"] == "True"  # type: ignore[arg-type,index]
    evs = wait_until(lambda: len(cluster.events("Scheduled")) == 4 and cluster.events(
        "Scheduled"), what="Scheduled events")
    for e in evs:
        name = e["regarding"]["name"]
        assert e["note"] == f"Successfully assigned {cluster.namespace}/{name} to {bound[name]}"
        assert (e["reportingController"], e["action"], e["type"]) == (
            "kubesched", "Binding", "Normal")
    big = wait_until(lambda: condition(cluster.get_pod("big")) and cluster.get_pod("big"),
                     what="big's PodScheduled")
    cond = condition(big)
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    ev = wait_until(lambda: cluster.events("FailedScheduling"), what="FailedScheduling")
    assert ev[0]["note"] == cond["message"] and ev[0]["type"] == "Warning"
    assert cluster.get_pod("theirs")["spec"].get("nodeName") is None  # type: ignore[index]
    # the status patch is kubesched's, by its user agent (server-side field ownership)
    managers = {(m["manager"], m.get("subresource")) for m in big["metadata"]["managedFields"]}
    assert ("kubesched", "status") in managers, managers


def _backend(c: Cluster) -> KubeBackend:
    return KubeBackend(KubeClient.load(c.kubeconfig, request_timeout=5.0))


def _bind_as_another_writer(c: Cluster, name: str, node: str) -> None:
    c.request("POST", ns_path(c.namespace, name=name, sub="binding"), {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})


def test_409_resolved_by_reading_the_pod(cluster: Cluster) -> None:
    """The real server's 409s: a pod another writer bound to the same node (an earlier
    attempt of ours that landed, as under an etcd failure) is a success; bound elsewhere,
    replaced or deleted, a refusal."""
    cluster.ready_node("n0")
    cluster.ready_node("n1")
    pods = {n: parse_pod(cluster.create_pod(pod(n))) for n in ("same", "other", "replaced",
                                                                "gone")}
    backend = _backend(cluster)
    _bind_as_another_writer(cluster, "same", "n0")
    backend.bind(pods["same"], "n0")
    assert backend.bound == 1

    _bind_as_another_writer(cluster, "other", "n1")
    with pytest.raises(BindError) as err:
        backend.bind(pods["other"], "n0")
    assert err.value.conflict and 'is already assigned to node "n1"' in str(err.value)

    cluster.request("DELETE", ns_path(cluster.namespace, name="replaced"))
    cluster.create_pod(pod("replaced"))
    with pytest.raises(BindError) as err:
        backend.bind(pods["replaced"], "n0")
    assert err.value.conflict, err.value
    assert cluster.get_pod("replaced")["spec"].get("nodeName") is None  # type: ignore[index]

    cluster.request("DELETE", ns_path(cluster.namespace, name="gone"))
    with pytest.raises(BindError):
        backend.bind(pods["gone"], "n0")
    assert backend.bound == 1
    assert cluster.bound() == {"same": "n0", "other": "n1"}


def test_binding_while_etcd_is_down(cluster: Cluster) -> None:
    """etcd killed under a binding, back 3 s later: the binding is retried to the same node
    and lands once (the API server's answers meanwhile: timeouts, 5xx, 409s)."""
    cluster.ready_node("n0")
    p = parse_pod(cluster.create_pod(pod("p")))
    backend = KubeBackend(KubeClient.load(cluster.kubeconfig, request_timeout=2.0),
                          bind_timeout=2.0)
    cp = cluster.cp
    cp.etcd.stop(kill=True)
    outcome: list[Any] = []
    t = threading.Thread(target=lambda: outcome.append(_try(backend.bind, p, "n0")))
    t.start()
    time.sleep(3.0)
    cp.start_etcd(same_ports=True)
    t.join(90)
    assert outcome == [None], outcome
    assert backend.bind_retries >= 1 and backend.bound == 1
    wait_until(lambda: _readable(cluster), timeout=30, what="the API server reading again")
    assert cluster.bound() == {"p": "n0"}


def _try(fn: Any, *args: Any) -> Any:
    try:
        fn(*args)
        return None
    except Exception as e:
        return e


def _readable(c: Cluster) -> bool:
    try:
        c.pods()
        return True
    except (ApiFailure, OSError):
        return False


def _priority_class(c: Cluster, name: str, value: int) -> None:
    c.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": name}, "value": value})
    c.cp.await_priority_class(name)


def test_preemption_nominates_then_deletes_victims(cluster: Cluster, runners: list) -> None:
    _priority_class(cluster, "low", 0)
    _priority_class(cluster, "high", 1000)
    cluster.ready_node("n0", cpu="1")
    victim = pod("low", cpu="800m", priority_class="low", node_name="n0",
                 scheduler="default-scheduler")
    victim["spec"]["terminationGracePeriodSeconds"] = 30  # no kubelet: it stays Terminating
    cluster.create_pod(victim)
    cluster.create_pod(pod("high", cpu="800m", priority_class="high"))
    make_runner(cluster.kubeconfig, runners)
    low = wait_until(lambda: (cluster.get_pod("low") or {}).get("metadata", {}).get(
        "deletionTimestamp") and cluster.get_pod("low"), timeout=30, what="victim deleted")
    target = condition(low, "DisruptionTarget")
    assert target is not None and target["reason"] == "PreemptionByScheduler"
    high = wait_until(lambda: cluster.get_pod("high")["status"].get(  # type: ignore[index]
        "nominatedNodeName") and cluster.get_pod("high"), what="nominatedNodeName")
    assert high["status"]["nominatedNodeName"] == "n0" and not high["spec"].get("nodeName")
    ev = wait_until(lambda: cluster.events("Preempted"), what="Preempted event")
    assert ev[0]["regarding"]["name"] == "low"
    # the kubelet's part: the victim goes; the preemptor takes its place
    cluster.request("DELETE", ns_path(cluster.namespace, name="low") + "?gracePeriodSeconds=0")
    wait_until(lambda: cluster.bound().get("high") == "n0", timeout=30, what="preemptor bound")
    assert_fits(cluster)


def test_many_pods_with_the_rate_limit_lifted(cluster: Cluster, runners: list) -> None:
    n_pods, n_nodes = 1000, 20
    for i in range(n_nodes):
        cluster.ready_node(f"n{i:02}", cpu="64", memory="256Gi", pods=60)
    spec = pod("x", cpu="100m")

    def create(i: int) -> None:
        body = copy.deepcopy(spec)
        body["metadata"]["name"] = f"p{i:04}"
        cluster.create_pod(body)

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(create, range(n_pods)))
    t0 = time.monotonic()
    cpu0 = time.process_time()
    r = make_runner(cluster.kubeconfig, runners, qps=0, burst=0, request_timeout=30.0)
    wait_until(lambda: len(cluster.bound()) == n_pods, timeout=240, interval=1.0,
               what=f"{n_pods} pods bound")
    elapsed, cpu = time.monotonic() - t0, time.process_time() - cpu0
    wait_until(lambda: r.bindings_in_flight == 0, what="binding cycles done")
    assert r.backend.bound == n_pods and r.backend.bind_retries == 0
    assert r.client.limiter.waited == 0
    per_node: dict[str, int] = {}
    for node in cluster.bound().values():
        per_node[node] = per_node.get(node, 0) + 1
    assert max(per_node.values()) <= 60 and len(per_node) == n_nodes
    assert_fits(cluster)
    print(f"\n{n_pods} pods bound in {elapsed:.1f}s ({n_pods / elapsed:.0f} pods/s; "
          f"test process CPU {cpu:.1f}s)")


DRIVER = "gpu.example.com"


def test_dra_claim_allocated_and_reserved(cluster: Cluster, runners: list) -> None:
    dra = "/apis/resource.k8s.io/v1"
    cluster.ready_node("n0")
    cluster.ready_node("n1")
    cluster.request("POST", f"{dra}/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    cluster.request("POST", f"{dra}/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "n1-gpus"},
        "spec": {"driver": DRIVER, "nodeName": "n1",
                 "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
    claims = f"{dra}/namespaces/{cluster.namespace}/resourceclaims"
    cluster.request("POST", claims, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "one-gpu"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu"}}]}}})
    cluster.create_pod(pod("trainer", resourceClaims=[
        {"name": "gpu", "resourceClaimName": "one-gpu"}]))
    make_runner(cluster.kubeconfig, runners)
    wait_until(lambda: cluster.bound().get("trainer"), timeout=30, what="trainer bound")
    assert cluster.bound() == {"trainer": "n1"}
    claim = cluster.request("GET", f"{claims}/one-gpu")
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == 1 and results[0]["driver"] == DRIVER
    assert results[0]["pool"] == "n1" and results[0]["device"] in ("gpu-0", "gpu-1")
    trainer = cluster.get_pod("trainer")
    assert claim["status"]["reservedFor"] == [{
        "resource": "pods", "name": "trainer",
        "uid": trainer["metadata"]["uid"]}]  # type: ignore[index]
    assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]


def test_snapshot_of_the_live_cluster_read_back_by_simulate(
        cluster: Cluster, runners: list, tmp_path: Path) -> None:
    cluster.ready_node("n0", cpu="2")
    cluster.ready_node("n1", cpu="2")
    for i in range(3):
        cluster.create_pod(pod(f"run{i}", cpu="500m", node_name="n0",
                               scheduler="default-scheduler"))
    for i in range(3):
        cluster.create_pod(pod(f"wait{i}", cpu="1", scheduler="default-scheduler"))
    from click.testing import CliRunner

    from kubesched.cli import main

    out = tmp_path / "snapshot.yaml"
    snap = CliRunner().invoke(main, ["snapshot", "--kubeconfig", cluster.kubeconfig,
                                     "--out", str(out)])
    assert snap.exit_code == 0, snap.output
    placements = tmp_path / "placements.jsonl"
    sim = CliRunner().invoke(main, ["simulate", str(out), "--placements", str(placements)])
    assert sim.exit_code == 0, sim.output
    rows = {r["pod"]: r for r in map(json.loads, placements.read_text().splitlines())}
    ns = cluster.namespace
    # n0 has 500m left, n1 2 cpu: two of the waiting pods fit on n1, the third nowhere
    assert {k for k in rows if k.startswith(f"{ns}/")} == {f"{ns}/wait{i}" for i in range(3)}
    placed = [r["node"] for k, r in rows.items() if k.startswith(f"{ns}/") and r["node"]]
    assert placed == ["n1", "n1"]
    left = [r for k, r in rows.items() if k.startswith(f"{ns}/") and not r["node"]]
    assert left[0]["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
