"""schedule_one's rules: other schedulers' pods, deleting pods, the rotating start index."""

from __future__ import annotations

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster


def nodes(n: int) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i:03d}}}\n"
        f"status: {{capacity: {{cpu: '4', memory: 8Gi, pods: '110'}}}}\n" for i in range(n))


def pod(name: str, extra_spec: str = "", extra_meta: str = "") -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}{extra_meta}}}\n"
            f"spec: {{containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]"
            f"{extra_spec}}}\n")


def sim(text: str) -> SimCluster:
    return SimCluster(load_scenario_text(text, "t.yaml"), check=True)


def test_pods_for_other_schedulers_are_left_alone():
    s = sim(nodes(2) + pod("mine") + pod("theirs", ", schedulerName: other-scheduler"))
    result = s.run()
    assert [r.key for r in result.records] == ["default/mine"]  # only ours entered the queue
    assert s.pods[next(u for u, p in s.pods.items() if p.name == "theirs")].spec.node_name == ""


def test_deleting_pod_is_skipped():
    s = sim(nodes(1) + pod("gone", extra_meta=", deletionTimestamp: '2024-01-01T00:00:00Z'"))
    result = s.run()
    assert result.records[0].node is None
    assert result.records[0].attempts == 0
    assert result.events.get("FailedScheduling") == 1  # "skip schedule deleting pod"


def test_next_start_node_index_rotates_by_nodes_processed():
    # 200 nodes: adaptive percentage 50 - 200//125 = 49 % -> 98 -> at least 100 to find.
    s = sim(nodes(200) + pod("a") + pod("b") + pod("c"))
    s.load()
    s.run_until_idle()
    # three cycles, each stopping after 100 feasible nodes: 0 -> 100 -> 0 -> 100
    assert s.scheduler.next_start_node_index == 100
    assert s.bound_count == 3


def test_percentage_100_scans_every_node_and_index_stays_put():
    cfg = ("---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
           "percentageOfNodesToScore: 100\n")
    from kubesched.config import load_config

    scen = load_scenario_text(nodes(150) + pod("a") + cfg, "t.yaml")
    s = SimCluster(scen, load_config(scen.config), check=True)
    s.run()
    assert s.scheduler.next_start_node_index == 0  # 150 processed of 150
