"""Gangs end to end in the simulator, the invariant checker on: scheduler-plugins'
Coscheduling and upstream's GangScheduling at each release's API (docs/gangs.md)."""

from __future__ import annotations

import pytest
import yaml

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import default_config, load_config
from kubesched.config.features import parse_feature_gates
from kubesched.explain import explain

COSCHED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
    queueSort:
      enabled: [{name: Coscheduling}]
      disabled: [{name: "*"}]
  pluginConfig:
  - name: Coscheduling
    args: {ARGS}
"""


def nodes(n, cpu="4"):
    return "".join(f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}
""" for i in range(1, n + 1))


def pod(name, *, group=None, spec="", cpu="3", arrival=None):
    labels = f"labels: {{scheduling.x-k8s.io/pod-group: {group}}}, " if group else ""
    ann = f'annotations: {{kubesched.io/arrival: "{arrival}"}}, ' if arrival else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{{labels}{ann}name: {name}}}
spec:
  {spec}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def pod_group(name, min_member, timeout=None):
    extra = f", scheduleTimeoutSeconds: {timeout}" if timeout is not None else ""
    return f"""---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: {name}}}
spec: {{minMember: {min_member}{extra}}}
"""


def run(text, config=None, *, version="1.35", gates=()):
    sc = load_scenario_text(text, "<test>", release=version, strict=True)
    cfg = load_config(yaml.safe_load(config), "<cfg>") if config else default_config()
    cfg.features = parse_feature_gates(list(gates), version)
    result = SimCluster(sc, cfg, check=True).run()
    return {r.key.split("/")[1]: r for r in result.records}


def cosched(args="{permitWaitingTimeSeconds: 10}"):
    return COSCHED.replace("{ARGS}", args)


def test_coscheduling_gang_that_fits_binds_all_at_once():
    recs = run(nodes(2) + pod_group("g", 2) + pod("g-0", group="g") + pod("g-1", group="g"),
               cosched())
    assert {r.node for r in recs.values()} == {"n1", "n2"}
    assert {r.time for r in recs.values()} == {0.0}


def test_coscheduling_gang_one_node_short_binds_none_and_frees_its_room():
    text = (nodes(2) + pod_group("g", 3) + "".join(pod(f"g-{i}", group="g") for i in range(3))
            + pod("plain", arrival="5"))
    recs = run(text, cosched())
    assert [recs[f"g-{i}"].node for i in range(3)] == [None] * 3
    assert recs["plain"].node is not None and recs["plain"].time == 5.0
    said = " ".join(recs[f"g-{i}"].message or "" for i in range(3))
    assert "optimistic rejection in PostFilter" in said or "gets rejected due to Pod" in said


def test_coscheduling_timeout_on_the_virtual_clock():
    # room for one of two; PostFilter never rejects (100 %), so the waiting member times out
    text = nodes(1) + pod_group("g", 2) + pod("g-0", group="g") + pod("g-1", group="g")
    recs = run(text, cosched("{permitWaitingTimeSeconds: 10, podGroupRejectPercentage: 100}"))
    assert recs["g-0"].node is None and recs["g-1"].node is None
    # g-0 waited from 0 and timed out at 10, releasing the node to g-1, which waited in turn
    # and timed out at 20; g-0 parks again, a round the one at 0 already was: the run ends
    assert recs["g-0"].time == 10.0 and recs["g-1"].time == 20.0
    assert recs["g-0"].message == ("waiting at Permit on node n1 for Coscheduling: waiting for "
                                   "PodGroup default/g: 1 of minMember 2 pods assumed or bound")


def test_coscheduling_group_timeout_overrides_the_args():
    text = nodes(1) + pod_group("g", 2, timeout=3) + pod("g-0", group="g") + \
        pod("g-1", group="g")
    recs = run(text, cosched("{permitWaitingTimeSeconds: 10, podGroupRejectPercentage: 100}"))
    assert recs["g-0"].time == 3.0


def test_coscheduling_backoff_on_the_virtual_clock():
    text = (nodes(2) + pod_group("g", 3) + "".join(pod(f"g-{i}", group="g") for i in range(3))
            + pod("late", cpu="1", arrival="5"))
    recs = run(text, cosched("{permitWaitingTimeSeconds: 10, podGroupBackoffSeconds: 20}"))
    # the late pod's arrival requeues the group, which is still backing off
    assert "podGroup default/g failed recently" in recs["g-0"].message
    assert recs["late"].node is not None


def test_coscheduling_short_of_members_says_so():
    recs = run(nodes(2) + pod_group("g", 3) + pod("g-0", group="g"), cosched())
    assert ("pre-filter pod g-0 cannot find enough sibling pods, current pods number: 1, "
            "minMember of group: 3") in recs["g-0"].message


def test_coscheduling_late_member_completes_the_gang():
    text = (nodes(3) + pod_group("g", 3) + pod("g-0", group="g") + pod("g-1", group="g")
            + pod("g-2", group="g", arrival="40"))
    recs = run(text, cosched())
    assert all(r.node is not None for r in recs.values())
    assert {r.time for r in recs.values()} == {40.0}


def test_explain_names_the_group():
    text = nodes(2) + pod_group("g", 3) + pod("g-0", group="g") + "---" + cosched()
    sc = load_scenario_text(text, "<test>")
    cfg = load_config(sc.config, "<cfg>")
    out = explain(sc, cfg, "default/g-0")
    assert "cannot find enough sibling pods" in out["message"]


W35 = """---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: job}
spec:
  podGroups: [{name: workers, policy: {gang: {minCount: MIN}}}]
"""
REF35 = "workloadRef: {name: job, podGroup: workers}"


def pg_object(version, min_count):
    return f"""---
apiVersion: scheduling.k8s.io/{version}
kind: PodGroup
metadata: {{name: workers}}
spec:
  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}
"""


REF36 = "schedulingGroup: {podGroupName: workers}"
RELEASES = [  # release, gates, the gang object, the pod field
    ("1.35", ["GangScheduling=true", "GenericWorkload=true"], lambda m: W35.replace("MIN", m),
     REF35),
    ("1.36", ["GangScheduling=true", "GenericWorkload=true"],
     lambda m: pg_object("v1alpha2", m), REF36),
    ("1.37", ["GenericWorkload=true"], lambda m: pg_object("v1beta1", m), REF36),
]


@pytest.mark.parametrize("version, gates, group, ref", RELEASES, ids=[r[0] for r in RELEASES])
def test_gang_scheduling_fits_binds_all(version, gates, group, ref):
    text = nodes(2) + group("2") + pod("w-0", spec=ref) + pod("w-1", spec=ref)
    recs = run(text, version=version, gates=gates)
    assert {r.node for r in recs.values()} == {"n1", "n2"}


@pytest.mark.parametrize("version, gates, group, ref", RELEASES, ids=[r[0] for r in RELEASES])
def test_gang_scheduling_one_node_short_times_out(version, gates, group, ref):
    text = (nodes(2) + group("3") + "".join(pod(f"w-{i}", spec=ref) for i in range(3))
            + pod("plain", arrival="30"))
    recs = run(text, version=version, gates=gates)
    gang = [recs[f"w-{i}"] for i in range(3)]
    assert sum(r.node is not None for r in gang) == 0
    # upstream's gang holds its room until the 5-minute Permit timeout, then frees it
    assert recs["plain"].node is not None and recs["plain"].time == 300.0
    assert any("at plugin GangScheduling" in (r.message or "")
               or "waiting at Permit on node" in (r.message or "") for r in gang)


@pytest.mark.parametrize("version, gates, group, ref", RELEASES, ids=[r[0] for r in RELEASES])
def test_gang_scheduling_waits_for_members_to_appear(version, gates, group, ref):
    text = nodes(3) + group("3") + pod("w-0", spec=ref) + pod("w-1", spec=ref)
    recs = run(text, version=version, gates=gates)
    assert recs["w-0"].message == ("waiting for minCount pods from a gang to appear in "
                                   "scheduling queue")
    recs = run(text + pod("w-2", spec=ref, arrival="40"), version=version, gates=gates)
    assert {r.node is not None for r in recs.values()} == {True}
    assert {r.time for r in recs.values()} == {40.0}


def test_gang_scheduling_off_by_default():
    """The gate is off in every release: gang members schedule one by one."""
    text = nodes(1) + W35.replace("MIN", "2") + pod("w-0", spec=REF35) + pod("w-1", spec=REF35)
    recs = run(text, version="1.35")
    assert sorted(r.node is not None for r in recs.values()) == [False, True]


def test_upstream_api_versions_per_release():
    text = nodes(1) + pg_object("v1alpha2", 1)
    with pytest.raises(Exception, match="does not serve PodGroup"):
        load_scenario_text(text, "<t>", release="1.37")
    with pytest.raises(Exception, match=r"unknown field \"spec\.workloadRef\""):
        load_scenario_text(nodes(1) + pod("p", spec=REF35), "<t>", release="1.36", strict=True)


def test_a_coscheduling_pod_group_no_profile_serves_is_warned_about(tmp_path):
    # without Coscheduling in a profile nothing reads the PodGroup: its pods go one by one,
    # which the user is told (a dump from a cluster running scheduler-plugins as its scheduler)
    from click.testing import CliRunner

    from kubesched.cli import main

    path = tmp_path / "s.yaml"
    path.write_text(nodes(1) + pod_group("g", 2) + pod("g-0", group="g") + pod("g-1", group="g"))
    warning = ("warning: PodGroup default/g (scheduling.x-k8s.io): no profile enables "
               "Coscheduling; their pods are scheduled one by one, not as a gang\n")
    res = CliRunner().invoke(main, ["simulate", str(path), "--quiet"])
    assert res.exit_code == 0 and res.stderr == warning
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(cosched())
    res = CliRunner().invoke(main, ["simulate", str(path), "--config", str(cfg), "--quiet"])
    assert res.exit_code == 0 and warning not in res.stderr
