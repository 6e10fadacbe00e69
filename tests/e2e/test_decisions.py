"""``simulate --decisions``: one record per scheduling cycle, holding what the cycle
computed — checked against upstream's verdicts for the same pod and cluster
(../shared/golden/explain*, preempt), against ``explain`` for every cycle of a run, and
between the plugins' batch and per-node forms."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from tests.e2e.test_forms_agree import per_node_registry, scenario
from tests.golden.test_explain_golden import (
    CASES,
    VERSION_DIFFERENCES,
    _decided_by,
    _upstream,
    _weights,
    _without_post_filter,
)
from tests.golden.test_preempt_golden import CASES as PREEMPT_CASES
from tests.golden.test_preempt_golden import TIES

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.cli import main
from kubesched.config import default_config
from kubesched.explain import explain_pod
from kubesched.framework.runtime import ScoreOutcome
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.decisions import DecisionLog, best_nodes, name_ranks
from shared_files import golden_config, load_golden

ALL = 10**6  # --decisions-top: every scored node

# Cases whose cluster the simulator changes before the target's cycle, which upstream's
# harness (no controllers) did not.
SIM_DIFFERENCES = {
    "case-130018": "the target's labels match ReplicaSet rs-db's selector and it has no "
                   "owner: the simulator's ReplicaSet controller adopts it, so the system "
                   "default spreading applies to it, as in a cluster",
}


def run_recorded(sim: SimCluster, top: int = ALL) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    sim.scheduler.decisions = DecisionLog([records.append], top)
    sim.run()
    return records


def best_first(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(nodes, key=lambda n: (-n["total"], n["node"]))


@pytest.mark.parametrize(("folder", "path"), CASES, ids=[f"{f}/{p.stem}" for f, p in CASES])
def test_records_equal_upstream_verdicts(folder: str, path: Path) -> None:
    """The target's first cycle in the simulator: the nodes upstream scored, each with
    upstream's weighted plugin scores and total, best first; or upstream's FitError."""
    why = VERSION_DIFFERENCES.get(path.stem) or SIM_DIFFERENCES.get(path.stem)
    if why:
        pytest.skip(why)
    want = _upstream(path)
    if _decided_by(want) - set(in_tree_registry()):
        pytest.skip("decided by plugins not yet exact")
    scen = load_golden(path)
    config = golden_config(scen, path)
    records = run_recorded(SimCluster(scen, config))
    rec = next(r for r in records if r["pod"] == want["pod"])
    assert rec["attempt"] == 1
    wanted = want.get("scores", {})
    assert rec["feasible"] == len(wanted) == want["feasible_nodes"]
    if "evaluated_nodes" in want:  # (upstream's harness says it of a pod it placed)
        assert rec["evaluated"] == want["evaluated_nodes"]
    if not wanted:
        assert rec["node"] is None and rec["top"] == []
        assert _without_post_filter(rec["message"]) == want["error"]
        return
    assert rec["message"] is None and rec["node"] in (want.get("top_nodes") or [])
    if len(wanted) == 1:  # upstream, too, takes a lone feasible node without scoring it
        assert rec["top"] == [] and rec["node"] in wanted
        return
    weights = _weights(config, want)
    got = [(t["node"], t["total"], {p: s * weights[p] for p, s in t["scores"].items()})
           for t in rec["top"]]
    assert got == [(n, wanted[n]["total"], wanted[n]["plugins"])
                   for n in sorted(wanted, key=lambda n: (-wanted[n]["total"], n))]


@pytest.mark.parametrize("path", PREEMPT_CASES, ids=[p.stem for p in PREEMPT_CASES])
def test_records_hold_upstream_preemption(path: Path) -> None:
    want = json.loads(path.with_suffix("").with_suffix(".upstream.json").read_text())
    records = [r for r in run_recorded(SimCluster(load_golden(path), golden_config(), seed=3))
               if r["pod"] == "default/target"]
    first, second = records
    assert (first["node"], first["feasible"], first["top"]) == (None, 0, [])
    assert first["message"] == want["error"]
    pre = first["preemption"]
    if path.stem in TIES:
        assert pre["node"] in TIES[path.stem]
    else:
        assert pre == {"node": want["nominated_node"],
                       "victims": sorted(want["preempted_pods"])}
    assert (second["attempt"], second["node"], second["preemption"]) == (2, pre["node"], None)
    assert second["time"] == 30.0  # after the victims' grace period


@pytest.mark.parametrize("seed", range(6))
def test_every_cycle_equals_explain_of_its_cluster(seed: int) -> None:
    """Each cycle of a run (fewer than 100 nodes: every node evaluated) against explain on
    the cluster as that cycle saw it: the same feasible nodes, scores and totals."""
    text = scenario(seed)
    sim = SimCluster(load_scenario_text(text, "t.yaml"), seed=seed)
    config = default_config()
    before: dict[str, Any] = {}
    schedule_pod = sim.scheduler.schedule_pod

    def kept(fwk: Any, state: Any, pod: Any) -> Any:
        sim.accounting._keep_attempt(pod)  # the cluster of this cycle, as --explain keeps it
        before["cluster"] = sim.last_attempt.pop(pod.key)[1]
        return schedule_pod(fwk, state, pod)

    sim.scheduler.schedule_pod = kept  # type: ignore[method-assign]
    checked = 0

    class Compare(DecisionLog):
        def decided(self, qpi: Any, *args: Any) -> None:
            nonlocal checked
            super().decided(qpi, *args)
            rec = records[-1]
            out = explain_pod(before["cluster"], config, qpi.pod)
            feasible = [n for n in out["nodes"] if n["feasible"]]
            assert rec["feasible"] == len(feasible), rec
            assert rec["evaluated"] == len(out["nodes"]), rec
            if len(feasible) > 1:
                assert rec["top"] == [{k: n[k] for k in ("node", "total", "scores")}
                                      for n in best_first(feasible)]
                assert rec["node"] in out["selected"]
            elif feasible:
                assert rec["top"] == [] and rec["node"] == feasible[0]["node"]
            else:
                assert rec["node"] is None and rec["message"] == out["message"]
            checked += 1

    records: list[dict[str, Any]] = []
    sim.scheduler.decisions = Compare([records.append], ALL)
    result = sim.run()
    assert checked == len(records) >= len(result.records)
    last = {r["pod"]: r for r in records}
    for rec in result.records:  # a bound pod's last line is its binding cycle
        if rec.node is not None:
            assert (last[rec.key]["node"], last[rec.key]["attempt"]) == (rec.node, rec.attempts)


@pytest.mark.parametrize("seed", range(6))
def test_batch_and_per_node_forms_record_alike(seed: int) -> None:
    text = scenario(seed)
    fast = run_recorded(SimCluster(load_scenario_text(text, "t.yaml"), seed=seed))
    slow = run_recorded(SimCluster(load_scenario_text(text, "t.yaml"), seed=seed,
                                   registry=per_node_registry()))
    assert fast == slow
    assert any(len(r["top"]) > 1 for r in fast)


@pytest.mark.parametrize(("seed", "k"), [(0, 1), (1, 2), (2, 3), (3, 5)])
def test_the_k_best_are_the_first_k_of_all(seed: int, k: int) -> None:
    """--decisions-top K lists the first K of every scored node best first, ties by name
    (the many nodes tied at the K-th total are picked by name, not all sorted)."""
    # node names falling as the table's rows go on, so that row order is not name order
    text = re.sub(r"\bn(\d\d)\b", lambda m: f"n{99 - int(m.group(1))}", scenario(seed))
    every = run_recorded(SimCluster(load_scenario_text(text, "t.yaml"), seed=seed))
    some = run_recorded(SimCluster(load_scenario_text(text, "t.yaml"), seed=seed), k)
    assert [r["top"] for r in some] == [r["top"][:k] for r in every]
    assert [{**r, "top": None} for r in some] == [{**r, "top": None} for r in every]
    assert all(r["top"] == best_first(r["top"]) for r in every)
    assert any(len(r["top"]) > k and r["top"][k - 1]["total"] == r["top"][k]["total"]
               for r in every)  # some cycle had ties across the K-th place


@pytest.mark.parametrize("scale", [1, 1 << 61])  # (totals too large for one int64 key)
def test_best_nodes_by_total_then_name(scale: int) -> None:
    rng = np.random.default_rng(7)
    names = [f"node-{i:03d}" for i in rng.permutation(300)]
    rank = name_ranks(SimpleNamespace(names=names))  # type: ignore[arg-type]
    feasible = rng.choice(300, size=120, replace=False)
    plugin_scores = rng.integers(0, 101, size=(2, 120))
    totals = rng.integers(0, 4, size=120) * scale
    out = ScoreOutcome(["A", "B"], plugin_scores, np.ones(2, dtype=np.int64), totals)
    want = sorted(range(120), key=lambda c: (-int(totals[c]), names[feasible[c]]))
    for k in (1, 3, 50, 120, 500):
        assert best_nodes(names, rank, feasible, out, k) == [
            {"node": names[feasible[c]], "total": int(totals[c]),
             "scores": {"A": int(plugin_scores[0, c]), "B": int(plugin_scores[1, c])}}
            for c in want[:k]]


# ---------------------------------------------------------------------------- the command

NODES = "".join(
    f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\n"
    f"status: {{capacity: {{cpu: '{cpu}', memory: 8Gi, pods: '20'}}}}\n---\n"
    for n, cpu in (("a", 4), ("b", 2), ("c", 1)))
PODS = "".join(
    f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default}}\n"
    f"spec: {{containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}\n---\n"
    for i, cpu in enumerate(["1", "500m", "1", "5", "250m"]))


def simulate(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "s.yaml").write_text(NODES + PODS)
    r = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml"), *args])
    return r.exit_code, r.output


def test_one_line_per_cycle_and_placements_agree(tmp_path: Path) -> None:
    out = tmp_path / "d.jsonl"
    code, text = simulate(tmp_path, "--decisions", str(out), "--placements",
                          str(tmp_path / "p.jsonl"), "--quiet")
    assert code == 0, text
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    placements = {p["pod"]: p for p in map(json.loads,
                                            (tmp_path / "p.jsonl").read_text().splitlines())}
    assert [r["pod"] for r in lines] == ["default/p0", "default/p1", "default/p2",
                                         "default/p3", "default/p4"]
    for r in lines:
        assert list(r) == ["pod", "time", "attempt", "node", "feasible", "evaluated", "top",
                           "message", "preemption"]
        assert len(r["top"]) == min(3, r["feasible"] if r["feasible"] > 1 else 0)
        p = placements[r["pod"]]
        assert (r["node"], r["attempt"]) == (p["node"], p["attempts"])
    p0 = lines[0]
    assert (p0["feasible"], p0["evaluated"]) == (3, 3)
    assert [t["node"] for t in p0["top"]] == ["a", "b", "c"]
    for t in p0["top"]:
        assert t["total"] == 3 * t["scores"]["TaintToleration"] + sum(
            s for k, s in t["scores"].items() if k != "TaintToleration")
    big = lines[3]
    assert big["node"] is None and big["top"] == []
    assert big["message"].startswith("0/3 nodes are available: 3 Insufficient cpu.")


def test_top_and_stdout(tmp_path: Path) -> None:
    code, text = simulate(tmp_path, "--decisions", "-", "--decisions-top", "1")
    assert code == 0, text
    lines = [json.loads(line) for line in text.splitlines()]  # nothing else on stdout
    assert len(lines) == 5 and all(len(r["top"]) <= 1 for r in lines)
    assert lines[0]["top"][0]["node"] == "a"


@pytest.mark.parametrize(("args", "said"), [
    (["--decisions-top", "2"], "--decisions-top needs --decisions"),
    (["--decisions", "-", "--placements", "-"], "cannot both be stdout"),
    (["--decisions", "/nonexistent/d.jsonl"], "--decisions /nonexistent/d.jsonl"),
    (["--decisions", "-", "--decisions-top", "-1"], "-1"),
])
def test_bad_options(tmp_path: Path, args: list[str], said: str) -> None:
    code, text = simulate(tmp_path, *args)
    assert code == 2 and said in text, text


def test_lines_are_written_while_the_run_goes(tmp_path: Path) -> None:
    """Streamed: the file holds earlier cycles' lines before the run ends."""
    from kubesched.cli import _record_decisions

    text = ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
            "status: {capacity: {cpu: '64', memory: 64Gi, pods: '1000'}}\n---\n"
            + "".join(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
                      "spec: {containers: [{name: c, resources: {requests: {cpu: 10m}}}]}\n"
                      "---\n" for i in range(600)))
    sim = SimCluster(load_scenario_text(text, "s.yaml"))
    path = tmp_path / "d.jsonl"
    stream, _ = _record_decisions(sim, str(path), None, False)
    assert stream is not None
    sizes: list[int] = []
    sim.run(lambda done, _t: sizes.append(path.stat().st_size))
    stream.close()
    assert len(path.read_text().splitlines()) == 600
    assert sizes and 0 < sizes[-1] < path.stat().st_size


# ---------------------------------------------------------------------------- explain

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 5}]
"""


def test_explain_gives_the_profiles_weights(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(NODES + PODS)
    (tmp_path / "c.yaml").write_text(CONFIG)
    args = ["explain", str(tmp_path / "s.yaml"), "--pod", "default/p0", "--config",
            str(tmp_path / "c.yaml")]
    r = CliRunner().invoke(main, [*args, "-o", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["weights"]["NodeResourcesFit"] == 5
    assert out["weights"]["TaintToleration"] == 3
    for n in out["nodes"]:
        assert n["total"] == sum(out["weights"][p] * s for p, s in n["scores"].items())
    r = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert "NodeResourcesFit ×5" in r.output and "TaintToleration ×3" in r.output


# ---------------------------------------------------------------------------- a real dump

DUMP = Path(__file__).resolve().parent.parent / "dumps" / "decisions-rollout.yaml"


def test_every_pod_of_a_dump_has_its_record_and_the_first_is_explains(tmp_path: Path) -> None:
    """A cluster dumped mid-rollout (kubectl get -o yaml): every pending pod's cycles are
    recorded; a bound pod's last line is its placement; the first cycle, which sees the
    cluster as dumped, is explain's verdict on the dump."""
    out = tmp_path / "d.jsonl"
    r = CliRunner().invoke(main, ["simulate", str(DUMP), "--quiet", "--decisions", str(out),
                                  "--placements", str(tmp_path / "p.jsonl")])
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    placements = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert {p["pod"] for p in placements} == {r["pod"] for r in lines} == {
        "shop/web-5c8d7f9b6-l4v8n", "shop/web-5c8d7f9b6-r2d6j", "shop/web-5c8d7f9b6-t9s3x",
        "shop/batch-report-28874160-v6jzq"}
    last = {r["pod"]: r for r in lines}
    for p in placements:
        rec = last[p["pod"]]
        assert (rec["node"], rec["attempt"]) == (p["node"], p["attempts"])
        if p["node"] is None:
            assert rec["message"] == p["message"]
    first = lines[0]
    r = CliRunner().invoke(main, ["explain", str(DUMP), "--pod", first["pod"], "-o", "json"])
    assert r.exit_code == 0, r.output
    verdict = json.loads(r.output)
    feasible = [n for n in verdict["nodes"] if n["feasible"]]
    assert (first["feasible"], first["evaluated"]) == (len(feasible), len(verdict["nodes"]))
    assert first["top"] == [{k: n[k] for k in ("node", "total", "scores")}
                            for n in best_first(feasible)][:3]
    assert first["node"] in verdict["selected"]
    batch = last["shop/batch-report-28874160-v6jzq"]
    assert batch["message"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
