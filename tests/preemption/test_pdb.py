"""PodDisruptionBudget: parsing and validation, disruptionsAllowed as the disruption
controller computes it, and DefaultPreemption's filterPodsWithPDBViolation."""

from __future__ import annotations

import pytest
from _preempt_util import make_pdb, make_pod

from kubesched.api.policy import (
    compute_disruptions_allowed,
    parse_pod_disruption_budget,
    scaled_value,
)
from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import GenericObject, ObjectMeta, PodCondition
from kubesched.errors import InputError
from kubesched.preemption import filter_pods_with_pdb_violation, pdb_views


def pdb(spec: dict, status: dict | None = None, name: str = "p"):
    d = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": name}, "spec": spec}
    if status is not None:
        d["status"] = status
    return parse_pod_disruption_budget(d)


def running(name: str, labels: dict[str, str], *, owner: str = "", ns: str = "default",
            ready: str | None = None, terminating: bool = False):
    p = make_pod(name, node="n1", labels=labels, namespace=ns, terminating=terminating)
    p.status.phase = "Running"
    if owner:
        from kubesched.api.types import OwnerReference

        p.metadata.owner_references = [OwnerReference("ReplicaSet", owner, "", True)]
    if ready is not None:
        p.status.conditions = [PodCondition("Ready", ready)]
    return p


def rs(name: str, replicas: int | None, deployment: bool = False) -> GenericObject:
    raw: dict = {"metadata": {"name": name}, "spec": {}}
    if replicas is not None:
        raw["spec"]["replicas"] = replicas
    if deployment:
        raw["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "d",
                                               "controller": True}]
    return GenericObject("ReplicaSet", ObjectMeta(name=name, namespace="default",
                                                  uid=f"default/{name}"), raw)


APP = {"app": "db"}


def test_parse_fields_and_given_status() -> None:
    b = pdb({"minAvailable": "50%", "selector": {"matchLabels": APP}},
            {"disruptionsAllowed": 3, "disruptedPods": {"x": "2024-01-01T00:00:00Z"}})
    assert (b.namespace, b.min_available, b.max_unavailable) == ("default", "50%", None)
    assert b.status.disruptions_allowed == 3 and set(b.status.disrupted_pods) == {"x"}
    assert b.disruptions_allowed([]) == 3  # given: used as is
    assert pdb({"maxUnavailable": 1}).status.disruptions_allowed is None


@pytest.mark.parametrize(("spec", "field"), [
    ({"minAvailable": 1, "maxUnavailable": 1}, "spec"),
    ({"minAvailable": -1}, "spec.minAvailable"),
    ({"maxUnavailable": "150%"}, "spec.maxUnavailable"),
    ({"maxUnavailable": "ten"}, "spec.maxUnavailable"),
    ({"minAvailable": True}, "spec.minAvailable"),
    ({"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
     "spec.selector.matchExpressions[0].values"),
])
def test_parse_rejects_bad_specs(spec: dict, field: str) -> None:
    with pytest.raises(InputError) as ei:
        pdb(spec)
    assert ei.value.field == field
    assert "PodDisruptionBudget default/p" in str(ei.value)


def test_scenario_holds_typed_pdbs() -> None:
    sc = load_scenario_text("""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: shop}
spec: {maxUnavailable: "25%", selector: {matchLabels: {app: db}}}
""")
    (b,) = sc.objects["PodDisruptionBudget"]
    assert (b.namespace, b.name, b.max_unavailable) == ("shop", "db", "25%")
    assert "shop" in sc.namespaces


@pytest.mark.parametrize(("v", "total", "up", "want"), [
    (3, 10, True, 3), ("50%", 5, True, 3), ("50%", 5, False, 2), ("0%", 7, True, 0),
    ("100%", 7, True, 7), ("33%", 10, True, 4)])
def test_scaled_value(v, total, up, want) -> None:
    assert scaled_value(v, total, up) == want


def test_min_available_int_counts_healthy_pods() -> None:
    pods = [running(f"db-{i}", APP) for i in range(4)] + [running("web", {"app": "web"})]
    assert compute_disruptions_allowed(pdb({"minAvailable": 2, "selector": {"matchLabels": APP}}),
                                       pods, {}) == 2
    # terminating, unready and recently disrupted pods are not healthy
    pods[0] = running("db-0", APP, terminating=True)
    pods[1] = running("db-1", APP, ready="False")
    b = pdb({"minAvailable": 1, "selector": {"matchLabels": APP}},
            {"disruptedPods": {"db-2": "2024-01-01T00:00:00Z"}})
    assert compute_disruptions_allowed(b, pods, {}) == 0
    assert b.disruptions_allowed(pods) == 0
    # other namespaces do not count; no matching pod at all: nothing allowed
    other = [running(f"x-{i}", APP, ns="other") for i in range(3)]
    assert compute_disruptions_allowed(pdb({"minAvailable": 0, "selector": {"matchLabels": APP}}),
                                       other, {}) == 0


def test_percentages_and_max_unavailable_use_the_controllers_scale() -> None:
    pods = [running(f"db-{i}", APP, owner="db") for i in range(3)]
    objects = {"ReplicaSet": [rs("db", 4)]}
    sel = {"matchLabels": APP}
    # expected 4 (the ReplicaSet's replicas), healthy 3
    assert compute_disruptions_allowed(pdb({"maxUnavailable": 1, "selector": sel}), pods,
                                       objects) == 0  # desired 3
    assert compute_disruptions_allowed(pdb({"maxUnavailable": "50%", "selector": sel}), pods,
                                       objects) == 1  # desired 4-2
    assert compute_disruptions_allowed(pdb({"minAvailable": "50%", "selector": sel}), pods,
                                       objects) == 1  # desired 2
    # a controller that cannot be found (a Deployment's ReplicaSet without its Deployment
    # among the objects, too): fail-safe, 0
    assert compute_disruptions_allowed(pdb({"maxUnavailable": 3, "selector": sel}), pods,
                                       {}) == 0
    assert compute_disruptions_allowed(pdb({"maxUnavailable": 3, "selector": sel}), pods,
                                       {"ReplicaSet": [rs("db", 4, deployment=True)]}) == 0
    # with the Deployment: its replicas are the expected scale (getPodDeployment)
    deploy = GenericObject("Deployment", ObjectMeta(name="d", namespace="default",
                                                    uid="default/d"), {"spec": {"replicas": 5}})
    objs = {"ReplicaSet": [rs("db", 4, deployment=True)], "Deployment": [deploy]}
    assert compute_disruptions_allowed(pdb({"maxUnavailable": 3, "selector": sel}), pods,
                                       objs) == 1  # expected 5, desired 2, healthy 3
    # unmanaged pods count for nothing in the expected scale
    bare = [running(f"b-{i}", APP) for i in range(3)]
    assert compute_disruptions_allowed(pdb({"maxUnavailable": 1, "selector": sel}), bare,
                                       {}) == 0


def test_nil_selector_selects_nothing_empty_selects_all() -> None:
    pods = [running(f"db-{i}", APP) for i in range(3)]
    assert compute_disruptions_allowed(pdb({"minAvailable": 1}), pods, {}) == 0
    assert compute_disruptions_allowed(pdb({"minAvailable": 1, "selector": {}}), pods, {}) == 2


# ---------------------------------------------------------------- filterPodsWithPDBViolation


def _names(pods):
    return [p.name for p in pods]


def test_filter_pods_with_pdb_violation_counts_down_in_order() -> None:
    pods = [make_pod(f"p{i}", labels=APP) for i in range(4)] + [make_pod("plain")]
    views = pdb_views([make_pdb(APP, 2)], lambda: [])
    viol, ok = filter_pods_with_pdb_violation(pods, views)
    assert _names(viol) == ["p2", "p3"]
    assert _names(ok) == ["p0", "p1", "plain"]


def test_filter_pods_with_pdb_violation_rules() -> None:
    pods = [make_pod("a", labels=APP), make_pod("b", labels=APP, namespace="other"),
            make_pod("c", labels={"app": "x"}), make_pod("d")]
    # empty and nil selectors match nothing; other namespaces and labels do not count
    views = pdb_views([make_pdb({}, 0, name="empty"), make_pdb(None, 0, name="nil"),
                       make_pdb(APP, 0, name="db")], lambda: [])
    viol, ok = filter_pods_with_pdb_violation(pods, views)
    assert _names(viol) == ["a"] and _names(ok) == ["b", "c", "d"]
    # a pod already in disruptedPods is not counted again
    views = pdb_views([make_pdb(APP, 0, disrupted=("a",))], lambda: [])
    assert filter_pods_with_pdb_violation(pods, views)[0] == []
    # two budgets: violating either one is enough
    views = pdb_views([make_pdb(APP, 5, name="wide"), make_pdb({"app": "db"}, 0, name="tight")],
                      lambda: [])
    assert _names(filter_pods_with_pdb_violation(pods, views)[0]) == ["a"]


def test_pdb_views_compute_missing_status_from_the_pods() -> None:
    pods = [running(f"db-{i}", APP) for i in range(3)]
    calls = []

    def all_pods():
        calls.append(1)
        return pods

    given = make_pdb(APP, 7)
    computed = pdb({"minAvailable": 1, "selector": {"matchLabels": APP}})
    views = pdb_views([given, computed], all_pods)
    assert [v.disruptions_allowed for v in views] == [7, 2]
    assert len(calls) == 1
    assert pdb_views([given], all_pods)[0].disruptions_allowed == 7 and len(calls) == 1


def test_evaluator_reads_raw_pdbs_too() -> None:
    """A backend that keeps PodDisruptionBudgets raw still has them honoured."""
    from _preempt_util import VERY_LARGE, build, make_node

    raw = {"metadata": {"name": "db"}, "spec": {"selector": {"matchLabels": APP}},
           "status": {"disruptionsAllowed": 4}}
    env = build([], [make_node("n1", VERY_LARGE)], [])
    env.handle.objects["PodDisruptionBudget"] = [
        GenericObject("PodDisruptionBudget", ObjectMeta(name="db", namespace="default"), raw),
        GenericObject("PodDisruptionBudget", ObjectMeta(name="bad", namespace="default"),
                      {"metadata": {}})]
    (view,) = env.evaluator.pdbs()
    assert (view.namespace, view.disruptions_allowed) == ("default", 4)
