"""A pod's resource requests, exactly as v1.35 computes them.

``pod_requests`` is component-helpers ``resource.PodRequests`` (spec resources only: kubesched
reads no container statuses); ``non_zero_requests`` is the cpu / memory pair the scheduler's
``PodInfo.CalculateResource`` derives with ``NonMissingContainerRequests`` for scoring.
Values are the parsed integers of ``api.types`` (cpu in milli-cores, memory in bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kubesched.api.types import CPU, MEMORY, Container, Pod, Resources

DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest (0.1 core)
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest (200 MiB)

HUGEPAGES_PREFIX = "hugepages-"
_SUPPORTED_POD_LEVEL = frozenset({CPU, MEMORY})


def is_supported_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory and hugepages-*."""
    return name in _SUPPORTED_POD_LEVEL or name.startswith(HUGEPAGES_PREFIX)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """``IsPodLevelRequestsSet``: spec.resources.requests names a supported resource."""
    res = pod.spec.resources
    return res is not None and any(is_supported_pod_level_resource(k) for k in res.requests)


def _add(dst: dict[str, int], src: Mapping[str, int]) -> None:
    for name, value in src.items():
        dst[name] = dst.get(name, 0) + value


def _max(dst: dict[str, int], src: Mapping[str, int]) -> None:
    for name, value in src.items():
        if name not in dst or value > dst[name]:
            dst[name] = value


def _apply_non_missing(reqs: Mapping[str, int], non_missing: Mapping[str, int]) -> dict[str, int]:
    out = dict(reqs)
    for name, value in non_missing.items():
        if name not in reqs:
            out[name] = value
    return out


def _aggregate(
    pod: Pod,
    get: Callable[[Container], Mapping[str, int]],
    non_missing: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """``aggregateContainerResourcesByFn``: Σ containers + Σ sidecars, then the per-resource
    maximum with every init container's (request + sidecars started before it)."""
    result: dict[str, int] = {}
    for c in pod.spec.containers:
        reqs = get(c)
        if non_missing:
            reqs = _apply_non_missing(reqs, non_missing)
        _add(result, reqs)

    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in pod.spec.init_containers:
        reqs = get(c)
        if non_missing:
            reqs = _apply_non_missing(reqs, non_missing)
        if c.restart_policy == "Always":
            _add(result, reqs)
            _add(sidecars, reqs)
            use: Mapping[str, int] = sidecars
        else:
            combined: dict[str, int] = {}
            _add(combined, reqs)
            _add(combined, sidecars)
            use = combined
        _max(init_max, use)
    _max(result, init_max)
    return result


def aggregate_container_requests(
    pod: Pod, non_missing: Mapping[str, int] | None = None
) -> dict[str, int]:
    """``AggregateContainerRequests`` (containers only: no pod-level resources, no overhead)."""
    return _aggregate(pod, lambda c: c.requests, non_missing)


def aggregate_container_limits(pod: Pod) -> dict[str, int]:
    """``AggregateContainerLimits``."""
    return _aggregate(pod, lambda c: c.limits)


def pod_requests(
    pod: Pod,
    *,
    non_missing: Mapping[str, int] | None = None,
    exclude_overhead: bool = False,
) -> Resources:
    """``PodRequests``: aggregated container requests; pod-level ``spec.resources.requests``
    replace them for the supported resources it names; then ``spec.overhead`` is added.

    A resource named anywhere (even with an explicit 0) is a key of the result.
    """
    reqs = aggregate_container_requests(pod, non_missing)
    if is_pod_level_requests_set(pod):
        assert pod.spec.resources is not None
        for name, value in pod.spec.resources.requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = value
    if not exclude_overhead and pod.spec.overhead:
        _add(reqs, pod.spec.overhead)
    return reqs


def non_zero_requests(pod: Pod, requests: Mapping[str, int] | None = None) -> tuple[int, int]:
    """(cpu milli, memory bytes) as the scheduler's ``NonZeroRequested`` counts them.

    Every container (regular, init, sidecar) *missing* a cpu / memory request counts 100m /
    200Mi (an explicit 0 stays 0). With pod-level requests set, the default applies only for a
    resource absent from the pod's whole request. ``requests`` may pass a precomputed
    ``pod_requests(pod)``.
    """
    reqs = pod_requests(pod) if requests is None else requests
    if not is_pod_level_requests_set(pod):
        non_missing = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
    else:
        non_missing = {}
        if CPU not in reqs:
            non_missing[CPU] = DEFAULT_MILLI_CPU_REQUEST
        if MEMORY not in reqs:
            non_missing[MEMORY] = DEFAULT_MEMORY_REQUEST
    non0 = pod_requests(pod, non_missing=non_missing) if non_missing else reqs
    return non0.get(CPU, 0), non0.get(MEMORY, 0)


def compute_pod_resources(pod: Pod) -> None:
    """Fill ``pod.requests``, ``pod.non_zero_cpu`` and ``pod.non_zero_memory``."""
    pod.requests = pod_requests(pod)
    pod.non_zero_cpu, pod.non_zero_memory = non_zero_requests(pod, pod.requests)
