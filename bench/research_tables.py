"""The tables of docs/research.md's grid (issue 24) from a sweep's results and curves.

    python bench/research_tables.py docs/fgd-results.csv [--sweep examples/fgd.yaml]
        [--before OLD.csv]

Prints Markdown: per trace, the simulator's tie-break at both arrival levels beside the
authors' artifact results (100 − their column "100" and "130", seeds 42–51), with the 130 %
runs' curves read at 100 % beside the 100 % runs' ends; then the tie-break's sensitivity
(seeds both tie-breaks ran); with ``--before``, how many of its rows the new results repeat
exactly (same trace, policy, seed, level and tie-break: the same unallocated GPU %).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

from kubesched.research.sweepfile import load_sweep

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data" / "alibaba-gpu-v2023"
Key = tuple[str, str, float, str]  # trace, policy, ratio, tiebreak


def read(results: Path) -> tuple[dict[Key, dict[int, float]], dict[Key, dict[int, float]]]:
    """Unallocated GPU % per (trace, policy, ratio, tiebreak) and seed; and the curves'
    unallocated % at 100 % arrived, likewise."""
    ends: dict[Key, dict[int, float]] = defaultdict(dict)
    with results.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["scenario"], row["policy"], float(row["ratio"]), row["tiebreak"])
            ends[key][int(row["seed"])] = float(row["unallocated_gpu_pct"])
    at100: dict[Key, dict[int, float]] = defaultdict(dict)
    curves = results.with_name(results.stem + ".curves.jsonl")
    if curves.exists():
        for line in curves.read_text(encoding="utf-8").splitlines():
            c = json.loads(line)
            levels = dict(zip(c["arrived_pct"], c["allocated_pct"], strict=True))
            if 100 in levels:
                key = (c["scenario"], c["policy"], float(c["ratio"]), c["tiebreak"])
                at100[key][int(c["seed"])] = round(100.0 - levels[100], 2)
    return ends, at100


def cell(values: dict[int, float], paper: float | None, seeds: list[int]) -> str:
    vs = [values[s] for s in seeds if s in values]
    if not vs:
        return "—"
    sd = statistics.stdev(vs) if len(vs) > 1 else 0.0
    delta = f" ({statistics.fmean(vs) - paper:+.2f})" if paper is not None else ""
    return f"**{statistics.fmean(vs):.2f}** ± {sd:.2f}{delta}" + (
        f" [{len(vs)} seeds]" if len(vs) != len(seeds) else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--sweep", default=str(HERE.parent / "examples" / "fgd.yaml"))
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--before", type=Path, help="an earlier results file to compare with")
    args = ap.parse_args()
    sweep = load_sweep(args.sweep, args.data)
    ends, at100 = read(args.results)
    seeds = sweep.seeds
    for trace in (t.name for t in sweep.traces):
        print(f"\n**{trace}** (simulator's tie-break, seeds {seeds[0]}–{seeds[-1]})\n")
        print("| policy | authors at 100 % | 100 % runs (Δ) | 130 % runs read at 100 % (Δ) "
              "| authors at 130 % | 130 % runs (Δ) |")
        print("|---|---|---|---|---|---|")
        for pol in sweep.policies:
            p100 = sweep.paper_value(trace, 1.0, pol)
            p130 = sweep.paper_value(trace, 1.3, pol)
            print(f"| {pol} | {p100:.3f} | "
                  f"{cell(ends[(trace, pol, 1.0, 'simulator')], p100, seeds)} | "
                  f"{cell(at100[(trace, pol, 1.3, 'simulator')], p100, seeds)} | "
                  f"{p130:.3f} | {cell(ends[(trace, pol, 1.3, 'simulator')], p130, seeds)} |")
    both = sorted(s for s in seeds
                  if any(s in v for k, v in ends.items() if k[3] == "uniform"))
    if both:
        print(f"\n**The tie-break** (seeds {both[0]}–{both[-1]}; mean unallocated GPU %, "
              "the simulator's → kube-scheduler's uniform; rank among the six)\n")
        print("| trace | level | " + " | ".join(sweep.policies) + " |")
        print("|---|---|" + "---|" * len(sweep.policies))
        for trace in (t.name for t in sweep.traces):
            for ratio in (1.0, 1.3):
                means = {tb: {pol: statistics.fmean(ends[(trace, pol, ratio, tb)][s]
                                                    for s in both)
                              for pol in sweep.policies}
                         for tb in ("simulator", "uniform")}
                rank = {tb: {pol: 1 + sorted(m.values()).index(m[pol]) for pol in m}
                        for tb, m in means.items()}
                print(f"| {trace} | {ratio:.0%} | " + " | ".join(
                    f"{means['simulator'][pol]:.2f} ({rank['simulator'][pol]}) → "
                    f"{means['uniform'][pol]:.2f} ({rank['uniform'][pol]})"
                    for pol in sweep.policies) + " |")
    if args.before:
        old, _ = read(args.before)
        same = differ = 0
        for key, by_seed in old.items():
            for seed, value in by_seed.items():
                new = ends.get(key, {}).get(seed)
                if new is None:
                    continue
                if new == value:
                    same += 1
                else:
                    differ += 1
                    print(f"differs: {key} seed {seed}: {value} then, {new} now")
        print(f"\n{same} of {same + differ} runs of {args.before} repeated exactly")


if __name__ == "__main__":
    main()
