"""Property test: the batch form (NodeTable + numpy) and the per-node form (NodeInfo + Python
ints) of every plugin here agree — Filter codes and reasons, raw and normalized scores — on
randomly generated clusters (fixed seeds) with extended resources, hugepages, taints, cordoned
nodes, nodes without capacity, over-committed nodes and random candidate subsets."""

from __future__ import annotations

import random

import numpy as np
import pytest
from _plugtest_util import make_node, make_pod, snapshot

from kubesched.config.features import FeatureGates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodename import NodeName
from kubesched.plugins.noderesources import BalancedAllocation, Fit
from kubesched.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.releases import SUPPORTED_VERSIONS

SCALARS = ["example.com/gpu", "example.com/fpga", "other.io/nic", "hugepages-2Mi",
           "kubernetes.io/batteries"]
TAINT_POOL = [("dedicated", "gpu"), ("dedicated", "db"), ("team", ""), ("zone", "a"),
              ("node.kubernetes.io/unschedulable", "")]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
CASES = 400


def _maybe(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def random_node(rng: random.Random, name: str):
    cap: dict[str, str] = {}
    if _maybe(rng, 0.93):
        cap["cpu"] = rng.choice(["0", "500m", "1", "2", "3500m", "4", "8", "16"])
    if _maybe(rng, 0.93):
        cap["memory"] = rng.choice(["0", "512Mi", "1Gi", "2Gi", "4Gi", "16Gi", "64Gi"])
    if _maybe(rng, 0.5):
        cap["ephemeral-storage"] = rng.choice(["0", "10Gi", "100Gi"])
    if _maybe(rng, 0.9):
        cap["pods"] = str(rng.choice([0, 1, 2, 3, 5, 110]))
    for s in SCALARS:
        if _maybe(rng, 0.35):
            cap[s] = str(rng.randint(0, 8)) if s != "hugepages-2Mi" else rng.choice(
                ["0", "2Mi", "8Mi"])
    taints = []
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2, 3])):
        k, v = rng.choice(TAINT_POOL)
        taints.append({"key": k, "value": v, "effect": rng.choice(EFFECTS)})
    return make_node(name, capacity=cap if cap or _maybe(rng, 0.5) else None,
                     taints=taints, unschedulable=_maybe(rng, 0.15), add_pods=False)


def random_requests(rng: random.Random) -> dict[str, str] | None:
    if _maybe(rng, 0.2):
        return None  # no requests at all: non-zero defaults for scoring
    r: dict[str, str] = {}
    if _maybe(rng, 0.8):
        r["cpu"] = rng.choice(["0", "50m", "100m", "250m", "500m", "1", "2", "3"])
    if _maybe(rng, 0.8):
        r["memory"] = rng.choice(["0", "64Mi", "200Mi", "512Mi", "1Gi", "3Gi"])
    if _maybe(rng, 0.2):
        r["ephemeral-storage"] = rng.choice(["0", "1Gi", "20Gi"])
    for s in SCALARS:
        if _maybe(rng, 0.12):
            r[s] = str(rng.randint(0, 3)) if s != "hugepages-2Mi" else rng.choice(
                ["0", "2Mi", "4Mi"])
    return r


def random_tolerations(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        k, v = rng.choice(TAINT_POOL)
        t: dict = {"key": k}
        if _maybe(rng, 0.3):
            t["operator"] = "Exists"
            if _maybe(rng, 0.2):
                t["key"] = ""
        else:
            t["value"] = v if _maybe(rng, 0.8) else "nope"
        if _maybe(rng, 0.7):
            t["effect"] = rng.choice(EFFECTS)
        out.append(t)
    return out


def random_pod(rng: random.Random, node: str = "", names: list[str] | None = None):
    reqs = [random_requests(rng) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    init = [random_requests(rng) for _ in range(rng.choice([0, 0, 0, 1, 2]))]
    side = [random_requests(rng) for _ in range(rng.choice([0, 0, 0, 1]))]
    overhead = {"cpu": "10m", "memory": "10Mi"} if _maybe(rng, 0.1) else None
    pod_level = None
    if _maybe(rng, 0.08):
        pod_level = {"cpu": rng.choice(["100m", "2"]), "memory": rng.choice(["100Mi", "2Gi"])}
    want_node = node
    if not node and names and _maybe(rng, 0.15):
        want_node = rng.choice([*names, "nowhere"])
    return make_pod(reqs=reqs or None, init_reqs=init or None, sidecar_reqs=side or None,
                    overhead=overhead, pod_level_requests=pod_level, node=want_node,
                    tolerations=random_tolerations(rng))


def random_fit_args(rng: random.Random) -> dict:
    names = ["cpu", "memory", "ephemeral-storage", *SCALARS, "pods"]
    resources = [{"name": n, "weight": rng.randint(1, 5)}
                 for n in rng.sample(names, rng.randint(1, 5))]
    strategy = rng.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
    ss: dict = {"type": strategy, "resources": resources}
    if strategy == "RequestedToCapacityRatio":
        utils = sorted(rng.sample(range(0, 101), rng.randint(1, 4)))
        ss["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": rng.randint(0, 10)} for u in utils]}
    args: dict = {"scoringStrategy": ss}
    if _maybe(rng, 0.2):
        args["ignoredResources"] = rng.sample(SCALARS, 1)
    if _maybe(rng, 0.2):
        args["ignoredResourceGroups"] = ["example.com"]
    return args


def random_cluster(seed: int):
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(1, 14))]
    nodes = [random_node(rng, n) for n in names]
    pods = [random_pod(rng, node=rng.choice(names)) for _ in range(rng.randint(0, 25))]
    return rng, names, snapshot(nodes, pods), random_pod(rng, names=names)


def _candidates(rng: random.Random, n: int) -> np.ndarray:
    if _maybe(rng, 0.5):
        return np.arange(n, dtype=np.int64)
    k = rng.randint(0, n)
    return np.array(rng.sample(range(n), k), dtype=np.int64)


def _agree_filter(plugin, state: CycleState, pod, snap, idx: np.ndarray) -> list[Code]:
    batch = plugin.filter_batch(state, pod, snap, idx)
    assert len(batch.codes) == len(idx)
    codes = []
    for k, i in enumerate(idx.tolist()):
        s = plugin.filter(state, pod, snap.node_infos[i]) or Status()
        b = batch.status_at(k, plugin.name)
        assert (b.code, b.reasons) == (s.code, s.reasons), (plugin.name, snap.node_infos[i], s, b)
        codes.append(s.code)
    # the verdicts alone, for many rows and for one, where offered
    passes, one = getattr(plugin, "filter_passes", None), getattr(plugin, "filter_row", None)
    if passes is not None:
        assert passes(state, pod, snap, idx).tolist() == [c == Code.SUCCESS for c in codes]
    if one is not None:
        assert [one(state, pod, snap, i) for i in idx.tolist()] == [
            c == Code.SUCCESS for c in codes]
    return codes


def _agree_scores(plugin, state: CycleState, pod, snap, idx: np.ndarray) -> list[int] | None:
    st = plugin.pre_score(state, pod, NodeList([snap.node_infos[i] for i in idx], idx))
    if st is not None and st.code == Code.SKIP:
        return None
    batch = plugin.score_batch(state, pod, snap, idx)
    assert isinstance(batch, np.ndarray) and batch.dtype == np.int64 and len(batch) == len(idx)
    per_node = [plugin.score(state, pod, snap.node_infos[i]) for i in idx.tolist()]
    assert batch.tolist() == per_node, (plugin.name, batch, per_node)
    assert all(0 <= s <= 100 for s in per_node) or plugin.name == TaintToleration.name
    norm = getattr(plugin, "normalize_score", None)
    if norm is not None:
        out = norm(state, pod, batch).tolist()
        assert all(0 <= s <= 100 for s in out)
        return out
    return per_node


@pytest.mark.parametrize("seed", range(CASES))
def test_batch_and_per_node_forms_agree(seed: int) -> None:
    rng, _names, snap, pod = random_cluster(seed)
    idx = _candidates(rng, snap.num_nodes)
    state = CycleState()

    fit = Fit(random_fit_args(rng), Handle())
    _, st = fit.pre_filter(state, pod, snap)
    assert st is None
    _agree_filter(fit, state, pod, snap, idx)
    _agree_scores(fit, state, pod, snap, idx)

    for plugin in (TaintToleration(None, Handle()), NodeUnschedulable(None, Handle()),
                   NodeName(None, Handle())):
        _agree_filter(plugin, state, pod, snap, idx)
    _agree_scores(TaintToleration(None, Handle()), state, pod, snap, idx)

    ba_names = ["cpu", "memory", "ephemeral-storage", *SCALARS]
    ba_args = None if _maybe(rng, 0.4) else {
        "resources": [{"name": n, "weight": 1}
                      for n in rng.sample(ba_names, rng.randint(1, 4))]}
    for version in SUPPORTED_VERSIONS:  # v1.35's balance and v1.36's change in balance
        _agree_scores(BalancedAllocation(ba_args, Handle(features=FeatureGates(version))),
                      state, pod, snap, idx)


def test_random_clusters_exercise_every_outcome() -> None:
    """The generator reaches every branch the agreement test is meant to cover."""
    seen: set = set()
    for seed in range(CASES):
        rng, _names, snap, pod = random_cluster(seed)
        idx = np.arange(snap.num_nodes, dtype=np.int64)
        state = CycleState()
        fit = Fit(random_fit_args(rng), Handle())
        fit.pre_filter(state, pod, snap)
        b = fit.filter_batch(state, pod, snap, idx)
        seen.update(("fit", int(c)) for c in b.codes)
        seen.update(("fit-nreasons", len(r)) for r in b.reasons)
        t = TaintToleration(None, Handle()).filter_batch(state, pod, snap, idx)
        seen.update(("taint", int(c)) for c in t.codes)
        u = NodeUnschedulable(None, Handle()).filter_batch(state, pod, snap, idx)
        seen.update(("cordon", int(c)) for c in u.codes)
        ba = BalancedAllocation(None, Handle()).pre_score(state, pod, NodeList([], idx))
        seen.add(("ba-skip", ba is not None))
    for key in [("fit", 0), ("fit", 2), ("fit", 3), ("fit-nreasons", 1), ("fit-nreasons", 2),
                ("fit-nreasons", 3), ("taint", 0), ("taint", 3), ("cordon", 0), ("cordon", 3),
                ("ba-skip", True), ("ba-skip", False)]:
        assert key in seen, key


# ---------------------------------------------------------------- through the runtime

MY_PLUGINS = ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName",
              "TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
              "DefaultBinder"]


def _framework():
    from kubesched.config import load_config
    from kubesched.framework.handle import Handle
    from kubesched.framework.runtime import Framework
    from kubesched.plugins.registry import in_tree_registry

    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
               "enabled": [{"name": n, "weight": w} for n, w in zip(
                   MY_PLUGINS, [0, 0, 0, 0, 3, 1, 1, 0], strict=True)],
               "disabled": [{"name": "*"}]}}}]}
    return Framework(load_config(doc).profiles[0], in_tree_registry(), Handle())


@pytest.mark.parametrize("seed", range(0, CASES, 4))
def test_runtime_batch_and_per_node_agree(seed: int) -> None:
    """Framework.filter_batch (first rejecting plugin, its reasons) equals Framework.run_filter
    node by node; Framework.run_score equals Σ weight × normalized per-node scores."""
    fw = _framework()
    _rng, _names, snap, pod = random_cluster(seed)
    state = CycleState()
    _res, st, _ = fw.run_pre_filter(state, pod, snap)
    assert st.is_success(), st
    idx = np.arange(snap.num_nodes, dtype=np.int64)
    out = fw.filter_batch(state, pod, snap, idx)
    feasible = []
    for i, ni in enumerate(snap.node_infos):
        s = fw.run_filter(state, pod, ni)
        b = out.status_at(i, fw.filter_names)
        assert (b.code, b.reasons, b.plugin if b.code else "") == (
            s.code, s.reasons, s.plugin if s.code else ""), ni.name
        if s.is_success():
            feasible.append(i)
    fidx = np.array(feasible, dtype=np.int64)
    fw.run_pre_score(state, pod, NodeList([snap.node_infos[i] for i in feasible], fidx))
    scored = fw.run_score(state, pod, snap, fidx)
    want = np.zeros(len(fidx), dtype=np.int64)
    for p in fw.score:
        if p.name in state.skip_score:
            assert p.name not in scored.plugins
            continue
        raw = np.array([p.score(state, pod, snap.node_infos[i]) for i in feasible],
                       dtype=np.int64)
        norm = getattr(p, "normalize_score", None)
        if norm is not None:
            raw = norm(state, pod, raw)
        want += fw.score_weights[p.name] * raw
    assert scored.totals.tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_row_score_cache_follows_changes(seed: int) -> None:
    """BalancedAllocation's and NodeResourcesFit's batch forms keep scores per row and pod
    shape between cycles (a RowMemo; a few stale rows scored by the per-node form): after
    pods are added to and removed from nodes, and a node's allocatable changes, they still
    give the per-node form's scores."""
    from kubesched.cache.cache import Cache
    from kubesched.framework.snapshot import Snapshot

    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(1, 10))]
    nodes = {n: random_node(rng, n) for n in names}
    cache = Cache()
    for node in nodes.values():
        cache.add_node(node)
    snap = Snapshot()
    shapes = [random_pod(rng, names=names) for _ in range(3)]
    plugins = [BalancedAllocation(None, Handle(features=FeatureGates(v)))
               for v in SUPPORTED_VERSIONS]
    plugins += [Fit(random_fit_args(rng), Handle()) for _ in range(3)]
    placed: list = []
    for step in range(30):
        cache.update_snapshot(snap)
        pod = rng.choice(shapes)
        idx = _candidates(rng, snap.num_nodes)
        for plugin in plugins:
            _agree_scores(plugin, CycleState(), pod, snap, idx)
        roll = rng.random()
        if roll < 0.6 or not placed:
            p = random_pod(rng, node=rng.choice(names))
            p.metadata.name = f"p{step}"
            p.metadata.uid = f"uid-{step}"
            cache.add_pod(p)
            placed.append(p)
        elif roll < 0.85:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            name = rng.choice(names)
            new = random_node(rng, name)
            cache.update_node(nodes[name], new)
            nodes[name] = new
