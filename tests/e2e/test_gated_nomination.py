"""v1.37 (kubernetes#139057): a gated pod's nomination holds its space. A pending pod that
carries status.nominatedNodeName but is held by a scheduling gate is recorded in the
nominator when it is added, so lower-priority pods see it on its node as if it were there
(the filters' first pass with nominated pods); before 1.37 only pods that reached activeQ
were nominated, and the lower-priority pod took the space."""

from __future__ import annotations

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.clock import VirtualClock
from kubesched.config import default_config, load_config
from kubesched.config.features import FeatureGates
from kubesched.scheduler import Scheduler

NODE = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 4Gi, pods: "110"}}
"""


def pod(name: str, priority: int, *, gated: bool = False, nominated: str = "",
        arrival: float = 0) -> str:
    gates = "  schedulingGates: [{name: example.com/hold}]\n" if gated else ""
    status = f"status: {{nominatedNodeName: {nominated}}}\n" if nominated else ""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: "
            f"{{kubesched.io/arrival: '{arrival}'}}}}\nspec:\n  priority: {priority}\n{gates}"
            f"  containers: [{{name: c, image: x, resources: {{requests: {{cpu: '3'}}}}}}]\n"
            + status)


TEXT = NODE + pod("held", 100, gated=True, nominated="n1") + pod("low", 0, arrival=1)


def run(version: str) -> dict:
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration"},
                      features=FeatureGates(version))
    sim = SimCluster(load_scenario_text(TEXT, release=version), cfg, check=True)
    return {r.key: r for r in sim.run().records}


def test_a_gated_pods_nomination_holds_its_space_in_1_37():
    recs = run("1.37")
    low = recs["default/low"]
    assert low.node is None
    assert low.message is not None and low.message.startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_before_1_37_the_lower_priority_pod_takes_the_space(version):
    recs = run(version)
    assert recs["default/low"].node == "n1"


@pytest.mark.parametrize("version, nominated", [("1.36", False), ("1.37", True)])
def test_queue_add_records_a_gated_pods_nomination(version, nominated):
    """The queue alone: Add of a gated pod with a nominatedNodeName."""
    cfg = default_config(FeatureGates(version))
    sched = Scheduler(None, VirtualClock(), cfg)  # type: ignore[arg-type]
    (held,) = load_scenario_text(pod("held", 100, gated=True, nominated="n1")).pods
    sched.queue.add(held)
    assert sched.queue.where(held.uid) == "gated"
    assert [p.name for p in sched.queue.nominated_pods_for_node("n1")] == (
        ["held"] if nominated else [])
    sched.queue.delete(held)
    assert sched.queue.nominated_pods_for_node("n1") == []
