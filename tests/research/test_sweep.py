"""``kubesched sweep``: the grid, results rows as DESIGN.md's contract has them, resuming,
local processes, Parquet, generic sweeps, bad sweep files refused before anything runs."""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kubesched.cli import main
from kubesched.config.features import gates_for
from kubesched.research import sweep as sweep_module
from kubesched.research.openb import OpenbSpec
from kubesched.research.sweep import Run, Summary, row_key, summarize
from kubesched.research.sweepfile import Trace, load_sweep

# Six nodes with 1 + 2 + 4 + 1 + 2 + 4 = 14 GPUs; pods of whole and shared GPUs.
NODES = """sn,cpu_milli,memory_mib,gpu,model
n0,32000,131072,1,T4
n1,32000,131072,2,V100M16
n2,64000,262144,4,V100M16
n3,32000,131072,1,T4
n4,32000,131072,2,T4
n5,64000,262144,4,V100M16
"""
GPUS = 14
SHARES = [250, 500, 1000, 300, 700, 1000, 200, 1000, 600, 1000, 450, 1000]


def pods_csv(n: int = 12) -> str:
    lines = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
             "creation_time,deletion_time,scheduled_time"]
    for i in range(n):
        gpus, milli = (2, 1000) if i % 5 == 4 else (0, 0) if i % 7 == 6 else (1, SHARES[i])
        lines.append(f"p{i},{1000 + 500 * (i % 4)},4096,{gpus},{milli},,LS,Running,"
                     f"{10 * i},,{10 * i}")
    return "\n".join(lines) + "\n"


def write_trace(data: Path, name: str = "tiny") -> Path:
    data.mkdir(parents=True, exist_ok=True)
    (data / "openb_node_list_gpu_node.csv").write_text(NODES)
    (data / f"openb_pod_list_{name}.csv").write_text(pods_csv())
    return data


SWEEP = """kind: Sweep
traces: [tiny]
policies: [FGD, BestFit, Random]
seeds: 2
paper:
  tiny: {FGD: 1.5}
"""


def sweep(tmp: Path, *args: str, text: str = SWEEP, results: str = "out.csv") -> Result:
    write_trace(tmp / "data")
    path = tmp / "sweep.yaml"
    path.write_text(text)
    return CliRunner().invoke(main, ["sweep", str(path), "--results", str(tmp / results),
                                     "--data", str(tmp / "data"), *args])


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(path.read_text()))
    return list(reader.fieldnames or []), list(reader)


def without_wall(rows: list[dict[str, str]]) -> list[tuple[tuple[str, str], ...]]:
    return sorted(tuple(sorted((k, v) for k, v in r.items() if k != "wall_seconds"))
                  for r in rows)


def test_rows_follow_the_contract(tmp_path: Path) -> None:
    res = sweep(tmp_path, "--jobs", "2", "--kubernetes-version", "1.36")
    assert res.exit_code == 0, res.output
    header, rows = read_csv(tmp_path / "out.csv")
    # DESIGN.md: scenario, policy, seed, kubernetes_version, then the metrics
    assert header[:4] == ["scenario", "policy", "seed", "kubernetes_version"]
    assert {"unallocated_gpu_pct", "pods", "scheduled", "wall_seconds"} <= set(header)
    assert header[-4:] == ["feature_gates", "ratio", "tiebreak", "autoscaler"]
    assert sorted((r["policy"], r["seed"]) for r in rows) == sorted(
        (p, s) for p in ("FGD", "BestFit", "Random") for s in ("42", "43"))
    for r in rows:
        assert (r["scenario"], r["kubernetes_version"], r["feature_gates"], r["ratio"],
                r["tiebreak"]) == ("tiny", "1.36", "", "1.3", "simulator")
        assert r["gpu_milli_total"] == str(GPUS * 1000)
        pct = float(r["unallocated_gpu_pct"])
        assert 0 <= pct <= 100
        assert pct == pytest.approx(100 - int(r["gpu_milli_allocated"]) / GPUS / 10)
        assert int(r["scheduled"]) + int(r["pending"]) == int(r["pods"])
    # the summary: mean per policy over the two seeds, the paper's number beside FGD's
    assert "FGD" in res.stdout and "1.5" in res.stdout


def test_processes_give_the_rows_of_one_process(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert sweep(one, "--jobs", "1").exit_code == 0
    res = sweep(two, "--jobs", "2")
    assert res.exit_code == 0, res.output
    assert "on 2 process(es)" in res.stderr
    assert without_wall(read_csv(one / "out.csv")[1]) == without_wall(
        read_csv(two / "out.csv")[1])


def test_a_rerun_skips_the_rows_already_written(tmp_path: Path) -> None:
    assert sweep(tmp_path, "--seeds", "1", "--jobs", "1").exit_code == 0
    out = tmp_path / "out.csv"
    header, first = read_csv(out)
    assert len(first) == 3
    # a row already there is never recomputed: a value changed by hand stays
    tail = ",,1.3,simulator,\n"  # feature_gates, ratio, tiebreak, autoscaler
    marked = out.read_text().replace(first[0]["wall_seconds"] + tail, "999.5" + tail, 1)
    # and a run whose line was cut short by a kill is run again
    cut = marked + "tiny,Random,43,1.3"
    out.write_text(cut)
    res = sweep(tmp_path, "--jobs", "1")  # the file's 2 seeds
    assert res.exit_code == 0, res.output
    assert "6 runs, 3 already in" in res.stderr
    text = out.read_text()
    assert text.startswith(marked)  # appended, not rewritten
    _, rows = read_csv(out)
    keys = {tuple(r[c] for c in (*header[:4], "feature_gates")) for r in rows}
    assert len(rows) == 6 and len(keys) == 6
    assert rows[0]["wall_seconds"] == "999.5"
    again = sweep(tmp_path, "--jobs", "1")
    assert again.exit_code == 0 and "6 runs, 6 already in" in again.stderr
    assert out.read_text() == text


def test_parquet_results_resume_too(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    assert sweep(tmp_path, "--seeds", "1", "--jobs", "1", results="r.parquet").exit_code == 0
    assert pq.read_table(tmp_path / "r.parquet").num_rows == 3
    res = sweep(tmp_path, "--jobs", "1", results="r.parquet")
    assert res.exit_code == 0 and "3 already in" in res.stderr
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.num_rows == 6
    assert str(table.schema.field("unallocated_gpu_pct").type) == "double"
    assert sweep(tmp_path, "--jobs", "1", results="r.csv").exit_code == 0
    csv_rows = read_csv(tmp_path / "r.csv")[1]
    as_text = [{k: "" if v is None else repr(v) if isinstance(v, float) else str(v)
                for k, v in r.items()} for r in table.to_pylist()]
    assert without_wall(as_text) == without_wall(csv_rows)


def test_versions_and_gates_are_recorded(tmp_path: Path) -> None:
    gate = next(g.name for g in gates_for("1.35").values()
                if not g.locked and g.name in gates_for("1.37"))
    text = SWEEP.replace("seeds: 2", "seeds: 1\nkubernetesVersions: ['1.35', '1.37']")
    res = sweep(tmp_path, "--jobs", "1", "--feature-gates", f"{gate}=true", text=text)
    assert res.exit_code == 0, res.output
    rows = read_csv(tmp_path / "out.csv")[1]
    assert sorted({r["kubernetes_version"] for r in rows}) == ["1.35", "1.37"]
    assert {r["feature_gates"] for r in rows} == {f"{gate}=true"}
    # the flag overrides the file's releases
    res = sweep(tmp_path, "--jobs", "1", "--kubernetes-version", "1.36", text=text,
                results="flag.csv")
    assert {r["kubernetes_version"] for r in read_csv(tmp_path / "flag.csv")[1]} == {"1.36"}


def test_plot_draws_every_policy_and_the_paper(tmp_path: Path) -> None:
    res = sweep(tmp_path, "--jobs", "1", "--plot", str(tmp_path / "fig.svg"))
    assert res.exit_code == 0, res.output
    svg = (tmp_path / "fig.svg").read_text()
    for label in ("FGD", "BestFit", "Random", "authors' results", "unallocated GPU (%)"):
        assert label in svg
    assert sweep(tmp_path, "--jobs", "1", "--plot", str(tmp_path / "fig.png")).exit_code == 0
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_mixed_sweep_plots_each_metric_on_its_own_axis(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["examples", str(tmp_path / "ex")]).exit_code == 0
    text = SWEEP + ("scenarios: [{name: readme, files: [ex/cluster.yaml, ex/workload.yaml]}]\n"
                    "configs: [ex/most-allocated.yaml]\n")
    res = sweep(tmp_path, "--jobs", "1", "--seeds", "1", "--plot", str(tmp_path / "f.svg"),
                text=text)
    assert res.exit_code == 0, res.output
    assert {r["scenario"] for r in read_csv(tmp_path / "out.csv")[1]} == {"tiny", "readme"}
    svg = (tmp_path / "f.svg").read_text()
    assert "unallocated GPU (%)" in svg and "pending pods" in svg and "most-allocated" in svg


def test_summary_is_mean_and_sample_deviation_over_seeds(tmp_path: Path) -> None:
    write_trace(tmp_path / "data")
    (tmp_path / "s.yaml").write_text(SWEEP)
    spec = load_sweep(str(tmp_path / "s.yaml"), tmp_path / "data")
    base = {"scenario": "tiny", "kubernetes_version": "1.37", "feature_gates": "",
            "pods": 1, "scheduled": 1, "pending": 0, "ratio": 1.3, "tiebreak": "simulator"}
    rows = [{**base, "policy": p, "seed": s, "unallocated_gpu_pct": v}
            for p, s, v in (("FGD", 42, 2.0), ("FGD", 43, 4.0), ("BestFit", 42, 3.0))]
    rows.append({**rows[0], "ratio": 1.0, "unallocated_gpu_pct": 9.0})
    got = summarize(rows, spec)
    at = ("1.37", "")
    assert got == [Summary("tiny", "FGD", *at, 1.0, "simulator", "unallocated_gpu_pct", 1,
                           9.0, 0.0, 1.5),
                   Summary("tiny", "FGD", *at, 1.3, "simulator", "unallocated_gpu_pct", 2,
                           3.0, 2 ** 0.5, 1.5),
                   Summary("tiny", "BestFit", *at, 1.3, "simulator", "unallocated_gpu_pct",
                           1, 3.0, 0.0, None)]


def test_generic_sweep_of_scenarios_and_configurations(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["examples", str(tmp_path)]).exit_code == 0
    res = runner.invoke(main, ["sweep", str(tmp_path / "sweep.yaml"), "--results",
                               str(tmp_path / "s.csv"), "--jobs", "1", "--seeds", "1"])
    assert res.exit_code == 0, res.output
    rows = read_csv(tmp_path / "s.csv")[1]
    assert sorted(r["policy"] for r in rows) == ["default", "least-allocated",
                                                 "most-allocated"]
    sim = runner.invoke(main, ["simulate", str(tmp_path / "cluster.yaml"),
                               str(tmp_path / "workload.yaml"), "--seed", "42",
                               "--placements", str(tmp_path / "p.jsonl"), "--quiet"])
    assert sim.exit_code == 0
    placed = (tmp_path / "p.jsonl").read_text().splitlines()
    bound = sum('"node": null' not in line for line in placed)
    default = next(r for r in rows if r["policy"] == "default")
    assert (int(default["pods"]), int(default["scheduled"])) == (len(placed), bound)
    assert all(r["unallocated_gpu_pct"] == "" for r in rows)


@pytest.mark.parametrize(("text", "field"), [
    (SWEEP.replace("Random", "Rnd"), "policies[2]"),
    (SWEEP.replace("[tiny]", "[huge]"), "traces[0].pods"),
    (SWEEP.replace("[tiny]", "[{pods: tiny, nodes: all_node}]"), "traces[0].nodes"),
    (SWEEP.replace("seeds: 2", "seeds: 0"), "seeds"),
    (SWEEP.replace("seeds: 2", "seeds: [1, x]"), "seeds[1]"),
    (SWEEP.replace("seeds: 2", "seeds: {first: 1, count: -2}"), "seeds.count"),
    (SWEEP.replace("seeds: 2", "seeds: 2\nratio: -1"), "ratio"),
    (SWEEP.replace("seeds: 2", "seeds: 2\nratio: 0"), "ratio"),
    (SWEEP.replace("seeds: 2", "seeds: 2\nratio: [1.0, x]"), "ratio[1]"),
    (SWEEP.replace("seeds: 2", "seeds: 2\nratio: [1.3, 1.3]"), "ratio[1]"),
    (SWEEP.replace("[tiny]", "[{pods: tiny, ratio: [.nan]}]"), "traces[0].ratio[0]"),
    (SWEEP.replace("seeds: 2", "seeds: 2\ntiebreak: coin"), "tiebreak"),
    (SWEEP.replace("seeds: 2", "seeds: 2\ntiebreak: [simulator, coin]"), "tiebreak[1]"),
    (SWEEP.replace("tiny: {FGD: 1.5}", "tiny: {1.3: {FGD: x}}"), "paper.tiny.1.3.FGD"),
    (SWEEP.replace("tiny: {FGD: 1.5}", "tiny: {-1: {FGD: 1}}"), "paper.tiny.-1"),
    (SWEEP.replace("seeds: 2", "seeds: 2\norder: sorted"), "order"),
    (SWEEP.replace("seeds: 2", "seeds: 2\nkubernetesVersions: ['1.20']"),
     "kubernetesVersions[0]"),
    (SWEEP.replace("seeds: 2", "sedes: 2"), "sedes"),
    (SWEEP + "scenarios: [missing.yaml]\n", "scenarios[0].files[0]"),
    (SWEEP + "scenarios: [sweep.yaml]\nconfigs: [nope.yaml]\n", "configs[0].file"),
    ("kind: Sweep\nseeds: 1\n", "traces"),
    ("kind: Sweep\ntraces: [tiny, tiny]\n", "traces[1].name"),
])
def test_bad_sweep_files_are_refused_before_anything_runs(tmp_path: Path, text: str,
                                                          field: str) -> None:
    res = sweep(tmp_path, "--jobs", "1", text=text)
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"error: {tmp_path / 'sweep.yaml'}: field {field}: "), line
    assert not (tmp_path / "out.csv").exists()


def test_bad_trace_content_is_refused_before_anything_runs(tmp_path: Path) -> None:
    write_trace(tmp_path / "data")
    bad = tmp_path / "data" / "openb_pod_list_bad.csv"
    bad.write_text(pods_csv().replace("p3,2500,", "p3,lots,"))
    res = sweep(tmp_path, text=SWEEP.replace("[tiny]", "[tiny, bad]"))
    assert res.exit_code == 2
    assert res.stderr.strip() == (f"error: {bad}:5: field cpu_milli: must be an integer ≥ 0 "
                                  "(value: 'lots')")
    assert not (tmp_path / "out.csv").exists()


def test_a_results_file_of_something_else_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out.csv").write_text("a,b\n1,2\n")
    res = sweep(tmp_path)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {tmp_path / 'out.csv'}:1: not a results file")
    # one written before the ratio and tiebreak columns: say so
    old = ("scenario,policy,seed,kubernetes_version,pods,scheduled,pending,"
           "unallocated_gpu_pct,gpu_milli_allocated,gpu_milli_total,wall_seconds,"
           "feature_gates\n")
    (tmp_path / "out.csv").write_text(old)
    res = sweep(tmp_path)
    assert res.exit_code == 2 and "before the ratio, tiebreak, autoscaler" in res.stderr


def test_keys_name_every_dimension(tmp_path: Path) -> None:
    run = Run("t", "FGD", 7, "1.36", (("B", False), ("A", True)))
    assert run.key == ("t", "FGD", "7", "1.36", "A=true,B=false", "", "uniform", "")
    row = {"scenario": "t", "policy": "FGD", "seed": 7, "kubernetes_version": "1.36",
           "feature_gates": "A=true,B=false", "ratio": None, "tiebreak": "uniform",
           "autoscaler": ""}
    assert row_key(row) == run.key
    traced = Run("t", "FGD", 7, "1.36", trace=OpenbSpec(tmp_path, ratio=1.0),
                 tiebreak="simulator")
    assert traced.key[-3:] == ("1.0", "simulator", "")
    assert row_key({**row, "feature_gates": "", "ratio": 1.0, "tiebreak": "simulator"}
                   ) == traced.key


def test_the_bundled_fgd_sweep_matches_the_data(shared: Path) -> None:
    """fgd.yaml names the paper's grid and every file it names is in the data folder."""
    from kubesched.config.features import FeatureGates
    from kubesched.research.sweep import check_inputs, grid

    data = shared / "data" / "alibaba-gpu-v2023"
    path = resources.files("kubesched") / "examples" / "readme" / "fgd.yaml"
    s = load_sweep(str(path), data)
    assert [t.name for t in s.traces] == ["default", "cpu200", "gpushare100", "multigpu50"]
    assert all(isinstance(t, Trace) and (t.ratios, t.spec.order) == ((1.0, 1.3), "paper")
               and t.spec.node_file.name == "openb_node_list_gpu_node.csv"
               for t in s.traces)
    assert s.policies == ["FGD", "BestFit", "DotProduct", "GpuPacking", "GpuClustering",
                          "Random"]
    assert s.seeds == list(range(42, 52)) and s.tiebreaks == ["simulator"]
    # the authors' artifact results at both arrival levels: every trace × policy
    assert {t: {r: sorted(p) for r, p in levels.items()} for t, levels in s.paper.items()} == {
        t.name: {1.0: sorted(s.policies), 1.3: sorted(s.policies)} for t in s.traces}
    # spot checks against analysis_allo_discrete.csv (100 − column, mean of seeds 42–51)
    assert s.paper_value("default", 1.3, "FGD") == 4.609
    assert s.paper_value("multigpu50", 1.0, "Random") == 18.718
    assert s.paper_value("cpu200", 1.3, "GpuPacking") == 9.775
    assert len(grid(s, [FeatureGates()])) == 480
    check_inputs(s, [FeatureGates()])  # reads every trace file as the runs will


def test_the_bundled_uniform_sweep_is_fgd_s_grid_under_the_uniform_tie_break(
        shared: Path) -> None:
    """fgd-uniform.yaml: the same traces, levels and policies as fgd.yaml, 5 seeds, and only
    the uniform tie-break, so that into fgd.yaml's results it adds 240 runs and redoes none."""
    from kubesched.config.features import FeatureGates
    from kubesched.research.sweep import grid

    data = shared / "data" / "alibaba-gpu-v2023"
    readme = resources.files("kubesched") / "examples" / "readme"
    full = load_sweep(str(readme / "fgd.yaml"), data)
    uniform = load_sweep(str(readme / "fgd-uniform.yaml"), data)
    assert uniform.tiebreaks == ["uniform"] and uniform.seeds == list(range(42, 47))
    assert ([(t.name, t.ratios, t.spec.node_file.name) for t in uniform.traces]
            == [(t.name, t.ratios, t.spec.node_file.name) for t in full.traces])
    assert uniform.policies == full.policies
    first = {r.key for r in grid(full, [FeatureGates()])}
    more = {r.key for r in grid(uniform, [FeatureGates()])}
    assert len(more) == 240 and not first & more


def test_a_configuration_naming_an_unknown_plugin_is_refused_first(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["examples", str(tmp_path)]).exit_code == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "kind: KubeSchedulerConfiguration\nprofiles:\n"
                   "- plugins: {score: {enabled: [{name: Nope}]}}\n")
    (tmp_path / "s.yaml").write_text("scenarios: [{name: r, files: [cluster.yaml]}]\n"
                                     "configs: [least-allocated.yaml, bad.yaml]\n")
    res = CliRunner().invoke(main, ["sweep", str(tmp_path / "s.yaml"), "--results",
                                    str(tmp_path / "out.csv"), "--jobs", "1"])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {bad}: KubeSchedulerConfiguration: field "
                                 "profiles[0].plugins.score.enabled[0]: ")
    assert not (tmp_path / "out.csv").exists()


INLINE = """scenarios: [{name: r, files: [cluster.yaml, workload.yaml]}]
seeds: 2
configs:
- most-allocated.yaml
- name: packed
  config:
    profiles:
    - pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""


def test_a_configuration_written_in_the_sweep_file(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["examples", str(tmp_path)]).exit_code == 0
    (tmp_path / "s.yaml").write_text(INLINE)
    res = runner.invoke(main, ["sweep", str(tmp_path / "s.yaml"), "--results",
                               str(tmp_path / "out.csv"), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    rows = read_csv(tmp_path / "out.csv")[1]
    by = {(r["policy"], r["seed"]): (r["scheduled"], r["pending"]) for r in rows}
    # the same configuration as most-allocated.yaml, written inline: the same runs
    assert len(by) == 4
    assert all(by["packed", s] == by["most-allocated", s] for s in ("42", "43"))
    (tmp_path / "s.yaml").write_text(INLINE.replace("MostAllocated", "Fullest"))
    bad = runner.invoke(main, ["sweep", str(tmp_path / "s.yaml"), "--results",
                               str(tmp_path / "bad.csv"), "--jobs", "1"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith(f"error: {tmp_path / 's.yaml'} configs[1].config: "
                                 "KubeSchedulerConfiguration: field profiles[0].pluginConfig"
                                 "[0].args.scoringStrategy.type: "), bad.stderr


def test_arrival_levels_and_tie_breaks_are_axes(tmp_path: Path) -> None:
    base = tmp_path / "base"
    assert sweep(base, "--jobs", "1", "--seeds", "1").exit_code == 0
    text = SWEEP.replace("seeds: 2", "seeds: 1\nratio: [1.0, 1.3]\n"
                         "tiebreak: [simulator, uniform]").replace(
        "tiny: {FGD: 1.5}", "tiny: {1.0: {FGD: 2.25}, 1.3: {FGD: 1.5}}")
    axes = tmp_path / "axes"
    res = sweep(axes, "--jobs", "2", "--plot", str(axes / "fig.svg"), text=text)
    assert res.exit_code == 0, res.output
    _, rows = read_csv(axes / "out.csv")
    assert sorted((r["ratio"], r["tiebreak"], r["policy"]) for r in rows) == sorted(
        (ratio, tb, p) for ratio in ("1.0", "1.3") for tb in ("simulator", "uniform")
        for p in ("FGD", "BestFit", "Random"))
    # the axes add rows; the rows a sweep without them has are the same
    assert without_wall(read_csv(base / "out.csv")[1]) == without_wall(
        [r for r in rows if (r["ratio"], r["tiebreak"]) == ("1.3", "simulator")])
    pods = {(r["ratio"], r["tiebreak"], r["policy"]): int(r["pods"]) for r in rows}
    assert all(pods["1.0", tb, p] < pods["1.3", tb, p] for tb, p in
               [("simulator", "FGD"), ("uniform", "Random")])
    # each level beside its own published number
    assert "2.25" in res.stdout and "1.5" in res.stdout and "arrived" in res.stdout
    # one curve per run beside the results: arrived % up to the run's level
    curves = [json.loads(line) for line in
              (axes / "out.curves.jsonl").read_text().splitlines()]
    assert len(curves) == len(rows)
    for c in curves:
        assert c["arrived_pct"] == sorted(c["arrived_pct"])
        assert abs(c["arrived_pct"][-1] - 100 * c["ratio"]) <= 10  # the last pod overshoots
        row = next(r for r in rows if all(str(c[k]) == r[k] for k in (
            "policy", "seed", "ratio", "tiebreak")))
        # the curve's last level: the run's allocation then (rounded as the authors do)
        unalloc = float(row["unallocated_gpu_pct"])
        assert abs(100 - c["allocated_pct"][-1] - unalloc) < 1.0
    svg = (axes / "fig.svg").read_text()
    assert "arrived workload" in svg and "100%" in svg and "uniform" in svg


def test_curves_resume_with_their_rows(tmp_path: Path) -> None:
    assert sweep(tmp_path, "--jobs", "1", "--seeds", "1").exit_code == 0
    path = tmp_path / "out.curves.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 3
    path.write_text("".join(lines) + lines[0][:20])  # a line cut short by a kill
    res = sweep(tmp_path, "--jobs", "1")
    assert res.exit_code == 0, res.output
    again = path.read_text().splitlines(keepends=True)
    assert again[:3] == lines and len(again) == 6
    path.write_text("{not json\n")
    res = sweep(tmp_path, "--jobs", "1")
    assert res.exit_code == 2 and f"{path}:1: not a curve line" in res.stderr


@pytest.mark.skipif(not sweep_module._can_fork(), reason="runs are forked on Linux only")
def test_a_run_forked_from_its_worker_gives_the_runs_row(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Each run of a pool's worker is made in a process forked for it, reading the workload
    the worker built once for all its runs: the rows are the in-process run's."""
    from kubesched.research import openb

    spec = OpenbSpec(write_trace(tmp_path / "data"), "tiny", ratio=1.0)
    runs = [Run("tiny", p, 3, "1.36", trace=spec) for p in ("FGD", "BestFit")]
    built: list[int] = []
    real = openb.build_openb

    def build(*a: Any, **k: Any) -> Any:
        assert not openb._in_child, "a run's process built its workload again"
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(openb, "build_openb", build)
    forked = [sweep_module._run_forked(r) for r in runs]
    assert len(built) == 1  # in the worker, once for both runs
    monkeypatch.setattr(openb, "_FOR_CHILDREN", {})
    here = [sweep_module.run_safely(r) for r in runs]
    for f, h in zip(forked, here, strict=True):
        assert f.error is None and h.error is None
        assert f.levels == h.levels
        assert {**f.row, "wall_seconds": 0} == {**h.row, "wall_seconds": 0}  # type: ignore[dict-item]


@pytest.mark.skipif(not sweep_module._can_fork(), reason="runs are forked on Linux only")
def test_a_run_whose_process_dies_is_a_failed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(sweep_module, "run_safely", lambda run: os._exit(3))
    got = sweep_module._run_forked(Run("s", "p", 1, "1.36"))
    assert got.row is None and got.error is not None and "without a result" in got.error
