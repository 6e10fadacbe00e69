"""kubesched explain against real upstream verdicts (../shared/golden/explain*/)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from kubesched.explain import explain
from kubesched.plugins.registry import in_tree_registry
from shared_files import golden_cases, golden_config, load_golden

FOLDERS = ["explain", "explain-config", "explain-spread", "explain-volumes"]
CASES = [(f, p) for f in FOLDERS for p in golden_cases(f)]


# The verdicts come from v1.30.6; reasons upstream reworded since are brought to the
# words of v1.35, the oldest release kubesched decides as (kube-scheduler v1.36.2 says the
# same: tests/kube/oracle/): TaintToleration no longer names the taint (kubernetes#134740),
# VolumeBinding's node conflict (kubernetes#129887) and VolumeRestrictions' ReadWriteOncePod
# conflict (kubernetes#129145) were reworded in 2025, before v1.35.
_REWORDED = [
    (re.compile(r"node\(s\) had untolerated taint \{[^}]*\}"), "node(s) had untolerated taint(s)"),
    (re.compile(re.escape("node(s) had volume node affinity conflict")),
     "node(s) didn't match PersistentVolume's node affinity"),
    (re.compile(re.escape("node has pod using PersistentVolumeClaim with the same name and "
                          "ReadWriteOncePod access mode")),
     "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
     "already in-use by another pod"),
]


def _reword(reason: str) -> str:
    for old, new in _REWORDED:
        reason = old.sub(new, reason)
    return reason


def _v135_message(msg: str | None) -> str | None:
    """A v1.30 FitError message in v1.35's words, recounted and re-sorted as upstream's
    FitError sorts its "N reason" items."""
    if msg is None or not any(old.search(msg) for old, _ in _REWORDED):
        return msg
    head, body = msg.split(": ", 1)
    counts: Counter[str] = Counter()
    for item in body.rstrip(".").split(", "):
        n, reason = item.split(" ", 1)
        counts[_reword(reason)] += int(n)
    return f"{head}: " + ", ".join(sorted(f"{c} {r}" for r, c in counts.items())) + "."


# Verdicts where v1.30.6 and v1.35 differ by design, so v1.30's answer is not v1.35's.
VERSION_DIFFERENCES = {
    "case-120025": "two ScheduleAnyway constraints on one topology key: v1.30 shared one "
                   "counter between them, v1.33+ counts per constraint (kubernetes#129119); "
                   "v1.35's API server would reject the pod as a duplicate constraint",
}


def _upstream(path: Path) -> dict:
    verdict = json.loads(path.with_suffix("").with_suffix(".upstream.json").read_text())[
        "results"][0]
    verdict["filtered"] = {n: _reword(r)
                           for n, r in verdict.get("filtered", {}).items()}
    verdict["error"] = _v135_message(verdict.get("error"))
    return verdict


def _decided_by(verdict: dict) -> set[str]:
    plugins = {v.split(":")[0] for v in verdict.get("filtered", {}).values()}
    for s in verdict.get("scores", {}).values():
        plugins |= set(s["plugins"])
    return plugins


@pytest.mark.parametrize(("folder", "path"), CASES,
                         ids=[f"{f}/{p.stem}" for f, p in CASES])
def test_explain_matches_upstream(folder: str, path: Path) -> None:
    if path.stem in VERSION_DIFFERENCES:
        pytest.skip(VERSION_DIFFERENCES[path.stem])
    want = _upstream(path)
    missing = _decided_by(want) - set(in_tree_registry())
    if missing:
        pytest.skip(f"decided by plugins not yet exact: {sorted(missing)}")
    scenario = load_golden(path)
    config = golden_config(scenario, path)
    got = explain(scenario, config, want["pod"])

    feasible = {n["node"]: n for n in got["nodes"] if n["feasible"]}
    filtered = {n["node"]: f"{n['plugin']}: {', '.join(n['reasons'])}"
                for n in got["nodes"] if not n["feasible"]}
    assert filtered == want.get("filtered", {})
    assert set(feasible) == set(want.get("scores", {}))
    weights = _weights(config, want)
    for name, s in want.get("scores", {}).items():
        ours = {p: v * weights[p] for p, v in feasible[name]["scores"].items()}
        assert ours == s["plugins"], name
        assert feasible[name]["total"] == s["total"], name
    assert got["selected"] == sorted(want.get("top_nodes") or [])
    ours_msg = _without_post_filter(got["message"]) if got["message"] else None
    assert ours_msg == want.get("error")


# The verdicts ran without PostFilter; v1.35's default profile has two PostFilter plugins,
# DynamicResources ("no new claims to deallocate", or CycleState's "not found" when an earlier
# PreFilter rejected the pod) then DefaultPreemption, whose messages follow the FitError's.
_POST_FILTER = re.compile(r" (?:no new claims to deallocate, )?preemption: .*$| not found$")


def _without_post_filter(msg: str) -> str:
    return _POST_FILTER.sub("", msg)


def _weights(config, want) -> dict[str, int]:
    from kubesched.config import expand_plugins
    from kubesched.framework.interface import implements

    reg = in_tree_registry()
    profile = next(p for p in config.profiles if p.scheduler_name == "default-scheduler")
    plan = expand_plugins(profile, lambda n, pt: n in reg and implements(reg[n], pt))
    return {n: max(w, 1) for n, w in plan.get("score", [])}
