#!/usr/bin/env python3
"""Issue 22, point 4: how load and ``simulate`` grow with the cluster.

For each size, a minimal dump (``bench/make_large_scenario.py --detail minimal``: scheduler_perf's
node and pod, 10 pods a node, ``--pending`` of them not yet bound) is written once into
``--dir``, then one fresh interpreter loads it (``load_scenario``), builds the simulator
(``SimCluster``) and runs it, and reports each phase's CPU time (the process's, so the other
work on a shared machine inflates it less than the wall), the wall, and the peak RSS.

    python bench/growth.py --nodes 1000 5000 20000 --pending 1000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import json, resource, sys, time
from kubesched.collector import settled, tune_for_bulk
tune_for_bulk()  # as kubesched's commands collect garbage
from kubesched.api.scenario import load_scenario
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import default_config
def now():
    return time.process_time(), time.perf_counter()
c0, w0 = now()
scen = load_scenario([sys.argv[1]])
settled()  # as the commands do after the load and after building the simulator
c1, w1 = now()
sim = SimCluster(scen, default_config())
settled()
c2, w2 = now()
result = sim.run()
c3, w3 = now()
print(json.dumps({"load_cpu": c1 - c0, "load_wall": w1 - w0, "setup_cpu": c2 - c1,
                  "setup_wall": w2 - w1, "run_cpu": c3 - c2, "run_wall": w3 - w2,
                  "scheduled": result.scheduled,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--pods-per-node", type=int, default=10)
    ap.add_argument("--pending", type=int, default=1000,
                    help="pods not yet bound, the same at every size (the run schedules them)")
    ap.add_argument("--dir", default="/tmp", help="where the dumps are written (and kept)")
    args = ap.parse_args()
    rows = []
    for n in args.nodes:
        path = os.path.join(args.dir, f"growth-{n}-{args.pods_per_node}-{args.pending}.yaml")
        if not os.path.exists(path):
            print(f"writing {path} ...", file=sys.stderr, flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, "make_large_scenario.py"),
                            "--nodes", str(n), "--pods-per-node", str(args.pods_per_node),
                            "--pending", str(args.pending), "--detail", "minimal", "-o", path],
                           check=True)
        print(f"measuring {n} nodes ...", file=sys.stderr, flush=True)
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, "-c", CHILD, path], check=True,
                             capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r.update(nodes=n, pods=n * args.pods_per_node, mb=os.path.getsize(path) / 1e6,
                 load=(load, os.getloadavg()[0]))
        rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    print("| nodes | pods (pending) | file | load CPU | setup CPU | run CPU | peak RSS "
          "| load avg |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['nodes']:,} | {r['pods']:,} ({args.pending:,}) | {r['mb']:.1f} MB "
              f"| {r['load_cpu']:.1f} s | {r['setup_cpu']:.1f} s | {r['run_cpu']:.1f} s "
              f"| {r['peak_rss_mib']:.0f} MiB | {r['load'][0]:.1f}–{r['load'][1]:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
