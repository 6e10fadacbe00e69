"""The API server's structural checks (api/schema.py): served apiVersions, JSON types,
unknown fields (a warning, an error when strict), registered kinds and fields."""

from __future__ import annotations

import pytest

from kubesched.api import schema
from kubesched.api.scenario import load_scenario_text
from kubesched.errors import InputError

POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: prod}
spec:
  nodeSelecter: {disk: ssd}
  containers: [{name: c, image: x, resourcez: {}}]
"""


def test_unknown_fields_warn_by_default_naming_each():
    sc = load_scenario_text(POD, "s.yaml")
    assert sc.warnings == [
        's.yaml: Pod prod/web: unknown field "spec.nodeSelecter", unknown field '
        '"spec.containers[0].resourcez" (ignored; --strict refuses it)']
    assert sc.pods[0].spec.node_selector == {}  # ignored, as the API server drops it


def test_unknown_fields_are_errors_when_strict():
    with pytest.raises(InputError) as ei:
        load_scenario_text(POD, "s.yaml", strict=True)
    assert str(ei.value) == (
        's.yaml: Pod prod/web: field spec.nodeSelecter: strict decoding error: unknown field '
        '"spec.nodeSelecter", unknown field "spec.containers[0].resourcez"')


@pytest.mark.parametrize("api_version, message", [
    (None, "field apiVersion: is required"),
    ("v2", "field apiVersion: Kubernetes 1.37 does not serve Pod at this apiVersion "
           "(served: v1) (value: 'v2')"),
    ("apps/v1", "does not serve Pod at this apiVersion"),
])
def test_api_version_must_be_served(api_version, message):
    text = POD.replace("apiVersion: v1\n", "" if api_version is None
                       else f"apiVersion: {api_version}\n")
    with pytest.raises(InputError, match=r"s\.yaml: Pod prod/web: ") as ei:
        load_scenario_text(text, "s.yaml")
    assert message in str(ei.value)


def test_served_versions_follow_the_release():
    # scheduling.k8s.io's Workload: v1alpha1 in 1.35, v1alpha2 in 1.36 (upstream's OpenAPI)
    assert "scheduling.k8s.io/v1alpha1" in schema.release_schema("1.35").served["Workload"]
    assert "scheduling.k8s.io/v1alpha1" not in schema.release_schema("1.36").served["Workload"]
    doc = ("apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\n"
           "metadata: {name: w}\nspec: {}\n")
    assert load_scenario_text(doc, release="1.35").objects["Workload"]  # read (GangScheduling)
    with pytest.raises(InputError, match=r"Kubernetes 1\.36 does not serve Workload"):
        load_scenario_text(doc, release="1.36")


@pytest.mark.parametrize("snippet, field, message", [
    ("  priority: high\n", "spec.priority", "must be an integer"),
    ("  hostNetwork: 'yes'\n", "spec.hostNetwork", "must be true or false"),
    ("  tolerations: {key: a}\n", "spec.tolerations", "must be a list"),
    ("  overhead: {cpu: [1]}\n", "spec.overhead[cpu]", "must be a number or a string"),
])
def test_wrong_json_types_are_errors(snippet, field, message):
    text = POD.replace("  nodeSelecter: {disk: ssd}\n", snippet)
    with pytest.raises(InputError) as ei:
        load_scenario_text(text, "s.yaml")
    assert ei.value.field == field and message in str(ei.value)


def test_kubesched_annotations_and_timestamps_are_not_unknown():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: "
            "2024-01-02T15:04:05Z, annotations: {kubesched.io/arrival: '3'}}\n"
            "spec: {containers: [{name: c, image: x}]}\n")
    assert load_scenario_text(text).warnings == []


def test_registered_kind_and_field(monkeypatch):
    monkeypatch.setattr(schema, "_REGISTERED_KINDS", {})
    monkeypatch.setattr(schema, "_REGISTERED_FIELDS", {})
    schema.register_kind("Widget", {"example.com/v1": {
        "type": "object", "additionalProperties": False,
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                       "metadata": {"type": "object"},
                       "spec": {"type": "object", "additionalProperties": False,
                                "properties": {"size": {"type": "integer"}}}}}})
    schema.register_field("Pod", "spec.widgetRef", {"type": "string"})
    try:
        s = schema.release_schema("1.35")
        ok = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {},
              "spec": {"size": 3, "colour": "red"}}
        assert schema.check_document(ok, s) == ["spec.colour"]
        with pytest.raises(InputError, match="must be an integer"):
            schema.check_document({**ok, "spec": {"size": "big"}}, s)
        with pytest.raises(InputError, match=r"served: example.com/v1"):
            schema.check_document({**ok, "apiVersion": "example.com/v2"}, s)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"widgetRef": "w", "containers": []}}
        assert schema.check_document(pod, s) == []
    finally:
        schema.release_schema.cache_clear()


def test_cli_strict_and_release(tmp_path):
    from click.testing import CliRunner

    from kubesched.cli import main

    scen = tmp_path / "s.yaml"
    scen.write_text(POD)
    res = CliRunner().invoke(main, ["simulate", str(scen), "--quiet"])
    assert res.exit_code == 0 and 'unknown field "spec.nodeSelecter"' in res.output
    res = CliRunner().invoke(main, ["simulate", str(scen), "--strict"])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {scen}: Pod prod/web: field spec.nodeSelecter: "
                                 "strict decoding error")
    res = CliRunner().invoke(main, ["explain", str(scen), "--pod", "prod/web", "--strict"])
    assert res.exit_code == 2 and "strict decoding error" in res.output
    wl = tmp_path / "w.yaml"
    wl.write_text("apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\n"
                  "metadata: {name: w}\n")
    res = CliRunner().invoke(main, ["simulate", str(wl), "--quiet", "--kubernetes-version",
                                    "1.37"])
    assert res.exit_code == 2 and "Kubernetes 1.37 does not serve Workload" in res.output
