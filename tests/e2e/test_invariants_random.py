"""The invariant checker on random clusters where every rule is in play: the scheduler as
it is breaks none of them, and with one Filter plugin disabled the checker reports that
plugin's rule and never another (so no rule of the checker raises false alarms)."""

from __future__ import annotations

import random

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim import invariants as inv
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.invariants import InvariantViolation
from kubesched.config import load_config

ZONE = "topology.kubernetes.io/zone"
SEEDS = range(12)

# the rules a Filter plugin enforces
RULES = {
    "NodeUnschedulable": {inv.UNSCHEDULABLE},
    "TaintToleration": {inv.TAINTS},
    "NodeAffinity": {inv.NODE_SELECTOR, inv.NODE_AFFINITY},
    "NodePorts": {inv.HOST_PORTS},
    "NodeResourcesFit": {inv.RESOURCES, inv.POD_COUNT},
    "PodTopologySpread": {inv.TOPOLOGY_SPREAD},
    "InterPodAffinity": {inv.POD_AFFINITY, inv.POD_ANTI_AFFINITY, inv.EXISTING_ANTI_AFFINITY},
}


def _node(rng: random.Random, i: int) -> str:
    taints = []
    if rng.random() < 0.2:
        taints.append("{key: dedicated, value: x, effect: NoSchedule}")
    if rng.random() < 0.1:
        taints.append("{key: evict, effect: NoExecute}")
    uns = "unschedulable: true, " if rng.random() < 0.1 else ""
    labels = {"kubernetes.io/hostname": f"n{i}", "disk": rng.choice(["ssd", "hdd"])}
    if rng.random() < 0.9:
        labels[ZONE] = f"z{rng.randrange(3)}"
    gpu = f", example.com/gpu: '{rng.choice([0, 1, 2])}'" if rng.random() < 0.5 else ""
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {labels}}}\n"
            f"spec: {{{uns}taints: [{', '.join(taints)}]}}\n"
            f"status: {{capacity: {{cpu: '{rng.choice([1, 2, 4])}', memory: 4Gi, "
            f"pods: '{rng.choice([3, 5, 20])}'{gpu}}}}}\n")


def _pod(rng: random.Random, j: int) -> str:
    app = rng.choice("abc")
    ns = rng.choice(["default", "team1", "team2"])
    spec, aff = [], []
    if rng.random() < 0.3:
        extra = ""
        if rng.random() < 0.3:
            extra += f", minDomains: {rng.randint(1, 4)}"
        if rng.random() < 0.3:
            extra += ", nodeTaintsPolicy: Honor"
        if rng.random() < 0.3:
            extra += ", nodeAffinityPolicy: Ignore"
        if rng.random() < 0.3:
            extra += ", matchLabelKeys: [rev]"
        key = rng.choice([ZONE, "kubernetes.io/hostname"])
        spec.append(f"  topologySpreadConstraints:\n  - {{maxSkew: {rng.randint(1, 2)}, "
                    f"topologyKey: {key}, whenUnsatisfiable: DoNotSchedule, "
                    f"labelSelector: {{matchLabels: {{app: {app}}}}}{extra}}}\n")
    if rng.random() < 0.35:
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        key = rng.choice([ZONE, "kubernetes.io/hostname"])
        nss = rng.choice(["", ", namespaceSelector: {}",
                          ", namespaceSelector: {matchLabels: {team: x}}", ", namespaces: [team2]"])
        aff.append(f"    {kind}:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                   f"      - {{labelSelector: {{matchLabels: {{app: {rng.choice('abc')}}}}}, "
                   f"topologyKey: {key}{nss}}}\n")
    if rng.random() < 0.2:
        aff.append("    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                   "        nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, "
                   "values: [ssd]}]}]\n")
    if aff:
        spec.append("  affinity:\n" + "".join(aff))
    if rng.random() < 0.15:
        spec.append("  nodeSelector: {disk: hdd}\n")
    tols = []
    if rng.random() < 0.3:
        tols.append("{key: dedicated, operator: Exists}")
    if rng.random() < 0.1:
        tols.append("{key: node.kubernetes.io/unschedulable, operator: Exists}")
    if rng.random() < 0.1:
        tols.append("{operator: Exists}")
    if tols:
        spec.append(f"  tolerations: [{', '.join(tols)}]\n")
    ports = ""
    if rng.random() < 0.2:
        hip = rng.choice(["", ", hostIP: 10.0.0.1", ", hostIP: 10.0.0.2"])
        proto = rng.choice(["", ", protocol: UDP"])
        ports = (f", ports: [{{containerPort: 80, hostPort: {rng.choice([80, 81])}"
                 f"{hip}{proto}}}]")
    gpu = ", example.com/gpu: '1'" if rng.random() < 0.15 else ""
    # extended resources cannot be overcommitted: the API server wants limit = request
    limits = f", limits: {{{gpu[2:]}}}" if gpu else ""
    ann = ""
    if rng.random() < 0.3:
        ann += f"'kubesched.io/duration': '{rng.randint(1, 20)}', "
    if rng.random() < 0.3:
        ann += f"'kubesched.io/arrival': '{rng.randint(0, 10)}', "
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{j:03d}, namespace: {ns}, "
            f"annotations: {{{ann}}}, labels: {{app: {app}, rev: '{rng.randint(1, 2)}'}}}}\n"
            f"spec:\n  priority: {rng.choice([0, 0, 100, 1000])}\n{''.join(spec)}"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: "
            f"{rng.choice(['100m', '500m', '1'])}, memory: 256Mi{gpu}}}"
            f"{limits}}}{ports}}}]\n")


def scenario(seed: int) -> str:
    rng = random.Random(seed)
    docs = ["apiVersion: v1\nkind: Namespace\nmetadata: {name: team1, labels: {team: x}}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: team2, labels: {team: y}}\n"]
    docs += [_node(rng, i) for i in range(rng.choice([3, 6, 12]))]
    docs += [_pod(rng, j) for j in range(rng.randint(10, 60))]
    return "---\n".join(docs)


def _rule_broken(seed: int, disabled: str | None) -> str | None:
    config = None
    if disabled is not None:
        config = load_config({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"filter": {"disabled": [{"name": disabled}]}}}]}, "<t>")
    sim = SimCluster(load_scenario_text(scenario(seed), "t.yaml"), config, seed=seed,
                     check=True)
    try:
        sim.run()
    except InvariantViolation as v:
        return v.rule
    return None


def test_the_scheduler_breaks_no_invariant() -> None:
    assert [(s, r) for s in SEEDS if (r := _rule_broken(s, None)) is not None] == []


@pytest.mark.parametrize("plugin", sorted(RULES))
def test_without_a_filter_only_its_rules_break(plugin: str) -> None:
    broken = {r for s in SEEDS if (r := _rule_broken(s, plugin)) is not None}
    assert broken, f"no seed breaks {plugin}'s rules"
    assert broken <= RULES[plugin]
