"""The run loop's one end rule (backends/sim/runloop.py): a full round of attempts with no
counted change that repeats a round since that change ends the run when nothing is on the
timeline, and makes the clock move on when something is."""

from __future__ import annotations

import yaml

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import default_config, load_config
from kubesched.config.features import parse_feature_gates

COSCHED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 10}
"""
NO_PREFILTER = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"preFilter": {"disabled": [{"name": "*"}]}}}]}
GANG_136 = """---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: workers}
spec: {schedulingPolicy: {gang: {minCount: 3}}}
"""


def nodes(n: int) -> str:
    return "".join(f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
""" for i in range(1, n + 1))


def pod(name: str, *, labels: str = "", spec: str = "", cpu: str = "3",
        arrival: float | None = None) -> str:
    ann = f'annotations: {{kubesched.io/arrival: "{arrival}"}}, ' if arrival is not None else ""
    lab = f"labels: {{{labels}}}, " if labels else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{{lab}{ann}name: {name}}}
spec:
  {spec}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def member(name: str, **kw: object) -> str:
    return pod(name, labels="scheduling.x-k8s.io/pod-group: g", **kw)  # type: ignore[arg-type]


POD_GROUP = """---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 3}
"""


def cosched_sim(text: str) -> SimCluster:
    sc = load_scenario_text(text, "<test>", release="1.35", strict=True)
    return SimCluster(sc, load_config(yaml.safe_load(COSCHED), "<cfg>"), check=True)


def test_a_gang_that_can_never_fit_ends_pending_after_one_repeated_round():
    # three members, room for two: at t=0 two park at Permit, the third fails and rejects
    # them (PostFilter), they are retried as they are activated — all at one instant. The
    # first round after the arrivals and the one repeating it are the whole run.
    sim = cosched_sim(nodes(2) + POD_GROUP + "".join(member(f"g-{i}") for i in range(3)))
    recs = {r.key: r for r in sim.run().records}
    assert all(r.node is None for r in recs.values())
    assert sim.clock.now() == 0.0
    assert not len(sim.scheduler.waiting)  # ended on a full round: nobody left parked
    assert [recs[f"default/g-{i}"].attempts for i in range(3)] == [3, 3, 3]
    said = sorted(r.message or "" for r in recs.values())
    assert said[0] == said[1] == "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    assert said[2].startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_a_gang_timing_out_at_permit_ends_when_its_rounds_come_round_again():
    # upstream's GangScheduling (1.36): two members hold their room until the 5-minute
    # Permit timeout, then the others get it, and so on; no event is due, so the run ends
    # once a round repeats one since the last change (no multiple of any timeout)
    sc = load_scenario_text(nodes(2) + GANG_136 + "".join(
        pod(f"w-{i}", spec="schedulingGroup: {podGroupName: workers}") for i in range(3)),
        "<test>", release="1.36", strict=True)
    cfg = default_config()
    cfg.features = parse_feature_gates(["GangScheduling=true", "GenericWorkload=true"], "1.36")
    sim = SimCluster(sc, cfg, check=True)
    recs = sim.run().records
    assert all(r.node is None for r in recs)
    assert sim.clock.now() % 300 == 0 and 300 <= sim.clock.now() <= 3000
    waiting = sorted(r.key for r in recs if r.message and r.message.startswith("waiting at"))
    assert len(waiting) == 2  # the members parked in the round that repeated


def test_a_pod_failing_every_cycle_with_no_event_ends_after_one_attempt():
    cfg = load_config(NO_PREFILTER, "<cfg>")
    sim = SimCluster(load_scenario_text(nodes(1) + pod("p", cpu="1"), "<t>"), cfg)
    (rec,) = sim.run().records
    assert rec.node is None and rec.attempts == 1 and rec.time == 0.0
    assert "from cycleState" in (rec.message or "")


def test_an_arrival_after_a_long_quiet_period_is_reached():
    # the gang spins without binding for 1000 s of virtual time; the late pod still comes
    sim = cosched_sim(nodes(2) + POD_GROUP + "".join(member(f"g-{i}") for i in range(3))
                      + pod("late", cpu="1", arrival=1000))
    recs = {r.key: r for r in sim.run().records}
    assert recs["default/late"].node is not None and recs["default/late"].time == 1000.0
    assert all(recs[f"default/g-{i}"].node is None for i in range(3))
    # while events were due, the gang was retried as upstream would (backoffs expiring)
    assert all(recs[f"default/g-{i}"].attempts > 10 for i in range(3))


def test_an_error_pod_alone_with_a_far_arrival_is_retried_until_it_comes():
    cfg = load_config(NO_PREFILTER, "<cfg>")
    sim = SimCluster(load_scenario_text(
        nodes(1) + pod("p", cpu="1") + pod("q", cpu="1", arrival=5000), "<t>"), cfg)
    recs = {r.key: r for r in sim.run().records}
    # p was retried as its backoff expired until q came; the run ends with the first round
    # after q's arrival, once p's backoff (at most 10 s) has let it be tried again
    assert recs["default/p"].attempts > 100
    assert 5000.0 <= recs["default/p"].time == sim.clock.now() <= 5010.0
    assert recs["default/q"].node is None and recs["default/q"].time >= 5000.0


def test_until_stops_a_run_the_rule_would_not_end_yet():
    sim = cosched_sim(nodes(2) + POD_GROUP + "".join(member(f"g-{i}") for i in range(3))
                      + pod("late", cpu="1", arrival=1000))
    sim.until = 50
    recs = {r.key: r for r in sim.run().records}
    assert sim.clock.now() == 50.0
    assert "default/late" not in recs
    assert [e.name for e in sim.not_arrived()] == ["late"]
