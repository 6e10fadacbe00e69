"""The simulator's virtual clock: requeueing on events, backoff, the 5-minute flush."""

from __future__ import annotations

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def pod(name: str, cpu: str, *, node: str = "", annotations: dict | None = None) -> str:
    meta = {"name": name, "annotations": annotations or {}}
    spec_node = f"  nodeName: {node}\n" if node else ""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {meta}\nspec:\n{spec_node}"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


def run(text: str) -> dict:
    result = SimCluster(load_scenario_text(text, "test.yaml"), check=True).run()
    return {r.key: r for r in result.records}


def test_pod_waits_for_a_running_pod_to_finish():
    recs = run(NODE + pod("old", "1500m", node="n1", annotations={"kubesched.io/duration": "7"})
               + pod("new", "1"))
    new = recs["default/new"]
    assert new.node == "n1"
    assert new.time == 7.0  # the delete event requeues it at once (backoff long over)
    assert new.attempts == 2


def test_unschedulable_pod_retried_every_five_minutes_while_events_are_due():
    # "big" never fits; "late" arrives at t=1000, so the run lasts that long. Upstream's
    # leftover flush runs every 30 s and moves pods unschedulable for more than 5 min.
    recs = run(NODE + pod("big", "3") + pod("late", "100m",
                                            annotations={"kubesched.io/arrival": "1000"}))
    big = recs["default/big"]
    assert big.node is None
    assert big.attempts == 4  # t = 0, 330, 660, 990
    assert big.time == 990.0
    assert big.message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to "
                           "deallocate, preemption: 0/1 nodes are available: 1 Preemption "
                           "is not helpful for scheduling.")
    assert recs["default/late"].node == "n1"


def test_nothing_due_means_the_run_ends():
    recs = run(NODE + pod("big", "3"))
    assert recs["default/big"].attempts == 1


def test_simulator_refuses_a_binding_that_does_not_fit():
    """The simulated API server admits pods as a kubelet would, independently of the
    scheduler's cache: a binding past allocatable is refused, not recorded."""
    import pytest

    from kubesched.framework.backend import BindError

    sim = SimCluster(load_scenario_text(NODE + pod("a", "1500m") + pod("b", "1"), "t.yaml"))
    sim.load()
    sim.deliver_due()
    a, b = sorted(sim.pods.values(), key=lambda p: p.name)
    sim.bind(a, "n1")
    with pytest.raises(BindError, match="does not fit on node n1: insufficient cpu"):
        sim.bind(b, "n1")
    assert not sim.pods[b.uid].spec.node_name
