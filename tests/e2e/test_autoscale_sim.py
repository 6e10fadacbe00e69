"""cluster-autoscaler in ``simulate`` (issue 21, point 3), on small clusters whose story is
worked out by hand from cluster-autoscaler's rules (core/static_autoscaler.go RunOnce,
core/scaleup/orchestrator, core/scaledown/{planner,unneeded,eligibility}, its flag defaults:
--scan-interval 10s, --scale-down-unneeded-time 10m, --scale-down-delay-after-add 10m,
--scale-down-utilization-threshold 0.5). The reasoning is in each test.

Common to all: the autoscaler's loop runs at t = 0, 10, 20, … (virtual seconds), each time
after the scheduler has done what it can at that instant; a loop that would find the
cluster as the last one left it is skipped (it would decide nothing). Pending pods younger
than 2 s make a loop wait for more (no scale-up, no scale-down): pods that arrive at a loop's
instant are helped at the next loop. "1" cpu is 1000m; memory is never short here.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from click.testing import CliRunner

from kubesched.api.scenario import load_scenario
from kubesched.autoscaler.column_moves import ColumnMoves
from kubesched.autoscaler.options import AutoscalerOptions
from kubesched.autoscaler.simulated import AutoscaleSummary, ClusterAutoscaler, attach
from kubesched.backends.sim.cluster import SimCluster, SimResult
from kubesched.cli import main
from kubesched.config import default_config

GROUP_LABEL = "kubesched.io/node-group"


def node(name: str, cpu: str, group: str | None = None) -> dict[str, Any]:
    labels = {GROUP_LABEL: group} if group else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def group(name: str, cpu: str, max_size: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "NodeGroup",
            "metadata": {"name": name},
            "spec": {"maxSize": max_size, **spec, "template": {"status": {"capacity": {
                "cpu": cpu, "memory": "16Gi", "pods": "110"}}}}}


def replica_set(name: str, replicas: int, cpu: str, duration: int | None = None
                ) -> dict[str, Any]:
    md: dict[str, Any] = {"labels": {"app": name}}
    if duration is not None:
        md["annotations"] = {"kubesched.io/duration": str(duration)}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": md, "spec": {"containers": [{
                         "name": "c", "image": "x",
                         "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}}}


def pod(name: str, cpu: str, *, node_name: str | None = None, app: str | None = None,
        arrival: float | None = None, **spec: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default",
                          "labels": {"app": app} if app else {}}
    if arrival is not None:
        md["annotations"] = {"kubesched.io/arrival": str(arrival)}
    s: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"cpu": cpu, "memory": "1Gi"}}}], **spec}
    if node_name:
        s["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": s}


def run(tmp_path: Path, docs: list[dict[str, Any]], **options: Any
        ) -> tuple[SimCluster, SimResult, ClusterAutoscaler, AutoscaleSummary]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    sim = SimCluster(load_scenario([str(path)]), default_config())
    ca = attach(sim, AutoscalerOptions(**options))
    result = sim.run()
    return sim, result, ca, ca.summary(result.virtual_seconds)


def placements(result: SimResult, prefix: str) -> list[tuple[str | None, float]]:
    return sorted((r.node, r.time) for r in result.records if r.key.startswith(prefix))


def test_scale_up_after_the_provisioning_delay_and_down_after_the_unneeded_time(
        tmp_path: Path) -> None:
    # base (2 cpu) takes 2 of web's 6 pods (1 cpu each, running 1200 s) at t=0; 4 are
    # unschedulable. Loop 0: they are 0 s old, the loop waits. Loop 10: the estimate for
    # "small" (4 cpu): 4 pods on one new node; small-0 is asked for at 10 and joins at
    # 10 + 60 = 70, when the scheduler binds the 4 pods to it. They finish at 70 + 1200 =
    # 1270: small-0 is empty (utilisation 0 < 0.5) at the loop of 1270, unneeded from then,
    # and deleted at 1270 + 600 = 1870 (the scale-up at 10 was long before). Billed from the
    # decision to the deletion: 1860 s = 0.516667 h, at 1.5 per node-hour 0.775.
    _sim, result, ca, done = run(tmp_path, [
        node("base", "2"), group("small", "4", 3, price=1.5, provisioningDelaySeconds=60),
        replica_set("web", 6, "1", duration=1200)])
    assert placements(result, "default/web") == [("base", 0.0)] * 2 + [("small-0", 70.0)] * 4
    assert ca.scale_ups == [(10.0, "small", 1)]
    assert ca.scale_downs == [(1870.0, "small-0")]
    (g,) = done.groups
    assert (g.at_start, g.peak, g.at_end, g.added, g.removed) == (0, 1, 0, 1, 1)
    assert g.series == [(10.0, 1, 0), (70.0, 1, 1), (1870.0, 0, 0)]
    assert g.node_hours == pytest.approx(1860 / 3600)
    assert g.cost == pytest.approx(0.775)
    assert result.virtual_seconds == 1870.0


def test_no_second_scale_up_for_pods_waiting_for_upcoming_nodes(tmp_path: Path) -> None:
    # As above, but "odd" (nodeSelector no node or template has) arrives at 30 while small-0
    # is still provisioning (joins at 70). Loop 30: the pending pods are web's 4 and odd;
    # web's 4 fit on the upcoming small-0 (a template node standing in for it) and are not
    # helped again; odd is 0 s old: wait. Loop 40: odd only, and no group's template can
    # host it: no scale-up (without the upcoming node counted, this loop would ask for
    # small-1 for web's pods, maxSize 3 allowing it). odd stays pending, reported as a pod no
    # group can help.
    _sim, result, ca, done = run(tmp_path, [
        node("base", "2"), group("small", "4", 3, provisioningDelaySeconds=60),
        replica_set("web", 6, "1", duration=1200),
        pod("odd", "1", arrival=30, nodeSelector={"disk": "nvme"})])
    assert ca.scale_ups == [(10.0, "small", 1)]
    assert placements(result, "default/web")[2:] == [("small-0", 70.0)] * 4
    assert [r.key for r in result.pending] == ["default/odd"]
    assert done.cannot_help == ["default/odd"]


def test_max_size_caps_the_scale_up(tmp_path: Path) -> None:
    # No node; web's 8 pods (1 cpu) unschedulable at 0. Loop 10: "small" (4 cpu, maxSize 1)
    # has room for 1 node: the estimate stops at it (4 pods). It joins at 10 (no delay) and
    # takes 4 pods; the loops after find the group at its maxSize: no option, the other 4
    # stay pending — not "cannot help": the template could host them.
    _sim, result, ca, done = run(tmp_path, [group("small", "4", 1), replica_set("web", 8, "1")])
    assert ca.scale_ups == [(10.0, "small", 1)]
    assert sum(1 for r in result.records if r.node == "small-0") == 4
    assert len(result.pending) == 4
    assert done.cannot_help == []
    assert done.groups[0].at_end == 1


def _two_small_nodes(min_size: int = 0) -> list[dict[str, Any]]:
    # small-a holds a 3-cpu pod of "keep" (utilisation 0.75: needed); small-b is empty
    # (utilisation 0: unneeded from the first loop, at 0)
    return [group("small", "4", 3, minSize=min_size, price=2.0),
            node("small-a", "4", "small"), node("small-b", "4", "small"),
            replica_set("keep", 1, "3"), pod("keep-0", "3", node_name="small-a", app="keep")]


def test_scale_down_after_exactly_the_unneeded_time(tmp_path: Path) -> None:
    # small-b unneeded from the loop at 0; nothing changes after, so the next loop is the
    # one it asked for: 0 + 600. small-b goes at 600 (empty: deleted at once); the run ends
    # there. Node-hours: both nodes from 0 to 600: 1200 s = 1/3 h, at 2.0: 0.6667.
    _sim, _result, ca, done = run(tmp_path, _two_small_nodes())
    assert ca.scale_downs == [(600.0, "small-b")]
    (g,) = done.groups
    assert (g.at_start, g.at_end, g.removed) == (2, 1, 1)
    assert g.node_hours == pytest.approx(1200 / 3600)
    assert done.cost == pytest.approx(2.0 * 1200 / 3600)


def test_a_longer_unneeded_time_from_the_flags(tmp_path: Path) -> None:
    _sim, _result, ca, _done = run(tmp_path, _two_small_nodes(),
                                   scale_down_unneeded_time=900.0)
    assert ca.scale_downs == [(900.0, "small-b")]


def test_no_scale_down_within_the_delay_after_a_scale_up(tmp_path: Path) -> None:
    # As above, plus "big" (8 cpu, 45 s to provision) and a 6-cpu pod arriving at 300 that
    # only a big node can hold. Loop 300: it is 0 s old: wait (and no scale-down). Loop
    # 310: big-0 asked for; it joins at 355 and takes the pod then (the loops stay on
    # their 10 s grid: the next is at 360). small-b has been unneeded since 0 (600 would be
    # its time) but the scale-up at 310 holds scale-down until 310 + 600 = 910.
    docs = [*_two_small_nodes(), group("big", "8", 2, provisioningDelaySeconds=45),
            pod("large", "6", arrival=300)]
    _sim, result, ca, _done = run(tmp_path, docs)
    assert ca.scale_ups == [(310.0, "big", 1)]
    assert placements(result, "default/large") == [("big-0", 355.0)]
    assert ca.scale_downs == [(910.0, "small-b")]


def test_min_size_is_kept(tmp_path: Path) -> None:
    # minSize 2: small-b is unneeded from 0 and due at 600, but the group would go below its
    # minSize; nothing removed, and the run ends at that loop (nothing left to wait for).
    _sim, result, ca, done = run(tmp_path, _two_small_nodes(min_size=2))
    assert ca.scale_downs == []
    assert done.groups[0].at_end == 2
    assert result.virtual_seconds == 600.0


def test_a_drained_node_s_pods_are_evicted_and_made_again_elsewhere(tmp_path: Path) -> None:
    # small-a holds "move" (1 cpu: utilisation 0.25), small-b holds "keep" (3 cpu: 0.75).
    # From loop 0 small-a is unneeded: its pod fits on small-b (3 + 1 = 4 cpu). Loop 600:
    # small-a is tainted ToBeDeletedByClusterAutoscaler, move-0 evicted (terminating for its
    # 30 s grace period); the ReplicaSet makes a new pod at once, bound to small-b at 600.
    # move-0 is gone at 630; the loop at 630 deletes small-a.
    docs = [group("small", "4", 3), node("small-a", "4", "small"),
            node("small-b", "4", "small"), replica_set("keep", 1, "3"),
            replica_set("move", 1, "1"),
            pod("keep-0", "3", node_name="small-b", app="keep"),
            pod("move-0", "1", node_name="small-a", app="move")]
    sim, result, ca, _done = run(tmp_path, docs)
    assert ca.scale_downs == [(600.0, "small-a")]
    assert ca.lives["small-a"].removed == 630.0
    new = [r for r in result.records if r.key.startswith("default/move-")
           and r.key != "default/move-0"]
    assert [(r.node, r.time) for r in new] == [("small-b", 600.0)]
    assert "small-a" not in sim.nodes


@pytest.mark.parametrize("api_order", [False, True], ids=["a-first", "b-first"])
def test_the_drain_simulation_moves_a_node_s_pods_in_name_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_order: bool) -> None:
    # "old" (group g, 8 cpu) holds a-pod (1 cpu) and b-pod (2 cpu): utilisation 3/8, a
    # candidate. Elsewhere (no group) d1 has 2 cpu free, d2 1 cpu. In name order a-pod
    # goes first, to d1 (1 left), and b-pod then fits nowhere: old is unremovable, never
    # scaled down. (b-pod first would fit both: b to d1, a to d2.) The API server's own
    # order of a node's pods (a set's, which moved with the interpreter's hash seed) must
    # not change this: here it is made either way.
    from kubesched.backends.sim.apiserver import ApiServer
    real = ApiServer.pods_on_node

    def ordered(self: ApiServer, node_name: str) -> list[str]:
        uids = real(self, node_name)
        return sorted(uids, key=lambda u: self.pods[u].key, reverse=api_order)

    monkeypatch.setattr(ApiServer, "pods_on_node", ordered)
    safe = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
    docs = [group("g", "8", 3), node("old", "8", "g"), node("d1", "4"), node("d2", "2"),
            pod("filler-1", "2", node_name="d1"), pod("filler-2", "1", node_name="d2"),
            pod("a-pod", "1", node_name="old"), pod("b-pod", "2", node_name="old")]
    for d in docs[-2:]:
        d["metadata"]["annotations"] = safe
    _sim, _result, ca, _done = run(tmp_path, docs)
    assert ca.scale_downs == []
    assert "old" in ca.unremovable


def test_simulate_prints_the_node_groups_and_takes_the_flags(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(_two_small_nodes()))
    out = CliRunner().invoke(main, ["simulate", str(path), "--scale-down-unneeded-time",
                                    "15m", "--expander", "least-waste"])
    assert out.exit_code == 0, out.output
    assert "Node groups (cluster-autoscaler)" in out.output
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.output.splitlines()
            if line.startswith("│")]
    # min, max, start, peak, end, added, removed; both nodes 0 → 900 s (15 min): 0.5 h at
    # 2.0 per node-hour
    assert ["small", "0", "3", "2", "2", "1", "0", "1", "0.50", "1.00"] in rows


@pytest.mark.parametrize("flag, value, says", [
    ("--scan-interval", "ten", "scan-interval"),
    ("--scale-down-unneeded-time", "-5", "scale-down-unneeded-time"),
    ("--scale-down-utilization-threshold", "1.5", "scale-down-utilization-threshold"),
    ("--scan-interval", "0s", "scan-interval"),
    ("--max-nodes-total", "-1", "max-nodes-total"),
])
def test_bad_autoscaler_options(tmp_path: Path, flag: str, value: str, says: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(_two_small_nodes()))
    out = CliRunner().invoke(main, ["simulate", str(path), flag, value])
    assert out.exit_code == 2
    assert says in out.output and value in out.output
    assert "Traceback" not in out.output


def test_an_unknown_expander_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(_two_small_nodes()))
    out = CliRunner().invoke(main, ["simulate", str(path), "--expander", "cheapest"])
    assert out.exit_code == 2
    assert "cheapest" in out.output


def _drain_and_scale_up() -> list[dict[str, Any]]:
    return [group("small", "4", 3), node("small-a", "4", "small"),
            node("small-b", "4", "small"), replica_set("keep", 1, "3"),
            replica_set("move", 1, "1"),
            pod("keep-0", "3", node_name="small-b", app="keep"),
            pod("move-0", "1", node_name="small-a", app="move"),
            group("big", "8", 2, provisioningDelaySeconds=45), pod("large", "6", arrival=300)]


def _story(ca: ClusterAutoscaler, result: SimResult) -> tuple[Any, ...]:
    return (ca.scale_ups, ca.scale_downs,
            {n: (life.requested, life.ready, life.removed) for n, life in ca.lives.items()},
            result.virtual_seconds, sorted((r.key, r.node) for r in result.records))


@pytest.mark.parametrize("until", [305.0, 330.0, 355.0, 615.0, 930.0])
def test_a_run_cut_and_resumed_scales_as_the_whole_run(tmp_path: Path, until: float) -> None:
    # the whole story (worked out as in the tests above): big-0 asked for at 310, joined at
    # 355; small-a drained at 910 (after the cooldown of the scale-up), deleted at 940 once
    # move-0's grace period is over. Cut at ``until`` (while big-0 provisions, while
    # small-a drains, …), written with --state-out and resumed, the run tells the same.
    from kubesched.backends.sim.state import write_state

    _sim, result, ca, _done = run(tmp_path, _drain_and_scale_up())
    assert ca.scale_ups == [(310.0, "big", 1)]
    assert ca.scale_downs == [(910.0, "small-a")]
    assert ca.lives["small-a"].removed == 940.0
    path = tmp_path / "scenario.yaml"
    cut = SimCluster(load_scenario([str(path)]), default_config())
    attach(cut, AutoscalerOptions())
    cut.until = until
    cut.run()
    state = tmp_path / "state.yaml"
    state.write_text(write_state(cut))
    again = SimCluster(load_scenario([str(state)]), default_config())
    ca2 = attach(again, AutoscalerOptions())
    result2 = again.run()
    whole = _story(ca, result)
    resumed = _story(ca2, result2)
    assert resumed[:4] == whole[:4]
    # the resumed run's records hold the pods still on the API server at the cut
    assert set(resumed[4]) <= set(whole[4])


def test_compare_takes_an_autoscaler_option_as_its_two_sides(tmp_path: Path) -> None:
    # the first test's story: small-0 asked for at 10, empty from 1270; unneeded for 5 min
    # it goes at 1570 (A: 1560 s = 0.433333 h), for 10 min at 1870 (B: 0.516667 h); at 1.5
    # per node-hour 0.65 and 0.775
    import json

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all([
        node("base", "2"), group("small", "4", 3, price=1.5, provisioningDelaySeconds=60),
        replica_set("web", 6, "1", duration=1200)]))
    out = CliRunner().invoke(main, ["compare", str(path), "-o", "json",
                                    "--scale-down-unneeded-time", "5m",
                                    "--scale-down-unneeded-time", "10m"])
    assert out.exit_code == 0, out.output
    a, b = json.loads(out.output)["sides"]
    assert a["name"] == "--scale-down-unneeded-time 5m"
    assert (a["autoscaler"]["nodeHours"], b["autoscaler"]["nodeHours"]) == pytest.approx(
        (1560 / 3600, 1860 / 3600))
    assert (a["autoscaler"]["cost"], b["autoscaler"]["cost"]) == pytest.approx((0.65, 0.775))
    assert a["autoscaler"]["scaleDowns"] == [{"t": 1570.0, "node": "small-0"}]


def test_the_readme_example_scales_up_a_gpu_node(tmp_path: Path) -> None:
    # cluster.yaml and workload.yaml as for plan's example: train-2 (2 GPUs, tolerating the
    # GPU taint) arrives at 120 s and is unschedulable. Loop 120: 0 s old, wait. Loop 130:
    # "gpu" is the only group whose template hosts it; gpu-0 asked for, joins at 130 + 300
    # = 430 and takes it.
    from importlib import resources

    base = resources.files("kubesched") / "examples" / "readme"
    paths = [str(base / f"{n}.yaml") for n in ("cluster", "workload", "nodegroups")]
    sim = SimCluster(load_scenario(paths), default_config())
    ca = attach(sim, AutoscalerOptions())
    result = sim.run()
    assert ca.scale_ups == [(130.0, "gpu", 1)]
    assert placements(result, "default/train-2") == [("gpu-0", 430.0)]


def test_the_report_shows_nodes_per_group_and_cost(tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(_two_small_nodes()))
    report = tmp_path / "r.html"
    out = CliRunner().invoke(main, ["simulate", str(path), "--quiet", "--report", str(report)])
    assert out.exit_code == 0, out.output
    text = report.read_text()
    assert "Nodes per node group" in text
    # small: 2 nodes at the start, 1 at the end, 1/3 node-hour at 2.0 (the scale-down test)
    assert ("<tr><td>small</td><td>0</td><td>3</td><td>2</td><td>2</td><td>1</td><td>0</td>"
            "<td>1</td><td>0.33</td><td>2</td><td>0.67</td></tr>") in text


def test_sweep_takes_autoscalers_as_an_axis(tmp_path: Path) -> None:
    # compare's story as a sweep: small-0 empty from 1270 goes after 5 min at 1570 (0.65)
    # or after the default 10 min at 1870 (0.775); a scenario without NodeGroups has none
    import csv

    (tmp_path / "s.yaml").write_text(yaml.safe_dump_all([
        node("base", "2"), group("small", "4", 3, price=1.5, provisioningDelaySeconds=60),
        replica_set("web", 6, "1", duration=1200)]))
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump_all([node("base", "2")]))
    (tmp_path / "sweep.yaml").write_text(
        "kind: Sweep\nscenarios: [s.yaml, plain.yaml]\nseeds: 1\nautoscalers:\n"
        "- {name: quick, scale-down-unneeded-time: 5m}\n- {name: default}\n")
    out = CliRunner().invoke(main, ["sweep", str(tmp_path / "sweep.yaml"), "--jobs", "2",
                                    "--results", str(tmp_path / "r.csv")])
    assert out.exit_code == 0, out.output
    rows = {(r["scenario"], r["autoscaler"]): r for r in
            csv.DictReader((tmp_path / "r.csv").open())}
    assert sorted(rows) == [("plain", "default"), ("plain", "quick"), ("s", "default"),
                            ("s", "quick")]
    assert float(rows["s", "quick"]["cost"]) == pytest.approx(0.65)
    assert float(rows["s", "default"]["cost"]) == pytest.approx(0.775)
    assert float(rows["s", "default"]["node_hours"]) == pytest.approx(1860 / 3600)
    assert rows["s", "default"]["pending"] == "0"
    assert rows["plain", "quick"]["node_hours"] == rows["plain", "quick"]["cost"] == ""
    assert "cost 0.65" in out.stderr and "cost 0.78" in out.stderr  # the runs' lines


@pytest.mark.parametrize(("entry", "fld"), [
    ("{name: x, expander: cheapest}", "autoscalers[0].expander"),
    ("{name: x, scan-interval: soon}", "autoscalers[0].scan-interval"),
    ("{name: x, max-nodes: 3}", "autoscalers[0].max-nodes"),
    ("{expander: price}", "autoscalers[0].name"),
])
def test_a_sweeps_bad_autoscaler_is_refused_naming_the_field(tmp_path: Path, entry: str,
                                                             fld: str) -> None:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump_all([node("base", "2")]))
    (tmp_path / "sweep.yaml").write_text(
        f"kind: Sweep\nscenarios: [s.yaml]\nautoscalers:\n- {entry}\n")
    out = CliRunner().invoke(main, ["sweep", str(tmp_path / "sweep.yaml"),
                                    "--results", str(tmp_path / "r.csv")])
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith(f"error: {tmp_path / 'sweep.yaml'}: field {fld}: ")
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("seed", range(4))
def test_the_scale_down_as_column_changes_decides_as_the_checker(
        tmp_path: Path, seed: int) -> None:
    # A few hours of pods that come and go on two groups, so that nodes are added, become
    # underused, and have their pods moved in the scale-down simulation, loop after loop.
    # Every pod is judged on its node and columns only, so the simulation moves them as
    # column changes (``ColumnMoves``); asked of the checker instead (the mirror it keeps
    # across loops edited and put back at each), the run must be the same.
    rng = random.Random(seed)
    safe = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
    docs: list[dict[str, Any]] = [group("small", "4", 8), group("big", "8", 4, priority=1),
                                  node("small-0", "4", "small")]
    for i in range(120):
        p = pod(f"p{i:03d}", f"{rng.choice([250, 500, 1000, 1500])}m",
                arrival=round(rng.uniform(0, 4 * 3600), 1))
        p["metadata"]["annotations"].update(safe)
        p["metadata"]["annotations"]["kubesched.io/duration"] = str(rng.randint(300, 5400))
        docs.append(p)

    moves = 0
    real_move = ColumnMoves.move

    def counted(self: ColumnMoves, *a: Any, **k: Any) -> Any:
        nonlocal moves
        got = real_move(self, *a, **k)
        moves += len(got[1])
        return got

    with mock.patch.object(ColumnMoves, "move", counted):
        _s, columns, ca_columns, _d = run(tmp_path, docs)
    assert moves > 0 and ca_columns.scale_downs  # pods were moved, nodes went
    with mock.patch.object(ColumnMoves, "of", return_value=None):
        _s, checker, ca_checker, _d = run(tmp_path, docs)
    assert [(r.key, r.node, r.time) for r in columns.records] == [
        (r.key, r.node, r.time) for r in checker.records]
    assert ca_columns.scale_ups == ca_checker.scale_ups
    assert ca_columns.scale_downs == ca_checker.scale_downs
    assert ca_columns.unremovable == ca_checker.unremovable
