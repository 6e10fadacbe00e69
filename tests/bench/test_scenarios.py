"""``kubesched bench --write-scenario`` files load with kubesched's scenario loader."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kubesched.api.scenario import load_scenario
from kubesched.api.types import ZONE_LABEL
from kubesched.bench import runner
from kubesched.bench.scenarios import SHAPES, TARGET2, scenario_documents, write_scenario
from kubesched.bench.workloads import PodOp, Workload
from kubesched.cli import main
from kubesched.config import load_config


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_written_scenario_loads(tmp_path, shape):
    path = tmp_path / f"{shape}.yaml"
    write_scenario(str(path), 30, 12, 20, 10, shape=shape)
    scen = load_scenario([str(path)])
    assert len(scen.nodes) == 30
    zones = [n.labels[ZONE_LABEL] for n in scen.nodes]
    assert zones[:4] == ["zone1", "zone2", "zone3", "zone1"]
    running = [p for p in scen.pods if p.spec.node_name]
    pending = [p for p in scen.pods if not p.spec.node_name]
    assert (len(running), len(pending)) == (12, 20)
    sh = SHAPES[shape]
    assert {p.namespace for p in running} == {sh.running_namespace}
    assert {p.namespace for p in pending} == {sh.pending_namespace}
    by_name = {n.name: n for n in scen.nodes}
    if sh.running_zones is not None:
        assert {by_name[p.spec.node_name].labels[ZONE_LABEL] for p in running} <= set(
            sh.running_zones)
    if shape == "anti-affinity":
        assert len({p.spec.node_name for p in running}) == 12
    assert load_config(scen.config).percentage_of_nodes_to_score == 10


def test_no_configuration_without_percentage():
    docs = scenario_documents(3, 0, 1)
    assert all(d["kind"] != "KubeSchedulerConfiguration" for d in docs)


def test_target2_rows():
    assert [r.title for r in TARGET2][:2] == ["basic, pct 10", "basic, pct 100"]
    for r in TARGET2:
        assert r.shape in SHAPES
        assert (r.nodes, r.zones) == (5000, 3)
        assert r.percentage in (10, 100)


def test_cli_write_scenario(tmp_path):
    path = tmp_path / "spread.yaml"
    res = CliRunner().invoke(main, ["bench", "--write-scenario", str(path), "--shape", "spread",
                                    "--nodes", "9", "--running", "3", "--pending", "4",
                                    "--percentage", "100"])
    assert res.exit_code == 0, res.output
    scen = load_scenario([str(path)])
    pending = [p for p in scen.pods if not p.spec.node_name]
    assert len(pending) == 4
    assert all(p.spec.topology_spread_constraints for p in pending)
    assert load_config(scen.config).percentage_of_nodes_to_score == 100


def test_cli_list():
    res = CliRunner().invoke(main, ["bench", "--list"])
    assert res.exit_code == 0, res.output
    assert "SchedulingBasic/500Nodes" in res.output


def test_cli_unknown_workload():
    res = CliRunner().invoke(main, ["bench", "NoSuchWorkload"])
    assert res.exit_code == 2


def test_tiny_workload_runs_in_process():
    w = Workload("Tiny/10Nodes", 10, (PodOp("pod-default", 5, "namespace-1"),),
                 PodOp("pod-with-topology-spreading", 20, "namespace-2"),
                 zones=("a", "b"), threshold=1.0)
    r = runner.run_workload(w, check=True)
    assert r["status"] == "ok"
    assert (r["scheduled"], r["measured_pods"], r["attempts"]) == (20, 20, 20)
    assert r["attempt_latency_ms_p50"] is not None
    assert r["pods_per_second"] is not None
    assert r["verdict"] in ("above", "below")


def test_tiny_churn_workload_runs_isolated():
    w = Workload("TinyChurn/10Nodes", 10, (), PodOp("pod-default", 30, "namespace-2"),
                 churn=runner.ChurnOp("recreate", ("churn/node-default",
                                                   "pod-high-priority-large-cpu",
                                                   "churn/service-default"), 1000,
                                      "namespace-1"))
    seen = []
    r = runner.run_isolated(w, lambda *a: seen.append(a), check=True)
    assert r["status"] == "ok"
    assert r["scheduled"] == 30
    assert r["churn"] is not None
    assert seen and seen[-1][0] == "measure"
