"""Leader election on a Lease with optimistic concurrency, over real HTTP."""

from __future__ import annotations

import threading

from kube_double import ApiServerDouble
from kube_helpers import wait_until

from kubesched.backends.kube.client import KubeClient
from kubesched.backends.kube.leader import LeaderElectionConfig, LeaderElector
from kubesched.backends.kube.runner import RunOptions, leader_election_config
from kubesched.config import load_config


def elector(kubeconfig: str, ident: str, log: list, **kw: float) -> LeaderElector:
    cfg = LeaderElectionConfig(name="kubesched", namespace="kube-system", identity=ident,
                               lease_duration=kw.get("lease", 1.5),
                               renew_deadline=kw.get("renew", 1.0),
                               retry_period=kw.get("retry", 0.1))
    client = KubeClient.load(kubeconfig, request_timeout=1.0)
    return LeaderElector(client, cfg,
                         on_started_leading=lambda: log.append(("start", ident)),
                         on_stopped_leading=lambda lost: log.append(("stop", ident, lost)))


def test_one_leader_then_hand_over_on_release(double: ApiServerDouble, kubeconfig: str
                                              ) -> None:
    log: list = []
    a = elector(kubeconfig, "a", log).start()
    wait_until(lambda: a.leading, what="a leads")
    b = elector(kubeconfig, "b", log).start()
    try:
        threading.Event().wait(0.5)
        assert not b.leading, "the lease is held: b waits"
        lease = double.get("Lease", "kubesched", "kube-system")
        assert lease["spec"]["holderIdentity"] == "a"
        assert lease["spec"]["leaseDurationSeconds"] == 1
        a.stop()
        a.join(5)
        assert double.get("Lease", "kubesched", "kube-system")["spec"].get(
            "holderIdentity") in (None, "", "b"), "a released the lease"
        wait_until(lambda: b.leading, timeout=1.0, what="b takes over at its next try")
        lease = double.get("Lease", "kubesched", "kube-system")
        assert lease["spec"]["holderIdentity"] == "b"
        assert lease["spec"]["leaseTransitions"] == 1
        assert log[:3] == [("start", "a"), ("stop", "a", False), ("start", "b")]
    finally:
        a.stop()
        b.stop()
        b.join(5)


def test_expired_lease_is_taken_over(double: ApiServerDouble, kubeconfig: str) -> None:
    """A leader that vanished without releasing: the lease is taken after it expires."""
    log: list = []
    a = elector(kubeconfig, "a", log)
    a.config.release_on_cancel = False
    a.start()
    wait_until(lambda: a.leading, what="a leads")
    a.stop()
    a.join(5)
    b = elector(kubeconfig, "b", log).start()
    try:
        threading.Event().wait(0.5)
        assert not b.leading, "not before the lease expired"
        wait_until(lambda: b.leading, timeout=5, what="b after expiry")
    finally:
        b.stop()
        b.join(5)


def test_leadership_lost_when_renewal_fails(double: ApiServerDouble, kubeconfig: str) -> None:
    log: list = []
    a = elector(kubeconfig, "a", log, lease=1.5, renew=0.6, retry=0.1).start()
    try:
        wait_until(lambda: a.leading, what="a leads")
        double.go_away()
        wait_until(lambda: ("stop", "a", True) in log, timeout=5, what="lease lost")
        assert not a.leading
    finally:
        double.come_back()
        a.stop()
        a.join(5)


def test_short_outage_keeps_the_lease(double: ApiServerDouble, kubeconfig: str) -> None:
    log: list = []
    a = elector(kubeconfig, "a", log, lease=3.0, renew=2.0, retry=0.1).start()
    try:
        wait_until(lambda: a.leading, what="a leads")
        double.go_away()
        threading.Event().wait(0.8)
        double.come_back()
        threading.Event().wait(1.5)
        assert a.leading and log == [("start", "a")]
        assert a.healthy()
    finally:
        a.stop()
        a.join(5)


def test_configuration_fields_and_defaults() -> None:
    from kubesched.backends.kube.commands import default_run_config

    cfg = leader_election_config(RunOptions(config=default_run_config(), identity="me"))
    assert (cfg.name, cfg.namespace) == ("kubesched", "kube-system")
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15.0, 10.0, 2.0)
    conf = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration",
                        "leaderElection": {"leaseDuration": "30s", "renewDeadline": "20s",
                                           "retryPeriod": "5s", "resourceName": "mine",
                                           "resourceNamespace": "sched"}})
    cfg = leader_election_config(RunOptions(config=conf, lease_name_from_config=True))
    assert (cfg.name, cfg.namespace) == ("mine", "sched")
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (30.0, 20.0, 5.0)
    assert "_" in cfg.identity  # hostname_uuid
    # upstream's default lease name is never used unless the file names it
    conf = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration"})
    assert leader_election_config(RunOptions(config=conf)).name == "kubesched"
    cfg = leader_election_config(RunOptions(config=conf, lease_name="other",
                                            lease_namespace="ns"))
    assert (cfg.name, cfg.namespace) == ("other", "ns")
