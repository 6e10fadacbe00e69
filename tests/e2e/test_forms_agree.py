"""Fast paths change no decision: whole simulations with every plugin's batch form (and the
count caches) give the same placements as with the per-node forms only."""

from __future__ import annotations

import random

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.plugins.registry import in_tree_registry


def per_node_registry() -> dict:
    """The in-tree plugins with their batch forms hidden: the runtime loops per node."""
    out = {}
    for name, cls in in_tree_registry().items():
        attrs = {a: None for a in ("filter_batch", "score_batch") if hasattr(cls, a)}
        out[name] = type(cls.__name__ + "PerNode", (cls,), attrs)
    return out


def scenario(seed: int) -> str:
    rng = random.Random(seed)
    docs = []
    for i in range(rng.choice([8, 20, 40])):
        taints = ("  taints: [{key: dedicated, value: x, effect: NoSchedule}]\n"
                  if rng.random() < 0.2 else "")
        docs.append(f"apiVersion: v1\nkind: Node\nmetadata:\n  name: n{i:02d}\n  labels:\n"
                    f"    kubernetes.io/hostname: n{i:02d}\n"
                    f"    topology.kubernetes.io/zone: z{i % 3}\n"
                    f"spec:\n{taints or '  {}'}\n"
                    f"status: {{capacity: {{cpu: '{rng.choice([2, 4, 8])}', memory: 8Gi, "
                    f"pods: '20'}}}}\n")
    for j in range(rng.randint(20, 80)):
        app = rng.choice(["a", "b", "c"])
        extra = ""
        r = rng.random()
        if r < 0.25:
            extra = ("  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: "
                     f"topology.kubernetes.io/zone, whenUnsatisfiable: "
                     f"{rng.choice(['DoNotSchedule', 'ScheduleAnyway'])}, "
                     f"labelSelector: {{matchLabels: {{app: {app}}}}}}}\n")
        elif r < 0.45:
            kind = rng.choice(["podAffinity", "podAntiAffinity"])
            how = rng.choice(["required", "preferred"])
            key = rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])
            term = f"{{labelSelector: {{matchLabels: {{app: {app}}}}}, topologyKey: {key}}}"
            if how == "required":
                body = f"requiredDuringSchedulingIgnoredDuringExecution: [{term}]"
            else:
                body = ("preferredDuringSchedulingIgnoredDuringExecution: "
                        f"[{{weight: {rng.randint(1, 100)}, podAffinityTerm: {term}}}]")
            extra = f"  affinity:\n    {kind}:\n      {body}\n"
        elif r < 0.55:
            extra = "  tolerations: [{key: dedicated, operator: Exists}]\n"
        docs.append(f"apiVersion: v1\nkind: Pod\n"
                    f"metadata: {{name: p{j:03d}, labels: {{app: {app}}}}}\n"
                    f"spec:\n{extra}  containers: [{{name: c, resources: {{requests: "
                    f"{{cpu: {rng.choice(['100m', '500m', '1'])}, memory: 256Mi}}}}}}]\n")
    return "---\n".join(docs)


@pytest.mark.parametrize("seed", range(12))
def test_batch_and_per_node_forms_place_alike(seed: int) -> None:
    text = scenario(seed)
    fast = SimCluster(load_scenario_text(text, "t.yaml"), seed=seed, check=True).run()
    slow = SimCluster(load_scenario_text(text, "t.yaml"), seed=seed,
                      registry=per_node_registry(), check=True).run()
    assert [(r.key, r.node, r.attempts) for r in fast.records] == \
        [(r.key, r.node, r.attempts) for r in slow.records]
