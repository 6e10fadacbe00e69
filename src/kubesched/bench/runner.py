"""A minimal scheduler_perf-style benchmark, in-process on the simulator.

SchedulingBasic: nodes of 4 CPU / 32 Gi / 110 pods in three zones, init pods then measured
pods of 100m / 500 Mi (scheduler_perf's node-default and pod-default templates). Bindings are
applied inline by the simulator; throughput is measured pods over the wall time spent
scheduling them, sampled every second as scheduler_perf's throughputCollector does.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.scenario import Scenario
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import default_config


@dataclass(frozen=True)
class Workload:
    nodes: int
    init_pods: int
    measured_pods: int
    threshold: float = 0.0  # upstream's CI threshold at this size (0: none)


WORKLOADS: dict[str, Workload] = {
    "SchedulingBasic/500Nodes": Workload(500, 500, 1000),
    "SchedulingBasic/5000Nodes": Workload(5000, 1000, 10000, threshold=680),
}


def node_default(i: int) -> dict:
    name = f"node-{i}"
    cap = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": f"zone{i % 3 + 1}"}},
            "status": {"capacity": cap, "allocatable": cap}}


def pod_default(prefix: str, i: int, namespace: str = "sched-0") -> dict:
    res = {"cpu": "100m", "memory": "500Mi"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "namespace": namespace},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"requests": res, "limits": res}}]}}


def write_scenario(path: str, nodes: int, running: int, pending: int,
                   percentage: int | None = None) -> None:
    """A scheduler_perf-shaped scenario file: ``running`` pods already bound round-robin,
    ``pending`` pods to schedule, and optionally a configuration with
    percentageOfNodesToScore."""
    import yaml

    docs: list[dict] = [node_default(i) for i in range(nodes)]
    for i in range(running):
        d = pod_default("init", i)
        d["spec"]["nodeName"] = f"node-{i % nodes}"
        docs.append(d)
    docs.extend(pod_default("pod", i) for i in range(pending))
    if percentage is not None:
        docs.append({"apiVersion": "kubescheduler.config.k8s.io/v1",
                     "kind": "KubeSchedulerConfiguration",
                     "percentageOfNodesToScore": percentage})
    with open(path, "w") as f:
        yaml.dump_all(docs, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                      sort_keys=False)


def percentile(sorted_vals: list[float], p: float) -> float:
    if not sorted_vals:
        return 0.0
    k = max(0, math.ceil(len(sorted_vals) * p / 100) - 1)
    return sorted_vals[k]


def run_workload(name: str, w: Workload) -> dict:
    scenario = Scenario(nodes=[parse_node(node_default(i)) for i in range(w.nodes)])
    sim = SimCluster(scenario, default_config())
    sim.load()
    sim.add_pending([parse_pod(pod_default("init", i)) for i in range(w.init_pods)], at=0.0)
    sim.run_until_idle()
    measured = [parse_pod(pod_default("pod", i)) for i in range(w.measured_pods)]
    base = sim.bound_count
    samples: list[float] = []
    last = [time.perf_counter(), 0]

    def sample(done: int, _total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= 1.0:
            samples.append((done - base - last[1]) / (now - last[0]))
            last[0], last[1] = now, done - base

    sim.add_pending(measured, at=sim.clock.now())
    t0 = time.perf_counter()
    last[0] = t0
    sim.run_until_idle(sample)
    elapsed = time.perf_counter() - t0
    scheduled = sim.bound_count - base
    avg = scheduled / elapsed if elapsed > 0 else 0.0
    ordered = sorted(samples)
    return {
        "workload": name, "nodes": w.nodes, "init_pods": w.init_pods,
        "measured_pods": w.measured_pods, "scheduled": scheduled,
        "seconds": round(elapsed, 3), "pods_per_second": round(avg, 1),
        "throughput_p50": round(percentile(ordered, 50), 1),
        "throughput_p99": round(percentile(ordered, 99), 1),
        "threshold": w.threshold,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def run_workloads(names: list[str], echo: Callable[[str], None] = print) -> list[dict]:
    out = []
    for name in names:
        r = run_workload(name, WORKLOADS[name])
        verdict = ""
        if r["threshold"]:
            side = "above" if r["pods_per_second"] > r["threshold"] else "BELOW"
            verdict = f"  ({side} upstream's threshold {r['threshold']:g})"
        echo(f"{name}: {r['scheduled']}/{r['measured_pods']} pods in {r['seconds']} s = "
             f"{r['pods_per_second']} pods/s, peak RSS {r['peak_rss_mib']} MiB{verdict}")
        out.append(r)
    return out
