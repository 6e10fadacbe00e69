"""The generated ``__copy__`` of the pod types is ``copy.copy``'s shallow copy."""

from __future__ import annotations

import copy
from dataclasses import fields, replace

from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import bound_copy


def test_shallow_copy_shares_every_field():
    text = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}}\n"
            "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: 1}}}]\n"
            "  nodeSelector: {k: v}\n")
    pod = load_scenario_text(text).pods[0]
    for obj in (pod, pod.spec, pod.status, pod.metadata):
        dup = copy.copy(obj)
        assert dup is not obj and type(dup) is type(obj) and dup == obj
        assert all(getattr(dup, f.name) is getattr(obj, f.name) for f in fields(obj))
    dup = copy.copy(pod.spec)
    dup.node_name = "n1"
    assert pod.spec.node_name == ""


def test_a_bound_copy_is_the_pod_on_another_node():
    text = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}}\n"
            "spec:\n  nodeName: n0\n"
            "  containers: [{name: c, image: x, resources: {requests: {cpu: 1}}}]\n")
    pod = load_scenario_text(text, validate=False).pods[0]
    dup = bound_copy(pod, "n1")
    assert (pod.spec.node_name, dup.spec.node_name) == ("n0", "n1")
    assert dup == replace(pod, spec=replace(pod.spec, node_name="n1"))
    assert dup.spec is not pod.spec
    assert all(getattr(dup, f.name) is getattr(pod, f.name) for f in fields(pod)
               if f.name != "spec")
    assert all(getattr(dup.spec, f.name) is getattr(pod.spec, f.name)
               for f in fields(pod.spec) if f.name != "node_name")
