"""A binding answered 409 is resolved by reading where the pod is before the pod is forgotten
(issue 23): kube-apiserver answers 409 to any storage error under a binding, an etcd failure
included, when the write may have landed. Against the API server double; the same cases
against a real kube-apiserver are in test_real_run.py."""

from __future__ import annotations

import kube_double as kd
import pytest
from kube_double import ApiServerDouble, node, pod
from kube_helpers import assert_bound_once, assert_fits, make_runner, wait_until

from kubesched.api.parse import parse_pod
from kubesched.backends.kube import backend as kb
from kubesched.backends.kube.backend import KubeBackend
from kubesched.backends.kube.client import KubeClient
from kubesched.framework.backend import BindError


@pytest.fixture
def backend(kubeconfig: str) -> KubeBackend:
    return KubeBackend(KubeClient.load(kubeconfig, request_timeout=2.0))


def pending(double: ApiServerDouble, name: str = "p") -> object:
    double.create(node("n0"))
    double.create(node("n1"))
    return parse_pod(double.create(pod(name)))


def requests_to(double: ApiServerDouble) -> list[str]:
    return [n for _k, n, _f in double.stats.binding_requests]


def test_409_after_the_write_landed_is_success(double: ApiServerDouble,
                                               backend: KubeBackend) -> None:
    p = pending(double)
    double.bind_faults.append(kd.CONFLICT_AFTER)
    backend.bind(p, "n0")  # no BindError: the pod is bound there
    assert double.bound_pods() == {"default/p": "n0"}
    assert backend.bound == 1 and requests_to(double) == ["n0"]


def test_409_with_the_pod_unreadable_retries_the_same_node(double: ApiServerDouble,
                                                           backend: KubeBackend) -> None:
    p = pending(double)
    double.bind_faults.append(kd.CONFLICT_AFTER)
    double.pod_read_failures = 2  # etcd down for reads as well, for a while
    backend.bind(p, "n0")
    # unreadable: retried to the same node, answered "already assigned" (a real 409), read
    assert requests_to(double) == ["n0", "n0", "n0"]
    assert double.stats.pod_reads_failed == 2
    assert double.bound_pods() == {"default/p": "n0"} and backend.bound == 1


def test_409_with_the_pod_unbound_retries_the_same_node(double: ApiServerDouble,
                                                        backend: KubeBackend) -> None:
    p = pending(double)
    double.bind_faults.extend([kd.CONFLICT, kd.CONFLICT])
    backend.bind(p, "n0")
    assert requests_to(double) == ["n0", "n0", "n0"]
    assert double.bound_pods() == {"default/p": "n0"}


def test_409_with_the_pod_unbound_for_good_is_a_refusal(double: ApiServerDouble,
                                                        backend: KubeBackend) -> None:
    p = pending(double)
    double.bind_faults.extend([kd.CONFLICT] * 10)
    with pytest.raises(BindError) as err:
        backend.bind(p, "n0")
    assert err.value.conflict
    assert requests_to(double) == ["n0"] * (kb.BIND_CONFLICT_RETRIES + 1)
    assert double.bound_pods() == {}


def test_409_bound_elsewhere_is_a_refusal(double: ApiServerDouble,
                                          backend: KubeBackend) -> None:
    p = pending(double)
    double.bind_faults.append(kd.STOLEN)
    with pytest.raises(BindError) as err:
        backend.bind(p, "n0")
    assert err.value.conflict and "already assigned" in str(err.value)
    assert double.bound_pods() == {"default/p": "n1"} and backend.bound == 0
    assert requests_to(double) == ["n0"]


def test_409_for_a_replaced_pod_is_a_refusal(double: ApiServerDouble,
                                             backend: KubeBackend) -> None:
    p = pending(double)
    double.delete("Pod", "p")
    double.create(pod("p"))  # same name, another uid, still pending
    with pytest.raises(BindError) as err:
        backend.bind(p, "n0")
    assert err.value.conflict and "Precondition failed" in str(err.value)
    assert double.bound_pods() == {} and requests_to(double) == ["n0"]


def test_binding_a_deleted_pod_is_a_refusal(double: ApiServerDouble,
                                            backend: KubeBackend) -> None:
    p = pending(double)
    double.delete("Pod", "p")
    with pytest.raises(BindError):
        backend.bind(p, "n0")
    assert requests_to(double) == ["n0"]


def test_run_keeps_a_pod_whose_binding_landed_under_a_409(
        double: ApiServerDouble, kubeconfig: str, runners: list) -> None:
    """The issue's case: the first pod's binding lands but is answered 409; kubesched must
    not take the room back: the second pod, which fits only in that room, stays pending."""
    double.create(node("n0", cpu="1"))
    double.bind_faults.append(kd.CONFLICT_AFTER)
    double.create(pod("first", cpu="600m"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: double.bound_pods().get("default/first") == "n0", what="first bound")
    double.create(pod("second", cpu="600m"))
    wait_until(lambda: double.events("FailedScheduling"), what="second found no room")
    wait_until(lambda: r.bindings_in_flight == 0, what="binding cycles done")
    assert r.decisions.counts["scheduled"] == 1 and not r.decisions.counts["error"]
    assert double.bound_pods() == {"default/first": "n0"}
    assert_bound_once(double)
    assert_fits(double)


def test_binding_waits_for_the_pods_earlier_status_writes(double: ApiServerDouble,
                                                          backend: KubeBackend) -> None:
    """An earlier cycle's PodScheduled=False patch still queued must not land after the
    binding (it would call a bound pod unschedulable): the binding waits for it."""
    import time

    p = pending(double)
    done: list[float] = []
    backend.writer.submit(p.uid, "a slow status patch",
                          lambda: (time.sleep(0.5), done.append(time.monotonic())))
    workers = len(backend.writer._queues)
    other = next(k for k in (f"other-{i}" for i in range(100))
                 if hash(k) % workers != hash(p.uid) % workers)  # on another worker
    backend.writer.submit(other, "a slow write of another pod", lambda: time.sleep(3.0))
    t0 = time.monotonic()
    backend.bind(p, "n0")
    assert done, "the binding went out before the pod's queued write"
    assert time.monotonic() - t0 < 2.5, "the binding waited for another pod's write"
