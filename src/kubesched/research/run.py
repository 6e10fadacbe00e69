"""One replay of a GPU trace under one policy, as the paper's experiments run it, and the
paper's metric: the share of the cluster's GPUs left unallocated once the whole workload
(130 % of GPU capacity) has arrived (experiments/analysis: 100 − allocated %)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kubesched.api.scenario import Scenario
from kubesched.backends.sim.cluster import SimCluster, SimResult
from kubesched.config import SchedulerConfiguration, load_config
from kubesched.config.features import FeatureGates
from kubesched.framework import Plugin
from kubesched.plugins.loading import check_plugin_class
from kubesched.research.gpushare import GpuShare, pod_gpu
from kubesched.research.openb import OpenbSpec, TracePod, load_openb
from kubesched.research.policies import (
    GPU_SELECTION,
    POLICIES,
    POLICY_WEIGHT,
    TIE_BREAK,
    typical_pods,
    typical_to_args,
)


def policy_config(policy: str, typical: list[dict[str, Any]], tiebreak: str = "simulator"
                  ) -> dict[str, Any]:
    """The paper's scheduler configuration (scripts/generate_config_and_run.py): default
    filters plus GpuShare, no score plugin but the policy, percentageOfNodesToScore 100;
    and the simulator's tie-break (the nodes' ``openb/order``) as the NodeOrder scores —
    or, ``tiebreak="uniform"``, kube-scheduler's own (uniform among the tied nodes)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (one of {', '.join(POLICIES)})")
    if tiebreak not in ("simulator", "uniform"):
        raise ValueError(f"unknown tie-break {tiebreak!r} (simulator or uniform)")
    score = [{"name": policy, "weight": POLICY_WEIGHT}]
    if tiebreak == "simulator":
        score += [{"name": name, "weight": w} for name, (_cls, w) in TIE_BREAK.items()]
    plugins: dict[str, Any] = {
        "filter": {"enabled": [{"name": "GpuShare"}]},
        "reserve": {"enabled": [{"name": "GpuShare"}]},
        "preScore": {"disabled": [{"name": "*"}]},
        "score": {"disabled": [{"name": "*"}], "enabled": score},
    }
    if policy == "Random":
        plugins["preScore"]["enabled"] = [{"name": "Random"}]
    share_args: dict[str, Any] = {"gpuSelMethod": GPU_SELECTION[policy]}
    config = [{"name": "GpuShare", "args": share_args}]
    if policy == "FGD":
        share_args["typicalPods"] = typical
        config.append({"name": "FGD", "args": {"typicalPods": typical}})
    return {"apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100,
            "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins,
                          "pluginConfig": config}]}


def scheduler_config(policy: str, trace: list[TracePod], features: FeatureGates | None = None,
                     tiebreak: str = "simulator") -> SchedulerConfiguration:
    typical = typical_to_args(typical_pods(p.shape for p in trace))
    cfg = load_config(policy_config(policy, typical, tiebreak), f"<{policy} policy>",
                      features)
    classes: list[type[Plugin]] = [GpuShare, *POLICIES.values(),
                                   *(cls for cls, _w in TIE_BREAK.values())]
    cfg.out_of_tree = {cls.name: check_plugin_class(cls, "plugins", repr(cls))
                       for cls in classes}
    return cfg


@dataclass
class Replay:
    scenario: str
    policy: str
    seed: int
    pods: int
    scheduled: int
    gpu_milli_total: int
    gpu_milli_allocated: int
    wall_seconds: float
    # (arrived GPU milli, allocated GPU milli) after each pod, in arrival order
    curve: list[tuple[int, int]] = field(default_factory=list)

    @property
    def unallocated_gpu_pct(self) -> float:
        return 100.0 * (1 - self.gpu_milli_allocated / self.gpu_milli_total)

    def levels(self) -> dict[int, float]:
        return arrival_levels(self.curve, self.gpu_milli_total)


def arrival_levels(points: list[tuple[int, int]], total: int) -> dict[int, float]:
    """The curve at whole percentages of arrived workload, as the authors tabulate it
    (experiments/analysis/merge_alloc_discrete.py): level x is the mean allocated % (each
    rounded to 2 decimals) over the points whose arrived % rounds to x, or, where none
    does, over those within x ± 1; the mean rounded to 2 decimals. Levels with no point
    near are left out. Their arithmetic, step for step (pandas: Python's ``round`` on each
    value, numpy's pairwise mean and ``np.round`` on the mean), so that a value at a half
    cent rounds the same way."""
    import numpy as np

    gpus = total // 1000
    if not points or gpus <= 0:
        return {}
    arrived = np.array([round(a / gpus / 10) for a, _ in points])
    allocated = np.array([round(b / gpus / 10, 2) for _, b in points])
    out: dict[int, float] = {}
    for x in range(0, int(arrived.max()) + 1):
        near = allocated[arrived == x]
        if not near.size:
            near = allocated[(arrived >= x - 1) & (arrived <= x + 1)]
        if near.size:
            out[x] = float(np.round(near.mean(), 2))
    return out


def curve(sc: Scenario, result: SimResult) -> list[tuple[int, int]]:
    """Arrived and allocated GPU milli after each pod, in arrival order (the simulator's
    ClusterGpuFragReport after every pod)."""
    milli = {p.key: pod_gpu(p).total_milli for p in sc.pods}
    out = []
    arrived = allocated = 0
    for r in result.records:
        arrived += milli.get(r.key, 0)
        if r.node is not None:
            allocated += milli.get(r.key, 0)
        out.append((arrived, allocated))
    return out


def replay(spec: OpenbSpec, policy: str, *, seed: int | None = None,
           name: str | None = None, features: FeatureGates | None = None,
           tiebreak: str = "simulator") -> Replay:
    """``spec``'s workload (drawn with ``seed`` when given) under ``policy``, deciding as
    ``features`` says (default: the newest release); the scheduler's tie-breaking generator
    is seeded with the same number. ``tiebreak``: research.sweepfile.TIEBREAKS."""
    if seed is not None:
        spec = replace(spec, seed=seed)
    gates = features or FeatureGates()
    sc, trace, nodes = load_openb(spec, release=gates.version)
    cfg = scheduler_config(policy, trace, gates, tiebreak)
    result = SimCluster(sc, cfg, seed=spec.seed).run()
    total = sum(n.gpus for n in nodes) * 1000
    cur = curve(sc, result)
    # Allocation at the end of the run: in the paper's construction nothing leaves.
    bound = {r.key for r in result.records if r.node is not None}
    allocated = sum(pod_gpu(p).total_milli for p in sc.pods if p.key in bound)
    return Replay(name or spec.pods, policy, spec.seed, len(sc.pods), len(bound), total,
                  allocated, result.wall_seconds, cur)
