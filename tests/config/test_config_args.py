"""Plugin args: strict decoding, v1 defaulting and validation, with upstream's field paths."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import API_VERSION, KIND, default_args, load_config, parse_duration
from kubesched.config.plugin_args import args_to_dict
from kubesched.errors import InputError


def with_args(*entries: tuple[str, Any], plugins: dict[str, Any] | None = None):
    profile: dict[str, Any] = {"schedulerName": "s",
                               "pluginConfig": [{"name": n, "args": a} for n, a in entries]}
    if plugins is not None:
        profile["plugins"] = plugins
    return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}


def args_of(name: str, args: Any) -> dict[str, Any]:
    return args_to_dict(load_config(with_args((name, args))).profiles[0].plugin_config[name])


def error_for(d: dict[str, Any]) -> InputError:
    with pytest.raises(InputError) as ei:
        load_config(d, source="cfg.yaml")
    return ei.value


# ------------------------------------------------------------------ defaulting


def test_fit_defaults_fill_resources_and_weights() -> None:
    a = args_of("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}})
    assert a["scoringStrategy"]["resources"] == [{"name": "cpu", "weight": 1},
                                                 {"name": "memory", "weight": 1}]
    a = args_of("NodeResourcesFit", {"scoringStrategy": {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0},
                                                {"name": "nvidia.com/gpu"}]}})
    assert a["scoringStrategy"]["resources"] == [{"name": "cpu", "weight": 1},
                                                 {"name": "nvidia.com/gpu", "weight": 1}]
    a = args_of("NodeResourcesFit", {"ignoredResources": ["example.com/foo"]})
    assert a["scoringStrategy"]["type"] == "LeastAllocated"
    assert a["ignoredResources"] == ["example.com/foo"]


def test_fit_rtcr_kept() -> None:
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    a = args_of("NodeResourcesFit", {"scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 5}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": {"shape": shape}}})
    assert a["scoringStrategy"]["requestedToCapacityRatio"] == {"shape": shape}
    assert a["scoringStrategy"]["resources"][0] == {"name": "cpu", "weight": 5}


def test_other_args_defaults() -> None:
    assert args_of("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}]}) == {
        "resources": [{"name": "cpu", "weight": 1}]}
    assert args_of("InterPodAffinity", {"hardPodAffinityWeight": 66}) == {
        "hardPodAffinityWeight": 66, "ignorePreferredTermsOfExistingPods": False}
    assert args_of("InterPodAffinity", {})["hardPodAffinityWeight"] == 1
    assert args_of("DefaultPreemption", {"minCandidateNodesAbsolute": 5}) == {
        "minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 5}
    assert args_of("VolumeBinding", {"bindTimeoutSeconds": 30}) == {
        "bindTimeoutSeconds": 30,
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
    c = [{"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
          "whenUnsatisfiable": "ScheduleAnyway"}]
    assert args_of("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": c}) == {
        "defaultingType": "List", "defaultConstraints": c}
    assert args_of("PodTopologySpread", {"defaultingType": "List"}) == {
        "defaultingType": "List", "defaultConstraints": []}
    assert default_args("PodTopologySpread") == {"defaultConstraints": [],
                                                 "defaultingType": "System"}


def test_args_with_type_meta_and_null_args() -> None:
    a = args_of("InterPodAffinity", {"apiVersion": API_VERSION, "kind": "InterPodAffinityArgs",
                                     "hardPodAffinityWeight": 3})
    assert a == {"hardPodAffinityWeight": 3, "ignorePreferredTermsOfExistingPods": False}
    assert args_of("InterPodAffinity", None)["hardPodAffinityWeight"] == 1
    err = error_for(with_args(("InterPodAffinity", {"kind": "NodeAffinityArgs"})))
    assert err.field == "profiles[0].pluginConfig[0].args.kind"


def test_out_of_tree_args_kept_as_given() -> None:
    a = args_of("MyPlugin", {"anything": {"goes": [1, 2]}})
    assert a == {"anything": {"goes": [1, 2]}}


def test_user_config_for_disabled_plugin_is_kept() -> None:
    d = with_args(("ImageLocality", {"x": 1}),
                  ("InterPodAffinity", {"hardPodAffinityWeight": 5}),
                  plugins={"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}})
    pc = load_config(d).profiles[0].plugin_config
    assert pc["InterPodAffinity"].hard_pod_affinity_weight == 5
    assert pc["ImageLocality"] == {"x": 1}
    assert list(pc)[:2] == ["ImageLocality", "InterPodAffinity"]  # user entries first


# ------------------------------------------------------------------ validation


ARGS = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(("name", "args", "path", "words"), [
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "MostAllocated",
                          "resources": [{"name": "cpu", "weight": 1},
                                        {"name": "memory", "weight": 101}]}},
     "scoringStrategy.resources[1].weight", ["resource weight of memory", "(0, 100]", "101"]),
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": -2}]}},
     "scoringStrategy.resources[0].weight", ["(0, 100]"]),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "Balanced"}}, "scoringStrategy.type",
     ['"LeastAllocated"', '"MostAllocated"', '"RequestedToCapacityRatio"', "Balanced"]),
    ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
     "scoringStrategy.type", ["supported values"]),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
     "scoringStrategy.requestedToCapacityRatio", ["must be specified"]),
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}},
     "scoringStrategy.requestedToCapacityRatio.shape", ["at least one point"]),
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
         "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]}}},
     "scoringStrategy.requestedToCapacityRatio.shape[1].utilization", ["increasing order"]),
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
         "shape": [{"utilization": 0, "score": 11}]}}},
     "scoringStrategy.requestedToCapacityRatio.shape[0].score", ["[0, 10]"]),
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
         "shape": [{"utilization": -1, "score": 1}]}}},
     "scoringStrategy.requestedToCapacityRatio.shape[0].utilization", ["[0, 100]"]),
    ("NodeResourcesFit",
     {"scoringStrategy": {"type": "MostAllocated", "requestedToCapacityRatio": {"shape": []}}},
     "scoringStrategy.requestedToCapacityRatio", ["must be nil"]),
    ("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/x"]}, "ignoredResourceGroups[0]",
     ["can't contain '/'"]),
    ("NodeResourcesFit", {"ignoredResources": ["bad name!"]}, "ignoredResources[0]",
     ["name part"]),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]},
     "resources[0].weight", ["must be 1"]),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
     "resources[1].name", ["duplicate"]),
    ("PodTopologySpread",
     {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                              "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultingType", ["when .defaultConstraints are not empty"]),
    ("PodTopologySpread", {"defaultingType": "Sometimes"}, "defaultingType", ['"System"']),
    ("PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].maxSkew", ["(0, inf)"]),
    ("PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].topologyKey", ["can not be empty"]),
    ("PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]},
     "defaultConstraints[0].whenUnsatisfiable", ['"DoNotSchedule"', '"ScheduleAnyway"']),
    ("PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
          "labelSelector": {"matchLabels": {"a": "b"}}}]},
     "defaultConstraints[0].labelSelector", ["must not define a selector"]),
    ("PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
         {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[1]", ["duplicate", "{zone, DoNotSchedule}"]),
    ("InterPodAffinity", {"hardPodAffinityWeight": 101}, "hardPodAffinityWeight",
     ["[0, 100]", "101"]),
    ("InterPodAffinity", {"hardPodAffinityWeight": -1}, "hardPodAffinityWeight", ["[0, 100]"]),
    ("DefaultPreemption", {"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage",
     ["[0, 100]"]),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute",
     ["[0, inf)"]),
    ("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "minCandidateNodesPercentage", ["cannot be zero at the same time"]),
    ("VolumeBinding", {"bindTimeoutSeconds": -1}, "bindTimeoutSeconds", ["negative"]),
    # StorageCapacityScoring is on in the default release (1.37); off, any shape is refused
    # (test_volume_capacity.py)
    ("VolumeBinding", {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
     "shape[1].utilization", ["sorted in increasing order"]),
    ("VolumeBinding", {"shape": [{"utilization": 0, "score": 11}]}, "shape[0].score",
     ["not in valid range [0, 10]"]),
    ("NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}]}}},
     "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].operator", ["not a valid selector operator"]),
    ("NodeAffinity",
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "In"}]}}]}},
     "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference"
     ".matchExpressions[0].values", ["can't be empty"]),
    ("NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}]}}},
     "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values[0]", ["must be an integer"]),
    ("NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}}},
     "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchFields[0].values", ["must have one element"]),
])
def test_args_validation(name: str, args: dict[str, Any], path: str, words: list[str]) -> None:
    err = error_for(with_args((name, args)))
    assert err.field == f"{ARGS}.{path}", str(err)
    text = str(err)
    assert f"field {ARGS}.{path}" in text and "cfg.yaml" in text
    for w in words:
        assert w in text, text


def test_error_path_uses_entry_index() -> None:
    err = error_for(with_args(
        ("InterPodAffinity", {"hardPodAffinityWeight": 2}),
        ("NodeResourcesFit", {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1000}]}})))
    assert err.field == "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight"
    assert "1000" in str(err)


def test_valid_node_affinity_args() -> None:
    aff = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In",
                               "values": ["linux"]},
                              {"key": "gpu", "operator": "Exists"},
                              {"key": "cores", "operator": "Gt", "values": ["4"]}],
         "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "preference": {"matchExpressions": [
                {"key": "zone", "operator": "NotIn", "values": ["a"]}]}}]}
    assert args_of("NodeAffinity", {"addedAffinity": aff}) == {"addedAffinity": aff}


def test_fit_args_not_validated_when_fit_not_enabled() -> None:
    # upstream validates NodeResourcesFitArgs only when building the plugin
    bad = {"scoringStrategy": {"type": "Nope"}}
    d = with_args(("NodeResourcesFit", bad),
                  plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}})
    cfg = load_config(d)
    assert cfg.profiles[0].plugin_config["NodeResourcesFit"].scoring_strategy.type == "Nope"
    d = with_args(("NodeResourcesFit", bad),
                  plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]},
                           "filter": {"enabled": [{"name": "NodeResourcesFit"}]}})
    assert error_for(d).field == f"{ARGS}.scoringStrategy.type"


def test_other_args_validated_even_when_plugin_disabled() -> None:
    d = with_args(("InterPodAffinity", {"hardPodAffinityWeight": 500}),
                  plugins={"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}})
    assert error_for(d).field == f"{ARGS}.hardPodAffinityWeight"


# ------------------------------------------------------------------ strict decoding of args


@pytest.mark.parametrize(("name", "args", "path"), [
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "foo": 1}},
     "scoringStrategy.foo"),
    ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "wieght": 2}]}},
     "scoringStrategy.resources[0].wieght"),
    ("NodeResourcesFit", {"ScoringStrategy": {}}, "ScoringStrategy"),
    ("PodTopologySpread", {"defaultConstraints": [{"maxSkew": 1, "topologykey": "z"}]},
     "defaultConstraints[0].topologykey"),
    ("DefaultPreemption", {"minCandidateNodes": 3}, "minCandidateNodes"),
    ("VolumeBinding", {"bindTimeout": 3}, "bindTimeout"),
])
def test_args_unknown_fields(name: str, args: dict[str, Any], path: str) -> None:
    err = error_for(with_args((name, args)))
    assert err.field == f"{ARGS}.{path}"
    assert "unknown field" in str(err)


@pytest.mark.parametrize(("name", "args", "path"), [
    ("InterPodAffinity", {"hardPodAffinityWeight": "high"}, "hardPodAffinityWeight"),
    ("NodeResourcesFit", {"scoringStrategy": {"resources": {"cpu": 1}}},
     "scoringStrategy.resources"),
    ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1.5}]}},
     "scoringStrategy.resources[0].weight"),
    ("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": "yes"},
     "ignorePreferredTermsOfExistingPods"),
])
def test_args_wrong_types(name: str, args: dict[str, Any], path: str) -> None:
    assert error_for(with_args((name, args))).field == f"{ARGS}.{path}"


def test_args_must_be_a_mapping() -> None:
    assert error_for(with_args(("MyPlugin", [1, 2]))).field == ARGS
    assert error_for(with_args(("InterPodAffinity", "w"))).field == ARGS


# ------------------------------------------------------------------ helpers


@pytest.mark.parametrize(("text", "seconds"), [
    ("15s", 15.0), ("1m30s", 90.0), ("500ms", 0.5), ("2h", 7200.0), ("0", 0.0), ("-1.5s", -1.5),
])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "15", "s", "1x", "1.s2"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)
