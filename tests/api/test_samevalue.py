"""Resource requirements judged once per distinct content (``api.samevalue``, issue 22): each
pod still gets its own objects, values that compare equal but are read differently are not
confused, and a refusal still names its own object."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.parse import parse_pod
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
