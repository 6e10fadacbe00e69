"""VolumeBinding: upstream ``volume_binding_test.go`` (TestVolumeBinding: PreFilter and Filter;
its scores need the VolumeCapacityPriority gate, off in v1.35), ``binder_test.go``
(TestFindPodVolumesWithoutProvisioning, TestFindPodVolumesWithProvisioning,
TestFindPodVolumesWithCSIMigration, TestAssumePodVolumes, TestRevertAssumedPodVolumes, a
BindPodVolumes / checkBindings check against a fake API server), component-helpers
``pv_helpers_test.go`` (TestFindMatchVolumeWithNode with VolumeAttributesClass on — GA in v1.34 —,
TestDelayBindingMode) and the queueing hints. Every find is run in the per-node and the batch
form, which must agree."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest
from _volume_util import (
    affinity,
    as_pair,
    filter_all,
    make_csinode,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_sc,
    objects,
    prefilter,
    setup,
)

from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    BETA_STORAGE_CLASS_ANNOTATION,
    ObjectReference,
    controller_bind,
    copy_object,
    replace_storage_object,
    storage_index,
)
from kubesched.api.types import (
    REGION_LABEL,
    REGION_LABEL_BETA,
    ZONE_LABEL,
    ZONE_LABEL_BETA,
    LabelSelector,
)
from kubesched.clock import VirtualClock
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    DynamicProvision,
    NeedsPerNode,
    PodVolumes,
    VolumeBinder,
    reasons_from_flags,
)
from kubesched.plugins.volumebinding.helpers import (
    StorageError,
    find_matching_volume,
    is_delay_binding_mode,
)
from kubesched.testing import snapshot_from_nodes

OK = (Code.SUCCESS, ())
SKIP = (Code.SKIP, ())
BIND = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_BIND_CONFLICT,))
NODE_CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_CONFLICT,))
HOSTNAME = "kubernetes.io/hostname"


def unresolvable(msg: str) -> tuple[Code, tuple[str, ...]]:
    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)


# ================================================================ TestVolumeBinding

IMMEDIATE_SC = make_sc("immediate-sc", mode="Immediate", provisioner="")
WAIT_SC = make_sc("wait-sc", provisioner="")
WAIT_HDD_SC = make_sc("wait-hdd-sc", provisioner="")


def vb_pvc(name: str, sc: str, *, bound_pv: str = "", request: str | None = None,
           phase: str = "Pending"):
    """``makePVC(name, sc)[.withBoundPV(pv)][.withRequestStorage(r)][.withPhase(p)]``."""
    return make_pvc(name, sc, request, volume_name=bound_pv, bound=bool(bound_pv), access=(),
                    phase=phase)


def vb_pv(name: str, sc: str, *, capacity: str | None = None,
          node_affinity: dict[str, list[str]] | None = None):
    return make_pv(name, sc, capacity, node_affinity=node_affinity, access=())


ZONES = {"zone-a-node-a": ("region-a", "zone-a"), "zone-a-node-b": ("region-a", "zone-a"),
         "zone-b-node-a": ("region-b", "zone-b"), "zone-b-node-b": ("region-b", "zone-b"),
         "zone-c-node-a": ("region-c", "zone-c"), "zone-c-node-b": ("region-c", "zone-c")}


def zonal_nodes():
    return [make_node(n, {REGION_LABEL: r, ZONE_LABEL: z}) for n, (r, z) in ZONES.items()]


def zonal_pvs():
    def pv(name, cap, r, z):
        return vb_pv(name, "wait-sc", capacity=cap,
                     node_affinity={REGION_LABEL: [r], ZONE_LABEL: [z]})
    return [pv("pv-a-0", "200Gi", "region-a", "zone-a"),
            pv("pv-a-1", "200Gi", "region-a", "zone-a"),
            pv("pv-b-0", "100Gi", "region-b", "zone-b"),
            pv("pv-b-1", "100Gi", "region-b", "zone-b")]


def local_pvs(hdd: bool):
    out = []
    for node, cap in (("node-a", "200Gi"), ("node-b", "100Gi")):
        letter = node[-1]
        classes = ["wait-sc", "wait-sc"] + (["wait-hdd-sc", "wait-hdd-sc"] if hdd else [])
        for i, cls in enumerate(classes):
            out.append(vb_pv(f"pv-{letter}-{i}", cls, capacity=cap,
                             node_affinity={HOSTNAME: [node]}))
    return out


ABC = ["node-a", "node-b", "node-c"]

VOLUME_BINDING = [
    # (name, pod claims, nodes, pvcs, pvs, prefilter, filter statuses)
    ("pod has not pvcs", (), ["node-a"], [], [], SKIP, None),
    ("all bound", ("pvc-a",), ["node-a"], [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
     [vb_pv("pv-a", "wait-sc")], OK, [OK]),
    ("PVC does not exist", ("pvc-a",), ["node-a"], [], [],
     unresolvable('persistentvolumeclaim "pvc-a" not found'), None),
    ("Part of PVCs do not exist", ("pvc-a", "pvc-b"), ["node-a"],
     [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], [],
     unresolvable('persistentvolumeclaim "pvc-b" not found'), None),
    ("immediate claims not bound", ("pvc-a",), ["node-a"], [vb_pvc("pvc-a", "immediate-sc")], [],
     unresolvable("pod has unbound immediate PersistentVolumeClaims"), None),
    ("unbound claims no matches", ("pvc-a",), ["node-a"], [vb_pvc("pvc-a", "wait-sc")], [], OK,
     [BIND]),
    ("bound and unbound unsatisfied", ("pvc-a", "pvc-b"), [("node-a", {"foo": "barbar"})],
     [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), vb_pvc("pvc-b", "wait-sc")],
     [vb_pv("pv-a", "wait-sc", node_affinity={"foo": ["bar"]})], OK,
     [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_CONFLICT,
                                             ERR_REASON_BIND_CONFLICT))]),
    ("pvc not found", ("pvc-a",), ["node-a"], [], [],
     unresolvable('persistentvolumeclaim "pvc-a" not found'), None),
    ("pv not found", ("pvc-a",), ["node-a"], [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], [],
     OK, [unresolvable(ERR_REASON_PV_NOT_EXIST)]),
    ("pv not found claim lost", ("pvc-a",), ["node-a"],
     [vb_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")], [],
     unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
     None),
    ("local volumes with close capacity are preferred", ("pvc-a",), ABC,
     [vb_pvc("pvc-a", "wait-sc", request="50Gi")], local_pvs(False), OK, [OK, OK, BIND]),
    ("local volumes with close capacity are preferred (multiple pvcs)", ("pvc-0", "pvc-1"), ABC,
     [vb_pvc("pvc-0", "wait-sc", request="50Gi"), vb_pvc("pvc-1", "wait-hdd-sc", request="100Gi")],
     local_pvs(True), OK, [OK, OK, BIND]),
    ("zonal volumes with close capacity are preferred", ("pvc-a",), "zonal",
     [vb_pvc("pvc-a", "wait-sc", request="50Gi")], zonal_pvs(), OK,
     [OK, OK, OK, OK, BIND, BIND]),
]


@pytest.mark.parametrize(("name", "claims", "nodes", "pvcs", "pvs", "want_pre", "want"),
                         VOLUME_BINDING, ids=[c[0] for c in VOLUME_BINDING])
def test_volume_binding(name, claims, nodes, pvcs, pvs, want_pre, want) -> None:
    if nodes == "zonal":
        node_objs = zonal_nodes()
    else:
        node_objs = [make_node(n) if isinstance(n, str) else make_node(n[0], n[1]) for n in nodes]
    objs = [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, *pvcs, *pvs]
    pl, snap = setup(VolumeBinding, objs, node_objs)
    pod = make_pod("pod-a", pvcs=claims)
    state, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == want_pre
    if want is not None:
        by_name = {ni.name: as_pair(s) for ni, s in zip(snap.node_infos,
                                                        filter_all(pl, state, pod, snap),
                                                        strict=True)}
        assert [by_name[n.name] for n in node_objs] == want
    # the default release (1.37) has StorageCapacityScoring on: a scorer, so PreScore never
    # skips once PreFilter passed; 1.35 has none (test_volume_capacity.py)
    if want_pre[0] in (Code.SUCCESS, Code.SKIP):
        assert pl.pre_score(state, pod, []) is None


def test_claim_being_deleted() -> None:
    objs = [WAIT_SC, make_pvc("data", "wait-sc", deleting=True)]
    pl, snap = setup(VolumeBinding, objs, [make_node("n")])
    _, pre = prefilter(pl, make_pod(pvcs=("data",)), snap)
    assert as_pair(pre) == unresolvable('persistentvolumeclaim "data" is being deleted')


def test_ephemeral_claims() -> None:
    pod = make_pod("web", volumes=[{"name": "scratch", "ephemeral": {
        "volumeClaimTemplate": {"spec": {}}}}])
    pl, snap = setup(VolumeBinding, [WAIT_SC], [make_node("n")])
    _, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == unresolvable("waiting for ephemeral volume controller to create the "
                                        'persistentvolumeclaim "web-scratch"')
    pl, snap = setup(VolumeBinding, [WAIT_SC, make_pvc("web-scratch", "wait-sc")],
                     [make_node("n")])
    _, pre = prefilter(pl, pod, snap)
    assert as_pair(pre) == unresolvable("PVC default/web-scratch was not created for pod "
                                        "default/web (pod is not owner)")
    pl, snap = setup(VolumeBinding, [WAIT_SC, make_pvc("web-scratch", "wait-sc", owner=pod)],
                     [make_node("n")])
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    assert as_pair(filter_all(pl, state, pod, snap)[0]) == BIND


# ================================================================ binder_test.go

NODE_KEY = "nodeKey"
WAIT = "waitClass"
IMMEDIATE = "immediateClass"
WAIT_PROV = "waitClassWithProvisioner"
TOPO_MISMATCH = "topoMismatchClass"
PROVISIONER = "test-provisioner"


def classes():
    return [make_sc(WAIT_PROV, provisioner=PROVISIONER,
                    allowed={NODE_KEY: ["node1", "reference-value"]}),
            make_sc(IMMEDIATE, mode="Immediate", provisioner=""),
            make_sc(WAIT),
            make_sc(TOPO_MISMATCH, provisioner=PROVISIONER,
                    allowed={NODE_KEY: ["reference-value"]})]


def t_pvc(name: str, size: str, state: str, pv_name: str = "", cls: str = WAIT, *,
          rv: str = "1", node: str = ""):
    """``makeTestPVC``: namespace testns, uid pvc-uid."""
    return make_pvc(name, cls, size, ns="testns", uid="pvc-uid", rv=rv, access=(),
                    volume_name=pv_name if state in ("prebound", "bound") else "",
                    bound=state == "bound",
                    selected_node=node if state == "selected" else None)


def t_pv(name: str, node: str, capacity: str, claim=None, cls: str = WAIT, *, rv: str = "1"):
    """``makeTestPV``: Available, node affinity nodeKey In [node], pre-bound to ``claim``."""
    return make_pv(name, cls, capacity, node_affinity={NODE_KEY: [node]} if node else None,
                   claim=claim, access=(), rv=rv)


unboundPVC = t_pvc("unbound-pvc", "1G", "unbound")
unboundPVC2 = t_pvc("unbound-pvc2", "5G", "unbound")
preboundPVC = t_pvc("prebound-pvc", "1G", "prebound", "pv-node1a")
boundPVC = t_pvc("bound-pvc", "1G", "bound", "pv-bound")
immediateUnboundPVC = t_pvc("immediate-unbound-pvc", "1G", "unbound", cls=IMMEDIATE)
immediateBoundPVC = t_pvc("immediate-bound-pvc", "1G", "bound", "pv-bound-immediate",
                          cls=IMMEDIATE)
provisionedPVC = t_pvc("provisioned-pvc", "1Gi", "unbound", cls=WAIT_PROV)
provisionedPVC2 = t_pvc("provisioned-pvc2", "1Gi", "unbound", cls=WAIT_PROV)
provisionedPVCHigherVersion = t_pvc("provisioned-pvc2", "1Gi", "unbound", cls=WAIT_PROV, rv="2")
noProvisionerPVC = t_pvc("no-provisioner-pvc", "1Gi", "unbound")
topoMismatchPVC = t_pvc("topo-mismatch-pvc", "1Gi", "unbound", cls=TOPO_MISMATCH)
selectedNodePVC = t_pvc("provisioned-pvc", "1Gi", "selected", cls=WAIT_PROV, node="node1")

pvNode1a = t_pv("pv-node1a", "node1", "5G")
pvNode1b = t_pv("pv-node1b", "node1", "10G")
pvNode2 = t_pv("pv-node2", "node2", "1G")
pvBound = t_pv("pv-bound", "node1", "1G", boundPVC)
pvNode1aBound = t_pv("pv-node1a", "node1", "5G", unboundPVC)
pvNode1bBound = t_pv("pv-node1b", "node1", "10G", unboundPVC2)
pvBoundImmediate = t_pv("pv-bound-immediate", "node1", "1G", immediateBoundPVC, IMMEDIATE)
pvBoundImmediateNode2 = t_pv("pv-bound-immediate", "node2", "1G", immediateBoundPVC, IMMEDIATE)

NODE1 = make_node("node1", {NODE_KEY: "node1"}, hostname_label=False)


def t_pod(claims=(), volumes=None):
    return make_pod("test-pod", ns="testns", pvcs=tuple(c.name for c in claims),
                    volumes=volumes, node="node1", uid="test-pod-uid")


def binder_env(pvs, pvcs, nodes=(NODE1,), extra=()):
    objs = objects(*classes(), *pvs, *pvcs, *extra)
    snap = snapshot_from_nodes(list(nodes), [])
    binder = VolumeBinder(lambda: objs, node=lambda n: snap.get(n).node if snap.get(n) else None)
    return binder, snap, objs


def find_both(binder: VolumeBinder, snap: Snapshot, pod, node):
    """``findPodVolumes`` in the per-node and the batch form: (pod volumes, reasons) or the
    error; asserts both forms agree."""
    try:
        claims = binder.get_pod_volume_claims(pod)
    except StorageError as e:
        return None, e
    if claims.unbound_claims_immediate:
        return None, StorageError("pod has unbound immediate PersistentVolumeClaims")
    pv, reasons = binder.find_pod_volumes(pod, claims, node)
    row = snap.table.index[node.name]
    try:
        b_ok, u_ok, enough, found = binder.find_pod_volumes_batch(pod, claims, snap.table,
                                                          np.array([row]))
    except NeedsPerNode:  # in-tree volumes translated per node: the plugin loops
        return pv, reasons
    assert reasons_from_flags(bool(b_ok[0]), bool(u_ok[0]), bool(enough[0]),
                              bool(found[0])) == reasons
    return pv, reasons


def names(pv: PodVolumes | None):
    if pv is None:
        return None, None
    b = [(x.pvc.name, x.pv.name) for x in pv.static_bindings] if pv.static_bindings else None
    d = [c.pvc.name for c in pv.dynamic_provisions] if pv.dynamic_provisions else None
    return b, d


def _generic_claim(owned: bool):
    pod = t_pod(volumes=[{"name": "test-volume", "ephemeral": {"volumeClaimTemplate": {}}}])
    return make_pvc("test-pod-test-volume", IMMEDIATE, "1G", ns="testns", uid="pvc-uid",
                    volume_name="pv-bound", bound=True, access=(), owner=pod if owned else None)


GENERIC_VOL = [{"name": "test-volume", "ephemeral": {"volumeClaimTemplate": {}}}]
NO_PROVISIONING = [
    # (name, pod claims, cache claims (None: pod's), pvs, pod volumes, bindings, reasons, fails)
    ("no-volumes", [], None, [], None, None, (), False),
    ("no-pvcs", [], None, [], [{"name": "e", "emptyDir": {}}], None, (), False),
    ("pvc-not-found", [boundPVC], [], [], None, None, (), True),
    ("bound-pvc", [boundPVC], None, [pvBound], None, None, (), False),
    ("bound-pvc,pv-not-exists", [boundPVC], None, [], None, None, (ERR_REASON_PV_NOT_EXIST,),
     False),
    ("prebound-pvc", [preboundPVC], None, [pvNode1aBound], None, None, (), True),
    ("unbound-pvc,pv-same-node", [unboundPVC], None, [pvNode2, pvNode1a, pvNode1b], None,
     [("unbound-pvc", "pv-node1a")], (), False),
    ("unbound-pvc,pv-different-node", [unboundPVC], None, [pvNode2], None, None,
     (ERR_REASON_BIND_CONFLICT,), False),
    ("two-unbound-pvcs", [unboundPVC, unboundPVC2], None, [pvNode1a, pvNode1b], None,
     [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], (), False),
    ("two-unbound-pvcs,order-by-size", [unboundPVC2, unboundPVC], None, [pvNode1a, pvNode1b],
     None, [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], (), False),
    ("two-unbound-pvcs,partial-match", [unboundPVC, unboundPVC2], None, [pvNode1a], None,
     [("unbound-pvc", "pv-node1a")], (ERR_REASON_BIND_CONFLICT,), False),
    ("one-bound,one-unbound", [unboundPVC, boundPVC], None, [pvBound, pvNode1a], None,
     [("unbound-pvc", "pv-node1a")], (), False),
    ("one-bound,one-unbound,no-match", [unboundPVC, boundPVC], None, [pvBound, pvNode2], None,
     None, (ERR_REASON_BIND_CONFLICT,), False),
    ("one-prebound,one-unbound", [unboundPVC, preboundPVC], None, [pvNode1a, pvNode1b], None,
     None, (), True),
    ("immediate-bound-pvc", [immediateBoundPVC], None, [pvBoundImmediate], None, None, (), False),
    ("immediate-bound-pvc-wrong-node", [immediateBoundPVC], None, [pvBoundImmediateNode2], None,
     None, (ERR_REASON_NODE_CONFLICT,), False),
    ("immediate-unbound-pvc", [immediateUnboundPVC], None, [], None, None, (), True),
    ("immediate-unbound-pvc,delayed-mode-bound", [immediateUnboundPVC, boundPVC], None,
     [pvBound], None, None, (), True),
    ("immediate-unbound-pvc,delayed-mode-unbound", [immediateUnboundPVC, unboundPVC], None, [],
     None, None, (), True),
    ("generic-ephemeral,no-pvc", [], [], [], GENERIC_VOL, None, (), True),
    ("generic-ephemeral,with-pvc", [], "owned", ["generic"], GENERIC_VOL, None, (), False),
    ("generic-ephemeral,wrong-pvc", [], "not-owned", ["generic"], GENERIC_VOL, None, (), True),
]


def _resolve_generic(cache, pvs):
    if cache in ("owned", "not-owned"):
        claim = _generic_claim(cache == "owned")
        cache = [claim]
        pvs = [t_pv("pv-bound", "node1", "1G", claim)]
    return cache, pvs


@pytest.mark.parametrize(("name", "claims", "cache", "pvs", "volumes", "bindings", "reasons",
                          "fails"), NO_PROVISIONING, ids=[c[0] for c in NO_PROVISIONING])
def test_find_pod_volumes_without_provisioning(name, claims, cache, pvs, volumes, bindings,
                                               reasons, fails) -> None:
    cache, pvs = _resolve_generic(cache, pvs)
    binder, snap, _ = binder_env(pvs, claims if cache is None else cache)
    pod = t_pod(claims, volumes)
    pv, got = find_both(binder, snap, pod, NODE1)
    if fails:
        assert isinstance(got, StorageError)
        return
    assert got == reasons
    assert names(pv)[0] == bindings


WITH_PROVISIONING = [
    # (name, pod claims, pvs, bindings, provisions, reasons, fails)
    ("one-provisioned", [provisionedPVC], [], None, ["provisioned-pvc"], (), False),
    ("two-unbound-pvcs,one-matched,one-provisioned", [unboundPVC, provisionedPVC], [pvNode1a],
     [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"], (), False),
    ("one-bound,one-provisioned", [boundPVC, provisionedPVC], [pvBound], None,
     ["provisioned-pvc"], (), False),
    ("one-binding,one-selected-node", [boundPVC, selectedNodePVC], [pvBound], None,
     ["provisioned-pvc"], (), False),
    ("immediate-unbound-pvc", [immediateUnboundPVC], [], None, None, (), True),
    ("one-immediate-bound,one-provisioned", [immediateBoundPVC, provisionedPVC],
     [pvBoundImmediate], None, ["provisioned-pvc"], (), False),
    ("invalid-provisioner", [noProvisionerPVC], [], None, None, (ERR_REASON_BIND_CONFLICT,),
     False),
    ("volume-topology-unsatisfied", [topoMismatchPVC], [], None, None,
     (ERR_REASON_BIND_CONFLICT,), False),
]


@pytest.mark.parametrize(("name", "claims", "pvs", "bindings", "provisions", "reasons", "fails"),
                         WITH_PROVISIONING, ids=[c[0] for c in WITH_PROVISIONING])
def test_find_pod_volumes_with_provisioning(name, claims, pvs, bindings, provisions, reasons,
                                            fails) -> None:
    binder, snap, _ = binder_env(pvs, claims)
    pv, got = find_both(binder, snap, t_pod(claims), NODE1)
    if fails:
        assert isinstance(got, StorageError)
        return
    assert got == reasons
    assert names(pv) == (bindings, provisions)


def test_selected_node_elsewhere_fails_fast() -> None:
    other = t_pvc("provisioned-pvc", "1Gi", "selected", cls=WAIT_PROV, node="node2")
    binder, snap, _ = binder_env([pvBound], [boundPVC, other])
    pv, got = find_both(binder, snap, t_pod([boundPVC, other]), NODE1)
    assert got == (ERR_REASON_BIND_CONFLICT,)
    assert names(pv) == (None, None)


def _migration_pv(claim):
    pv = make_pv("pv-migration-bound", WAIT, "1G", claim=claim, access=(),
                 labels={ZONE_LABEL_BETA: "us-east-1", REGION_LABEL_BETA: "us-east-1a"},
                 source_kind="gcePersistentDisk",
                 source={"pdName": "test-disk", "fsType": "ext4", "partition": 0,
                         "readOnly": False})
    return pv


boundMigrationPVC = t_pvc("pvc-migration-bound", "1G", "bound", "pv-migration-bound")
GKE_ZONE = "topology.gke.io/zone"
CSI_MIGRATION = [
    ("pvc-bound", make_node("node1", {GKE_ZONE: "us-east-1"}), "kubernetes.io/gce-pd", ()),
    ("pvc-bound,csinode-not-migrated", make_node("node1", {GKE_ZONE: "us-east-1"}), "", ()),
    ("pvc-bound,missing-csinode", make_node("node1", {GKE_ZONE: "us-east-1"}), None, ()),
    ("pvc-bound,node-different-zone", make_node("node1", {GKE_ZONE: "us-east-2"}),
     "kubernetes.io/gce-pd", (ERR_REASON_NODE_CONFLICT,)),
]


@pytest.mark.parametrize(("name", "node", "migrated", "reasons"), CSI_MIGRATION,
                         ids=[c[0] for c in CSI_MIGRATION])
def test_find_pod_volumes_with_csi_migration(name, node, migrated, reasons) -> None:
    extra = [] if migrated is None else [make_csinode("node1", {}, migrated=migrated)]
    binder, snap, _ = binder_env([_migration_pv(boundMigrationPVC)], [boundMigrationPVC],
                                 nodes=(node,), extra=extra)
    _, got = find_both(binder, snap, t_pod([boundMigrationPVC]), node)
    assert got == reasons


def test_csi_migration_in_plugin_batch_falls_back_per_node() -> None:
    nodes = [make_node("node1", {GKE_ZONE: "us-east-1"}), make_node("node2", {GKE_ZONE: "b"})]
    objs = [*classes(), _migration_pv(boundMigrationPVC), boundMigrationPVC,
            make_csinode("node1", {}, migrated="kubernetes.io/gce-pd"),
            make_csinode("node2", {}, migrated="kubernetes.io/gce-pd")]
    pl, snap = setup(VolumeBinding, objs, nodes)
    pod = t_pod([boundMigrationPVC])
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    assert [as_pair(s) for s in filter_all(pl, state, pod, snap)] == [OK, NODE_CONFLICT]


# ---------------------------------------------------------------- assume / revert

def binding(pvc, pv):
    from kubesched.plugins.volumebinding.binder import BindingInfo

    return BindingInfo(pvc, pv)


ASSUME = [
    # (name, pod claims, pvs, bindings, provisions, fails, all bound, expected bound pv names)
    ("all-bound", [boundPVC], [pvBound], [], [], False, True),
    ("one-binding", [unboundPVC], [pvNode1a], [(unboundPVC, pvNode1a)], [], False, False),
    ("two-bindings", [unboundPVC, unboundPVC2], [pvNode1a, pvNode1b],
     [(unboundPVC, pvNode1a), (unboundPVC2, pvNode1b)], [], False, False),
    ("pv-already-bound", [unboundPVC], [pvNode1aBound], [(unboundPVC, pvNode1aBound)], [], False,
     False),
    ("tmpupdate-failed", [unboundPVC], [pvNode1a],
     [(unboundPVC, pvNode1a), (unboundPVC2, pvNode1b)], [], True, False),
    ("one-binding, one-pvc-provisioned", [unboundPVC, provisionedPVC], [pvNode1a],
     [(unboundPVC, pvNode1a)], [provisionedPVC], False, False),
    ("one-binding, one-provision-tmpupdate-failed", [unboundPVC, provisionedPVCHigherVersion],
     [pvNode1a], [(unboundPVC, pvNode1a)], [provisionedPVC2], True, False),
]


@pytest.mark.parametrize(("name", "claims", "pvs", "bindings", "provisions", "fails", "all_bound"),
                         ASSUME, ids=[c[0] for c in ASSUME])
def test_assume_pod_volumes(name, claims, pvs, bindings, provisions, fails, all_bound) -> None:
    binder, _, _ = binder_env(pvs, claims)
    pod = t_pod(claims)
    pod_volumes = PodVolumes([binding(c, v) for c, v in bindings],
                             [DynamicProvision(c) for c in provisions])
    if fails:
        with pytest.raises(StorageError):
            binder.assume_pod_volumes(pod, "node1", pod_volumes)
        for _c, v in bindings:  # the cache is restored
            assert binder.pv_cache.get(v.name) is binder.pv_cache.get_api(v.name)
        for c in provisions:
            got = binder.pvc_cache.get(c.key)
            assert got is None or ANN_SELECTED_NODE not in got.metadata.annotations
        return
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is all_bound
    if all_bound:
        return
    for (c, v), b in zip(bindings, pod_volumes.static_bindings or [], strict=True):
        cached = binder.pv_cache.get(v.name)
        assert cached.spec.claim_ref.name == c.name
        assert cached.spec.claim_ref.namespace == c.namespace
        assert b.pv.spec.claim_ref.uid == c.metadata.uid
    for c in provisions:
        assert binder.pvc_cache.get(c.key).metadata.annotations[ANN_SELECTED_NODE] == "node1"
    assert pod_volumes.dynamic_provisions is not None  # empty, not None, after assume


def test_revert_assumed_pod_volumes() -> None:
    binder, _, _ = binder_env([pvNode1a], [unboundPVC, provisionedPVC])
    pod = t_pod([unboundPVC, provisionedPVC])
    pod_volumes = PodVolumes([binding(unboundPVC, pvNode1a)], [DynamicProvision(provisionedPVC)])
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is False
    assert binder.pv_cache.get("pv-node1a").spec.claim_ref is not None
    binder.revert_assumed_pod_volumes(pod_volumes)
    assert binder.pv_cache.get("pv-node1a") is binder.pv_cache.get_api("pv-node1a")
    assert ANN_SELECTED_NODE not in binder.pvc_cache.get(
        provisionedPVC.key).metadata.annotations


def test_assumed_volume_is_not_offered_to_the_next_pod() -> None:
    """Reserve's assumption makes the PV unavailable to later pods until the API changes."""
    other = make_pvc("other", WAIT, "1G", ns="testns", uid="other-uid", access=())
    binder, snap, objs = binder_env([pvNode1a], [unboundPVC, other])
    pod = t_pod([unboundPVC])
    claims = binder.get_pod_volume_claims(pod)
    pv, reasons = binder.find_pod_volumes(pod, claims, NODE1)
    assert reasons == ()
    binder.assume_pod_volumes(pod, "node1", pv)
    pod2 = make_pod("p2", ns="testns", pvcs=("other",))
    _, reasons2 = find_both(binder, snap, pod2, NODE1)
    assert reasons2 == (ERR_REASON_BIND_CONFLICT,)
    # the API object changes (another writer): the assumption is dropped
    newer = copy_object(pvNode1a)
    newer.metadata.resource_version = "7"
    replace_storage_object(objs, newer)
    _, reasons3 = find_both(binder, snap, pod2, NODE1)
    assert reasons3 == ()


# ---------------------------------------------------------------- bind (PreBind)

class FakeAPI:
    """A fake API server with the PV controller: stores updates, binds pre-bound pairs and
    provisions volumes for annotated claims (as the simulator does)."""

    wait_for_volume_binding = False  # set True: PreBind polls (a controller elsewhere)

    def __init__(self, objs: dict[str, list[Any]], *, fail: str | None = None,
                 controller: bool = True) -> None:
        self.objs = objs
        self.fail = fail
        self.controller = controller
        self.calls: list[str] = []
        self.rv = 100

    def _store(self, obj):
        if self.fail == obj.name:
            raise RuntimeError(f'Operation cannot be fulfilled on {obj.name}')
        new = copy_object(obj)
        self.rv += 1
        new.metadata.resource_version = str(self.rv)
        replace_storage_object(self.objs, new)
        return new

    def update_persistent_volume(self, pv):
        self.calls.append(f"pv {pv.name}")
        new = self._store(pv)
        ref = new.spec.claim_ref
        pvc = storage_index(self.objs).pvc(ref.namespace, ref.name)
        if self.controller and pvc is not None:
            bpv, bpvc = controller_bind(new, pvc)
            new = self._store(bpv)
            self._store(bpvc)
        return new

    def update_persistent_volume_claim(self, pvc):
        self.calls.append(f"pvc {pvc.name}")
        new = self._store(pvc)
        if self.controller:
            from kubesched.api.storage import provision_volume

            sc = storage_index(self.objs).storage_class(WAIT_PROV)
            pv = provision_volume(new, sc, NODE1.metadata.labels, None)
            self._store(pv)
            _, bpvc = controller_bind(pv, new)
            new = self._store(bpvc)
        return new


def _bound_pod():
    pod = t_pod([unboundPVC, provisionedPVC])
    pod.spec.node_name = "node1"
    return pod


def test_bind_pod_volumes() -> None:
    binder, _, objs = binder_env([pvNode1a], [unboundPVC, provisionedPVC])
    api = FakeAPI(objs)
    binder._backend = lambda: api
    pod = _bound_pod()
    pv, reasons = binder.find_pod_volumes(pod, binder.get_pod_volume_claims(pod), NODE1)
    assert reasons == ()
    assert binder.assume_pod_volumes(pod, "node1", pv) is False
    binder.bind_pod_volumes(pod, pv)
    assert api.calls == ["pv pv-node1a", "pvc provisioned-pvc"]
    index = storage_index(objs)
    assert index.pvc("testns", "unbound-pvc").spec.volume_name == "pv-node1a"
    assert index.pvc("testns", "provisioned-pvc").spec.volume_name == "pvc-pvc-uid"
    assert binder.are_pod_volumes_bound(pod)
    assert len(binder.pv_cache) == 0 or binder.pv_cache.get("pv-node1a") is index.pv("pv-node1a")


def test_bind_pod_volumes_api_error_reverts() -> None:
    binder, _, objs = binder_env([pvNode1a], [unboundPVC])
    binder._backend = lambda: FakeAPI(objs, fail="pv-node1a")
    pod = t_pod([unboundPVC])
    pod.spec.node_name = "node1"
    pv, _ = binder.find_pod_volumes(pod, binder.get_pod_volume_claims(pod), NODE1)
    binder.assume_pod_volumes(pod, "node1", pv)
    with pytest.raises(StorageError, match="Operation cannot be fulfilled"):
        binder.bind_pod_volumes(pod, pv)
    assert binder.pv_cache.get("pv-node1a") is binder.pv_cache.get_api("pv-node1a")


def test_bind_pod_volumes_waits_for_the_controller() -> None:
    binder, _, objs = binder_env([pvNode1a], [unboundPVC])
    binder._backend = lambda: FakeAPI(objs, controller=False)
    pod = t_pod([unboundPVC])
    pod.spec.node_name = "node1"
    pv, _ = binder.find_pod_volumes(pod, binder.get_pod_volume_claims(pod), NODE1)
    binder.assume_pod_volumes(pod, "node1", pv)
    with pytest.raises(StorageError, match="binding volumes: context deadline exceeded"):
        binder.bind_pod_volumes(pod, pv)


def test_check_bindings_claim_ref_reset() -> None:
    binder, _, objs = binder_env([pvNode1a], [unboundPVC])
    pod = t_pod([unboundPVC])
    pod.spec.node_name = "node1"
    pv_no_uid = make_pv("pv-node1a", WAIT, "5G", node_affinity={NODE_KEY: ["node1"]}, access=(),
                        claim_ref=ObjectReference(name="unbound-pvc", namespace="testns"))
    replace_storage_object(objs, pv_no_uid)
    with pytest.raises(StorageError, match='ClaimRef got reset for pv "pv-node1a"'):
        binder.check_bindings(pod, [binding(unboundPVC, pv_no_uid)], [])


def test_plugin_reserve_prebind_unreserve() -> None:
    nodes = [NODE1, make_node("node2", {NODE_KEY: "node2"}, hostname_label=False)]
    objs = [*classes(), pvNode1a, pvNode2, unboundPVC]
    pl, snap = setup(VolumeBinding, objs, nodes)
    pl.handle.backend = FakeAPI(pl.handle.objects)
    pod = t_pod([unboundPVC])
    state, pre = prefilter(pl, pod, snap)
    assert pre.is_success()
    # the batch form decided (both nodes have a 1G+ volume): Reserve builds the node's
    # volumes itself
    out = pl.filter_batch(state, pod, snap, np.arange(2))
    assert out.codes.tolist() == [0, 0]
    assumed = copy_object(pod)
    assumed.spec = copy_object(pod).spec
    assumed.spec.node_name = "node1"
    assert pl.reserve(state, assumed, "node1") is None
    assert pl.binder.pv_cache.get("pv-node1a").spec.claim_ref.name == "unbound-pvc"
    pl.unreserve(state, assumed, "node1")
    assert pl.binder.pv_cache.get("pv-node1a").spec.claim_ref is None
    assert pl.reserve(state, assumed, "node1") is None
    assert pl.pre_bind(state, assumed, "node1") is None
    assert storage_index(pl.handle.objects).pvc("testns", "unbound-pvc").spec.volume_name == \
        "pv-node1a"


def test_prebind_all_bound_and_missing_node_volumes() -> None:
    pl, snap = setup(VolumeBinding, [*classes(), pvBound, boundPVC], [NODE1])
    pod = t_pod([boundPVC])
    state, _ = prefilter(pl, pod, snap)
    assert pl.reserve(state, pod, "node1") is None
    assert pl.pre_bind(state, pod, "node1") is None  # all bound: nothing to do
    pl2, snap2 = setup(VolumeBinding, [*classes(), pvNode1a, unboundPVC], [NODE1])
    pod2 = t_pod([unboundPVC])
    state2, _ = prefilter(pl2, pod2, snap2)
    st = pl2.pre_bind(state2, pod2, "node1")
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == ('no pod volumes found for node "node1"',)


# ================================================================ pv_helpers_test.go

FMV_NODES = {f"node{i}": {"key1": f"value{i}"} for i in range(1, 5)}


def fmv_volumes(vac: str | None = None):
    def v(uid, name, cap, available, **kw):
        pv = make_pv(name, kw.pop("cls", ""), cap, phase="Available" if available else "Pending",
                     vac=vac, **kw)
        pv.metadata.uid = uid
        return pv
    return [
        v("local-small", "local001", "5G", True),
        v("local-pd-very-large", "local002", "200E", True, cls="large"),
        v("affinity-pv", "affinity001", "100G", True, cls="wait",
          node_affinity={"key1": ["value1"]}),
        v("affinity-pv2", "affinity002", "150G", True, cls="wait",
          node_affinity={"key1": ["value1"]}),
        v("affinity-prebound", "affinity003", "100G", True, cls="wait",
          node_affinity={"key1": ["value1"]},
          claim_ref=ObjectReference(name="claim02", namespace="myns")),
        v("affinity-pv3", "affinity003", "200G", True, cls="wait",
          node_affinity={"key1": ["value3"]}),
        v("affinity-pv4", "affinity004", "200G", False, cls="wait",
          node_affinity={"key1": ["value4"]}),
    ]


def fmv_claim(name, modes=("ReadWriteOnce",), vac=None):
    return make_pvc(name, "wait", "100G", ns="myns", access=modes, vac=vac)


FIND_MATCHING = [
    ("success-match", None, fmv_claim("claim01"), "node1", set(), "affinity-pv"),
    ("success-prebound", None, fmv_claim("claim02"), "node1", set(), "affinity-prebound"),
    ("success-exclusion", None, fmv_claim("claim01"), "node1", {"affinity001"}, "affinity-pv2"),
    ("fail-exclusion", None, fmv_claim("claim01"), "node1",
     {"affinity001", "affinity002", "affinity002-vac"}, None),
    ("fail-accessmode", None, fmv_claim("claim01", ("ReadWriteMany",)), "node1", set(), None),
    ("fail-nodeaffinity", None, fmv_claim("claim01"), "node2", set(), None),
    ("fail-prebound-node-affinity", None, fmv_claim("claim02"), "node3", set(), None),
    ("fail-nonavaliable", None, fmv_claim("claim04"), "node4", set(), None),
    ("success-bad-and-good-node-affinity", None, fmv_claim("claim03"), "node3", set(),
     "affinity-pv3"),
    ("success-match-with-vac", "gold", fmv_claim("claim01", vac="gold"), "node1", set(),
     "affinity-pv"),
    ("fail-vac", None, fmv_claim("claim01", vac="silver"), "node1", set(), None),
    ("fail-prebound-vac", "gold", fmv_claim("claim02", vac="silver"), "node1", set(), None),
]


@pytest.mark.parametrize(("name", "vac", "claim", "node", "excluded", "want"), FIND_MATCHING,
                         ids=[c[0] for c in FIND_MATCHING])
def test_find_matching_volume_with_node(name, vac, claim, node, excluded, want) -> None:
    got = find_matching_volume(claim, fmv_volumes(vac), FMV_NODES[node], excluded)
    assert (got.metadata.uid if got is not None else None) == want


def test_find_matching_volume_in_batch_agrees() -> None:
    """The batch matcher picks the same volume per node as FindMatchingVolume."""
    nodes = [make_node(n, labels) for n, labels in FMV_NODES.items()]
    snap = snapshot_from_nodes(nodes, [])
    for _, vac, claim, _, excluded, _ in FIND_MATCHING:
        vols = fmv_volumes(vac)
        chosen = {name: np.arange(len(nodes)) for name in excluded}
        cands, choice = VolumeBinder.match_claim_rows(claim, vols, snap.table,
                                                      np.ones(len(nodes), dtype=bool), chosen)
        for n in FMV_NODES:
            want = find_matching_volume(claim, vols, FMV_NODES[n], excluded)
            j = int(choice[snap.table.index[n]])
            got = cands[j].name if j >= 0 else None
            assert got == (want.name if want is not None else None), (claim.name, n)


def test_delay_binding_mode() -> None:
    index = storage_index(objects(make_sc("immediate-mode", mode="Immediate"),
                                  make_sc("wait-mode")))
    assert not is_delay_binding_mode(make_pvc("c"), index)  # nil class
    assert not is_delay_binding_mode(make_pvc("c", "not-here"), index)
    assert not is_delay_binding_mode(make_pvc("c", "immediate-mode"), index)
    assert is_delay_binding_mode(make_pvc("c", "wait-mode"), index)
    beta = make_pvc("c", "immediate-mode")
    beta.metadata.annotations[BETA_STORAGE_CLASS_ANNOTATION] = "wait-mode"
    assert is_delay_binding_mode(beta, index)  # the beta annotation wins


def test_claim_selector_and_volume_mode() -> None:
    sel = LabelSelector(match_labels=(("speed", "fast"),))
    claim = make_pvc("c", "wait", "1G", selector=sel)
    fast = make_pv("fast", "wait", "5G", labels={"speed": "fast"})
    slow = make_pv("slow", "wait", "2G", labels={"speed": "slow"})
    block = make_pv("block", "wait", "1G", labels={"speed": "fast"}, volume_mode="Block")
    assert find_matching_volume(claim, [slow, block, fast], {}, set()).name == "fast"
    bad = make_pvc("c", "wait", "1G", selector=LabelSelector(match_labels=(("k", "bad value"),)))
    with pytest.raises(StorageError, match="error creating internal label selector"):
        find_matching_volume(bad, [fast], {}, set())


def test_equal_capacity_picks_the_first() -> None:
    claim = make_pvc("c", "wait", "1G")
    a, b = make_pv("a", "wait", "5G"), make_pv("b", "wait", "5G")
    assert find_matching_volume(claim, [a, b], {}, set()).name == "a"
    assert find_matching_volume(claim, [b, a], {}, set()).name == "b"


def test_pv_affinity_ignores_match_fields() -> None:
    """CheckNodeAffinity matches against the node's labels only: metadata.name fields never
    constrain (upstream builds a node without a name)."""
    from kubesched.api.types import NodeSelectorRequirement, NodeSelectorTerm
    from kubesched.plugins.volumebinding.helpers import pv_affinity_mask, pv_affinity_matches

    terms = (NodeSelectorTerm(match_fields=(NodeSelectorRequirement(
        "metadata.name", "In", ("elsewhere",)),)),)
    assert pv_affinity_matches(terms, {})
    snap = snapshot_from_nodes([make_node("n1")], [])
    assert pv_affinity_mask(terms, snap.table).tolist() == [True]
    assert pv_affinity_matches(affinity({"a": ["b"]}), {"a": "b"})
    assert not pv_affinity_matches(affinity({"a": ["b"]}), {"a": "c"})


# ================================================================ queueing hints

def test_registered_events() -> None:
    evs = [(e.event.resource, e.event.action, e.hint is None)
           for e in VolumeBinding(None, Handle()).events_to_register()]
    add_update = ActionType.ADD | ActionType.UPDATE
    assert evs == [
        (Resource.STORAGE_CLASS, add_update, False),
        (Resource.PERSISTENT_VOLUME_CLAIM, add_update, False),
        (Resource.PERSISTENT_VOLUME, add_update, True),
        (Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, True),
        (Resource.CSI_NODE, add_update, False),
        (Resource.CSI_DRIVER, ActionType.UPDATE, False),
        (Resource.CSI_STORAGE_CAPACITY, add_update, False),
    ]


def test_hint_pvc_change() -> None:
    hint = VolumeBinding.is_schedulable_after_pvc_change
    pod = make_pod("p", pvcs=("pvc1",))
    eph = make_pod("p", volumes=[{"name": "v", "ephemeral": {"volumeClaimTemplate": {}}}])
    assert hint(pod, None, make_pvc("pvc1")) == QueueingHint.QUEUE
    assert hint(pod, make_pvc("pvc1"), make_pvc("pvc1", volume_name="v")) == QueueingHint.QUEUE
    assert hint(pod, None, make_pvc("pvc2")) == QueueingHint.SKIP
    assert hint(pod, None, make_pvc("pvc1", ns="other")) == QueueingHint.SKIP
    assert hint(eph, None, make_pvc("p-v")) == QueueingHint.QUEUE
    with pytest.raises(TypeError):
        hint(pod, None, "not-a-pvc")


def test_hint_storage_class_change() -> None:
    hint = VolumeBinding.is_schedulable_after_storage_class_change
    pod = make_pod("p", pvcs=("pvc1",))
    a = make_sc("sc", allowed={"zone": ["a"]})
    b = make_sc("sc", allowed={"zone": ["b"]})
    assert hint(pod, None, a) == QueueingHint.QUEUE
    assert hint(pod, a, b) == QueueingHint.QUEUE
    assert hint(pod, a, make_sc("sc", allowed={"zone": ["a"]}, provisioner="x")) == \
        QueueingHint.SKIP


def test_hint_csi_node_change() -> None:
    hint = VolumeBinding.is_schedulable_after_csi_node_change
    pod = make_pod("p", pvcs=("pvc1",))
    old = make_csinode("n", {"d": 1}, migrated="kubernetes.io/gce-pd")
    assert hint(pod, None, old) == QueueingHint.QUEUE
    assert hint(pod, old, make_csinode("n", {"d": 2}, migrated="kubernetes.io/gce-pd")) == \
        QueueingHint.SKIP
    assert hint(pod, old, make_csinode("n", {"d": 1}, migrated="")) == QueueingHint.QUEUE


def test_handle_without_objects() -> None:
    pl = VolumeBinding(None, Handle())
    snap = snapshot_from_nodes([make_node("n")], [])
    _, pre = prefilter(pl, make_pod(pvcs=("x",)), snap)
    assert as_pair(pre) == unresolvable('persistentvolumeclaim "x" not found')
    _, pre = prefilter(pl, make_pod(), snap)
    assert as_pair(pre) == SKIP


def _binder_on_a_virtual_clock(monkeypatch, controller_binds_at: int | None):
    """A binder whose backend's PV controller runs elsewhere (PreBind polls), on a virtual
    clock; the wall clock is out of bounds. The controller binds at the given look."""
    binder, _, objs = binder_env([pvNode1a], [unboundPVC])
    binder.bind_timeout = 600.0
    api = FakeAPI(objs, controller=False)
    api.wait_for_volume_binding = True
    binder._backend = lambda: api
    clock = VirtualClock()
    binder._clock = lambda: clock
    pod = t_pod([unboundPVC])
    pod.spec.node_name = "node1"
    pv, _ = binder.find_pod_volumes(pod, binder.get_pod_volume_claims(pod), NODE1)
    binder.assume_pod_volumes(pod, "node1", pv)
    looks: list[float] = []
    real_check = binder.check_bindings

    def check(*args):
        looks.append(clock.now())
        if len(looks) == controller_binds_at:
            index = storage_index(objs)
            bpv, bpvc = controller_bind(index.pv("pv-node1a"), index.pvc("testns", "unbound-pvc"))
            replace_storage_object(objs, bpv)
            replace_storage_object(objs, bpvc)
        return real_check(*args)

    binder.check_bindings = check

    def wall_clock(*_a):
        raise AssertionError("the binder read the wall clock")

    monkeypatch.setattr(time, "sleep", wall_clock)
    monkeypatch.setattr(time, "monotonic", wall_clock)
    monkeypatch.setattr(time, "time", wall_clock)
    return binder, pod, pv, clock, looks


def test_bind_pod_volumes_polls_when_the_backend_binds_elsewhere(monkeypatch) -> None:
    """A backend whose PV controller runs elsewhere (a real cluster) is polled every second
    of the handle's clock until the claim is bound, as upstream's PreBind waits (here the
    controller acts between the first and second look)."""
    binder, pod, pv, _, looks = _binder_on_a_virtual_clock(monkeypatch, 2)
    binder.bind_pod_volumes(pod, pv)
    assert looks == [0.0, 1.0]


def test_bind_pod_volumes_gives_up_after_the_bind_timeout(monkeypatch) -> None:
    binder, pod, pv, clock, looks = _binder_on_a_virtual_clock(monkeypatch, None)
    with pytest.raises(StorageError, match="binding volumes: context deadline exceeded"):
        binder.bind_pod_volumes(pod, pv)
    assert clock.now() == 600.0 and len(looks) == 601 and looks[-1] == 600.0


def test_bind_pod_volumes_wait_ends_when_cancelled(monkeypatch) -> None:
    binder, pod, pv, clock, looks = _binder_on_a_virtual_clock(monkeypatch, None)
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(StorageError, match="binding volumes: context canceled"):
        binder.bind_pod_volumes(pod, pv, cancelled)
    assert looks == [0.0] and clock.now() == 0.0
