"""KubeSchedulerConfiguration v1: defaults, merging, loading, validation (upstream v1.35)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import (
    API_VERSION,
    DEFAULT_MULTI_POINT,
    KIND,
    PluginRef,
    PluginSet,
    default_config,
    load_config,
    load_config_file,
    merge_plugin_set,
)
from kubesched.config.features import FeatureGates
from kubesched.config.plugin_args import ResourceSpec, args_to_dict
from kubesched.errors import InputError
from shared_files import golden_cases

# Upstream v1.35's default profile (v1.36 on appends NodeDeclaredFeatures).
V135 = FeatureGates("1.35")



def doc(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def one_profile(**profile: Any) -> dict[str, Any]:
    return doc(profiles=[profile])


def refs(*items: str | tuple[str, int]) -> list[PluginRef]:
    out = []
    for it in items:
        out.append(PluginRef(it, 0) if isinstance(it, str) else PluginRef(*it))
    return out


def expect_error(d: dict[str, Any], field: str, *words: str) -> InputError:
    with pytest.raises(InputError) as ei:
        load_config(d, source="sched.yaml")
    err = ei.value
    assert err.field == field, str(err)
    text = str(err)
    assert "sched.yaml" in text
    assert f"field {field}" in text
    for w in words:
        assert w in text, text
    return err


# ------------------------------------------------------------------ defaults


def test_default_config_top_level() -> None:
    c = default_config()
    assert c.parallelism == 16
    assert c.percentage_of_nodes_to_score == 0
    assert c.pod_initial_backoff_seconds == 1
    assert c.pod_max_backoff_seconds == 10
    assert c.extenders == []
    assert c.enable_profiling is True and c.enable_contention_profiling is True
    assert c.leader_election == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }
    assert c.client_connection["qps"] == 50.0
    assert c.client_connection["burst"] == 100
    assert c.client_connection["contentType"] == "application/vnd.kubernetes.protobuf"


def test_default_profile_plugins_order_and_weights() -> None:
    c = default_config(V135)
    assert len(c.profiles) == 1
    p = c.profiles[0]
    assert p.scheduler_name == "default-scheduler"
    assert p.percentage_of_nodes_to_score is None
    assert [(r.name, r.weight) for r in p.plugins.multi_point.enabled] == [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]
    assert list(DEFAULT_MULTI_POINT) == [(r.name, r.weight) for r in p.plugins.multi_point.enabled]
    for name, ps in p.plugins.items():
        if name != "multiPoint":
            assert ps == PluginSet(), name


def test_default_plugin_args() -> None:
    pc = {k: args_to_dict(v) for k, v in default_config().profiles[0].plugin_config.items()}
    assert sorted(pc) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    assert list(pc) == sorted(pc)  # upstream appends defaults in sorted name order
    assert pc["DefaultPreemption"] == {"minCandidateNodesPercentage": 10,
                                       "minCandidateNodesAbsolute": 100}
    assert pc["InterPodAffinity"] == {"hardPodAffinityWeight": 1,
                                      "ignorePreferredTermsOfExistingPods": False}
    # bindingTimeout defaults to 10m with DRADeviceBindingConditions and
    # DRAResourceClaimDeviceStatus on (1.36 beta + beta, 1.37 beta + GA); 1.35 has them off
    assert pc["DynamicResources"] == {"filterTimeout": "10s", "bindingTimeout": "10m0s"}
    old = default_config(FeatureGates("1.35")).profiles[0].plugin_config
    assert args_to_dict(old["DynamicResources"]) == {"filterTimeout": "10s", "bindingTimeout": None}
    assert pc["NodeAffinity"] == {"addedAffinity": None}
    assert pc["NodeResourcesBalancedAllocation"] == {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert pc["NodeResourcesFit"] == {
        "ignoredResources": [],
        "ignoredResourceGroups": [],
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            "requestedToCapacityRatio": None,
        },
    }
    assert pc["PodTopologySpread"] == {"defaultConstraints": [], "defaultingType": "System"}
    # the default release (1.37) has StorageCapacityScoring on: KEP-4049's default shape
    assert pc["VolumeBinding"] == {"bindTimeoutSeconds": 600, "shape": [
        {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}


def test_default_args_are_independent_copies() -> None:
    a = default_config().profiles[0].plugin_config
    a["NodeResourcesFit"].scoring_strategy.resources.append(ResourceSpec("x"))
    b = default_config().profiles[0].plugin_config
    assert b["NodeResourcesFit"].scoring_strategy.resources == [ResourceSpec("cpu"),
                                                                 ResourceSpec("memory")]


def test_args_only_for_plugins_enabled_in_profile() -> None:
    c = load_config(one_profile(plugins={"multiPoint": {"disabled": [{"name": "*"}],
                                                        "enabled": [{"name": "PrioritySort"},
                                                                    {"name": "DefaultBinder"},
                                                                    {"name": "NodeAffinity"}]}}))
    assert list(c.profiles[0].plugin_config) == ["NodeAffinity"]
    # Enabled at a single point only still counts.
    c = load_config(one_profile(plugins={
        "multiPoint": {"disabled": [{"name": "*"}]},
        "score": {"enabled": [{"name": "InterPodAffinity"}]},
    }))
    assert list(c.profiles[0].plugin_config) == ["InterPodAffinity"]


def test_disabling_at_one_point_keeps_args() -> None:
    c = load_config(one_profile(plugins={"score": {"disabled": [{"name": "NodeResourcesFit"}]}}))
    assert "NodeResourcesFit" in c.profiles[0].plugin_config


# ------------------------------------------------------------------ mergePluginSet


def test_merge_replaces_default_in_place() -> None:
    default = PluginSet(enabled=refs("A", ("B", 2), "C"))
    custom = PluginSet(enabled=refs(("B", 5), "X"))
    merged = merge_plugin_set(default, custom)
    assert merged.enabled == refs("A", ("B", 5), "C", "X")
    assert merged.disabled == []


def test_merge_disabled_names_and_star() -> None:
    default = PluginSet(enabled=refs("A", "B", "C"))
    merged = merge_plugin_set(default, PluginSet(enabled=refs("X"), disabled=refs("B")))
    assert merged.enabled == refs("A", "C", "X")
    assert merged.disabled == refs("B")
    merged = merge_plugin_set(default, PluginSet(enabled=refs("B", "X"), disabled=refs("*")))
    assert merged.enabled == refs("B", "X")  # "*" drops every default; custom ones stay
    assert merged.disabled == refs("*")


def test_merge_enabled_and_disabled_same_name_goes_last() -> None:
    # Disabled removes the default; enabled re-adds it after the defaults (enabled wins).
    merged = merge_plugin_set(PluginSet(enabled=refs("A", "B", "C")),
                              PluginSet(enabled=refs(("A", 4)), disabled=refs("A")))
    assert merged.enabled == refs("B", "C", ("A", 4))


def test_merge_keeps_default_disabled_and_duplicates() -> None:
    merged = merge_plugin_set(PluginSet(enabled=refs("A"), disabled=refs("Z")),
                              PluginSet(enabled=refs("A", "A"), disabled=refs("Y")))
    assert merged.disabled == refs("Y", "Z")
    # the last duplicate replaces the default in place, the first is appended
    assert merged.enabled == refs("A", "A")


def test_user_weight_replaces_default_multipoint_weight_in_place() -> None:
    c = load_config(features=V135, doc=one_profile(plugins={"multiPoint": {"enabled": [
        {"name": "ImageLocality", "weight": 7}, {"name": "MyPlugin", "weight": 4}]}}))
    mp = c.profiles[0].plugins.multi_point.enabled
    names = [r.name for r in mp]
    assert names.index("ImageLocality") == 17
    assert mp[17] == PluginRef("ImageLocality", 7)
    assert mp[-1] == PluginRef("MyPlugin", 4)
    assert len(mp) == 20


def test_multipoint_disable_one_default() -> None:
    c = load_config(features=V135, doc=one_profile(
        plugins={"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}))
    names = c.profiles[0].plugins.multi_point.enabled_names()
    assert "ImageLocality" not in names and len(names) == 18


def test_score_set_kept_as_given() -> None:
    c = load_config(features=V135, doc=one_profile(plugins={"score": {
        "enabled": [{"name": "InterPodAffinity", "weight": 8}, {"name": "NodeAffinity"}],
        "disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}))
    score = c.profiles[0].plugins.score
    assert score.enabled == refs(("InterPodAffinity", 8), "NodeAffinity")
    assert score.disabled == refs("NodeResourcesBalancedAllocation")
    assert len(c.profiles[0].plugins.multi_point.enabled) == 19


# ------------------------------------------------------------------ profiles


def test_percentage_global_and_per_profile() -> None:
    c = load_config(doc(percentageOfNodesToScore=30, profiles=[
        {"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 70}]))
    assert c.percentage_of_nodes_to_score == 30
    a, b = c.profiles
    assert a.percentage_of_nodes_to_score is None
    assert b.percentage_of_nodes_to_score == 70
    assert c.profile_percentage(a) == 30
    assert c.profile_percentage(b) == 70
    assert c.profile("b") is b and c.profile("zzz") is None
    c = load_config(one_profile(percentageOfNodesToScore=0))
    assert c.profiles[0].percentage_of_nodes_to_score == 0


def test_only_single_profile_gets_default_name() -> None:
    c = load_config(doc(profiles=[{}]))
    assert c.profiles[0].scheduler_name == "default-scheduler"
    expect_error(doc(profiles=[{"schedulerName": "a"}, {}]), "profiles[1].schedulerName",
                 "required")
    expect_error(one_profile(schedulerName=""), "profiles[0].schedulerName", "required")


def test_duplicate_scheduler_name() -> None:
    expect_error(doc(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
                 "profiles[1].schedulerName", "duplicate")


def test_two_profiles_each_get_defaults() -> None:
    c = load_config(doc(profiles=[{"schedulerName": "a"},
                                  {"schedulerName": "b",
                                   "plugins": {"score": {"disabled": [{"name": "*"}]}}}]))
    assert [p.scheduler_name for p in c.profiles] == ["a", "b"]
    assert c.profiles[1].plugins.score.disabled == refs("*")
    assert c.profiles[0].plugin_config == c.profiles[1].plugin_config


def test_queue_sort_must_match_across_profiles() -> None:
    expect_error(doc(profiles=[
        {"schedulerName": "a"},
        {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Other"}],
                                                         "disabled": [{"name": "*"}]}}},
    ]), "profiles[1].plugins.queueSort", "must be the same for all profiles")


# ------------------------------------------------------------------ top-level validation


@pytest.mark.parametrize(("fields", "path", "words"), [
    ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore", ["[0-100]", "101"]),
    ({"percentageOfNodesToScore": -1}, "percentageOfNodesToScore", ["[0-100]"]),
    ({"parallelism": 0}, "parallelism", ["greater than zero"]),
    ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds", ["greater than 0"]),
    ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4}, "podMaxBackoffSeconds",
     ["greater than or equal to PodInitialBackoffSeconds"]),
    ({"profiles": [{"percentageOfNodesToScore": 150}]}, "profiles[0].percentageOfNodesToScore",
     ["[0-100]", "150"]),
    ({"leaderElection": {"resourceLock": "endpoints"}}, "leaderElection.resourceLock",
     ['"leases"']),
    ({"leaderElection": {"leaseDuration": "5s"}}, "leaderElection.leaseDuration",
     ["greater than RenewDeadline"]),
    ({"clientConnection": {"burst": -1}}, "clientConnection.burst", ["non-negative"]),
    ({"extenders": [{"urlPrefix": "http://x", "prioritizeVerb": "p"}]}, "extenders[0].weight",
     ["positive weight"]),
])
def test_top_level_validation(fields: dict[str, Any], path: str, words: list[str]) -> None:
    expect_error(doc(**fields), path, *words)


def test_backoff_values_accepted() -> None:
    c = load_config(doc(podInitialBackoffSeconds=2, podMaxBackoffSeconds=2, parallelism=4))
    assert (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds, c.parallelism) == (2, 2, 4)


def test_leader_election_not_validated_when_disabled() -> None:
    c = load_config(doc(leaderElection={"leaderElect": False, "resourceLock": "endpoints"}))
    assert c.leader_election["leaderElect"] is False
    assert c.leader_election["resourceLock"] == "endpoints"


def test_zero_durations_and_qps_are_defaulted() -> None:
    c = load_config(doc(leaderElection={"leaseDuration": "0s"}, clientConnection={"qps": 0}))
    assert c.leader_election["leaseDuration"] == "15s"
    assert c.client_connection["qps"] == 50.0


def test_several_errors_are_all_mentioned() -> None:
    err = expect_error(doc(parallelism=0, percentageOfNodesToScore=200), "parallelism")
    assert "1 more" in str(err) and "percentageOfNodesToScore" in str(err)


def test_removed_plugins_are_invalid() -> None:
    expect_error(one_profile(plugins={"filter": {"enabled": [{"name": "EBSLimits"}]}}),
                 "profiles[0].plugins.filter.enabled[0]", "was invalid in version")
    expect_error(one_profile(pluginConfig=[{"name": "GCEPDLimits", "args": {}}]),
                 "profiles[0].pluginConfig[0]", "was invalid in version")


def test_duplicate_plugin_config() -> None:
    expect_error(one_profile(pluginConfig=[{"name": "InterPodAffinity", "args": {}},
                                           {"name": "InterPodAffinity", "args": {}}]),
                 "profiles[0].pluginConfig[1]", "duplicate")


# ------------------------------------------------------------------ strict decoding


@pytest.mark.parametrize(("d", "path"), [
    (doc(foo=1), "foo"),
    (doc(profiles=[{"schedulerName": "x", "pluginsX": {}}]), "profiles[0].pluginsX"),
    (doc(profiles=[{"plugins": {"scoreX": {}}}]), "profiles[0].plugins.scoreX"),
    (doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "wieght": 1}]}}}]),
     "profiles[0].plugins.score.enabled[0].wieght"),
    (doc(leaderElection={"leaderElection": True}), "leaderElection.leaderElection"),
    (doc(Parallelism=3), "Parallelism"),  # field names are case-sensitive
])
def test_unknown_fields(d: dict[str, Any], path: str) -> None:
    expect_error(d, path, "unknown field")


@pytest.mark.parametrize(("d", "path"), [
    (doc(parallelism="16"), "parallelism"),
    (doc(parallelism=1.5), "parallelism"),
    (doc(parallelism=True), "parallelism"),
    (doc(parallelism=1 << 31), "parallelism"),
    (doc(profiles={}), "profiles"),
    (doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "weight": "3"}]}}}]),
     "profiles[0].plugins.score.enabled[0].weight"),
    (doc(leaderElection={"leaseDuration": "15 seconds"}), "leaderElection.leaseDuration"),
])
def test_wrong_types(d: dict[str, Any], path: str) -> None:
    expect_error(d, path)


def test_integral_float_accepted() -> None:
    assert load_config(doc(parallelism=8.0)).parallelism == 8


def test_api_version_and_kind() -> None:
    with pytest.raises(InputError, match="apiVersion"):
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": KIND})
    with pytest.raises(InputError, match="kind"):
        load_config({"apiVersion": API_VERSION, "kind": "Pod"})
    with pytest.raises(InputError):
        load_config(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_nulls_mean_unset() -> None:
    c = load_config(doc(parallelism=None, profiles=[{"schedulerName": None, "plugins": None}]))
    assert c.parallelism == 16
    assert c.profiles[0].scheduler_name == "default-scheduler"


# ------------------------------------------------------------------ files


def test_load_config_file_yaml(tmp_path: Any) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 50\n"
        "profiles:\n"
        "- schedulerName: my\n"
        "  pluginConfig:\n"
        "  - name: NodeResourcesFit\n"
        "    args:\n"
        "      scoringStrategy:\n"
        "        type: MostAllocated\n")
    c = load_config_file(p)
    assert c.percentage_of_nodes_to_score == 50
    ss = args_to_dict(c.profiles[0].plugin_config["NodeResourcesFit"])["scoringStrategy"]
    assert ss == {"type": "MostAllocated",
                  "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                  "requestedToCapacityRatio": None}


def test_load_config_file_picks_config_from_scenario(tmp_path: Any) -> None:
    p = tmp_path / "scenario.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "parallelism: 3\n")
    assert load_config_file(p).parallelism == 3


def test_load_config_file_errors(tmp_path: Any) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(InputError, match="cannot read"):
        load_config_file(missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: [unclosed\n")
    with pytest.raises(InputError, match="invalid YAML") as ei:
        load_config_file(bad)
    assert "bad.yaml" in str(ei.value)
    dup = tmp_path / "dup.yaml"
    dup.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "parallelism: 2\nparallelism: 3\n")
    with pytest.raises(InputError, match="duplicate key"):
        load_config_file(dup)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n"
                       "  pluginConfig:\n  - name: InterPodAffinity\n"
                       "    args: {hardPodAffinityWeight: 1, bogus: 2}\n")
    with pytest.raises(InputError) as ei:
        load_config_file(unknown)
    assert ei.value.field == "profiles[0].pluginConfig[0].args.bogus"
    assert "unknown.yaml" in str(ei.value)


def _golden_config_files() -> list[str]:
    return [str(p) for p in golden_cases("explain-config", pattern="*.yaml")]


@pytest.mark.skipif(not _golden_config_files(), reason="golden explain-config cases not present")
def test_golden_explain_config_documents_load() -> None:
    import yaml

    n = 0
    for path in _golden_config_files():
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]
        for d in docs:
            if d.get("kind") == KIND:
                cfg = load_config(d, source=path)
                assert cfg.profiles, path
                n += 1
        if any(d.get("kind") == KIND for d in docs):
            assert load_config_file(path).profiles
    assert n > 0


def test_dynamic_resources_binding_timeout_per_release() -> None:
    """ValidateDynamicResourcesArgs: bindingTimeout at least a second with binding
    conditions on (1.37's default), forbidden with them off (1.35's)."""
    def dra(timeout: str) -> dict[str, Any]:
        return one_profile(pluginConfig=[{"name": "DynamicResources",
                                          "args": {"bindingTimeout": timeout}}])
    path = "profiles[0].pluginConfig[0].args.bindingTimeout"
    expect_error(dra("500ms"), path, "must be at least 1 second")
    c = load_config(dra("30s"))
    assert c.profiles[0].plugin_config["DynamicResources"].binding_timeout == "30s"
    with pytest.raises(InputError, match="DRADeviceBindingConditions or "
                       "DRAResourceClaimDeviceStatus feature gate is disabled"):
        load_config(dra("30s"), features=V135)


def test_a_negative_score_weight_is_used_as_given_as_upstream_does() -> None:
    # Upstream refuses no plugin weight in its validation (pkg/scheduler/apis/config/
    # validation/validation.go: only an extender's must be positive, tested above); the
    # framework's getScoreWeights turns 0 into 1 and refuses only a total that could overflow
    # int64, which int32 weights cannot reach. A negative weight therefore scores as given.
    c = load_config(features=V135, doc=one_profile(plugins={"score": {"enabled": [
        {"name": "TaintToleration", "weight": -3}]}}))
    assert c.profiles[0].plugins.score.enabled == refs(("TaintToleration", -3))
    with pytest.raises(InputError, match=r"plugins\.score\.enabled\[0\]\.weight: number out "
                                         r"of range for int32"):
        load_config(features=V135, doc=one_profile(plugins={"score": {"enabled": [
            {"name": "TaintToleration", "weight": 1 << 31}]}}))


def test_a_negative_score_weight_turns_a_plugins_preference_around() -> None:
    """TaintToleration prefers the node without the PreferNoSchedule taint; weighted -3 (as
    upstream's framework weights it: getScoreWeights keeps it) the tainted node wins."""
    from kubesched.api.scenario import load_scenario_text
    from kubesched.explain import explain

    text = """
apiVersion: v1
kind: Node
metadata: {name: clean}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: tainted}
spec: {taints: [{key: spot, effect: PreferNoSchedule}]}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""
    cfg = load_config(features=V135, doc=one_profile(plugins={"score": {"enabled": [
        {"name": "TaintToleration", "weight": -3}]}}))
    out = explain(load_scenario_text(text, "s.yaml"), cfg, "default/p")
    assert out["weights"]["TaintToleration"] == -3
    nodes = {n["node"]: n for n in out["nodes"]}
    assert nodes["clean"]["scores"]["TaintToleration"] == 100
    assert nodes["tainted"]["scores"]["TaintToleration"] == 0
    others = sum(out["weights"][p] * s for p, s in nodes["clean"]["scores"].items()
                 if p != "TaintToleration")
    assert nodes["clean"]["total"] == others - 300
    assert out["selected"] == ["tainted"]


def test_a_filter_without_its_prefilter_is_explained_as_the_cycles_error(tmp_path) -> None:
    """NodeResourcesFit's Filter enabled with its PreFilter disabled: upstream's cycle ends
    in an Error status (the Filter reads a state no PreFilter wrote), so explain answers
    with that error as the message, no node judged, and no PostFilter run; simulate leaves
    the pod pending with the same message."""
    import json

    from click.testing import CliRunner

    from kubesched.cli import main

    scen = tmp_path / "s.yaml"
    scen.write_text("""
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
""")
    conf = tmp_path / "c.yaml"
    conf.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "preFilter": {"disabled": [{"name": "NodeResourcesFit"}]}}}]}))
    words = ('running "NodeResourcesFit" filter plugin: error reading '
             '"PreFilterNodeResourcesFit" from cycleState: not found')
    run = CliRunner().invoke(main, ["explain", str(scen), "--config", str(conf),
                                    "--pod", "default/p", "-o", "json"])
    assert run.exit_code == 0, run.output
    out = json.loads(run.output)
    assert out["message"] == words
    assert out["nodes"] == [{"node": "n1", "feasible": False, "plugin": None, "reasons": []}]
    assert out["selected"] == [] and "preemption" not in out
    table = CliRunner().invoke(main, ["explain", str(scen), "--config", str(conf),
                                      "--pod", "default/p"])
    assert table.exit_code == 0, table.output
    assert "not judged" in table.output
    decisions = tmp_path / "d.jsonl"
    sim = CliRunner().invoke(main, ["simulate", str(scen), "--config", str(conf),
                                    "--decisions", str(decisions)])
    assert sim.exit_code == 0, sim.output
    first = json.loads(decisions.read_text().splitlines()[0])
    assert (first["node"], first["message"]) == (None, words)


def test_weights_whose_total_could_overflow_are_refused_with_upstreams_words() -> None:
    """getScoreWeights' one refusal. int32 weights cannot reach it from a file (each is at
    most 2³¹−1, ×100), so the profile is given weights no file could hold."""
    from kubesched.config import score_weights

    cfg = load_config(features=V135, doc=one_profile(plugins={"score": {"enabled": [
        {"name": "TaintToleration", "weight": 3}, {"name": "ImageLocality", "weight": -2}]}}))
    profile = cfg.profiles[0]
    assert score_weights(profile, lambda n, p: True)["ImageLocality"] == -2
    profile.plugins.score.enabled = [PluginRef("TaintToleration", 1 << 60),
                                     PluginRef("ImageLocality", 1 << 60)]
    with pytest.raises(InputError, match=r"profiles\[0\]\.plugins\.score.*total score of "
                                         r"Score plugins could overflow"):
        score_weights(profile, lambda n, p: True)
