"""Inputs the fuzzer found (docs/fuzzing.md lists them), each as a plain test."""

from __future__ import annotations

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import load_config
from kubesched.config.load import parse_yaml_documents
from kubesched.errors import InputError

CONFIG = "kubescheduler.config.k8s.io/v1"


def _refused(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        load_scenario_text(text, "f.yaml")
    assert "\n" not in str(info.value)
    return info.value


def test_api_version_of_a_known_kind_that_is_not_a_string() -> None:
    # was: TypeError (unhashable list) looking the apiVersion up among the served ones
    err = _refused("apiVersion: [v1]\nkind: Namespace\nmetadata: {name: x}\n")
    assert err.field == "apiVersion"
    err = _refused("apiVersion: {v: 1}\nkind: Pod\nmetadata: {name: x}\n")
    assert err.field == "apiVersion"


@pytest.mark.parametrize("text", ["\x08", "kind: Pod\nmetadata: {name: \x07}\n", "a: \ufffe"])
def test_a_character_yaml_refuses_is_one_line(text: str) -> None:
    # was: PyYAML's two-line ReaderError text in the message
    err = _refused(text)
    assert "unacceptable character" in err.message
    with pytest.raises(InputError) as info:
        parse_yaml_documents(text, "c.yaml")
    assert "\n" not in str(info.value)


def test_a_plugin_no_registry_has_is_refused_with_its_field() -> None:
    # was: 'profile default-scheduler: plugin "Nope" does not exist', no file nor field
    config = load_config({"apiVersion": CONFIG, "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                              "preEnqueue": {"enabled": [{"name": "Nope"}]}}}]}, "c.yaml")
    with pytest.raises(InputError) as info:
        SimCluster(load_scenario_text(""), config)
    assert info.value.field == "profiles[0].plugins.preEnqueue.enabled[0]"
    assert info.value.file == "c.yaml"
