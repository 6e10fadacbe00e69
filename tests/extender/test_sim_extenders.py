"""Extenders in whole simulations, explain and config loading: placements, FitError
messages and failures exactly as upstream's rules give them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.cli import main
from kubesched.config import load_config
from kubesched.errors import InputError
from kubesched.explain import explain

from .conftest import FakeExtender, node_names, predicate_verb, prioritizer_verb

GPU = "example.com/gpu"


def node(name: str, cpu: str = "4", gpu: int = 0) -> str:
    extra = f", {GPU}: '{gpu}'" if gpu else ""
    return (f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
            f"status: {{capacity: {{cpu: '{cpu}', memory: 8Gi, pods: '110'{extra}}}}}\n")


def pod(name: str, cpu: str = "1", gpu: int = 0, prio: int | None = None,
        node_name: str = "") -> str:
    res = f"cpu: '{cpu}'" + (f", {GPU}: '{gpu}'" if gpu else "")
    lim = f", limits: {{{GPU}: '{gpu}'}}" if gpu else ""
    spec = f"nodeName: {node_name}, " if node_name else ""
    spec += f"priority: {prio}, " if prio is not None else ""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, uid: {name}}}\n"
            f"spec: {{{spec}containers: [{{name: c, resources: {{requests: {{{res}}}{lim}}}}}]}}\n")


def config(*extenders: dict[str, Any]) -> str:
    return ("---\napiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            f"extenders: {json.dumps(list(extenders))}\n")


def simulate(text: str) -> tuple[SimCluster, dict[str, Any]]:
    scen = load_scenario_text(text, "t.yaml")
    s = SimCluster(scen, load_config(scen.config), check=True)
    result = s.run()
    return s, {r.key.split("/")[1]: r for r in result.records}


def test_filter_extender_narrows_the_nodes(extender: FakeExtender) -> None:
    extender.verbs["filter"] = predicate_verb(lambda n: n == "n3")
    _s, recs = simulate(node("n1") + node("n2") + node("n3") + pod("a") + pod("b") + config(
        {"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True}))
    assert recs["a"].node == recs["b"].node == "n3"
    # one call per pod and cycle, with the nodes the framework's filters passed
    assert [c["NodeNames"] for c in extender.calls("filter")] == [["n1", "n2", "n3"]] * 2


def test_fit_error_counts_extender_reasons_and_preemption_skips_unresolvable(
        extender: FakeExtender) -> None:
    def verb(args: dict[str, Any]) -> tuple[int, Any]:
        return 200, {"NodeNames": [], "FailedNodes": {"n1": "no licence here"},
                     "FailedAndUnresolvableNodes": {"n2": "wrong rack"}}

    extender.verbs["filter"] = verb
    _s, recs = simulate(node("n1") + node("n2") + node("n3", cpu="1") + pod("big", cpu="2")
                        + config({"urlPrefix": extender.url, "filterVerb": "filter",
                                  "nodeCacheCapable": True}))
    assert recs["big"].node is None
    # n3 fails NodeResourcesFit before the extender; n2 is not a preemption candidate
    assert recs["big"].message == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 no licence here, 1 wrong rack. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption "
        "victims found for incoming pod, 2 Preemption is not helpful for scheduling.")


def test_non_ignorable_error_fails_the_cycle_and_loses_nothing(extender: FakeExtender) -> None:
    extender.verbs["filter"] = lambda a: (500, b"down")
    s, recs = simulate(node("n1", gpu=2) + pod("plain") + pod("gpu", gpu=1) + config(
        {"urlPrefix": extender.url, "filterVerb": "filter",
         "managedResources": [{"name": GPU}]}))
    assert recs["plain"].node == "n1"  # not interested: the extender never saw it
    assert recs["gpu"].node is None
    assert recs["gpu"].message == (f"failed filter with extender at URL {extender.url}/filter,"
                                   " code 500")
    assert recs["gpu"].attempts >= 1
    gpu_pod = next(p for p in s.pods.values() if p.name == "gpu")
    cond = gpu_pod.status.conditions[-1]
    assert (cond.type, cond.status, cond.reason) == ("PodScheduled", "False", "SchedulerError")
    assert all(c["Pod"]["metadata"]["name"] == "gpu" for c in extender.calls("filter"))


def test_ignorable_error_and_timeout_are_skipped(extender: FakeExtender,
                                                  extender2: FakeExtender) -> None:
    extender.verbs["filter"] = lambda a: (200, b"not json")
    extender2.verbs["filter"] = predicate_verb(lambda n: True)
    extender2.delay = 0.3
    _s, recs = simulate(node("n1") + pod("a") + config(
        {"urlPrefix": extender.url, "filterVerb": "filter", "ignorable": True},
        {"urlPrefix": extender2.url, "filterVerb": "filter", "ignorable": True,
         "httpTimeout": "50ms"}))
    assert recs["a"].node == "n1"
    assert len(extender.calls("filter")) == 1 and len(extender2.calls("filter")) == 1


def test_non_ignorable_timeout_message(extender: FakeExtender) -> None:
    extender.verbs["filter"] = predicate_verb(lambda n: True)
    extender.delay = 0.3
    _s, recs = simulate(node("n1") + pod("a") + config(
        {"urlPrefix": extender.url, "filterVerb": "filter", "httpTimeout": "50ms"}))
    assert recs["a"].message == (f'Post "{extender.url}/filter": context deadline exceeded '
                                 "(Client.Timeout exceeded while awaiting headers)")


def test_prioritizer_weight_decides_and_failures_are_ignored(extender: FakeExtender,
                                                             extender2: FakeExtender) -> None:
    # n2 is slightly better for the framework (emptier); the extender's 5 × weight 2 × 10
    # = 100 for n1 outweighs it. The second prioritizer fails: no score, no failure.
    extender.verbs["prioritize"] = prioritizer_verb(lambda n: 5 if n == "n1" else 0)
    extender2.verbs["prioritize"] = lambda a: (500, b"")
    _s, recs = simulate(node("n1") + node("n2") + pod("x", node_name="n1") + pod("a") + config(
        {"urlPrefix": extender.url, "prioritizeVerb": "prioritize", "weight": 2},
        {"urlPrefix": extender2.url, "prioritizeVerb": "prioritize", "weight": 1}))
    assert recs["a"].node == "n1"
    assert len(extender2.calls("prioritize")) == 1


def test_bind_extender_binds_pods_it_is_interested_in(extender: FakeExtender) -> None:
    extender.verbs["bind"] = lambda a: (200, {})
    s, recs = simulate(node("n1", gpu=1) + pod("plain") + pod("gpu", gpu=1) + config(
        {"urlPrefix": extender.url, "bindVerb": "bind",
         "managedResources": [{"name": GPU}]}))
    assert recs["gpu"].node == recs["plain"].node == "n1"
    assert extender.calls("bind") == [{"PodName": "gpu", "PodNamespace": "default",
                                       "PodUID": "gpu", "Node": "n1"}]
    assert s.bound_count == 2


def test_bind_extender_error_fails_the_binding(extender: FakeExtender) -> None:
    extender.verbs["bind"] = lambda a: (200, {"Error": "bind refused"})
    _s, recs = simulate(node("n1") + pod("a") + config(
        {"urlPrefix": extender.url, "bindVerb": "bind"}))
    assert recs["a"].node is None and recs["a"].message == "bind refused"


def test_ignorable_bind_extender_error_falls_back_to_the_bind_plugins(
        extender: FakeExtender) -> None:
    extender.verbs["bind"] = lambda a: (502, b"")
    _s, recs = simulate(node("n1") + pod("a") + config(
        {"urlPrefix": extender.url, "bindVerb": "bind", "ignorable": True}))
    assert recs["a"].node == "n1"


def test_managed_resource_ignored_by_scheduler(extender: FakeExtender) -> None:
    # no node advertises the GPU: NodeResourcesFit would refuse the pod, unless the
    # extender that manages it tells the scheduler to ignore it
    extender.verbs["filter"] = predicate_verb(lambda n: n == "n2")
    base = node("n1") + node("n2") + pod("gpu", gpu=1)
    _s, recs = simulate(base + config({"urlPrefix": extender.url, "filterVerb": "filter",
                                       "managedResources": [{"name": GPU}]}))
    assert recs["gpu"].node is None
    assert recs["gpu"].message.startswith(f"0/2 nodes are available: 2 Insufficient {GPU}.")
    assert not extender.calls("filter")
    _s, recs = simulate(base + config({"urlPrefix": extender.url, "filterVerb": "filter",
                                       "nodeCacheCapable": True,
                                       "managedResources": [{"name": GPU,
                                                             "ignoredByScheduler": True}]}))
    assert recs["gpu"].node == "n2"


def test_names_answered_to_an_extender_without_node_cache_are_ignored(
        extender: FakeExtender) -> None:
    # upstream reads NodeNames only from a nodeCacheCapable extender: an answer of names
    # alone passes no node
    extender.verbs["filter"] = predicate_verb(lambda n: n == "n2")
    _s, recs = simulate(node("n1") + node("n2") + pod("a") + config(
        {"urlPrefix": extender.url, "filterVerb": "filter"}))
    assert recs["a"].message.startswith("0/2 nodes are available: 1 FakeExtender: node failed.")


def test_preempt_verb_chooses_the_node(extender: FakeExtender) -> None:
    # both nodes would do for the framework (one victim each, same priority); the
    # extender keeps only n2's victims
    def preempt(args: dict[str, Any]) -> tuple[int, Any]:
        meta = args["NodeNameToMetaVictims"]
        assert sorted(meta) == ["n1", "n2"]
        return 200, {"NodeNameToMetaVictims": {"n2": meta["n2"]}}

    extender.verbs["preempt"] = preempt
    s, recs = simulate(node("n1", cpu="1") + node("n2", cpu="1")
                       + pod("low1", prio=1, node_name="n1") + pod("low2", prio=1,
                                                                  node_name="n2")
                       + pod("high", prio=100) + config(
                           {"urlPrefix": extender.url, "preemptVerb": "preempt",
                            "nodeCacheCapable": True}))
    assert recs["high"].node == "n2"
    assert {p.name for p in s.pods.values()} == {"low1", "high"}


def test_preempt_verb_error(extender: FakeExtender) -> None:
    extender.verbs["preempt"] = lambda a: (200, {"NodeNameToMetaVictims": {"n1": {"Pods": []}}})
    _s, recs = simulate(node("n1", cpu="1") + pod("low", prio=1, node_name="n1")
                        + pod("high", prio=100) + config(
                            {"urlPrefix": extender.url, "preemptVerb": "preempt"}))
    assert recs["high"].node is None
    assert recs["high"].message == ('0/1 nodes are available: 1 Insufficient cpu. preemption: '
                                    'expected at least one victim pod on node "n1"')


# ------------------------------------------------------------------ explain


def test_explain_shows_extender_verdicts_and_scores(extender: FakeExtender,
                                                    tmp_path: Any) -> None:
    extender.verbs["filter"] = lambda a: (200, {"NodeNames": ["n1", "n2"],
                                                "FailedNodes": {"n3": "no licence here"}})
    extender.verbs["prioritize"] = lambda a: (200, [{"Host": n, "Score": 3}
                                                    for n in node_names(a)])
    text = node("n1") + node("n2") + node("n3") + node("n4", cpu="0") + pod("a") + config(
        {"urlPrefix": extender.url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
         "weight": 2, "nodeCacheCapable": True})
    scen = load_scenario_text(text, "t.yaml")
    out = explain(scen, load_config(scen.config), "default/a")
    rows = {r["node"]: r for r in out["nodes"]}
    url = extender.url
    assert rows["n1"]["extenders"] == [{"extender": url, "verdict": "Success", "score": 3,
                                        "weighted": 60}]
    assert rows["n1"]["total"] > 60 and rows["n1"]["total"] == rows["n2"]["total"]
    assert rows["n3"] == {"node": "n3", "feasible": False, "plugin": None,
                          "reasons": ["no licence here"],
                          "extenders": [{"extender": url, "verdict": "Unschedulable",
                                         "reasons": ["no licence here"]}]}
    assert rows["n4"]["plugin"] == "NodeResourcesFit" and rows["n4"]["extenders"] == []
    assert out["selected"] == ["n1", "n2"]

    path = tmp_path / "s.yaml"
    path.write_text(text)
    res = CliRunner().invoke(main, ["explain", str(path), "--pod", "default/a"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert f"extender {url}: no licence here" in res.output
    assert f"extender {url} 3 (+60)" in res.output


def test_explain_without_extenders_keeps_the_contract() -> None:
    scen = load_scenario_text(node("n1") + pod("a"), "t.yaml")
    out = explain(scen, load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                     "kind": "KubeSchedulerConfiguration"}), "default/a")
    assert "extenders" not in out["nodes"][0]


# ------------------------------------------------------------------ bad configuration


@pytest.mark.parametrize("url", ["not a url", "127.0.0.1:8888", "ftp://host/x", "http://",
                                 "http://host:port/x", ""])
def test_url_prefix_must_be_a_url(url: str) -> None:
    with pytest.raises(InputError) as e:
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                     "kind": "KubeSchedulerConfiguration",
                     "extenders": [{"urlPrefix": "http://ok"}, {"urlPrefix": url}]})
    assert e.value.field == "extenders[1].urlPrefix"
    assert "must be an http:// or https:// URL" in str(e.value)


def test_bad_url_prefix_exits_2_naming_the_field(tmp_path: Any) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(config({"urlPrefix": "localhost:8888", "filterVerb": "filter"}))
    scen = tmp_path / "s.yaml"
    scen.write_text(node("n1") + pod("a"))
    res = CliRunner().invoke(main, ["simulate", str(scen), "--config", str(cfg)])
    assert res.exit_code == 2
    assert "extenders[0].urlPrefix" in res.output and "localhost:8888" in res.output


def test_ignored_resources_need_node_resources_fit_args() -> None:
    with pytest.raises(InputError, match="can't find NodeResourcesFitArgs in plugin config"):
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                     "kind": "KubeSchedulerConfiguration",
                     "profiles": [{"schedulerName": "s", "plugins": {
                         "multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}],
                     "extenders": [{"urlPrefix": "http://e", "managedResources": [
                         {"name": GPU, "ignoredByScheduler": True}]}]})
