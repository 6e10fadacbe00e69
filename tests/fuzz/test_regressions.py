"""Inputs the fuzzer found (docs/fuzzing.md lists them), each as a plain test."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.cli import main
from kubesched.config import load_config
from kubesched.config.load import parse_yaml_documents
from kubesched.errors import InputError

CONFIG = "kubescheduler.config.k8s.io/v1"
NODE_AND_POD = ("apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
                "status: {capacity: {cpu: '2', memory: 4Gi, pods: '10'}}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                "spec: {containers: [{name: c}]}\n")


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


@pytest.mark.parametrize("where", [
    "metadata: {name: p, annotations: {1: x}}",
    "metadata: {name: p, labels: {1: x}}",
    "metadata: {name: p, labels: {true: x}}",
    "metadata: {name: p}\nspec: {nodeSelector: {1.5: x}, containers: [{name: c}]}",
])
def test_mapping_keys_that_are_numbers_or_booleans_become_strings(where: str) -> None:
    # was: AttributeError ('int' object has no attribute 'lower' / 'split') in validation;
    # kubectl's YAML → JSON makes such keys strings
    text = f"apiVersion: v1\nkind: Pod\n{where}\n"
    if "spec:" not in where:
        text += "spec: {containers: [{name: c}]}\n"
    pod = load_scenario_text(text).pods[0]
    keys = [*pod.metadata.annotations, *pod.metadata.labels, *pod.spec.node_selector]
    assert all(isinstance(k, str) for k in keys)
    assert set(keys) & {"1", "true", "1.5"}


def test_a_null_mapping_key_is_bad_input() -> None:
    err = _refused("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
                   "status: {capacity: {null: 1}}\n")
    assert "unsupported map key" in err.message and err.file == "f.yaml:4"


@pytest.mark.parametrize(("name", "detail"), [
    ("gpu", "must be a standard resource for containers"),
    ("requests.cpu", "must be a standard resource for containers"),
    ("requests.example.com/gpu", "doesn't follow extended resource name standard"),
])
def test_container_resource_names_as_the_api_server_checks_them(name: str, detail: str
                                                                 ) -> None:
    # was: accepted, the request counted against nothing (or an unknown resource)
    res = f"{{requests: {{{name}: 1}}, limits: {{{name}: 1}}}}"
    err = _refused("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: "
                   f"[{{name: c, resources: {res}}}]}}\n")
    assert err.field == f"spec.containers[0].resources.limits[{name}]"
    assert detail in err.message


@pytest.mark.parametrize(("field", "value", "bits"), [
    ("topologySpreadConstraints[0].minDomains", 10**11, 32),
    ("topologySpreadConstraints[0].maxSkew", 10**23, 32),
    ("terminationGracePeriodSeconds", 10**23, 64),
])
def test_integers_beyond_their_go_type_are_bad_input(field: str, value: int, bits: int) -> None:
    # was: accepted (the API server cannot even decode them)
    spread = ("topologySpreadConstraints: [{maxSkew: %s, topologyKey: k, minDomains: %s, "
              "whenUnsatisfiable: DoNotSchedule}], ")
    skew = value if field.endswith("maxSkew") else 1
    domains = value if field.endswith("minDomains") else 1
    grace = value if field.startswith("termination") else 30
    err = _refused("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {"
                   + spread % (skew, domains)
                   + f"terminationGracePeriodSeconds: {grace}, containers: [{{name: c}}]}}\n")
    assert err.field == f"spec.{field}"
    assert f"int{bits}" in err.message


def test_until_nan_is_bad_usage(tmp_path: Path) -> None:
    # was: accepted (FloatRange lets nan through) and meaning no bound at all
    scen = tmp_path / "s.yaml"
    scen.write_text(NODE_AND_POD)
    result = CliRunner().invoke(main, ["simulate", str(scen), "--until", "nan"])
    assert result.exit_code == 2
    assert "--until" in result.output


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_placements_write_that_fails_late_is_one_line_not_an_internal_error(
        tmp_path: Path) -> None:
    # was: "error: internal error: OSError ..." (a bug report asked for a full disk)
    scen = tmp_path / "s.yaml"
    scen.write_text(NODE_AND_POD)
    result = CliRunner().invoke(main, ["simulate", str(scen), "--placements", "/dev/full"])
    assert result.exit_code == 1
    assert "internal error" not in result.output
    assert "--placements /dev/full" in result.output


@pytest.mark.parametrize(("spec", "field"), [
    ("containers: [{name: c, ports: [null]}]", "spec.containers[0].ports[0].containerPort"),
    ("containers: [null]", "spec.containers[0].name"),
    ("containers: [{name: c}], tolerations: [null]", "spec.tolerations[0].operator"),
    ("containers: [{name: c}], topologySpreadConstraints: [null]",
     "spec.topologySpreadConstraints[0].maxSkew"),
    ("containers: [{name: c}], affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuring"
     "Execution: [{topologyKey: k, namespaces: [null]}]}}",
     "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
     ".namespaces[0]"),
])
def test_null_list_items_are_judged_as_the_zero_value_go_decodes(spec: str, field: str
                                                                   ) -> None:
    # was: AttributeError / TypeError in validation (None where a mapping or string was
    # expected); the API server decodes null into the zero value and validates that
    err = _refused(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{{spec}}}\n")
    assert err.field == field


def test_null_map_values_are_empty_strings() -> None:
    pod = load_scenario_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                             "spec: {nodeSelector: {disk: null}, containers: [{name: c}]}\n"
                             ).pods[0]
    assert pod.spec.node_selector == {"disk": ""}
