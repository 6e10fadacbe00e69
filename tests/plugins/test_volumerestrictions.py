"""VolumeRestrictions: upstream v1.35 ``volume_restrictions_test.go`` tables
(TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
TestAccessModeConflicts, Test_isSchedulableAfterPodDeleted,
Test_isSchedulableAfterPersistentVolumeClaimChange), plus AddPod / RemovePod for nominated pods
and preemption; every Filter checked in the per-node and the batch form."""

from __future__ import annotations

from typing import Any

import pytest
from _volume_util import as_pair, filter_all, make_node, make_pod, make_pvc, prefilter, setup

from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code
from kubesched.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)

OK = (Code.SUCCESS, ())
SKIP = (Code.SKIP, ())
DISK = (Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
RWOP = (Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,))

GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                   "fsType": "ext4", "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260",
                    "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4", "lun": 0}}


def vol_pod(src: dict[str, Any] | None, node: str = "") -> Any:
    if src is None:
        return make_pod(node=node)
    return make_pod(volumes=[{"name": "v", **src}], node=node)


def disk_cases(same: dict, other: dict) -> list[tuple]:
    # (name, incoming volume, existing pod's volume, prefilter, filter)
    return [
        ("nothing", None, None, SKIP, OK),
        ("one state", None, same, SKIP, OK),
        ("same state", same, same, OK, DISK),
        ("different state", other, same, OK, OK),
    ]


DISK_CASES = [(kind, *c) for kind, a, b in (("gce", GCE, GCE2), ("aws", AWS, AWS2),
                                             ("rbd", RBD, RBD2), ("iscsi", ISCSI, ISCSI2))
              for c in disk_cases(a, b)]
DISK_CASES.append(("gce", "pod with a volume that doesn't have restrictions",
                   {"emptyDir": {}}, None, SKIP, OK))


@pytest.mark.parametrize(("kind", "name", "vol", "existing", "want_pre", "want"), DISK_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in DISK_CASES])
def test_disk_conflicts(kind, name, vol, existing, want_pre, want) -> None:
    node = make_node("n1")
    pods = [vol_pod(existing, node="n1")] if existing is not None else []
    pl, snap = setup(VolumeRestrictions, [], [node], pods)
    pod = vol_pod(vol)
    state, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == want_pre
    if pre.is_success():
        assert as_pair(filter_all(pl, state, pod, snap)[0]) == want


def test_read_only_mounts_do_not_conflict() -> None:
    """GCE PD, ISCSI and RBD allow the same disk when every mount is read-only; EBS never."""
    node = make_node("n1")
    for src, conflict_when_ro in (("gcePersistentDisk", False), ("iscsi", False),
                                  ("rbd", False), ("awsElasticBlockStore", True)):
        base = {"gcePersistentDisk": GCE, "iscsi": ISCSI, "rbd": RBD,
                "awsElasticBlockStore": AWS}[src][src]
        ro = {src: {**base, "readOnly": True}}
        rw = {src: dict(base)}
        for existing, incoming, want_conflict in ((ro, ro, conflict_when_ro), (rw, ro, True),
                                                  (ro, rw, True)):
            pl, snap = setup(VolumeRestrictions, [], [node], [vol_pod(existing, node="n1")])
            pod = vol_pod(incoming)
            state, pre = prefilter(pl, pod, snap)
            assert pre.is_success()
            got = filter_all(pl, state, pod, snap)[0]
            assert as_pair(got) == (DISK if want_conflict else OK), (src, existing, incoming)


def test_rbd_pool_defaults_to_rbd() -> None:
    a = {"rbd": {"monitors": ["m"], "image": "i"}}
    b = {"rbd": {"monitors": ["m"], "image": "i", "pool": "rbd"}}
    pl, snap = setup(VolumeRestrictions, [], [make_node("n1")], [vol_pod(a, node="n1")])
    pod = vol_pod(b)
    state, _ = prefilter(pl, pod, snap)
    assert as_pair(filter_all(pl, state, pod, snap)[0]) == DISK


# ---------------------------------------------------------------- ReadWriteOncePod

def _pvcs():
    return [make_pvc("claim-with-rwop-1", access=("ReadWriteOncePod",)),
            make_pvc("claim-with-rwop-2", access=("ReadWriteOncePod",)),
            make_pvc("claim-with-rwx", access=("ReadWriteMany",))]


ACCESS_MODE = [
    # (name, incoming claims, existing pods' claims, claims that exist, prefilter, filter)
    ("nothing", (), [], [], SKIP, OK),
    ("failed to get PVC", ("claim-with-rwop-1",), [], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
      ('persistentvolumeclaim "claim-with-rwop-1" not found',)), None),
    ("no access mode conflict", ("claim-with-rwop-1",), [("claim-with-rwx",)],
     ["claim-with-rwop-1", "claim-with-rwx"], SKIP, OK),
    ("access mode conflict, unschedulable", ("claim-with-rwop-1",),
     [("claim-with-rwop-1",), ("claim-with-rwx",)], ["claim-with-rwop-1", "claim-with-rwx"],
     OK, RWOP),
    ("two conflicts, unschedulable", ("claim-with-rwop-1", "claim-with-rwop-2"),
     [("claim-with-rwop-1", "claim-with-rwop-2"), ("claim-with-rwx",)],
     ["claim-with-rwop-1", "claim-with-rwop-2", "claim-with-rwx"], OK, RWOP),
]


@pytest.mark.parametrize(("name", "claims", "existing", "pvcs", "want_pre", "want"), ACCESS_MODE,
                         ids=[c[0] for c in ACCESS_MODE])
def test_access_mode_conflicts(name, claims, existing, pvcs, want_pre, want) -> None:
    objs = [p for p in _pvcs() if p.name in pvcs]
    nodes = [make_node("node-1"), make_node("node-2")]
    pods = [make_pod(pvcs=c, node="node-1") for c in existing]
    pl, snap = setup(VolumeRestrictions, objs, nodes, pods)
    pod = make_pod(pvcs=claims) if claims else make_pod()
    state, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == want_pre
    if pre.is_success():
        # every node: the claim is in use somewhere, only preemption can free it
        assert [as_pair(s) for s in filter_all(pl, state, pod, snap)] == [want, want]


def test_rwop_claim_of_another_namespace_is_not_in_use() -> None:
    objs = [make_pvc("c", access=("ReadWriteOncePod",)),
            make_pvc("c", access=("ReadWriteOncePod",), ns="other")]
    pods = [make_pod(pvcs=("c",), ns="other", node="n1")]
    pl, snap = setup(VolumeRestrictions, objs, [make_node("n1")], pods)
    _, pre = prefilter(pl, make_pod(pvcs=("c",)), snap)
    assert as_pair(pre) == SKIP


def test_add_remove_pod_track_rwop_refs() -> None:
    """AddPod / RemovePod (nominated pods, preemption's what-ifs) move the in-use count."""
    objs = _pvcs()
    holder = make_pod(pvcs=("claim-with-rwop-1",), node="node-1")
    pl, snap = setup(VolumeRestrictions, objs, [make_node("node-1")], [holder])
    pod = make_pod(pvcs=("claim-with-rwop-1",))
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    ni = snap.node_infos[0]
    what_if = state.clone()
    pl.remove_pod(what_if, pod, holder, ni)
    victim_gone = ni.clone()
    victim_gone.remove_pod(holder)
    assert as_pair(pl.filter(what_if, pod, victim_gone)) == OK
    assert as_pair(pl.filter(state, pod, ni)) == RWOP  # the clone is independent
    pl.add_pod(what_if, pod, holder, ni)
    assert as_pair(pl.filter(what_if, pod, ni)) == RWOP


def test_claim_used_only_by_nominated_pods_is_skipped() -> None:
    """Upstream counts only pods on nodes at PreFilter: with no scheduled pod holding the claim
    the plugin is skipped (so AddPod of nominated pods never runs)."""
    objs = _pvcs()
    pl, snap = setup(VolumeRestrictions, objs, [make_node("node-1")], [])
    _, pre = prefilter(pl, make_pod(pvcs=("claim-with-rwop-1", "claim-with-rwx")), snap)
    assert as_pair(pre) == SKIP


def test_assumed_pod_on_another_node_blocks_everywhere() -> None:
    objs = _pvcs()
    holder = make_pod(pvcs=("claim-with-rwop-2",), node="node-2")
    pl, snap = setup(VolumeRestrictions, objs, [make_node("node-1"), make_node("node-2")],
                     [holder])
    pod = make_pod(pvcs=("claim-with-rwop-2",))
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    assert [as_pair(s) for s in filter_all(pl, state, pod, snap)] == [RWOP, RWOP]
    pl.remove_pod(state, pod, holder, snap.node_infos[1])
    assert [as_pair(s) for s in filter_all(pl, state, pod, snap)] == [OK, OK]


# ---------------------------------------------------------------- queueing hints

POD_DELETED = [
    ("queue-new-object-gcedisk-conflict", GCE, GCE, QueueingHint.QUEUE),
    ("skip-new-object-gcedisk-no-conflict", GCE, GCE2, QueueingHint.SKIP),
    ("queue-new-object-awsdisk-conflict", AWS, AWS, QueueingHint.QUEUE),
    ("skip-new-object-awsdisk-no-conflict", AWS, AWS2, QueueingHint.SKIP),
    ("queue-new-object-rbddisk-conflict", RBD, RBD, QueueingHint.QUEUE),
    ("skip-new-object-rbddisk-no-conflict", RBD, RBD2, QueueingHint.SKIP),
    ("queue-new-object-iscsidisk-conflict", ISCSI, ISCSI, QueueingHint.QUEUE),
    ("skip-new-object-iscsidisk-no-conflict", ISCSI, ISCSI2, QueueingHint.SKIP),
]


@pytest.mark.parametrize(("name", "vol", "deleted", "want"), POD_DELETED,
                         ids=[c[0] for c in POD_DELETED])
def test_hint_pod_deleted_disks(name, vol, deleted, want) -> None:
    got = VolumeRestrictions.is_schedulable_after_pod_deleted(vol_pod(vol), vol_pod(deleted),
                                                              None)
    assert got == want


def test_hint_pod_deleted_claims() -> None:
    hint = VolumeRestrictions.is_schedulable_after_pod_deleted
    assert hint(make_pod("pod1", pvcs=("claim-rwop",)), make_pod("pod2", pvcs=("claim-rwop",)),
                None) == QueueingHint.QUEUE
    assert hint(make_pod("pod1", pvcs=("claim-1-rwop",)),
                make_pod("pod2", pvcs=("claim-2-rwop",)), None) == QueueingHint.SKIP
    assert hint(make_pod("pod1", pvcs=("c",)), make_pod("pod2", pvcs=("c",), ns="other"),
                None) == QueueingHint.SKIP
    with pytest.raises(TypeError):
        hint(make_pod("pod1"), "not-a-pod", None)


PVC_ADDED = [
    ("queue-new-object-pvc-belong-pod", ("claim-with-rwx-1", "claim-with-rwx-2"), "default",
     "claim-with-rwx-1", QueueingHint.QUEUE),
    ("skip-new-object-unused", ("claim-with-rwx-1",), "default", "claim-with-rwx-2",
     QueueingHint.SKIP),
    ("skip-nil-old-object", ("claim-with-rwx-1",), "default", "claim-with-rwx-2",
     QueueingHint.SKIP),
    ("skip-new-object-not-belong-pod", ("claim-with-rwx-1",), "default", "claim-with-rwx-2",
     QueueingHint.SKIP),
    ("skip-new-object-namespace-not-equal-pod", ("claim-with-rwx-1",), "kube-system",
     "claim-with-rwx-1", QueueingHint.SKIP),
]


@pytest.mark.parametrize(("name", "claims", "pod_ns", "added", "want"), PVC_ADDED,
                         ids=[c[0] for c in PVC_ADDED])
def test_hint_pvc_added(name, claims, pod_ns, added, want) -> None:
    pod = make_pod(pvcs=claims, ns=pod_ns)
    new = make_pvc(added, access=("ReadWriteMany",))
    assert VolumeRestrictions.is_schedulable_after_pvc_added(pod, None, new) == want


def test_registered_events() -> None:
    from kubesched.framework.events import ActionType, Resource

    evs = [(e.event.resource, e.event.action)
           for e in VolumeRestrictions(None, Handle()).events_to_register()]
    assert evs == [(Resource.POD, ActionType.DELETE), (Resource.NODE, ActionType.ADD),
                   (Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)]


def test_node_info_without_pods_has_no_disk_conflict() -> None:
    from kubesched.plugins.volumerestrictions import satisfy_volume_conflicts

    assert satisfy_volume_conflicts(vol_pod(GCE), NodeInfo())
