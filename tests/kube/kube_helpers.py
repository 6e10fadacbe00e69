"""Helpers shared by the kube backend tests (a uniquely named module: every test folder's
``conftest`` is importable under the same name)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kube_double import ApiServerDouble

TOKEN = "s3cret-token"


def wait_until(cond: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02,
               what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def make_runner(kubeconfig: str, runners: list[Any], *, config: Any = None,
                start: bool = True, **kw: Any) -> Any:
    from kubesched.backends.kube.client import KubeClient
    from kubesched.backends.kube.commands import default_run_config
    from kubesched.backends.kube.runner import KubeRunner, RunOptions

    opts = dict(config=config or default_run_config(), kubeconfig=kubeconfig,
                address="127.0.0.1:0", install_signals=False, leader_elect=False,
                request_timeout=2.0, shutdown_timeout=5.0, seed=1)
    opts.update(kw)
    ro = RunOptions(**opts)
    client = KubeClient.load(kubeconfig, request_timeout=ro.request_timeout,
                             qps=50.0 if ro.qps is None else ro.qps,
                             burst=100 if ro.burst is None else ro.burst)
    r = KubeRunner(ro, client)
    runners.append(r)
    if start:
        r.start()
    return r


def assert_fits(double: ApiServerDouble) -> None:
    """No node holds more requested cpu / memory / pods than it has."""
    assert_pods_fit(double.list("Node"), double.list("Pod"))


def assert_pods_fit(raw_nodes: list[dict], raw_pods: list[dict], *,
                    terminating_gone: bool = False) -> None:
    """No node holds more requested cpu / memory / pods than its bound pods, finished ones
    left out (and terminating ones, when ``terminating_gone``: a server with no kubelet
    keeps them until deleted by hand)."""
    from kubesched.api.parse import parse_node, parse_pod

    nodes = {n["metadata"]["name"]: parse_node(n) for n in raw_nodes}
    used: dict[str, dict[str, int]] = {name: {} for name in nodes}
    for raw in raw_pods:
        p = parse_pod(raw)
        if not p.spec.node_name or p.status.phase in ("Succeeded", "Failed"):
            continue
        if terminating_gone and raw["metadata"].get("deletionTimestamp"):
            continue
        assert p.spec.node_name in nodes, f"{p.key} bound to a missing node"
        u = used[p.spec.node_name]
        for r, v in p.requests.items():
            u[r] = u.get(r, 0) + v
        u["pods"] = u.get("pods", 0) + 1
    for name, u in used.items():
        alloc = nodes[name].status.allocatable
        for r, v in u.items():
            assert v <= alloc.get(r, 0), f"node {name}: {r} {v} > {alloc.get(r, 0)}"


def assert_bound_once(double: ApiServerDouble) -> None:
    """Every pod the server bound was bound once, and kubesched never asked for another node
    after a binding whose answer never came (or was a 5xx): only a definite refusal (409)
    lets it schedule the pod again, elsewhere."""
    from kube_double import UNKNOWN_OUTCOME

    applied = [k for k, _n in double.stats.bindings_applied]
    assert len(applied) == len(set(applied)), f"double-bound: {applied}"
    last: dict[str, tuple[str, str]] = {}
    for k, n, fault in double.stats.binding_requests:
        prev = last.get(k)
        if prev is not None and prev[1] in UNKNOWN_OUTCOME:
            assert n == prev[0], f"{k}: retried to {n} after no answer from {prev[0]}"
        last[k] = (n, fault)
