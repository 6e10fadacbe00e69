"""The API server's validation, applied at load (issue 14): each object a cluster refuses is
bad input, named by file, object, field path (upstream's format) and value."""

from __future__ import annotations

import pytest
import yaml

from kubesched.api.scenario import load_scenario_text
from kubesched.errors import InputError

BASE_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}


def pod_with(**spec) -> str:
    doc = yaml.safe_load(yaml.safe_dump(BASE_POD))
    doc["spec"].update(spec)
    return yaml.safe_dump(doc)


def error_of(text: str) -> InputError:
    with pytest.raises(InputError) as ei:
        load_scenario_text(text, "s.yaml")
    return ei.value


SPREAD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
          "labelSelector": {"matchLabels": {"app": "web"}}}


@pytest.mark.parametrize("spec, field, message", [
    ({"topologySpreadConstraints": [SPREAD, {**SPREAD, "maxSkew": 2}]},
     "spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}",
     "Duplicate value (value: '{zone, DoNotSchedule}')"),
    ({"topologySpreadConstraints": [{**SPREAD, "topologyKey": ""}]},
     "spec.topologySpreadConstraints[0].topologyKey", "Required value: can not be empty"),
    ({"topologySpreadConstraints": [{**SPREAD, "whenUnsatisfiable": "Maybe"}]},
     "spec.topologySpreadConstraints[0].whenUnsatisfiable",
     'Unsupported value: supported values: "DoNotSchedule", "ScheduleAnyway"'),
    ({"topologySpreadConstraints": [{**SPREAD, "matchLabelKeys": ["app"]}]},
     "spec.topologySpreadConstraints[0].matchLabelKeys[0]",
     "exists in both matchLabelKeys and labelSelector"),
    ({"containers": []}, "spec.containers", "Required value"),
    ({"containers": [{"name": "c"}, {"name": "c"}]}, "spec.containers[1].name",
     "Duplicate value"),
    ({"containers": [{"name": "Web_1"}]}, "spec.containers[0].name",
     "a lowercase RFC 1123 label must consist of"),
    ({"nodeSelector": {"-bad": "x"}}, "spec.nodeSelector",
     "name part must consist of alphanumeric characters"),
    ({"nodeSelector": {"disk": "s s d"}}, "spec.nodeSelector[disk]",
     "a valid label must be an empty string or consist of"),
    ({"priority": 2**31}, "spec.priority",
     "cannot unmarshal number 2147483648 into a field of type int32"),
    ({"tolerations": [{"key": "a", "operator": "Equal", "effect": "NoSchedule",
                       "tolerationSeconds": 5}]},
     "spec.tolerations[0].effect", "effect must be 'NoExecute' when `tolerationSeconds`"),
    ({"tolerations": [{"key": "a", "operator": "Above"}]}, "spec.tolerations[0].operator",
     "Unsupported value"),
    ({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}}]}}},
     "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
     ".topologyKey", "Required value: can not be empty"),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a b", "operator": "In",
                                                     "values": ["x"]}]}]}}}},
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].key", "name part must consist"),
    ({"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]},
     "spec.containers[0].resources.limits",
     "Forbidden: Limit must be set for non overcommitable resources"),
    ({"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "500m"},
                                                 "limits": {"example.com/gpu": "500m"}}}]},
     "spec.containers[0].resources.limits[example.com/gpu]", "must be an integer"),
    ({"schedulingGates": [{"name": "a.io/x"}, {"name": "a.io/x"}]},
     "spec.schedulingGates[1].name", "Duplicate value"),
    ({"volumes": [{"name": "v", "persistentVolumeClaim": {}}]},
     "spec.volumes[0].persistentVolumeClaim.claimName", "Required value"),
    ({"resourceClaims": [{"name": "gpu"}]}, "spec.resourceClaims[0]",
     "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"),
])
def test_pod_refused(spec, field, message):
    err = error_of(pod_with(**spec))
    assert err.file == "s.yaml" and err.obj == "Pod prod/web"
    assert err.field == field
    assert message in str(err)


@pytest.mark.parametrize("meta, field, message", [
    ({"name": "Web"}, "metadata.name", "a lowercase RFC 1123 subdomain"),
    ({"name": "web", "namespace": "Prod"}, "metadata.namespace", "RFC 1123 label"),
    ({"name": "web", "labels": {"app": "-x"}}, "metadata.labels[app]", "a valid label"),
    ({"name": "web", "labels": {"a/b/c": "x"}}, "metadata.labels",
     "a qualified name must consist of"),
    ({"name": "web", "annotations": {"bad key": "x"}}, "metadata.annotations",
     "name part must consist"),
])
def test_metadata_refused(meta, field, message):
    doc = dict(BASE_POD, metadata=meta)
    err = error_of(yaml.safe_dump(doc))
    assert err.field == field and message in str(err)


def test_matchlabelkeys_key_in_selector_is_fine_when_the_pod_lacks_that_label():
    # the API server merges only the keys the pod carries; nothing is duplicated then
    spec = {"topologySpreadConstraints": [{**SPREAD, "labelSelector": {
        "matchLabels": {"tier": "x"}}, "matchLabelKeys": ["tier"]}]}
    assert load_scenario_text(pod_with(**spec)).pods[0].name == "web"


@pytest.mark.parametrize("doc, field, message", [
    ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\n"
     "value: 1000000001\n", "value",
     "Forbidden: maximum allowed value of a user defined priority is 1000000000"),
    ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-x}\n"
     "value: 5\n", "metadata.name", "reserved for system use only"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: "
     "[{key: a, effect: Never}]}\n", "spec.taints[0].effect", "Unsupported value"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: [{key: a, effect: "
     "NoSchedule}, {key: a, value: b, effect: NoSchedule}]}\n", "spec.taints[1]",
     "Duplicate value"),
    ("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  replicas: -1\n"
     "  selector: {matchLabels: {app: web}}\n  template: {metadata: {labels: {app: web}}, "
     "spec: {containers: [{name: c}]}}\n", "spec.replicas",
     "must be greater than or equal to 0"),
    ("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  replicas: 1\n"
     "  selector: {matchLabels: {app: db}}\n  template: {metadata: {labels: {app: web}}, "
     "spec: {containers: [{name: c}]}}\n", "spec.template.metadata.labels",
     "`selector` does not match template `labels`"),
    ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: ss}\nspec:\n"
     "  selector: {matchLabels: {app: web}}\n  template: {metadata: {labels: {app: web}}, "
     "spec: {containers: []}}\n", "spec.template.spec.containers", "Required value"),
    ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\n"
     "spec: {minAvailable: 1, maxUnavailable: 1}\n", "spec",
     "minAvailable and maxUnavailable cannot be both set"),
])
def test_other_kinds_refused(doc, field, message):
    err = error_of(doc)
    assert err.field == field and message in str(err)


def test_validation_off_keeps_objects_with_a_warning():
    text = pod_with(topologySpreadConstraints=[SPREAD, SPREAD])
    sc = load_scenario_text(text, "s.yaml", validate=False)
    assert len(sc.pods) == 1
    (w,) = sc.warnings
    assert "Duplicate value" in w and w.endswith("(the API server would refuse it; kept)")


def test_pod_on_a_missing_node_is_reported_not_dropped():
    from kubesched.backends.sim.cluster import SimCluster

    text = pod_with(nodeName="n9")
    sc = load_scenario_text(text, "s.yaml")
    assert sc.missing_node_pods == {"prod/web": "n9"}
    assert any("names no Node" in w for w in sc.warnings)
    assert SimCluster(sc).run().missing_node_pods == {"prod/web": "n9"}


def test_controller_without_its_pods_loads_without_warning():
    # the simulator's controllers create its pods (tests/e2e/test_workloads.py)
    doc = ("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  replicas: 3\n"
           "  selector: {matchLabels: {app: web}}\n  template: {metadata: {labels: {app: web}}, "
           "spec: {containers: [{name: c}]}}\n")
    assert load_scenario_text(doc).warnings == []
