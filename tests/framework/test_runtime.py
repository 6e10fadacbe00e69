"""The framework runtime: plugin order, first failing Filter, Skip, normalize and weights,
the nominated-pods two passes — with small fake plugins in a custom registry."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.config import load_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    BindPlugin,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status, skip, unresolvable, unschedulable
from kubesched.plugins.prioritysort import PrioritySort
from kubesched.testing import snapshot_from_nodes


class Binder(BindPlugin):
    name = "Binder"

    def bind(self, state, pod, node_name):
        return None


class RejectOdd(FilterPlugin):
    """Rejects nodes whose name ends in an odd digit."""
    name = "RejectOdd"

    def filter(self, state, pod, node_info):
        if int(node_info.name[-1]) % 2:
            return unschedulable("odd")
        return None


class RejectAll(FilterPlugin):
    name = "RejectAll"

    def filter(self, state, pod, node_info):
        return unresolvable("nope")


class SkippingFilter(PreFilterPlugin, FilterPlugin):
    name = "SkippingFilter"

    def pre_filter(self, state, pod, snapshot):
        return None, skip()

    def filter(self, state, pod, node_info):
        raise AssertionError("a plugin skipped at PreFilter must not filter")


class ByDigit(ScorePlugin):
    """Raw score = the node's last digit × 10, normalized so the best is 100."""
    name = "ByDigit"

    def score(self, state, pod, node_info):
        return int(node_info.name[-1]) * 10

    def normalize_score(self, state, pod, scores):
        m = scores.max()
        return scores * 100 // m if m else scores


class Flat(PreScorePlugin, ScorePlugin):
    name = "Flat"

    def pre_score(self, state, pod, nodes):
        return None

    def score(self, state, pod, node_info):
        return 7


class SkippedScore(PreScorePlugin, ScorePlugin):
    name = "SkippedScore"

    def pre_score(self, state, pod, nodes):
        return skip()

    def score(self, state, pod, node_info):
        raise AssertionError("skipped at PreScore")


class Sorter(PrioritySort):
    name = "Sorter"


REGISTRY = {c.name: c for c in (Binder, RejectOdd, RejectAll, SkippingFilter, ByDigit, Flat,
                                 SkippedScore, Sorter)}


def framework(filters: list[str], scores: list[tuple[str, int]], prefilters=()) -> Framework:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "test", "plugins": {
               "multiPoint": {"disabled": [{"name": "*"}]},
               "queueSort": {"enabled": [{"name": "Sorter"}]},
               "preFilter": {"enabled": [{"name": n} for n in prefilters]},
               "filter": {"enabled": [{"name": n} for n in filters]},
               "preScore": {"enabled": [{"name": n} for n, _ in scores
                                        if issubclass(REGISTRY[n], PreScorePlugin)]},
               "score": {"enabled": [{"name": n, "weight": w} for n, w in scores]},
               "bind": {"enabled": [{"name": "Binder"}]}}}]}
    cfg = load_config(doc)
    return Framework(cfg.profiles[0], REGISTRY, Handle())


def snapshot(n: int) -> Snapshot:
    nodes = [parse_node({"metadata": {"name": f"node-{i}"},
                         "status": {"capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
             for i in range(n)]
    return snapshot_from_nodes(nodes, [])


POD = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})


def test_first_failing_filter_decides_and_loop_form_matches_batch():
    fwk = framework(["RejectOdd", "RejectAll"], [("ByDigit", 1)])
    snap = snapshot(4)
    out = fwk.filter_batch(CycleState(), POD, snap, np.arange(4))
    failed = out.failed_nodes(np.arange(4), [ni.name for ni in snap.node_infos],
                              fwk.filter_names)
    statuses = [failed.status(i) for i in range(4)]
    assert [(s.plugin, s.reasons) for s in statuses] == [
        ("RejectAll", ("nope",)), ("RejectOdd", ("odd",)),
        ("RejectAll", ("nope",)), ("RejectOdd", ("odd",))]
    assert statuses[0].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    for i, ni in enumerate(snap.node_infos):
        per_node = fwk.run_filter(CycleState(), POD, ni)
        assert (per_node.plugin, per_node.reasons) == (statuses[i].plugin, statuses[i].reasons)


def test_prefilter_skip_skips_the_filter():
    fwk = framework(["SkippingFilter"], [("ByDigit", 1)], prefilters=["SkippingFilter"])
    state = CycleState()
    _res, st, _ = fwk.run_pre_filter(state, POD, snapshot(2))
    assert st.is_success()
    assert "SkippingFilter" in state.skip_filter
    out = fwk.filter_batch(state, POD, snapshot(2), np.arange(2))
    assert not out.codes.any()


def test_scores_are_normalized_then_weighted_and_prescore_skip_drops_a_plugin():
    fwk = framework([], [("ByDigit", 3), ("Flat", 2), ("SkippedScore", 5)])
    snap = snapshot(5)
    state = CycleState()
    from kubesched.framework.interface import NodeList

    idx = np.array([1, 2, 4])
    fwk.run_pre_score(state, POD, NodeList([snap.node_infos[i] for i in idx], idx))
    out = fwk.run_score(state, POD, snap, idx)
    assert out.plugins == ["ByDigit", "Flat"]
    assert out.scores.tolist() == [[25, 50, 100], [7, 7, 7]]
    assert out.totals.tolist() == [25 * 3 + 14, 50 * 3 + 14, 100 * 3 + 14]


def test_zero_weight_becomes_one():
    fwk = framework([], [("Flat", 0)])
    assert fwk.score_weights == {"Flat": 1}


def test_out_of_range_normalized_score_is_an_error():
    from kubesched.framework.interface import PluginError

    class TooHigh(ScorePlugin):
        name = "TooHigh"

        def score(self, state, pod, node_info):
            return 101

    REGISTRY["TooHigh"] = TooHigh
    try:
        fwk = framework([], [("TooHigh", 1)])
    finally:
        del REGISTRY["TooHigh"]
    with pytest.raises(PluginError, match="invalid score 101"):
        fwk.run_score(CycleState(), POD, snapshot(2), np.arange(2))


def test_nominated_pods_two_passes():
    """A node that fits only without the higher-priority nominated pod is rejected."""

    class FitsOnePod(FilterPlugin):
        name = "FitsOnePod"

        def filter(self, state, pod, node_info):
            return unschedulable("full") if len(node_info.pods) >= 1 else None

    REGISTRY["FitsOnePod"] = FitsOnePod
    try:
        fwk = framework(["FitsOnePod"], [("Flat", 1)])
    finally:
        del REGISTRY["FitsOnePod"]
    high = parse_pod({"metadata": {"name": "high", "uid": "high"},
                      "spec": {"priority": 10, "containers": [{"name": "c"}]}})
    low = parse_pod({"metadata": {"name": "low", "uid": "low"},
                     "spec": {"priority": 0, "containers": [{"name": "c"}]}})
    fwk.handle.nominated_pods = lambda node: [high] if node == "node-0" else []
    snap = snapshot(2)
    st = fwk.run_filter_with_nominated(CycleState(), low, snap.node_infos[0])
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ("full",))
    assert fwk.run_filter_with_nominated(CycleState(), low, snap.node_infos[1]).is_success()
    # a pod of higher priority than the nominated one ignores it
    higher = parse_pod({"metadata": {"name": "x", "uid": "x"},
                        "spec": {"priority": 20, "containers": [{"name": "c"}]}})
    assert fwk.run_filter_with_nominated(CycleState(), higher, snap.node_infos[0]).is_success()


def test_reserve_rejection_and_error_wrapping():
    from kubesched.framework.runtime import _first_failure

    class P:
        def __init__(self, name, st):
            self.name, self.st = name, st

    ok = P("a", None)
    rej = P("b", unschedulable("no room"))
    err = P("c", Status(Code.ERROR, ("boom",)))
    def calls(*plugins):
        return [(p, p) for p in plugins]  # (plugin, its method): here the plugin itself

    st = _first_failure(calls(ok, rej, err), "Reserve", lambda p: p.st)
    assert (st.code, st.plugin, st.reasons) == (Code.UNSCHEDULABLE, "b", ("no room",))
    st = _first_failure(calls(ok, err), "PreBind", lambda p: p.st)
    assert st.code == Code.ERROR and st.reasons == ('running PreBind plugin "c": boom',)


def test_wait_on_permit_passes_success_and_rejection_and_wraps_other_failures():
    from kubesched.framework.waiting import WaitingPods

    fwk = framework([], [])
    waiting = WaitingPods()
    allowed = waiting.add(POD, "n1", {"Gang": 10.0}, 0.0, lambda wp: None)
    allowed.allow("Gang")
    assert fwk.wait_on_permit(allowed).is_success()
    rejected = waiting.add(POD, "n1", {"Gang": 10.0}, 0.0, lambda wp: None)
    rejected.reject("Gang", "gang too small")
    st = fwk.wait_on_permit(rejected)
    assert (st.code, st.plugin, st.reasons) == (Code.UNSCHEDULABLE, "Gang", ("gang too small",))
    preempted = waiting.add(POD, "n1", {"Gang": 10.0}, 0.0, lambda wp: None)
    preempted.preempt("DefaultPreemption", "preempted by a/b")
    st = fwk.wait_on_permit(preempted)
    assert (st.code, st.plugin, st.reasons) == (
        Code.ERROR, "DefaultPreemption", ("waiting on permit for pod: preempted by a/b",))
