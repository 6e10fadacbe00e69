"""The invariant checker (``simulate --check``) catches a scheduler that misbehaves: each
rule is broken on purpose by a profile with the Filter plugin that enforces it disabled (or
a plugin that lets everything through), and the checker must name exactly that pod, node and
rule; near misses that upstream allows must pass."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim import invariants as inv
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.invariants import InvariantViolation
from kubesched.cli import main
from kubesched.config import load_config
from kubesched.framework.interface import BatchStatus
from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.registry import in_tree_registry

ZONE = "topology.kubernetes.io/zone"


def node(name: str, *, zone: str | None = None, cpu: str = "4", pods: int = 110,
         labels: dict[str, str] | None = None, spec: str = "", extra: str = "") -> str:
    lab = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone is not None:
        lab[ZONE] = zone
    return (f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {lab}}}\n"
            f"spec: {{{spec}}}\n"
            f"status: {{capacity: {{cpu: '{cpu}', memory: 8Gi, pods: '{pods}'{extra}}}}}\n")


def pod(name: str, *, cpu: str = "100m", ns: str = "default", on: str = "",
        labels: dict[str, str] | None = None, spec: str = "", requests: str = "",
        ports: str = "") -> str:
    head = f"  nodeName: {on}\n" if on else ""
    port_text = f", ports: [{ports}]" if ports else ""
    extended = [r for r in requests.split(",") if "example.com/" in r]
    # extended resources cannot be overcommitted: the API server wants limit = request
    limits = f", limits: {{{', '.join(r.strip() for r in extended)}}}" if extended else ""
    return (f"---\napiVersion: v1\nkind: Pod\n"
            f"metadata: {{name: {name}, namespace: {ns}, labels: {labels or {}}}}\n"
            f"spec:\n{head}{spec}"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'{requests}}}"
            f"{limits}}}{port_text}}}]\n")


def namespace(name: str, labels: dict[str, str]) -> str:
    return f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {labels}}}\n"


def prefer_zone(zone: str) -> str:
    """Preferred node affinity strong enough to pull pods into ``zone`` (an ``affinity``
    part: see ``affinity_spec``)."""
    return ("    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
            f"      - weight: 100\n        preference: {{matchExpressions: [{{key: {ZONE}, "
            f"operator: In, values: [{zone}]}}]}}\n")


def affinity_spec(*parts: str) -> str:
    return "  affinity:\n" + "".join(parts)


TO_A = affinity_spec(prefer_zone("a"))
TO_B = affinity_spec(prefer_zone("b"))


def without(*filters: str) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                "filter": {"disabled": [{"name": f} for f in filters]}}}]}


def run(text: str, *filters: str, registry: dict | None = None) -> SimCluster:
    config = load_config(without(*filters), "<test>") if filters else None
    sim = SimCluster(load_scenario_text(text, "t.yaml"), config, registry=registry, check=True)
    sim.run()
    return sim


def violation(text: str, *filters: str, registry: dict | None = None) -> InvariantViolation:
    with pytest.raises(InvariantViolation) as err:
        run(text, *filters, registry=registry)
    return err.value


def assert_violation(v: InvariantViolation, pod_key: str, node_name: str, rule: str) -> None:
    assert (v.pod, v.node, v.rule) == (pod_key, node_name, rule), str(v)
    assert str(v).startswith(f"invariant violated: pod {pod_key} on node {node_name}: ")


# ---------------------------------------------------------------- room on the node


def test_cpu_overcommit_is_reported_before_the_simulator_refuses_it() -> None:
    text = node("n1") + pod("a", cpu="3") + pod("b", cpu="1100m")
    v = violation(text, "NodeResourcesFit")
    assert_violation(v, "default/b", "n1", inv.RESOURCES)
    assert str(v) == ("invariant violated: pod default/b on node n1: insufficient cpu "
                      "(requested 4100m of 4000m)")


class _FitThatFitsEverything(Fit):
    """NodeResourcesFit whose Filter lets every node through (both forms)."""

    def filter(self, state, pod, node_info):  # type: ignore[no-untyped-def]
        return None

    def filter_batch(self, state, pod, snapshot, idx):  # type: ignore[no-untyped-def]
        return BatchStatus.success(len(idx))


def test_extended_resource_overcommit_with_a_fit_plugin_that_always_passes() -> None:
    gpu = ", example.com/gpu: '1'"
    text = (node("n1", extra=", example.com/gpu: '2'")
            + pod("a", requests=gpu) + pod("b", requests=gpu) + pod("c", requests=gpu))
    registry = {**in_tree_registry(), Fit.name: _FitThatFitsEverything}
    v = violation(text, registry=registry)
    assert_violation(v, "default/c", "n1", inv.RESOURCES)
    assert v.detail == "insufficient example.com/gpu (requested 3 of 2)"


def test_pod_count() -> None:
    v = violation(node("n1", pods=2) + pod("a") + pod("b") + pod("c"), "NodeResourcesFit")
    assert_violation(v, "default/c", "n1", inv.POD_COUNT)
    assert v.detail == "too many pods (3 of 2)"


def test_a_node_overcommitted_at_load_still_takes_pods_that_ask_none_of_it() -> None:
    # upstream's Fit checks only what the pod requests; so does the checker
    text = node("n1") + pod("big", cpu="5", on="n1") + pod("zero", cpu="0")
    sim = run(text)
    assert sim.records["default/zero"].node == "n1"


def test_host_port_conflict_wildcard_against_a_specific_ip() -> None:
    text = (node("n1") + pod("a", ports="{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}")
            + pod("b", ports="{containerPort: 80, hostPort: 8080}"))
    v = violation(text, "NodePorts")
    assert_violation(v, "default/b", "n1", inv.HOST_PORTS)
    assert "conflicts with 10.0.0.1:8080/TCP of pod default/a" in v.detail


def test_host_ports_on_other_ips_or_protocols_do_not_conflict() -> None:
    text = (node("n1")
            + pod("a", ports="{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}")
            + pod("b", ports="{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.2}")
            + pod("c", ports="{containerPort: 80, hostPort: 8080, protocol: UDP}"))
    sim = run(text)
    assert all(r.node == "n1" for r in sim.records.values())


# ---------------------------------------------------------------- the node itself


def test_node_selector() -> None:
    text = node("n1", labels={"disk": "hdd"}) + pod("a", spec="  nodeSelector: {disk: ssd}\n")
    assert_violation(violation(text, "NodeAffinity"), "default/a", "n1", inv.NODE_SELECTOR)


def test_required_node_affinity() -> None:
    spec = ("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:"
            "\n        nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, "
            "values: [ssd]}]}]\n")
    text = node("n1", labels={"disk": "hdd"}) + pod("a", spec=spec)
    assert_violation(violation(text, "NodeAffinity"), "default/a", "n1", inv.NODE_AFFINITY)


def test_untolerated_taint() -> None:
    text = (node("n1", spec="taints: [{key: dedicated, value: gpu, effect: NoExecute}]")
            + pod("a", spec="  tolerations: [{key: dedicated, value: cpu}]\n"))
    v = violation(text, "TaintToleration")
    assert_violation(v, "default/a", "n1", inv.TAINTS)
    assert v.detail == "untolerated taint dedicated=gpu:NoExecute"


def test_unschedulable_node() -> None:
    text = node("n1", spec="unschedulable: true") + pod("a")
    assert_violation(violation(text, "NodeUnschedulable"), "default/a", "n1",
                     inv.UNSCHEDULABLE)


def test_unschedulable_node_tolerated_by_its_toleration() -> None:
    tol = "  tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists}]\n"
    sim = run(node("n1", spec="unschedulable: true") + pod("a", spec=tol))
    assert sim.records["default/a"].node == "n1"


# ---------------------------------------------------------------- topology spread


def spread(max_skew: int = 1, extra: str = "", key: str = ZONE) -> str:
    return (f"  topologySpreadConstraints:\n  - {{maxSkew: {max_skew}, topologyKey: {key}, "
            f"whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}"
            f"{extra}}}\n")


WEB = {"app": "web"}


def test_spread_skew_against_an_empty_domain() -> None:
    text = (node("a1", zone="a") + node("b1", zone="b")
            + "".join(pod(f"w{i}", labels=WEB, spec=spread() + TO_A)
                      for i in range(2)))
    v = violation(text, "PodTopologySpread")
    assert_violation(v, "default/w1", "a1", inv.TOPOLOGY_SPREAD)
    assert "skew 2 > maxSkew 1" in v.detail


def test_spread_holds_with_the_filter_on() -> None:
    text = (node("a1", zone="a") + node("b1", zone="b")
            + "".join(pod(f"w{i}", labels=WEB, spec=spread() + TO_A)
                      for i in range(4)))
    sim = run(text)
    assert sorted(r.node or "" for r in sim.records.values()) == ["a1", "a1", "b1", "b1"]


def _two_zones_one_web_each() -> str:
    return (node("a1", zone="a") + node("b1", zone="b")
            + pod("old-a", labels=WEB, on="a1") + pod("old-b", labels=WEB, on="b1"))


def test_spread_min_domains_makes_the_global_minimum_zero() -> None:
    base = _two_zones_one_web_each()
    # without minDomains: 1 + 1 - 1 = 1 is fine
    run(base + pod("new", labels=WEB, spec=spread() + TO_A), "PodTopologySpread")
    v = violation(base + pod("new", labels=WEB,
                             spec=spread(extra=", minDomains: 3") + TO_A),
                  "PodTopologySpread")
    assert_violation(v, "default/new", "a1", inv.TOPOLOGY_SPREAD)
    assert "global minimum 0" in v.detail


def test_spread_node_taints_policy() -> None:
    text = (node("a1", zone="a") + node("b1", zone="b", spec="taints: [{key: x, effect: "
                                                             "NoSchedule}]")
            + pod("old-a", labels=WEB, on="a1"))
    # Ignore (the default): the tainted zone is a domain with 0 pods, so a1 is too skewed
    v = violation(text + pod("new", labels=WEB, spec=spread()), "PodTopologySpread")
    assert_violation(v, "default/new", "a1", inv.TOPOLOGY_SPREAD)
    # Honor: zone b is no domain at all
    sim = run(text + pod("new", labels=WEB, spec=spread(extra=", nodeTaintsPolicy: Honor")),
              "PodTopologySpread")
    assert sim.records["default/new"].node == "a1"


def test_spread_node_affinity_policy() -> None:
    only_a = "  nodeSelector: {topology.kubernetes.io/zone: a}\n"
    text = node("a1", zone="a") + node("b1", zone="b") + pod("old-a", labels=WEB, on="a1")
    # Honor (the default): zone b, which the pod cannot use, is no domain
    sim = run(text + pod("new", labels=WEB, spec=spread() + only_a), "PodTopologySpread")
    assert sim.records["default/new"].node == "a1"
    v = violation(text + pod("new", labels=WEB,
                             spec=spread(extra=", nodeAffinityPolicy: Ignore") + only_a),
                  "PodTopologySpread")
    assert_violation(v, "default/new", "a1", inv.TOPOLOGY_SPREAD)


def test_spread_match_label_keys() -> None:
    text = (node("a1", zone="a") + node("b1", zone="b")
            + pod("v1", labels={"app": "web", "rev": "1"}, on="a1"))
    new = {"app": "web", "rev": "2"}
    # counting rev=2 pods only, zone a holds none yet
    sim = run(text + pod("new", labels=new,
                         spec=spread(extra=", matchLabelKeys: [rev]") + TO_A),
              "PodTopologySpread")
    assert sim.records["default/new"].node == "a1"
    v = violation(text + pod("new", labels=new, spec=spread() + TO_A),
                  "PodTopologySpread")
    assert_violation(v, "default/new", "a1", inv.TOPOLOGY_SPREAD)


def test_spread_node_without_the_topology_key() -> None:
    text = node("plain") + pod("new", labels=WEB, spec=spread())
    v = violation(text, "PodTopologySpread")
    assert_violation(v, "default/new", "plain", inv.TOPOLOGY_SPREAD)
    assert "no label topology.kubernetes.io/zone" in v.detail


# ---------------------------------------------------------------- pod (anti-)affinity


def affinity(kind: str, app: str, key: str = ZONE, extra: str = "") -> str:
    """A required pod (anti-)affinity term (an ``affinity`` part)."""
    return (f"    {kind}:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            f"      - {{labelSelector: {{matchLabels: {{app: {app}}}}}, topologyKey: {key}"
            f"{extra}}}\n")


def test_pod_affinity() -> None:
    text = (node("a1", zone="a") + node("b1", zone="b") + pod("db", labels={"app": "db"},
                                                             on="a1")
            + pod("web", spec=affinity_spec(affinity("podAffinity", "db"), prefer_zone("b"))))
    v = violation(text, "InterPodAffinity")
    assert_violation(v, "default/web", "b1", inv.POD_AFFINITY)


def test_pod_affinity_first_of_a_self_affine_group_goes_anywhere() -> None:
    text = node("a1", zone="a") + node("b1", zone="b")
    self_affine = affinity("podAffinity", "web")
    text += pod("w0", labels=WEB, spec=affinity_spec(self_affine, prefer_zone("b")))
    sim = run(text, "InterPodAffinity")
    assert sim.records["default/w0"].node == "b1"
    # ... but not the second one, away from the first
    text += pod("w1", labels=WEB, spec=affinity_spec(self_affine, prefer_zone("a")))
    v = violation(text, "InterPodAffinity")
    assert_violation(v, "default/w1", "a1", inv.POD_AFFINITY)


def test_pod_affinity_namespaces() -> None:
    text = (namespace("data", {"team": "storage"}) + node("a1", zone="a")
            + node("b1", zone="b") + pod("db", ns="data", labels={"app": "db"}, on="a1"))
    # no namespaces: only the pod's own, where no db runs (and it is no db itself)
    to_db = affinity("podAffinity", "db")
    v = violation(text + pod("web", spec=affinity_spec(to_db, prefer_zone("a"))),
                  "InterPodAffinity")
    assert_violation(v, "default/web", "a1", inv.POD_AFFINITY)
    by_selector = ", namespaceSelector: {matchLabels: {team: storage}}"
    to_db = affinity("podAffinity", "db", extra=by_selector)
    sim = run(text + pod("web", spec=affinity_spec(to_db, prefer_zone("b"))))
    assert sim.records["default/web"].node == "a1"


def test_pod_anti_affinity() -> None:
    text = (node("n1") + pod("a", labels=WEB, on="n1")
            + pod("b", spec=affinity_spec(
                affinity("podAntiAffinity", "web", "kubernetes.io/hostname"))))
    v = violation(text, "InterPodAffinity")
    assert_violation(v, "default/b", "n1", inv.POD_ANTI_AFFINITY)
    assert "pod default/a on node n1" in v.detail


def test_existing_pods_anti_affinity() -> None:
    guard = affinity_spec(affinity("podAntiAffinity", "web", "kubernetes.io/hostname"))
    text = node("n1") + pod("guard", on="n1", spec=guard)
    v = violation(text + pod("w", labels=WEB), "InterPodAffinity")
    assert_violation(v, "default/w", "n1", inv.EXISTING_ANTI_AFFINITY)
    # the guard's term covers its own namespace only
    sim = run(text + pod("w", ns="other", labels=WEB), "InterPodAffinity")
    assert sim.records["other/w"].node == "n1"


# ---------------------------------------------------------------- bound once


class _TwiceBinder(DefaultBinder):
    def bind(self, state, pod, node_name):  # type: ignore[no-untyped-def]
        super().bind(state, pod, node_name)
        return super().bind(state, pod, node_name)


def test_a_pod_bound_twice() -> None:
    registry = {**in_tree_registry(), DefaultBinder.name: _TwiceBinder}
    v = violation(node("n1") + pod("a"), registry=registry)
    assert_violation(v, "default/a", "n1", inv.DOUBLE_BINDING)


def test_a_finished_pod_bound_again() -> None:
    text = node("n1") + pod("a").replace("metadata: {name: a,",
                                         "metadata: {annotations: {kubesched.io/duration: '5'}, "
                                         "name: a,")
    sim = SimCluster(load_scenario_text(text, "t.yaml"), check=True)
    sim.run()
    assert not sim.pods  # finished and gone
    first = next(p for p in sim.scenario.pods if p.name == "a")
    sim.pods[first.uid] = first  # the same pod (uid) submitted again
    with pytest.raises(InvariantViolation, match="bound twice"):
        sim.bind(first, "n1")


# ---------------------------------------------------------------- the command


def test_cli_check_exits_1_with_one_message(tmp_path) -> None:
    f = tmp_path / "over.yaml"
    cfg = ("---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
           "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n"
           "      disabled: [{name: NodeResourcesFit}]\n")
    f.write_text(node("n2") + pod("web-3", cpu="3") + pod("web-4", cpu="1100m") + cfg)
    res = CliRunner().invoke(main, ["simulate", str(f), "--check", "--quiet"])
    assert res.exit_code == 1
    assert res.output.strip() == ("invariant violated: pod default/web-4 on node n2: "
                                  "insufficient cpu (requested 4100m of 4000m)")
    assert "Traceback" not in res.output
