"""The generated ``__copy__`` of the pod types is ``copy.copy``'s shallow copy."""

from __future__ import annotations

import copy
from dataclasses import fields

from kubesched.api.scenario import load_scenario_text


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
