"""The DynamicResources plugin, extension point by extension point: cases of upstream's
``dynamicresources_test.go`` (TestPlugin, the v1.35 table) ported — same objects, same
expected statuses and claim updates — plus the score and the queueing hints."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from kubesched.api.dra.store import dra_index, replace_claim
from kubesched.api.dra.types import ResourceClaim, ResourceClaimConsumerReference
from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import Node, Pod
from kubesched.clock import VirtualClock
from kubesched.config.features import FeatureGates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources.plugin import DynamicResources

U, UU, ERR = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: my-resource-class}
spec: {selectors: [{cel: {expression: 'device.driver == "some-driver"'}}]}
"""
NODE = """
apiVersion: v1
kind: Node
metadata: {name: worker, labels: {nodename: worker, kubernetes.io/hostname: worker}}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}}
"""
SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: worker-some-driver}
spec:
  driver: some-driver
  nodeName: worker
  pool: {name: worker, generation: 1, resourceSliceCount: 1}
  devices: [{name: instance-1, attributes: {healthy: {bool: true}}%s}]
"""
TAINT = ", taints: [{key: taint-key, value: taint-value, effect: NoSchedule}]"
POD_CLAIM = """
apiVersion: v1
kind: Pod
metadata: {name: my-pod, namespace: default, uid: "1234"}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: my-resource, resourceClaimName: my-pod-my-resource}]
"""
POD_TEMPLATE = """
apiVersion: v1
kind: Pod
metadata: {name: my-pod, namespace: default, uid: "1234"}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: my-resource, resourceClaimTemplateName: my-pod-my-resource}]
status:
  resourceClaimStatuses: [{name: my-resource, resourceClaimName: my-pod-my-resource}]
"""
OWNER = "ownerReferences: [{apiVersion: v1, kind: Pod, name: my-pod, uid: '%s', controller: true}]"
ALLOCATION = """
  allocation:
    devices:
      results: [{request: req-1, driver: some-driver, pool: worker, device: instance-1%s}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker]}]}]
"""


def claim(name: str = "my-pod-my-resource", *, allocated: bool = False, admin: bool = False,
          reserved_for: str | None = None, owner: str | None = "1234",
          deleting: bool = False, cls: str = "my-resource-class", selector: str = "",
          node_selector: str | None = None, first_available: bool = False) -> str:
    meta = [f"name: {name}", "namespace: default", f"uid: {name}"]
    if owner is not None:
        meta.append(OWNER % owner)
    if deleting:
        meta.append('deletionTimestamp: "2025-01-01T00:00:00Z"')
    sel = f", selectors: [{{cel: {{expression: '{selector}'}}}}]" if selector else ""
    aa = ", adminAccess: true" if admin else ""
    if first_available:
        req = (f"[{{name: req-1, firstAvailable: [{{name: subreq-1, deviceClassName: {cls}, "
               f"count: 2}}, {{name: subreq-2, deviceClassName: {cls}}}]}}]")
    else:
        req = f"[{{name: req-1, exactly: {{deviceClassName: {cls}{sel}{aa}}}}}]"
    status = ""
    if allocated or node_selector is not None:
        status = "status:" + (ALLOCATION % (", adminAccess: true" if admin else ""))
        if node_selector is not None:
            status = status.split("    nodeSelector:")[0] + (
                "    nodeSelector:\n      nodeSelectorTerms: [{matchExpressions: "
                f"[{{key: {node_selector}, operator: In, values: [worker]}}]}}]\n")
        if reserved_for is not None:
            status += f"  reservedFor: [{{resource: pods, name: x, uid: '{reserved_for}'}}]\n"
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
            f"metadata: {{{', '.join(meta)}}}\n"
            f"spec: {{devices: {{requests: {req}}}}}\n{status}")


class FakeBackend:
    """The API server's Update and UpdateStatus on the handle's objects."""

    def __init__(self, objects: dict[str, list[Any]]) -> None:
        self.objects = objects
        self.writes: list[ResourceClaim] = []  # UpdateStatus
        self.updates: list[ResourceClaim] = []  # Update
        self.events: list[tuple[str, str, str]] = []

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        self.events.append((event_type, reason, message))

    def update_resource_claim(self, c: ResourceClaim) -> ResourceClaim:
        current = dra_index(self.objects).claim(c.namespace, c.name)
        assert current is not None and current.uid == c.uid
        new = dataclasses.replace(current, metadata=c.metadata)
        replace_claim(self.objects, new)
        self.updates.append(new)
        return new

    def update_resource_claim_status(self, c: ResourceClaim) -> ResourceClaim:
        current = dra_index(self.objects).claim(c.namespace, c.name)
        assert current is not None and current.uid == c.uid
        new = dataclasses.replace(current, allocation=c.allocation, reserved_for=c.reserved_for,
                                  devices=c.devices)
        replace_claim(self.objects, new)
        self.writes.append(new)
        return new


class Run:
    def __init__(self, *docs: str, gates: dict[str, bool] | None = None,
                 clock: VirtualClock | None = None) -> None:
        sc = load_scenario_text("\n---\n".join(docs))
        self.pod: Pod = next(p for p in sc.pods if not p.spec.node_name)
        self.nodes: list[Node] = sc.nodes
        self.objects = {k: list(v) for k, v in sc.objects.items()}
        self.backend = FakeBackend(self.objects)
        features = FeatureGates(overrides=tuple((gates or {}).items()))
        self.handle = Handle(objects=self.objects, backend=self.backend,  # type: ignore[arg-type]
                             features=features, clock=clock)
        self.plugin = DynamicResources({}, self.handle)
        self.state = CycleState()

    def claim(self, name: str = "my-pod-my-resource") -> ResourceClaim:
        c = dra_index(self.objects).claim("default", name)
        assert c is not None
        return c

    def pre_filter(self) -> Status | None:
        return self.plugin.pre_filter(self.state, self.pod, None)[1]  # type: ignore[arg-type]

    def filter(self) -> dict[str, Status | None]:
        return {n.name: self.plugin.filter(self.state, self.pod, NodeInfo(n))
                for n in self.nodes}

    def post_filter(self) -> Status:
        return self.plugin.post_filter(self.state, self.pod, {})[1]  # type: ignore[arg-type]

    def schedule(self, node: str = "worker") -> Status | None:
        """Reserve and PreBind on ``node`` (after PreFilter and Filter passed)."""
        st = self.plugin.reserve(self.state, self.pod, node)
        if st is not None and not st.is_success():
            return st
        return self.plugin.pre_bind(self.state, self.pod, node)


def code(st: Status | None) -> tuple[Code, tuple[str, ...]]:
    return (Code.SUCCESS, ()) if st is None else (st.code, st.reasons)


# ---------------------------------------------------------------- upstream's table


def test_empty() -> None:
    r = Run(NODE, "apiVersion: v1\nkind: Pod\nmetadata: {name: foo}\n"
            "spec: {containers: [{name: c}]}")
    assert code(r.pre_filter()) == (Code.SKIP, ())
    assert code(r.post_filter()) == (U, ("no new claims to deallocate",))


@pytest.mark.parametrize("pod", [POD_CLAIM, POD_TEMPLATE], ids=["claim-reference",
                                                               "claim-template"])
def test_allocated_claim_gets_reserved(pod: str) -> None:
    r = Run(NODE, pod, claim(allocated=True), claim("not-my-claim", owner=None))
    assert r.plugin.pre_enqueue(r.pod) is None
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}
    assert r.schedule() is None
    assert [x.uid for x in r.claim().reserved_for] == ["1234"]
    assert r.claim("not-my-claim").reserved_for == ()


@pytest.mark.parametrize(("pod", "claims", "message"), [
    (POD_TEMPLATE.split("status:")[0], [claim(allocated=True)],
     'pod "default/my-pod": ResourceClaim not created yet'),  # missing-claim
    (POD_TEMPLATE, [claim(allocated=True, deleting=True)],
     'resourceclaim "my-pod-my-resource" is being deleted'),  # deleted-claim
    (POD_TEMPLATE, [claim(allocated=True, owner="1234123")],
     "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod "
     "(pod is not owner)"),  # wrong-claim
    (POD_CLAIM, [], 'could not find ResourceClaim "default/my-pod-my-resource"'),
], ids=["missing-claim", "deleted-claim", "wrong-claim", "no-such-claim"])
def test_pre_enqueue(pod: str, claims: list[str], message: str) -> None:
    r = Run(NODE, pod, *claims)
    assert code(r.plugin.pre_enqueue(r.pod)) == (UU, (message,))


def test_no_resources() -> None:
    r = Run(NODE, POD_CLAIM, claim(), CLASS)
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("cannot allocate all claims",))
    assert code(r.post_filter()) == (U, ("still not schedulable",))


def test_with_resources() -> None:
    r = Run(NODE, POD_CLAIM, claim(), CLASS, SLICE % "")
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    # Reserve: the allocation is in flight, the claim unchanged
    assert r.handle.dra.claim_has_pending_allocation("my-pod-my-resource")
    assert r.claim().allocation is None
    assert r.plugin.pre_bind(r.state, r.pod, "worker") is None
    assert not r.handle.dra.claim_has_pending_allocation("my-pod-my-resource")
    want = load_scenario_text(claim(allocated=True, reserved_for="1234")).objects[
        "ResourceClaim"][0]
    got = r.claim()
    assert got.allocation is not None and want.allocation is not None
    # binding conditions are on in 1.37: PreBind stamps the allocation (the binding
    # timeout's start), which upstream's test ignores too
    assert got.allocation.allocation_timestamp is not None
    assert replace(got.allocation, allocation_timestamp=None) == want.allocation
    assert [(x.resource, x.name, x.uid) for x in got.reserved_for] == [
        ("pods", "my-pod", "1234")]


def test_skip_bind() -> None:
    r = Run(NODE, POD_CLAIM, claim(), CLASS, SLICE % "")
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    r.plugin.unreserve(r.state, r.pod, "worker")
    assert not r.handle.dra.claim_has_pending_allocation("my-pod-my-resource")
    assert r.backend.writes == []


def test_exhausted_resources() -> None:
    r = Run(NODE, POD_CLAIM, claim(), claim("not-my-claim", owner=None, allocated=True),
            CLASS, SLICE % "")
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("cannot allocate all claims",))
    assert code(r.post_filter()) == (U, ("still not schedulable",))


def test_in_flight_allocation_counts_as_allocated() -> None:
    r = Run(NODE, POD_CLAIM, claim(), CLASS, SLICE % "")
    other = dataclasses.replace(load_scenario_text(claim("x", allocated=True)).objects[
        "ResourceClaim"][0])
    r.handle.dra.signal_claim_pending_allocation("x", other)
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("cannot allocate all claims",))


@pytest.mark.parametrize(("version", "fits"), [("1.35", True), ("1.36", False)],
                         ids=["tainted-device-disabled", "tainted-device-enabled"])
def test_tainted_device(version: str, fits: bool) -> None:
    # DRADeviceTaints: off at 1.35, on from 1.36 — the gate reaches the allocator
    r = Run(NODE, POD_CLAIM, claim(), CLASS, SLICE % TAINT)
    r.handle.features = FeatureGates(version)
    assert r.pre_filter() is None
    got = r.filter()["worker"]
    assert (got is None) is fits
    if not fits:
        assert code(got) == (UU, ("cannot allocate all claims",))


def test_request_admin_access_with_gate() -> None:
    r = Run(NODE, POD_CLAIM, claim(admin=True), claim("not-my-claim", owner=None,
                                                      allocated=True), CLASS, SLICE % "")
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}
    assert r.schedule() is None
    assert r.claim().allocation is not None
    assert r.claim().allocation.results[0].admin_access is True


def test_request_admin_access_without_gate() -> None:
    r = Run(NODE, POD_CLAIM, claim(admin=True), CLASS, SLICE % "",
            gates={"DRAAdminAccess": False})
    assert r.pre_filter() is None
    # upstream (v1.35): an Error from the allocator's validation
    assert code(r.filter()["worker"]) == (ERR, (
        "claim default/my-pod-my-resource, request req-1: admin access is requested, but "
        "the feature is disabled",))


def test_structured_ignore_allocated_admin_access() -> None:
    r = Run(NODE, POD_CLAIM, claim(), claim("not-my-claim", owner=None, allocated=True,
                                            admin=True), CLASS, SLICE % "")
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}


def test_claim_parameters_cel_runtime_error() -> None:
    r = Run(NODE, POD_CLAIM,
            claim(selector='device.attributes["some-driver"].nosuchkey'), CLASS, SLICE % "")
    assert r.pre_filter() is None
    st = r.filter()["worker"]
    assert st is not None and st.code == ERR
    # upstream: "...: selector #0: CEL runtime error: no such key: ..."; the device named
    # and cel-cpp's wording of the missing key differ
    assert st.reasons[0].startswith("claim default/my-pod-my-resource: selector #0")
    assert "CEL runtime error: " in st.reasons[0]


def test_missing_class() -> None:
    r = Run(NODE, POD_CLAIM, claim())
    assert code(r.pre_filter()) == (UU, ("request req-1: device class my-resource-class "
                                         "does not exist",))
    assert code(r.post_filter()) == (U, ("no new claims to deallocate",))


def test_wrong_topology_deallocated_by_post_filter() -> None:
    r = Run(NODE, POD_CLAIM, claim(node_selector="no-such-label"))
    assert r.pre_filter() is None
    assert code(r.filter()["worker"]) == (UU, ("resourceclaim not available on the node",))
    assert code(r.post_filter()) == (U, ("deallocation of ResourceClaim completed",))
    assert r.claim().allocation is None


def test_good_topology() -> None:
    r = Run(NODE, POD_CLAIM, claim(node_selector="kubernetes.io/hostname"))
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}
    assert r.schedule() is None
    assert [x.uid for x in r.claim().reserved_for] == ["1234"]


def test_in_use_by_other() -> None:
    r = Run(NODE, POD_CLAIM, claim(allocated=True, reserved_for="other"))
    r.objects["ResourceClaim"][0] = dataclasses.replace(
        r.objects["ResourceClaim"][0],
        reserved_for=r.objects["ResourceClaim"][0].reserved_for * 256)
    assert code(r.pre_filter()) == (UU, ("resourceclaim in use",))


def test_reserved_okay() -> None:
    r = Run(NODE, POD_CLAIM, claim(allocated=True, reserved_for="1234"))
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}
    assert r.schedule() is None
    assert r.backend.writes == []  # already reserved for the pod


def test_dra_disabled() -> None:
    r = Run(NODE, POD_CLAIM, claim(allocated=True, reserved_for="1234"))
    r.plugin.enabled = False
    assert code(r.pre_filter()) == (Code.SKIP, ())
    assert code(r.post_filter()) == (U, ("plugin disabled",))


def test_claim_with_request_with_unknown_device_class() -> None:
    r = Run(NODE, POD_CLAIM, claim(cls="does-not-exist"), CLASS)
    assert code(r.pre_filter()) == (UU, ("request req-1: device class does-not-exist does "
                                         "not exist",))


def test_claim_with_prioritized_list_feature_disabled() -> None:
    r = Run(NODE, POD_CLAIM, claim(first_available=True), CLASS,
            gates={"DRAPrioritizedList": False})
    assert code(r.pre_filter()) == (UU, (
        "resource claim default/my-pod-my-resource, request req-1: has subrequests, but the "
        "DRAPrioritizedList feature is disabled",))


def test_claim_with_prioritized_list_unknown_device_class() -> None:
    r = Run(NODE, POD_CLAIM, claim(first_available=True, cls="does-not-exist"), CLASS)
    assert code(r.pre_filter()) == (UU, ("request req-1/subreq-1: device class "
                                         "does-not-exist does not exist",))


# ---------------------------------------------------------------- Score


def test_score_ranks_the_subrequest_allocated() -> None:
    two = (SLICE % "").replace("}}}]", "}}}, {name: instance-2}]")
    r = Run(NODE, NODE.replace("worker", "small"), POD_CLAIM, claim(first_available=True),
            CLASS, two, (SLICE % "").replace("worker", "small"))
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None, "small": None}
    assert r.plugin.pre_score(r.state, r.pod, None) is None  # type: ignore[arg-type]
    raw = [r.plugin.score(r.state, r.pod, NodeInfo(n)) for n in r.nodes]
    assert raw == [8, 7]  # subreq-1 (two devices) on worker, subreq-2 on small
    assert r.plugin.normalize_score(r.state, r.pod, np.array(raw)).tolist() == [100, 87]


def test_no_score_without_claims_to_allocate() -> None:
    r = Run(NODE, POD_CLAIM, claim(allocated=True))
    assert r.pre_filter() is None
    assert code(r.plugin.pre_score(r.state, r.pod, None)) == (Code.SKIP, ())  # type: ignore[arg-type]


# ---------------------------------------------------------------- queueing hints


def test_claim_hints() -> None:
    r = Run(NODE, POD_CLAIM, claim(allocated=True), claim("not-my-claim", owner=None,
                                                          allocated=True))
    mine, other = r.claim(), r.claim("not-my-claim")
    hint = r.plugin.is_schedulable_after_claim_change
    assert hint(r.pod, None, mine) == QueueingHint.QUEUE  # created
    assert hint(r.pod, mine, mine) == QueueingHint.SKIP  # status unchanged
    assert hint(r.pod, other, dataclasses.replace(other, allocation=None)) == \
        QueueingHint.QUEUE  # devices freed
    assert hint(r.pod, None, other) == QueueingHint.SKIP  # unrelated
    reserved = dataclasses.replace(mine, reserved_for=(
        ResourceClaimConsumerReference("pods", "my-pod", "1234"),))
    assert hint(r.pod, mine, reserved) == QueueingHint.QUEUE


# ---------------------------------------------------------------- binding conditions
# upstream's TestPlugin cases for KEP-5007 (the newest stored dynamicresources_test.go):
# bound-claim-with-succeeded-binding-conditions, bound-claim-with-failed-binding,
# prebind-fail-with-binding-timeout, bound-claim-with-mixed-binding-conditions,
# bound-claim-without-binding-conditions; their allocationResultWithBindingConditions
# (bindingConditions [condition], bindingFailureConditions [failed]) and device statuses.


def bound_claim(*conditions: tuple[str, str], allocated_at: str | None = None) -> str:
    """allocatedClaim with allocationResultWithBindingConditions and the device's status."""
    text = claim(allocated=True).replace(
        "device: instance-1}]",
        "device: instance-1, bindingConditions: [condition], "
        "bindingFailureConditions: [failed]}]")
    if allocated_at is not None:
        text = text.replace("  allocation:\n", f'  allocation:\n    allocationTimestamp: '
                                               f'"{allocated_at}"\n')
    conds = ", ".join(f"{{type: {t}, status: '{st}'}}" for t, st in conditions)
    return text + ("  devices: [{driver: some-driver, pool: worker, device: instance-1, "
                   f"conditions: [{conds}]}}]\n")


# 2026-01-01T00:00:00Z on the virtual clock
T0 = 1767225600.0


def test_bound_claim_with_succeeded_binding_conditions() -> None:
    r = Run(NODE, POD_CLAIM, bound_claim(("condition", "True"), ("failed", "False")))
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.schedule() is None
    assert [x.uid for x in r.claim().reserved_for] == ["1234"]
    assert r.backend.events == [("Normal", "BindingConditionsPending",
                                 "waiting for binding conditions for device on node worker")]


@pytest.mark.parametrize(("conditions", "allocated_at"), [
    ((("condition", "False"), ("failed", "True")), None),  # bound-claim-with-failed-binding
    # bound-claim-with-mixed-binding-conditions: "condition" missing, allocated 10 min
    # (the default bindingTimeout) and a moment ago
    ((("condition1", "True"), ("condition2", "False")), "2025-12-31T23:50:00Z"),
], ids=["bound-claim-with-failed-binding", "bound-claim-with-mixed-binding-conditions"])
def test_failed_or_timed_out_binding_deallocates(conditions: tuple[tuple[str, str], ...],
                                                 allocated_at: str | None) -> None:
    r = Run(NODE, SLICE % "", POD_CLAIM, bound_claim(*conditions, allocated_at=allocated_at),
            clock=VirtualClock(T0 + 1))
    assert r.pre_filter() is None
    assert {n: code(st) for n, st in r.filter().items()} == {
        "worker": (UU, ("resourceclaim not available on the node",))}
    assert code(r.post_filter()) == (U, ("deallocation of ResourceClaim completed",))
    assert r.claim().allocation is None and r.claim().devices == ()


def test_prebind_fail_with_binding_timeout() -> None:
    # allocated 10 s short of the 600 s timeout: Filter passes; upstream's PreBind polls
    # until the timeout passes, kubesched's virtual clock is moved past it instead
    clock = VirtualClock(T0)
    r = Run(NODE, POD_CLAIM, bound_claim(allocated_at="2025-12-31T23:50:10Z"), clock=clock)
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    clock.advance_to(T0 + 11)
    assert code(r.schedule()) == (ERR, ("claim my-pod-my-resource binding timeout",))
    assert [x.uid for x in r.claim().reserved_for] == ["1234"]  # reserved before waiting


def test_bound_claim_without_binding_conditions() -> None:
    r = Run(NODE, POD_TEMPLATE, claim(allocated=True), claim("not-my-claim", owner=None))
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.schedule() is None
    assert [x.uid for x in r.claim().reserved_for] == ["1234"]


def test_binding_conditions_not_met_yet() -> None:
    # kubesched's: nothing changes while the simulator's PreBind waits, so it ends at once
    # with upstream's timeout error, and the claim stays reserved for the retry
    r = Run(NODE, POD_CLAIM, bound_claim(("condition", "False"), ("failed", "False")),
            clock=VirtualClock(T0))
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert code(r.schedule()) == (ERR, ("device binding timeout",))


def test_binding_failure_in_pre_bind() -> None:
    r = Run(NODE, POD_CLAIM, bound_claim(("condition", "False"), ("failed", "True")))
    r.plugin.pre_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert code(r.plugin.pre_bind(r.state, r.pod, "worker")) == (
        ERR, ('claim my-pod-my-resource binding failed: reason=, message=""',))


def test_invalid_pool_is_the_nodes_reason() -> None:
    """An invalid pool (here one device name in two of its slices) fails allocation on that
    node only (ErrFailedAllocationOnNode): an unschedulable reason, not an error that
    aborts the pod's scheduling."""
    two = (SLICE % "").replace("resourceSliceCount: 1", "resourceSliceCount: 2")
    other = two.replace("name: worker-some-driver", "name: worker-some-driver-2")
    r = Run(NODE, POD_CLAIM, claim(), CLASS, two, other)
    assert r.pre_filter() is None
    assert {n: code(st) for n, st in r.filter().items()} == {
        "worker": (UU, ("invalid resource pools were encountered",))}
