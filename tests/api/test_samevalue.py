"""Resource requirements and pod specs judged once per distinct content (``api.samevalue``,
issue 22): each pod still gets its own objects and its own nodeName, values that compare
equal but are read differently are not confused, and a refusal still names its own
object."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from kubesched.api.parse import parse_pod
from kubesched.api.samevalue import pod_spec_key
from kubesched.api.scenario import load_scenario_docs
from kubesched.errors import InputError


def _pod(name: str, resources: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "d"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}}


def test_each_pod_gets_its_own_requests() -> None:
    res = {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m", "memory": "1Gi"}}
    pods = [parse_pod(_pod(name, res)) for name in "abc"]
    for p in pods:
        assert p.spec.containers[0].requests == {"cpu": 100, "memory": 1 << 30}
        p.spec.containers[0].requests["cpu"] = 5
    assert parse_pod(_pod("d", res)).spec.containers[0].requests["cpu"] == 100


def test_true_is_not_taken_for_one() -> None:
    # (True == 1 and hash(True) == hash(1): a memo by value alone would confuse them)
    assert parse_pod(_pod("p", {"requests": {"cpu": 1}})).spec.containers[0].requests == {
        "cpu": 1000}
    with pytest.raises(InputError, match="quantities must be numbers or strings"):
        parse_pod(_pod("q", {"requests": {"cpu": True}}))


def test_a_refusal_names_each_object() -> None:
    bad = {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}
    for name in ("a", "b"):
        with pytest.raises(InputError) as e:
            parse_pod(_pod(name, bad))
        assert "spec.containers[0].resources.requests.cpu" in str(e.value)


# ---------------------------------------------------------------- whole pod specs


def _doc(name: str, node: Any = None, labels: dict[str, str] | None = None,
         **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {
        "requests": {"cpu": "100m", "memory": "500Mi"}}}], **spec}
    if node is not None:
        s["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "d", "labels": labels or {}}, "spec": s}


def _load(*docs: dict[str, Any]) -> Any:
    return load_scenario_docs(list(docs), "dump.yaml")


def test_pods_of_one_template_keep_their_own_node_and_objects() -> None:
    sc = _load(_doc("a", "n1"), _doc("b", "n2"), _doc("c"))
    a, b, c = sc.pods
    assert (a.spec.node_name, b.spec.node_name, c.spec.node_name) == ("n1", "n2", "")
    assert a.spec.containers == b.spec.containers == c.spec.containers
    assert a.spec.containers[0] is not b.spec.containers[0]
    assert a.requests == b.requests == {"cpu": 100, "memory": 500 << 20}
    assert a.requests is not b.requests
    assert a.raw_spec is not None and a.raw_spec["nodeName"] == "n1"


def test_a_template_seen_before_still_refuses_its_pods_node_name() -> None:
    # the first pod makes the template known; the second differs only in its nodeName,
    # which the schema check, the validation and the parse judge per pod
    with pytest.raises(InputError) as e:
        _load(_doc("a", "n1"), _doc("b", 5))
    assert "Pod d/b" in str(e.value) and "spec.nodeName" in str(e.value)
    with pytest.raises(InputError) as e:
        _load(_doc("a", "n1"), _doc("b", "Not_A_Name"))
    assert "Pod d/b" in str(e.value) and "spec.nodeName" in str(e.value)
    with pytest.raises(InputError) as e:
        parse_pod(_doc("b", ["n"]))
    assert "spec.nodeName" in str(e.value)


def test_match_label_keys_read_each_pods_labels() -> None:
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "x"}}, "matchLabelKeys": ["rev"]}]
    sc = _load(_doc("a", labels={"app": "x", "rev": "1"}, topologySpreadConstraints=spread),
               _doc("b", labels={"app": "x", "rev": "2"}, topologySpreadConstraints=spread))
    sel = [p.spec.topology_spread_constraints[0].label_selector for p in sc.pods]
    assert sel[0] != sel[1]
    assert "2" in repr(sel[1]) and "2" not in repr(sel[0])


def test_spec_keys_tell_types_apart() -> None:
    keys = {pod_spec_key({"x": v}) for v in (1, 1.0, True, "1", None, [1], {"1": 1})}
    assert len(keys) == 7
    assert pod_spec_key({"x": 1, "nodeName": "a"}) == pod_spec_key({"x": 1, "nodeName": "b"})
    assert pod_spec_key({"x": datetime.date(2024, 1, 1)}) is None
    assert pod_spec_key(["not", "a", "mapping"]) is None


# ---------------------------------------------------------------- node resource lists


def _node(name: str, capacity: dict[str, Any], allocatable: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    status: dict[str, Any] = {"capacity": capacity}
    if allocatable is not None:
        status["allocatable"] = allocatable
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def test_nodes_of_one_shape_get_their_own_resource_lists() -> None:
    from kubesched.api.parse import parse_node

    cap = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    a, b = parse_node(_node("a", cap)), parse_node(_node("b", cap))
    assert a.status.allocatable == b.status.allocatable == {
        "cpu": 4000, "memory": 32 << 30, "pods": 110}
    assert a.status.capacity is not b.status.capacity
    for n in (a, b):  # (the first parse and one read from the memo)
        n.status.capacity["cpu"] = 1
        n.status.allocatable["cpu"] = 1
    c = parse_node(_node("c", cap))
    assert c.status.capacity["cpu"] == c.status.allocatable["cpu"] == 4000
    assert c.status.capacity is not b.status.capacity
    # the same content read otherwise: an integer, a bool
    assert parse_node(_node("d", {"cpu": 4})).status.capacity == {"cpu": 4000}
    with pytest.raises(InputError, match="quantities must be numbers or strings"):
        parse_node(_node("e", {"cpu": True}))


def test_a_node_refusal_names_each_node() -> None:
    from kubesched.api.parse import parse_node

    for name in ("a", "b"):
        with pytest.raises(InputError) as e:
            parse_node(_node(name, {"cpu": "-1"}))
        assert "status.capacity.cpu" in str(e.value) and f"Node {name}" in str(e.value)


def test_labels_and_lists_seen_valid_do_not_excuse_bad_ones() -> None:
    from kubesched.api.validation.objects import validate_node

    good = _node("a", {"cpu": "4"})
    good["metadata"]["labels"] = {"zone": "z1"}
    validate_node(good)
    validate_node(good)
    bad_value = _node("b", {"cpu": "4"})
    bad_value["metadata"]["labels"] = {"zone": "-z1"}
    with pytest.raises(InputError) as e:
        validate_node(bad_value)
    assert "metadata.labels[zone]" in str(e.value)
    bad_key = _node("c", {"cpu": "4"})
    bad_key["metadata"]["labels"] = {"-zone": "z1"}
    with pytest.raises(InputError) as e:
        validate_node(bad_key)
    assert "metadata.labels" in str(e.value)
    with pytest.raises(InputError) as e:
        validate_node(_node("d", {"cpu": "4"}, {"cpu": "4", "pods": "1.5"}))
    assert "status.allocatable[pods]" in str(e.value)
