"""``kubesched compare``: two configurations, or two seeds, side by side."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubesched.api.scenario import load_scenario_text
from kubesched.cli import main
from kubesched.compare import fragmentation

GPU_NODE = """---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{capacity: {{cpu: "8", memory: 16Gi, pods: "110", nvidia.com/gpu: "4"}}}}
"""


def gpu_pod(name: str, gpus: int, arrival: float = 0, cpu: str = "1") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{kubesched.io/arrival: '{arrival}'}}}}
spec:
  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: "{gpus}"}},
                requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}]
"""


SCENARIO = (GPU_NODE.format(name="n1") + GPU_NODE.format(name="n2")
            + "".join(gpu_pod(f"small-{i}", 1) for i in range(4))
            + gpu_pod("whole", 4, arrival=1))

MOST = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: nvidia.com/gpu, weight: 1}]
"""
LEAST = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    (tmp_path / "least.yaml").write_text(LEAST)
    (tmp_path / "most.yaml").write_text(MOST)
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "s.yaml"), *args])
    return r.exit_code, r.output


def test_two_configurations(tmp_path: Path) -> None:
    code, out = run(tmp_path, "--config", str(tmp_path / "least.yaml"), "--config",
                    str(tmp_path / "most.yaml"), "-o", "json")
    assert code == 0, out
    doc = json.loads(out)
    a, b = doc["sides"]
    assert (a["name"], b["name"]) == ("least.yaml", "most.yaml")
    # LeastAllocated spreads the four 1-GPU pods 2 + 2: the 4-GPU pod fits nowhere;
    # MostAllocated packs them on one node and leaves the other whole
    assert (a["scheduled"], a["pending"], b["scheduled"], b["pending"]) == (4, 1, 5, 0)
    assert doc["pending_only"] == {"a": ["default/whole"], "b": []}
    assert a["utilisation"]["nvidia.com/gpu"] == 50.0
    assert b["utilisation"]["nvidia.com/gpu"] == 100.0
    # the typical GPU pod (1 GPU, 1 CPU, 1 GiB) fits in what either node has left
    assert a["fragmentation"] == {"cpu": 0.0, "nvidia.com/gpu": 0.0}
    assert b["fragmentation"] == {"cpu": 0.0, "nvidia.com/gpu": None}  # no GPU left free
    nodes_a = {p["pod"]: p["a"] for p in doc["placed_differently"]}
    assert set(nodes_a) <= {f"default/small-{i}" for i in range(4)}

    code, out = run(tmp_path, "--config", str(tmp_path / "least.yaml"), "--config",
                    str(tmp_path / "most.yaml"))
    assert code == 0, out
    assert "nvidia.com/gpu fragmentation" in out
    assert "1 pod(s) pending in A only: default/whole" in out


def test_two_seeds_keep_the_controllers_names(tmp_path: Path) -> None:
    deploy = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
    (tmp_path / "d.yaml").write_text(GPU_NODE.format(name="n1") + GPU_NODE.format(name="n2")
                                     + deploy)
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "d.yaml"), "--seed", "1",
                                  "--seed", "2", "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert [s["name"] for s in doc["sides"]] == ["seed 1", "seed 2"]
    assert doc["pending_only"] == {"a": [], "b": []}
    # same pods on both sides: only ties (the seed's business) can differ
    for row in doc["placed_differently"]:
        assert row["pod"].startswith("default/web-")


def test_needs_two_sides(tmp_path: Path) -> None:
    code, out = run(tmp_path, "--config", str(tmp_path / "least.yaml"))
    assert code == 2
    assert "compare needs two sides" in out


def test_fragmentation_counts_free_gpus_the_typical_pod_cannot_use() -> None:
    from kubesched.backends.sim.cluster import SimCluster

    cpu_hog = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: hog}\nspec:\n  containers: "
               "[{name: c, image: x, resources: {requests: {cpu: 7500m}}}]\n")
    # the hog leaves 0.5 CPU on its node: the GPU pods (median: 1 GPU, 2 CPUs) all go to
    # the other, whose GPUs they use up; the hog's node keeps 4 GPUs no GPU pod can use
    text = (GPU_NODE.format(name="n1") + GPU_NODE.format(name="n2") + cpu_hog
            + gpu_pod("b", 2, cpu="2") + gpu_pod("c", 1, cpu="2") + gpu_pod("d", 1, cpu="2"))
    sim = SimCluster(load_scenario_text(text, "s.yaml"))
    sim.run()
    nodes = list(sim.scheduler.cache.nodes.values())
    assert sorted(len(ni.pods) for ni in nodes) == [1, 3]
    assert fragmentation(nodes, sim.scenario.pods, "nvidia.com/gpu") == 100.0
    assert fragmentation(nodes, sim.scenario.pods, "example.com/none") is None
