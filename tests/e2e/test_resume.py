"""Checkpoint and resume (issue 20, point 2): a run stopped by ``--until T`` with its
``--state-out``, continued by ``simulate STATE``, ends as the run that never stopped — the
same end state (every object, the SimulationState: clock, queue, generators, timeline) and
the same placements record for every pod the continued run schedules. Random scenarios and
checkpoint times; then a state edited by hand is bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.e2e.test_faults import fault, node, pod
from tests.e2e.test_permit_wait import CONFIG as PAIR_CONFIG
from tests.e2e.test_permit_wait import NODE, Pair
from tests.e2e.test_permit_wait import pod as pair_pod
from tests.e2e.test_workloads import workload

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.state import state_documents
from kubesched.cli import main
from kubesched.config import default_config, load_config
from kubesched.config.features import parse_feature_gates


def canonical(docs: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(d, sort_keys=True, default=str) for d in docs)


# (release, feature gates, configuration, out-of-tree plugins) a run decides with
Setup = tuple[str | None, tuple[str, ...], dict[str, Any] | None, dict[str, Any]]
PLAIN: Setup = (None, (), None, {})


def simulate(text: str, until: float | None = None, seed: int = 0,
             setup: Setup = PLAIN) -> SimCluster:
    """``text`` (a scenario, or a state ``--state-out`` wrote) run to its end or ``until``,
    under ``setup``, the invariant checker on."""
    release, gates, config, plugins = setup
    cfg = None
    if config is not None or gates or plugins:
        cfg = load_config(config, "<cfg>") if config is not None else default_config()
        if release is not None:
            cfg.features = parse_feature_gates(list(gates), release)
        cfg.out_of_tree = dict(plugins)
    scenario = (load_scenario_text(text, "s.yaml", strict=True) if release is None else
                load_scenario_text(text, "s.yaml", release=release, strict=True))
    sim = SimCluster(scenario, cfg, seed=seed, check=True)
    sim.until = until
    sim.run()
    return sim


def assert_resumes(text: str, at: float, seed: int = 0, setup: Setup = PLAIN) -> None:
    """``text`` run through, and run to ``at`` then resumed from its state, ends the same;
    the continued run's placements records are the uninterrupted run's."""
    full = simulate(text, seed=seed, setup=setup)
    cut = simulate(text, until=at, seed=seed, setup=setup)
    # as JSON (YAML too), in a List: quicker to write than block YAML
    state = json.dumps({"apiVersion": "v1", "kind": "List", "items": state_documents(cut)})
    # the generators come from the state, not the seed
    rest = simulate(state, seed=seed + 1, setup=setup)
    assert canonical(state_documents(rest)) == canonical(state_documents(full))
    records = {u: r.as_json() for u, r in full.records.items()}
    for uid, rec in rest.records.items():
        assert rec.as_json() == records[uid]
    # every pod the state holds pending has its record (served or not, terminating or not)
    pending = {u for u, p in cut.pods.items() if not p.spec.node_name}
    assert pending <= set(rest.records)


@st.composite
def scenarios(draw: st.DrawFn) -> str:
    """Small clusters under pressure: pods that arrive, run for a while and finish, at
    several priorities (so preemption and its victims' grace periods), controllers that
    replace and create pods (generated names), spread and anti-affinity (tie-breaks)."""
    n_nodes = draw(st.integers(1, 4))
    text = "".join(node(f"n{i}", cpu=draw(st.sampled_from(["1", "2", "3"])))
                   for i in range(n_nodes))
    for j in range(draw(st.integers(0, 8))):
        ann = {}
        if draw(st.booleans()):
            ann["kubesched.io/arrival"] = str(draw(st.sampled_from([0, 5, 30, 61.5, 200])))
        if draw(st.booleans()):
            ann["kubesched.io/duration"] = str(draw(st.sampled_from([10, 45.25, 100, 400])))
        extra = ""
        if draw(st.booleans()):
            extra += f"  priority: {draw(st.sampled_from([0, 10, 1000]))}\n"
        if draw(st.booleans()):
            extra += "  terminationGracePeriodSeconds: " \
                     f"{draw(st.sampled_from([0, 7, 30]))}\n"
        if draw(st.booleans()):
            extra += ("  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuring"
                      "Execution: [{weight: 10, podAffinityTerm: {topologyKey: "
                      "kubernetes.io/hostname, labelSelector: {matchLabels: {app: p}}}}]}}\n")
        text += pod(f"p{j}", draw(st.sampled_from(["100m", "500m", "900m", "1500m"])),
                    labels="{app: p}", annotations=json.dumps(ann), extra=extra)
    for kind, spec, tmpl, api in draw(st.lists(st.sampled_from([
            ("ReplicaSet", "  replicas: 3\n  selector: {matchLabels: {app: rs}}\n", "",
             "apps/v1"),
            ("Job", "  completions: 4\n  parallelism: 2\n", "      restartPolicy: Never\n",
             "batch/v1"),
            ("StatefulSet", "  replicas: 2\n  serviceName: s\n"
                            "  selector: {matchLabels: {app: ss}}\n", "", "apps/v1"),
            ]), max_size=3, unique=True)):
        name = {"ReplicaSet": "rs", "Job": "job", "StatefulSet": "ss"}[kind]
        cpu = draw(st.sampled_from(["300m", "800m"]))
        duration = draw(st.sampled_from(["20", "75", "300"]))
        text += workload(kind, name, spec, tmpl, api=api, cpu=cpu,
                         annotations=f"{{kubesched.io/duration: '{duration}'}}")
    if n_nodes > 1:  # faults: evictions by the taint manager, the pod GC, a deletion
        targets = {"NodeNotReady": ("node", "n0"), "DeleteNode": ("node", f"n{n_nodes - 1}"),
                   "DeletePod": ("pod", "p0")}
        for i, action in enumerate(draw(st.lists(st.sampled_from(sorted(targets)),
                                                 max_size=2, unique=True))):
            if action == "DeletePod" and "name: p0," not in text:
                continue
            fld, target = targets[action]
            text += fault(f"f{i}", draw(st.sampled_from([15, 61.5, 90])), action,
                          **{fld: target})
    return text


# a victim terminating by preemption (its DisruptionTarget condition) keeps its preemptor
# from preempting again
VICTIMS_TERMINATING = (
    node("n0", cpu="3")
    + "".join(pod(f"p{j}", "100m", labels="{app: p}", annotations=ann, extra=extra)
              for j, ann, extra in [(0, "{kubesched.io/arrival: '0'}", ""),
                                    (1, "{kubesched.io/duration: '10'}", ""),
                                    (2, "{kubesched.io/arrival: '0'}",
                                     "  terminationGracePeriodSeconds: 0\n"),
                                    (3, "{kubesched.io/arrival: '0'}", "")])
    + pod("p4", "1500m", labels="{app: p}", annotations="{kubesched.io/arrival: '61.5'}",
          extra="  priority: 10\n")
    + pod("p5", "900m", labels="{app: p}")
    + workload("ReplicaSet", "rs", "  replicas: 3\n  selector: {matchLabels: {app: rs}}\n",
               cpu="300m", annotations="{kubesched.io/duration: '20'}")
    + workload("Job", "job", "  completions: 4\n  parallelism: 2\n",
               "      restartPolicy: Never\n", api="batch/v1", cpu="300m",
               annotations="{kubesched.io/duration: '300'}")
    + workload("StatefulSet", "ss", "  replicas: 2\n  serviceName: s\n  selector: "
               "{matchLabels: {app: ss}}\n", cpu="300m",
               annotations="{kubesched.io/duration: '75'}"))


# derandomized and without an example database: the same examples on every run of CI
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios(), st.sampled_from([0, 1, 5, 29.5, 60, 61.5, 100, 150, 333, 1000]),
       st.integers(0, 3))
@example(VICTIMS_TERMINATING, 61.5, 0)
def test_a_resumed_run_ends_as_the_uninterrupted_one(text: str, at: float, seed: int) -> None:
    assert_resumes(text, at, seed)


PRESSURE = (node("n1", cpu="2") + node("n2", cpu="2")
            + workload("ReplicaSet", "web", "  replicas: 6\n  selector: {matchLabels: "
                       "{app: web}}\n", cpu="700m", annotations="{kubesched.io/duration: '90'}")
            + pod("big", "1500m", extra="  priority: 1000\n",
                  annotations="{kubesched.io/arrival: '40', kubesched.io/duration: '33.3'}")
            + pod("late", "100m", annotations="{kubesched.io/arrival: '500'}"))


@pytest.mark.parametrize("at", [0, 3, 40, 41, 95.5, 130, 499])
def test_resumes_mid_backoff_preemption_and_replacement(at: float) -> None:
    assert_resumes(PRESSURE, at)


def test_a_checkpoint_of_a_checkpoint_and_the_cli(tmp_path: Path) -> None:
    """``simulate S --until 300 --state-out X; simulate X`` (the issue's report), chained
    twice, ends where ``simulate S`` does."""
    src = tmp_path / "s.yaml"
    src.write_text(PRESSURE)
    runner = CliRunner()

    def sim(*args: str) -> str:
        res = runner.invoke(main, ["simulate", *args, "--quiet"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return res.output

    sim(str(src), "--state-out", str(tmp_path / "full.yaml"))
    sim(str(src), "--until", "60", "--state-out", str(tmp_path / "a.yaml"))
    sim(str(tmp_path / "a.yaml"), "--until", "300", "--state-out", str(tmp_path / "b.yaml"))
    sim(str(tmp_path / "b.yaml"), "--state-out", str(tmp_path / "end.yaml"))

    def docs(name: str) -> list[str]:
        return canonical(list(yaml.safe_load_all((tmp_path / name).read_text())))

    assert docs("end.yaml") == docs("full.yaml")
    # a run that was over stays over
    sim(str(tmp_path / "full.yaml"), "--state-out", str(tmp_path / "again.yaml"))
    assert docs("again.yaml") == docs("full.yaml")


# ---------------------------------------------------------------------- bad input


def _checkpoint(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "s.yaml"
    src.write_text(PRESSURE)
    state = tmp_path / "state.yaml"
    res = CliRunner().invoke(main, ["simulate", str(src), "--until", "41", "--state-out",
                                    str(state), "--quiet"])
    assert res.exit_code == 0, res.output
    return state, state.read_text()


def _refused(tmp_path: Path, text: str) -> str:
    bad = tmp_path / "edited.yaml"
    bad.write_text(text)
    res = CliRunner().invoke(main, ["simulate", str(bad), "--quiet"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert str(bad) in res.output and "SimulationState checkpoint" in res.output
    return res.output


def _arrival(state: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = next(e for e in state["timeline"] if e["event"] == "Arrival")
    return entry


def _edit_state(text: str, edit: Any) -> str:
    docs = list(yaml.safe_load_all(text))
    edit(docs[-1])
    return yaml.safe_dump_all(docs, sort_keys=False)


@pytest.mark.parametrize(("edit", "field", "words"), [
    (lambda s: s["generators"].update(names="mt19937:not base64!"), "generators.names",
     "not base64"),
    (lambda s: s["generators"].update(tieBreak="seed 42"), "generators.tieBreak",
     "generator state"),
    (lambda s: s["generators"].update(names="mt19937:AAAA"), "generators.names", "bytes"),
    (lambda s: s["timeline"][0].update(at=s["clock"] - 5), "timeline[0].at",
     "earlier than the clock"),
    (lambda s: s["timeline"][-1].update(at=s["timeline"][0]["at"] - 0.5), "timeline[",
     "earlier than"),
    (lambda s: s.update(clock=-1), "clock", "non-negative"),
    (lambda s: s.update(wakeup=s["clock"] - 1), "wakeup", "earlier than the clock"),
    (lambda s: s["queue"][0].update(attempts=-2), "queue[0].attempts", "non-negative"),
    (lambda s: s["queue"][0].update(timestamp=s["clock"] + 10), "queue[0].timestamp",
     "later than the clock"),
    (lambda s: s["queue"][0].update(where="nowhere"), "queue[0].where", "one of"),
    (lambda s: s["timeline"][0].update(event="Explosion"), "timeline[0].event",
     "unknown event"),
    (lambda s: _arrival(s).update(uid="no-such-uid"), "timeline[", "no pending Pod"),
])
def test_a_state_edited_by_hand_is_bad_input(tmp_path: Path, edit: Any, field: str,
                                             words: str) -> None:
    _state, text = _checkpoint(tmp_path)
    out = _refused(tmp_path, _edit_state(text, edit))
    assert f"field {field}" in out and words in out


def test_a_negative_remaining_duration_is_bad_input(tmp_path: Path) -> None:
    _state, text = _checkpoint(tmp_path)
    edited = re.sub(r"kubesched.io/duration: '[0-9.]+'", "kubesched.io/duration: '-3'", text,
                    count=1)
    assert edited != text
    bad = tmp_path / "edited.yaml"
    bad.write_text(edited)
    res = CliRunner().invoke(main, ["simulate", str(bad), "--quiet"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "kubesched.io/duration" in res.output and "'-3'" in res.output
    assert str(bad) in res.output


# ---------------------------------------------------------------------- more kinds
#
# Gangs waiting at Permit (GangScheduling and Coscheduling), DRA claims (allocated during
# the run, pending, a DeviceCondition fault), volumes (a claim bound at load, claims
# provisioned for WaitForFirstConsumer), a DaemonSet, scheduling-gated pods, binding faults
# with bindings still to fail.

GANG_RELEASE: Setup = ("1.37", ("GenericWorkload=true",), None, {})
COSCHEDULING: Setup = (None, (), {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": "Coscheduling", "args": {
            "permitWaitingTimeSeconds": 40, "podGroupBackoffSeconds": 25}}]}]}, {})

DRA = """---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
"""


def slice_for(node_name: str, gpus: int) -> str:
    devices = ", ".join(f"{{name: gpu-{g}}}" for g in range(gpus))
    return (f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
            f"metadata: {{name: {node_name}-gpus}}\nspec:\n  driver: gpu.example.com\n"
            f"  nodeName: {node_name}\n  pool: {{name: {node_name}, generation: 1, "
            f"resourceSliceCount: 1}}\n  devices: [{devices}]\n")


VOLUMES = """---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: late}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: static}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data}
  storageClassName: static
  claimRef: {namespace: default, name: data, uid: 0b6e1c0e-data}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: default
  uid: 0b6e1c0e-data
  annotations: {pv.kubernetes.io/bind-completed: "yes"}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: static
  volumeName: pv-data
  resources: {requests: {storage: 1Gi}}
status: {phase: Bound}
"""


def pvc(name: str) -> str:
    return (f"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, "
            "namespace: default}\nspec: {accessModes: [ReadWriteOnce], storageClassName: late, "
            "resources: {requests: {storage: 1Gi}}}\n")


def gang_group(setup: Setup, min_count: int) -> str:
    if setup is COSCHEDULING:
        return ("---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                f"metadata: {{name: g}}\nspec: {{minMember: {min_count}}}\n")
    return ("---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
            f"spec: {{schedulingPolicy: {{gang: {{minCount: {min_count}}}}}}}\n")


def gang_member(setup: Setup) -> tuple[str, str]:
    """(labels, spec lines) that make a pod a member of group ``g``."""
    if setup is COSCHEDULING:
        return "{app: p, scheduling.x-k8s.io/pod-group: g}", ""
    return "{app: p}", "  schedulingGroup: {podGroupName: g}\n"


@st.composite
def richer_scenarios(draw: st.DrawFn) -> tuple[str, Setup]:
    setup = draw(st.sampled_from([PLAIN, GANG_RELEASE, COSCHEDULING]))
    n_nodes = draw(st.integers(1, 3))
    text = "".join(node(f"n{i}", cpu=draw(st.sampled_from(["1", "2", "3"])))
                   for i in range(n_nodes))
    dra = draw(st.booleans())
    volumes = draw(st.booleans())
    if dra:
        text += DRA + "".join(slice_for(f"n{i}", draw(st.integers(1, 2)))
                              for i in range(n_nodes))
    if volumes:
        text += VOLUMES
    gang = setup is not PLAIN
    if gang:  # a gang whose members wait at Permit until room is freed (or time out)
        members = draw(st.integers(2, 3))
        text += gang_group(setup, members)
        text += pod("blocker", draw(st.sampled_from(["1", "2"])),
                    annotations=json.dumps({"kubesched.io/duration": str(
                        draw(st.sampled_from([20, 50, 400])))}), extra="  priority: 1000\n")
        labels, extra = gang_member(setup)
        for k in range(members):
            arrival = draw(st.sampled_from([0, 0, 10, 35]))
            text += pod(f"g{k}", draw(st.sampled_from(["500m", "900m"])), labels=labels,
                        annotations=json.dumps({"kubesched.io/arrival": str(arrival),
                                                "kubesched.io/duration": "90"}),
                        extra=extra)
    claims = 0
    for j in range(draw(st.integers(1, 7))):
        ann = {}
        if draw(st.booleans()):
            ann["kubesched.io/arrival"] = str(draw(st.sampled_from([0, 5, 30, 61.5, 200])))
        if draw(st.booleans()):
            ann["kubesched.io/duration"] = str(draw(st.sampled_from([10, 45.25, 100, 400])))
        labels, extra = "{app: p}", ""
        if gang and draw(st.booleans()):
            labels, extra = gang_member(setup)
        if draw(st.booleans()):
            extra += f"  priority: {draw(st.sampled_from([0, 10, 1000]))}\n"
        if draw(st.integers(0, 5)) == 0:
            extra += "  schedulingGates: [{name: example.com/hold}]\n"
        if dra and draw(st.booleans()):
            ref = draw(st.sampled_from(["resourceClaimTemplateName: one-gpu",
                                        "resourceClaimName: shared"]))
            extra += f"  resourceClaims: [{{name: gpu, {ref}}}]\n"
        if volumes and draw(st.booleans()):
            claim = draw(st.sampled_from(["data", "new"]))
            if claim == "new":
                claims += 1
                claim = f"c{claims}"
                text += pvc(claim)
            extra += f"  volumes: [{{name: v, persistentVolumeClaim: {{claimName: {claim}}}}}]\n"
        text += pod(f"p{j}", draw(st.sampled_from(["100m", "500m", "900m", "1500m"])),
                    labels=labels, annotations=json.dumps(ann), extra=extra)
    if draw(st.booleans()):
        text += workload("DaemonSet", "ds", "  selector: {matchLabels: {app: ds}}\n",
                         cpu=draw(st.sampled_from(["100m", "700m"])), api="apps/v1")
    for i, action in enumerate(draw(st.lists(st.sampled_from(
            ["BindError", "BindConflict", "DeviceCondition"]), max_size=2, unique=True))):
        at = draw(st.sampled_from([0, 15, 61.5]))
        if action == "DeviceCondition":
            if dra:
                text += fault(f"f{i}", at, action, device="gpu.example.com/n0/gpu-0",
                              condition="Ready", reason="Prepared")
            continue
        target = {"node": "n0"} if draw(st.booleans()) else {"pod": "p0"}
        extra_fields: dict[str, Any] = {"count": draw(st.integers(1, 3))}
        if action == "BindConflict" and n_nodes > 1 and draw(st.booleans()):
            extra_fields["boundTo"] = f"n{n_nodes - 1}"
        text += fault(f"f{i}", at, action, **target, **extra_fields)
    return text, setup


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(richer_scenarios(), st.sampled_from([0, 1, 5, 20, 29.5, 41, 61.5, 100, 150, 333]),
       st.integers(0, 3))
def test_a_resumed_run_with_gangs_claims_volumes_and_gates_ends_as_the_uninterrupted_one(
        scenario: tuple[str, Setup], at: float, seed: int) -> None:
    text, setup = scenario
    assert_resumes(text, at, seed, setup)


# ---------------------------------------------------------------------- waiting at Permit

GANG = (node("n1", cpu="4") + node("n2", cpu="4") + node("n3", cpu="4")
        + gang_group(GANG_RELEASE, 3)
        + pod("x", "4", annotations="{kubesched.io/duration: '60'}", extra="  priority: 1000\n")
        + "".join(pod(f"w-{i}", "3", labels="{app: w}", annotations=(
            "{kubesched.io/duration: '90'}"), extra="  schedulingGroup: {podGroupName: g}\n")
            for i in range(3))
        + pod("plain", "1", annotations="{kubesched.io/arrival: '30'}"))


@pytest.mark.parametrize("at", [0, 10, 31, 59.5, 60, 100])
def test_gang_members_waiting_at_permit_wait_on_after_resuming(at: float) -> None:
    """Two members of a gang of three wait at Permit for room the third gets at t=60: the
    state holds them assumed on their nodes with their deadlines, and the resumed run lets
    them bind with the third at 60, as the uninterrupted run does."""
    assert_resumes(GANG, at, setup=GANG_RELEASE)


def test_the_state_holds_the_waiting_pods_with_node_and_deadline() -> None:
    cut = simulate(GANG, until=10, setup=GANG_RELEASE)
    state = state_documents(cut)[-1]
    waiting = {w["pod"]: w for w in state["waiting"]}
    assert sorted(waiting) == ["default/w-0", "default/w-1"]
    x_on = cut.pods["default/x"].spec.node_name
    assert sorted(w["node"] for w in waiting.values()) == sorted({"n1", "n2", "n3"} - {x_on})
    for w in waiting.values():
        assert w["cycle"] >= 1
        assert w["pending"] == {"GangScheduling": [300.0, 300.0]}
    assert [e["pod"] for e in state["inFlight"] if "pod" in e] == ["default/w-0", "default/w-1"]
    assert state["plugins"]["default-scheduler"]["GangScheduling"]["groups"] == [
        [["default", "", "g", ""], ["default/w-0", "default/w-1"], None]]
    # not among the queued pods: a resumed run does not schedule them again
    assert not {q["pod"] for q in state["queue"]} & set(waiting)


SHORT_GANG = (node("n1", cpu="4") + node("n2", cpu="4") + gang_group(GANG_RELEASE, 3)
              + "".join(pod(f"w-{i}", "3", extra="  schedulingGroup: {podGroupName: g}\n")
                        for i in range(3))
              + pod("plain", "3", annotations="{kubesched.io/arrival: '30'}"))


@pytest.mark.parametrize("at", [0, 299, 300, 301, 650])
def test_a_gang_one_node_short_times_out_at_the_same_instant(at: float) -> None:
    assert_resumes(SHORT_GANG, at, setup=GANG_RELEASE)


COSCHED_GANG = (node("n1", cpu="2") + node("n2", cpu="2") + gang_group(COSCHEDULING, 3)
                + pod("x", "2", annotations="{kubesched.io/duration: '25'}",
                      extra="  priority: 1000\n")
                + "".join(pod(f"g{i}", "1500m", labels="{scheduling.x-k8s.io/pod-group: g}",
                              annotations="{kubesched.io/duration: '50'}")
                          for i in range(3))
                + pod("late", "500m", annotations="{kubesched.io/arrival: '61.5'}"))


@pytest.mark.parametrize("at", [0, 5, 24, 25, 40, 41, 61.5, 100])
def test_coscheduling_waits_backoffs_and_group_records_carry_over(at: float) -> None:
    """Coscheduling's own records (members counted at Permit, a group backed off or failed
    lately, which also orders its queue) carry over with its waiting members."""
    assert_resumes(COSCHED_GANG, at, setup=COSCHEDULING)


def test_an_out_of_tree_permit_wait_carries_over() -> None:
    pair: Setup = (None, (), PAIR_CONFIG, {"Pair": Pair})
    text = NODE + pair_pod("a", pair="x") + pair_pod("b", pair="x", arrival=20) + \
        pair_pod("c", pair="y") + pair_pod("d", pair="y", arrival=45)
    for at in (0, 10, 20, 29.5, 31, 50):
        assert_resumes(text, at, setup=pair)


# ---------------------------------------------------------------------- faults still acting

FLAKY_BINDINGS = (node("n0", cpu="2") + node("n1", cpu="2")
                  + pod("p0", "1", on="n0") + pod("p1", "1", on="n1")
                  + pod("p2", "500m", annotations="{kubesched.io/arrival: '9'}")
                  + fault("flaky", 0, "BindError", node="n0", count=3)
                  + fault("taken", 0, "BindConflict", pod="p1", count=2))


@pytest.mark.parametrize("at", [0, 0.5, 1.5, 3.5, 8, 20])
def test_binding_faults_keep_the_bindings_they_must_still_fail(at: float) -> None:
    assert_resumes(FLAKY_BINDINGS, at)


def test_the_state_holds_how_many_bindings_a_fault_must_still_fail() -> None:
    state = state_documents(simulate(FLAKY_BINDINGS, until=0.5))[-1]
    left = {a["fault"]["name"]: a["left"] for a in state["faults"]["armed"]}
    assert left == {"flaky": 2, "taken": 1}
    assert state["faults"]["fired"] == {"flaky": 1, "taken": 1}


DEVICE_LATER = (DRA + node("n0", cpu="2") + slice_for("n0", 1)
                + pod("gpu-user", "100m", annotations="{kubesched.io/arrival: '20'}",
                      extra="  resourceClaims: [{name: gpu, resourceClaimTemplateName: "
                            "one-gpu}]\n")
                + fault("prepared", 5, "DeviceCondition", device="gpu.example.com/n0/gpu-0",
                        condition="Ready", reason="Prepared"))


@pytest.mark.parametrize("at", [0, 5, 10, 20, 30])
def test_a_device_condition_waiting_for_its_device_acts_after_resuming(at: float) -> None:
    """A DeviceCondition fault due while no claim holds its device waits for the device to
    be allocated (at 20): a run stopped in between keeps it waiting."""
    assert_resumes(DEVICE_LATER, at)
    end = state_documents(simulate(DEVICE_LATER))
    claim = next(d for d in end if d.get("kind") == "ResourceClaim"
                 and d["metadata"]["name"].startswith("gpu-user"))
    assert claim["status"]["devices"][0]["conditions"][0]["type"] == "Ready"


def _gang_state(tmp_path: Path) -> str:
    src = tmp_path / "gang.yaml"
    src.write_text(GANG + fault("flaky", 0, "BindError", node="n1", count=5))
    state = tmp_path / "state.yaml"
    res = CliRunner().invoke(main, ["simulate", str(src), "--until", "10", "--state-out",
                                    str(state), "--quiet", *GANG_FLAGS])
    assert res.exit_code == 0, res.output
    return state.read_text()


GANG_FLAGS = ("--kubernetes-version", "1.37", "--feature-gates", "GenericWorkload=true")


@pytest.mark.parametrize(("edit", "field", "words"), [
    (lambda s: s["waiting"][0]["pending"]["GangScheduling"].__setitem__(0, s["clock"] - 1),
     "waiting[0].pending.GangScheduling[0]", "the clock cannot go back"),
    (lambda s: s["waiting"][0]["pending"]["GangScheduling"].__setitem__(0, s["clock"] + 999),
     "waiting[0].pending.GangScheduling[0]", "further from the clock"),
    (lambda s: s["waiting"][0].update(node="nowhere"), "waiting[0].node", "no node"),
    (lambda s: s["waiting"][0].update(uid="nobody"), "waiting[0].uid", "no pending Pod"),
    (lambda s: s["inFlight"].pop(0), "inFlight", "marker of every pod"),
    (lambda s: s["faults"]["armed"][0].update(left=0), "faults.armed[0].left", "positive"),
    (lambda s: s["plugins"]["default-scheduler"].update(NodeResourcesFit={}),
     "plugins.default-scheduler.NodeResourcesFit", "keeps records"),
    (lambda s: s["plugins"]["default-scheduler"]["GangScheduling"].update(groups=[1]),
     "plugins.default-scheduler.GangScheduling", "not as --state-out writes it"),
])
def test_a_waiting_pod_or_record_edited_by_hand_is_bad_input(
        tmp_path: Path, edit: Any, field: str, words: str) -> None:
    bad = tmp_path / "edited.yaml"
    bad.write_text(_edit_state(_gang_state(tmp_path), edit))
    res = CliRunner().invoke(main, ["simulate", str(bad), "--quiet", *GANG_FLAGS])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert str(bad) in res.output and f"field {field}" in res.output and words in res.output


# ---------------------------------------------------------------------- a dump, resumed

DUMP = (Path(__file__).parent.parent / "dumps" / "resume-gang-terminating.yaml").read_text()


@pytest.mark.parametrize("at", [0, 1, 20, 25, 30, 40, 41, 42, 50])
def test_a_dump_mid_rollout_resumed_ends_as_the_uninterrupted_run(at: float) -> None:
    """``kubectl get -o yaml`` of a cluster where a gang of three waits for the room a
    terminating ETL pod frees at 40 s, a pod is deleted before it was ever scheduled and
    one is for volcano: resumed at any time, the same end and the same records — the
    terminating pod's and volcano's with the times the uninterrupted run gives them."""
    assert_resumes(DUMP, at, setup=GANG_RELEASE)
    cut = simulate(DUMP, until=at, setup=GANG_RELEASE)
    rest = simulate(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": state_documents(cut)}), setup=GANG_RELEASE)
    recs = {r.key: r.as_json() for r in rest.records.values()}
    assert recs["ml/volcano-job-0"] == {
        "pod": "ml/volcano-job-0", "node": None, "time": 0.0, "attempts": 0,
        "message": 'no profile serves schedulerName "volcano" (profiles: default-scheduler)'}
    if at < 25:  # still terminating when the run stopped
        assert recs["ml/notebook-7"] == {
            "pod": "ml/notebook-7", "node": None, "time": 0.0, "attempts": 0,
            "message": "evicted: pod deleted (terminating at load)"}
    trainers = [r for k, r in recs.items() if k.startswith("ml/trainer-")]
    assert at >= 42 or {(r["time"], r["node"] is not None) for r in trainers} == {(42.0, True)}


# ---------------------------------------------------------------------- choices at Reserve
#
# A pod waiting at Permit keeps the devices and volumes its Reserve chose: a device or a
# volume it would have preferred that comes free while it waits changes nothing, in the run
# that goes on and in the one resumed from a checkpoint taken meanwhile.

GPU_CLAIM = "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
GANG_MEMBER = "  schedulingGroup: {podGroupName: g}\n"

# hog holds gpu-0 until 10; g0 takes gpu-1 at 1 and waits for g1, which waits for x's
# CPUs (until 30); the state at 20 has gpu-0 free, first in the allocator's order
DEVICE_FREED_WHILE_WAITING = (
    DRA + node("n0", cpu="4") + slice_for("n0", 2) + gang_group(GANG_RELEASE, 2)
    + pod("hog", "100m", annotations="{kubesched.io/duration: '10'}", extra=GPU_CLAIM)
    + pod("x", "3", annotations="{kubesched.io/duration: '30'}", extra="  priority: 1000\n")
    + "".join(pod(name, cpu, annotations="{kubesched.io/arrival: '1'}",
                  extra=GPU_CLAIM + GANG_MEMBER) for name, cpu in (("g0", "100m"), ("g1", "2"))))


def _devices(sim: SimCluster) -> dict[str, list[str]]:
    """pod -> the devices its claims were allocated (in the end state)."""
    out = {}
    for d in state_documents(sim):
        if d.get("kind") == "ResourceClaim" and d.get("status", {}).get("allocation"):
            owner = d["metadata"]["name"].split("-gpu-")[0]
            out[owner] = [r["device"] for r in d["status"]["allocation"]["devices"]["results"]]
    return out


@pytest.mark.parametrize("at", [1, 5, 10, 20, 29.5])
def test_a_waiting_pods_devices_are_the_ones_its_reserve_chose(at: float) -> None:
    assert _devices(simulate(DEVICE_FREED_WHILE_WAITING, setup=GANG_RELEASE)) == {
        "g0": ["gpu-1"], "g1": ["gpu-0"]}
    assert_resumes(DEVICE_FREED_WHILE_WAITING, at, setup=GANG_RELEASE)


# a0 assumes pv-small at 0 and waits for a1, which never fits; b0 (at 5) assumes pv-big and
# waits for b1, which waits for x's CPUs (until 302); a0's group times out at 300 and frees
# pv-small, smaller and so preferred: the state at 301 has it Available
LOCAL_VOLUMES = """---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
""" + "".join(f"""---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv-{size_name}}}
spec:
  capacity: {{storage: {size}}}
  accessModes: [ReadWriteOnce]
  hostPath: {{path: /{size_name}}}
  storageClassName: local
status: {{phase: Available}}
""" for size_name, size in (("small", "1Gi"), ("big", "2Gi"))) + "".join(f"""---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}, namespace: default}}
spec: {{accessModes: [ReadWriteOnce], storageClassName: local,
        resources: {{requests: {{storage: 1Gi}}}}}}
""" for name in ("ca", "cb"))



def _member(name: str, group: str, cpu: str, claim: str | None = None) -> str:
    extra = f"  schedulingGroup: {{podGroupName: {group}}}\n"
    if claim is not None:
        extra += f"  volumes: [{{name: v, persistentVolumeClaim: {{claimName: {claim}}}}}]\n"
    arrival = "0" if group == "ga" else "5"
    return pod(name, cpu, annotations=f"{{kubesched.io/arrival: '{arrival}'}}", extra=extra)


VOLUME_FREED_WHILE_WAITING = (
    node("n0", cpu="4") + LOCAL_VOLUMES
    + "".join(f"---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: "
              f"{{name: {g}}}\nspec: {{schedulingPolicy: {{gang: {{minCount: 2}}}}}}\n"
              for g in ("ga", "gb"))
    + pod("x", "3", annotations="{kubesched.io/duration: '302'}", extra="  priority: 1000\n")
    + _member("a0", "ga", "100m", "ca") + _member("a1", "ga", "10")
    + _member("b0", "gb", "100m", "cb") + _member("b1", "gb", "2"))


def _volumes(sim: SimCluster) -> dict[str, str]:
    """claim -> the volume it is bound to (in the end state)."""
    return {d["metadata"]["name"]: d["spec"].get("volumeName")
            for d in state_documents(sim) if d.get("kind") == "PersistentVolumeClaim"}


@pytest.mark.parametrize("at", [5, 200, 300, 301, 301.5])
def test_a_waiting_pods_volumes_are_the_ones_its_reserve_chose(at: float) -> None:
    assert _volumes(simulate(VOLUME_FREED_WHILE_WAITING, setup=GANG_RELEASE))["cb"] == "pv-big"
    assert_resumes(VOLUME_FREED_WHILE_WAITING, at, setup=GANG_RELEASE)


def _reserved(s: dict[str, Any], plugin: str) -> dict[str, Any]:
    chosen: dict[str, Any] = s["waiting"][0]["reserved"][plugin]
    return chosen


def _devices_chosen(s: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = _reserved(s, "DynamicResources")["claims"][0]["allocation"][
        "devices"]["results"][0]
    return result


@pytest.mark.parametrize(("scenario", "at", "edit", "field", "words"), [
    (DEVICE_FREED_WHILE_WAITING, 20, lambda s: _devices_chosen(s).update(device="gpu-9"),
     "waiting[0].reserved.DynamicResources.claims[0].allocation.devices.results[0]",
     "no device of the ResourceSlices"),
    (DEVICE_FREED_WHILE_WAITING, 20,
     lambda s: _reserved(s, "DynamicResources")["claims"][0].update(claim="hog-gpu-xxxxx"),
     "waiting[0].reserved.DynamicResources.claims[0].claim", "no claim of the pod's"),
    (DEVICE_FREED_WHILE_WAITING, 20,
     lambda s: _reserved(s, "DynamicResources")["claims"].clear(),
     "waiting[0].reserved.DynamicResources.claims", "every claim"),
    (DEVICE_FREED_WHILE_WAITING, 20,
     lambda s: _devices_chosen(s).update(device=None),
     "waiting[0].reserved.DynamicResources.claims[0].allocation.devices.results[0].device",
     ""),
    (VOLUME_FREED_WHILE_WAITING, 301,
     lambda s: _reserved(s, "VolumeBinding")["bindings"][0].update(volume="pv-none"),
     "waiting[0].reserved.VolumeBinding.bindings[0].volume", "no PersistentVolume"),
    (VOLUME_FREED_WHILE_WAITING, 301,
     lambda s: _reserved(s, "VolumeBinding")["bindings"][0].update(claim="ca"),
     "waiting[0].reserved.VolumeBinding.bindings[0].claim", "no claim of the pod's"),
    (VOLUME_FREED_WHILE_WAITING, 301,
     lambda s: _reserved(s, "VolumeBinding").pop("provisions"),
     "waiting[0].reserved.VolumeBinding", "not as --state-out writes it"),
    (VOLUME_FREED_WHILE_WAITING, 301,
     lambda s: s["waiting"][0]["reserved"].update(NodeResourcesFit={}),
     "waiting[0].reserved.NodeResourcesFit", "whose Reserve chooses"),
    (VOLUME_FREED_WHILE_WAITING, 301,
     lambda s: s["waiting"][0]["reserved"].update(VolumeBinding=[]),
     "waiting[0].reserved.VolumeBinding", "mapping"),
])
def test_a_waiting_pods_choice_edited_by_hand_is_bad_input(
        tmp_path: Path, scenario: str, at: float, edit: Any, field: str, words: str) -> None:
    src = tmp_path / "s.yaml"
    src.write_text(scenario)
    state = tmp_path / "state.yaml"
    res = CliRunner().invoke(main, ["simulate", str(src), "--until", str(at), "--state-out",
                                    str(state), "--quiet", *GANG_FLAGS])
    assert res.exit_code == 0, res.output
    bad = tmp_path / "edited.yaml"
    bad.write_text(_edit_state(state.read_text(), edit))
    res = CliRunner().invoke(main, ["simulate", str(bad), "--quiet", *GANG_FLAGS])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert str(bad) in res.output and f"field {field}" in res.output and words in res.output
