"""The API server double keeps the semantics the kube backend relies on (raw HTTP)."""

from __future__ import annotations

import http.client
import json
from typing import Any

from kube_double import ApiServerDouble, node, pod
from kube_helpers import TOKEN


def call(d: ApiServerDouble, method: str, path: str, body: Any = None,
         ctype: str = "application/json", token: str = TOKEN) -> tuple[int, Any]:
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
    data = json.dumps(body) if body is not None else None
    headers = {"Authorization": f"Bearer {token}"}
    if data is not None:
        headers["Content-Type"] = ctype
    c.request(method, path, body=data, headers=headers)
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, json.loads(raw) if raw else None


def watch_lines(d: ApiServerDouble, path: str, n: int) -> list[dict]:
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
    c.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}"})
    r = c.getresponse()
    out = []
    while len(out) < n:
        line = r.readline()
        if not line:
            break
        if line.strip():
            out.append(json.loads(line))
    c.close()
    return out


def test_auth_list_rv_and_watch_resume(double: ApiServerDouble) -> None:
    assert call(double, "GET", "/api/v1/nodes", token="wrong")[0] == 401
    double.create(node("n1"))
    st, lst = call(double, "GET", "/api/v1/nodes")
    assert st == 200 and lst["kind"] == "NodeList" and len(lst["items"]) == 1
    rv = lst["metadata"]["resourceVersion"]
    double.create(node("n2"))
    double.patch("Node", "n1", {"metadata": {"labels": {"x": "y"}}})
    evs = watch_lines(double, f"/api/v1/nodes?watch=1&resourceVersion={rv}", 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [
        ("ADDED", "n2"), ("MODIFIED", "n1")]
    assert int(evs[1]["object"]["metadata"]["resourceVersion"]) > int(rv)


def test_bookmarks_and_gone(double: ApiServerDouble) -> None:
    double.create(node("n1"))
    _st, lst = call(double, "GET", "/api/v1/nodes")
    rv = lst["metadata"]["resourceVersion"]
    double.create(pod("p1"))  # another resource moves the global resourceVersion
    evs = watch_lines(double, f"/api/v1/nodes?watch=1&resourceVersion={rv}"
                              "&allowWatchBookmarks=true", 1)
    assert evs[0]["type"] == "BOOKMARK"
    assert int(evs[0]["object"]["metadata"]["resourceVersion"]) > int(rv)
    double.compact()
    double.create(node("n2"))
    evs = watch_lines(double, f"/api/v1/nodes?watch=1&resourceVersion={rv}", 1)
    assert evs[0]["type"] == "ERROR" and evs[0]["object"]["code"] == 410
    double.gone_as_http = True
    assert call(double, "GET", f"/api/v1/nodes?watch=1&resourceVersion={rv}")[0] == 410


def test_field_selector_watch_turns_transitions_into_add_delete(double: ApiServerDouble
                                                                 ) -> None:
    double.create(pod("p1"))
    _st, lst = call(double, "GET", "/api/v1/pods?fieldSelector=status.phase!%3DSucceeded")
    rv = lst["metadata"]["resourceVersion"]
    double.patch("Pod", "p1", {"status": {"phase": "Succeeded"}})
    evs = watch_lines(double, f"/api/v1/pods?watch=1&resourceVersion={rv}"
                              "&fieldSelector=status.phase!%3DSucceeded", 1)
    assert evs[0]["type"] == "DELETED"


def test_binding_201_then_409_and_uid_precondition(double: ApiServerDouble) -> None:
    double.create(node("n1"))
    p = double.create(pod("p1"))
    body = {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "p1", "uid": "other-uid"}, "target": {"name": "n1"}}
    assert call(double, "POST", "/api/v1/namespaces/default/pods/p1/binding", body)[0] == 409
    body["metadata"]["uid"] = p["metadata"]["uid"]
    assert call(double, "POST", "/api/v1/namespaces/default/pods/p1/binding", body)[0] == 201
    st, status = call(double, "POST", "/api/v1/namespaces/default/pods/p1/binding", body)
    assert st == 409 and "already assigned to node" in status["message"]
    assert call(double, "POST", "/api/v1/namespaces/default/pods/nope/binding", body)[0] == 404
    got = double.get("Pod", "p1")
    assert got["spec"]["nodeName"] == "n1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= got["status"][
        "conditions"][0].items()


def test_status_strategic_patch_merges_conditions(double: ApiServerDouble) -> None:
    double.create(pod("p1"))
    double.patch("Pod", "p1", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    patch = {"status": {"conditions": [{"type": "PodScheduled", "status": "False",
                                        "reason": "Unschedulable"}],
                        "nominatedNodeName": "n1"}}
    st, got = call(double, "PATCH", "/api/v1/namespaces/default/pods/p1/status", patch,
                   "application/strategic-merge-patch+json")
    assert st == 200
    assert [c["type"] for c in got["status"]["conditions"]] == ["Ready", "PodScheduled"]
    assert got["status"]["nominatedNodeName"] == "n1"
    st, got = call(double, "PATCH", "/api/v1/namespaces/default/pods/p1/status",
                   {"status": {"nominatedNodeName": None}},
                   "application/strategic-merge-patch+json")
    assert "nominatedNodeName" not in got["status"]


def test_lease_optimistic_concurrency(double: ApiServerDouble) -> None:
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "l", "namespace": "kube-system"},
             "spec": {"holderIdentity": "a"}}
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    st, created = call(double, "POST", path, lease)
    assert st == 201
    assert call(double, "POST", path, lease)[0] == 409  # AlreadyExists
    first = dict(created, spec={"holderIdentity": "b"})
    st, updated = call(double, "PUT", f"{path}/l", first)
    assert st == 200 and updated["spec"]["holderIdentity"] == "b"
    stale = dict(created, spec={"holderIdentity": "c"})  # the old resourceVersion
    assert call(double, "PUT", f"{path}/l", stale)[0] == 409


def test_events_and_list_paging(double: ApiServerDouble) -> None:
    for i in range(5):
        double.create(node(f"n{i}"))
    _st, page = call(double, "GET", "/api/v1/nodes?limit=2")
    names = [n["metadata"]["name"] for n in page["items"]]
    while page["metadata"].get("continue"):
        _st, page = call(double, "GET", f"/api/v1/nodes?limit=2&continue="
                                       f"{page['metadata']['continue']}")
        names += [n["metadata"]["name"] for n in page["items"]]
    assert names == [f"n{i}" for i in range(5)]
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
          "metadata": {"name": "e1", "namespace": "default"}, "reason": "Scheduled"}
    assert call(double, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", ev)[0] == 201
    assert [e["reason"] for e in double.events()] == ["Scheduled"]
