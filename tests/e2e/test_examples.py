"""End to end through the CLI on the bundled examples (expectations worked out by hand
from upstream's rules; see the comments in each example)."""

from __future__ import annotations

import json
from importlib import resources

from click.testing import CliRunner

from kubesched.cli import main


def _example(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


def _placements(*args: str) -> dict[str, dict]:
    res = CliRunner().invoke(main, ["simulate", *args, "--check", "--placements", "-"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.output.splitlines() if x.startswith("{")]
    return {p["pod"]: p for p in lines}


def test_quickstart_runs_with_no_argument():
    res = CliRunner().invoke(main, ["simulate", "--check"])
    assert res.exit_code == 0, res.output
    assert "4 of 6 pods scheduled" in res.output
    assert "waiting for scheduling gates: [example.com/approval]" in res.output


def test_quickstart_placements():
    got = _placements(_example("quickstart.yaml"))
    assert got["ml/train"]["node"] == "node-gpu"  # the only node it both fits and tolerates
    for web in ("shop/web-1", "shop/web-2", "shop/web-3"):
        assert got[web]["node"] in {"node-a1", "node-b1"}
    assert got["shop/report"]["node"] is None
    assert got["shop/report"]["message"] == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    assert got["shop/canary"]["node"] is None
    assert got["shop/canary"]["attempts"] == 0  # gated: never attempted
    assert "db-0" not in "".join(got)  # running at load: no line


def test_taints_example():
    got = _placements(_example("taints.yaml"))
    assert got["default/batch-1"]["node"] == "spot"
    assert got["default/api-1"]["node"] == "soft"
    assert got["default/small-1"]["node"] == "plain"


def test_pressure_example_latecomers_wait_for_room():
    got = _placements(_example("pressure.yaml"))
    assert all(p["node"] is not None for p in got.values())
    for late in ("default/job-5", "default/job-6"):
        assert got[late]["time"] == 30.0  # when job-1 and job-2 finish
        assert got[late]["attempts"] == 2
    nodes = [got[f"default/job-{i}"]["node"] for i in range(1, 5)]
    assert sorted(nodes) == ["n1", "n1", "n2", "n2"]  # least-allocated spreads them


def test_bad_quantity_is_exit_2_with_location(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                   "  - name: c\n    resources: {requests: {cpu: 12x}}\n")
    res = CliRunner().invoke(main, ["simulate", str(bad)])
    assert res.exit_code == 2
    assert "bad.yaml" in res.output and "Pod default/p" in res.output
    assert "spec.containers[0].resources.requests.cpu" in res.output and "12x" in res.output
    assert "Traceback" not in res.output


def test_explain_json_contract():
    res = CliRunner().invoke(main, ["explain", _example("taints.yaml"), "--pod",
                                    "default/small-1", "-o", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["pod"] == "default/small-1"
    assert [n["node"] for n in out["nodes"]] == ["plain", "spot", "soft"]
    spot = out["nodes"][1]
    assert spot == {"node": "spot", "feasible": False, "plugin": "TaintToleration",
                    "reasons": ["node(s) had untolerated taint(s)"]}
    plain = out["nodes"][0]
    assert plain["feasible"] and plain["scores"]["TaintToleration"] == 100
    assert out["nodes"][2]["scores"]["TaintToleration"] == 0
    assert out["selected"] == ["plain"]
    assert out["message"] is None


def test_explain_missing_or_running_pod_is_exit_2():
    for key in ("default/nope", "shop/db-0"):
        res = CliRunner().invoke(main, ["explain", _example("quickstart.yaml"), "--pod", key])
        assert res.exit_code == 2, (key, res.output)


def test_malformed_yaml_is_exit_2(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: [unclosed\n")
    res = CliRunner().invoke(main, ["simulate", str(bad)])
    assert res.exit_code == 2
    assert "broken.yaml" in res.output and "Traceback" not in res.output


def test_bad_config_field_names_its_path(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "percentageOfNodesToScore: 140\n")
    res = CliRunner().invoke(main, ["simulate", "--config", str(cfg)])
    assert res.exit_code == 2
    assert "cfg.yaml" in res.output and "percentageOfNodesToScore" in res.output
    assert "140" in res.output


def test_unknown_kind_is_skipped_with_a_warning(tmp_path):
    f = tmp_path / "mixed.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n---\n"
                 "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                 "status: {capacity: {cpu: '1', memory: 1Gi, pods: '10'}}\n")
    res = CliRunner().invoke(main, ["simulate", str(f), "--check", "--quiet"])
    assert res.exit_code == 0, res.output
    assert "ConfigMap" in res.output and "warning" in res.output


def test_plan_example_adds_one_gpu_node():
    # After the README's cluster and workload run, only default/train-2 (2 GPUs, tolerating
    # the GPU taint) is pending; "general" has no nvidia.com/gpu, so "gpu" is the one
    # option, whatever the expander: one 4-GPU node.
    readme = [_example(f"readme/{n}.yaml") for n in ("cluster", "workload", "nodegroups")]
    for expander in ("least-waste", "random"):
        res = CliRunner().invoke(main, ["plan", *readme, "--expander", expander, "-o", "json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.output) == {"add": {"gpu": 1}, "cannot_help": [],
                                          "pending_after": [], "remove": []}
