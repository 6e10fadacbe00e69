"""``kubesched capacity``: copies of a pod after the scenario's pending pods, one at a time,
never preempting, unseen by controllers, until the first failure; answers against upstream's
verdicts (../shared/golden/explain*/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.e2e.test_faults import node, pod
from tests.e2e.test_workloads import deployment
from tests.golden.test_explain_golden import (
    CASES,
    VERSION_DIFFERENCES,
    _decided_by,
    _upstream,
)

from kubesched.api.scenario import load_scenario_text
from kubesched.capacity import capacity
from kubesched.cli import main
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from shared_files import golden_config, load_golden

WEB = """apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}
"""


def cli(tmp_path: Path, scenario: str, pod_text: str = WEB, *args: str) -> tuple[int, str]:
    (tmp_path / "s.yaml").write_text(scenario)
    (tmp_path / "pod.yaml").write_text(pod_text)
    r = CliRunner().invoke(main, ["capacity", str(tmp_path / "s.yaml"), "--pod",
                                  str(tmp_path / "pod.yaml"), *args])
    return r.exit_code, r.output


def test_pending_pods_first_then_copies_until_the_first_failure(tmp_path: Path) -> None:
    code, out = cli(tmp_path, node("n1", cpu="4") + node("n2", cpu="2") + pod("pend", "1"),
                    WEB, "-o", "json")
    assert code == 0, out
    # 6 CPUs, 1 taken by the pending pod: ten copies of 500m; LeastAllocated spreads them
    assert json.loads(out) == {"count": 10, "nodes": {"n1": 6, "n2": 4},
                               "message": "0/2 nodes are available: 2 Insufficient cpu."}


def test_max_stops_with_a_null_message(tmp_path: Path) -> None:
    code, out = cli(tmp_path, node("n1", cpu="4"), WEB, "-o", "json", "--max", "3")
    assert code == 0, out
    assert json.loads(out) == {"count": 3, "nodes": {"n1": 3}, "message": None}


def test_table(tmp_path: Path) -> None:
    code, out = cli(tmp_path, node("n1", cpu="1") + pod("pend", "1"))
    assert code == 0, out
    assert "The scenario's 1 pending pod(s) first: 1 scheduled, 0 pending." in out
    assert "0 copies of default/web fit." in out
    assert "The next copy does not fit: 0/1 nodes are available: 1 Insufficient cpu." in out


def test_copies_never_preempt() -> None:
    low = "".join(pod(f"low-{i}", "1", node_name="n1", extra="  priority: 0\n")
                  for i in range(2))
    scen = load_scenario_text(node("n1", cpu="2") + low, "s.yaml")
    tmpl = load_scenario_text(pod("vip", "1", extra="  priority: 1000\n"), "p.yaml").pods[0]
    out = capacity(scen, default_config(), tmpl)
    # a preempting pod would have evicted the low-priority ones; the sentence is left out
    assert (out.count, out.message) == (0, "0/1 nodes are available: 1 Insufficient cpu.")
    assert out.first.preemptions == {}


def test_no_controller_adopts_or_counts_the_copies(tmp_path: Path) -> None:
    # the Deployment selects app=web, as the copies' labels match; were they adopted, the
    # ReplicaSet would delete them down to its 2 replicas
    code, out = cli(tmp_path, node("n1", cpu="4") + deployment("web", replicas=2, cpu="1"),
                    WEB, "-o", "json")
    assert code == 0, out
    assert json.loads(out)["count"] == 4


def test_copies_are_named_as_cluster_capacity_names_them() -> None:
    scen = load_scenario_text(node("n1", cpu="2") + pod("web-0", "100m", node_name="n1"),
                              "s.yaml")
    tmpl = load_scenario_text(WEB, "p.yaml").pods[0]
    out = capacity(scen, default_config(), tmpl, max_count=2)
    assert out.copies == ["web-1", "web-2"]  # web-0 is taken


def test_priority_from_the_scenarios_class_and_a_missing_class_is_bad_input(
        tmp_path: Path) -> None:
    pc = ("---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\n"
          "value: 100\n")
    with_class = WEB.replace("spec: {", "spec: {priorityClassName: hi, ")
    code, out = cli(tmp_path, node("n1", cpu="1") + pc, with_class, "-o", "json")
    assert code == 0, out
    assert json.loads(out)["count"] == 2
    code, out = cli(tmp_path, node("n1", cpu="1"), with_class, "-o", "json")
    assert code == 2
    assert "no PriorityClass with name hi was found" in out


def test_pod_file_must_hold_one_pod(tmp_path: Path) -> None:
    code, out = cli(tmp_path, node("n1"), WEB + "---\n" + WEB.replace("web", "other"))
    assert code == 2
    assert "exactly one Pod (found 2 Pod(s))" in out


GOLDEN = [(f, p) for f, p in CASES if f in ("explain", "explain-config")]


@pytest.mark.parametrize(("folder", "path"), GOLDEN, ids=[f"{f}/{p.stem}" for f, p in GOLDEN])
def test_first_copy_as_upstream_decides(folder: str, path: Path) -> None:
    """Each golden target as the pod to copy, with --max 1: the one copy goes to one of
    upstream's top-scoring nodes, or fails with upstream's FitError message."""
    if path.stem in VERSION_DIFFERENCES:
        pytest.skip(VERSION_DIFFERENCES[path.stem])
    want = _upstream(path)
    if _decided_by(want) - set(in_tree_registry()):
        pytest.skip("decided by plugins not yet exact")
    scenario = load_golden(path)
    target = next(p for p in scenario.pods if p.key == want["pod"])
    scenario.pods.remove(target)
    config = golden_config(scenario, path)
    out = capacity(scenario, config, target, max_count=1)
    if want.get("error"):
        assert (out.count, out.message) == (0, want["error"])
    else:
        assert out.count == 1 and out.message is None
        assert set(out.nodes) <= set(want["top_nodes"])
