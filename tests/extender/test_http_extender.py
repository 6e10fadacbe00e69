"""HTTPExtender against a real loopback server: what it sends (upstream's wire format), how
it reads answers (as Go's encoding/json), and the exact error of every failure."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.config import load_config
from kubesched.extender import HTTPExtender, build_extenders
from kubesched.framework.extender import ExtenderError, Victims
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import snapshot_from_nodes

from .conftest import FakeExtender

SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {capacity: {cpu: '2', memory: 4Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: low1, uid: uid1}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: low2, uid: uid2}
spec: {nodeName: n2, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: web-uid}
spec:
  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""


@pytest.fixture(scope="module")
def world() -> tuple[Snapshot, Any]:
    scen = load_scenario_text(SCENARIO, "t.yaml")
    snap = snapshot_from_nodes(scen.nodes, [p for p in scen.pods if p.spec.node_name])
    pod = next(p for p in scen.pods if p.name == "web")
    return snap, pod


def make(fake: FakeExtender, **cfg: Any) -> HTTPExtender:
    return HTTPExtender({"urlPrefix": fake.url, "filterVerb": "filter",
                         "prioritizeVerb": "prioritize", "bindVerb": "bind",
                         "preemptVerb": "preempt", "weight": 1, **cfg})


# ------------------------------------------------------------------ what is sent


def test_filter_sends_node_names_when_node_cache_capable(extender: FakeExtender,
                                                         world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {"NodeNames": ["n2"],
                                                "FailedNodes": {"n1": "no"}})
    res = make(extender, nodeCacheCapable=True).filter(pod, snap.node_infos)
    assert (res.passed, res.failed, res.failed_and_unresolvable) == (["n2"], {"n1": "no"}, {})
    (args,) = extender.calls("filter")
    assert set(args) == {"Pod", "Nodes", "NodeNames"}
    assert args["Nodes"] is None and args["NodeNames"] == ["n1", "n2"]
    assert args["Pod"]["metadata"] == {"name": "web", "namespace": "shop", "uid": "web-uid"}
    assert args["Pod"]["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "500m", "memory": str(1 << 30)}
    assert extender.requests[0][0] == "/scheduler/filter"


def test_filter_sends_node_list_otherwise(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {"Nodes": {"items": [a["Nodes"]["items"][1]]}})
    res = make(extender).filter(pod, snap.node_infos)
    assert res.passed == ["n2"]
    (args,) = extender.calls("filter")
    assert args["NodeNames"] is None
    assert args["Nodes"]["metadata"] == {}
    n1 = args["Nodes"]["items"][0]
    assert n1["metadata"] == {"name": "n1", "uid": "n1", "labels": {"zone": "a"}}
    assert n1["status"]["allocatable"]["cpu"] == "4000m"


def test_answers_are_read_case_insensitively(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {
        "nodenames": ["n1"], "FAILEDNODES": {"n2": "busy"},
        "failedAndUnresolvableNodes": {"n3": "gone"}, "unknown": 1})
    res = make(extender, nodeCacheCapable=True).filter(pod, snap.node_infos)
    assert (res.passed, res.failed, res.failed_and_unresolvable) == (
        ["n1"], {"n2": "busy"}, {"n3": "gone"})
    extender.verbs["prioritize"] = lambda a: (200, [{"host": "n1", "SCORE": 7}])
    assert make(extender).prioritize(pod, snap.node_infos) == ([("n1", 7)], 1)


def test_filter_without_verb_passes_everything_without_a_call(extender: FakeExtender,
                                                               world: Any) -> None:
    snap, pod = world
    ext = HTTPExtender({"urlPrefix": extender.url, "prioritizeVerb": "p", "weight": 2})
    assert ext.filter(pod, snap.node_infos).passed == ["n1", "n2"]
    assert not extender.requests


def test_prioritize_without_verb_scores_zero(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    ext = HTTPExtender({"urlPrefix": extender.url, "filterVerb": "f"})
    assert ext.prioritize(pod, snap.node_infos) == ([("n1", 0), ("n2", 0)], 0)


def test_bind_sends_upstream_binding_args(extender: FakeExtender, world: Any) -> None:
    _snap, pod = world
    extender.verbs["bind"] = lambda a: (200, {"Error": ""})
    make(extender).bind(pod, "n2")
    assert extender.calls("bind") == [{"PodName": "web", "PodNamespace": "shop",
                                       "PodUID": "web-uid", "Node": "n2"}]
    extender.verbs["bind"] = lambda a: (200, {"error": "node n2 is full"})
    with pytest.raises(ExtenderError, match=r"^node n2 is full$"):
        make(extender).bind(pod, "n2")


# ------------------------------------------------------------------ failures, exactly


def err_of(fn: Any) -> str:
    with pytest.raises(ExtenderError) as e:
        fn()
    return str(e.value)


def test_error_field(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {"Error": "quota exceeded"})
    assert err_of(lambda: make(extender).filter(pod, snap.node_infos)) == "quota exceeded"


@pytest.mark.parametrize(("code", "verb"), [(500, "filter"), (404, "prioritize"),
                                            (503, "bind"), (403, "preempt")])
def test_non_200(extender: FakeExtender, world: Any, code: int, verb: str) -> None:
    snap, pod = world
    extender.verbs[verb] = lambda a: (code, {"NodeNames": []})
    ext = make(extender)
    calls = {"filter": lambda: ext.filter(pod, snap.node_infos),
             "prioritize": lambda: ext.prioritize(pod, snap.node_infos),
             "bind": lambda: ext.bind(pod, "n1"),
             "preempt": lambda: ext.process_preemption(pod, {}, snap.by_name)}
    assert err_of(calls[verb]) == (f"failed {verb} with extender at URL "
                                   f"{extender.url}/{verb}, code {code}")


@pytest.mark.parametrize(("body", "msg"), [
    (b"", "EOF"),
    (b"garbage", "invalid character 'g' looking for beginning of value"),
    (b'{"NodeNames": ["n1"', "unexpected EOF"),
    (b'{"NodeNames": "n1"}',
     "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames "
     "of type []string"),
    (b'{"FailedNodes": {"n1": 3}}',
     "json: cannot unmarshal number into Go struct field ExtenderFilterResult.FailedNodes "
     "of type string"),
    (b'[]', "json: cannot unmarshal array into Go value of type v1.ExtenderFilterResult"),
])
def test_garbage_filter_answers(extender: FakeExtender, world: Any, body: bytes,
                                msg: str) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, body)
    assert err_of(lambda: make(extender, nodeCacheCapable=True).filter(
        pod, snap.node_infos)) == msg


@pytest.mark.parametrize(("body", "msg"), [
    (b'{"Host": "n1"}', "json: cannot unmarshal object into Go value of type "
                        "v1.HostPriorityList"),
    (b'[{"Host": "n1", "Score": 2.5}]', "json: cannot unmarshal number 2.5 into Go struct "
                                        "field HostPriority.Score of type int64"),
    (b'[{"Host": "n1", "Score": "9"}]', "json: cannot unmarshal string into Go struct field "
                                        "HostPriority.Score of type int64"),
])
def test_garbage_prioritize_answers(extender: FakeExtender, world: Any, body: bytes,
                                    msg: str) -> None:
    snap, pod = world
    extender.verbs["prioritize"] = lambda a: (200, body)
    assert err_of(lambda: make(extender).prioritize(pod, snap.node_infos)) == msg


def test_trailing_data_after_the_answer_is_ignored_as_go_does(extender: FakeExtender,
                                                               world: Any) -> None:
    snap, pod = world
    extender.verbs["prioritize"] = lambda a: (200, b'[{"Host":"n2","Score":3}] trailing')
    assert make(extender).prioritize(pod, snap.node_infos) == ([("n2", 3)], 1)


def test_node_not_given_is_refused(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {"NodeNames": ["n1", "n9"]})
    assert err_of(lambda: make(extender, nodeCacheCapable=True).filter(
        pod, snap.node_infos)) == (f'extender "{extender.url}" claims a filtered node "n9" '
                                   "which is not found in the input node list")


def test_timeout(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {"NodeNames": []})
    extender.delay = 0.5
    ext = make(extender, httpTimeout="100ms", nodeCacheCapable=True)
    assert err_of(lambda: ext.filter(pod, snap.node_infos)) == (
        f'Post "{extender.url}/filter": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)")


def test_connection_refused(world: Any) -> None:
    snap, pod = world
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ext = HTTPExtender({"urlPrefix": f"http://127.0.0.1:{port}/x", "filterVerb": "filter"})
    assert err_of(lambda: ext.filter(pod, snap.node_infos)) == (
        f'Post "http://127.0.0.1:{port}/x/filter": dial tcp 127.0.0.1:{port}: connect: '
        "connection refused")


def test_keep_alive_connection_is_reused(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    extender.verbs["filter"] = lambda a: (200, {"NodeNames": ["n1"]})
    ext = make(extender, nodeCacheCapable=True)
    for _ in range(3):
        ext.filter(pod, snap.node_infos)
    assert len(ext._idle) == 1
    extender.drop_connections = True  # a dropped idle connection is redialled once
    for _ in range(3):
        assert ext.filter(pod, snap.node_infos).passed == ["n1"]
    assert len(extender.calls("filter")) == 6


# ------------------------------------------------------------------ preemption


def test_preempt_node_cache_capable_sends_meta_victims(extender: FakeExtender,
                                                       world: Any) -> None:
    snap, pod = world
    low1 = snap.get("n1").pods[0]
    low2 = snap.get("n2").pods[0]
    extender.verbs["preempt"] = lambda a: (200, {"NodeNameToMetaVictims": {
        "n1": {"Pods": [{"UID": "uid1"}], "NumPDBViolations": 1}}})
    got = make(extender, nodeCacheCapable=True).process_preemption(
        pod, {"n1": Victims([low1], 1), "n2": Victims([low2], 2)}, snap.by_name)
    assert got == {"n1": Victims([low1], 1)}
    (args,) = extender.calls("preempt")
    assert args["NodeNameToVictims"] is None
    # TestConvertToMetaVictims
    assert args["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": "uid1"}], "NumPDBViolations": 1},
        "n2": {"Pods": [{"UID": "uid2"}], "NumPDBViolations": 2}}


def test_preempt_sends_full_victims_otherwise(extender: FakeExtender, world: Any) -> None:
    snap, pod = world
    low1 = snap.get("n1").pods[0]
    extender.verbs["preempt"] = lambda a: (200, {"NodeNameToMetaVictims": {}})
    assert make(extender).process_preemption(pod, {"n1": Victims([low1])}, snap.by_name) == {}
    (args,) = extender.calls("preempt")
    assert args["NodeNameToMetaVictims"] is None
    assert args["NodeNameToVictims"]["n1"]["Pods"][0]["metadata"]["uid"] == "uid1"
    assert args["NodeNameToVictims"]["n1"]["NumPDBViolations"] == 0


@pytest.mark.parametrize(("answer", "msg"), [
    # TestConvertToVictims: a pod not on that node, a node not in the snapshot
    ({"n2": {"Pods": [{"UID": "uid1"}]}},
     "extender: {url} claims to preempt pod (UID: &{{uid1}}) on node: n2, but the pod is not "
     "found on that node"),
    ({"n9": {"Pods": [{"UID": "uid1"}]}}, 'nodeinfo not found for node name "n9"'),
])
def test_preempt_answers_that_do_not_match_the_cluster(extender: FakeExtender, world: Any,
                                                       answer: Any, msg: str) -> None:
    snap, pod = world
    extender.verbs["preempt"] = lambda a: (200, {"NodeNameToMetaVictims": answer})
    low1 = snap.get("n1").pods[0]
    assert err_of(lambda: make(extender).process_preemption(
        pod, {"n1": Victims([low1])}, snap.by_name)) == msg.format(url=extender.url)


# ------------------------------------------------------------------ interest, order


@pytest.mark.parametrize(("label", "managed", "container", "want"), [
    # TestIsInterested
    ("Empty managed resources", [], "{name: c}", True),
    ("Managed memory, empty resources", ["memory"], "{name: c}", False),
    ("Managed memory, container memory with Requests", ["memory"],
     "{name: c, resources: {requests: {memory: '0'}}}", True),
    ("Managed memory, container memory with Limits", ["memory"],
     "{name: c, resources: {limits: {memory: '0'}}}", True),
    ("Managed memory, init container memory", ["memory"],
     "{name: c}], initContainers: [{name: i, resources: {requests: {memory: '0'}}}", True),
])
def test_is_interested(label: str, managed: list[str], container: str, want: bool) -> None:
    scen = load_scenario_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                              f"spec: {{containers: [{container}]}}\n", "t.yaml")
    ext = HTTPExtender({"urlPrefix": "http://127.0.0.1:1",
                        "managedResources": [{"name": m} for m in managed]})
    assert ext.is_interested(scen.pods[0]) is want


def test_ignorable_extenders_go_last() -> None:
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration", "extenders": [
                           {"urlPrefix": "http://a", "ignorable": True},
                           {"urlPrefix": "http://b"},
                           {"urlPrefix": "http://c", "ignorable": True},
                           {"urlPrefix": "http://d"}]})
    assert [e.name for e in build_extenders(cfg)] == ["http://b", "http://d", "http://a",
                                                      "http://c"]


# ------------------------------------------------------------------ TLS


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_with_ca_and_server_name(tmp_path: Path, world: Any) -> None:
    snap, pod = world
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=extender.test",
                    "-addext", "subjectAltName=DNS:extender.test"],
                   check=True, capture_output=True)
    fake = FakeExtender()
    fake.close()  # its plain server; serve the same handler over TLS instead
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake._handler())
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True)
    t.start()
    try:
        port = server.server_address[1]
        fake.verbs["filter"] = lambda a: (200, {"NodeNames": ["n1"]})
        url = f"https://127.0.0.1:{port}/s"
        verified = HTTPExtender({"urlPrefix": url, "filterVerb": "filter",
                                 "nodeCacheCapable": True, "enableHTTPS": True,
                                 "tlsConfig": {"caFile": str(cert),
                                               "serverName": "extender.test"}})
        assert verified.filter(pod, snap.node_infos).passed == ["n1"]
        # enableHTTPS without a CA: upstream does not verify the server
        insecure = HTTPExtender({"urlPrefix": url, "filterVerb": "filter",
                                 "nodeCacheCapable": True, "enableHTTPS": True})
        assert insecure.filter(pod, snap.node_infos).passed == ["n1"]
        wrong_name = HTTPExtender({"urlPrefix": url, "filterVerb": "filter",
                                   "tlsConfig": {"caFile": str(cert)}})
        assert err_of(lambda: wrong_name.filter(pod, snap.node_infos)).startswith(
            f'Post "{url}/filter": tls: ')
    finally:
        server.shutdown()
        server.server_close()
