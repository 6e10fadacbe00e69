"""InterPodAffinity alone against real upstream verdicts (../shared/golden/explain*/): nodes
upstream rejected with InterPodAffinity are rejected with the same reason, feasible nodes
pass, and over upstream's feasible nodes the normalized score × the profile's weight is
upstream's (absent exactly when upstream's PreScore said Skip). Both forms are checked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kubesched.config import default_config, expand_plugins, load_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList, implements
from kubesched.framework.status import Code
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.testing import snapshot_from_nodes
from shared_files import golden_cases, load_golden

FOLDERS = ["explain", "explain-spread", "explain-config"]
CASES = [(f, p) for f in FOLDERS for p in golden_cases(f)]
NAME = InterPodAffinity.name


def _impl(name: str, point: str) -> bool:
    return implements(InterPodAffinity, point) if name == NAME else True


@pytest.mark.skipif(not CASES, reason="no golden data")
@pytest.mark.parametrize(("folder", "path"), CASES, ids=[f"{f}/{p.stem}" for f, p in CASES])
def test_interpodaffinity_matches_upstream(folder: str, path: Path) -> None:
    want = json.loads(path.with_suffix("").with_suffix(".upstream.json").read_text())[
        "results"][0]
    scenario = load_golden(path)
    config = (load_config(scenario.config, str(path)) if scenario.config is not None
              else default_config())
    profile = next(p for p in config.profiles if p.scheduler_name == "default-scheduler")
    plan = expand_plugins(profile, _impl, check_required=False)
    filter_on = any(n == NAME for n, _ in plan["filter"])
    weight = dict(plan["score"]).get(NAME)

    running = [p for p in scenario.pods
               if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    target = next(p for p in scenario.pods if p.key == want["pod"])
    snap = snapshot_from_nodes(scenario.nodes, running)
    plugin = InterPodAffinity(profile.plugin_config.get(NAME),
                              Handle(snapshot=snap, namespaces=dict(scenario.namespaces)))

    # ---- PreFilter / Filter
    filtered = {n: r.split(": ", 1)[1] for n, r in want.get("filtered", {}).items()
                if r.startswith(NAME + ": ")}
    feasible = list(want.get("scores", {}))
    if filter_on:
        state = CycleState()
        _, pre = plugin.pre_filter(state, target, snap)
        if pre is not None and pre.code != Code.SKIP:
            assert not feasible
            for reason in filtered.values():
                assert reason == pre.message()
        elif pre is None:
            names = [*filtered, *feasible]
            idx = np.array([snap.table.index[n] for n in names], dtype=np.int64)
            batch = plugin.filter_batch(state, target, snap, idx)
            for i, n in enumerate(names):
                one = plugin.filter(state, target, snap.get(n))
                got = None if one is None else one.message()
                b = batch.status_at(i, NAME)
                assert (None if b.is_success() else b.message()) == got, n
                assert got == filtered.get(n), n
        else:
            assert not filtered

    # ---- PreScore / Score / NormalizeScore over upstream's feasible nodes
    if weight is None or len(feasible) < 2:
        return  # not scored (one feasible node: upstream skips scoring)
    idx = np.array(sorted(snap.table.index[n] for n in feasible), dtype=np.int64)
    infos = [snap.node_infos[i] for i in idx.tolist()]
    state = CycleState()
    st = plugin.pre_score(state, target, NodeList(infos, idx))
    upstream = {n: s["plugins"].get(NAME) for n, s in want["scores"].items()}
    if st is not None:
        assert st.code == Code.SKIP
        assert set(upstream.values()) == {None}
        return
    raw = np.array([plugin.score(state, target, ni) for ni in infos], dtype=np.int64)
    assert plugin.score_batch(state, target, snap, idx).tolist() == raw.tolist()
    norm = plugin.normalize_score(state, target, raw)
    got = {ni.name: int(v) * weight for ni, v in zip(infos, norm.tolist(), strict=True)}
    assert got == upstream
