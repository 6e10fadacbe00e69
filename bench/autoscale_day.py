"""A day of a cluster with cluster-autoscaler (issue 21's speed target: "a day of virtual time
with autoscaling (1 000 nodes, 50 000 pod arrivals with durations) in under 5 minutes";
docs/performance.md, "simulate with autoscaling").

    python bench/autoscale_day.py day.json                   # write the scenario
    python bench/autoscale_day.py day.json --pods 5000 --initial 10   # a tenth
    /usr/bin/time -v kubesched simulate --quiet --max-nodes-total 1000 day.json
    python bench/autoscale_day.py day.json --run --max-nodes-total 1000 [--profile F]
    python bench/autoscale_day.py storm.json --pods 1000 --initial 40 --mean-duration 1800 \
        --storm 600                                          # the retry storm alone

``--run`` writes the scenario, then runs ``kubesched simulate --quiet --max-nodes-total N``
on it in this process and prints its CPU seconds (``resource.getrusage``: loading included),
wall seconds and the load average before and after (the machine may be shared: quote CPU).

The scenario (JSON: it parses faster than YAML at this size): ``--initial`` nodes of the
"general" group (8 cpu / 32Gi) at the start; three NodeGroups — general (8 cpu / 32Gi,
minSize = the initial nodes, 0.40 per node-hour), highmem (8 cpu / 64Gi, 0.60) and compute
(16 cpu / 32Gi, 0.70), 600 nodes each at most, 120 s to provision; ``--pods`` bare pods
(annotated safe-to-evict, so cluster-autoscaler may move them) arriving over 24 h at a rate
that rises and falls once a day (0.2× to 1.8× the mean), each running an exponentially
distributed time (mean ``--mean-duration`` s, 60 s to 8 h), requesting 250m–4 cpu and
512Mi–16Gi. With the defaults the load peaks above what 1 000 nodes hold, so
``--max-nodes-total 1000`` caps the scale-up at its peak.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import random
import resource
import time

GROUP_LABEL = "kubesched.io/node-group"
DAY = 86400.0
GROUPS = [("general", "8", "32Gi", 0.40), ("highmem", "8", "64Gi", 0.60),
          ("compute", "16", "32Gi", 0.70)]
SHAPES = [("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi"), ("1", "4Gi"), ("2", "4Gi"),
          ("2", "8Gi"), ("4", "8Gi"), ("1", "16Gi")]


def scenario(pods: int, initial: int, mean_duration: float, seed: int,
             storm: float | None = None) -> list[dict[str, object]]:
    rng = random.Random(seed)
    docs: list[dict[str, object]] = []
    for name, cpu, mem, price in GROUPS if storm is None else ():
        docs.append({"apiVersion": "kubesched.io/v1alpha1", "kind": "NodeGroup",
                     "metadata": {"name": name},
                     "spec": {"minSize": initial if name == "general" else 0, "maxSize": 600,
                              "price": price, "provisioningDelaySeconds": 120,
                              "template": {"status": {"capacity": {
                                  "cpu": cpu, "memory": mem, "pods": "110"}}}}})
    for i in range(initial):
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"general-{i}", "labels": {GROUP_LABEL: "general"}},
                     "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})
    # arrival times: a non-homogeneous Poisson process thinned from 1.8x the mean rate (or,
    # for a storm, uniform over its window)
    mean_rate = pods / DAY
    times: list[float] = [] if storm is None else [rng.uniform(0, storm) for _ in range(pods)]
    t = 0.0
    while len(times) < pods:
        t += rng.expovariate(1.8 * mean_rate)
        if t >= DAY:
            t = 0.0
            continue
        if rng.random() < (1 + 0.8 * math.sin(2 * math.pi * t / DAY - math.pi / 2)) / 1.8:
            times.append(t)
    times.sort()
    for i, at in enumerate(times):
        cpu, mem = SHAPES[rng.randrange(len(SHAPES))]
        duration = min(max(rng.expovariate(1 / mean_duration), 60.0), 8 * 3600.0)
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"job-{i:05d}", "namespace": "default",
                                  "annotations": {
                                      "kubesched.io/arrival": f"{at:.1f}",
                                      "kubesched.io/duration": f"{duration:.0f}",
                                      "cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}},
                     "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                         "requests": {"cpu": cpu, "memory": mem}}}]}})
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path")
    ap.add_argument("--pods", type=int, default=50_000)
    ap.add_argument("--initial", type=int, default=100)
    ap.add_argument("--mean-duration", type=float, default=7200.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--run", action="store_true", help="then simulate it, timed")
    ap.add_argument("--max-nodes-total", type=int, default=1000)
    ap.add_argument("--profile", help="with --run: write a cProfile of the run here")
    ap.add_argument("--storm", type=float, metavar="SECONDS",
                    help="no NodeGroups (the --initial nodes only) and every pod arriving "
                         "within this many seconds: the retry storm alone")
    a = ap.parse_args()
    with open(a.path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List",
                   "items": scenario(a.pods, a.initial, a.mean_duration, a.seed,
                                     a.storm)}, f)
    if a.run:
        run(a.path, a.max_nodes_total, a.profile)


def run(path: str, max_nodes_total: int, profile: str | None) -> None:
    from kubesched.cli import main as cli

    def cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime

    load0 = os.getloadavg()
    c0, w0 = cpu(), time.perf_counter()
    prof = cProfile.Profile() if profile else None
    if prof:
        prof.enable()
    try:
        cli(["simulate", "--quiet", "--max-nodes-total", str(max_nodes_total), path],
            standalone_mode=False)
    finally:
        if prof:
            prof.disable()
            prof.dump_stats(profile)
    print(json.dumps({"file": path, "cpu_seconds": round(cpu() - c0, 2),
                      "wall_seconds": round(time.perf_counter() - w0, 2),
                      "loadavg_before": load0, "loadavg_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
