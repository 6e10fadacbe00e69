"""``kubesched run`` in-process against the API server double: every schedulable pod bound
exactly once and nowhere it does not fit, under each fault and under all of them at once."""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.request
from typing import Any

import kube_double as kd
import pytest
from kube_double import ApiServerDouble, node, pod
from kube_helpers import assert_bound_once, assert_fits, make_runner, wait_until

from kubesched.config import load_config


def ours(double: ApiServerDouble) -> list[str]:
    return sorted(f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                  for p in double.list("Pod") if p["spec"]["schedulerName"] == "kubesched")


def all_bound(double: ApiServerDouble, keys: list[str] | None = None) -> bool:
    bound = double.bound_pods()
    return all(k in bound for k in (keys if keys is not None else ours(double)))


def no_assumed_left(r: Any) -> bool:
    with r.sched.lock:
        return not any(st.assumed for st in r.sched.cache.pod_states.values())


def test_end_to_end_including_pods_created_while_running(
        double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    for i in range(4):
        double.create(node(f"n{i}", cpu="2", memory="4Gi"))
    for i in range(20):
        double.create(pod(f"early-{i}", cpu="250m"))
    double.create(pod("theirs", scheduler="default-scheduler"))
    double.create(pod("running", node_name="n0", cpu="500m", scheduler="default-scheduler"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: all_bound(double), what="the first pods bound")
    for i in range(8):
        double.create(pod(f"late-{i}", cpu="250m"))
    wait_until(lambda: all_bound(double), what="pods created while running")
    assert "default/theirs" not in double.bound_pods(), "other schedulers' pods untouched"
    assert_bound_once(double)
    assert_fits(double)
    # Scheduled events through events.k8s.io/v1, reported by the profile
    evs = double.events("Scheduled")
    wait_until(lambda: len(double.events("Scheduled")) == 28, what="Scheduled events")
    evs = double.events("Scheduled")
    assert {e["reportingController"] for e in evs} == {"kubesched"}
    assert all(e["action"] == "Binding" and e["type"] == "Normal"
               and e["regarding"]["kind"] == "Pod" for e in evs)
    assert wait_until(lambda: no_assumed_left(r), what="bindings confirmed by the informer")


def test_unschedulable_condition_event_and_later_success(
        double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    double.create(node("small", cpu="1"))
    double.create(pod("big", cpu="3"))
    make_runner(kubeconfig, runners)

    def condition() -> dict | None:
        p = double.get("Pod", "big")
        return next((c for c in p["status"].get("conditions", [])
                     if c["type"] == "PodScheduled"), None)

    cond = wait_until(condition, what="PodScheduled=False")
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    ev = wait_until(lambda: double.events("FailedScheduling"), what="FailedScheduling")[0]
    assert ev["type"] == "Warning" and ev["action"] == "Scheduling"
    assert ev["note"] == cond["message"]
    double.create(node("large", cpu="4"))  # a cluster event moves the pod back
    wait_until(lambda: double.bound_pods().get("default/big") == "large", what="big bound")
    assert_bound_once(double)


def test_409_on_bind_retried_then_forgotten_when_bound_elsewhere(
        double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    for i in range(3):
        double.create(node(f"n{i}", cpu="1"))
    # a bare 409 (the pod stays unbound): retried to the same node (test_bind_conflict.py)
    double.bind_faults.append(kd.CONFLICT)
    double.create(pod("p1", cpu="600m"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: all_bound(double), what="p1 placed")
    assert len({n for _k, n, _f in double.stats.binding_requests}) == 1
    # another scheduler binds the next pod elsewhere first (a real 409): forgotten
    double.bind_faults.append(kd.STOLEN)
    double.create(pod("p2", cpu="600m"))
    wait_until(lambda: all_bound(double), what="p2 placed")
    assert len(double.stolen) == 1
    stolen_pod, stolen_node = double.stolen[0]
    assert double.bound_pods()[stolen_pod] == stolen_node
    applied = [k for k, _ in double.stats.bindings_applied]
    assert sorted(applied) == ["default/p1", "default/p2"]
    wait_until(lambda: no_assumed_left(r), what="the stolen pod forgotten")
    wait_until(lambda: r.bindings_in_flight == 0, what="binding cycles done")
    assert r.decisions.counts["error"] == 1
    assert_fits(double)
    # kubesched's cache follows the server (the stolen pod on its node)
    with r.sched.lock:
        on = {st.pod.key: st.pod.spec.node_name for st in r.sched.cache.pod_states.values()}
    assert on == double.bound_pods()


@pytest.mark.parametrize("fault", [kd.ERROR_BEFORE, kd.ERROR_AFTER, kd.HANG_BEFORE,
                                   kd.HANG_AFTER, kd.CUT_BEFORE, kd.CUT_AFTER])
def test_bind_errors_and_timeouts_retried_to_the_same_node(
        double: ApiServerDouble, kubeconfig: str, runners: list, fault: str) -> None:
    double.hang = 1.0
    for i in range(3):
        double.create(node(f"n{i}", cpu="2"))
    double.bind_faults.extend([fault, fault])
    for i in range(4):
        double.create(pod(f"p{i}", cpu="500m"))
    r = make_runner(kubeconfig, runners, request_timeout=0.4)
    wait_until(lambda: all_bound(double), timeout=15, what="pods bound despite the faults")
    # (after a fault that applied the binding, the informer may report the pod bound before
    # the binding cycle has its answer: wait for the binding cycles to end)
    wait_until(lambda: r.bindings_in_flight == 0, timeout=15, what="binding cycles done")
    assert_bound_once(double)
    assert_fits(double)
    assert r.backend.bind_retries >= 2
    assert r.backend.bound == 4
    assert len(double.stats.bindings_applied) == 4
    wait_until(lambda: no_assumed_left(r), what="no assumed pod left")


def test_binding_that_keeps_failing_is_given_up_and_requeued(
        double: ApiServerDouble, kubeconfig: str, runners: list,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers every binding with a 500 for longer than its own request
    timeout: the pod, read back unbound, is forgotten and requeued, then bound once."""
    import kubesched.backends.kube.backend as backend

    monkeypatch.setattr(backend, "UNKNOWN_SETTLE", 0.25)
    double.create(node("n0", cpu="2"))
    double.bind_faults.extend([kd.ERROR_BEFORE] * 5)
    double.create(pod("p0"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: all_bound(double), timeout=10, what="bound after the failures")
    wait_until(lambda: r.bindings_in_flight == 0, what="binding cycles done")
    assert len(double.stats.binding_requests) == 6
    assert_bound_once(double)
    assert r.decisions.counts["error"] >= 1 and r.decisions.counts["scheduled"] == 1


def test_watch_drops_cuts_and_410_while_running(double: ApiServerDouble, kubeconfig: str,
                                                runners: list) -> None:
    for i in range(3):
        double.create(node(f"n{i}", cpu="4"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: r.sched.cache.node_count() == 3 if hasattr(
        r.sched.cache, "node_count") else True, what="nodes")
    def expire() -> None:  # a change no informer has seen, then the history is gone
        double.cut_watches()
        double.create(pod("during-the-cut", cpu="200m"))
        double.compact()

    for round_, action in enumerate([double.drop_watches, double.cut_watches, expire]):
        for i in range(5):
            double.create(pod(f"r{round_}-{i}", cpu="200m"))
        action()
        for i in range(5, 10):
            double.create(pod(f"r{round_}-{i}", cpu="200m"))
        wait_until(lambda: all_bound(double), what=f"round {round_}")
    assert_bound_once(double)
    assert_fits(double)
    assert double.stats.gone >= 1


def test_api_server_away_for_a_few_seconds(double: ApiServerDouble, kubeconfig: str,
                                           runners: list) -> None:
    for i in range(3):
        double.create(node(f"n{i}", cpu="4"))
    for i in range(6):
        double.create(pod(f"a{i}", cpu="200m"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: all_bound(double), what="first pods")
    double.go_away()
    for i in range(6):
        double.create(pod(f"b{i}", cpu="200m"))  # created while kubesched cannot see
    time.sleep(2.0)
    double.come_back()
    wait_until(lambda: all_bound(double), timeout=15, what="pods created during the outage")
    assert_bound_once(double)
    assert_fits(double)
    assert not r.stop_requested.is_set()


def test_all_faults_at_once(double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    rng = random.Random(7)
    double.hang = 0.8
    for i in range(6):
        double.create(node(f"n{i}", cpu="2", memory="4Gi", pods=12))
    faults = [kd.ERROR_BEFORE, kd.ERROR_AFTER, kd.HANG_BEFORE, kd.HANG_AFTER,
              kd.CUT_BEFORE, kd.CUT_AFTER, kd.CONFLICT]
    double.bind_faults.extend(rng.choice(faults + [kd.OK] * 4) for _ in range(60))
    for i in range(20):
        double.create(pod(f"p{i}", cpu=rng.choice(["100m", "300m", "700m"])))
    # more than fits: 6 nodes x 2 cpu; these stay pending with a reason
    for i in range(3):
        double.create(pod(f"huge{i}", cpu="3"))
    r = make_runner(kubeconfig, runners, request_timeout=0.4)
    stop = threading.Event()

    def chaos() -> None:
        n = 0
        while not stop.wait(0.25):
            n += 1
            action = n % 5
            if action == 0:
                double.cut_watches()
            elif action == 1:
                double.drop_watches()
            elif action == 2:
                double.compact()
                double.cut_watches()
            elif action == 3 and n == 8:
                double.go_away()
                time.sleep(1.5)
                double.come_back()
            double.create(pod(f"c{n}", cpu=rng.choice(["100m", "200m"])))

    t = threading.Thread(target=chaos, daemon=True)
    t.start()
    time.sleep(4.0)
    stop.set()
    t.join(5)
    small = [k for k in ours(double) if "huge" not in k]
    wait_until(lambda: all_bound(double, small), timeout=20, what="every schedulable pod")
    assert_bound_once(double)
    assert_fits(double)
    assert not any("huge" in k for k in double.bound_pods())
    wait_until(lambda: no_assumed_left(r), what="no assumed pod left")
    wait_until(lambda: all(
        any(c["type"] == "PodScheduled" and c["status"] == "False"
            for c in (double.get("Pod", f"huge{i}") or {})["status"].get("conditions", []))
        for i in range(3)), what="the pods that fit nowhere say why")


def test_dry_run_binds_nothing(double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    double.create(node("n0", cpu="1"))
    for i in range(3):
        double.create(pod(f"p{i}", cpu="400m"))
    r = make_runner(kubeconfig, runners, dry_run=True)
    wait_until(lambda: r.backend.decisions.get("bind", 0) == 2
               and r.backend.decisions.get("event:FailedScheduling", 0) >= 1,
               what="decisions")
    time.sleep(0.3)
    assert double.stats.binding_requests == []
    assert double.bound_pods() == {}
    assert double.events() == [] and double.stats.status_patches == []
    assert double.get("Lease", "kubesched", "kube-system") is None
    m = r.metrics.render()[0].decode()
    assert 'kubesched_dry_run_decisions_total{result="bind"} 2.0' in m
    # a pod deleted after its (dry-run) decision frees its place in the cache
    double.delete("Pod", "p0")
    wait_until(lambda: r.backend.decisions.get("bind", 0) == 3, what="the freed room used")


def test_shadow_counts_agreement(double: ApiServerDouble, kubeconfig: str,
                                 runners: list) -> None:
    double.create(node("busy", cpu="4"))
    double.create(node("idle", cpu="4"))
    double.create(pod("load", cpu="3", node_name="busy", scheduler="default-scheduler"))
    r = make_runner(kubeconfig, runners, shadow="default-scheduler", dry_run=True)
    wait_until(lambda: all(i.synced.is_set() for i in r.informers), what="sync")
    # the other scheduler binds: once where kubesched would (the idle node), once not
    double.create(pod("a", cpu="500m", scheduler="default-scheduler"))
    double.create(pod("b", cpu="500m", scheduler="default-scheduler"))
    time.sleep(0.2)
    double.patch("Pod", "a", {"spec": {"nodeName": "idle"}})
    wait_until(lambda: r.shadow.get("agree") == 1, what="agreement counted")
    double.patch("Pod", "b", {"spec": {"nodeName": "busy"}})
    wait_until(lambda: r.shadow.get("disagree") == 1, what="disagreement counted")
    m = r.metrics.render()[0].decode()
    assert ('kubesched_shadow_evaluations_total{result="agree",scheduler="default-scheduler"}'
            in m)


def test_health_metrics_and_undecodable_pod(double: ApiServerDouble, kubeconfig: str,
                                            runners: list) -> None:
    double.create(node("n0", cpu="2"))
    bad = pod("bad")
    bad["spec"]["containers"][0]["resources"]["requests"]["memory"] = "12 parsecs"
    double.create(bad)
    double.create(pod("good"))
    r = make_runner(kubeconfig, runners)
    base = f"http://127.0.0.1:{r.server.port}"
    wait_until(lambda: all_bound(double, ["default/good"]), what="good bound")
    ev = wait_until(lambda: double.events("FailedScheduling"), what="event for the bad pod")
    assert ev[0]["regarding"]["name"] == "bad" and "cannot be read" in ev[0]["note"]
    assert "memory" in ev[0]["note"]
    for path in ("/healthz", "/livez", "/readyz"):
        with urllib.request.urlopen(base + path) as resp:
            assert resp.status == 200 and resp.read() == b"ok"
    with urllib.request.urlopen(base + "/metrics") as resp:
        text = resp.read().decode()
    for name in ("scheduler_schedule_attempts_total", "scheduler_pending_pods",
                 "scheduler_scheduling_attempt_duration_seconds_bucket",
                 "scheduler_scheduling_algorithm_duration_seconds_bucket",
                 "scheduler_framework_extension_point_duration_seconds_bucket",
                 "scheduler_preemption_attempts_total", "scheduler_scheduler_cache_size",
                 "scheduler_pod_scheduling_attempts_bucket"):
        assert name in text, name
    assert 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"} 1.0' in text
    r.request_stop()
    try:
        urllib.request.urlopen(base + "/readyz")
        raise AssertionError("readyz must fail while shutting down")
    except urllib.error.HTTPError as e:
        assert e.code == 500 and b"shutting down" in e.read()


def test_two_instances_only_the_leader_binds_then_hand_over(
        double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    conf = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration",
                        "leaderElection": {"leaseDuration": "2s", "renewDeadline": "1500ms",
                                           "retryPeriod": "200ms"},
                        "profiles": [{"schedulerName": "kubesched"}]})
    double.create(node("n0", cpu="8"))
    a = make_runner(kubeconfig, runners, config=conf, leader_elect=True, identity="a")
    wait_until(lambda: a.leading, what="a leads")
    b = make_runner(kubeconfig, runners, config=conf, leader_elect=True, identity="b")
    wait_until(lambda: all(i.synced.is_set() for i in b.informers), what="b's caches")
    for i in range(5):
        double.create(pod(f"first-{i}"))
    wait_until(lambda: all_bound(double), what="first pods")
    wait_until(lambda: a.bindings_in_flight == 0, what="a's binding cycles done")
    assert a.backend.bound == 5 and b.backend.bound == 0 and not b.leading
    a.request_stop()
    assert a.shutdown() == 0
    wait_until(lambda: b.leading, timeout=3, what="b takes over")
    for i in range(5):
        double.create(pod(f"second-{i}"))
    wait_until(lambda: all_bound(double), what="second pods")
    wait_until(lambda: b.bindings_in_flight == 0, what="b's binding cycles done")
    assert b.backend.bound == 5
    assert_bound_once(double)
    lease = double.get("Lease", "kubesched", "kube-system")
    assert lease["spec"]["holderIdentity"] == "b"


def test_lost_lease_stops_with_status_1(double: ApiServerDouble, kubeconfig: str,
                                        runners: list) -> None:
    conf = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration",
                        "leaderElection": {"leaseDuration": "1500ms", "renewDeadline": "800ms",
                                           "retryPeriod": "100ms"},
                        "profiles": [{"schedulerName": "kubesched"}]})
    r = make_runner(kubeconfig, runners, config=conf, leader_elect=True, identity="a",
                    request_timeout=0.3)
    wait_until(lambda: r.leading, what="leading")
    double.go_away()
    wait_until(lambda: r.stop_requested.is_set(), timeout=5, what="leaderelection lost")
    double.come_back()
    assert r.shutdown() == 1


def test_preemption_deletes_victims(double: ApiServerDouble, kubeconfig: str,
                                    runners: list) -> None:
    double.create(node("n0", cpu="1"))
    double.create(pod("low", cpu="800m", node_name="n0", priority=0))
    double.create(pod("high", cpu="800m", priority=1000))
    make_runner(kubeconfig, runners)
    wait_until(lambda: "default/low" in double.stats.deletes, what="the victim deleted")
    ev = wait_until(lambda: double.events("Preempted"), what="Preempted event")
    assert ev[0]["regarding"]["name"] == "low"
    wait_until(lambda: double.bound_pods().get("default/high") == "n0", what="preemptor bound")
    # one event per victim, as upstream's PrepareCandidate records it
    (only,) = double.events("Preempted")
    assert only["note"].startswith("Preempted by pod ") and only["action"] == "Preempting"
    # the nomination was written before the binding (which waits for the pod's queued
    # writes): asserted at once, and no late PodScheduled=False undoes the binding's True
    patches = [p for k, p in double.stats.status_patches if k == "default/high"]
    assert any(p["status"].get("nominatedNodeName") == "n0" for p in patches), patches
    conds = double.get("Pod", "high")["status"]["conditions"]
    assert [c["status"] for c in conds if c["type"] == "PodScheduled"] == ["True"], conds


def test_rate_limit(double: ApiServerDouble, kubeconfig: str) -> None:
    from kubesched.backends.kube.client import KubeClient

    c = KubeClient.load(kubeconfig, qps=20, burst=5)
    t0 = time.monotonic()
    for _ in range(15):
        c.request("GET", "/api/v1/nodes")
    elapsed = time.monotonic() - t0
    assert elapsed >= 0.45, f"15 requests at 20 qps with burst 5 took {elapsed:.2f}s"
    assert json.dumps(c.limiter.waited) and c.limiter.waited > 0
