"""Preemption end to end in the simulator: a high-priority burst on a full cluster, PDBs,
preemptionPolicy Never, nominated pods holding their room, a missing PriorityClass."""

from __future__ import annotations

from typing import Any

from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import Pod
from kubesched.backends.sim.cluster import SimCluster


def node(name: str, cpu: str) -> str:
    return (f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: "
            f"{{kubernetes.io/hostname: {name}}}}}\n"
            f"status: {{capacity: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}}}\n")


def pod(name: str, cpu: str, *, ns: str = "default", priority_class: str = "",
        arrival: float | None = None, grace: int | None = None, on: str = "",
        labels: dict[str, str] | None = None, owner: str = "") -> str:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": owner, "controller": True}]
    if arrival is not None:
        meta["annotations"] = {"kubesched.io/arrival": str(arrival)}
    spec = f"  nodeName: {on}\n" if on else ""
    if priority_class:
        spec += f"  priorityClassName: {priority_class}\n"
    if grace is not None:
        spec += f"  terminationGracePeriodSeconds: {grace}\n"
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {meta}\nspec:\n{spec}"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


def priority_class(name: str, value: int, policy: str = "PreemptLowerPriority") -> str:
    return (f"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
            f"metadata: {{name: {name}}}\nvalue: {value}\npreemptionPolicy: {policy}\n")


class CheckedSim(SimCluster):
    """Asserts at every binding that no node is overcommitted (the scheduler has assumed the
    pod by then, and terminating victims still count); logs the deletions."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.deleted: dict[str, str] = {}

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.setdefault(pod.key, reason)
        super().delete_pod(pod, reason)

    def bind(self, pod: Pod, node_name: str) -> None:
        ni = self.scheduler.cache.nodes[node_name]
        for res, used in ni.requested.items():
            assert used <= ni.allocatable.get(res, 0), (node_name, res, used)
        super().bind(pod, node_name)


def simulate(text: str) -> tuple[CheckedSim, dict]:
    sim = CheckedSim(load_scenario_text(text, "test.yaml"), check=True)
    result = sim.run()
    return sim, {r.key: r for r in result.records}


def test_high_priority_burst_preempts_on_a_full_cluster():
    text = "".join(node(f"node-{i}", "4") for i in range(4)) + priority_class("high", 1000)
    text += "".join(pod(f"low-{i:02d}", "1", ns="batch", grace=20) for i in range(16))
    text += "".join(pod(f"web-{i}", "2", ns="shop", priority_class="high", arrival=10)
                    for i in range(8))
    sim, recs = simulate(text)
    webs = [recs[f"shop/web-{i}"] for i in range(8)]
    lows = [recs[f"batch/low-{i:02d}"] for i in range(16)]
    assert all(w.node is not None for w in webs)
    # every preemptor ends on the node it was nominated to, once its victims are gone
    for i, w in enumerate(webs):
        bound = next(p for p in sim.pods.values() if p.key == f"shop/web-{i}")
        assert bound.status.nominated_node_name == w.node
        assert w.time == 30.0 and w.attempts == 2
    # each evicted pod's placement line names its preemptor
    assert all(low.node is None and low.time == 10.0 for low in lows)
    assert sorted(low.message for low in lows) == sorted(
        f"preempted by shop/web-{i}" for i in range(8) for _ in range(2))
    assert sim.event_counts["Preempted"] == 16
    for row in sim.utilisation():
        assert row["cpu_requested"] == row["cpu_allocatable"] == 4000
        assert row["pods"] == 2


def test_victims_hold_their_room_until_their_grace_period_ends():
    text = node("n1", "2") + priority_class("high", 1000)
    text += pod("low", "2", grace=45) + pod("high", "2", priority_class="high", arrival=5)
    sim, recs = simulate(text)
    assert recs["default/low"].message == "preempted by default/high"
    assert recs["default/high"].node == "n1"
    assert recs["default/high"].time == 50.0  # 5 + 45 s of virtual grace
    assert sim.api.deleted == {"default/low": "preempted by default/high"}


def test_pdb_protected_pods_are_preempted_only_when_nothing_else_works():
    pdb = ("---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\n"
           "spec: {minAvailable: 2, selector: {matchLabels: {app: db}}}\n")
    text = node("node-a", "2") + node("node-b", "2") + priority_class("high", 1000) + pdb
    text += pod("db-1", "1", labels={"app": "db"}, on="node-a", grace=0)
    text += pod("db-2", "1", labels={"app": "db"}, on="node-a", grace=0)
    text += pod("batch-1", "1", on="node-b", grace=0) + pod("batch-2", "1", on="node-b", grace=0)
    text += pod("high-1", "2", priority_class="high", arrival=5)
    text += pod("high-2", "2", priority_class="high", arrival=100)
    for seed in range(5):  # whichever node the dry run starts from
        sim = CheckedSim(load_scenario_text(text, "test.yaml"), seed=seed)
        recs = {r.key: r for r in sim.run().records}
        # the first preemptor takes the node whose victims break no budget...
        assert recs["default/high-1"].node == "node-b"
        assert sim.api.deleted["default/batch-1"] == sim.api.deleted["default/batch-2"] == (
            "preempted by default/high-1")
        # ...the second has no other choice than the protected pods
        assert recs["default/high-2"].node == "node-a"
        assert sim.api.deleted["default/db-1"] == sim.api.deleted["default/db-2"] == (
            "preempted by default/high-2")


def test_pdb_with_room_lets_its_pods_go_first():
    """A budget that allows one disruption does not protect its pods: the node with the
    lower victims wins as usual (lowest highest-priority victim)."""
    pdb = ("---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\n"
           "spec: {maxUnavailable: 1, selector: {matchLabels: {app: db}}}\n")
    rs = ("---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: db}\n"
          "spec: {replicas: 2, selector: {matchLabels: {app: db}}, template: {metadata: "
          "{labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}\n")
    text = node("node-a", "2") + priority_class("high", 1000) + pdb + rs
    text += "".join(pod(f"db-{i}", "1", labels={"app": "db"}, owner="db") for i in (1, 2))
    sc = load_scenario_text(text + pod("high", "1", priority_class="high", arrival=5),
                            "test.yaml")
    result = CheckedSim(sc).run()
    recs = {r.key: r for r in result.records}
    assert recs["default/high"].node == "node-a"
    assert sum(1 for k in ("default/db-1", "default/db-2")
               if recs[k].message == "preempted by default/high") == 1


def test_preemption_policy_never_is_respected():
    text = node("n1", "2") + priority_class("never", 1000, "Never")
    text += pod("low", "2") + pod("vip", "1", priority_class="never", arrival=5)
    sim, recs = simulate(text)
    assert recs["default/low"].node == "n1"
    vip = recs["default/vip"]
    assert vip.node is None
    assert vip.message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to "
                           "deallocate, preemption: not eligible due to preemptionPolicy=Never.")
    assert "Preempted" not in sim.event_counts


def test_lower_priority_pod_cannot_take_a_nominated_pods_room():
    """While the preemptor waits to be retried, a lower-priority pod sees the room held for
    it (the two-pass filter with nominated pods) and does not take it."""
    text = node("n1", "2") + priority_class("high", 1000) + priority_class("mid", 500)
    text += pod("low", "1500m", grace=0)
    text += pod("high", "1500m", priority_class="high", arrival=5)
    text += pod("mid", "1", priority_class="mid", arrival=5)
    sim, recs = simulate(text)
    assert recs["default/low"].message == "preempted by default/high"
    assert recs["default/high"].node == "n1"
    assert recs["default/mid"].node is None
    assert recs["default/mid"].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert sim.event_counts["Preempted"] == 1


def test_pod_naming_a_missing_priority_class_stays_pending():
    text = node("n1", "2") + pod("orphan", "1", priority_class="nope") + pod("ok", "1")
    sc = load_scenario_text(text, "test.yaml")
    assert any("no PriorityClass with name nope" in w for w in sc.warnings)
    recs = {r.key: r for r in SimCluster(sc, check=True).run().records}
    orphan = recs["default/orphan"]
    assert orphan.node is None and orphan.attempts == 0
    assert orphan.message == 'pods "orphan" is forbidden: no PriorityClass with name nope was found'
    assert recs["default/ok"].node == "n1"


def test_preemptor_waits_for_its_terminating_victims_without_preempting_more():
    """Retried (after 5 minutes in the unschedulable pool) while its victim still terminates,
    the preemptor is not eligible to preempt again and keeps its nomination."""
    text = node("n1", "2") + priority_class("high", 1000)
    text += pod("low", "2", grace=400) + pod("other", "1", grace=400)
    text = text.replace("cpu: '2', memory", "cpu: '3', memory")
    text += pod("high", "2", priority_class="high", arrival=5)
    sim, recs = simulate(text)
    high = recs["default/high"]
    assert high.node == "n1" and high.time == 405.0
    assert high.attempts == 3
    assert high.message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to "
                            "deallocate, preemption: not eligible due to a terminating pod "
                            "on the nominated node.")
    assert sim.api.deleted == {"default/low": "preempted by default/high"}
    assert sim.event_counts["Preempted"] == 1
