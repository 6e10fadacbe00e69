"""Informers over real HTTP: list + watch with resourceVersion, bookmarks, resuming after a
dropped or cut watch with nothing lost, relisting on 410, backing off while the API server
is gone, skipping objects that cannot be decoded."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from kube_double import ApiServerDouble, node, pod
from kube_helpers import wait_until

from kubesched.backends.kube.client import KubeClient
from kubesched.backends.kube.informer import Backoff, Informer
from kubesched.backends.kube.resources import NODES, PODS, ResourceSpec


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[str, str]] = []
        self.state: dict[str, Any] = {}
        self.errors: list[tuple[str, str]] = []

    def on_add(self, spec: ResourceSpec, obj: Any) -> None:
        with self.lock:
            self.events.append(("add", obj.metadata.name))
            self.state[obj.metadata.name] = obj

    def on_update(self, spec: ResourceSpec, old: Any, new: Any) -> None:
        with self.lock:
            assert old.metadata.name == new.metadata.name
            self.events.append(("update", new.metadata.name))
            self.state[new.metadata.name] = new

    def on_delete(self, spec: ResourceSpec, obj: Any) -> None:
        with self.lock:
            self.events.append(("delete", obj.metadata.name))
            self.state.pop(obj.metadata.name, None)

    def on_decode_error(self, spec: ResourceSpec, raw: dict[str, Any], err: Exception
                        ) -> None:
        with self.lock:
            self.errors.append((raw["metadata"]["name"], str(err)))


def labels_in(rec: Recorder, double: ApiServerDouble) -> bool:
    """The informer's view equals the server's, labels included."""
    want = {n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in double.list("Node")}
    with rec.lock:
        got = {k: v.metadata.labels for k, v in rec.state.items()}
    return got == want


@pytest.fixture
def client(kubeconfig: str) -> KubeClient:
    return KubeClient.load(kubeconfig, request_timeout=2.0)


def start(client: KubeClient, spec: ResourceSpec, rec: Recorder, **kw: Any) -> Informer:
    kw.setdefault("backoff", Backoff(initial=0.05, cap=0.2))
    return Informer(client, spec, rec, **kw).start()


def test_list_then_watch_with_bookmarks(double: ApiServerDouble, client: KubeClient) -> None:
    for i in range(5):
        double.create(node(f"n{i}"))
    rec = Recorder()
    inf = start(client, NODES, rec, page_size=2)
    try:
        assert inf.synced.wait(5)
        assert sorted(rec.state) == [f"n{i}" for i in range(5)]
        double.patch("Node", "n1", {"metadata": {"labels": {"a": "b"}}})
        double.delete("Node", "n2")
        double.create(node("n9"))
        wait_until(lambda: labels_in(rec, double), what="watch events")
        # a bookmark moves the resourceVersion on, though no node changed
        double.create(pod("p1"))
        rv = double.rv
        wait_until(lambda: int(inf.resource_version) >= rv, what="a bookmark")
        assert inf.relists == 1
    finally:
        inf.stop()
        inf.join(5)


@pytest.mark.parametrize("how", ["drop", "cut"])
def test_watch_resumes_after_drop_or_cut_with_nothing_lost(double: ApiServerDouble,
                                                           client: KubeClient, how: str
                                                           ) -> None:
    for i in range(3):
        double.create(node(f"n{i}"))
    rec = Recorder()
    inf = start(client, NODES, rec)
    try:
        assert inf.synced.wait(5)
        for round_ in range(3):
            wait_until(lambda: double.watches, what="a watch")
            watches = inf.watches
            if how == "drop":
                double.drop_watches()
            else:
                double.cut_watches()
            # changes while the watch is down
            double.patch("Node", "n0", {"metadata": {"labels": {"round": str(round_)}}})
            double.create(node(f"m{round_}"))
            double.delete("Node", f"n{round_ + 1}") if round_ < 2 else None
            wait_until(lambda w=watches: inf.watches > w, what="a new watch")
            wait_until(lambda: labels_in(rec, double), what="resumed events")
        assert inf.relists == 1, "resumed from the resourceVersion, without relisting"
        names = [n for t, n in rec.events if t == "add"]
        assert len(names) == len(set(names)), "no object reported added twice"
    finally:
        inf.stop()
        inf.join(5)


@pytest.mark.parametrize("as_http", [False, True])
def test_410_gone_forces_a_relist(double: ApiServerDouble, client: KubeClient,
                                  as_http: bool) -> None:
    double.gone_as_http = as_http
    for i in range(3):
        double.create(node(f"n{i}"))
    rec = Recorder()
    inf = start(client, NODES, rec)
    try:
        assert inf.synced.wait(5)
        wait_until(lambda: double.watches, what="a watch")
        double.cut_watches()
        double.delete("Node", "n0")             # while no watch is open...
        double.patch("Node", "n1", {"metadata": {"labels": {"x": "1"}}})
        double.compact()                       # ...and the history is gone
        wait_until(lambda: inf.relists == 2, what="a relist")
        wait_until(lambda: labels_in(rec, double), what="the relisted state")
        assert ("delete", "n0") in rec.events, "the relist reports the deletion"
        assert double.stats.gone >= 1
    finally:
        inf.stop()
        inf.join(5)


def test_api_server_gone_for_a_while(double: ApiServerDouble, client: KubeClient) -> None:
    double.create(node("n0"))
    rec = Recorder()
    inf = start(client, NODES, rec)
    try:
        assert inf.synced.wait(5)
        double.go_away()
        double.create(node("n1"))  # the store lives on: changes made while unreachable
        double.patch("Node", "n0", {"metadata": {"labels": {"while": "gone"}}})
        wait_until(lambda: inf.errors >= 2, what="failed reconnects")
        double.come_back()
        wait_until(lambda: labels_in(rec, double), what="the state after the outage")
        assert inf.relists == 1
    finally:
        inf.stop()
        inf.join(5)


def test_undecodable_objects_are_skipped(double: ApiServerDouble, client: KubeClient
                                         ) -> None:
    bad = pod("bad")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    double.create(bad)
    double.create(pod("good"))
    rec = Recorder()
    inf = start(client, PODS, rec)
    try:
        assert inf.synced.wait(5)
        assert list(rec.state) == ["good"]
        assert rec.errors and rec.errors[0][0] == "bad" and "cpu" in rec.errors[0][1]
        # fixed later: now it is seen
        double.patch("Pod", "bad", {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
        wait_until(lambda: "bad" in rec.state, what="the fixed pod")
        double.delete("Pod", "bad")
        wait_until(lambda: "bad" not in rec.state, what="its deletion")
    finally:
        inf.stop()
        inf.join(5)


def test_recreated_under_the_same_name_is_a_delete_and_an_add(double: ApiServerDouble,
                                                              client: KubeClient) -> None:
    double.create(node("n0"))
    rec = Recorder()
    inf = start(client, NODES, rec)
    try:
        assert inf.synced.wait(5)
        uid = rec.state["n0"].metadata.uid
        wait_until(lambda: double.watches, what="a watch")
        double.cut_watches()
        double.delete("Node", "n0")
        double.create(node("n0"))
        double.compact()  # the relist sees only the new object
        wait_until(lambda: inf.relists == 2, what="a relist")
        wait_until(lambda: rec.state.get("n0") is not None
                   and rec.state["n0"].metadata.uid != uid, what="the new n0")
        assert rec.events[-2:] == [("delete", "n0"), ("add", "n0")]
    finally:
        inf.stop()
        inf.join(5)


def test_exec_credential_plugin_auth(double: ApiServerDouble, tmp_path: Any) -> None:
    """A kubeconfig whose user runs an exec plugin (as EKS, GKE, OIDC helpers do): the
    token it prints is what the client sends."""
    import sys

    import yaml
    from kube_helpers import TOKEN

    from kubesched.backends.kube.client import ApiError

    plugin = tmp_path / "plugin.py"
    cred = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
            "status": {"token": TOKEN}}
    plugin.write_text(f"print({json.dumps(json.dumps(cred))})\n")
    kc = tmp_path / "kc"
    double.kubeconfig(str(kc), token="wrong")
    doc = yaml.safe_load(kc.read_text())
    doc["users"][0]["user"] = {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
        "args": [str(plugin)], "interactiveMode": "Never"}}
    kc.write_text(yaml.safe_dump(doc))
    client = KubeClient.load(str(kc))
    assert client.request("GET", "/api/v1/nodes")["kind"] == "NodeList"
    double.kubeconfig(str(kc), token="wrong")
    with pytest.raises(ApiError) as e:
        KubeClient.load(str(kc)).request("GET", "/api/v1/nodes")
    assert e.value.status == 401


def test_objects_the_api_server_admitted_are_kept_when_our_validation_refuses_them(
        double: ApiServerDouble, client: KubeClient, caplog: pytest.LogCaptureFixture
        ) -> None:
    """The API server has already accepted what arrives: kubesched's validation only logs."""
    odd = pod("odd")
    spread = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"app": "x"}}}
    odd["spec"]["topologySpreadConstraints"] = [spread, spread]
    double.create(odd)
    rec = Recorder()
    with caplog.at_level("WARNING", logger="kubesched.kube.informer"):
        inf = start(client, PODS, rec)
        try:
            assert inf.synced.wait(5)
            wait_until(lambda: "odd" in rec.state, what="the pod")
        finally:
            inf.stop()
            inf.join(5)
    assert not rec.errors
    assert any("fails kubesched's validation (kept)" in r.getMessage()
               and "Duplicate value" in r.getMessage() for r in caplog.records)
