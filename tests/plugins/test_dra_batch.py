"""DynamicResources' batch Filter (``batch.py``, with the allocations it keeps across cycles
in ``cache.AllocationMemo``) against the per-node Filter, on random clusters: node-local
pools (one or two slices, some incomplete), pools for all nodes or a zone, classes and
request selectors, claims from templates and shared claims already allocated, and a
sequence of pods whose allocations are written (and some freed) between cycles, so the kept
answers must follow the devices that move. Since DRA's consumable capacity, binding
conditions and extended resources: devices allowing multiple allocations (shared by claims
asking for capacity, so a device's consumed capacity moves while it stays allocated),
devices with binding conditions and an allocated claim whose binding failed or timed out
(unavailable everywhere), and pods asking for an extended resource a DeviceClass backs
(given the per-node form). Verdicts, reasons, the allocations kept for Score / Reserve and
the claims PostFilter may deallocate must be the same."""

from __future__ import annotations

import contextlib
import dataclasses
import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.dra.store import dra_index, pod_reference, remove_claim, replace_claim
from kubesched.api.scenario import load_scenario_text
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.cache import IndexedAllocator, slice_index
from kubesched.plugins.dynamicresources.plugin import (
    STATE_KEY,
    DynamicResources,
    allocator_features,
)
from kubesched.plugins.dynamicresources.structured import AllocationError, Allocator
from kubesched.testing import assert_forms_agree, snapshot_from_nodes

DRIVER = "drv"
CLASSES = {
    "any": f'device.driver == "{DRIVER}"',
    "a100": f'device.attributes["{DRIVER}"].model == "A100"',
    "big": f'device.attributes["{DRIVER}"].mem >= 2',
}
SELECTORS = ["", f'device.attributes["{DRIVER}"].mem <= 2', 'device.driver == "drv"']
EXT = "example.com/gpu"  # the extended resource the class "ext" backs


def _device(rng: random.Random, name: str) -> str:
    extra = ""
    r = rng.random()
    if r < 0.25:  # consumable capacity: shared by claims until its slots are used up
        extra = (", allowMultipleAllocations: true, capacity: {slots: {value: '4', "
                 "requestPolicy: {default: '1', validRange: {min: '1', step: '1'}}}}")
    elif r < 0.35:  # binding conditions: PreBind waits for the driver
        extra = ", bindingConditions: [ready], bindingFailureConditions: [failed]"
    return (f"{{name: {name}, attributes: {{model: {{string: {rng.choice(['A100', 'H100'])}}}, "
            f"mem: {{int: {rng.randint(1, 3)}}}}}{extra}}}")


def _slice(name: str, pool: str, where: str, devices: list[str], count: int = 1,
           generation: int = 1) -> str:
    return (f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: {name}}}\n"
            f"spec:\n  driver: {DRIVER}\n  {where}\n"
            f"  pool: {{name: {pool}, generation: {generation}, resourceSliceCount: {count}}}\n"
            f"  devices: [{', '.join(devices)}]\n")


def _request(rng: random.Random, i: int) -> str:
    sel = rng.choice(SELECTORS)
    sels = f", selectors: [{{cel: {{expression: '{sel}'}}}}]" if sel else ""
    if rng.random() < 0.3:
        sels += f", capacity: {{requests: {{slots: '{rng.randint(1, 3)}'}}}}"
    return (f"{{name: r{i}, exactly: {{deviceClassName: {rng.choice(list(CLASSES))}, "
            f"count: {rng.choice([1, 1, 1, 2])}{sels}}}}}")


def _cluster(rng: random.Random, node_local: bool) -> tuple[list[str], list[str]]:
    """Documents (nodes, classes, slices, templates, shared claims) and the pods' names."""
    docs = []
    nodes = [f"n{i}" for i in range(rng.randint(1, 6))]
    for n in nodes:
        # some nodes' device plugins serve the extended resource themselves
        plugin = f", {EXT}: '2'" if rng.random() < 0.3 else ""
        docs.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: "
                    f"{{zone: {rng.choice('ab')}}}}}\n"
                    f"status: {{allocatable: {{cpu: '8', memory: 8Gi, pods: '110'{plugin}}}}}")
    for name, expr in CLASSES.items():
        docs.append(f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: "
                    f"{{name: {name}}}\nspec: {{selectors: [{{cel: {{expression: '{expr}'}}}}]}}")
    docs.append("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: ext}\n"
                f"spec: {{extendedResourceName: {EXT}, selectors: [{{cel: {{expression: "
                f"'{CLASSES['any']}'}}}}]}}")
    for n in nodes:
        if rng.random() < 0.2:
            continue
        k = rng.randint(0, 4)
        devs = [_device(rng, f"d{j}") for j in range(k)]
        if rng.random() < 0.3:  # two slices, the second maybe never published
            docs.append(_slice(f"{n}-a", n, f"nodeName: {n}", devs[: k // 2], count=2))
            if rng.random() < 0.7:
                docs.append(_slice(f"{n}-b", n, f"nodeName: {n}", devs[k // 2:], count=2))
        else:
            docs.append(_slice(n, n, f"nodeName: {n}", devs))
        if rng.random() < 0.15:  # an older generation of the pool, ignored
            docs.append(_slice(f"{n}-old", n, f"nodeName: {n}",
                               [_device(rng, "d0")], generation=0))
    if not node_local:
        where = rng.choice(["allNodes: true", "nodeSelector: {nodeSelectorTerms: "
                            "[{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}"])
        docs.append(_slice("net", "net", where, [_device(rng, f"x{j}") for j in range(3)]))
    pods = []
    for p in range(rng.randint(1, 6)):
        reqs = ", ".join(_request(rng, i) for i in range(rng.choice([1, 1, 2])))
        docs.append("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                    f"metadata: {{name: t{p}, namespace: default}}\n"
                    f"spec: {{spec: {{devices: {{requests: [{reqs}]}}}}}}")
        claims = [f"{{name: c, resourceClaimTemplateName: t{p}}}"]
        if rng.random() < 0.25:
            claims.append("{name: s, resourceClaimName: shared}")
        if rng.random() < 0.15:  # an extended resource only, or beside the claims
            if rng.random() < 0.5:
                claims = []
            gpus = rng.randint(1, 2)
            container = (f"{{name: c, resources: {{requests: {{{EXT}: '{gpus}'}}, "
                         f"limits: {{{EXT}: '{gpus}'}}}}}}")
        else:
            container = "{name: c}"
        docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: default, "
                    f"uid: p{p}}}\nspec: {{containers: [{container}], "
                    f"resourceClaims: [{', '.join(claims)}]}}")
        pods.append(f"p{p}")
    if nodes and rng.random() < 0.7:
        # a claim shared by some pods, allocated (or not yet) on one node
        node = rng.choice(nodes)
        status = ""
        r = rng.random()
        if r < 0.5:
            status = ("status:\n  allocation:\n    devices: {results: []}\n    nodeSelector:\n"
                      "      nodeSelectorTerms: [{matchFields: [{key: metadata.name, "
                      f"operator: In, values: [{node}]}}]}}]\n")
        elif r < 0.7:
            # a device with binding conditions whose binding failed, timed out (allocated
            # long ago) or is still pending: the first two make it unavailable everywhere
            failed, when = rng.choice([("True", ""), ("False", ""),
                                       ("False", "    allocationTimestamp: "
                                                 "'2020-01-01T00:00:00Z'\n")])
            status = ("status:\n  allocation:\n" + when
                      + f"    devices: {{results: [{{request: r0, driver: {DRIVER}, "
                      f"pool: {node}, device: d0, bindingConditions: [ready], "
                      "bindingFailureConditions: [failed]}]}\n    nodeSelector:\n"
                      "      nodeSelectorTerms: [{matchFields: [{key: metadata.name, "
                      f"operator: In, values: [{node}]}}]}}]\n"
                      f"  devices: [{{driver: {DRIVER}, pool: {node}, device: d0, "
                      f"conditions: [{{type: failed, status: '{failed}'}}]}}]\n")
        docs.append("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                    "metadata: {name: shared, namespace: default, uid: shared}\n"
                    "spec: {devices: {requests: [{name: r0, exactly: {deviceClassName: any}}]}}\n"
                    + status)
    return docs, pods


class Backend:
    def __init__(self, objects: dict[str, list[Any]]) -> None:
        self.objects = objects

    def update_resource_claim_status(self, c: Any) -> Any:
        replace_claim(self.objects, c)
        return c

    def update_resource_claim(self, c: Any) -> Any:  # PreBind's delete-protection finalizer
        replace_claim(self.objects, c)
        return c

    def record_event(self, pod: Any, event_type: str, reason: str, message: str) -> None:
        pass

    def create_resource_claim(self, c: Any) -> Any:  # the extended resources' claim
        new = dataclasses.replace(c, metadata=dataclasses.replace(
            c.metadata, uid=f"{c.namespace}/{c.name}"))
        replace_claim(self.objects, new)
        return new

    def delete_resource_claim(self, c: Any) -> None:
        remove_claim(self.objects, c)

    def update_pod_extended_resource_claim_status(self, pod: Any, status: Any) -> None:
        pass


def _statuses(out: Any, n: int) -> list[tuple[int, tuple[str, ...]]]:
    return [(int(out.codes[k]), out.reasons[int(out.reason_ids[k])] if out.codes[k] else ())
            for k in range(n)]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), node_local=st.booleans())
def test_batch_filter_agrees_with_per_node_filter_across_cycles(seed: int,
                                                                 node_local: bool) -> None:
    rng = random.Random(seed)
    docs, pods = _cluster(rng, node_local)
    sc = load_scenario_text("\n---\n".join(docs))
    objects = {k: list(v) for k, v in sc.objects.items()}
    handle = Handle(objects=objects, backend=Backend(objects))  # type: ignore[arg-type]
    batch = DynamicResources({}, handle)  # kept across the pods: its answers carry over
    snap = snapshot_from_nodes(sc.nodes, [])
    infos = snap.node_infos
    all_rows = np.arange(len(infos), dtype=np.int64)
    by_name = {p.name: p for p in sc.pods}
    waiting: list[tuple[CycleState, Any, str]] = []  # reserved, not yet bound
    for name in pods:
        pod = by_name[name]
        reference = DynamicResources({}, handle)
        s_ref, s_batch = CycleState(), CycleState()
        _r, st_ref = reference.pre_filter(s_ref, pod, snap)
        _r, st_batch = batch.pre_filter(s_batch, pod, snap)
        assert (st_ref is None) == (st_batch is None)
        if st_ref is not None and not st_ref.is_success():
            assert (st_ref.code, st_ref.reasons) == (st_batch.code, st_batch.reasons)
            continue
        rows = all_rows if rng.random() < 0.7 else np.array(
            sorted(rng.sample(range(len(infos)), rng.randint(0, len(infos)))), dtype=np.int64)
        out = batch.filter_batch(s_batch, pod, snap, rows)
        want = []
        for row in rows.tolist():
            one = reference.filter(s_ref, pod, infos[row])
            want.append((0, ()) if one is None or one.is_success()
                        else (int(one.code), one.reasons))
        assert _statuses(out, len(rows)) == want
        ref, got = s_ref.read(STATE_KEY), s_batch.read(STATE_KEY)
        assert got.node_allocations == ref.node_allocations
        assert got.unavailable == ref.unavailable
        scores = batch.score_batch(s_batch, pod, snap, rows)
        assert scores.tolist() == [reference.score(s_ref, pod, infos[r]) for r in rows.tolist()]
        # the pod goes to its first feasible node: its claims' allocations are written, at
        # once or after the next pod's cycle (in flight meanwhile), or it is unreserved
        for st_, p_, node_ in waiting:
            if rng.random() < 0.8:  # fails if another scheduler took the claim meanwhile
                batch.pre_bind(st_, p_, node_)
            else:
                batch.unreserve(st_, p_, node_)
        waiting = []
        feasible = [r for r, (c, _) in zip(rows.tolist(), want, strict=True) if c == 0]
        if feasible and rng.random() < 0.8:
            node = infos[feasible[0]].name
            if batch.reserve(s_batch, pod, node) is None:
                if rng.random() < 0.6:
                    st_bind = batch.pre_bind(s_batch, pod, node)
                    # waiting for devices' binding conditions ends at once in a test
                    assert st_bind is None or "binding" in st_bind.reasons[0], st_bind
                else:
                    waiting.append((s_batch, pod, node))
        if rng.random() < 0.3:  # someone frees a claim's devices
            allocated = [c for c in dra_index(objects).claims.values() if c.allocation]
            if allocated:
                c = rng.choice(allocated)
                replace_claim(objects, dataclasses.replace(c, allocation=None,
                                                           reserved_for=()))
        if rng.random() < 0.3:  # or another scheduler allocates a claim somewhere
            idx = dra_index(objects)
            free = [c for c in idx.claims.values() if c.allocation is None]
            if free and infos:
                c = rng.choice(free)
                features = allocator_features(handle)
                alloc = Allocator(features, idx.allocated_state(features.consumable_capacity),
                                  idx.classes, idx.slices, idx.taint_rules)
                with contextlib.suppress(AllocationError):
                    res = alloc.allocate(rng.choice(infos).node, [c])
                    if res:
                        replace_claim(objects, dataclasses.replace(
                            c, allocation=res[0],
                            reserved_for=(pod_reference("other", "other"),)))


def _answer(alloc: Allocator, node: Any, claims: list[Any]) -> Any:
    try:
        return alloc.allocate(node, claims)
    except AllocationError as e:
        return str(e)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), node_local=st.booleans())
def test_indexed_allocator_agrees_with_allocator_over_all_slices(seed: int,
                                                                 node_local: bool) -> None:
    """The allocator given a node's slices (``SliceIndex.for_node``) and the index's CEL
    verdicts answers as the allocator over every slice, for every node and pod."""
    rng = random.Random(seed)
    docs, _pods = _cluster(rng, node_local)
    sc = load_scenario_text("\n---\n".join(docs))
    idx = dra_index({k: list(v) for k, v in sc.objects.items()})
    features = allocator_features(Handle())
    allocated = idx.allocated_state(features.consumable_capacity)
    claims = [c for c in idx.claims.values() if c.allocation is None]
    index = slice_index(idx.slices)
    for node in [*sc.nodes, None]:
        for k in range(1, min(3, len(claims)) + 1):
            some = rng.sample(claims, k)
            plain = Allocator(features, allocated, idx.classes, idx.slices, idx.taint_rules)
            indexed = IndexedAllocator(features, allocated, idx.classes, index,
                                       idx.taint_rules)
            assert _answer(indexed, node, some) == _answer(plain, node, some)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), node_local=st.booleans())
def test_forms_agree_on_random_clusters(seed: int, node_local: bool) -> None:
    """``assert_forms_agree`` (one fresh cycle: Filter codes and reasons, raw scores)."""
    docs, pods = _cluster(random.Random(seed), node_local)
    text = "\n---\n".join(docs)
    for name in pods:
        try:
            assert_forms_agree(DynamicResources({}, Handle()), text, f"default/{name}")
        except AssertionError as e:  # a PreFilter rejection leaves nothing to compare
            if "PreFilter of DynamicResources returned" not in str(e):
                raise


def test_allocated_devices_changed_in_place_are_not_trusted() -> None:
    """Preemption's "as if" may take devices out of a cycle's allocator: the kept answers
    must not outlive a set changed in place."""
    docs = [
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}",
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: any}\n"
        f"spec: {{selectors: [{{cel: {{expression: '{CLASSES['any']}'}}}}]}}",
        _slice("n0", "n0", "nodeName: n0", ["{name: d0}"]),
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        "metadata: {name: held, namespace: default, uid: held}\n"
        "spec: {devices: {requests: [{name: r0, exactly: {deviceClassName: any}}]}}\n"
        "status:\n  allocation:\n    devices: {results: [{request: r0, driver: drv, pool: n0, "
        "device: d0}]}",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
        "metadata: {name: t0, namespace: default}\n"
        "spec: {spec: {devices: {requests: [{name: r0, exactly: {deviceClassName: any}}]}}}",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p0, namespace: default, uid: p0}\n"
        "spec: {containers: [{name: c}], resourceClaims: [{name: c, "
        "resourceClaimTemplateName: t0}]}",
    ]
    sc = load_scenario_text("\n---\n".join(docs))
    objects = {k: list(v) for k, v in sc.objects.items()}
    plugin = DynamicResources({}, Handle(objects=objects))
    snap = snapshot_from_nodes(sc.nodes, [])
    rows = np.arange(1, dtype=np.int64)
    pod = sc.pods[0]
    state = CycleState()
    plugin.pre_filter(state, pod, snap)
    assert plugin.filter_batch(state, pod, snap, rows).codes.tolist() == [int(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]
    state.read(STATE_KEY).allocator.allocated.discard(("drv", "n0", "d0"))
    assert plugin.filter_batch(state, pod, snap, rows).codes.tolist() == [0]


def test_shared_device_whose_consumed_capacity_changed_is_asked_again() -> None:
    """A device allowing multiple allocations stays allocated (shared) while another claim
    takes some of its capacity: the node's kept answer must not outlive that."""
    docs = [
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}",
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: any}\n"
        f"spec: {{selectors: [{{cel: {{expression: '{CLASSES['any']}'}}}}]}}",
        _slice("n0", "n0", "nodeName: n0", [
            "{name: d0, allowMultipleAllocations: true, capacity: {slots: {value: '4'}}}"]),
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        "metadata: {name: held, namespace: default, uid: held}\n"
        "spec: {devices: {requests: [{name: r0, exactly: {deviceClassName: any, "
        "capacity: {requests: {slots: '1'}}}}]}}\n"
        "status:\n  allocation:\n    devices: {results: [{request: r0, driver: drv, pool: n0, "
        "device: d0, shareID: aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa, "
        "consumedCapacity: {slots: '1'}}]}",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
        "metadata: {name: t0, namespace: default}\n"
        "spec: {spec: {devices: {requests: [{name: r0, exactly: {deviceClassName: any, "
        "capacity: {requests: {slots: '3'}}}}]}}}",
        *(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, uid: p{i}}}\n"
          "spec: {containers: [{name: c}], resourceClaims: [{name: c, "
          "resourceClaimTemplateName: t0}]}" for i in range(2)),
    ]
    sc = load_scenario_text("\n---\n".join(docs))
    objects = {k: list(v) for k, v in sc.objects.items()}
    plugin = DynamicResources({}, Handle(objects=objects))
    snap = snapshot_from_nodes(sc.nodes, [])
    rows = np.arange(1, dtype=np.int64)
    state = CycleState()
    plugin.pre_filter(state, sc.pods[0], snap)
    assert plugin.filter_batch(state, sc.pods[0], snap, rows).codes.tolist() == [0]  # 1 + 3
    # another claim shares d0 now: 2 of 4 slots taken, the device was and stays shared
    held = dra_index(objects).claim("default", "held")
    assert held is not None and held.allocation is not None
    other = dataclasses.replace(held, metadata=dataclasses.replace(
        held.metadata, name="other", uid="other"), allocation=dataclasses.replace(
            held.allocation, results=(dataclasses.replace(
                held.allocation.results[0], share_id="bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"),)))
    replace_claim(objects, other)
    state = CycleState()
    plugin.pre_filter(state, sc.pods[1], snap)
    assert plugin.filter_batch(state, sc.pods[1], snap, rows).codes.tolist() == [int(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]
    assert plugin.filter(state, sc.pods[1], snap.node_infos[0]) is not None
