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
the simulator's wall seconds and the load average when the replay ended.
"""

from __future__ import annotations

import argparse
import json
import os
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


def records(spec: OpenbSpec, policy: str) -> tuple[list[str], int, float]:
    sc, trace, _nodes = load_openb(spec)
    result = SimCluster(sc, scheduler_config(policy, trace), seed=spec.seed).run()
    lines = [json.dumps([r.key, r.node, r.time, r.attempts, r.message]) for r in result.records]
    return lines, result.scheduled, result.wall_seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--pods", default="default", help="trace: default, cpu200, ...")
    ap.add_argument("--policy", action="append", help=f"repeatable (default: {POLICIES})")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--every", type=int, default=1, help="keep every N-th node and pod")
    ap.add_argument("--placements", type=Path, help="write DIR/<policy>.jsonl")
    ap.add_argument("--compare", type=Path, help="compare with DIR/<policy>.jsonl")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if args.every > 1:
            data = Path(tmp)
            reduce_trace(args.data, args.pods, args.every, data)
        spec = OpenbSpec(data, args.pods, seed=args.seed)
        status = 0
        for policy in args.policy or POLICIES:
            lines, scheduled, wall = records(spec, policy)
            print(f"{policy}: {scheduled}/{len(lines)} scheduled, {wall:.1f} s, "
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
