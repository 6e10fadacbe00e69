"""Storage capacity in VolumeBinding: the capacity check of dynamic provisioning and the
Score by utilisation (StorageCapacityScoring, beta-on in 1.37).

Ported from upstream ``volumebinding``: ``binder_test.go`` TestCapacity (11 scenarios, each
with the CSIDriver opting in and not: 22 cases), ``scorer_test.go`` TestScore (3 shapes, 18
cases) and the Score column of ``volume_binding_test.go`` TestVolumeBinding (the 8 cases that
reach Score, plus "zonal volumes with close capacity are preferred (custom shape)"). The
stored TestVolumeBinding predates StorageCapacityScoring (its capacity cases set
VolumeCapacityPriority with the shape ``[{0, 0}, {100, 10}]``); the static-binding Score they
check is the same code under StorageCapacityScoring, so they run here with that gate and
that shape. The dynamic-provisioning Score and the per-release defaults are checked against
the formula upstream's scorer applies (the newest test table could not be read).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _volume_util import (
    as_pair,
    filter_all,
    make_node,
    make_pod,
    make_pvc,
    make_sc,
    objects,
    prefilter,
)
from test_volumebinding import (
    IMMEDIATE_SC,
    NODE_KEY,
    PROVISIONER,
    VOLUME_BINDING,
    WAIT,
    WAIT_HDD_SC,
    WAIT_PROV,
    WAIT_SC,
    binder_env,
    provisionedPVC,
    t_pod,
    zonal_nodes,
    zonal_pvs,
)

from kubesched.api.storage import CSIDriver, CSIStorageCapacity, replace_storage_object
from kubesched.api.types import LabelSelector, ObjectMeta
from kubesched.config import default_config, load_config
from kubesched.config.args import default_args, validate_args
from kubesched.config.features import FeatureGates
from kubesched.config.plugin_args import args_to_dict
from kubesched.errors import InputError
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.binder import ERR_REASON_NOT_ENOUGH_SPACE
from kubesched.plugins.volumebinding.scorer import StorageResource, build_scorer
from kubesched.testing import snapshot_from_nodes

V135, V136, V137 = FeatureGates("1.35"), FeatureGates("1.36"), FeatureGates("1.37")


def shape(*points: tuple[int, int]) -> list[dict[str, int]]:
    return [{"utilization": u, "score": s} for u, s in points]


# ================================================================ scorer_test.go TestScore

HDD, SSD = "hdd", "ssd"
# (requested, capacity) per class -> score
SCORES: list[tuple[str, list[dict[str, int]], list[tuple[dict[str, tuple[int, int]], int]]]] = [
    ("default shape, single class", shape((0, 0), (100, 10)), [
        ({HDD: (0, 100)}, 0), ({HDD: (30, 100)}, 30), ({HDD: (50, 100)}, 50),
        ({HDD: (100, 100)}, 100)]),
    ("default shape, multiple classes", shape((0, 0), (100, 10)), [
        ({HDD: (0, 100), SSD: (0, 100)}, 0), ({HDD: (0, 100), SSD: (30, 100)}, 15),
        ({HDD: (30, 100), SSD: (30, 100)}, 30), ({HDD: (30, 100), SSD: (60, 100)}, 45),
        ({HDD: (50, 100), SSD: (50, 100)}, 50), ({HDD: (50, 100), SSD: (100, 100)}, 75),
        ({HDD: (100, 100), SSD: (100, 100)}, 100)]),
]


@pytest.mark.parametrize(("name", "points", "cases"), SCORES, ids=[c[0] for c in SCORES])
def test_score(name: str, points: list[dict[str, int]],
               cases: list[tuple[dict[str, tuple[int, int]], int]]) -> None:
    f = build_scorer(points)
    for resources, want in cases:
        assert f({k: StorageResource(r, c) for k, (r, c) in resources.items()}) == want


def test_score_custom_shape_multiple_classes() -> None:
    """The custom shape's points are already 0–100 scores upstream (a FunctionShape, not
    args): args of 0, 3, 5 (×10) give the same function."""
    f = build_scorer(shape((50, 0), (80, 3), (100, 5)))
    cases = [({HDD: (0, 100), SSD: (0, 100)}, 0), ({HDD: (0, 100), SSD: (30, 100)}, 0),
             ({HDD: (30, 100), SSD: (30, 100)}, 0), ({HDD: (30, 100), SSD: (60, 100)}, 5),
             ({HDD: (50, 100), SSD: (100, 100)}, 25), ({HDD: (90, 100), SSD: (90, 100)}, 40),
             ({HDD: (100, 100), SSD: (100, 100)}, 50)]
    for resources, want in cases:
        assert f({k: StorageResource(r, c) for k, (r, c) in resources.items()}) == want


def test_score_full_or_missing_capacity_counts_as_full() -> None:
    f = build_scorer(shape((0, 10), (100, 0)))
    assert f({HDD: StorageResource(10, 0)}) == 0
    assert f({HDD: StorageResource(200, 100)}) == 0
    assert f({}) == 0
    assert f({HDD: StorageResource(0, 100)}) == 100


# ================================================================ TestVolumeBinding's scores

ZONAL_CUSTOM = shape((0, 0), (50, 3), (100, 5))
# name -> (args shape, wantScores); the other cases reach Score only on nodes that fail
# Filter or with nothing to bind, and score 0
VOLUME_BINDING_SCORES: dict[str, tuple[list[dict[str, int]], list[int]]] = {
    "local volumes with close capacity are preferred":
        (shape((0, 0), (100, 10)), [25, 50, 0]),
    "local volumes with close capacity are preferred (multiple pvcs)":
        (shape((0, 0), (100, 10)), [38, 75, 0]),
    "zonal volumes with close capacity are preferred":
        (shape((0, 0), (100, 10)), [25, 25, 50, 50, 0, 0]),
}
SCORED = [c for c in VOLUME_BINDING if c[5][0] == Code.SUCCESS or c[5][0] == Code.SKIP]


def _nodes(spec: Any) -> list[Any]:
    if spec == "zonal":
        return zonal_nodes()
    return [make_node(n) if isinstance(n, str) else make_node(n[0], n[1]) for n in spec]


def _scores(pl: VolumeBinding, state: Any, pod: Any, snap: Snapshot) -> list[int]:
    """Score on every node (snapshot order) after the per-node Filter in ``state``, and in
    batch form after a batch-only Filter in a fresh cycle (reading the batch's per-row
    answer; a node that failed Filter scores 0, as upstream's missing entry); asserts the
    two agree."""
    per_node = [pl.score(state, pod, ni) for ni in snap.node_infos]
    fresh, _ = prefilter(pl, pod, snap)
    idx = np.arange(snap.num_nodes)
    if fresh.read("VolumeBinding") is not None and pl.filter_batch(fresh, pod, snap, idx):
        batch = pl.score_batch(fresh, pod, snap, idx)
        assert batch.tolist() == per_node
    return per_node


@pytest.mark.parametrize(("name", "claims", "nodes", "pvcs", "pvs", "want_pre", "want"),
                         SCORED, ids=[c[0] for c in SCORED])
def test_volume_binding_scores(name, claims, nodes, pvcs, pvs, want_pre, want) -> None:
    points, want_scores = VOLUME_BINDING_SCORES.get(name, (shape((0, 0), (100, 10)), None))
    node_objs = _nodes(nodes)
    objs = objects(IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, *pvcs, *pvs)
    snap = snapshot_from_nodes(node_objs, [])
    pl = VolumeBinding({"bindTimeoutSeconds": 300, "shape": points},
                       Handle(snapshot=snap, objects=objs, features=V137))
    pod = make_pod("pod-a", pvcs=claims)
    state, _ = prefilter(pl, pod, snap)
    filter_all(pl, state, pod, snap)
    assert pl.pre_score(state, pod, []) is None
    scores = dict(zip([ni.name for ni in snap.node_infos], _scores(pl, state, pod, snap),
                      strict=True))
    got = [scores[n.name] for n in node_objs]
    assert got == (want_scores if want_scores is not None else [0] * len(node_objs))


def test_zonal_volumes_custom_shape() -> None:
    """TestVolumeBinding "zonal volumes with close capacity are preferred (custom shape)"."""
    node_objs = zonal_nodes()
    objs = objects(IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, make_pvc("pvc-a", "wait-sc", "50Gi",
                                                               access=()), *zonal_pvs())
    snap = snapshot_from_nodes(node_objs, [])
    pl = VolumeBinding({"bindTimeoutSeconds": 300, "shape": ZONAL_CUSTOM},
                       Handle(snapshot=snap, objects=objs, features=V137))
    pod = make_pod("pod-a", pvcs=("pvc-a",))
    state, _ = prefilter(pl, pod, snap)
    statuses = {ni.name: as_pair(s) for ni, s in zip(snap.node_infos,
                                                      filter_all(pl, state, pod, snap),
                                                      strict=True)}
    assert [statuses[n.name][0] for n in node_objs] == [Code.SUCCESS] * 4 + [
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE] * 2
    scores = dict(zip([ni.name for ni in snap.node_infos], _scores(pl, state, pod, snap),
                      strict=True))
    assert [scores[n.name] for n in node_objs] == [15, 15, 30, 30, 0, 0]


@pytest.mark.parametrize(("features", "skips"), [(V135, True), (V136, True), (V137, False)])
def test_pre_score_per_release(features: FeatureGates, skips: bool) -> None:
    """No scorer without StorageCapacityScoring (alpha-off in 1.35 and 1.36); with it,
    PreScore never skips, even for a pod without claims (which scores 0)."""
    snap = snapshot_from_nodes([make_node("n")], [])
    pl = VolumeBinding(default_args("VolumeBinding", features=features),
                       Handle(snapshot=snap, objects=objects(), features=features))
    pod = make_pod("p")
    state, pre = prefilter(pl, pod, snap)
    assert pre.code == Code.SKIP
    st = pl.pre_score(state, pod, [])
    assert (st is not None and st.code == Code.SKIP) == skips
    if not skips:
        assert _scores(pl, state, pod, snap) == [0]


def test_default_shape_per_release() -> None:
    """SetDefaults_VolumeBindingArgs: the shape only with the gate on."""
    assert default_args("VolumeBinding", features=V135)["shape"] is None
    assert default_args("VolumeBinding", features=V136)["shape"] is None
    assert default_args("VolumeBinding", features=V137)["shape"] == shape((0, 10), (100, 0))
    on = FeatureGates("1.36", (("StorageCapacityScoring", True),))
    assert default_args("VolumeBinding", features=on)["shape"] == shape((0, 10), (100, 0))
    cfg = default_config(V137)
    assert args_to_dict(cfg.profiles[0].plugin_config["VolumeBinding"])["shape"] == shape(
        (0, 10), (100, 0))
    assert default_config(V135).profiles[0].plugin_config["VolumeBinding"].shape is None


def test_shape_validation_per_release() -> None:
    args = default_args("VolumeBinding", {"shape": shape((0, 0), (100, 10))}, V137)
    assert validate_args("VolumeBinding", args, "args", V137) == []
    errs = validate_args("VolumeBinding", args, "args", V135)
    assert [e.field for e in errs] == ["args.shape"]
    assert "StorageCapacityScoring" in errs[0].message
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {
               "shape": shape((0, 0), (100, 10))}}]}]}
    load_config(doc, features=V137)
    with pytest.raises(InputError, match="shape"):
        load_config(doc, features=V135)


# ================================================================ binder_test.go TestCapacity


def make_capacity(name: str, cls: str, node: Any, capacity: str = "",
                  maximum: str = "") -> CSIStorageCapacity:
    """``makeCapacity``: an empty nodeTopology (every node), or matching the node's
    nodeKey label; every one named "net" in no namespace, as upstream's."""
    from _volume_util import q

    topology = LabelSelector(
        match_labels=((NODE_KEY, node.metadata.labels[NODE_KEY]),) if node is not None else ())
    return CSIStorageCapacity(metadata=ObjectMeta(name=name, namespace=""),
                              storage_class_name=cls, node_topology=topology,
                              capacity=q(capacity) if capacity else None,
                              maximum_volume_size=q(maximum) if maximum else None)


NODE1_OBJ = make_node("node1", {NODE_KEY: "node1"}, hostname_label=False)
NODE2_OBJ = make_node("node2", {NODE_KEY: "node2"}, hostname_label=False)
networkAttachedCapacity = make_capacity("net", WAIT_PROV, None, "1Gi")
node1Capacity = make_capacity("net", WAIT_PROV, NODE1_OBJ, "1Gi")
node2Capacity = make_capacity("net", WAIT_PROV, NODE2_OBJ, "1Gi")

CAPACITY = [
    # (name, capacities, expected capacity kept with the claim, reasons)
    ("network-attached", [networkAttachedCapacity], networkAttachedCapacity, ()),
    ("local-storage", [node1Capacity], node1Capacity, ()),
    # the three share a name: the informer keeps the last one stored
    ("multiple", [networkAttachedCapacity, node2Capacity, node1Capacity], node1Capacity, ()),
    ("no-storage", [], None, (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("wrong-node", [make_capacity("net", WAIT_PROV, NODE2_OBJ, "1Gi")], None,
     (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("wrong-storage-class", [make_capacity("net", WAIT, NODE1_OBJ, "1Gi")], None,
     (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("insufficient-storage", [make_capacity("net", WAIT_PROV, NODE1_OBJ, "1Mi")], None,
     (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("insufficient-volume-size", [make_capacity("net", WAIT_PROV, NODE1_OBJ, "1Gi", "1Mi")],
     None, (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("zero-storage", [make_capacity("net", WAIT_PROV, NODE1_OBJ, "0Mi")], None,
     (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("zero-volume-size", [make_capacity("net", WAIT_PROV, NODE1_OBJ, "", "0Mi")], None,
     (ERR_REASON_NOT_ENOUGH_SPACE,)),
    ("nil-storage", [make_capacity("net", WAIT_PROV, NODE1_OBJ)], None,
     (ERR_REASON_NOT_ENOUGH_SPACE,)),
]


@pytest.mark.parametrize("opt_in", [True, False], ids=["StorageCapacity=true",
                                                       "StorageCapacity=false"])
@pytest.mark.parametrize(("name", "capacities", "want_capacity", "reasons"), CAPACITY,
                         ids=[c[0] for c in CAPACITY])
def test_capacity(name, capacities, want_capacity, reasons, opt_in: bool) -> None:
    driver = CSIDriver(metadata=ObjectMeta(name=PROVISIONER), storage_capacity=opt_in)
    binder, snap, objs = binder_env([], [provisionedPVC], extra=(driver,))
    for c in capacities:
        replace_storage_object(objs, c)
    pod = t_pod([provisionedPVC])
    claims = binder.get_pod_volume_claims(pod)
    pod_volumes, got = binder.find_pod_volumes(pod, claims, NODE1_OBJ)
    row = np.array([snap.table.index["node1"]])
    b_ok, u_ok, enough, found = binder.find_pod_volumes_batch(pod, claims, snap.table, row)
    if not opt_in:  # the scheduler checks capacity only for drivers that opt in
        reasons, want_capacity = (), None
    assert got == reasons
    assert (bool(b_ok[0]), bool(u_ok[0]), bool(enough[0]), bool(found[0])) == (
        True, True, not reasons, True)
    if reasons:
        return
    assert pod_volumes.dynamic_provisions is not None
    assert [(p.pvc.name, p.node_capacity) for p in pod_volumes.dynamic_provisions] == [
        (provisionedPVC.name, want_capacity)]
    batch = claims.batch.pod_volumes(int(row[0]))  # type: ignore[union-attr]
    assert [(p.pvc.name, p.node_capacity) for p in batch.dynamic_provisions or []] == [
        (provisionedPVC.name, want_capacity)]


def test_capacity_first_failing_claim_decides() -> None:
    """checkVolumeProvisions returns at the first claim that fails: a claim short of storage
    before one whose class does not fit the node's topology gives only "not enough free
    storage", the other order only the bind conflict."""
    driver = CSIDriver(metadata=ObjectMeta(name=PROVISIONER), storage_capacity=True)
    small = make_capacity("small", WAIT_PROV, NODE1_OBJ, "1Mi")
    topo = make_sc("topo", provisioner=PROVISIONER, allowed={NODE_KEY: ["elsewhere"]})
    big = make_pvc("big", WAIT_PROV, "1Gi", ns="testns", access=())
    # claims to provision are checked smallest first
    for mismatch_size, want, flags_want in (
            ("2Gi", ERR_REASON_NOT_ENOUGH_SPACE, (True, False)),
            ("500Mi", "node(s) didn't find available persistent volumes to bind", (False, True))):
        mismatch = make_pvc("mismatch", "topo", mismatch_size, ns="testns", access=())
        binder, snap, _ = binder_env([], [big, mismatch], extra=(driver, small, topo))
        pod = make_pod("p", ns="testns", pvcs=("big", "mismatch"))
        claims = binder.get_pod_volume_claims(pod)
        _, reasons = binder.find_pod_volumes(pod, claims, NODE1_OBJ)
        assert reasons == (want,)
        flags = binder.find_pod_volumes_batch(pod, claims, snap.table, np.array([0]))
        assert (bool(flags[1][0]), bool(flags[2][0])) == flags_want


# ================================================================ through the plugin


def _capacity_cluster(features: FeatureGates) -> tuple[VolumeBinding, Snapshot, list[Any]]:
    nodes = [make_node(n, {"zone": z}) for n, z in (("a1", "a"), ("b1", "b"), ("c1", "c"))]
    sc = make_sc("fast", provisioner="csi.example.com")
    driver = CSIDriver(metadata=ObjectMeta(name="csi.example.com"), storage_capacity=True)
    caps = [CSIStorageCapacity(metadata=ObjectMeta(name=f"cap-{z}", namespace="kube-system"),
                               storage_class_name="fast",
                               node_topology=LabelSelector(match_labels=(("zone", z),)),
                               capacity=size)
            for z, size in (("a", 10 << 30), ("b", 100 << 30), ("c", 1 << 30))]
    claim = make_pvc("data", "fast", "5Gi")
    objs = objects(sc, driver, *caps, claim)
    snap = snapshot_from_nodes(nodes, [])
    pl = VolumeBinding(default_args("VolumeBinding", features=features),
                       Handle(snapshot=snap, objects=objs, features=features))
    return pl, snap, nodes


@pytest.mark.parametrize("features", [V135, V137], ids=["1.35", "1.37"])
def test_capacity_filter_and_score(features: FeatureGates) -> None:
    """5Gi on zones with 10Gi, 100Gi and 1Gi free: zone c cannot hold it in every release;
    with StorageCapacityScoring the emptier zone b scores higher (default shape: 10 → 0 as
    utilisation goes 0 → 100%: 5/10 → 50, 5/100 → 95)."""
    pl, snap, nodes = _capacity_cluster(features)
    pod = make_pod("p", pvcs=("data",))
    state, _ = prefilter(pl, pod, snap)
    order = [ni.name for ni in snap.node_infos]
    statuses = dict(zip(order, filter_all(pl, state, pod, snap), strict=True))
    assert [as_pair(statuses[n.name]) for n in nodes] == [
        (Code.SUCCESS, ()), (Code.SUCCESS, ()),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NOT_ENOUGH_SPACE,))]
    st = pl.pre_score(state, pod, [])
    if features is V135:
        assert st is not None and st.code == Code.SKIP
        return
    assert st is None
    scores = dict(zip(order, _scores(pl, state, pod, snap), strict=True))
    assert [scores[n.name] for n in nodes] == [50, 95, 0]


# ================================================================ queueing hints

# volume_binding_test.go TestIsSchedulableAfterCSIStorageCapacityChange (the stored version
# whose hint first looks for a claim of the capacity's class): 11 cases, and one of ours


def _cap(cls: str = "", capacity: str = "", maximum: str = "") -> CSIStorageCapacity:
    from _volume_util import q

    return CSIStorageCapacity(metadata=ObjectMeta(name="cap-a", namespace=""),
                              storage_class_name=cls,
                              capacity=q(capacity) if capacity else None,
                              maximum_volume_size=q(maximum) if maximum else None)


EPHEMERAL = [{"name": "ephemeral-a", "ephemeral": {"volumeClaimTemplate": {}}}]
TWO_CLAIMS = ("pvc-a", "pvc-b")
CLAIMS_AB = [make_pvc("pvc-a", "sc-a", "1Gi"), make_pvc("pvc-b", "sc-b", "1Gi")]

CAPACITY_HINTS = [
    # (name, pod claims, pod's other volumes, claims stored, old, new, want)
    ("pod has no pvcs", (), None, [], _cap("sc-a"), _cap("sc-a"), "skip"),
    ("pod has no pvc or ephemeral volumes", (), [{"name": "e", "emptyDir": {}}], [],
     _cap("sc-a"), _cap("sc-a"), "skip"),
    ("pod has pvcs with no CSIStorageCapacity changes", TWO_CLAIMS, None, CLAIMS_AB,
     _cap("sc-b"), _cap("sc-b"), "skip"),
    ("pod has pvc that references a newly added CSIStorageCapacity", TWO_CLAIMS, None,
     CLAIMS_AB, None, _cap("sc-b"), "queue"),
    ("pod has ephemeral volume with changed CSIStorageCapacity.Capacity", (), EPHEMERAL,
     [make_pvc("pod-a-ephemeral-a", "sc-a", "1Gi")], _cap("sc-a", "1Gi"), _cap("sc-a", "2Gi"),
     "queue"),
    ("pod has pvcs with changed CSIStorageCapacity.MaximumVolumeSize", TWO_CLAIMS, None,
     CLAIMS_AB, _cap("sc-b", maximum="1Gi"), _cap("sc-b", maximum="2Gi"), "queue"),
    ("pod has ephemeral volume with changed CSIStorageCapacity.MaximumVolumeSize", (),
     EPHEMERAL, [make_pvc("pod-a-ephemeral-a", "sc-a", "1Gi")], _cap("sc-a", maximum="1Gi"),
     _cap("sc-a", maximum="2Gi"), "queue"),
    ("type conversion error", (), None, [], object(), object(), "error"),
    # upstream returns Queue with an error for a missing claim
    ("pod has pvcs but pvc not found", TWO_CLAIMS, None, [], _cap(), _cap(), "queue"),
    ("pod has ephemeral volume but pvc not found", (), EPHEMERAL, [], _cap(), _cap(),
     "queue"),
    # kubesched's: the ephemeral claim is found (else the answer would be Queue)
    ("pod has ephemeral volume with an unchanged capacity", (), EPHEMERAL,
     [make_pvc("pod-a-ephemeral-a", "sc-a", "1Gi")], _cap("sc-a", "2Gi"), _cap("sc-a", "1Gi"),
     "skip"),
    ("pvc does not specify a storage class", TWO_CLAIMS, None,
     [make_pvc("pvc-a", "sc-a", "1Gi"), make_pvc("pvc-b", "sc-notfound", "1Gi")], _cap(),
     _cap(), "skip"),
]


@pytest.mark.parametrize(("name", "claims", "volumes", "pvcs", "old", "new", "want"),
                         CAPACITY_HINTS, ids=[c[0] for c in CAPACITY_HINTS])
def test_is_schedulable_after_csi_storage_capacity_change(name, claims, volumes, pvcs, old,
                                                          new, want) -> None:
    from kubesched.framework.events import QueueingHint

    pl = VolumeBinding(None, Handle(snapshot=snapshot_from_nodes([], []),
                                    objects=objects(*pvcs)))
    pod = make_pod("pod-a", pvcs=claims, volumes=volumes)
    if want == "error":
        with pytest.raises(TypeError):
            pl.is_schedulable_after_csi_storage_capacity_change(pod, old, new)
        return
    got = pl.is_schedulable_after_csi_storage_capacity_change(pod, old, new)
    assert got == (QueueingHint.QUEUE if want == "queue" else QueueingHint.SKIP)


def test_is_schedulable_after_csi_driver_change() -> None:
    """isSchedulableAfterCSIDriverChange (volume_binding.go, the stored 1.31+ version; its
    test table was not found): only an inline CSI volume of that driver, and only when the
    driver stops tracking capacity."""
    from kubesched.framework.events import QueueingHint

    def driver(capacity: bool, name: str = PROVISIONER) -> CSIDriver:
        return CSIDriver(metadata=ObjectMeta(name=name), storage_capacity=capacity)

    inline = make_pod("p", volumes=[{"name": "v", "csi": {"driver": PROVISIONER}}])
    claimed = make_pod("p", pvcs=("pvc-a",))
    hint = VolumeBinding.is_schedulable_after_csi_driver_change
    assert hint(inline, driver(True), driver(False)) == QueueingHint.QUEUE
    assert hint(inline, driver(False), driver(True)) == QueueingHint.SKIP
    assert hint(inline, driver(True), driver(True)) == QueueingHint.SKIP
    assert hint(inline, driver(True, "other"), driver(False, "other")) == QueueingHint.SKIP
    assert hint(claimed, driver(True), driver(False)) == QueueingHint.SKIP
    with pytest.raises(TypeError):
        hint(inline, None, driver(False))
