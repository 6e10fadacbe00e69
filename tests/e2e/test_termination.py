"""A simulation always ends: pods that nothing on the virtual clock can help are reported
pending with their reason (issue 14: no nodes, an error every cycle, a gate no one lifts),
and ``--until`` bounds virtual time."""

from __future__ import annotations

import json
import subprocess
import sys

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import load_config

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def pod(name: str, cpu: str = "100m", extra: str = "", annotations: str = "{}") -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: "
            f"{annotations}}}\nspec:\n{extra}"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


NO_PREFILTER = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"preFilter": {"disabled": [{"name": "*"}]}}}]}


def run(text: str, config: dict | None = None, until: float | None = None) -> dict:
    cfg = load_config(config, "test-config.yaml") if config else None
    sim = SimCluster(load_scenario_text(text, "test.yaml"), cfg)
    sim.until = until
    return {r.key: r for r in sim.run().records}


def test_no_nodes_ends_with_the_error_as_reason():
    recs = run(pod("p"))
    assert recs["default/p"].node is None
    assert recs["default/p"].message == "no nodes available to schedule pods"
    assert recs["default/p"].attempts == 1


def test_no_nodes_is_unschedulable_not_a_scheduler_error():
    # upstream's schedulingCycle turns ErrNoNodesAvailable into UnschedulableAndUnresolvable:
    # PodScheduled=False with reason Unschedulable (SchedulerError is for errors)
    sim = SimCluster(load_scenario_text(pod("p"), "test.yaml"))
    sim.run()
    (p,) = sim.api.pods.values()
    (cond,) = [c for c in p.status.conditions if c.type == "PodScheduled"]
    assert (cond.status, cond.reason, cond.message) == (
        "False", "Unschedulable", "no nodes available to schedule pods")


def test_an_error_every_cycle_ends():
    # every PreFilter disabled: the Filter plugins find no state of theirs and error
    recs = run(NODE + pod("p"), NO_PREFILTER)
    rec = recs["default/p"]
    assert rec.node is None
    assert rec.attempts == 1
    assert rec.message is not None and "from cycleState" in rec.message


def test_error_pod_is_retried_while_events_are_due():
    # "p" errors (no nodes) at t=0; "q" arrives at t=50, so until then "p" is retried as its
    # backoff expires (upstream would retry it forever); after "q" has failed too, it ends
    recs = run(pod("p") + pod("q", annotations="{kubesched.io/arrival: '50'}"))
    p, q = recs["default/p"], recs["default/q"]
    assert p.attempts > 3 and p.time >= 50
    assert q.attempts >= 1 and q.time >= 50
    assert p.message == q.message == "no nodes available to schedule pods"


def test_gate_no_one_lifts_ends_reported_as_gated():
    recs = run(NODE + pod("g", extra="  schedulingGates: [{name: example.com/wait}]\n"))
    rec = recs["default/g"]
    assert rec.node is None and rec.attempts == 0
    assert rec.pending_reason() == "waiting for scheduling gates: [example.com/wait]"


def test_until_bounds_virtual_time():
    late = pod("late", annotations="{kubesched.io/arrival: '500'}")
    recs = run(NODE + pod("big", "3") + late, until=100)
    assert "default/late" not in recs  # never arrived before the bound
    assert recs["default/big"].node is None
    recs = run(NODE + pod("big", "3") + late)
    assert recs["default/late"].node == "n1"


def test_cli_simulate_ends_on_each_cause(tmp_path):
    """Through the command itself, in a child process with a deadline: a regression hangs
    the child, not the test run."""
    scen = tmp_path / "s.yaml"
    scen.write_text(pod("nonode"))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(NO_PREFILTER))
    scen2 = tmp_path / "s2.yaml"
    scen2.write_text(NODE + pod("p") + pod("g", extra="  schedulingGates: [{name: x.io/y}]\n"))
    for args in ([str(scen)], [str(scen2), "--config", str(cfg)], [str(scen2)]):
        out = subprocess.run([sys.executable, "-m", "kubesched.cli", "simulate", *args,
                              "--placements", "-"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        lines = [json.loads(x) for x in out.stdout.splitlines()]
        assert lines and all(x["attempts"] <= 1 for x in lines)


def test_a_binding_refused_every_cycle_ends():
    # NodeResourcesFit disabled: "b" is placed where the simulated kubelet refuses it, an
    # error each cycle; nothing else changes, so the run ends with that reason
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1",
              "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                  "multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}]}
    big = NODE.replace('cpu: "2"', 'cpu: "4"')
    recs = run(big + pod("a", "3") + pod("b", "3"), config)
    assert recs["default/a"].node == "n1"
    b = recs["default/b"]
    assert b.node is None and b.attempts == 1
    assert b.message == ('running Bind plugin "DefaultBinder": pod default/b does not fit '
                         "on node n1: insufficient cpu")
