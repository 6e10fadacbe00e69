"""Dumps as a cluster holds them (issue 20): realistic ``kubectl get -o yaml`` dumps taken
mid-rollout and mid-outage (tests/dumps/), run as the cluster would go on from them.

- a terminating pod holds its resources until its deletionTimestamp, counted from the dump's
  now (its newest timestamp), and then frees them; a pending terminating pod is never
  scheduled and is reported apart;
- NoExecute taints the dump holds are the taint manager's from the first instant, their
  tolerationSeconds counted from the taint's timeAdded; the ReplicaSets replace the pods;
- what a dump holds that kubesched does not model is named in a one-line warning; an object
  the release does not serve is bad input.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from kubesched.api.scenario import load_scenario, load_scenario_text
from kubesched.backends.sim.cluster import SimCluster, SimResult
from kubesched.cli import main

DUMPS = Path(__file__).parent.parent / "dumps"
ROLLOUT = str(DUMPS / "dumps-terminating-rollout.yaml")
OUTAGE = str(DUMPS / "dumps-unreachable-node.yaml")
NODE_A, NODE_C, NODE_E = "gke-prod-pool-1-a1b2", "gke-prod-pool-1-c3d4", "gke-prod-pool-1-e5f6"


def _run(path: str) -> tuple[SimCluster, SimResult]:
    sim = SimCluster(load_scenario([path]), check=True)
    return sim, sim.run()


def _epoch(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def test_a_dumps_now_is_its_newest_timestamp() -> None:
    # node a's heartbeat (and its status managedFields entry) is the newest thing that
    # happened; the terminating pods' deletionTimestamps lie in the future and do not count
    assert load_scenario([ROLLOUT]).dump_time == _epoch("2026-11-30T10:15:40Z")
    assert load_scenario([OUTAGE]).dump_time == _epoch("2026-11-30T10:15:40Z")


def test_the_pod_waiting_for_a_terminating_pods_cpu_is_scheduled_when_it_is_gone() -> None:
    """The rollout's last step: the old web pod on node a was deleted at 10:15:30 (grace
    30 s: deletionTimestamp 10:16:00), its replacement is pending for want of CPU. The
    cluster binds the replacement on node a once the old pod is gone: at 10:16:00 at the
    latest, 20 s after the dump's now."""
    sim, result = _run(ROLLOUT)
    recs = {r.key: r for r in result.records}
    web = recs["shop/web-7f9b5d6c8-m5zqk"]
    assert (web.node, web.time) == (NODE_A, 20.0)
    assert result.pending == []
    # the ReplicaSets had their pods: the terminating one's replacement is the pending one
    # (its controller does not count a terminating pod), so no pod is created
    assert sim.created == []
    assert "shop/web-6d4c8b9f7-tq7vn" not in {p.key for p in sim.pods.values()}
    assert sim.finished == []  # deleted, not run to completion (no Succeeded pod in --state-out)


def test_a_pending_terminating_pod_is_never_scheduled_and_is_reported_apart() -> None:
    """The report pod (100m) would fit on node a from the start, but it is being deleted:
    upstream's scheduler skips it (skipPodSchedule) and it is gone when its grace ends."""
    sim, result = _run(ROLLOUT)
    rec = next(r for r in result.records if r.key == "shop/nightly-report-29405370-7kq2x")
    assert (rec.node, rec.attempts) == (None, 0)
    assert rec.message == "evicted: pod deleted (terminating at load)"
    assert rec in result.evicted and rec not in result.pending
    assert sim.accounting.event_counts.get("FailedScheduling") == 1 + 1  # skip + web's failure
    assert "shop/nightly-report-29405370-7kq2x" not in {p.key for p in sim.pods.values()}
    assert result.virtual_seconds == 25.0  # gone at its deletionTimestamp, 10:16:05


def test_an_unreachable_nodes_pods_are_evicted_as_their_tolerations_run_out() -> None:
    """Node e stopped posting status at 10:14:10, 90 s before the dump; the node lifecycle
    controller's unreachable taints carry that timeAdded. cart's pod tolerates 60 s (overdue:
    evicted at once), api's the default 300 s (evicted 210 s after the dump), fluent-bit
    everything (stays). Their ReplicaSets replace the evicted pods elsewhere."""
    sim, result = _run(OUTAGE)
    placed = {r.key.rsplit("-", 1)[0]: (r.node, r.time) for r in result.records}
    assert placed == {"shop/cart-84f6d9b7c5": (NODE_A, 0.0),
                      "shop/api-5b8d7c6f4": (NODE_C, 210.0)}
    on_e = sorted(p.key for p in sim.pods.values() if p.spec.node_name == NODE_E)
    assert on_e == ["logging/fluent-bit-9dkq2"]
    assert list(sim.api.gone.values()) == [f"evicted: node {NODE_E} unreachable"] * 2


def test_a_hand_written_noexecute_taint_without_time_added_is_left_as_it_is() -> None:
    """No taint manager has seen a taint without timeAdded (a scenario written for the
    scheduler alone, as upstream's scheduler tests and the golden cases are): its pods stay."""
    text = """
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {taints: [{key: dedicated, value: infra, effect: NoExecute}]}
status: {capacity: {cpu: '2', memory: 4Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {nodeName: n1, containers: [{name: c, image: i}]}
"""
    sim = SimCluster(load_scenario_text(text))
    sim.run()
    assert [p.key for p in sim.pods.values()] == ["default/p"]


# ---------------------------------------------------------------- what kubesched does not model

UNMODELLED = str(DUMPS / "dumps-unmodelled.yaml")


def _simulate(*args: str) -> Result:
    return CliRunner().invoke(main, ["simulate", UNMODELLED, "--placements", "-", *args])


def test_what_a_dump_holds_that_is_not_modelled_is_named_one_line_each() -> None:
    """A training job's dump from a cluster with the Workload API on: its PodGroup is a gang
    only under GenericWorkload (off by default in 1.37), the ConfigMap is skipped, node g7h8
    holds more cpu than it has allocatable (its kubelet reserves more since), and the
    namespaces the trainers' namespaceSelector looks at are not in the dump."""
    res = _simulate()
    assert res.exit_code == 0
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: {UNMODELLED}: skipping ConfigMap ml/trainer-config: kind not supported",
        "warning: Namespace monitoring, ml: not in the scenario; made with only its "
        "kubernetes.io/metadata.name label, all the pods' namespaceSelectors see of it",
        "warning: PodGroup ml/trainer: feature gate GenericWorkload is off in Kubernetes "
        "1.37; no gang is formed: their pods are scheduled one by one (--feature-gates "
        "GenericWorkload=true)",
        "warning: Node gke-ml-pool-1-g7h8: already overcommitted at load (cpu 4000m requested "
        "of 3920m allocatable): its pods keep running; no pod needing more of that fits there",
    ]
    # not a gang: the one trainer that fits is bound alone
    bound = [json.loads(line)["pod"] for line in res.stdout.splitlines()
             if json.loads(line)["node"] is not None]
    assert bound == ["ml/trainer-0"]


def test_with_the_gate_on_the_pod_group_is_a_gang_and_no_warning_names_it() -> None:
    res = _simulate("--feature-gates", "GenericWorkload=true")
    assert res.exit_code == 0 and "PodGroup" not in res.stderr
    assert all(json.loads(line)["node"] is None for line in res.stdout.splitlines())


def test_an_object_the_release_does_not_serve_is_bad_input_naming_kind_version_and_gate(
        ) -> None:
    res = _simulate("--kubernetes-version", "1.36")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (
        f"error: {UNMODELLED}: PodGroup ml/trainer: field apiVersion: Kubernetes 1.36 does not "
        "serve PodGroup at this apiVersion (served: scheduling.k8s.io/v1alpha2, "
        "scheduling.x-k8s.io/v1alpha1, behind feature gate GenericWorkload) "
        "(value: 'scheduling.k8s.io/v1beta1')\n")


def test_explain_refuses_a_pod_being_deleted() -> None:
    res = CliRunner().invoke(main, ["explain", ROLLOUT, "--pod",
                                    "shop/nightly-report-29405370-7kq2x"])
    assert res.exit_code == 2
    assert res.stderr == ("error: Pod shop/nightly-report-29405370-7kq2x: pod "
                          "shop/nightly-report-29405370-7kq2x is being deleted "
                          "(deletionTimestamp set); the scheduler skips it\n")


def test_a_terminating_pods_replacement_missing_from_the_dump_is_created_once(
        tmp_path: Path) -> None:
    """Without the pending replacement in the dump (taken before the ReplicaSet controller
    acted), the ReplicaSet creates it at once, as its controller would: one pod, not a second
    one when the terminating pod is gone."""
    dump = yaml.safe_load(Path(ROLLOUT).read_text())
    dump["items"] = [o for o in dump["items"]
                     if o["metadata"]["name"] != "web-7f9b5d6c8-m5zqk"]
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    sim, result = _run(str(path))
    assert [p.metadata.owner_references[0].name for p in sim.created] == ["web-7f9b5d6c8"]
    rec = next(r for r in result.records if r.key == sim.created[0].key)
    assert (rec.node, rec.time) == (NODE_A, 20.0)


def test_a_run_resumed_mid_grace_ends_as_the_uninterrupted_one(tmp_path: Path) -> None:
    """Cut at 5 s, while the old web pod and the report pod are still terminating: the
    continued run frees the CPU at the same instant and keeps the report pod's fate."""
    state = tmp_path / "state.yaml"
    res = CliRunner().invoke(main, ["simulate", ROLLOUT, "--until", "5", "--state-out",
                                    str(state), "--quiet"])
    assert res.exit_code == 0, res.output
    _, result = _run(str(state))
    recs = {r.key: r for r in result.records}
    web = recs["shop/web-7f9b5d6c8-m5zqk"]
    assert (web.node, web.time) == (NODE_A, 20.0)
    report = recs["shop/nightly-report-29405370-7kq2x"]
    assert (report.node, report.message) == (None, "evicted: pod deleted (terminating at load)")
    assert report in result.evicted and result.pending == []
    assert result.virtual_seconds == 25.0
