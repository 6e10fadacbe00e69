"""VolumeZone: upstream v1.35 ``volume_zone_test.go`` tables (TestSingleZone, TestMultiZone,
TestWithBinding, TestIsSchedulableAfterPersistentVolumeClaimAdded,
TestIsSchedulableAfterStorageClassAdded, TestIsSchedulableAfterPersistentVolumeChange), each
Filter checked in the per-node and the batch form."""

from __future__ import annotations

import pytest
from _volume_util import (
    as_pair,
    filter_all,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_sc,
    prefilter,
    setup,
)

from kubesched.api.types import REGION_LABEL, REGION_LABEL_BETA, ZONE_LABEL, ZONE_LABEL_BETA
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone, label_zones_to_set

OK = (Code.SUCCESS, ())
SKIP = (Code.SKIP, ())
CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))


def pod_with(pvc: str):
    return make_pod("pod_1", pvcs=(pvc,))


def _run(objs, pod, node_labels, want_pre, want_filter, *, hostname_label: bool = False):
    node = make_node("host1", node_labels, hostname_label=hostname_label)
    pl, snap = setup(VolumeZone, objs, [node])
    state, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == want_pre
    # upstream calls Filter even when PreFilter did not succeed (Filter falls back)
    got = filter_all(pl, state, pod, snap)[0]
    assert as_pair(got) == want_filter


SINGLE_PVS = [
    make_pv("Vol_1", labels={ZONE_LABEL_BETA: "us-west1-a"}),
    make_pv("Vol_2", labels={REGION_LABEL_BETA: "us-west1", "uselessLabel": "none"}),
    make_pv("Vol_3", labels={REGION_LABEL_BETA: "us-west1"}),
    make_pv("Vol_Stable_1", labels={ZONE_LABEL: "us-west1-a"}),
    make_pv("Vol_Stable_2", labels={REGION_LABEL: "us-west1", "uselessLabel": "none"}),
    make_pv("Vol_Stable_3", labels={ZONE_LABEL: "us-west1-a", REGION_LABEL: "us-west1-a"}),
]
SINGLE_PVCS = [
    make_pvc("PVC_1", volume_name="Vol_1"),
    make_pvc("PVC_2", volume_name="Vol_2"),
    make_pvc("PVC_3", volume_name="Vol_3"),
    make_pvc("PVC_4", volume_name="Vol_not_exist"),
    make_pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    make_pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
    make_pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
]

SINGLE_ZONE = [
    ("pod without volume", None, {ZONE_LABEL_BETA: "us-west1-a"}, SKIP, OK),
    ("node without labels", "PVC_1", {}, OK, OK),
    ("beta zone label matched", "PVC_1", {ZONE_LABEL_BETA: "us-west1-a", "uselessLabel": "none"},
     OK, OK),
    ("beta region label matched", "PVC_2",
     {REGION_LABEL_BETA: "us-west1", "uselessLabel": "none"}, OK, OK),
    ("beta region label doesn't match", "PVC_2",
     {REGION_LABEL_BETA: "no_us-west1", "uselessLabel": "none"}, OK, CONFLICT),
    ("beta zone label doesn't match", "PVC_1",
     {ZONE_LABEL_BETA: "no_us-west1-a", "uselessLabel": "none"}, OK, CONFLICT),
    ("zone label matched", "PVC_Stable_1", {ZONE_LABEL: "us-west1-a", "uselessLabel": "none"},
     OK, OK),
    ("region label matched", "PVC_Stable_2", {REGION_LABEL: "us-west1", "uselessLabel": "none"},
     OK, OK),
    ("region label doesn't match", "PVC_Stable_2",
     {REGION_LABEL: "no_us-west1", "uselessLabel": "none"}, OK, CONFLICT),
    ("zone label doesn't match", "PVC_Stable_1",
     {ZONE_LABEL: "no_us-west1-a", "uselessLabel": "none"}, OK, CONFLICT),
    ("pv with zone and region, node with only zone", "PVC_Stable_3",
     {ZONE_LABEL: "us-west1-a"}, OK, CONFLICT),
    ("pv with zone,node with beta zone", "PVC_Stable_1", {ZONE_LABEL_BETA: "us-west1-a"}, OK,
     CONFLICT),
    ("pv with beta label,node with ga label, matched", "PVC_1", {ZONE_LABEL: "us-west1-a"}, OK,
     OK),
    ("pv with beta label,node with ga label, don't match", "PVC_1",
     {ZONE_LABEL: "us-west1-b"}, OK, CONFLICT),
]


@pytest.mark.parametrize(("name", "pvc", "labels", "want_pre", "want_filter"), SINGLE_ZONE,
                         ids=[c[0] for c in SINGLE_ZONE])
def test_single_zone(name, pvc, labels, want_pre, want_filter) -> None:
    pod = make_pod("pod_1") if pvc is None else pod_with(pvc)
    _run([*SINGLE_PVS, *SINGLE_PVCS], pod, labels, want_pre, want_filter)


MULTI_PVS = [
    make_pv("Vol_1", labels={ZONE_LABEL_BETA: "us-west1-a"}),
    make_pv("Vol_2", labels={ZONE_LABEL_BETA: "us-west1-b", "uselessLabel": "none"}),
    make_pv("Vol_3", labels={ZONE_LABEL_BETA: "us-west1-c__us-west1-a"}),
    make_pv("Vol_Stable_1", labels={ZONE_LABEL: "us-west1-a"}),
    make_pv("Vol_Stable_2", labels={ZONE_LABEL: "us-west1-c__us-west1-a"}),
]
MULTI_PVCS = [
    make_pvc("PVC_1", volume_name="Vol_1"),
    make_pvc("PVC_2", volume_name="Vol_2"),
    make_pvc("PVC_3", volume_name="Vol_3"),
    make_pvc("PVC_4", volume_name="Vol_not_exist"),
    make_pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    make_pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
]
MULTI_ZONE = [
    ("node without labels", "PVC_3", {}, OK, OK),
    ("beta zone label matched", "PVC_3", {ZONE_LABEL_BETA: "us-west1-a", "uselessLabel": "none"},
     OK, OK),
    ("beta zone label doesn't match", "PVC_1",
     {ZONE_LABEL_BETA: "us-west1-b", "uselessLabel": "none"}, OK, CONFLICT),
    ("zone label matched", "PVC_Stable_2", {ZONE_LABEL: "us-west1-a", "uselessLabel": "none"},
     OK, OK),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE_LABEL: "us-west1-b", "uselessLabel": "none"},
     OK, CONFLICT),
]


@pytest.mark.parametrize(("name", "pvc", "labels", "want_pre", "want_filter"), MULTI_ZONE,
                         ids=[c[0] for c in MULTI_ZONE])
def test_multi_zone(name, pvc, labels, want_pre, want_filter) -> None:
    _run([*MULTI_PVS, *MULTI_PVCS], pod_with(pvc), labels, want_pre, want_filter)


def _unresolvable(msg: str):
    return (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))


# TestWithBinding. Upstream's "Class_Immediate" has no volumeBindingMode (a lister fake); the API
# server defaults it to Immediate, so the claim gets the Immediate path's status here.
WITH_BINDING = [
    ("label zone failure domain matched", "PVC_1", OK, OK),
    ("unbound volume empty storage class", "PVC_EmptySC",
     _unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
     _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")),
    ("unbound volume no storage class", "PVC_NoSC",
     _unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
     _unresolvable('storageclass.storage.k8s.io "Class_0" not found')),
    ("unbound volume immediate binding mode", "PVC_ImmediateSC",
     _unresolvable("PersistentVolume had no name"), _unresolvable("PersistentVolume had no name")),
    ("unbound volume wait binding mode", "PVC_WaitSC", SKIP, OK),
]


@pytest.mark.parametrize(("name", "pvc", "want_pre", "want_filter"), WITH_BINDING,
                         ids=[c[0] for c in WITH_BINDING])
def test_with_binding(name, pvc, want_pre, want_filter) -> None:
    objs = [
        make_sc("Class_Immediate", mode="Immediate"), make_sc("Class_Wait"),
        make_pv("Vol_1", labels={ZONE_LABEL_BETA: "us-west1-a"}),
        make_pvc("PVC_1", volume_name="Vol_1"),
        make_pvc("PVC_NoSC", "Class_0"),
        make_pvc("PVC_EmptySC"),
        make_pvc("PVC_WaitSC", "Class_Wait"),
        make_pvc("PVC_ImmediateSC", "Class_Immediate"),
    ]
    pod = pod_with(pvc)
    node = make_node("host1", {ZONE_LABEL_BETA: "us-west1-a", "uselessLabel": "none"},
                     hostname_label=False)
    pl, snap = setup(VolumeZone, objs, [node])
    state, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == want_pre
    # upstream's table runs Filter with the state PreFilter left (none unless it succeeded):
    # Filter then computes the topologies itself
    got = filter_all(pl, state, pod, snap)[0]
    assert as_pair(got) == want_filter


def test_missing_pv_and_pvc() -> None:
    objs = [make_pvc("PVC_4", volume_name="Vol_not_exist")]
    pl, snap = setup(VolumeZone, objs, [make_node("n", {ZONE_LABEL: "a"})])
    _, pre = prefilter(pl, pod_with("PVC_4"), snap)
    assert as_pair(pre) == _unresolvable('persistentvolume "Vol_not_exist" not found')
    _, pre = prefilter(pl, pod_with("missing"), snap)
    assert as_pair(pre) == _unresolvable('persistentvolumeclaim "missing" not found')


def test_label_zones_to_set() -> None:
    assert label_zones_to_set("a__b") == {"a", "b"}
    assert label_zones_to_set(" a ") == {"a"}
    assert label_zones_to_set("a____b") is None
    assert label_zones_to_set("") is None


def test_malformed_pv_label_is_ignored() -> None:
    objs = [make_pv("v", labels={ZONE_LABEL: "a____b", REGION_LABEL: "r"}),
            make_pvc("c", volume_name="v")]
    pl, snap = setup(VolumeZone, objs, [make_node("n1", {ZONE_LABEL: "x", REGION_LABEL: "r"}),
                                        make_node("n2", {ZONE_LABEL: "x", REGION_LABEL: "s"})])
    state, pre = prefilter(pl, pod_with("c"), snap)
    assert pre.is_success()
    assert [as_pair(s) for s in filter_all(pl, state, pod_with("c"), snap)] == [OK, CONFLICT]


# ---------------------------------------------------------------- queueing hints

PVC_HINTS = [
    ("pvc-was-added-but-pod-refers-no-pvc", make_pod("pod_1"), None,
     make_pvc("PVC_1", volume_name="Vol_1"), QueueingHint.SKIP),
    ("pvc-was-added-and-pod-was-bound-to-different-pvc", pod_with("PVC_2"), None,
     make_pvc("PVC_1", volume_name="Vol_1"), QueueingHint.SKIP),
    ("pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", pod_with("PVC_1"), None,
     make_pvc("PVC_1", volume_name="Vol_1", ns="ns1"), QueueingHint.SKIP),
    ("pvc-was-added-and-pod-was-bound-to-the-pvc", pod_with("PVC_1"), None,
     make_pvc("PVC_1", volume_name="Vol_1"), QueueingHint.QUEUE),
    ("pvc-was-updated-and-pod-was-bound-to-the-pvc", pod_with("PVC_1"), make_pvc("PVC_1"),
     make_pvc("PVC_1", volume_name="Vol_1"), QueueingHint.QUEUE),
    ("pvc-was-updated-but-pod-refers-no-pvc", make_pod("pod_1"), make_pvc("PVC_1"),
     make_pvc("PVC_1", volume_name="Vol_1"), QueueingHint.SKIP),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "want"), PVC_HINTS,
                         ids=[c[0] for c in PVC_HINTS])
def test_hint_pvc_change(name, pod, old, new, want) -> None:
    assert VolumeZone(None, Handle()).is_schedulable_after_pvc_change(pod, old, new) == want


def test_hint_wrong_objects_raise() -> None:
    p = VolumeZone(None, Handle())
    with pytest.raises(TypeError):  # counted as Queue, as upstream's error
        p.is_schedulable_after_pvc_change(pod_with("PVC_1"), None, "not-a-pvc")
    with pytest.raises(TypeError):
        p.is_schedulable_after_storage_class_added(pod_with("PVC_1"), None, "not-a-sc")
    with pytest.raises(TypeError):
        p.is_schedulable_after_pv_change(pod_with("PVC_1"), None, "not-a-pv")
    with pytest.raises(TypeError):
        p.is_schedulable_after_pv_change(pod_with("PVC_1"), "not-a-pv", make_pv("Vol_1"))


def test_hint_storage_class_added() -> None:
    p = VolumeZone(None, Handle())
    assert p.is_schedulable_after_storage_class_added(
        pod_with("PVC_1"), None, make_sc("SC_1", mode="Immediate")) == QueueingHint.SKIP
    assert p.is_schedulable_after_storage_class_added(
        pod_with("PVC_1"), None, make_sc("SC_1")) == QueueingHint.QUEUE


PV_HINTS = [
    ("new-pv-was-added", None, {ZONE_LABEL_BETA: "us-west1-b"}, QueueingHint.QUEUE),
    ("pv-was-updated-and-changed-topology", {ZONE_LABEL_BETA: "us-west1-a"},
     {ZONE_LABEL_BETA: "us-west1-b"}, QueueingHint.QUEUE),
    ("pv-was-updated-and-added-topology-label", {ZONE_LABEL_BETA: "us-west1-a"},
     {ZONE_LABEL_BETA: "us-west1-a", ZONE_LABEL: "zone"}, QueueingHint.QUEUE),
    ("pv-was-updated-but-no-topology-is-changed",
     {ZONE_LABEL_BETA: "us-west1-a", ZONE_LABEL: "zone"},
     {ZONE_LABEL_BETA: "us-west1-a", ZONE_LABEL: "zone"}, QueueingHint.SKIP),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), PV_HINTS, ids=[c[0] for c in PV_HINTS])
def test_hint_pv_change(name, old, new, want) -> None:
    old_pv = None if old is None else make_pv("Vol_1", labels=old)
    got = VolumeZone(None, Handle()).is_schedulable_after_pv_change(pod_with("PVC_1"), old_pv,
                                                      make_pv("Vol_1", labels=new))
    assert got == want
