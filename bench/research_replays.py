"""Time replays of an openb GPU trace and check that two versions of kubesched place every
pod alike (docs/performance.md, "Research replays").

    PYTHONPATH=src python bench/research_replays.py                      # full default trace
    PYTHONPATH=src python bench/research_replays.py --every 4 --policy BestFit --policy FGD
    PYTHONPATH=src python bench/research_replays.py --every 4 --placements /tmp/a   # write
    PYTHONPATH=src python bench/research_replays.py --every 4 --compare /tmp/a       # check

``--every N`` keeps every N-th node and every N-th pod of the trace files (the reduced trace:
N = 4 gives 304 nodes and 2679 pods after inflation) in a temporary folder. ``--placements
DIR`` writes each policy's records (pod, node, time, attempts, message: everything the
placements log holds) as ``DIR/<policy>.jsonl``; ``--compare DIR`` reads them back and exits 1
naming the first pod that differs. Each line printed gives the policy, the pods scheduled,
the simulator's wall seconds, the process's CPU seconds (``getrusage``: loading the trace,
the run) and the load average when the replay ended. ``--ratio`` and ``--tiebreak`` pick
the sweep's other axes; ``--no-memo`` runs without replaying failed
attempts (scheduler/failures.py), to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

from kubesched.backends.sim.cluster import SimCluster
from kubesched.research.openb import OpenbSpec, load_openb
from kubesched.research.run import scheduler_config

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alibaba-gpu-v2023"
POLICIES = ("BestFit", "FGD", "Random")


def reduce_trace(data: Path, pods: str, every: int, out: Path) -> None:
    """Every ``every``-th row of the GPU node list and of the pod list, headers kept."""
    for name in ("openb_node_list_gpu_node.csv", f"openb_pod_list_{pods}.csv"):
        lines = (data / name).read_text(encoding="utf-8").splitlines(keepends=True)
        (out / name).write_text(lines[0] + "".join(lines[1::every]), encoding="utf-8")


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def records(spec: OpenbSpec, policy: str, tiebreak: str = "simulator", memo: bool = True
            ) -> tuple[list[str], int, float, float, float]:
    """The run's records, pods scheduled, its wall seconds, and the CPU seconds of loading
    the trace and of the run."""
    c0 = cpu_seconds()
    sc, trace, _nodes = load_openb(spec)
    cfg = scheduler_config(policy, trace, tiebreak=tiebreak)
    c1 = cpu_seconds()
    sim = SimCluster(sc, cfg, seed=spec.seed)
    if not memo:
        sim.scheduler.failures.key = lambda *_: None  # type: ignore[method-assign]
    result = sim.run()
    c2 = cpu_seconds()
    lines = [json.dumps([r.key, r.node, r.time, r.attempts, r.message]) for r in result.records]
    return lines, result.scheduled, result.wall_seconds, c1 - c0, c2 - c1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--pods", default="default", help="trace: default, cpu200, ...")
    ap.add_argument("--policy", action="append", help=f"repeatable (default: {POLICIES})")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--ratio", type=float, default=1.3)
    ap.add_argument("--tiebreak", default="simulator", choices=("simulator", "uniform"))
    ap.add_argument("--no-memo", action="store_true", help="without replaying failed attempts")
    ap.add_argument("--every", type=int, default=1, help="keep every N-th node and pod")
    ap.add_argument("--placements", type=Path, help="write DIR/<policy>.jsonl")
    ap.add_argument("--compare", type=Path, help="compare with DIR/<policy>.jsonl")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if args.every > 1:
            data = Path(tmp)
            reduce_trace(args.data, args.pods, args.every, data)
        spec = OpenbSpec(data, args.pods, ratio=args.ratio, seed=args.seed)
        status = 0
        for policy in args.policy or POLICIES:
            lines, scheduled, wall, load_cpu, run_cpu = records(spec, policy, args.tiebreak,
                                                                not args.no_memo)
            print(f"{policy}: {scheduled}/{len(lines)} scheduled, {wall:.1f} s, CPU "
                  f"{load_cpu:.1f} s loading + {run_cpu:.1f} s run, "
                  f"load average {os.getloadavg()[0]:.1f}", flush=True)
            if args.placements is not None:
                args.placements.mkdir(parents=True, exist_ok=True)
                (args.placements / f"{policy}.jsonl").write_text("\n".join(lines) + "\n")
            if args.compare is not None:
                want = (args.compare / f"{policy}.jsonl").read_text().splitlines()
                if want != lines:
                    pairs = enumerate(zip(want, lines, strict=False))
                    k = next((i for i, (a, b) in pairs if a != b), min(len(want), len(lines)))
                    print(f"  differs at record {k}: {want[k:k + 1]} != {lines[k:k + 1]}")
                    status = 1
                else:
                    print("  placements identical")
        return status


if __name__ == "__main__":
    sys.exit(main())
