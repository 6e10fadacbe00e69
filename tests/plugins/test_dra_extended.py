"""Extended resources backed by a DeviceClass (DRAExtendedResource): upstream's tables ported.

* ``extendeddynamicresources_test.go`` (stored 08832ffe): Test_createRequestsAndMappings_
  requests (8 cases) and _mappings (7 cases) — the special claim's requests and the pod's
  request mappings.
* ``dynamicresources_test.go`` (stored version with the extended-resource cases): the 15
  TestPlugin cases named ``*extended-resource*``, extension point by extension point.
* ``noderesources/fit_test.go``: the 6 DRAExtendedResource cases of TestEnoughRequests
  (the nil-draManager one is kubelet's path, which kubesched has not).

Expected values are upstream's (objects, names, statuses); where kubesched's simulated API
server differs (generated names are derived, not random) the test says so.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from tests.plugins.test_dynamicresources import (
    CLASS,
    NODE,
    POD_CLAIM,
    SLICE,
    FakeBackend,
    claim,
    code,
)
from tests.plugins.test_dynamicresources import Run as ClaimRun

from kubesched.api.dra.store import dra_index, remove_claim, replace_claim
from kubesched.api.dra.types import ResourceClaim
from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import Container, ExtendedResourceClaimStatus, ObjectMeta, Pod, PodSpec
from kubesched.config.features import FeatureGates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources.extended import (
    DEVICE_CLASS_PREFIX,
    EXTENDED_CLAIM_ANNOTATION,
    SPECIAL_CLAIM_NAME,
    created_claim_name,
    device_class_mapping,
    requests_and_mappings,
)
from kubesched.plugins.dynamicresources.plugin import DynamicResources
from kubesched.plugins.noderesources.fit import Fit
from kubesched.testing import snapshot_from_nodes

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# ---------------------------------------------------------------- createRequestsAndMappings

EXT = "example.com/gpu"  # upstream's extendedResourceName of that file


def pod_of(*containers: tuple[str, str, dict[str, int]]) -> Pod:
    """A pod from (kind, name, requests): kind "c" container, "i" init, "s" sidecar. Built
    directly, as upstream's st.MakePod() (a pod of init containers only is not valid API
    input, but the function does not care)."""
    spec = PodSpec(
        init_containers=[Container(n, requests=r, restart_policy="Always" if k == "s" else None)
                         for k, n, r in containers if k in "is"],
        containers=[Container(n, requests=r) for k, n, r in containers if k == "c"])
    return Pod(metadata=ObjectMeta(name="my-pod", namespace="default", uid="u"), spec=spec)


POD1 = pod_of(("c", "con0", {EXT: 1, EXT + "1": 2}))
POD2 = pod_of(("c", "con0", {EXT: 1}), ("c", "con1", {EXT + "1": 2}))
POD_INIT = pod_of(("i", "init-con0", {EXT + "init": 2}), ("c", "con0", {EXT: 1}))
POD_INIT2 = pod_of(("i", "init-con0", {EXT + "init": 1}), ("i", "init-con1", {EXT + "init": 2}),
                   ("c", "con0", {EXT: 1}))
POD_INIT3 = pod_of(("i", "init-con0", {EXT + "init": 1}), ("s", "sidecar-con1", {EXT + "init": 1}),
                   ("i", "init-con2", {EXT + "init": 2}), ("c", "con0", {EXT: 1}))
POD1_INIT_IMPLICIT = pod_of(("i", "init-con0", {EXT + "init": 1,
                                                DEVICE_CLASS_PREFIX + "classInit": 2}))
POD_INIT_IMPLICIT = pod_of(("i", "init-con0", {EXT + "init": 1}),
                           ("i", "init-con1", {DEVICE_CLASS_PREFIX + "classInit": 2}),
                           ("c", "con0", {EXT: 1}))

RES = [EXT]
RES2 = [EXT, EXT + "1"]
RES_INIT = [EXT, EXT + "init"]
RES_INIT_IMPLICIT = [EXT, EXT + "init", DEVICE_CLASS_PREFIX + "classInit"]
DEV_MAP = {EXT: "class"}
DEV_MAP2 = {EXT: "class", EXT + "1": "class1"}
DEV_MAP_INIT = {EXT: "class", EXT + "init": "classInit",
                DEVICE_CLASS_PREFIX + "classInit": "classInit"}


@pytest.mark.parametrize(("pod", "resources", "mapping", "want"), [
    (POD1, [], {}, []),
    (POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)]),
    (POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)]),
    (POD1, RES2, DEV_MAP2, [("container-0-request-0", "class", 1),
                            ("container-0-request-1", "class1", 2)]),
    (POD2, RES2, DEV_MAP2, [("container-0-request-0", "class", 1),
                            ("container-1-request-0", "class1", 2)]),
    (POD_INIT, RES_INIT, DEV_MAP_INIT, [("container-0-request-0", "classInit", 2),
                                        ("container-1-request-0", "class", 1)]),
    (POD_INIT2, RES_INIT, DEV_MAP_INIT, [("container-1-request-0", "classInit", 2),
                                         ("container-2-request-0", "class", 1)]),
    (POD_INIT3, RES_INIT, DEV_MAP_INIT, [("container-1-request-0", "classInit", 1),
                                         ("container-2-request-0", "classInit", 2),
                                         ("container-3-request-0", "class", 1)]),
], ids=["nil", "one resource match", "one resource match, one resource not match",
        "two resources match", "two containers match",
        "one init container, one regular container",
        "two init containers, one regular container",
        "three init containers, one sidecar, one regular container"])
def test_create_requests(pod: Pod, resources: list[str], mapping: dict[str, str],
                         want: list[tuple[str, str, int]]) -> None:
    requests, _ = requests_and_mappings(pod, resources, mapping)
    got = [(r.name, r.exactly.device_class_name, r.exactly.count) for r in requests
           if r.exactly is not None and r.exactly.allocation_mode == "ExactCount"]
    assert got == want


@pytest.mark.parametrize(("pod", "resources", "mapping", "want"), [
    (POD1, RES2, DEV_MAP2, [("con0", EXT, "container-0-request-0"),
                            ("con0", EXT + "1", "container-0-request-1")]),
    (POD1_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT, [
        ("init-con0", DEVICE_CLASS_PREFIX + "classInit", "container-0-request-0"),
        ("init-con0", EXT + "init", "container-0-request-1")]),
    (POD2, RES2, DEV_MAP2, [("con0", EXT, "container-0-request-0"),
                            ("con1", EXT + "1", "container-1-request-0")]),
    (POD_INIT, RES_INIT, DEV_MAP_INIT, [("init-con0", EXT + "init", "container-0-request-0"),
                                        ("con0", EXT, "container-1-request-0")]),
    (POD_INIT2, RES_INIT, DEV_MAP_INIT, [("init-con0", EXT + "init", "container-1-request-0"),
                                         ("init-con1", EXT + "init", "container-1-request-0"),
                                         ("con0", EXT, "container-2-request-0")]),
    (POD_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT, [
        ("init-con0", EXT + "init", "container-0-request-0"),
        ("init-con1", DEVICE_CLASS_PREFIX + "classInit", "container-1-request-0"),
        ("con0", EXT, "container-2-request-0")]),
    (POD_INIT3, RES_INIT, DEV_MAP_INIT, [("init-con0", EXT + "init", "container-1-request-0"),
                                         ("sidecar-con1", EXT + "init", "container-1-request-0"),
                                         ("init-con2", EXT + "init", "container-2-request-0"),
                                         ("con0", EXT, "container-3-request-0")]),
], ids=["one container, two requests", "one container, one explicit and one implicit request",
        "two containers, two requests", "one init container, one regular container, one request",
        "three containers (two are init container), two requests",
        "three containers (two are init container), both explicit and implicit resources",
        "four containers (two are init container, one sidecar), three requests"])
def test_create_mappings(pod: Pod, resources: list[str], mapping: dict[str, str],
                         want: list[tuple[str, str, str]]) -> None:
    _, mappings = requests_and_mappings(pod, resources, mapping)
    # upstream sorts by request name, then container name, before comparing
    got = sorted(((m.request_name, m.container_name), (m.container_name, m.resource_name,
                                                       m.request_name)) for m in mappings)
    assert [g for _, g in got] == want


def test_class_mapping_explicit_and_implicit() -> None:
    # deviceclassresolver_test.go TestDeviceClassMapping: explicit names, and every class's
    # implicit name
    sc = load_scenario_text("\n---\n".join(
        f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {{name: {n}}}\n"
        f"spec: {{{f'extendedResourceName: {e}' if e else ''}}}"
        for n, e in (("class1", "example.com/gpu1"), ("class2", "example.com/gpu2"),
                     ("class3", ""))))
    got = device_class_mapping(sc.objects["DeviceClass"])
    assert got == {"example.com/gpu1": "class1", "example.com/gpu2": "class2",
                   DEVICE_CLASS_PREFIX + "class1": "class1",
                   DEVICE_CLASS_PREFIX + "class2": "class2",
                   DEVICE_CLASS_PREFIX + "class3": "class3"}


# ---------------------------------------------------------------- TestPlugin's cases

ERN = "my-example.com/my-extended-resource"
IMPLICIT = DEVICE_CLASS_PREFIX + "my-resource-class"


def cls(name: str = "my-resource-class", ern: str | None = ERN) -> str:
    spec = f"extendedResourceName: {ern}" if ern else ""
    return (f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {{name: {name}}}\n"
            f"spec: {{{spec}}}")


def node(extended: str | None = None) -> str:
    ext = f", {ERN}: '{extended}'" if extended is not None else ""
    return ("apiVersion: v1\nkind: Node\nmetadata: {name: worker, labels: "
            "{kubernetes.io/hostname: worker}}\n"
            f"status: {{allocatable: {{cpu: '8', memory: 8Gi, pods: '110'{ext}}}}}")


def slice_(devices: int = 1) -> str:
    devs = ", ".join(f"{{name: instance-{i}}}" for i in range(1, devices + 1))
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
            "spec: {driver: some-driver, nodeName: worker, "
            f"pool: {{name: worker, generation: 1, resourceSliceCount: 1}}, devices: [{devs}]}}")


def pod(*containers: dict[str, int]) -> str:
    def res(req: dict[str, int]) -> str:
        q = ", ".join(f"{k}: '{v}'" for k, v in req.items())
        return f"{{requests: {{{q}}}, limits: {{{q}}}}}"
    cs = ", ".join(f"{{name: c{i}, image: x, resources: {res(req)}}}"
                   for i, req in enumerate(containers))
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: my-pod, namespace: default, "
            f"uid: '1234'}}\nspec: {{containers: [{cs}]}}")


def stale_claim(node_name: str = "worker") -> str:
    """extendedResourceClaim / extendedResourceClaimNode2: made by an earlier cycle."""
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: my-pod-extended-resources-0
  namespace: default
  uid: my-pod-extended-resources-0
  annotations: {{{EXTENDED_CLAIM_ANNOTATION}: "true"}}
  ownerReferences: [{{apiVersion: v1, kind: Pod, name: my-pod, uid: '1234', controller: true}}]
spec: {{devices: {{requests: [{{name: container-0-request-0,
                               exactly: {{deviceClassName: my-resource-class}}}}]}}}}
status:
  allocation:
    devices:
      results: [{{request: container-0-request-0, driver: some-driver, pool: worker,
                 device: instance-1}}]
    nodeSelector:
      nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In,
                                           values: [{node_name}]}}]}}]
"""


class ApiServer(FakeBackend):
    """FakeBackend plus the calls the special claim needs."""

    def __init__(self, objects: dict[str, list[Any]]) -> None:
        super().__init__(objects)
        self.created: list[ResourceClaim] = []
        self.deleted: list[str] = []
        self.pod_status: ExtendedResourceClaimStatus | None = None
        self.fail_create = False
        self.fail_patch = False

    def create_resource_claim(self, c: ResourceClaim) -> ResourceClaim:
        if self.fail_create:
            raise RuntimeError("claim creation errors")
        meta = dataclasses.replace(c.metadata, uid=f"{c.namespace}/{c.name}")
        new = dataclasses.replace(c, metadata=meta)
        replace_claim(self.objects, new)
        self.created.append(new)
        return new

    def delete_resource_claim(self, c: ResourceClaim) -> None:
        remove_claim(self.objects, c)
        self.deleted.append(c.name)

    def update_pod_extended_resource_claim_status(
            self, p: Pod, status: ExtendedResourceClaimStatus) -> None:
        if self.fail_patch:
            raise RuntimeError("patch error")
        self.pod_status = status


class Run:
    def __init__(self, *docs: str, version: str = "1.37") -> None:
        sc = load_scenario_text("\n---\n".join(docs))
        self.pod = next(p for p in sc.pods if not p.spec.node_name)
        self.nodes = sc.nodes
        self.objects = {k: list(v) for k, v in sc.objects.items()}
        self.api = ApiServer(self.objects)
        self.handle = Handle(objects=self.objects, backend=self.api,  # type: ignore[arg-type]
                             features=FeatureGates(version))
        self.plugin = DynamicResources({}, self.handle)
        self.state = CycleState()

    def pre_filter(self) -> Status | None:
        return self.plugin.pre_filter(self.state, self.pod, None)[1]  # type: ignore[arg-type]

    def filter(self) -> Status | None:
        return self.plugin.filter(self.state, self.pod, NodeInfo(self.nodes[0]))

    def post_filter(self) -> Status:
        return self.plugin.post_filter(self.state, self.pod, {})[1]  # type: ignore[arg-type]

    def reserve(self) -> Status | None:
        return self.plugin.reserve(self.state, self.pod, "worker")

    def pre_bind(self) -> Status | None:
        return self.plugin.pre_bind(self.state, self.pod, "worker")

    def in_flight(self) -> list[ResourceClaim]:
        return list(self.handle.dra.in_flight.values())

    def stored(self) -> dict[str, ResourceClaim]:
        return dict(dra_index(self.objects).claims)


def results(c: ResourceClaim) -> list[tuple[str, str]]:
    assert c.allocation is not None
    return [(r.request, r.device) for r in c.allocation.results]


def test_empty_with_extended_resources_enabled() -> None:
    r = Run(node(), "apiVersion: v1\nkind: Pod\nmetadata: {name: foo}\n"
            "spec: {containers: [{name: c}]}")
    assert code(r.pre_filter()) == (Code.SKIP, ())
    assert code(r.post_filter()) == (U, ("no new claims to deallocate",))


def test_extended_resource_name_with_node_resource() -> None:
    # the node's device plugin serves it: every step succeeds, nothing is created
    r = Run(node("1"), pod({ERN: 1}), cls())
    assert r.pre_filter() is None
    assert r.filter() is None
    assert r.reserve() is None and r.in_flight() == []
    assert r.pre_bind() is None
    assert r.api.created == [] and r.api.pod_status is None


def test_extended_resource_one_device_plugin_one_dra() -> None:
    r = Run(node("1"), pod({ERN: 1, ERN + "2": 1}), cls(),
            cls("my-resource-class2", ERN + "2"), slice_())
    assert r.pre_filter() is None and r.filter() is None
    assert r.reserve() is None
    (pending,) = r.in_flight()
    assert pending.name == SPECIAL_CLAIM_NAME
    assert [(q.name, q.exactly.device_class_name) for q in pending.spec.requests
            if q.exactly is not None] == [("container-0-request-1", "my-resource-class2")]
    assert results(pending) == [("container-0-request-1", "instance-1")]
    assert r.pre_bind() is None
    (created,) = r.api.created
    stored = r.stored()[f"default/{created.name}"]
    assert results(stored) == [("container-0-request-1", "instance-1")]
    assert [x.uid for x in stored.reserved_for] == ["1234"]
    assert r.in_flight() == []


@pytest.mark.parametrize("allocatable", ["0", None],
                         ids=["extended-resource-name-with-zero-allocatable",
                              "extended-resource-name-with-resources"])
def test_extended_resource_allocated_through_dra(allocatable: str | None) -> None:
    r = Run(node(allocatable), pod({ERN: 1}), cls(), slice_())
    assert r.pre_filter() is None and r.filter() is None
    assert r.reserve() is None
    (pending,) = r.in_flight()
    assert pending.name == SPECIAL_CLAIM_NAME  # extendedResourceClaimNoName
    assert r.pre_bind() is None
    (created,) = r.api.created
    # upstream: GenerateName "my-pod-extended-resources-" (the API server picks the rest)
    assert created.name == created_claim_name(r.pod)
    assert created.name.startswith("my-pod-extended-resources-")
    assert created.metadata.annotations == {EXTENDED_CLAIM_ANNOTATION: "true"}
    assert [(o.kind, o.name, o.uid, o.controller)
            for o in created.metadata.owner_references] == [("Pod", "my-pod", "1234", True)]
    stored = r.stored()[f"default/{created.name}"]
    assert results(stored) == [("container-0-request-0", "instance-1")]
    assert r.api.pod_status is not None
    assert r.api.pod_status.resource_claim_name == created.name
    assert [(m.container_name, m.resource_name, m.request_name)
            for m in r.api.pod_status.request_mappings] == [
        ("c0", ERN, "container-0-request-0")]


def test_non_dra_extended_resource_name_with_zero_allocatable() -> None:
    r = Run(node("0"), pod({ERN: 1}), cls(ern=None), slice_())
    assert code(r.pre_filter()) == (Code.SKIP, ())


def test_extended_resource_name_no_resource() -> None:
    r = Run(node(), pod({ERN: 1}), cls())
    assert r.pre_filter() is None
    assert code(r.filter()) == (UU, ("cannot allocate all claims",))
    assert code(r.post_filter()) == (U, ("still not schedulable",))


@pytest.mark.parametrize(("requests", "want"), [
    ([{IMPLICIT: 1, ERN: 2}], [("container-0-request-0", "instance-1"),
                               ("container-0-request-1", "instance-2"),
                               ("container-0-request-1", "instance-3")]),
    ([{IMPLICIT: 1}, {ERN: 2}], [("container-0-request-0", "instance-1"),
                                 ("container-1-request-0", "instance-2"),
                                 ("container-1-request-0", "instance-3")]),
], ids=["implicit-extended-resource-name-with-resources",
        "implicit-extended-resource-name-two-containers-with-resources"])
def test_implicit_extended_resource_name(requests: list[dict[str, int]],
                                         want: list[tuple[str, str]]) -> None:
    r = Run(node(), pod(*requests), cls(), slice_(4))
    assert r.pre_filter() is None and r.filter() is None
    assert r.reserve() is None and r.pre_bind() is None
    (created,) = r.api.created
    assert results(r.stored()[f"default/{created.name}"]) == want


def test_extended_resource_name_with_resources_fail_patch() -> None:
    r = Run(node(), pod({ERN: 1}), cls(), slice_())
    r.api.fail_patch = True
    assert r.pre_filter() is None and r.filter() is None and r.reserve() is None
    st = r.pre_bind()
    assert st is not None and "patch error" in st.message()
    assert len(r.api.created) == 1  # the claim was created and allocated before the patch


@pytest.mark.parametrize("node_name", ["worker", "worker-2"],
                         ids=["extended-resource-name-with-resources-has-claim",
                              "extended-resource-name-with-resources-delete-claim"])
def test_stale_extended_claim_deleted_by_post_filter(node_name: str) -> None:
    r = Run(node(), pod({ERN: 1}), cls(), slice_(), stale_claim(node_name))
    assert r.pre_filter() is None
    assert code(r.filter()) == (UU, ("cannot schedule extended resource claim",))
    assert code(r.post_filter()) == (U, ("deletion of ResourceClaim completed",))
    assert r.api.deleted == ["my-pod-extended-resources-0"]
    assert r.stored() == {}


def test_extended_resource_name_bind_failure() -> None:
    # PreBind created the claim; the Bind failing afterwards makes Unreserve delete it
    r = Run(node(), pod({ERN: 1}), cls(), slice_())
    assert r.pre_filter() is None and r.filter() is None and r.reserve() is None
    assert r.pre_bind() is None
    (created,) = r.api.created
    r.plugin.unreserve(r.state, r.pod, "worker")
    assert r.api.deleted == [created.name]
    assert r.stored() == {}


def test_extended_resource_name_skip_bind() -> None:
    r = Run(node(), pod({ERN: 1}), cls(), slice_())
    assert r.pre_filter() is None and r.filter() is None and r.reserve() is None
    assert len(r.in_flight()) == 1
    r.plugin.unreserve(r.state, r.pod, "worker")
    assert r.in_flight() == [] and r.api.created == [] and r.api.deleted == []


def test_extended_resource_name_claim_creation_failure() -> None:
    r = Run(node(), pod({ERN: 1}), cls(), slice_())
    r.api.fail_create = True
    assert r.pre_filter() is None and r.filter() is None and r.reserve() is None
    st = r.pre_bind()
    assert st is not None and "claim creation errors" in st.message()
    assert r.in_flight() == [] and r.stored() == {}


def test_gate_off_in_1_35() -> None:
    # DRAExtendedResource is alpha (off) in 1.35: no special claim
    r = Run(node(), pod({ERN: 1}), cls(), slice_(), version="1.35")
    assert code(r.pre_filter()) == (Code.SKIP, ())


# ---------------------------------------------------------------- NodeResourcesFit

A, B, DRA = "example.com/aaa", "example.com/bbb", "extended.resource.dra.io/something"
FIT_NODE = ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
            f"status: {{allocatable: {{cpu: 10m, memory: '20', pods: '32', {A}: '5', "
            "ephemeral-storage: '20', hugepages-2Mi: '5'}}")
FIT_CLASS = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
             f"spec: {{extendedResourceName: {DRA}}}")


@pytest.mark.parametrize(("enabled", "requests", "want"), [
    (True, {A: 1}, None),
    (True, {"cpu": "1m", "memory": "1", DRA: 1}, None),
    (False, {"cpu": "1m", "memory": "1", DRA: 1}, (UU, (f"Insufficient {DRA}",))),
    (True, {"cpu": "1m", "memory": "1", B: 1}, (UU, (f"Insufficient {B}",))),
    (True, {DRA: 1}, None),
    (True, {A: 1}, None),
], ids=["extended resource backed by device plugin", "extended resource backed by DRA",
        "extended resource backed by DRA not enabled", "extended resource NOT backed by DRA",
        "extended resource was backed by Device Plugin (Allocatable: 0)",
        "extended resource was backed by Device Plugin (Allocatable: 0), global cache"])
def test_fit_delegates_to_dra(enabled: bool, requests: dict[str, Any],
                              want: tuple[Code, tuple[str, ...]] | None) -> None:
    reqs = ", ".join(f"{k}: '{v}'" for k, v in requests.items())
    sc = load_scenario_text("\n---\n".join([
        FIT_NODE, FIT_CLASS, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        f"spec: {{containers: [{{name: c, resources: {{requests: {{{reqs}}}, "
        f"limits: {{{reqs}}}}}}}]}}"]))
    handle = Handle(objects=sc.objects, features=FeatureGates(
        "1.37" if enabled else "1.35"))
    fit = Fit({}, handle)
    state = CycleState()
    p = sc.pods[0]
    fit.pre_filter(state, p, None)  # type: ignore[arg-type]
    got = fit.filter(state, p, NodeInfo(sc.nodes[0]))
    assert (None if got is None else code(got)) == want


# ---------------------------------------------------------------- claims shared between pods

def test_shared_claim_allocated_for_another_pod_gets_this_pod_added() -> None:
    # upstream: an allocated claim with room in reservedFor (ResourceClaimReservedForMaxSize
    # 256) is usable; PreBind appends the pod to reservedFor, keeping the other consumer
    r = ClaimRun(NODE, POD_CLAIM, claim(allocated=True, reserved_for="other"))
    assert r.pre_filter() is None
    assert r.filter() == {"worker": None}
    assert r.schedule() is None
    assert [x.uid for x in r.claim().reserved_for] == ["other", "1234"]


def test_shared_claim_being_allocated_for_another_pod_waits() -> None:
    # pod A's cycle reserved the shared claim's allocation (in flight until its PreBind);
    # pod B must wait: upstream's "is in the process of being allocated"
    r = ClaimRun(NODE, POD_CLAIM, claim(), CLASS, SLICE % "")
    assert r.pre_filter() is None and r.filter() == {"worker": None}
    assert r.plugin.reserve(r.state, r.pod, "worker") is None
    other = ClaimRun(NODE, POD_CLAIM.replace('uid: "1234"', 'uid: "5678"'), claim(), CLASS,
                     SLICE % "")
    other.handle = r.handle
    other.plugin = DynamicResources({}, r.handle)
    assert code(other.pre_filter()) == (UU, (
        "resource claim default/my-pod-my-resource is in the process of being allocated",))


def test_fit_batch_form_agrees_on_dra_backed_resources() -> None:
    # the table form (filter_batch) delegates as the per-node form does: a node without the
    # resource, one with 0 of it, one whose device plugin has too few, one with enough

    nodes = "\n---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\n"
        f"status: {{allocatable: {{cpu: '1', memory: 1Gi, pods: '10'{extra}}}}}"
        for n, extra in (("none", ""), ("zero", f", {DRA}: '0'"), ("few", f", {DRA}: '1'"),
                         ("many", f", {DRA}: '4'")))
    sc = load_scenario_text("\n---\n".join([
        nodes, FIT_CLASS, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        f"spec: {{containers: [{{name: c, resources: {{requests: {{{DRA}: '2'}}, "
        f"limits: {{{DRA}: '2'}}}}}}]}}"]))
    fit = Fit({}, Handle(objects=sc.objects, features=FeatureGates("1.37")))
    p = sc.pods[0]
    snap = snapshot_from_nodes(sc.nodes, [])
    state = CycleState()
    fit.pre_filter(state, p, snap)
    idx = np.arange(snap.num_nodes)
    batch = fit.filter_batch(state, p, snap, idx)
    assert fit.filter_passes(state, p, snap, idx).tolist() == (batch.codes == 0).tolist()
    assert [fit.filter_row(state, p, snap, i) for i in idx.tolist()] == (
        batch.codes == 0).tolist()
    names = snap.table.names
    per_node = {n.name: fit.filter(state, p, NodeInfo(n)) for n in sc.nodes}
    for i, name in enumerate(names):
        got = None if batch.codes[i] == 0 else (Code(int(batch.codes[i])),
                                                batch.reasons[batch.reason_ids[i]])
        assert got == (None if per_node[name] is None else code(per_node[name])), name
    assert per_node == {"none": None, "zero": None,
                        "few": per_node["few"], "many": None}
    assert code(per_node["few"]) == (UU, (f"Insufficient {DRA}",))


def test_fit_asks_the_classes_again_for_a_pod_with_dra_backed_resources() -> None:
    # Fit's PreFilter state is kept per requests, but not for a resource a DeviceClass may
    # map: the same pod is judged again when a class comes
    sc = load_scenario_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: none}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        f"spec: {{containers: [{{name: c, resources: {{requests: {{{DRA}: '2'}}, "
        f"limits: {{{DRA}: '2'}}}}}}]}}")
    objects: dict[str, list[Any]] = {k: list(v) for k, v in sc.objects.items()}
    fit = Fit({}, Handle(objects=objects, features=FeatureGates("1.37")))
    p, node = sc.pods[0], NodeInfo(sc.nodes[0])
    snap = snapshot_from_nodes(sc.nodes, [])

    def verdict() -> Any:
        state = CycleState()
        fit.pre_filter(state, p, snap)
        st = fit.filter(state, p, node)
        return None if st is None else code(st)

    assert verdict() == (UU, (f"Insufficient {DRA}",))  # no class: the node lacks it
    objects.setdefault("DeviceClass", []).extend(load_scenario_text(FIT_CLASS).objects
                                                 ["DeviceClass"])
    assert verdict() is None  # a class backs it: left to DynamicResources
