"""The rest of upstream's ``dynamicresources_test.go`` (the newest stored version, 130,794
characters: TestPlugin with 62 cases, Test_computesScore, TestNormalizeScore,
TestAllocatorSelection, TestIsSchedulableAfterClaimChange, TestIsSchedulableAfterPodChange).

The TestPlugin cases here are the 18 that ``test_dynamicresources.py`` (24 classic and 5
binding-condition cases) and ``test_dra_extended.py`` (15 extended-resource cases) do not
port. Each follows upstream's harness: PreEnqueue, PreFilter, Filter on every node (an
Error stops the case), Score and NormalizeScore when more than one node passes, Reserve on
the best-scored node, PreBind, and PostFilter when no node passes; expected statuses and
claim changes are upstream's. Upstream's harness compares only the message of a non-success
status; the codes asserted here are those upstream's code returns (statusUnschedulable is
UnschedulableAndUnresolvable). Upstream's ``prebindPreFlight`` expectations are not ported:
kubesched's framework has no PreBindPreFlight.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from tests.plugins.test_dynamicresources import ERR, POD_CLAIM, POD_TEMPLATE, UU, Run, U, code

from kubesched.api.dra.store import replace_claim
from kubesched.api.dra.types import (
    DELETE_PROTECTION_FINALIZER,
    AllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaim,
)
from kubesched.api.scenario import load_scenario_text
from kubesched.clock import VirtualClock
from kubesched.config.features import FeatureGates
from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import PluginError
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.plugin import (
    STATE_KEY,
    DynamicResources,
    ScoreError,
    _NodeAllocation,
    _State,
    compute_score,
)

DRIVER, DRIVER2 = "some-driver", "some-driver-2"
CLASS = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: my-resource-class}\n"
         "spec: {}")
# upstream's brokenSelector: the attribute exists on worker-2 and worker-3 only
BROKEN = 'device.attributes["some-driver"].healthy'
CEL_ERROR = "selector #0: CEL runtime error: "
POD_TWO_CLAIMS = POD_CLAIM.replace(
    "resourceClaims: [{name: my-resource, resourceClaimName: my-pod-my-resource}]",
    "resourceClaims: [{name: my-resource, resourceClaimName: my-pod-my-resource}, "
    "{name: my-resource-2, resourceClaimName: my-pod-my-resource-2}]")
# 2026-01-01T00:00:00Z on the virtual clock
T0 = 1767225600.0


def node(name: str = "worker") -> str:
    return ("apiVersion: v1\nkind: Node\n"
            f"metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}\n"
            "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}")


def slice_(node_name: str = "worker", devices: int = 1, healthy: bool | None = None, *,
           driver: str = DRIVER, first: int = 1, fabric: bool = False) -> str:
    """st.MakeResourceSlice(node, driver) with devices instance-<first>…; ``fabric``: the
    binding-condition devices of upstream's fabricSlice (bindsToNode, a node selector)."""
    value = str(healthy).lower()
    attrs = "" if healthy is None else f", attributes: {{healthy: {{bool: {value}}}}}"
    bc = (", bindsToNode: true, bindingConditions: [condition], "
          "bindingFailureConditions: [failed]") if fabric else ""
    devs = ", ".join(f"{{name: instance-{i}{attrs}{bc}}}" for i in range(first, first + devices))
    where = ("nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, "
             f"operator: In, values: [{node_name}]}}]}}]}}" if fabric else f"nodeName: {node_name}")
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
            f"metadata: {{name: {node_name}-{driver}}}\n"
            f"spec: {{driver: {driver}, {where}, "
            f"pool: {{name: {node_name}, generation: 1, resourceSliceCount: 1}}, "
            f"devices: [{devs}]}}")


def request(name: str, *, count: int = 1, selector: str = "",
            subs: tuple[tuple[str, int, str], ...] = ()) -> str:
    """One device request: exactly (class, count, selector) or firstAvailable ``subs``
    ((name, count, selector), …)."""
    def sel(s: str) -> str:
        return f", selectors: [{{cel: {{expression: '{s}'}}}}]" if s else ""
    if subs:
        alts = ", ".join(f"{{name: {n}, deviceClassName: my-resource-class, count: {c}{sel(s)}}}"
                         for n, c, s in subs)
        return f"{{name: {name}, firstAvailable: [{alts}]}}"
    return (f"{{name: {name}, exactly: {{deviceClassName: my-resource-class, count: {count}"
            f"{sel(selector)}}}}}")


def pending(name: str = "my-pod-my-resource", *requests: str, status: str = "") -> str:
    """pendingClaim: owned by the pod, requests as given (default: one of the class)."""
    reqs = ", ".join(requests or (request("req-1"),))
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
            f"metadata: {{name: {name}, namespace: default, uid: {name}, ownerReferences: "
            "[{apiVersion: v1, kind: Pod, name: my-pod, uid: '1234', controller: true}]}\n"
            f"spec: {{devices: {{requests: [{reqs}]}}}}\n{status}")


def bound(name: str, driver: str, device: str, req: str, *conditions: tuple[str, str],
          allocated_at: str | None = None) -> str:
    """boundClaim / failedBindingClaim…: allocated with allocationResultWithBindingConditions
    and the device's status with ``conditions`` ((type, status), …)."""
    stamp = f"    allocationTimestamp: '{allocated_at}'\n" if allocated_at else ""
    conds = ", ".join(f"{{type: {t}, status: '{s}'}}" for t, s in conditions)
    return pending(name, status=(
        "status:\n  allocation:\n" + stamp +
        f"    devices: {{results: [{{request: {req}, driver: {driver}, pool: worker, "
        f"device: {device}, bindingConditions: [condition], "
        "bindingFailureConditions: [failed]}]}\n"
        "    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, "
        "operator: In, values: [worker]}]}]}\n"
        f"  devices: [{{driver: {driver}, pool: worker, device: {device}, "
        f"conditions: [{conds}]}}]\n"))


def results(claim: ResourceClaim) -> list[tuple[str, str, str]]:
    """An allocation's (request, driver, pool); upstream's comparison ignores the device."""
    assert claim.allocation is not None
    return [(r.request, r.driver, r.pool) for r in claim.allocation.results]


def in_flight(r: Run) -> dict[str, list[tuple[str, str, str]]]:
    return {c.name: results(c) for c in r.handle.dra.in_flight.values()}


def reserved(claim: ResourceClaim) -> list[tuple[str, str, str]]:
    return [(x.resource, x.name, x.uid) for x in claim.reserved_for]


MY_POD = [("pods", "my-pod", "1234")]


def with_args(r: Run, args: dict[str, Any], clock: Any = None) -> Run:
    """The plugin made again with DynamicResourcesArgs (and a clock)."""
    if clock is not None:
        r.handle.clock = clock
    r.plugin = DynamicResources(args, r.handle)
    return r


def gates(**on: bool) -> dict[str, bool]:
    return dict(on.items())


# ---------------------------------------------------------------- the flow, node by node


def filter_until_error(r: Run) -> dict[str, tuple[Code, tuple[str, ...]]]:
    """Filter on every node in order; upstream's harness stops at an Error."""
    out = {}
    for n in r.nodes:
        st = code(r.plugin.filter(r.state, r.pod, NodeInfo(n)))
        out[n.name] = st
        if st[0] == ERR:
            break
    return out


def scores(r: Run) -> tuple[dict[str, int], list[int]]:
    feasible = [n for n in r.nodes if r.plugin.filter(r.state, r.pod, NodeInfo(n)) is None]
    raw = {n.name: r.plugin.score(r.state, r.pod, NodeInfo(n)) for n in feasible}
    norm = r.plugin.normalize_score(r.state, r.pod, np.array(list(raw.values())))
    return raw, norm.tolist()


# ---------------------------------------------------------------- TestPlugin's cases


FINALIZED = (DELETE_PROTECTION_FINALIZER,)


def set_finalizers(r: Run, finalizers: tuple[str, ...]) -> None:
    """The claim as stored, with other finalizers (another client's change)."""
    c = r.claim()
    replace_claim(r.objects, dataclasses.replace(
        c, metadata=dataclasses.replace(c.metadata, finalizers=finalizers)))


@pytest.mark.parametrize(("before", "at_pre_bind", "updates"), [
    (FINALIZED, None, 0),  # set already: a scheduler interrupted after its Update
    (FINALIZED, (), 1),  # removed between Reserve and PreBind: PreBind adds it again
    ((), FINALIZED, 0),  # added between Reserve and PreBind: no second Update
], ids=["with-resources-has-finalizer", "with-resources-finalizer-gets-removed",
        "with-resources-finalizer-gets-added"])
def test_finalizer_cases(before: tuple[str, ...], at_pre_bind: tuple[str, ...] | None,
                         updates: int) -> None:
    r = Run(node(), POD_CLAIM, pending(), CLASS, slice_())
    set_finalizers(r, before)
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    assert in_flight(r) == {"my-pod-my-resource": [("req-1", DRIVER, "worker")]}
    # upstream's in-flight claim is the allocated one, finalizer included
    assert [c.metadata.finalizers for c in r.handle.dra.in_flight.values()] == [FINALIZED]
    if at_pre_bind is not None:
        set_finalizers(r, at_pre_bind)
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert results(r.claim()) == [("req-1", DRIVER, "worker")]
    assert reserved(r.claim()) == MY_POD
    assert r.claim().metadata.finalizers == FINALIZED
    # the finalizer is written by a normal Update, only when the claim lacks it
    assert len(r.backend.updates) == updates


def test_finalizer_added_to_the_claims_finalizers() -> None:
    # kubesched's: another client's finalizer stays, the scheduler's goes after it
    r = Run(node(), POD_CLAIM, pending(), CLASS, slice_())
    set_finalizers(r, ("example.com/keep",))
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.schedule() is None
    assert r.claim().metadata.finalizers == ("example.com/keep", DELETE_PROTECTION_FINALIZER)


def test_finalizer_update_fails() -> None:
    # kubesched's: a failed Update is PreBind's error, and no allocation is written
    r = Run(node(), POD_CLAIM, pending(), CLASS, slice_())
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None

    def refuse(c: ResourceClaim) -> ResourceClaim:
        raise RuntimeError("conflict")
    r.backend.update_resource_claim = refuse  # type: ignore[method-assign]
    assert code(r.plugin.pre_bind(r.state, r.pod, "worker")) == (ERR, (
        "add finalizer to claim default/my-pod-my-resource: conflict",))
    assert r.claim().allocation is None and r.backend.writes == []
    assert in_flight(r) == {}


def test_class_parameters_cel_runtime_error() -> None:
    r = Run(node(), POD_CLAIM, pending(), CLASS.replace(
        "spec: {}", f"spec: {{selectors: [{{cel: {{expression: '{BROKEN}'}}}}]}}"), slice_())
    assert r.pre_filter() is None
    got = filter_until_error(r)["worker"]
    # upstream: "class my-resource-class: selector #0: CEL runtime error: no such key:
    # healthy"; kubesched names the device, and cel-cpp words the missing key its own way
    assert got[0] == ERR and got[1][0].startswith("class my-resource-class: selector #0")
    assert CEL_ERROR.split(": ", 1)[1] in got[1][0]


@pytest.mark.parametrize("nodes", [2, 3], ids=["CEL-runtime-error-for-one-of-two-nodes",
                                               "CEL-runtime-error-for-one-of-three-nodes"])
def test_cel_runtime_error_on_one_node(nodes: int) -> None:
    # worker's device lacks the attribute, the others' have it: the error on worker aborts
    # the pod's scheduling (an Error) although the other nodes would do. (Upstream's table
    # expects UnschedulableAndUnresolvable for three nodes and a PreScore error; its harness
    # compares only messages, stops at the Error, and never calls PreScore.)
    names = ["worker", "worker-2", "worker-3"][:nodes]
    r = Run(*[node(n) for n in names], POD_CLAIM,
            pending("my-pod-my-resource", request("req-1", selector=BROKEN)), CLASS,
            *[slice_(n, healthy=None if n == "worker" else True) for n in names])
    assert r.pre_filter() is None
    got = filter_until_error(r)
    assert list(got) == ["worker"]  # stopped at the first node's Error
    assert got["worker"][0] == ERR
    assert got["worker"][1][0].startswith("claim default/my-pod-my-resource: selector #0")
    # the other nodes would pass: the error is what keeps the pod pending
    assert [r.plugin.filter(r.state, r.pod, NodeInfo(n)) for n in r.nodes[1:]] == \
        [None] * (nodes - 1)


def test_bind_failure() -> None:
    r = Run(node(), POD_CLAIM, pending(status=(
        "status:\n  allocation:\n    devices: {results: [{request: req-1, driver: some-driver, "
        "pool: worker, device: instance-1}]}\n    nodeSelector: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, "
        "values: [worker]}]}]}\n")))
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.schedule() is None
    assert reserved(r.claim()) == MY_POD
    # unreserveAfterBindFailure: the pod leaves reservedFor, the allocation stays
    r.plugin.unreserve(r.state, r.pod, "worker")
    assert r.claim().reserved_for == () and r.claim().allocation is not None


def test_claim_with_prioritized_list() -> None:
    r = Run(node(), POD_CLAIM, pending("my-pod-my-resource", request(
        "req-1", subs=(("subreq-1", 1, ""),))), CLASS, slice_())
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    assert in_flight(r) == {"my-pod-my-resource": [("req-1/subreq-1", DRIVER, "worker")]}
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert results(r.claim()) == [("req-1/subreq-1", DRIVER, "worker")]
    assert reserved(r.claim()) == MY_POD and in_flight(r) == {}


# upstream's largeClaim (five requests) against largeWorkerNodeSlice (four devices)
LARGE_CLAIM = pending("my-pod-my-resource", *(request(f"req-{i}") for i in range(1, 6)))


class TickingClock:
    """A clock that moves a millisecond each time it is read: a Filter takes time, as on a
    real machine, but the same time on every run."""

    def __init__(self) -> None:
        self.t = T0

    def now(self) -> float:
        self.t += 0.001
        return self.t


def test_timeout() -> None:
    r = with_args(Run(node(), POD_CLAIM, LARGE_CLAIM, CLASS, slice_(devices=4)),
                  {"filterTimeout": "1ns"}, TickingClock())
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("timed out trying to allocate devices",))
    assert code(r.post_filter()) == (U, ("still not schedulable",))


def test_timeout_needs_a_moving_clock() -> None:
    # kubesched's: the simulator's virtual clock stands still during a cycle, so the same
    # case runs the search to its end
    r = with_args(Run(node(), POD_CLAIM, LARGE_CLAIM, CLASS, slice_(devices=4)),
                  {"filterTimeout": "1ns"}, VirtualClock(T0))
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("cannot allocate all claims",))


@pytest.mark.parametrize(("args", "gate"), [({}, False), ({"filterTimeout": "0"}, True)],
                         ids=["timeout_disabled", "timeout_zero"])
def test_no_timeout(args: dict[str, Any], gate: bool) -> None:
    r = Run(node(), POD_CLAIM, pending(), CLASS, slice_(),
            gates={"DRASchedulerFilterTimeout": gate})
    with_args(r, args, TickingClock())
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    assert in_flight(r) == {"my-pod-my-resource": [("req-1", DRIVER, "worker")]}
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert results(r.claim()) == [("req-1", DRIVER, "worker")]
    assert reserved(r.claim()) == MY_POD


def test_timeout_gate_off_ignores_the_limit() -> None:
    # kubesched's, for the gate's other half: with DRASchedulerFilterTimeout off a limit
    # given anyway (upstream's validation refuses it) is not applied
    r = Run(node(), POD_CLAIM, LARGE_CLAIM, CLASS, slice_(devices=4),
            gates={"DRASchedulerFilterTimeout": False})
    with_args(r, {"filterTimeout": "1ns"}, TickingClock())
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("cannot allocate all claims",))


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="kubesched's Filter cannot be canceled: its node loop is sequential "
                          "and has no context (upstream cancels Filters in flight when the "
                          "parallel search has found enough nodes)")
def test_canceled() -> None:
    r = with_args(Run(node(), POD_CLAIM, LARGE_CLAIM, CLASS, slice_(devices=4)),
                  {"filterTimeout": "1ns"})
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, (
        "asked by caller to stop allocating devices: test canceling Filter",))


def test_bound_claim_with_timed_out_binding() -> None:
    # allocated with binding conditions 10 minutes (the default bindingTimeout) and a moment
    # ago; the device's status has no conditions
    r = Run(node(), POD_CLAIM, bound("my-pod-my-resource", DRIVER, "instance-1", "req-1",
                                     allocated_at="2025-12-31T23:50:00Z"),
            clock=VirtualClock(T0 + 1))
    assert r.claim().devices[0].conditions == ()
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("resourceclaim not available on the node",))
    assert code(r.post_filter()) == (U, ("deallocation of ResourceClaim completed",))
    assert r.claim().allocation is None and r.claim().devices == ()


BOUND = bound("my-pod-my-resource", DRIVER, "instance-1", "req-1",
              ("condition", "True"), ("failed", "False"))


def test_multi_claims_binding_conditions_all_success() -> None:
    bound2 = bound("my-pod-my-resource-2", DRIVER2, "instance-2", "req-2",
                   ("condition", "True"), ("failed", "False"))
    r = Run(node(), POD_TWO_CLAIMS, BOUND, bound2, CLASS, slice_(fabric=True),
            slice_(driver=DRIVER2, first=2, fabric=True))
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.schedule() is None
    for name in ("my-pod-my-resource", "my-pod-my-resource-2"):
        assert reserved(r.claim(name)) == MY_POD
    assert r.backend.events == [("Normal", "BindingConditionsPending",
                                 "waiting for binding conditions for device on node worker")]


def test_multi_claims_binding_conditions_one_fail() -> None:
    failed2 = bound("my-pod-my-resource-2", DRIVER2, "instance-2", "req-2",
                    ("condition", "False"), ("failed", "True"))
    r = Run(node(), POD_TWO_CLAIMS, BOUND, failed2, CLASS, slice_(fabric=True),
            slice_(driver=DRIVER2, first=2, fabric=True))
    before = r.claim()
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("resourceclaim not available on the node",))
    assert code(r.post_filter()) == (U, ("deallocation of ResourceClaim completed",))
    second = r.claim("my-pod-my-resource-2")
    assert second.allocation is None and second.devices == ()
    assert r.claim() == before  # the claim whose binding succeeded is left alone


def test_single_claim_prioritized_list_scoring() -> None:
    r = Run(node(), node("worker-2"), POD_CLAIM, pending("my-pod-my-resource", request(
        "req-1", subs=(("subreq-1", 1, BROKEN), ("subreq-2", 1, "")))), CLASS,
        slice_(healthy=True), slice_("worker-2", healthy=False))
    assert r.pre_filter() is None
    assert scores(r) == ({"worker": 8, "worker-2": 7}, [100, 87])
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    assert in_flight(r) == {"my-pod-my-resource": [("req-1/subreq-1", DRIVER, "worker")]}
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert results(r.claim()) == [("req-1/subreq-1", DRIVER, "worker")]
    assert reserved(r.claim()) == MY_POD


def test_multiple_claims_prioritized_list_scoring() -> None:
    claim2 = pending("my-pod-my-resource-2", request("req-1", subs=(
        ("subreq-1", 4, ""), ("subreq-2", 3, ""), ("subreq-3", 2, ""), ("subreq-4", 1, ""))))
    r = Run(node(), node("worker-2"), node("worker-3"), POD_TWO_CLAIMS,
            pending("my-pod-my-resource", request("req-1", subs=(("subreq-1", 1, ""),))),
            claim2, CLASS, slice_(devices=4), slice_("worker-2", devices=2),
            slice_("worker-3", devices=1))
    assert r.pre_filter() is None
    assert code(r.filter()["worker-3"]) == (UU, ("cannot allocate all claims",))
    assert scores(r) == ({"worker": 15, "worker-2": 13}, [100, 86])
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    assert in_flight(r) == {"my-pod-my-resource": [("req-1/subreq-1", DRIVER, "worker")],
                            "my-pod-my-resource-2": [("req-1/subreq-2", DRIVER, "worker")] * 3}
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert results(r.claim("my-pod-my-resource-2")) == [("req-1/subreq-2", DRIVER, "worker")] * 3
    assert reserved(r.claim()) == reserved(r.claim("my-pod-my-resource-2")) == MY_POD


def test_multiple_requests_prioritized_list_scoring() -> None:
    alts = (("subreq-1", 2, ""), ("subreq-2", 1, ""))
    r = Run(node(), node("worker-2"), node("worker-3"), POD_CLAIM,
            pending("my-pod-my-resource", request("req-1", subs=alts),
                    request("req-2", subs=alts)),
            CLASS, slice_(devices=4), slice_("worker-2", devices=3), slice_("worker-3", devices=2))
    assert r.pre_filter() is None
    assert scores(r) == ({"worker": 16, "worker-2": 15, "worker-3": 14}, [100, 93, 87])
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    want = [("req-1/subreq-1", DRIVER, "worker")] * 2 + [("req-2/subreq-1", DRIVER, "worker")] * 2
    assert in_flight(r) == {"my-pod-my-resource": want}
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert results(r.claim()) == want and reserved(r.claim()) == MY_POD


# ---------------------------------------------------------------- Test_computesScore


def alloc(*requests: str) -> AllocationResult:
    return AllocationResult(tuple(
        DeviceRequestAllocationResult(request=q, driver="", pool="", device="")
        for q in requests))


def prioritized(*reqs: tuple[str, int]) -> ResourceClaim:
    """st.MakeResourceClaim().NamedRequestWithPrioritizedList(name, n subrequests)…"""
    text = pending("c", *(request(n, subs=tuple((f"subreq-{i}", 1, "") for i in range(1, k + 1)))
                          for n, k in reqs))
    claim: ResourceClaim = load_scenario_text(text).objects["ResourceClaim"][0]
    return claim


@pytest.mark.parametrize(("claims", "allocations", "want"), [
    ([[("req-1", 1)]], [["req-1/subreq-1"]], 8),
    ([[("req-1", 8)]], [["req-1/subreq-8"]], 1),
    ([[("req-1", 4), ("req-2", 5)]], [["req-1/subreq-4", "req-2/subreq-5"]], 9),
    ([[("req-1", 8), ("req-2", 1)]], [["req-1/subreq-8", "req-2/subreq-1"]], 9),
    ([[("req-1", 8)], [("req-2", 8)]], [["req-1/subreq-8"], ["req-2/subreq-8"]], 2),
    ([[("req-1", 1)], [("req-2", 1)]], [["req-1/subreq-1"], ["req-2/subreq-1"]], 16),
], ids=["single-request-only-subrequest-allocated", "single-request-last-subrequest-allocated",
        "multiple-requests-with-middle-subrequests-allocated",
        "multiple-requests-with-top-subrequests-allocated",
        "multiple-claims-with-last-subrequests-allocated",
        "multiple-claims-with-top-subrequests-allocated"])
def test_compute_score(claims: list[list[tuple[str, int]]], allocations: list[list[str]],
                       want: int) -> None:
    s = _State(claims=[prioritized(*c) for c in claims])
    found = _NodeAllocation({i: alloc(*a) for i, a in enumerate(allocations)})
    assert compute_score(s, found) == want


def test_compute_score_more_claims_than_allocations() -> None:
    # upstream's computeScore (as fixed): claims needing allocation without a trial result
    s = _State(claims=[prioritized(("req-1", 1)), prioritized(("req-2", 1))])
    with pytest.raises(ScoreError, match=r"^number of allocations 0 is smaller than number "
                                         r"of claims needing allocation$"):
        compute_score(s, _NodeAllocation({}))


def test_compute_score_allocated_beside_pending() -> None:
    # the fix's case: an allocated claim counts with its own allocation, the pending one
    # with the node's result (before the fix: "number of allocations 1 is smaller than
    # number of claims" for such a pod — the pod stayed pending)
    done = dataclasses.replace(prioritized(("req-1", 2)), allocation=alloc("req-1/subreq-2"))
    s = _State(claims=[done, prioritized(("req-2", 1))])
    assert compute_score(s, _NodeAllocation({1: alloc("req-2/subreq-1")})) == 7 + 8


def test_score_error_fails_the_cycle_and_score_is_off_without_prioritized_lists() -> None:
    r = Run(node(), POD_TWO_CLAIMS)
    s = _State(claims=[prioritized(("req-1", 1)), prioritized(("req-2", 1))],
               node_allocations={"worker": _NodeAllocation({})})
    r.state.write(STATE_KEY, s)
    with pytest.raises(PluginError, match=r'^running Score plugins: plugin "DynamicResources" '
                                          r"failed with: number of allocations 0"):
        r.plugin.score(r.state, r.pod, NodeInfo(r.nodes[0]))
    off = Run(node(), POD_TWO_CLAIMS, gates={"DRAPrioritizedList": False})
    off.state.write(STATE_KEY, s)
    assert off.plugin.score(off.state, off.pod, NodeInfo(off.nodes[0])) == 0


# ---------------------------------------------------------------- TestNormalizeScore

MAX32 = 2**31 - 1


@pytest.mark.parametrize(("raw", "want"), [
    ([], []), ([42], [100]), ([8, 8], [100, 100]), ([MAX32, MAX32], [100, 100]),
    ([MAX32, 0], [100, 0]), ([99, 98, 97], [100, 98, 97]),
    ([MAX32, MAX32 - 1, 1, 0], [100, 99, 0, 0]),
], ids=["empty", "single-score", "all-same", "all-same-very-large", "max-and-min-values",
        "mid-value", "large-spread-lost-precision"])
def test_normalize_score(raw: list[int], want: list[int]) -> None:
    r = Run(node(), POD_CLAIM)
    got = r.plugin.normalize_score(r.state, r.pod, np.array(raw, dtype=np.int64))
    assert got.tolist() == want


# ---------------------------------------------------------------- TestAllocatorSelection


@pytest.mark.parametrize(("overrides", "want"), [
    ((("AllAlpha", False), ("AllBeta", False)), "stable"),
    ((), "incubating"),
    ((("AllAlpha", True), ("AllBeta", True)), "experimental"),
], ids=["only-GA", "default", "alpha"])
def test_allocator_selection(overrides: tuple[tuple[str, bool], ...], want: str) -> None:
    from kubesched.framework.handle import Handle
    from kubesched.plugins.dynamicresources.plugin import allocator_features
    handle = Handle(features=FeatureGates(overrides=overrides))
    assert allocator_features(handle).channel == want


# ---------------------------------------------------------------- the queueing hints

ALLOCATED = pending(status=(
    "status:\n  allocation:\n    devices: {results: [{request: req-1, driver: some-driver, "
    "pool: worker, device: instance-1}]}\n"))
OTHER_ALLOCATED = ALLOCATED.replace("name: my-pod-my-resource, namespace: default, uid: "
                                    "my-pod-my-resource", "name: not-my-claim, namespace: "
                                    "default, uid: not-my-claim")
POD_TEMPLATE_NO_STATUS = POD_TEMPLATE.split("status:")[0]


def one(text: str) -> ResourceClaim:
    claim: ResourceClaim = load_scenario_text(text).objects["ResourceClaim"][0]
    return claim


@pytest.mark.parametrize(("pod", "stored", "old", "new", "want"), [
    (POD_TEMPLATE_NO_STATUS, [], ALLOCATED, None, QueueingHint.SKIP),
    (POD_TEMPLATE_NO_STATUS, [], None, "not-a-claim", TypeError),
    (POD_TEMPLATE_NO_STATUS, [], None, ALLOCATED.replace("uid: '1234'", "uid: '1234123'"),
     QueueingHint.SKIP),
    (POD_TEMPLATE_NO_STATUS, [ALLOCATED], None,
     ALLOCATED.replace("name: my-pod-my-resource,", "name: my-pod-my-resource-foo,").replace(
         "uid: my-pod-my-resource", "uid: my-pod-my-resource123"), QueueingHint.SKIP),
    (POD_CLAIM, [pending()], None, pending(), QueueingHint.QUEUE),
    (POD_CLAIM, [pending()], "not-a-claim", pending(), TypeError),
    (POD_CLAIM, [pending()], pending(), pending().replace(
        "namespace: default,", "namespace: default, finalizers: "
        f"[{DELETE_PROTECTION_FINALIZER}],"), QueueingHint.SKIP),
    (POD_CLAIM, [pending()], pending(), pending(status=(
        "status:\n  allocation: {devices: {results: []}}\n")), QueueingHint.QUEUE),
    (POD_CLAIM, [pending(), OTHER_ALLOCATED], OTHER_ALLOCATED,
     OTHER_ALLOCATED.split("status:")[0], QueueingHint.QUEUE),
], ids=["skip-deletes", "backoff-wrong-new-object", "skip-wrong-claim", "skip-unrelated-claim",
        "queue-on-add", "backoff-wrong-old-object", "skip-adding-finalizer",
        "queue-on-status-change", "claim-deallocate"])
def test_is_schedulable_after_claim_change(pod: str, stored: list[str], old: str | None,
                                           new: str | None, want: Any) -> None:
    # as upstream, the new object is in the cluster when the hint runs
    def obj(text: str | None) -> Any:
        return text if text in (None, "not-a-claim") else one(text)  # type: ignore[arg-type]
    new_obj = obj(new)
    in_cluster = [s for s in stored if not (isinstance(new_obj, ResourceClaim)
                                            and one(s).name == new_obj.name)]
    if isinstance(new_obj, ResourceClaim):
        in_cluster.append(new)  # type: ignore[arg-type]
    r = Run(node(), pod, *in_cluster)
    hint = r.plugin.is_schedulable_after_claim_change
    if want is TypeError:
        with pytest.raises(TypeError):
            hint(r.pod, obj(old), new_obj)
    else:
        assert hint(r.pod, obj(old), new_obj) == want


POD_TWO_TEMPLATES = POD_TEMPLATE.replace(
    "resourceClaims: [{name: my-resource, resourceClaimTemplateName: my-pod-my-resource}]",
    "resourceClaims: [{name: my-resource, resourceClaimTemplateName: my-pod-my-resource}, "
    "{name: my-resource-2, resourceClaimTemplateName: my-pod-my-resource}]")


@pytest.mark.parametrize(("pod", "claims", "new", "want"), [
    (POD_TEMPLATE_NO_STATUS, [], "not-a-pod", TypeError),
    (POD_TEMPLATE_NO_STATUS, [pending()], POD_TEMPLATE, QueueingHint.QUEUE),
    (POD_TEMPLATE_NO_STATUS.replace("name: my-pod,", "name: my-pod2,").replace(
        "uid: \"1234\"", "uid: \"12342\""), [pending()], POD_TEMPLATE, QueueingHint.SKIP),
    (POD_TEMPLATE_NO_STATUS, [], POD_TEMPLATE, QueueingHint.SKIP),
    (POD_TWO_TEMPLATES.split("status:")[0], [pending()], POD_TWO_TEMPLATES, QueueingHint.SKIP),
], ids=["backoff-wrong-new-object", "complete", "wrong-pod", "missing-claim", "incomplete"])
def test_is_schedulable_after_pod_change(pod: str, claims: list[str], new: str,
                                         want: Any) -> None:
    r = Run(node(), pod, *claims)
    hint = r.plugin.is_schedulable_after_pod_change
    if want is TypeError:
        with pytest.raises(TypeError):
            hint(r.pod, None, new)
        return
    modified = next(p for p in load_scenario_text(new).pods)
    assert hint(r.pod, None, modified) == want

