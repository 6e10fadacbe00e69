"""Permit's Wait (issue 10): a waiting pod is parked with its resources reserved until
every waiting plugin allows it, a plugin rejects it, or its timeout passes on the virtual
clock; rejection and timeout unreserve and requeue it as upstream does."""

from __future__ import annotations

from typing import ClassVar

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import load_config
from kubesched.config.features import FeatureGates
from kubesched.framework import (
    Code,
    CycleState,
    PermitPlugin,
    ReservePlugin,
    Status,
)
from kubesched.framework.waiting import go_duration

NODE = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 4Gi, pods: "110"}}
"""


def pod(name: str, cpu: str = "1", pair: str = "", arrival: float = 0,
        priority: int = 0) -> str:
    labels = f"{{pair: {pair}}}" if pair else "{}"
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {labels}, "
            f"annotations: {{kubesched.io/arrival: '{arrival}'}}}}\nspec:\n"
            f"  priority: {priority}\n"
            f"  containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


class Pair(PermitPlugin, ReservePlugin):
    """Pods labelled pair=X bind together: the first waits, the second lets both go."""

    name = "Pair"
    timeout = 30.0
    unreserved: ClassVar[list[str]] = []

    def permit(self, state: CycleState, pod, node_name: str):
        key = pod.metadata.labels.get("pair")
        if not key:
            return None, 0
        partner = []
        self.handle.iterate_over_waiting_pods(
            lambda wp: partner.append(wp)
            if wp.pod.metadata.labels.get("pair") == key and wp.status is None else None)
        if partner:
            partner[0].allow(self.name)
            return None, 0
        return Status(Code.WAIT), self.timeout

    def reserve(self, state, pod, node_name):
        return None

    def unreserve(self, state, pod, node_name):
        Pair.unreserved.append(pod.name)


CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler", "plugins": {
              "multiPoint": {"enabled": [{"name": "Pair"}]}}}]}


def simulate(text: str, until: float | None = None,
             version: str | None = None) -> tuple[SimCluster, dict]:
    cfg = load_config(CONFIG, features=FeatureGates(version) if version else None)
    cfg.out_of_tree = {"Pair": Pair}
    Pair.unreserved = []
    sim = SimCluster(load_scenario_text(text), cfg, check=True)
    sim.until = until
    result = sim.run()
    return sim, {r.key: r for r in result.records}


def test_the_first_waits_until_its_partner_lets_it_go():
    _sim, recs = simulate(NODE + pod("a", pair="x") + pod("b", pair="x", arrival=12))
    assert (recs["default/a"].node, recs["default/a"].time) == ("n1", 12.0)
    assert (recs["default/b"].node, recs["default/b"].time) == ("n1", 12.0)
    assert recs["default/a"].attempts == recs["default/b"].attempts == 1


def test_a_waiting_pod_holds_its_resources():
    # "a" waits on 3 of the 4 cpus; "big" (2 cpus) does not fit while it waits
    _sim, recs = simulate(NODE + pod("a", "3", pair="x") + pod("big", "2", arrival=5)
                          + pod("b", "1", pair="x", arrival=10))
    assert recs["default/a"].node == recs["default/b"].node == "n1"
    big = recs["default/big"]
    assert big.node is None
    assert big.message is not None and big.message.startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")


def test_timeout_rejects_unreserves_and_requeues():
    _sim, recs = simulate(NODE + pod("a", pair="x"))
    a = recs["default/a"]
    assert a.node is None
    assert a.time == 30.0
    assert a.message == ("0/1 nodes are available: 1 rejected due to timeout after waiting "
                         "30s at plugin Pair.")
    assert Pair.unreserved == ["a"]


def test_a_pod_still_waiting_when_the_run_stops_says_so():
    _sim, recs = simulate(NODE + pod("a", pair="x"), until=10)
    assert recs["default/a"].message == "waiting at Permit on node n1 for Pair"


def test_rejected_by_a_plugin():
    class Veto(Pair):
        name = "Pair"

        def permit(self, state, pod, node_name):
            if pod.name == "judge":
                self.handle.iterate_over_waiting_pods(
                    lambda wp: wp.reject(self.name, "vetoed by the judge"))
                return None, 0
            return super().permit(state, pod, node_name)

    cfg = load_config(CONFIG)
    cfg.out_of_tree = {"Pair": Veto}
    sim = SimCluster(load_scenario_text(NODE + pod("a", pair="x") + pod("judge", arrival=3)),
                     cfg, check=True)
    recs = {r.key: r for r in sim.run().records}
    a = recs["default/a"]
    assert recs["default/judge"].node == "n1"
    # vetoed at t=3; the judge's binding happened meanwhile, so "a" is retried after its
    # backoff, waits again and times out: two cycles
    assert a.node is None and a.attempts == 2
    assert sim.event_counts["FailedScheduling"] == 2
    assert a.time == 33.0  # popped from backoff at once (PopFromBackoffQ), 30 s more


def test_a_waiting_victim_is_rejected_not_deleted_in_1_35():
    """v1.35: the waiting victim is rejected (Unschedulable): it waits in the unschedulable
    pods for a cluster event, its message the rejection."""
    text = NODE + pod("low", "3", pair="x") + pod("high", "3", arrival=5, priority=100)
    sim, recs = simulate(text, version="1.35")
    assert recs["default/high"].node == "n1"
    low = recs["default/low"]
    assert low.node is None and low.attempts == 1
    assert low.message == "0/1 nodes are available: 1 preempted."
    assert "default/low" in {p.key for p in sim.pods.values()}  # rejected, never deleted
    assert sim.event_counts["Preempted"] == 1


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_a_waiting_victim_is_preempted_into_backoff(version):
    """v1.36 (kubernetes#135719): preempting a waiting pod ends its wait with an Error, so
    it goes to backoffQ and is tried again after its backoff (1 s) instead of waiting for
    an event; it is not deleted."""
    text = NODE + pod("low", "3", pair="x") + pod("high", "3", arrival=5, priority=100)
    sim, recs = simulate(text, version=version)
    assert recs["default/high"].node == "n1"
    low = recs["default/low"]
    assert low.node is None
    assert low.attempts == 2  # retried from backoffQ, and then does not fit
    assert low.message is not None and low.message.startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")
    assert "default/low" in {p.key for p in sim.pods.values()}  # never deleted
    assert sim.event_counts["Preempted"] == 1


def test_preempt_and_reject_after_the_outcome_is_known():
    """Ported from upstream's TestWaitingPodReturnFalseOnAllowed and
    TestWaitingPodMultipleActions: once allowed, Preempt and Reject fail (the preemptor
    then deletes the pod through the API), and the pod stays allowed."""
    from kubesched.framework.waiting import WaitingPods

    (p,) = load_scenario_text(pod("test-pod")).pods
    waiting = WaitingPods()
    for action in ("preempt", "reject"):
        wp = waiting.add(p, "n1", {"plugin1": 10.0}, 0.0, lambda _wp: None)
        wp.allow("plugin1")
        assert getattr(wp, action)("some-plugin", "msg") is False
        assert wp.status is not None and wp.status.is_success()
    wp = waiting.add(p, "n1", {"plugin1": 10.0}, 0.0, lambda _wp: None)
    assert wp.preempt("preemption-plugin", "preempted") is True
    assert wp.status is not None and wp.status.code == Code.ERROR
    assert wp.status.plugin == "preemption-plugin"
    assert wp.reject("plugin2", "rejected") is False
    assert wp.preempt("preemption-plugin", "preempted") is False


def test_deleted_while_waiting_is_never_bound():
    cfg = load_config(CONFIG)
    cfg.out_of_tree = {"Pair": Pair}
    sim = SimCluster(load_scenario_text(NODE + pod("a", pair="x")), cfg, check=True)
    sim.until = 5
    sim.run()
    (a,) = [p for p in sim.pods.values() if p.name == "a"]
    sim.delete_pod(a, "deleted")
    sim.until = None
    sim.run_until_idle()
    assert not any(p.spec.node_name for p in sim.pods.values())
    assert sim.records[a.uid].node is None and sim.records[a.uid].message == "deleted"
    assert len(sim.scheduler.waiting) == 0
    assert not sim.scheduler.cache.is_assumed(a)


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"), (30, "30s"), (90, "1m30s"), (1.5, "1.5s"), (0.5, "500ms"), (900, "15m0s"),
    (3600, "1h0m0s"), (3723.25, "1h2m3.25s"), (0.0000015, "1.5µs"),
])
def test_go_durations(seconds, text):
    assert go_duration(seconds) == text
