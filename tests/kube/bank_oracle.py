"""Bank the real kube-scheduler v1.36.2's verdicts (issue 23, point 3) into
``tests/kube/oracle/*.json``, which ``test_oracle_bank.py`` replays through ``kubesched
simulate --kubernetes-version 1.36`` in CI (no server needed there).

Re-run (outside CI; about half an hour on 2 shared cores; needs the envtest binaries, as the
``real_server`` tests do, and ``../shared/golden``)::

    PYTHONPATH=src python tests/kube/bank_oracle.py                 # every family
    PYTHONPATH=src python tests/kube/bank_oracle.py explain dra     # some of them
    PYTHONPATH=src python tests/kube/bank_oracle.py --fresh explain # forget what is banked

The cases are the golden generators' scenarios (``../shared/golden/``: ``explain`` —
resources, taints, affinities, spreading, ports, images; ``explain-config`` — non-default
KubeSchedulerConfigurations; ``explain-spread`` — Services and ReplicaSets, so the system
default spreading applies; ``explain-volumes``; ``sequence`` — 10 to 40 pending pods in a
row; a pod's repeated topology spread constraints, which the golden generators' harness
took but an API server refuses, reduced to the first, ``oracle_cases.accepted``), and
``dra``: scenarios made by ``oracle_cases.dra_scenario(seed)`` (DeviceClasses, node-local
ResourceSlices, ResourceClaims). The bank names each case and the SHA-256 of its
scenario (``oracle_cases``), not its text.

For each case: ``kubesched simulate`` first, with the pending pods arriving one virtual
second apart in file order (``kube_oracle.with_arrivals``); a case is left out when its
scenario does not load, when the simulator's controllers make pods (no controller-manager
runs beside kube-scheduler; the harness only adopts pods for them, as
``kube_oracle.Oracle`` says), when a pending pod took more than one attempt (the harness
records only a pod's first decision), or when any binding decision had a tie — two nodes at the top
score in kubesched's own score table over all nodes (``--decisions``), where kube-scheduler
picks at random. Then the scenario goes into a real kube-apiserver (``kube_oracle.Oracle``;
one control plane for the run, cleared between cases), a fresh kube-scheduler places the
pending pods one at a time, and its verdicts are banked; a case the API server still refuses
is left out. Agreement
with kubesched is printed as it goes; the bank holds kube-scheduler's verdicts whatever
kubesched said.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from kube_envtest import ControlPlane, find_assets, temp_dir  # noqa: E402
from kube_oracle import SCHEDULER_KIND, Oracle, Refused, is_pending, with_arrivals  # noqa: E402
from oracle_cases import BANK, FAMILIES, SCHEDULER, cases  # noqa: E402

# ---------------------------------------------------------------------------- kubesched


def simulate(objects: list[dict[str, Any]], work: Path) -> tuple[dict[str, Any] | None, str]:
    """kubesched's placements (pod -> its record) at 1.36, or None and why the case is left
    out."""
    from click.testing import CliRunner

    from kubesched.cli import main

    path = work / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(with_arrivals(objects)))
    placements, decisions = work / "placements.jsonl", work / "decisions.jsonl"
    res = CliRunner().invoke(main, ["simulate", str(path), "--kubernetes-version", "1.36",
                                    "--placements", str(placements), "--decisions",
                                    str(decisions), "--decisions-top", "2", "--quiet"])
    if res.exit_code != 0:
        return None, f"simulate exit {res.exit_code}: {res.output.strip()[-200:]}"
    for line in decisions.read_text().splitlines():
        d = json.loads(line)
        top = d.get("top") or []
        if d.get("node") and len(top) > 1 and top[0]["total"] == top[1]["total"]:
            return None, f"tie for {d['pod']}: {top[0]['node']} and {top[1]['node']}"
    pending = {f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
               for o in objects if is_pending(o)}
    out = {}
    for r in map(json.loads, placements.read_text().splitlines()):
        if r["pod"] not in pending:
            # made by the simulator's controllers (replicas short): no controller-manager
            # makes it beside kube-scheduler
            return None, f"{r['pod']} made by a controller"
        if r["node"] is not None and r["attempts"] != 1:
            return None, f"{r['pod']} bound after {r['attempts']} attempts"
        out[r["pod"]] = r
    return out, ""


# ---------------------------------------------------------------------------- banking


def bank(families: list[str], fresh: bool, limit: int | None) -> int:
    BANK.mkdir(exist_ok=True)
    assets = find_assets()
    work = temp_dir("kubesched-bank-")
    with ControlPlane(assets, work / "cp") as cp:
        oracle = Oracle(cp, assets, work)
        for family in families:
            out_path = BANK / f"{family}.json"
            banked: dict[str, Any] = {}
            if out_path.exists() and not fresh:
                banked = {c["case"]: c for c in json.loads(out_path.read_text())["cases"]}
            left_out: dict[str, str] = {}
            agree = disagree = 0
            todo = cases(family)[:limit]
            for name, objects, ref in todo:
                if name in banked:
                    continue
                t0 = time.monotonic()
                with tempfile.TemporaryDirectory() as tmp:
                    ours, why = simulate(objects, Path(tmp))
                if ours is None:
                    left_out[name] = why
                    print(f"{family}/{name}: left out ({why})", flush=True)
                    continue
                oracle.clear()
                try:
                    pending = oracle.load(objects)
                except Refused as e:
                    left_out[name] = f"refused: {e}"
                    print(f"{family}/{name}: left out (refused: {str(e)[:160]})", flush=True)
                    continue
                config = next((o for o in objects if o.get("kind") == SCHEDULER_KIND), None)
                oracle.start_scheduler(config)
                try:
                    verdicts = oracle.place(pending, timeout=60)
                finally:
                    oracle.stop_scheduler()
                refused = [v for v in verdicts if v.get("refused")]
                if refused:
                    left_out[name] = f"refused: {refused[0]['refused']}"
                    print(f"{family}/{name}: left out (refused pod)", flush=True)
                    continue
                diff = [(v, ours.get(v["pod"])) for v in verdicts
                        if ours.get(v["pod"], {}).get("node") != v["node"]
                        or (v["node"] is None
                            and ours.get(v["pod"], {}).get("message") != v["message"])]
                if diff:
                    disagree += 1
                    print(f"{family}/{name}: DISAGREE {diff[:2]}", flush=True)
                else:
                    agree += 1
                banked[name] = {"case": name, **ref, "verdicts": verdicts}
                print(f"{family}/{name}: {len(verdicts)} pods, "
                      f"{'agree' if not diff else 'disagree'} "
                      f"({time.monotonic() - t0:.1f}s)", flush=True)
                _write(out_path, family, banked, left_out)
            _write(out_path, family, banked, left_out)
            print(f"== {family}: {len(banked)} banked ({agree} new agree, {disagree} new "
                  f"disagree), {len(left_out)} left out", flush=True)
    return 0


def _write(path: Path, family: str, banked: dict[str, Any], left_out: dict[str, str]) -> None:
    old: dict[str, str] = {}
    if path.exists():
        old = json.loads(path.read_text()).get("left_out", {})
    old.update(left_out)
    for k in banked:
        old.pop(k, None)
    path.write_text(json.dumps({
        "scheduler": SCHEDULER, "family": family,
        "cases": sorted(banked.values(), key=lambda c: c["case"]),
        "left_out": dict(sorted(old.items()))}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("families", nargs="*", default=list(FAMILIES))
    ap.add_argument("--fresh", action="store_true", help="forget what is banked")
    ap.add_argument("--limit", type=int, help="at most this many cases per family")
    args = ap.parse_args(argv)
    return bank(args.families, args.fresh, args.limit)


if __name__ == "__main__":
    sys.exit(main())
