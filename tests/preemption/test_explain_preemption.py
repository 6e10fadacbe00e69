"""``kubesched explain``'s ``preemption`` field: the node DefaultPreemption would nominate
and the victims it would evict — decided, never done."""

from __future__ import annotations

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.config import default_config
from kubesched.errors import InputError
from kubesched.explain import explain

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def running(name: str, node: str, cpu: str, priority: int) -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n"
            f"  nodeName: {node}\n  priority: {priority}\n"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


def pending(name: str, cpu: str, priority: int, extra: str = "") -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n"
            f"  priority: {priority}\n{extra}"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


def run(text: str, pod: str = "default/p") -> dict:
    return explain(load_scenario_text(text, "t.yaml"), default_config(), pod)


def test_reports_node_and_sorted_victims_without_evicting() -> None:
    text = (NODES + running("b", "n1", "1", 50) + running("a", "n1", "1", 0)
            + running("c", "n2", "2", 100) + pending("p", "2", 1000))
    out = run(text)  # the read-only backend raises on any eviction
    assert out["preemption"] == {"node": "n1", "victims": ["default/a", "default/b"]}
    assert out["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert out["selected"] == []


def test_null_when_preemption_cannot_help() -> None:
    text = NODES + running("a", "n1", "2", 2000) + running("b", "n2", "2", 2000)
    out = run(text + pending("p", "2", 1000))
    assert out["preemption"] is None
    # DynamicResources' PostFilter runs first (v1.35's default profile)
    assert out["message"] == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                              "deallocate, preemption: 0/2 nodes are available: 2 No "
                              "preemption victims found for incoming pod.")
    out = run(text + pending("p", "2", 3000, "  preemptionPolicy: Never\n"))
    assert out["preemption"] is None
    assert out["message"].endswith(" preemption: not eligible due to preemptionPolicy=Never.")


def test_absent_when_some_node_fits_or_without_post_filter() -> None:
    from kubesched.config import load_config

    assert "preemption" not in run(NODES + pending("p", "1", 0))
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                           "postFilter": {"disabled": [{"name": "*"}]}}}]})
    text = NODES + running("a", "n1", "2", 0) + running("b", "n2", "2", 0)
    out = explain(load_scenario_text(text + pending("p", "2", 1000), "t.yaml"), cfg,
                  "default/p")
    assert "preemption" not in out
    assert out["message"] == "0/2 nodes are available: 2 Insufficient cpu."


def test_pod_refused_for_a_missing_priority_class() -> None:
    text = NODES + ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                    "spec: {priorityClassName: gold, containers: [{name: c}]}\n")
    with pytest.raises(InputError, match="no PriorityClass with name gold was found"):
        run(text)
