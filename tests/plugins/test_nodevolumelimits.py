"""NodeVolumeLimits (CSI): upstream v1.35 ``csi_test.go`` tables (TestCSILimits — all but the
two VolumeAttachment cases, since scenarios have no VolumeAttachments —, TestCSILimitsQHint,
TestCSILimitsAddedPVCQHint), the attach-limit key, the plugin through the whole framework
on a random cluster (the runtime loops its per-node form), and VolumeLimitScaling's missing-driver
check (upstream's tests for it — csi_test.go after #135012 — could not be read: the cases here
follow the PR's code and the plugin's AGENTS.md)."""

from __future__ import annotations

from typing import Any

import pytest
from _volume_util import (
    as_pair,
    make_csinode,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_sc,
    setup,
)

from kubesched.api.storage import MIGRATED_PLUGINS_ANNOTATION
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    csi_attach_limit_key,
)
from kubesched.testing import snapshot_from_nodes

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"

OK = (Code.SUCCESS, ())
SKIP = (Code.SKIP, ())
EXCEEDED = (Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))


def fake_pvs(drivers: list[str]) -> list[Any]:
    """``getFakeCSIPVLister("csi", drivers...)``."""
    out = []
    for d in drivers:
        for j in range(4):
            handle = f"csi-{d}-{j}"
            if d == AWS_IN_TREE:
                out.append(make_pv(handle, source_kind="awsElasticBlockStore",
                                   source={"volumeID": handle}))
            elif d == HOSTPATH:
                out.append(make_pv(handle, source_kind="hostPath", source={"path": "/tmp"}))
            else:
                out.append(make_pv(handle, source_kind="csi",
                                   source={"driver": d, "volumeHandle": handle}))
    return out


def fake_pvcs(drivers: list[str]) -> list[Any]:
    """``getFakeCSIPVCLister("csi", scName, drivers...)``."""
    out = [make_pvc(f"csi-{d}-{j}", volume_name=f"csi-{d}-{j}") for d in drivers
           for j in range(4)]
    out.append(make_pvc("csi-4", SC_NAME))
    out.append(make_pvc("csi-5"))
    out.append(make_pvc("csi-6", SC_NAME, volume_name="missing-in-action"))
    return out


def csinode(limit_source: str, max_vols: int, drivers: list[str]):
    """``getNodeWithPodAndVolumeLimits`` + ``enableMigrationOnNode(aws-ebs)``."""
    if limit_source == "csinode":
        cn = make_csinode(NODE, {d: max_vols for d in drivers})
    elif limit_source == "csinode-with-no-limit":
        cn = make_csinode(NODE, {d: None for d in drivers})
    elif limit_source == "no-csi-driver":
        cn = make_csinode(NODE, {})
    else:
        return None
    cn.metadata.annotations[MIGRATED_PLUGINS_ANNOTATION] = AWS_IN_TREE
    return cn


def pvc_pod(*claims: str, name: str | None = None) -> Any:
    return make_pod(name, pvcs=claims)


EPHEMERAL = {"ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
CONFIGMAP_SECRET = [{"name": "cm", "configMap": {"name": "x"}}, {"name": "s", "secret": {}}]
AWS_INLINE = {"name": "aws", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}

RUNNING = pvc_pod("csi-ebs.csi.aws.com-3")
PENDING = pvc_pod("csi-4")
UNBOUND2 = pvc_pod("csi-4")
MISSING_PV = pvc_pod("csi-6")
NO_SC = pvc_pod("csi-5")
GCE_TWO = pvc_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE = pvc_pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO = pvc_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
EBS_ONE = pvc_pod("csi-ebs.csi.aws.com-0")
EBS_TWO = pvc_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
NON_MIGRATABLE = pvc_pod("csi-kubernetes.io/hostpath-0")
EPH = make_pod("abc", ns="test", uid="12345", volumes=[{"name": "xyz", **EPHEMERAL}])
EPH_TWO = make_pod("abc", ns="test", uid="12345II",
                   volumes=[{"name": "x", **EPHEMERAL}, {"name": "y", **EPHEMERAL}])
INLINE = make_pod(volumes=[AWS_INLINE])
INLINE_SAME_ID = make_pod(volumes=[{"name": "aws", "awsElasticBlockStore": {
    "volumeID": "csi-ebs.csi.aws.com-1"}}])
ONLY_CM_SECRET = make_pod(volumes=CONFIGMAP_SECRET)
PVC_CM_SECRET = make_pod(volumes=[*CONFIGMAP_SECRET, {"name": "p", "persistentVolumeClaim": {
    "claimName": "csi-ebs.csi.aws.com-0"}}])
EPH_CM_SECRET = make_pod("abc", ns="test", uid="",
                         volumes=[*CONFIGMAP_SECRET, {"name": "xyz", **EPHEMERAL}])
INLINE_CM_SECRET = make_pod(volumes=[*CONFIGMAP_SECRET, AWS_INLINE])


def eph_claim(pod, vol: str, *, owned: bool = True):
    return make_pvc(f"{pod.name}-{vol}", SC_NAME, ns=pod.namespace,
                    owner=pod if owned else None)


CASES = [
    # (name, new pod, existing pods, extra claims, max vols, drivers, limit source, prefilter,
    #  filter)
    ("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], [], 4,
     [EBS], "csinode", OK, OK),
    ("doesn't when node volume limit <= pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], [], 2,
     [EBS], "csinode", OK, EXCEEDED),
    ("should when driver does not support volume limits", EBS_ONE, [RUNNING, EBS_TWO], [], 2,
     [EBS], "csinode-with-no-limit", OK, OK),
    ("count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, [PENDING, EBS_TWO],
     [], 2, [EBS], "csinode", OK, EXCEEDED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE,
     [PENDING, UNBOUND2, EBS_TWO], [], 4, [EBS], "csinode", OK, OK),
    ("should count PVCs with invalid PV name but valid SC", EBS_ONE, [MISSING_PV, EBS_TWO], [], 2,
     [EBS], "csinode", OK, EXCEEDED),
    ("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC], [], 2,
     [EBS], "csinode", OK, OK),
    ("count pvcs with the same type towards volume limit", EBS_ONE, [GCE_TWO, EBS_TWO], [], 2,
     [EBS, GCE], "csinode", OK, EXCEEDED),
    ("don't count pvcs with different type towards volume limit", GCE_TWO, [EBS_TWO, RUNNING], [],
     2, [EBS, GCE], "csinode", OK, OK),
    ("should count in-tree volumes if migration is enabled", IN_TREE_ONE, [IN_TREE_TWO], [], 2,
     [AWS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("nil csi node", INLINE, [IN_TREE_TWO], [], 0, [AWS_IN_TREE, EBS], "", OK, OK),
    ("should count unbound in-tree volumes if migration is enabled", PENDING, [IN_TREE_TWO], [],
     2, [AWS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should not limit pod if volume used does not report limits", IN_TREE_ONE, [IN_TREE_TWO], [],
     2, [AWS_IN_TREE, EBS], "csinode-with-no-limit", OK, OK),
    ("should not count non-migratable in-tree volumes", NON_MIGRATABLE, [EBS_TWO], [], 2,
     [HOSTPATH, EBS], "csinode", OK, OK),
    ("should count in-tree inline volumes if migration is enabled", INLINE, [IN_TREE_TWO], [], 2,
     [AWS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree "
     "volumes)", IN_TREE_ONE, [EBS_TWO], [], 2, [AWS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling "
     "in-tree volumes)", INLINE, [EBS_TWO, IN_TREE_ONE], [], 3, [AWS_IN_TREE, EBS], "csinode",
     OK, EXCEEDED),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling "
     "in-tree volumes)", INLINE_SAME_ID, [EBS_TWO, IN_TREE_ONE], [], 3, [AWS_IN_TREE, EBS],
     "csinode", OK, OK),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi "
     "volumes)", EBS_ONE, [IN_TREE_TWO], [], 2, [AWS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("ephemeral volume missing", EPH, [], [], 0, [EBS], "csinode-with-no-limit", OK,
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
      ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',))),
    ("ephemeral volume not owned", EPH, [], [eph_claim(EPH, "xyz", owned=False)], 0, [EBS],
     "csinode-with-no-limit", OK,
     (Code.ERROR, ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",))),
    ("ephemeral volume unbound", EPH, [], [eph_claim(EPH, "xyz")], 0, [EBS],
     "csinode-with-no-limit", OK, OK),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", EPH, [RUNNING, EBS_TWO],
     [eph_claim(EPH, "xyz")], 2, [EBS], "csinode", OK, EXCEEDED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE,
     [RUNNING, EPH_TWO], [eph_claim(EPH_TWO, "x"), eph_claim(EPH_TWO, "y")], 2, [EBS], "csinode",
     OK, EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
     "volume", EBS_ONE, [RUNNING, EPH, EBS_TWO], [eph_claim(EPH, "xyz")], 3, [EBS], "csinode",
     OK, EXCEEDED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     EBS_ONE, [RUNNING, EPH, EBS_TWO], [eph_claim(EPH, "xyz")], 5, [EBS], "csinode", OK, OK),
    ("skip Filter when the pod only uses secrets and configmaps", ONLY_CM_SECRET, [], [], 2,
     [EBS], "csinode", SKIP, None),
    ("don't skip Filter when the pod has pvcs", PVC_CM_SECRET, [], [], 2, [EBS], "csinode", OK,
     OK),
    ("don't skip Filter when the pod has ephemeral volumes", EPH_CM_SECRET, [], [], 0, [EBS],
     "csinode-with-no-limit", OK,
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
      ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',))),
    ("don't skip Filter when the pod has inline migratable volumes", INLINE_CM_SECRET,
     [IN_TREE_TWO], [], 2, [AWS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
]


@pytest.mark.parametrize(("name", "pod", "existing", "extra", "max_vols", "drivers", "source",
                          "want_pre", "want"), CASES, ids=[c[0] for c in CASES])
def test_csi_limits(name, pod, existing, extra, max_vols, drivers, source, want_pre,
                    want) -> None:
    objs = [*fake_pvs(drivers), *fake_pvcs(drivers), *extra,
            make_sc(SC_NAME, mode="Immediate", provisioner=drivers[0])]
    cn = csinode(source, max_vols, drivers)
    if cn is not None:
        objs.append(cn)
    node = make_node(NODE, hostname_label=False)
    pl, snap = setup(NodeVolumeLimits, objs, [node], [])
    ni = snap.node_infos[0].clone()
    for p in existing:
        ni.add_pod(p)
    state = CycleState()
    _, pre = pl.pre_filter(state, pod, snap)
    assert as_pair(pre) == want_pre
    if want is not None:
        assert as_pair(pl.filter(state, pod, ni)) == want


def test_attach_limit_key() -> None:
    assert csi_attach_limit_key(EBS) == "attachable-volumes-csi-ebs.csi.aws.com"
    long = "very-long-driver-name.storage.example.com.csi"
    key = csi_attach_limit_key(long)
    assert key.startswith("attachable-volumes-csi-very-long-driver-name") and len(key) == 62
    assert csi_attach_limit_key(long + "x") != key


QHINT_DELETED = [
    ("return a Queue when a deleted pod has a PVC", pvc_pod("placeholder"), True,
     QueueingHint.QUEUE),
    ("return a Queue when a deleted pod has a inline migratable volume",
     make_pod(volumes=[{"name": "a", "awsElasticBlockStore": {"volumeID": ""}}]), True,
     QueueingHint.QUEUE),
    ("return a QueueSkip when a deleted pod doesn't have any volume", make_pod(), True,
     QueueingHint.SKIP),
    ("return a QueueSkip when a deleted pod is not scheduled.", pvc_pod("csi-ebs.csi.aws.com-0"),
     False, QueueingHint.SKIP),
]


@pytest.mark.parametrize(("name", "deleted", "scheduled", "want"), QHINT_DELETED,
                         ids=[c[0] for c in QHINT_DELETED])
def test_qhint_pod_deleted(name, deleted, scheduled, want) -> None:
    if scheduled:
        deleted.spec.node_name = NODE
    got = NodeVolumeLimits.is_schedulable_after_pod_deleted(pvc_pod("csi-ebs.csi.aws.com-2"),
                                                            deleted, None)
    assert got == want


QHINT_PVC = [
    ("a pod isn't in the same namespace as an added PVC", make_pod(ns="ns1"),
     make_pvc("x", ns="ns2"), QueueingHint.SKIP),
    ("a pod is in the same namespace as an added PVC", make_pod(ns="ns1", pvcs=("pvc1",)),
     make_pvc("pvc1", ns="ns1"), QueueingHint.QUEUE),
    ("a pod has an ephemeral volume related to an added PVC",
     make_pod("pod1", ns="ns1", volumes=[{"name": "ephemeral", **EPHEMERAL}]),
     make_pvc("pod1-ephemeral", ns="ns1"), QueueingHint.QUEUE),
    ("a pod doesn't have the same PVC as an added PVC", make_pod(ns="ns1", pvcs=("pvc1",)),
     make_pvc("pvc2", ns="ns1"), QueueingHint.SKIP),
    ("a pod doesn't have any PVC attached", make_pod(ns="ns1"), make_pvc("pvc2", ns="ns1"),
     QueueingHint.SKIP),
]


@pytest.mark.parametrize(("name", "pod", "pvc", "want"), QHINT_PVC, ids=[c[0] for c in QHINT_PVC])
def test_qhint_pvc_added(name, pod, pvc, want) -> None:
    assert NodeVolumeLimits.is_schedulable_after_pvc_added(pod, None, pvc) == want


def test_registered_events() -> None:
    evs = [(e.event.resource, e.event.action, e.hint is None)
           for e in NodeVolumeLimits(None, Handle()).events_to_register()]
    assert evs == [(Resource.CSI_NODE, ActionType.ADD, True),
                   (Resource.POD, ActionType.DELETE, False),
                   (Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, False)]


def test_existing_pod_with_missing_claim_is_not_counted() -> None:
    objs = [*fake_pvs([EBS]), *fake_pvcs([EBS]), make_csinode(NODE, {EBS: 1})]
    pl, snap = setup(NodeVolumeLimits, objs, [make_node(NODE)], [])
    ni = snap.node_infos[0].clone()
    ni.add_pod(pvc_pod("gone"))
    state = CycleState()
    pl.pre_filter(state, EBS_ONE, snap)
    assert as_pair(pl.filter(state, EBS_ONE, ni)) == OK


def test_portworx_needs_the_migrated_annotation() -> None:
    px = "kubernetes.io/portworx-volume"
    pv = make_pv("px-1", source_kind="portworxVolume", source={"volumeID": "v1"})
    pv2 = make_pv("px-2", source_kind="portworxVolume", source={"volumeID": "v2"})
    objs = [pv, pv2, make_pvc("c1", volume_name="px-1"), make_pvc("c2", volume_name="px-2")]
    for migrated, want in ((None, OK), (px, EXCEEDED)):
        cn = make_csinode(NODE, {"pxd.portworx.com": 1}, migrated=migrated)
        pl, snap = setup(NodeVolumeLimits, [*objs, cn], [make_node(NODE)],
                         [make_pod(pvcs=("c1",), node=NODE)])
        pod = make_pod(pvcs=("c2",))
        state = CycleState()
        pl.pre_filter(state, pod, snap)
        assert as_pair(pl.filter(state, pod, snap.node_infos[0])) == want


# ================================================================ VolumeLimitScaling


def _driver_cluster(features: Any, prevent: bool | None, csi_nodes: dict[str, Any]):
    """Three nodes: one whose CSINode lists EBS (limit 5), one whose CSINode lists only GCE
    (no limit), one without a CSINode; a pod with one bound EBS volume."""
    from kubesched.api.storage import CSIDriver
    from kubesched.api.types import ObjectMeta
    from kubesched.framework.handle import Handle

    nodes = [make_node(n) for n in ("with-ebs", "with-gce", "no-csinode")]
    objs: list[Any] = [make_pv("vol-0", source_kind="csi",
                               source={"driver": EBS, "volumeHandle": "vol-0"}),
                       make_pvc("claim-0", volume_name="vol-0"), make_pvc("unclassed")]
    objs += [v for v in csi_nodes.values() if v is not None]
    if prevent is not None:
        objs.append(CSIDriver(metadata=ObjectMeta(name=EBS),
                              prevent_pod_scheduling_if_missing=prevent))
    from _volume_util import objects

    snap = snapshot_from_nodes(nodes, [])
    pl = NodeVolumeLimits(None, Handle(snapshot=snap, objects=objects(*objs),
                                       features=features))
    return pl, snap, nodes


NOT_INSTALLED = (Code.UNSCHEDULABLE, (f"{EBS} CSI driver is not installed on the node",))


@pytest.mark.parametrize(("release", "gates", "prevent", "want"), [
    # beta, on, in 1.37: only a CSIDriver that opts in makes the driver required
    ("1.37", (), True, [OK, NOT_INSTALLED, NOT_INSTALLED]),
    ("1.37", (), False, [OK, OK, OK]),
    ("1.37", (), None, [OK, OK, OK]),
    # alpha, off, in 1.35 and 1.36: no check unless the gate is turned on
    ("1.36", (), True, [OK, OK, OK]),
    ("1.36", (("VolumeLimitScaling", True),), True, [OK, NOT_INSTALLED, NOT_INSTALLED]),
    ("1.37", (("VolumeLimitScaling", False),), True, [OK, OK, OK]),
])
def test_missing_driver(release: str, gates: tuple[tuple[str, bool], ...], prevent: bool | None,
                        want: list[tuple[Code, tuple[str, ...]]]) -> None:
    """The check comes before the limits: the node whose CSINode reports no limit for any
    driver, and the node without a CSINode, are rejected too; both forms agree."""
    from _volume_util import filter_all, prefilter

    from kubesched.config.features import FeatureGates

    pl, snap, nodes = _driver_cluster(
        FeatureGates(release, gates), prevent,
        {"with-ebs": make_csinode("with-ebs", {EBS: 5}),
         "with-gce": make_csinode("with-gce", {GCE: None})})
    pod = pvc_pod("claim-0")
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    got = dict(zip([ni.name for ni in snap.node_infos], filter_all(pl, state, pod, snap),
                   strict=True))
    assert [as_pair(got[n.name]) for n in nodes] == want


def test_missing_driver_needs_a_csi_volume() -> None:
    """A pod whose claims name no CSI driver (an unbound claim without a class) is not
    checked: nothing it mounts is missing."""
    from _volume_util import filter_all, prefilter

    from kubesched.config.features import FeatureGates

    pl, snap, _ = _driver_cluster(FeatureGates("1.37"), True, {})
    pod = pvc_pod("unclassed")
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    assert [as_pair(s) for s in filter_all(pl, state, pod, snap)] == [OK, OK, OK]
