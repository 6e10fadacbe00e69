"""expand_plugins: upstream's NewFramework / expandMultiPointPlugins / getScoreWeights."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import API_VERSION, KIND, default_config, expand_plugins, load_config
from kubesched.config.features import FeatureGates
from kubesched.errors import InputError

# Extension points each default plugin implements in v1.35 (reference/upstream.md §1.1).
IMPLEMENTS: dict[str, set[str]] = {
    "SchedulingGates": {"preEnqueue"},
    "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"},
    "NodeName": {"filter"},
    "TaintToleration": {"filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeBinding": {"preFilter", "filter", "reserve", "preBind", "preScore", "score"},
    "VolumeZone": {"preFilter", "filter"},
    "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
    "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
    "DynamicResources": {"preEnqueue", "preFilter", "filter", "postFilter", "preScore",
                         "score", "reserve", "preBind"},
    "DefaultPreemption": {"postFilter"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
    # test plugins
    "MyScore": {"score"},
    "MyFilterScore": {"filter", "score"},
    "OtherSort": {"queueSort"},
}

# Upstream v1.35's default profile (v1.36 on appends NodeDeclaredFeatures).
V135 = FeatureGates("1.35")



def implements(name: str, point: str) -> bool:
    return point in IMPLEMENTS.get(name, set())


def known(name: str) -> bool:
    return name in IMPLEMENTS


def cfg(**profile: Any):
    return load_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]},
                       features=V135)


def names(lst: list[tuple[str, int]]) -> list[str]:
    return [n for n, _ in lst]


def test_default_expansion_matches_upstream() -> None:
    e = expand_plugins(default_config(V135).profiles[0], implements, known=known)
    assert list(e) == ["preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
                       "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind"]
    assert names(e["preEnqueue"]) == ["SchedulingGates", "DynamicResources"]
    assert names(e["queueSort"]) == ["PrioritySort"]
    assert names(e["preFilter"]) == [
        "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
        "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
        "InterPodAffinity", "DynamicResources"]
    assert names(e["filter"]) == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
        "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]
    assert names(e["postFilter"]) == ["DynamicResources", "DefaultPreemption"]
    assert names(e["preScore"]) == [
        "TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources",
        "NodeResourcesBalancedAllocation"]
    assert e["score"] == [
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
        ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
        ("DynamicResources", 2), ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1)]
    assert names(e["reserve"]) == ["VolumeBinding", "DynamicResources"]
    assert names(e["preBind"]) == ["VolumeBinding", "DynamicResources"]
    assert names(e["bind"]) == ["DefaultBinder"]
    assert e["permit"] == [] and e["postBind"] == []
    assert all(w == 0 for p, lst in e.items() if p != "score" for _, w in lst)


def test_score_overrides_come_first_with_their_weights() -> None:
    # golden explain-config case-120000's plugins
    p = cfg(plugins={"score": {
        "enabled": [{"name": "InterPodAffinity", "weight": 8},
                    {"name": "NodeAffinity", "weight": 8}],
        "disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}).profiles[0]
    e = expand_plugins(p, implements)
    assert e["score"] == [
        ("InterPodAffinity", 8), ("NodeAffinity", 8), ("TaintToleration", 3),
        ("NodeResourcesFit", 1), ("VolumeBinding", 1), ("PodTopologySpread", 2),
        ("DynamicResources", 2), ("ImageLocality", 1)]
    # disabling at score leaves the other points alone
    assert "NodeResourcesBalancedAllocation" in names(e["preScore"])


def test_explicit_non_multipoint_plugins_go_last() -> None:
    p = cfg(plugins={"score": {"enabled": [{"name": "MyScore", "weight": 5},
                                           {"name": "ImageLocality", "weight": 4}]}}).profiles[0]
    e = expand_plugins(p, implements)
    assert e["score"][0] == ("ImageLocality", 4)
    assert e["score"][-1] == ("MyScore", 5)
    assert len(e["score"]) == 10


def test_disabled_star_skips_multipoint_expansion() -> None:
    p = cfg(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 5}],
                               "disabled": [{"name": "*"}]}}).profiles[0]
    e = expand_plugins(p, implements)
    assert e["score"] == [("ImageLocality", 5)]
    assert len(e["preScore"]) == 8 and len(e["filter"]) == 13

    p = cfg(plugins={"filter": {"disabled": [{"name": "*"}]}}).profiles[0]
    e = expand_plugins(p, implements)
    assert e["filter"] == []
    assert len(e["preFilter"]) == 10


def test_weight_zero_becomes_one_and_score_weight_beats_multipoint() -> None:
    p = cfg(plugins={
        "multiPoint": {"enabled": [{"name": "MyScore"}]},
        "score": {"enabled": [{"name": "TaintToleration", "weight": 0}]},
    }).profiles[0]
    e = dict(expand_plugins(p, implements)["score"])
    assert e["MyScore"] == 1
    assert e["TaintToleration"] == 1  # the score set's (0 → 1), not multiPoint's 3


def test_multipoint_weight_change_in_place() -> None:
    p = cfg(plugins={"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 6}]}})
    e = expand_plugins(p.profiles[0], implements)
    assert e["score"][2] == ("NodeResourcesFit", 6)


def test_disable_at_point_via_multipoint_only_plugin() -> None:
    p = cfg(plugins={"multiPoint": {"enabled": [{"name": "MyFilterScore", "weight": 2}]},
                     "filter": {"disabled": [{"name": "MyFilterScore"}]}}).profiles[0]
    e = expand_plugins(p, implements)
    assert "MyFilterScore" not in names(e["filter"])
    assert ("MyFilterScore", 2) in e["score"]


def test_duplicate_in_point_is_error() -> None:
    p = cfg(plugins={"score": {"enabled": [{"name": "MyScore"}, {"name": "MyScore"}]}})
    with pytest.raises(InputError, match='already registered as "ScorePlugin"') as ei:
        expand_plugins(p.profiles[0], implements)
    assert ei.value.field == "profiles[0].plugins.score.enabled[1]"


def test_duplicate_in_multipoint_is_error() -> None:
    p = cfg(plugins={"multiPoint": {"enabled": [{"name": "MyScore"}, {"name": "MyScore"}]}})
    with pytest.raises(InputError, match="already registered"):
        expand_plugins(p.profiles[0], implements)


def test_duplicate_in_multipoint_overridden_is_not_error() -> None:
    # upstream only notices multiPoint duplicates that it actually expands
    p = cfg(plugins={"multiPoint": {"enabled": [{"name": "MyScore"}, {"name": "MyScore"}]},
                     "score": {"enabled": [{"name": "MyScore"}]}})
    e = expand_plugins(p.profiles[0], implements)
    assert names(e["score"]).count("MyScore") == 1


def test_explicit_plugin_must_implement_point() -> None:
    p = cfg(plugins={"filter": {"enabled": [{"name": "ImageLocality"}]}})
    with pytest.raises(InputError, match="does not extend FilterPlugin"):
        expand_plugins(p.profiles[0], implements)


def test_unknown_plugin_with_known() -> None:
    p = cfg(plugins={"score": {"enabled": [{"name": "Nope"}]}})
    with pytest.raises(InputError, match='ScorePlugin "Nope" does not exist'):
        expand_plugins(p.profiles[0], implements, known=known)
    p = cfg(plugins={"multiPoint": {"enabled": [{"name": "Nope"}]}})
    with pytest.raises(InputError, match="does not exist"):
        expand_plugins(p.profiles[0], implements, known=known)


def test_queue_sort_and_bind_required() -> None:
    p = cfg(plugins={"multiPoint": {"disabled": [{"name": "PrioritySort"}]}}).profiles[0]
    with pytest.raises(InputError, match="only one queue sort plugin"):
        expand_plugins(p, implements)
    assert expand_plugins(p, implements, check_required=False)["queueSort"] == []
    p = cfg(plugins={"queueSort": {"enabled": [{"name": "OtherSort"}]}}).profiles[0]
    with pytest.raises(InputError, match="only one queue sort plugin"):
        expand_plugins(p, implements)
    p = cfg(plugins={"queueSort": {"enabled": [{"name": "OtherSort"}],
                                   "disabled": [{"name": "*"}]}}).profiles[0]
    assert expand_plugins(p, implements)["queueSort"] == [("OtherSort", 0)]
    p = cfg(plugins={"bind": {"disabled": [{"name": "*"}]}}).profiles[0]
    with pytest.raises(InputError, match="at least one bind plugin"):
        expand_plugins(p, implements)


def test_multipoint_star_disables_all_defaults() -> None:
    p = cfg(plugins={"multiPoint": {"disabled": [{"name": "*"}],
                                    "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                                {"name": "MyFilterScore", "weight": 3}]}})
    e = expand_plugins(p.profiles[0], implements)
    assert e["filter"] == [("MyFilterScore", 0)]
    assert e["score"] == [("MyFilterScore", 3)]
    assert e["preFilter"] == []
