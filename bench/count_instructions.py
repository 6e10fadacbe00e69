#!/usr/bin/env python3
"""Instructions executed by the measured phase of ``kubesched bench`` workloads, counted by
valgrind's callgrind: a figure that, unlike wall time on a shared machine, does not move with
the load, for before/after comparisons of the same workloads (docs/performance.md).

    python bench/count_instructions.py SchedulingBasic/500Nodes --src OLD/src --src src

Each workload runs once per ``--src`` tree (a checkout's ``src``), in this process's Python,
under ``valgrind --tool=callgrind --instr-atstart=no``; instrumentation is switched on and off
around the measured phase through the runner's profiler hooks (a small C shim, built here with
``cc``, stands in for cProfile), so setup and init pods are not counted. Needs valgrind (with
its headers: Debian's ``valgrind`` package) and a C compiler.

The measured phase follows the wall clock (the virtual clock, the queue's flush tickers), which
runs about 50 times slower under valgrind; ``--slowdown`` divides the clock the workload reads
by that factor, so flushes come as often per pod as in a native run. Workloads whose retries
follow the clock (Unschedulable, churn) still vary with the load: compare them with care.

A workload named by a scenario file (``*.yaml``, e.g. one ``bench/plan_speed.py
--write-only`` writes) counts ``kubesched plan --expander least-waste`` on it instead: the
plan's own work, after the scenario is loaded (it runs on the virtual clock).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SHIM = """#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("measured"); }
"""

DRIVER = """import cProfile, ctypes, os, sys, time
lib = ctypes.CDLL(sys.argv[1])
slowdown = float(sys.argv[3])
real = time.perf_counter
time.perf_counter = lambda: real() / slowdown
class Toggle:
    def enable(self): lib.cg_start()
    def disable(self): lib.cg_stop()
    def dump_stats(self, path): pass
cProfile.Profile = Toggle
from kubesched.bench.workloads import WORKLOADS
from kubesched.bench.runner import run_workload
r = run_workload(WORKLOADS[sys.argv[2]], profile_path=os.devnull)
print("RESULT", r["scheduled"], r["attempts"])
"""


PLAN_DRIVER = """import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
from kubesched.api.scenario import load_scenario
from kubesched.autoscaler.plan import plan
from kubesched.config import default_config
scen = load_scenario([sys.argv[2]])
config = default_config()
lib.cg_start()
out = plan(scen, config, expander="least-waste")
lib.cg_stop()
print("RESULT", sum(out.add.values()), len(out.pending_after))
"""


def count(workdir: Path, shim: Path, src: str, workload: str, slowdown: float
          ) -> tuple[int, str]:
    out = workdir / "callgrind.out"
    driver = workdir / "driver.py"
    driver.write_text(PLAN_DRIVER if workload.endswith(".yaml") else DRIVER)
    env = {**os.environ, "PYTHONPATH": src, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no",
         f"--callgrind-out-file={out}", sys.executable, str(driver), str(shim), workload,
         str(slowdown)], env=env, capture_output=True, text=True, check=False)
    result = next((line for line in proc.stdout.splitlines() if line.startswith("RESULT")), "")
    totals = [int(line.split()[1]) for f in workdir.glob("callgrind.out*")
              for line in f.read_text(errors="replace").splitlines()
              if line.startswith(("summary:", "totals:"))]
    for f in workdir.glob("callgrind.out*"):
        f.unlink()
    if not totals or not result:
        sys.exit(f"{workload} ({src}): no count\n{proc.stderr[-2000:]}")
    return max(totals), result.removeprefix("RESULT ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="+")
    ap.add_argument("--src", action="append", required=True,
                    help="a checkout's src folder (repeat: one count per tree)")
    ap.add_argument("--slowdown", type=float, default=50.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "shim.c").write_text(SHIM)
        shim = workdir / "shim.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(shim),
                        str(workdir / "shim.c")], check=True)
        # (for a plan: nodes added, pods pending after)
        print("workload\tsrc\tinstructions\tscheduled attempts")
        for w in args.workloads:
            for src in args.src:
                target = os.path.abspath(w) if w.endswith(".yaml") else w
                ir, result = count(workdir, shim, os.path.abspath(src), target, args.slowdown)
                print(f"{w}\t{src}\t{ir}\t{result}", flush=True)


if __name__ == "__main__":
    main()
