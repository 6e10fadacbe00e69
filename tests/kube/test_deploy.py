"""deploy/: the manifests validate against Kubernetes' schemas (kubernetes-validate, offline,
strict), the ConfigMap's configuration loads, the Deployment's arguments are ``kubesched
run``'s, and the ClusterRole grants what kubesched uses and no more."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.backends.kube.resources import watched
from kubesched.releases import DEFAULT_VERSION

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MANIFESTS = ("rbac.yaml", "config.yaml", "deployment.yaml")
K8S_VERSION = "1.35.0"


def docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


@pytest.mark.parametrize("name", MANIFESTS)
def test_manifests_validate_against_kubernetes_schemas(name: str) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    for doc in docs(name):
        kv.validate(doc, K8S_VERSION, strict=True)  # raises ValidationError


def test_schema_validation_catches_mistakes() -> None:
    kv = pytest.importorskip("kubernetes_validate")
    dep = docs("deployment.yaml")[0]
    dep["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGett"] = {}
    with pytest.raises(kv.ValidationError):
        kv.validate(dep, K8S_VERSION, strict=True)


def test_configmap_holds_a_valid_configuration() -> None:
    from kubesched.config import load_config

    cm = docs("config.yaml")[0]
    conf = load_config(yaml.safe_load(cm["data"]["config.yaml"]), "deploy/config.yaml")
    assert [p.scheduler_name for p in conf.profiles] == ["kubesched"]
    le = conf.leader_election
    assert (le["resourceName"], le["resourceNamespace"], le["leaderElect"]) == (
        "kubesched", "kube-system", True)


def test_deployment_arguments_are_kubesched_run_options(tmp_path: Path) -> None:
    from kubesched.backends.kube.commands import run_command

    dep = docs("deployment.yaml")[0]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert c["args"][0] == "run"
    mount = next(m for m in c["volumeMounts"] if m["name"] == "config")["mountPath"]
    conf = tmp_path / "config.yaml"  # the ConfigMap as mounted
    conf.write_text(docs("config.yaml")[0]["data"]["config.yaml"])
    args = [a.replace(f"{mount}/config.yaml", str(conf)) for a in c["args"][1:]]
    assert args != c["args"][1:], "the config file is read from the mounted ConfigMap"
    ctx = run_command.make_context("run", args)
    assert ctx.params["config_path"] == str(conf)
    port = int(ctx.params["address"].rsplit(":", 1)[1])
    assert c["livenessProbe"]["httpGet"]["port"] == port
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["terminationGracePeriodSeconds"] > ctx.params["shutdown_timeout"]
    assert pod["serviceAccountName"] == "kubesched"
    assert dep["spec"]["replicas"] >= 2  # a warm standby behind the leader


def test_cluster_role_is_least_privilege() -> None:
    rules: dict[tuple[str, str], set[str]] = {}
    for d in docs("rbac.yaml"):
        if d["kind"] in ("ClusterRole", "Role"):
            for r in d["rules"]:
                for g in r["apiGroups"]:
                    for res in r["resources"]:
                        rules.setdefault((g, res), set()).update(r["verbs"])
                assert "*" not in r["verbs"] and "*" not in r["resources"]
    for spec in watched(DEFAULT_VERSION):
        assert {"list", "watch"} <= rules[(spec.group, spec.plural)], spec.plural
    assert rules[("", "pods/binding")] == {"create"}
    assert rules[("", "pods/status")] == {"patch"}
    assert rules[("events.k8s.io", "events")] == {"create", "patch"}
    assert rules[("coordination.k8s.io", "leases")] == {"create", "get", "update"}
    assert rules[("resource.k8s.io", "resourceclaims")] == {
        "list", "watch", "get", "create", "update", "delete"}
    writes = {k for k, v in rules.items() if v - {"get", "list", "watch"}}
    assert writes == {("", "pods"), ("", "pods/binding"), ("", "pods/status"),
                      ("", "persistentvolumes"), ("", "persistentvolumeclaims"),
                      ("events.k8s.io", "events"), ("coordination.k8s.io", "leases"),
                      ("resource.k8s.io", "resourceclaims"),
                      ("resource.k8s.io", "resourceclaims/status")}
    assert not any(g == "" and r == "secrets" for g, r in rules)


def test_dockerfile_is_minimal_and_says_it_is_not_built_here() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert text.count("FROM ") == 1 and "USER 65532" in text
    assert "not built" in text
