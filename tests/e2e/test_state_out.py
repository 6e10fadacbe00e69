"""``simulate --state-out`` read back by simulate and explain, ``simulate --explain``, the
summary (pending pods grouped with names, preemptions with victims, utilisation totals),
``explain --top`` and its grouped table, and scenarios from standard input or a directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from tests.e2e.test_faults import assert_accounted, fault, node, pod
from tests.e2e.test_workloads import deployment, workload

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.state import state_documents
from kubesched.cli import explain_rows, main
from kubesched.config import default_config
from kubesched.explain import explain as run_explain
from kubesched.explain import explain_pod

JOB = workload("Job", "j", "  completions: 4\n  parallelism: 2\n", "      restartPolicy: Never\n",
               api="batch/v1", cpu="100m", annotations="{kubesched.io/duration: '100'}")
SCENARIO = (node("n1", cpu="2") + node("n2", cpu="2") + deployment(replicas=5, cpu="700m")
            + JOB + pod("big", "1500m", extra="  priority: 1000\n")
            + pod("late", "100m", annotations="{kubesched.io/arrival: '500'}"))


def canonical(docs: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(d, sort_keys=True, default=str) for d in docs)


def run(text: str, until: float | None = None, explain: tuple[str, ...] = ()
        ) -> SimCluster:
    sim = SimCluster(load_scenario_text(text, "s.yaml", strict=True), check=True)
    sim.until = until
    sim.explain_keys = set(explain)
    sim.run()
    if until is None:  # pods yet to arrive are nowhere yet
        assert_accounted(sim)
    return sim


def test_state_out_reads_back_to_the_same_state():
    sim = run(SCENARIO, until=150)
    docs = state_documents(sim)
    text = yaml.safe_dump_all(docs)
    kinds = [d["kind"] for d in docs]
    assert kinds.count("Node") == 2 and "Deployment" in kinds and "ReplicaSet" in kinds
    pods = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Pod"}
    # bound pods keep their node and the rest of their duration; finished Job pods are
    # Succeeded; the pod yet to arrive keeps the rest of its wait
    job = sorted((d["status"]["phase"], d["spec"].get("nodeName") is not None,
                  d["metadata"].get("annotations", {}).get("kubesched.io/duration"))
                 for n, d in pods.items() if n.startswith("j-"))
    assert job == [("Running", True, "50"), ("Running", True, "50"),
                                    ("Succeeded", True, "100"), ("Succeeded", True, "100")]
    assert pods["late"]["metadata"]["annotations"] == {"kubesched.io/arrival": "350"}
    assert pods["big"]["spec"]["nodeName"] and pods["big"]["status"]["phase"] == "Running"
    pending = [n for n, d in pods.items() if n.startswith("web-") and "nodeName" not in d["spec"]]
    assert len(pending) == 3
    # read back and run for no time: nothing is created, deleted or moved
    again = run(text, until=0)
    assert again.created == [] and again.api.gone == {}
    assert canonical(state_documents(again)) == canonical(docs)
    # and run on: the same as running the original on from 150 s (same seed)
    rest = run(text)
    full = run(SCENARIO)
    assert len(rest.finished) == 2 and len(full.finished) == 4  # 2 had finished by 150 s
    assert len(rest.created) == 0  # the Job's last two pods were already there


def test_explain_after_run_matches_explain_of_the_state():
    sim = run(SCENARIO, until=150, explain=("default/web-x",))  # no such pod: nothing kept
    assert sim.last_attempt == {}
    keys = [r.key for r in sim.records.values() if r.node is None and r.key.startswith(
        "default/web-")]
    sim = run(SCENARIO, until=150, explain=(keys[0],))
    target, state = sim.last_attempt[keys[0]]
    after = explain_pod(state, default_config(), target)
    text = yaml.safe_dump_all(state_documents(sim))
    sc = load_scenario_text(text, "state.yaml")
    from_file = run_explain(sc, default_config(), keys[0])
    assert after == from_file
    assert after["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_cli_simulate_explain_state_out_and_summary(tmp_path: Path) -> None:
    text = (node("n1", cpu="2") + node("n2", cpu="1")
            + "".join(pod(f"low-{i}", "1", node_name=n, extra="  priority: 1\n")
                      for i, n in enumerate(("n1", "n1", "n2")))
            + pod("high", "2", extra="  priority: 100\n")
            + pod("huge", "8"))
    f = tmp_path / "s.yaml"
    f.write_text(text)
    out = tmp_path / "state.yaml"
    res = CliRunner().invoke(main, ["simulate", str(f), "--check", "--state-out", str(out),
                                    "--explain", "default/huge", "--explain", "default/high",
                                    "--explain", "default/nope"], terminal_width=200)
    assert res.exit_code == 0, res.output
    o = res.output
    assert "1 of 2 pods scheduled, 1 pending" in o
    assert "│    1 │ 0/2 nodes are available: 2 Insufficient cpu." in o
    assert "default/huge" in o
    assert "1 pod(s) preempted 2:" in o
    assert "default/high evicted default/low-1, default/low-0" in o
    assert "│ total │    2 │ 100% │" in o
    assert "2 nodes: n1, n2 │ filtered │ NodeResourcesFit: Insufficient cpu" in o
    assert "default/high: bound to n1; nothing to explain" in o
    assert "default/nope: not explained: no such pod in the run" in o
    state = list(yaml.safe_load_all(out.read_text()))
    names = sorted(d["metadata"]["name"] for d in state if d["kind"] == "Pod")
    assert names == ["high", "huge", "low-2"]  # the evicted ones left out
    res = CliRunner().invoke(main, ["explain", str(out), "--pod", "default/huge", "-o",
                                    "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["message"].startswith("0/2 nodes are available")


def test_explain_top_groups_the_rest():
    out = {"pod": "p", "selected": ["a"], "nodes": [
        {"node": "a", "feasible": True, "scores": {"X": 9}, "total": 9},
        {"node": "b", "feasible": True, "scores": {"X": 5}, "total": 5},
        {"node": "c", "feasible": False, "plugin": "F", "reasons": ["r1"]},
        {"node": "d", "feasible": True, "scores": {"X": 5}, "total": 5},
        {"node": "e", "feasible": False, "plugin": "F", "reasons": ["r1"]},
        {"node": "f", "feasible": False, "plugin": "G", "reasons": ["r2", "r3"]},
        {"node": "g", "feasible": True, "scores": {"X": 7}, "total": 7},
    ]}
    assert explain_rows(out, top=1) == [
        ("a", "total 9 *", "X 9"), ("g", "total 7", "X 7"), ("2 nodes: b, d", "total 5", "X 5"),
        ("2 nodes: c, e", "filtered", "F: r1"), ("f", "filtered", "G: r2, r3")]
    assert [r[0] for r in explain_rows(out, top=None)][:4] == ["a", "g", "b", "d"]


def test_scenarios_from_stdin_and_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a-nodes.yaml").write_text(node("n1"))
    (tmp_path / "b-pods.yml").write_text(pod("p", "100m"))
    (tmp_path / "notes.txt").write_text("not a scenario")
    runner = CliRunner()
    res = runner.invoke(main, ["simulate", str(tmp_path), "--placements", "-", "--check"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["node"] == "n1"
    res = runner.invoke(main, ["simulate", "-", "--placements", "-"],
                        input=node("n1") + pod("q", "100m"))
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["pod"] == "default/q"
    res = runner.invoke(main, ["explain", "-", "--pod", "default/q", "-o", "json"],
                        input=node("n1") + pod("q", "100m"))
    assert res.exit_code == 0 and json.loads(res.output)["selected"] == ["n1"]
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(main, ["simulate", str(empty)])
    assert res.exit_code == 2 and "no .yaml, .yml or .json files" in res.output


def test_explain_names_a_pod_a_controller_creates():
    sc = load_scenario_text(node("n1", cpu="1") + deployment(replicas=2, cpu="2"), "d.yaml")
    sim = run(node("n1", cpu="1") + deployment(replicas=2, cpu="2"))
    key = next(iter(sim.records.values())).key
    out = run_explain(sc, default_config(), key)
    assert out["pod"] == key and out["message"].startswith("0/1 nodes are available")


def test_future_faults_keep_their_remaining_time():
    text = node("n1") + node("n2") + pod("p", "100m") + fault("f", 100, "DeleteNode",
                                                               node="n2")
    sim = run(text, until=30)
    (f,) = [d for d in state_documents(sim) if d["kind"] == "Fault"]
    assert f["spec"]["at"] == 70
    sim = run(text, until=200)
    assert [d for d in state_documents(sim) if d["kind"] == "Fault"] == []
    assert [d["metadata"]["name"] for d in state_documents(sim) if d["kind"] == "Node"] == [
        "n1"]
