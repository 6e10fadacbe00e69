#!/usr/bin/env python3
"""Issue 21's speed target for ``kubesched plan``: 10 000 pending pods over 20 node groups on
a 5 000-node cluster (docs/performance.md, "`kubesched plan` (issue 21)").

    python bench/plan_speed.py                       # write bench/scenarios/plan-1.yaml, time plan
    python bench/plan_speed.py --scale 0.1           # a tenth: 500 nodes, 1 000 pods
    python bench/plan_speed.py --profile plan.prof   # and keep a cProfile of plan's run
    python bench/plan_speed.py --write-only          # the file only

The cluster: ``nodes`` nodes of scheduler_perf's node-default template (4 cpu, 32Gi, 110
pods) in 3 zones, each holding a running pod that requests all its cpu, so no pending pod
fits an existing node and every one needs the node groups. The pending pods: 20 ReplicaSets
of ``pods / 20`` replicas, from scheduler_perf's pod-default (100m, 500Mi) up to 4 cpu /
16Gi; five of them select a ``pool`` label only some groups carry, two tolerate the
``dedicated`` taint of the tainted groups. The 20 groups: 2 to 64 cpu at 2, 4 or 8 Gi per
cpu, in the 3 zones, two tainted, one with a ``disk: ssd`` label, prices by size and kind,
``maxSize`` 2 000 (no cap binds).

The timing is plan's own work in this process (the scenario parsed first, not counted):
CPU seconds (``resource.getrusage``) and wall, with the load average before and after; the
machine is shared, so quote CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

ZONES = ("zone1", "zone2", "zone3")
GROUP_LABEL = "kubesched.io/node-group"

# (name, cpu, GiB per cpu, zone index, taint, extra labels, price per node-hour)
GROUPS: list[tuple[str, int, int, int, bool, dict[str, str], float]] = [
    (f"{kind}-{cpu}", cpu, per, i % 3, kind == "dedicated",
     {"pool": "ssd"} if (kind, cpu) == ("general", 16) else {}, round(cpu * rate, 3))
    for i, (kind, per, rate, cpu) in enumerate(
        [(k, p, r, c) for k, p, r in (("compute", 2, 0.034), ("general", 4, 0.048),
                                      ("memory", 8, 0.063))
         for c in (2, 4, 8, 16, 32, 64)] + [("dedicated", 4, 0.06, 16),
                                              ("dedicated", 4, 0.06, 32)])
]

# (cpu milli, memory MiB, nodeSelector, tolerates the dedicated taint)
POD_SHAPES: list[tuple[int, int, dict[str, str], bool]] = [
    (100, 500, {}, False), (100, 500, {}, False), (250, 512, {}, False),
    (250, 1024, {}, False), (500, 1024, {}, False), (500, 2048, {}, False),
    (1000, 2048, {}, False), (1000, 4096, {}, False), (1500, 3072, {}, False),
    (2000, 4096, {}, False), (2000, 8192, {}, False), (3000, 6144, {}, False),
    (4000, 16384, {}, False), (200, 4096, {}, False), (750, 1536, {}, True),
    (1000, 1024, {"pool": "ssd"}, False), (500, 512, {"pool": "ssd"}, False),
    (2000, 2048, {"pool": "ssd"}, True), (300, 600, {"pool": "ssd"}, False),
    (600, 6000, {"pool": "ssd"}, False),
]


def node_group(name: str, cpu: int, per: int, zone: int, tainted: bool,
               labels: dict[str, str], price: float) -> dict[str, Any]:
    template: dict[str, Any] = {
        "metadata": {"labels": {"topology.kubernetes.io/zone": ZONES[zone],
                                "node.kubernetes.io/instance-type": name, **labels}},
        "status": {"capacity": {"cpu": str(cpu), "memory": f"{cpu * per}Gi",
                                "pods": "110"}}}
    if tainted:
        template["spec"] = {"taints": [{"key": "dedicated", "value": "batch",
                                        "effect": "NoSchedule"}]}
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "NodeGroup",
            "metadata": {"name": name},
            "spec": {"minSize": 0, "maxSize": 2000, "price": price, "template": template}}


def replica_set(i: int, replicas: int) -> dict[str, Any]:
    cpu, mem, selector, tolerates = POD_SHAPES[i]
    spec: dict[str, Any] = {"containers": [{
        "name": "pause", "image": "registry.k8s.io/pause:3.10.1",
        "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}]}
    if selector:
        spec["nodeSelector"] = dict(selector)
    if tolerates:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch",
                                "effect": "NoSchedule"}]
    name = f"app-{i:02d}"
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def documents(nodes: int, pods: int) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"scheduler-perf-{i:05d}"
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name,
                                  "labels": {"kubernetes.io/hostname": name,
                                             "topology.kubernetes.io/zone": ZONES[i % 3]}},
                     "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                                "conditions": [{"status": "True", "type": "Ready"}]}})
    for i in range(nodes):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"running-{i:05d}", "namespace": "default",
                                  "labels": {"app": "running"}},
                     "spec": {"nodeName": f"scheduler-perf-{i:05d}", "containers": [{
                         "name": "pause", "image": "registry.k8s.io/pause:3.10.1",
                         "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}}]},
                     "status": {"phase": "Running"}})
    docs.extend(node_group(*g) for g in GROUPS)
    per, extra = divmod(pods, len(POD_SHAPES))
    docs.extend(replica_set(i, per + (1 if i < extra else 0)) for i in range(len(POD_SHAPES)))
    return docs


def write(path: Path, nodes: int, pods: int) -> None:
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        yaml.dump_all(documents(nodes, pods), f,
                      Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="fraction of 5 000 nodes and 10 000 pods (default 1)")
    ap.add_argument("--file", type=Path, help="scenario file (default bench/scenarios/…)")
    ap.add_argument("--expander", default="least-waste")
    ap.add_argument("--profile", type=Path, help="write a cProfile of plan's run here")
    ap.add_argument("--write-only", action="store_true")
    ap.add_argument("--regenerate", action="store_true")
    args = ap.parse_args(argv)
    nodes, pods = round(5000 * args.scale), round(10000 * args.scale)
    path = args.file or Path(__file__).parent / "scenarios" / f"plan-{args.scale:g}.yaml"
    if args.regenerate or not path.exists():
        write(path, nodes, pods)
    if args.write_only:
        print(path)
        return 0

    from kubesched.api.scenario import load_scenario
    from kubesched.autoscaler.plan import plan
    from kubesched.config import default_config

    scen = load_scenario([str(path)])
    config = default_config()
    load0 = os.getloadavg()
    c0, w0 = cpu_seconds(), time.perf_counter()
    prof = cProfile.Profile() if args.profile else None
    if prof:
        prof.enable()
    out = plan(scen, config, expander=args.expander)
    if prof:
        prof.disable()
        prof.dump_stats(str(args.profile))
    cpu, wall = cpu_seconds() - c0, time.perf_counter() - w0
    load1 = os.getloadavg()
    print(json.dumps({
        "file": str(path), "nodes": nodes, "pending": pods, "groups": len(GROUPS),
        "expander": args.expander, "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2),
        "loadavg_before": load0, "loadavg_after": load1,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "rounds": out.rounds, "add": out.as_json()["add"],
        "cannot_help": len(out.cannot_help), "pending_after": len(out.pending_after)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
