"""scheduler_perf-shaped scenario files for ``kubesched simulate`` (compared with upstream's
own run of the same files).

A file holds ``nodes`` nodes of scheduler_perf's node-default template in ``zones`` zones
(``topology.kubernetes.io/zone`` = ``zone1`` … round-robin, so the node-affinity template's
``In [zone1, zone2]`` selects two zones out of three), ``running`` pods already bound (the
shape's init-pod template, as scheduler_perf's init pods for that workload) and ``pending``
pods of the shape's measured template, then optionally a KubeSchedulerConfiguration with
``percentageOfNodesToScore``.

Running pods are bound round-robin over the nodes their template allows (the node-affinity
shape: zone1 and zone2 nodes only; with no more running pods than nodes the anti-affinity shape
gets one per node), so the file is a state the scheduler could have reached.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kubesched.bench.workloads import ZONE_LABEL, make_pod, node_default


@dataclass(frozen=True)
class Shape:
    running_template: str
    pending_template: str
    running_namespace: str
    pending_namespace: str
    running_zones: tuple[str, ...] | None = None  # zones running pods may be bound in

    def describe(self) -> str:
        if self.running_template == self.pending_template:
            return self.pending_template
        return f"{self.running_template} running, {self.pending_template} pending"


SHAPES: dict[str, Shape] = {
    "basic": Shape("pod-default", "pod-default", "namespace-1", "namespace-2"),
    "node-affinity": Shape("pod-with-node-affinity", "pod-with-node-affinity", "namespace-1",
                           "namespace-2", running_zones=("zone1", "zone2")),
    "spread": Shape("pod-default", "pod-with-topology-spreading", "namespace-1",
                    "namespace-2"),
    "anti-affinity": Shape("pod-with-pod-anti-affinity", "pod-with-pod-anti-affinity",
                           "sched-0", "sched-1"),
    "affinity": Shape("pod-with-pod-affinity", "pod-with-pod-affinity", "sched-0", "sched-1"),
    "preferred-affinity": Shape("pod-with-preferred-pod-affinity",
                                "pod-with-preferred-pod-affinity", "sched-0", "sched-1"),
}


@dataclass(frozen=True)
class Target2Row:
    """One row of the simulate-versus-upstream table: what upstream v1.30's own code needed,
    built from source and run in-process with a fake API client on one of these machines."""

    name: str
    title: str
    shape: str
    running: int
    pending: int
    percentage: int
    upstream_pods_per_second: float
    upstream_wall_seconds: float
    nodes: int = 5000
    zones: int = 3

    @property
    def filename(self) -> str:
        return f"{self.name}.yaml"


TARGET2: list[Target2Row] = [
    Target2Row("basic-pct10", "basic, pct 10", "basic", 1000, 3000, 10, 620, 5.6),
    Target2Row("basic-pct100", "basic, pct 100", "basic", 1000, 1000, 100, 100, 10.8),
    Target2Row("node-affinity", "required node affinity (zone In [1, 2])", "node-affinity",
               1000, 3000, 10, 415, 8.4),
    Target2Row("spread", "zone spread, maxSkew 5, DoNotSchedule", "spread", 1000, 3000, 10,
               153, 20.5),
    Target2Row("anti-affinity", "required pod anti-affinity on hostname", "anti-affinity",
               1000, 1000, 10, 138, 8.2),
    Target2Row("affinity", "required pod affinity on zone", "affinity", 1000, 1000, 10, 172,
               6.7),
    Target2Row("preferred-affinity", "preferred pod affinity on hostname",
               "preferred-affinity", 1000, 1000, 10, 249, 4.8),
]


def scenario_documents(nodes: int, running: int, pending: int, *, shape: str = "basic",
                       zones: int = 3, percentage: int | None = None) -> list[dict[str, Any]]:
    """The documents of a scenario file (see the module docstring)."""
    sh = SHAPES[shape]
    zone_names = [f"zone{z + 1}" for z in range(zones)]
    node_docs = [node_default(i, zone_names[i % zones] if zones else None)
                 for i in range(nodes)]
    docs: list[dict[str, Any]] = list(node_docs)
    allowed = [d["metadata"]["name"] for d in node_docs
               if sh.running_zones is None
               or d["metadata"]["labels"].get(ZONE_LABEL) in sh.running_zones]
    if running and not allowed:
        raise ValueError(f"shape {shape}: no node is allowed for the running pods "
                         f"(zones {sh.running_zones})")
    for i in range(running):
        d = make_pod(sh.running_template, i, sh.running_namespace)
        d["spec"]["nodeName"] = allowed[i % len(allowed)]
        d["status"] = {"phase": "Running"}
        docs.append(d)
    docs.extend(make_pod(sh.pending_template, i, sh.pending_namespace) for i in range(pending))
    if percentage is not None:
        docs.append({"apiVersion": "kubescheduler.config.k8s.io/v1",
                     "kind": "KubeSchedulerConfiguration",
                     "percentageOfNodesToScore": percentage})
    return docs


def write_scenario(path: str, nodes: int, running: int, pending: int,
                   percentage: int | None = None, *, shape: str = "basic",
                   zones: int = 3) -> None:
    """Write a scheduler_perf-shaped scenario file (multi-document YAML)."""
    import yaml

    docs = scenario_documents(nodes, running, pending, shape=shape, zones=zones,
                              percentage=percentage)
    with open(path, "w") as f:
        yaml.dump_all(docs, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                      sort_keys=False)


def time_simulate(path: str) -> dict[str, Any]:
    """``kubesched simulate``'s work on one file, in-process, split into parse (load the
    scenario and configuration), setup (the simulator) and run (nodes and running pods into
    the cache, then scheduling)."""
    from kubesched.api.scenario import load_scenario
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.config import default_config, load_config

    t0 = time.perf_counter()
    scen = load_scenario([path])
    config = (load_config(scen.config, scen.config_source or path)
              if scen.config is not None else default_config())
    t1 = time.perf_counter()
    sim = SimCluster(scen, config)
    t2 = time.perf_counter()
    result = sim.run()
    t3 = time.perf_counter()
    pending = sum(1 for p in scen.pods if not p.spec.node_name)
    return {"parse_seconds": t1 - t0, "setup_seconds": t2 - t1, "run_seconds": t3 - t2,
            "pending": pending, "scheduled": result.scheduled,
            "pods_per_second": result.scheduled / (t3 - t2) if t3 > t2 else 0.0}
