"""Upstream's TestSchedulerWithExtenders (pkg/scheduler/extender_test.go) and the extender
cases of schedule_one_test.go, with the fake extenders answering over real HTTP.

Each case: the profile's plugins (upstream's test plugins: TrueFilter, EqualPrioritizer,
Node2Prioritizer), the extenders (filter / prioritize verbs, weight, ignorable, interest),
and the expected SuggestedHost, EvaluatedNodes and FeasibleNodes — or the error message.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.clock import VirtualClock
from kubesched.config import load_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderError
from kubesched.framework.interface import FilterPlugin, ScorePlugin
from kubesched.framework.types import FitError
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler

from .conftest import FakeExtender, error_verb, predicate_verb, prioritizer_verb


class TrueFilter(FilterPlugin):
    name = "TrueFilter"

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class EqualPrioritizer(ScorePlugin):
    name = "EqualPrioritizer"

    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 1


class Node2Prioritizer(ScorePlugin):
    name = "Node2Prioritizer"

    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 100 if node_info.node.name == "node2" else 10


REGISTRY = {**in_tree_registry(), "TrueFilter": TrueFilter,
            "EqualPrioritizer": EqualPrioritizer, "Node2Prioritizer": Node2Prioritizer}

TRUE = predicate_verb(lambda n: True)
FALSE = predicate_verb(lambda n: False)
NODE1 = predicate_verb(lambda n: n == "node1")
NODE2 = predicate_verb(lambda n: n == "node2")
# the fake extender's prioritizers, combined with their weight 10 as it does
NODE1_PRIO = prioritizer_verb(lambda n: (10 if n == "node1" else 1) * 10)
NODE2_PRIO = prioritizer_verb(lambda n: (10 if n == "node2" else 1) * 10)


def ERROR_PRIO(args: dict[str, Any]) -> tuple[int, Any]:
    return 500, b"prioritizer broke"


def profile(filters: list[str], scores: list[tuple[str, int]]) -> dict[str, Any]:
    plugins: dict[str, Any] = {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]},
    }
    if filters:
        plugins["filter"] = {"enabled": [{"name": f} for f in filters]}
    if scores:
        plugins["score"] = {"enabled": [{"name": n, "weight": w} for n, w in scores]}
    return {"schedulerName": "default-scheduler", "plugins": plugins}


def build(exts: list[tuple[FakeExtender, dict[str, Any]]], prof: dict[str, Any],
          nodes: list[str]) -> tuple[Scheduler, Any]:
    cfg_exts = []
    for fake, spec in exts:
        entry = {"urlPrefix": fake.url, "nodeCacheCapable": True}
        for verb in ("filter", "prioritize"):
            if verb in spec:
                fake.verbs[verb] = spec[verb]
                entry[f"{verb}Verb"] = verb
        entry.update(spec.get("config", {}))
        cfg_exts.append(entry)
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration", "profiles": [prof],
                       "extenders": cfg_exts})
    sched = Scheduler(_NoBackend(), VirtualClock(), cfg, registry=REGISTRY)
    text = "".join(f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\n"
                   "status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}\n" for n in nodes)
    text += ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: p-uid}\n"
             "spec: {containers: [{name: c, resources: {requests: {example.com/foo: '1'}, "
             "limits: {example.com/foo: '1'}}}]}\n")
    scen = load_scenario_text(text, "t.yaml")
    for node in scen.nodes:
        sched.cache.add_node(node)
    return sched, scen.pods[0]


class _NoBackend:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"schedule_pod must not reach the backend ({name})")


def run(sched: Scheduler, pod: Any) -> tuple[str, int, int]:
    fwk = sched.profiles["default-scheduler"]
    r = sched.schedule_pod(fwk, CycleState(), pod)
    return r.suggested_host, r.evaluated_nodes, r.feasible_nodes


TF = ["TrueFilter"]

# name, filters, scores, extenders [(filter, prioritize, extra config)], expected
CASES: list[tuple[str, list[str], list[tuple[str, int]], list[dict[str, Any]], Any]] = [
    ("test 1", TF, [], [{"filter": TRUE}, {"filter": error_verb}], ExtenderError("some error")),
    ("test 2", TF, [], [{"filter": TRUE}, {"filter": FALSE}],
     FitError),
    ("test 3", TF, [("EqualPrioritizer", 1)], [{"filter": TRUE}, {"filter": NODE1}],
     ("node1", 2, 1)),
    ("test 4", TF, [], [{"filter": NODE2}, {"filter": NODE1}], FitError),
    ("test 5", TF, [], [{"filter": TRUE, "prioritize": ERROR_PRIO,
                         "config": {"weight": 1}}], ("node1", 1, 1)),
    ("test 6", TF, [], [{"filter": TRUE, "prioritize": NODE1_PRIO, "config": {"weight": 1}},
                        {"filter": TRUE, "prioritize": NODE2_PRIO, "config": {"weight": 5}}],
     ("node2", 2, 2)),
    ("test 7", TF, [("Node2Prioritizer", 20)],
     [{"filter": TRUE, "prioritize": NODE1_PRIO, "config": {"weight": 1}}], ("node2", 2, 2)),
    # not interested (it manages a resource the pod does not ask for): never called
    ("test 8", TF, [("Node2Prioritizer", 1)],
     [{"filter": error_verb, "prioritize": ERROR_PRIO,
       "config": {"weight": 1, "managedResources": [{"name": "example.com/other"}]}}],
     ("node2", 2, 2)),
    ("test 9", TF, [("EqualPrioritizer", 1)],
     [{"filter": error_verb, "config": {"ignorable": True}}, {"filter": NODE1}],
     ("node1", 2, 1)),
    ("test 10 - no scoring, extender filters configured, multiple feasible nodes are "
     "evaluated", TF, [], [{"filter": TRUE}, {"filter": NODE1}], ("node1", 2, 1)),
]


@pytest.mark.parametrize(("name", "filters", "scores", "specs", "want"), CASES,
                         ids=[c[0] for c in CASES])
def test_scheduler_with_extenders(name: str, filters: list[str], scores: list[tuple[str, int]],
                                  specs: list[dict[str, Any]], want: Any) -> None:
    fakes = [FakeExtender() for _ in specs]
    try:
        sched, pod = build(list(zip(fakes, specs, strict=True)), profile(filters, scores),
                           ["node1", "node2"] if name != "test 5" else ["node1"])
        if want is FitError:
            with pytest.raises(FitError) as fe:
                run(sched, pod)
            assert str(fe.value) == "0/2 nodes are available: 2 FakeExtender: node failed."
            assert "Extender" in fe.value.diagnosis.unschedulable_plugins
        elif isinstance(want, Exception):
            with pytest.raises(type(want), match=str(want)):
                run(sched, pod)
        else:
            assert run(sched, pod) == want
        if name == "test 8":
            assert not fakes[0].requests  # an uninterested extender is never called
    finally:
        for f in fakes:
            f.close()


def test_11_bind_extender_only_no_scoring_single_node_evaluated(extender: FakeExtender) -> None:
    extender.verbs["bind"] = lambda a: (200, {})
    sched, pod = build([(extender, {"config": {"bindVerb": "bind"}})], profile([], []),
                       ["node1", "node2"])
    assert run(sched, pod) == ("node1", 1, 1)
    assert not extender.requests  # binding happens in the binding cycle, not here
