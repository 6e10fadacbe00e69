"""Cases ported from upstream component-helpers resource/helpers_test.go (TestPodRequestsAndLimits,
TestPodResourceRequests) and scheduler framework/types_test.go (TestPodInfoCalculateResources)."""

from __future__ import annotations

from kubesched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    non_zero_requests,
    pod_requests,
)
from kubesched.api.types import Container, ObjectMeta, Pod, PodSpec

Mi = 1024 * 1024


def c(restart_policy: str | None = None, **requests: int) -> Container:
    return Container(name="c", requests=dict(requests), restart_policy=restart_policy)


def sidecar(**requests: int) -> Container:
    return c("Always", **requests)


def pod(containers=(), init=(), overhead=None, pod_level=None) -> Pod:
    spec = PodSpec(
        containers=list(containers),
        init_containers=list(init),
        overhead=dict(overhead or {}),
        resources=None if pod_level is None else Container(name="", requests=dict(pod_level)),
    )
    return Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=spec)


# ---- TestPodRequestsAndLimits / TestPodResourceRequests (cpu in milli-cores)


def test_just_overhead():
    assert pod([c()], overhead={"cpu": 5000, "memory": 5}).spec.overhead
    assert pod_requests(pod([c()], overhead={"cpu": 5000, "memory": 5})) == {
        "cpu": 5000, "memory": 5}


def test_requests_and_overhead():
    p = pod([c(cpu=1000, memory=10)], overhead={"cpu": 5000, "memory": 5})
    assert pod_requests(p) == {"cpu": 6000, "memory": 15}
    assert pod_requests(p, exclude_overhead=True) == {"cpu": 1000, "memory": 10}


def test_larger_init_container():
    assert pod_requests(pod([c(cpu=1000)], init=[c(cpu=4000)])) == {"cpu": 4000}


def test_larger_containers():
    assert pod_requests(pod([c(cpu=2000), c(cpu=3000)], init=[c(cpu=2000)])) == {"cpu": 5000}


def test_overhead_included_with_init():
    p = pod([c(cpu=2000), c(cpu=3000)], init=[c(cpu=2000)],
            overhead={"cpu": 1000, "memory": 1024 * Mi})
    assert pod_requests(p) == {"cpu": 6000, "memory": 1024 * Mi}


def test_massive_init_with_overhead_excluded():
    p = pod([c(cpu=1000, memory=5), c(cpu=4000, memory=12)],
            init=[c(cpu=1000, memory=5), c(cpu=40000, memory=120)],
            overhead={"cpu": 3000, "memory": 8})
    assert pod_requests(p, exclude_overhead=True) == {"cpu": 40000, "memory": 120}
    assert pod_requests(p) == {"cpu": 43000, "memory": 128}


def test_restartable_init_container():
    assert pod_requests(pod([c(cpu=1000)], init=[sidecar(cpu=1000)])) == {"cpu": 2000}


def test_multiple_restartable_init_containers():
    # max(5, restartable init containers(3+2+1) + regular(1)) = 7
    p = pod([c(cpu=1000)],
            init=[c(cpu=5000), sidecar(cpu=1000), sidecar(cpu=2000), sidecar(cpu=3000)])
    assert pod_requests(p) == {"cpu": 7000}


def test_multiple_restartable_and_regular_init_containers():
    # init-2 requires 5 + the previously running sidecars (1+2) = 8
    p = pod([c(cpu=1000)],
            init=[c(cpu=5000), sidecar(cpu=1000), sidecar(cpu=2000), c(cpu=5000),
                  sidecar(cpu=3000)])
    assert pod_requests(p) == {"cpu": 8000}


def test_restartable_init_init_and_regular():
    p = pod([c(cpu=100000)], init=[sidecar(cpu=10000), c(cpu=200000)])
    assert pod_requests(p) == {"cpu": 210000}


def test_explicit_zero_keeps_its_key():
    assert pod_requests(pod([c(cpu=0)])) == {"cpu": 0}
    assert pod_requests(pod([c()])) == {}


def test_pod_level_requests_override_supported_resources_only():
    p = pod([c(cpu=500, memory=500 * Mi, **{"ephemeral-storage": 800 * Mi})],
            pod_level={"cpu": 1200, "nvidia.com/gpu": 3})
    assert pod_requests(p) == {"cpu": 1200, "memory": 500 * Mi, "ephemeral-storage": 800 * Mi}


def test_pod_level_then_overhead():
    p = pod([c(cpu=500)], pod_level={"cpu": 700}, overhead={"cpu": 100})
    assert pod_requests(p) == {"cpu": 800}


# ---- non-zero requests (TestPodInfoCalculateResources, v1.35)


def test_non_zero_requestless_container():
    assert non_zero_requests(pod([c()])) == (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST)
    assert non_zero_requests(pod([c()])) == (100, 200 * Mi)


def test_non_zero_explicit_zero_stays_zero():
    assert non_zero_requests(pod([c(cpu=0, memory=0)])) == (0, 0)
    assert non_zero_requests(pod([c(cpu=0)])) == (0, 200 * Mi)


def test_non_zero_per_container():
    p = pod([c(cpu=500), c(memory=300 * Mi), c()])
    assert non_zero_requests(p) == (500 + 100 + 100, 200 * Mi + 300 * Mi + 200 * Mi)


def test_non_zero_two_containers_with_requests():
    p = pod([c(cpu=500, memory=500 * Mi), c(cpu=700, memory=800 * Mi)])
    assert non_zero_requests(p) == (1200, 1300 * Mi)


def test_non_zero_init_and_sidecar():
    # init containers get the defaults too, and take part in the maximum
    assert non_zero_requests(pod([c(cpu=50, memory=10)], init=[c()])) == (100, 200 * Mi)
    # a sidecar's defaults add to the sum
    assert non_zero_requests(pod([c()], init=[sidecar()])) == (200, 400 * Mi)


def test_non_zero_zero_containers():
    assert non_zero_requests(pod([])) == (0, 0)


def test_non_zero_includes_overhead():
    p = pod([c()], overhead={"cpu": 100, "memory": 200 * Mi})
    assert non_zero_requests(p) == (200, 400 * Mi)


def test_non_zero_pod_level():
    # "1X container and 1X init container with pod-level requests"
    p = pod([c(cpu=500, memory=500 * Mi)], init=[c(cpu=500, memory=500 * Mi)],
            pod_level={"cpu": 1200, "memory": 1200 * Mi})
    assert non_zero_requests(p) == (1200, 1200 * Mi)
    # "1X container with pod-level memory requests"
    p = pod([c()], init=[c()], pod_level={"memory": 1200 * Mi})
    assert pod_requests(p) == {"memory": 1200 * Mi}
    assert non_zero_requests(p) == (100, 1200 * Mi)
    # "1X container with pod-level cpu requests"
    p = pod([c()], init=[c()], pod_level={"cpu": 500})
    assert non_zero_requests(p) == (500, 200 * Mi)
    # "1X container unsupported resources and pod-level supported resources"
    p = pod([c(**{"ephemeral-storage": 800 * Mi})], init=[c(**{"ephemeral-storage": 500 * Mi})],
            pod_level={"cpu": 500})
    assert pod_requests(p) == {"cpu": 500, "ephemeral-storage": 800 * Mi}
    assert non_zero_requests(p) == (500, 200 * Mi)
