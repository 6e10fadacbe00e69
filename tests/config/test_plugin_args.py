"""The in-tree plugins' typed args: built once in config (defaults stated by the dataclasses
and SetDefaults' rules), handed to the plugins, read as attributes."""

from __future__ import annotations

import pytest

from kubesched.config import default_config, load_config
from kubesched.config.features import FeatureGates
from kubesched.config.plugin_args import (
    ARGS_TYPES,
    DefaultPreemptionArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    VolumeBindingArgs,
    args_to_dict,
    build_args,
    typed_args,
)
from kubesched.config.types import API_VERSION, KIND
from kubesched.framework.handle import Handle
from kubesched.framework.runtime import Framework
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.registry import in_tree_registry


@pytest.mark.parametrize("plugin", sorted(ARGS_TYPES))
def test_built_args_survive_their_document(plugin: str) -> None:
    """What validation reads (the camelCase document) builds the same args again."""
    for version in ("1.35", "1.37"):
        gates = FeatureGates(version)
        built = build_args(plugin, {}, gates)
        assert isinstance(built, ARGS_TYPES[plugin])
        assert build_args(plugin, args_to_dict(built), gates) == built


def test_the_profile_hands_plugins_their_dataclass() -> None:
    cfg = load_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [{
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "ignoredResources": ["example.com/foo"],
            "scoringStrategy": {"type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 0}]}}}]}]})
    fwk = Framework(cfg.profiles[0], in_tree_registry(), Handle())
    fit = next(p for p in fwk.filter if p.name == "NodeResourcesFit")
    assert isinstance(fit.args, NodeResourcesFitArgs)
    assert fit.ignored_resources == frozenset({"example.com/foo"})
    assert fit.strategy_type == "MostAllocated"
    assert fit.resources == (ResourceSpec("cpu", 1),)  # a zero weight defaults to 1
    preemption = next(p for p in fwk.post_filter if p.name == "DefaultPreemption")
    assert preemption.args == DefaultPreemptionArgs(10, 100)


def test_a_plugin_built_from_a_document_takes_it_as_given() -> None:
    """Outside a profile (upstream's plugin tests) no SetDefaults rule applies: an empty
    resource list stays empty (the plugin then fails as upstream's New does)."""
    fit = Fit({"scoringStrategy": {"type": "LeastAllocated", "resources": []}}, Handle())
    assert fit.resources == ()
    assert Fit(None, Handle()).resources == (ResourceSpec("cpu"), ResourceSpec("memory"))
    gated = FeatureGates("1.37")
    assert build_args("VolumeBinding", {}, gated).shape  # the gate's default shape
    assert build_args("VolumeBinding", {}, gated, defaulting=False) == VolumeBindingArgs()


def test_args_of_another_kind_are_refused() -> None:
    with pytest.raises(TypeError, match="DefaultPreemption args must be DefaultPreemptionArgs"):
        DefaultPreemption(VolumeBindingArgs(), Handle())
    assert typed_args(VolumeBindingArgs, None, None) == VolumeBindingArgs()


def test_the_default_profile_states_each_default_once() -> None:
    pc = default_config().profiles[0].plugin_config
    assert pc["DefaultPreemption"] == DefaultPreemptionArgs()
    assert pc["NodeResourcesFit"] == NodeResourcesFitArgs()
