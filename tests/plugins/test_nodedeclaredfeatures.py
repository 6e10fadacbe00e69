"""NodeDeclaredFeatures: upstream ``nodedeclaredfeatures_test.go`` (TestPreFilter, TestFilter,
TestEnqueueExtensionsNodeUpdate, TestEnqueueExtensionsPodUpdate; the mocked features
replaced by the registry's real ones), the inference per release, both forms, the default
profile per release / gate, and an end-to-end scenario."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kubesched.api.parse import parse_node, parse_pod
from kubesched.config import default_config
from kubesched.config.features import FeatureGates, parse_feature_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.nodedeclaredfeatures import (
    PRE_FILTER_STATE_KEY,
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    VOLUME_BIND_MOUNT_OPTIONS,
    NodeDeclaredFeatures,
    _PreFilterState,
    infer_for_pod_scheduling,
)
from kubesched.testing import snapshot_from_nodes


def pod(**spec: object) -> dict:
    base = {"containers": [{"name": "c", "image": "i"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "test-pod", "namespace": "default", "uid": "123"},
            "spec": base}


RESTART_ALL = pod(containers=[{"name": "c", "image": "i", "restartPolicyRules": [
    {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}])
USERNS_HOSTNET = pod(hostNetwork=True, hostUsers=False)
BIND_MOUNT = pod(containers=[{"name": "c", "image": "i", "volumeMounts": [
    {"name": "v", "mountPath": "/d", "bindMountOptions": ["nosuid"]}]}])


def node(name: str, features: list[str] | None = None) -> dict:
    st: dict = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    if features is not None:
        st["declaredFeatures"] = features
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": st}


def plugin(version: str = "1.37", enabled: bool | None = None) -> NodeDeclaredFeatures:
    gates = FeatureGates(version) if enabled is None else parse_feature_gates(
        [f"NodeDeclaredFeatures={str(enabled).lower()}"], version)
    return NodeDeclaredFeatures(None, Handle(features=gates))


@pytest.mark.parametrize(("doc", "want"), [
    (pod(), {"1.35": set(), "1.36": set(), "1.37": set()}),
    (RESTART_ALL, {v: {RESTART_ALL_CONTAINERS} for v in ("1.35", "1.36", "1.37")}),
    (USERNS_HOSTNET, {"1.35": set(), "1.36": {USER_NAMESPACES_HOST_NETWORK},
                      "1.37": {USER_NAMESPACES_HOST_NETWORK}}),
    (pod(hostNetwork=True), {"1.35": set(), "1.36": set(), "1.37": set()}),
    (pod(hostNetwork=True, hostUsers=True), {"1.35": set(), "1.36": set(), "1.37": set()}),
    (BIND_MOUNT, {"1.35": set(), "1.36": set(), "1.37": {VOLUME_BIND_MOUNT_OPTIONS}}),
], ids=["none", "restart-all", "userns-hostnetwork", "hostnetwork-only", "hostusers-true",
        "bind-mount-options"])
def test_inference_per_release(doc: dict, want: dict) -> None:
    p = parse_pod(doc)
    for version, features in want.items():
        assert infer_for_pod_scheduling(p, version) == features, version


def test_pre_filter() -> None:
    # plugin disabled / no requirements: Skip and no state; requirements: state written.
    for pl, doc, code in ((plugin("1.35"), RESTART_ALL, Code.SKIP),
                          (plugin("1.37"), pod(), Code.SKIP)):
        state = CycleState()
        result, st = pl.pre_filter(state, parse_pod(doc), Snapshot())
        assert result is None and st is not None and st.code == code
        assert state.read(PRE_FILTER_STATE_KEY) is None
    state = CycleState()
    result, st = plugin("1.36").pre_filter(state, parse_pod(RESTART_ALL), Snapshot())
    assert result is None and st is None
    assert state.read(PRE_FILTER_STATE_KEY).reqs == {RESTART_ALL_CONTAINERS}


OLD = "node declared features check failed - unsatisfied requirements: "
NEW = "node(s) didn't match Pod's required features"


@pytest.mark.parametrize(("enabled", "declared", "reqs", "want"), [
    (False, ["FeatureA", "FeatureB"], None, None),  # plugin disabled
    (True, ["FeatureA", "FeatureB"], ["FeatureA"], None),
    (True, ["FeatureB"], ["FeatureA"], "FeatureA"),
    (False, ["FeatureA", "FeatureB", "FeatureC"], ["FeatureA", "FeatureC"], None),
    (True, None, ["FeatureA"], "FeatureA"),  # node declares nothing
    (True, ["FeatureA"], ["FeatureA", "FeatureB"], "FeatureB"),
    (True, [], ["FeatureB", "FeatureA"], "FeatureA, FeatureB"),  # sorted (Go: map order)
], ids=["disabled", "match", "no-match", "subset-disabled", "none-declared", "some",
        "two-missing"])
@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_filter(version: str, enabled: bool, declared: list[str] | None,
                reqs: list[str] | None, want: str | None) -> None:
    if not enabled and version == "1.37":
        pytest.skip("the gate is GA and locked on in 1.37")
    pl = plugin(version, enabled)
    snap = snapshot_from_nodes([parse_node(node("node-1", declared))], [])
    state = CycleState()
    if reqs is not None:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(reqs)))
    the_pod = parse_pod(pod())
    st = pl.filter(state, the_pod, snap.node_infos[0])
    if want is None:
        assert st is None
    else:
        reason = NEW if version == "1.37" else OLD + want
        assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == (reason,)
    if enabled:
        b = pl.filter_batch(state, the_pod, snap, np.array([0]))
        assert (int(b.codes[0]) == 0) == (want is None)
        if want is not None:
            assert b.reasons[int(b.reason_ids[0])] == st.reasons


def test_filter_without_pre_filter_state_is_an_error() -> None:
    snap = snapshot_from_nodes([parse_node(node("node-1"))], [])
    st = plugin("1.37").filter(CycleState(), parse_pod(pod()), snap.node_infos[0])
    assert st is not None and st.code == Code.ERROR


def test_batch_and_per_node_forms_agree() -> None:
    nodes = [parse_node(node(f"n{i}", feats)) for i, feats in enumerate(
        [None, [], [RESTART_ALL_CONTAINERS], [USER_NAMESPACES_HOST_NETWORK],
         [RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK, "Other"]])]
    snap = snapshot_from_nodes(nodes, [])
    both = parse_pod(pod(hostNetwork=True, hostUsers=False, containers=[
        {"name": "c", "image": "i", "restartPolicyRules": [{"action": "RestartAllContainers"}]}]))
    for version in ("1.36", "1.37"):
        pl = plugin(version)
        state = CycleState()
        assert pl.pre_filter(state, both, snap)[1] is None
        idx = np.arange(len(nodes))
        b = pl.filter_batch(state, both, snap, idx)
        per_node = [pl.filter(state, both, ni) for ni in snap.node_infos]
        assert [int(c) for c in b.codes] == [0 if s is None else int(s.code) for s in per_node]
        assert [int(c) == 0 for c in b.codes] == [False] * 4 + [True]
        for i, s in enumerate(per_node):
            if s is not None:
                assert b.reasons[int(b.reason_ids[i])] == s.reasons


@pytest.mark.parametrize(("old", "new", "want"), [
    (None, ["FeatureA"], QueueingHint.QUEUE),
    ([], ["FeatureA"], QueueingHint.QUEUE),
    (["FeatureA"], ["FeatureA"], QueueingHint.SKIP),
])
def test_node_update_hint(old: list[str] | None, new: list[str], want: QueueingHint) -> None:
    old_node = None if old is None else parse_node(node("node-1", old))
    got = NodeDeclaredFeatures.is_schedulable_after_node_change(
        parse_pod(pod()), old_node, parse_node(node("node-1", new)))
    assert got == want


def test_pod_update_hint() -> None:
    pl = plugin("1.37")
    target = parse_pod(pod())
    plain, restart = parse_pod(pod()), parse_pod(RESTART_ALL)
    assert pl.is_schedulable_after_pod_update(target, plain, restart) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_pod_update(target, restart, plain) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_pod_update(target, plain, parse_pod(pod())) \
        == QueueingHint.SKIP
    other = parse_pod({**RESTART_ALL, "metadata": {"name": "x", "uid": "456"}})
    assert pl.is_schedulable_after_pod_update(target, plain, other) == QueueingHint.SKIP


@pytest.mark.parametrize(("version", "gates", "member"), [
    ("1.35", [], False), ("1.35", ["NodeDeclaredFeatures=true"], True),
    ("1.36", [], True), ("1.36", ["NodeDeclaredFeatures=false"], False), ("1.37", [], True),
])
def test_default_profile_membership(version: str, gates: list[str], member: bool) -> None:
    cfg = default_config(parse_feature_gates(gates, version))
    names = [p.name for p in cfg.profiles[0].plugins.multi_point.enabled]
    assert ("NodeDeclaredFeatures" in names) == member
    if member:
        assert names[-1] == "NodeDeclaredFeatures"  # appended after the defaults


def test_end_to_end_explain(tmp_path: Path) -> None:
    from kubesched.cli import main

    docs = [node("old"), node("new", [RESTART_ALL_CONTAINERS]), RESTART_ALL]
    path = tmp_path / "s.yaml"
    path.write_text("\n---\n".join(json.dumps(d) for d in docs))
    base = ["explain", str(path), "--pod", "default/test-pod", "-o", "json"]
    for version, reason in (("1.36", OLD + RESTART_ALL_CONTAINERS), ("1.37", NEW)):
        res = CliRunner().invoke(main, [*base, "--kubernetes-version", version])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["selected"] == ["new"]
        old = next(n for n in out["nodes"] if n["node"] == "old")
        assert old["plugin"] == "NodeDeclaredFeatures" and old["reasons"] == [reason]
    res = CliRunner().invoke(main, [*base, "--kubernetes-version", "1.35"])
    out = json.loads(res.stdout)  # 1.35: the gate is off, the plugin not in the profile
    assert all(n["feasible"] for n in out["nodes"])
