"""PreFilter outcomes the autoscaler's checker replays (``Framework.remember_pre_filter``):
each plugin's ``pre_filter_by_pod`` holds — what it says depends on the pod alone is the
same over clusters that differ in everything else — and a day of scale-ups and scale-downs
decides the same with and without the replays."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.scenario import load_scenario, load_scenario_text
from kubesched.autoscaler.options import AutoscalerOptions
from kubesched.autoscaler.simulated import GROUP_LABEL, attach
from kubesched.backends.sim.cluster import SimCluster
from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.explain import ReadOnlyBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BY_POD_OUTCOME, BY_POD_SKIP
from kubesched.framework.runtime import Framework
from kubesched.scheduler import Scheduler

_SHAPES: list[dict[str, Any]] = [
    {},
    {"nodeSelector": {"zone": "a"}},
    {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}},
    {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80,
                                                          "hostPort": 8080}],
                     "resources": {"requests": {"cpu": "1"}}}]},
    {"volumes": [{"name": "v", "emptyDir": {}}]},
    {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]},
    {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname",
         "labelSelector": {"matchLabels": {"app": "web"}}}]}}},
]


def _pod(name: str, spec: dict[str, Any], labels: dict[str, str] | None = None
         ) -> dict[str, Any]:
    s = {"containers": [{"name": "c", "image": "x",
                         "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}], **spec}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": s}


def _cluster(rng: random.Random) -> list[dict[str, Any]]:
    """Nodes, running pods (some with anti-affinity) and a claim, drawn at random."""
    docs: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 5)):
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"n{i}", "labels": {
                         "zone": rng.choice("ab"), "kubernetes.io/hostname": f"n{i}"}},
                     "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})
    for j in range(rng.randint(0, 6)):
        spec = rng.choice(_SHAPES[:2] + _SHAPES[-1:])
        d = _pod(f"run{j}", {**spec, "nodeName": f"n{rng.randint(0, 1)}"},
                 {"app": rng.choice(["web", "db"])})
        docs.append(d)
    if rng.random() < 0.5:
        mode = rng.choice(["ReadWriteOnce", "ReadWriteOncePod"])
        claim: dict[str, Any] = {"accessModes": [mode],
                                 "resources": {"requests": {"storage": "1Gi"}}}
        if rng.random() < 0.5:  # bound to a volume in one zone
            claim["volumeName"] = "pv-data"
            docs.append({"apiVersion": "v1", "kind": "PersistentVolume",
                         "metadata": {"name": "pv-data", "labels": {
                             "topology.kubernetes.io/zone": rng.choice("ab")}
                             if rng.random() < 0.5 else {}},
                         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": [mode],
                                  "claimRef": {"namespace": "default", "name": "data"},
                                  "hostPath": {"path": "/d"}}})
        docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": "data", "namespace": "default"}, "spec": claim})
    return docs


def _plain(v: Any) -> Any:
    """``v`` as plain values, to compare what two runs wrote (objects by their fields)."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted(repr(_plain(x)) for x in v)
    if isinstance(v, dict):
        return {repr(k): _plain(x) for k, x in v.items()}
    fields = getattr(v, "__dict__", None)
    if fields is None:
        slots = [s for c in type(v).__mro__ for s in getattr(c, "__slots__", ())]
        fields = {s: getattr(v, s) for s in slots if hasattr(v, s)}
    return (type(v).__name__, _plain(fields)) if fields else repr(v)


def _outcomes(docs: list[dict[str, Any]], pod: Any) -> dict[str, tuple[Any, ...]]:
    sc = load_scenario_text(yaml.safe_dump_all(docs), "<test>")
    sched = Scheduler(ReadOnlyBackend(), VirtualClock(), default_config(), extenders=[])
    sched.handle.objects = {k: list(v) for k, v in sc.objects.items()}
    sched.handle.namespaces = sc.namespaces
    for n in sc.nodes:
        sched.cache.add_node(n)
    for p in sc.pods:
        if p.spec.node_name:
            sched.cache.add_pod(p)
    sched.cache.update_snapshot(sched.snapshot)
    fwk: Framework = sched.profiles["default-scheduler"]
    out = {}
    for p in fwk.pre_filter:
        state = CycleState()
        res, st = p.pre_filter(state, pod, sched.snapshot)
        out[p.name] = (p.pre_filter_by_pod(pod), None if res is None else res.node_names,
                       None if st is None else (st.code, st.reasons),
                       _plain(state.written_after(0)))
    return out


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("shape", range(len(_SHAPES)))
def test_what_a_plugin_says_depends_on_the_pod_alone_does(seed: int, shape: int) -> None:
    rng = random.Random(seed)
    pod = load_scenario_text(yaml.safe_dump(_pod("p", _SHAPES[shape])), "<test>").pods[0]
    a = _outcomes(_cluster(rng), pod)
    b = _outcomes(_cluster(rng), pod)
    for name, (by_pod, *outcome) in a.items():
        if by_pod == BY_POD_OUTCOME:
            assert outcome == list(b[name][1:]), name
        elif by_pod == BY_POD_SKIP:  # skipped in one cluster, skipped in the other
            skipped = [o[2] is not None and o[2][0].name == "SKIP" for o in (a[name], b[name])]
            assert skipped[0] == skipped[1], name


def _day(tmp_path: Path, seed: int) -> Path:
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = [
        {"apiVersion": "kubesched.io/v1alpha1", "kind": "NodeGroup", "metadata": {"name": g},
         "spec": {"minSize": 0, "maxSize": 6, "price": 0.4, "provisioningDelaySeconds": 60,
                  "template": {"metadata": {"labels": {"zone": z}},
                               "status": {"capacity": {"cpu": "4", "memory": "16Gi",
                                                       "pods": "110"}}}}}
        for g, z in (("ga", "a"), ("gb", "b"))]
    docs.append({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": "ga-0", "labels": {GROUP_LABEL: "ga", "zone": "a"}},
                 "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
    for i in range(60):
        d = _pod(f"job-{i:03d}", rng.choice([*_SHAPES[:2], _SHAPES[3], _SHAPES[4]]))
        d["metadata"]["annotations"] = {
            "kubesched.io/arrival": f"{rng.uniform(0, 3600):.0f}",
            "kubesched.io/duration": f"{rng.uniform(300, 2400):.0f}",
            "cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
        docs.append(d)
    path = tmp_path / f"day{seed}.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run(path: Path) -> tuple[Any, ...]:
    sim = SimCluster(load_scenario([str(path)]), default_config())
    ca = attach(sim, AutoscalerOptions())
    res = sim.run()
    return (sorted((r.key, r.node, r.time) for r in res.records), ca.scale_downs,
            res.virtual_seconds)


@pytest.mark.parametrize("seed", range(3))
def test_a_day_decides_the_same_with_replayed_pre_filters(tmp_path: Path, seed: int,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    path = _day(tmp_path, seed)
    kept: list[int] = []
    real = Framework._pre_filter_kept

    def counted(*a: Any) -> Any:
        kept.append(1)
        return real(*a)

    monkeypatch.setattr(Framework, "_pre_filter_kept", staticmethod(counted))
    replayed = _run(path)
    assert kept and replayed[1]  # the checker replayed, and nodes were scaled down
    monkeypatch.setattr(Framework, "remember_pre_filter", lambda self, limit=0: None)
    assert _run(path) == replayed
