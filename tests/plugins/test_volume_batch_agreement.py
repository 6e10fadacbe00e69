"""The batch and per-node forms of the volume plugins agree: on every golden volume scenario
(``../shared/golden/explain-volumes``) and on randomly generated clusters of local, zonal and
CSI volumes, bound / unbound / pre-bound claims of WaitForFirstConsumer and Immediate classes,
selected-node annotations, RWOP claims, inline disks, and the CSI driver's storage capacity
objects (capacity check, VolumeBinding's Score) and missing-driver opt-in."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _volume_util import (
    filter_all,
    make_csinode,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_sc,
    objects,
    prefilter,
)

from kubesched.api.storage import CSIDriver, CSIStorageCapacity, ObjectReference
from kubesched.api.types import ZONE_LABEL, LabelSelector, ObjectMeta
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.nodevolumelimits import NodeVolumeLimits
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumerestrictions import VolumeRestrictions
from kubesched.plugins.volumezone import VolumeZone
from kubesched.testing import snapshot_from_nodes
from shared_files import golden_cases, load_golden

PLUGINS = (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone)
CASES = golden_cases("explain-volumes")


def _check(objs: dict[str, list[Any]], snap: Snapshot, pod) -> int:
    checked = 0
    for cls in PLUGINS:
        pl = cls(None, Handle(snapshot=snap, objects=objs))
        state, pre = prefilter(pl, pod, snap)
        if pre.is_success():
            statuses = filter_all(pl, state, pod, snap)  # asserts the forms agree
            checked += 1
            # and the batch form alone, with no cache warmed by the per-node form
            fresh = cls(None, Handle(snapshot=snap, objects=objs))
            state2, _ = prefilter(fresh, pod, snap)
            out = fresh.filter_batch(state2, pod, snap, np.arange(snap.num_nodes))
            for i, st in enumerate(statuses):
                got = out.status_at(i, cls.name)
                assert (got.code, got.reasons) == (st.code, st.reasons)
            if cls is VolumeBinding:
                _check_reserve_volumes(pl, state, pod, snap, statuses)
                _check_scores(pl, state, fresh, state2, pod, snap, statuses)
    return checked


def _names(pv) -> tuple:
    b = [(x.pvc.name, x.pv.name) for x in pv.static_bindings] if pv.static_bindings else None
    d = ([(c.pvc.name, c.node_capacity.name if c.node_capacity else None)
          for c in pv.dynamic_provisions] if pv.dynamic_provisions else None)
    return b, d


def _check_scores(pl, state, fresh, state2, pod, snap, statuses) -> None:
    """Score on the feasible nodes: per node after the per-node Filter, and in batch form
    after the batch-only Filter, agree."""
    feasible = np.array([i for i, st in enumerate(statuses) if st.is_success()],
                        dtype=np.int64)
    if not len(feasible) or pl.pre_score(state, pod, []) is not None:
        return
    per_node = [pl.score(state, pod, snap.node_infos[i]) for i in feasible.tolist()]
    assert fresh.score_batch(state2, pod, snap, feasible).tolist() == per_node


def _check_reserve_volumes(pl, state, pod, snap, statuses) -> None:
    """What Reserve takes from the batch answer is what the per-node form builds."""
    s = state.read("VolumeBinding")
    if s.claims.batch is None:  # in-tree volumes: decided per node
        return
    for ni, st in zip(snap.node_infos, statuses, strict=True):
        if not st.is_success():
            continue
        per_node, reasons = pl.binder.find_pod_volumes(pod, s.claims, ni.node)
        assert reasons == ()
        row = snap.table.index[ni.name]
        assert _names(s.claims.batch.pod_volumes(row)) == _names(per_node), ni.name


@pytest.mark.skipif(not CASES, reason="golden scenarios not available")
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_scenarios(path: Path) -> None:
    sc = load_golden(path)
    running = [p for p in sc.pods if p.spec.node_name]
    target = next(p for p in sc.pods if p.name == "target")
    snap = snapshot_from_nodes(sc.nodes, running)
    _check(sc.objects, snap, target)
    for p in running[:10]:  # the running pods as if they were pending
        q = make_pod(p.name + "-again", volumes=[
            {"name": v.name, **({"persistentVolumeClaim": {"claimName": v.pvc_claim_name}}
                                if v.pvc_claim_name else v.source or {})}
            for v in p.spec.volumes])
        _check(sc.objects, snap, q)


ZONES = ("za", "zb", "zc")
DRIVER = "disk.csi.example.com"


def random_cluster(rng: random.Random) -> tuple[dict[str, list[Any]], Snapshot, list]:
    n_nodes = rng.randint(1, 12)
    nodes = []
    for i in range(n_nodes):
        labels = {}
        if rng.random() < 0.85:
            labels[ZONE_LABEL] = rng.choice(ZONES)
        if rng.random() < 0.3:
            labels["disk"] = rng.choice(("ssd", "hdd"))
        nodes.append(make_node(f"n{i}", labels))
    names = [n.name for n in nodes] + ["gone"]
    classes = [make_sc("local"), make_sc("csi", provisioner=DRIVER),
               make_sc("csi-za", provisioner=DRIVER, allowed={ZONE_LABEL: ["za"]}),
               make_sc("imm", mode="Immediate", provisioner=DRIVER),
               make_sc("ebs", provisioner="kubernetes.io/aws-ebs")]
    claims = []
    pvs = []
    for i in range(rng.randint(0, 14)):
        cls = rng.choice(("local", "local", "csi", "csi-za", "imm", "ebs"))
        mode = rng.choice(("ReadWriteOnce", "ReadWriteOnce", "ReadWriteMany",
                           "ReadWriteOncePod"))
        state = rng.choice(("unbound", "unbound", "bound", "bound", "prebound", "selected"))
        request = rng.choice(("1Gi", "5Gi", "10Gi", "50Gi"))
        sel = LabelSelector(match_labels=(("speed", "fast"),)) if rng.random() < 0.15 else None
        claims.append(make_pvc(
            f"c{i}", cls, request, access=(mode,), selector=sel,
            volume_name=f"pv{rng.randrange(16)}" if state in ("bound", "prebound") else "",
            bound=state == "bound",
            selected_node=rng.choice(names) if state == "selected" else None))
    for i in range(rng.randint(0, 16)):
        cls = rng.choice(("local", "local", "csi", "csi-za", "ebs"))
        aff = None
        r = rng.random()
        if r < 0.5:
            aff = {"kubernetes.io/hostname": [rng.choice(names)]}
        elif r < 0.8:
            aff = {ZONE_LABEL: rng.sample(ZONES, rng.randint(1, 2))}
        claim_ref = None
        if claims and rng.random() < 0.3:
            c = rng.choice(claims)
            claim_ref = ObjectReference(name=c.name, namespace=c.namespace,
                                        uid=c.metadata.uid if rng.random() < 0.5 else "")
        labels = {}
        if rng.random() < 0.3:
            labels[ZONE_LABEL] = "__".join(rng.sample(ZONES, rng.randint(1, 2)))
        if rng.random() < 0.3:
            labels["speed"] = rng.choice(("fast", "slow"))
        pvs.append(make_pv(
            f"pv{i}", cls, rng.choice(("1Gi", "5Gi", "10Gi", "50Gi", "100Gi")),
            phase=rng.choice(("Available", "Available", "Available", "Bound", "Released")),
            node_affinity=aff, claim_ref=claim_ref, labels=labels,
            access=tuple(rng.sample(("ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod"),
                                    rng.randint(1, 2))),
            volume_mode=rng.choice(("Filesystem", "Filesystem", "Block")),
            source_kind={"local": "local", "ebs": "awsElasticBlockStore"}.get(cls, "csi"),
            source={"local": None, "ebs": {"volumeID": f"vol-{i}"}}.get(
                cls, {"driver": DRIVER, "volumeHandle": f"h{i}"})))
    csinodes = [make_csinode(n.name, {DRIVER: rng.choice((None, 1, 2, 4)),
                                      "ebs.csi.aws.com": rng.choice((None, 1, 3))},
                             topology_keys=(ZONE_LABEL,),
                             migrated=rng.choice((None, "kubernetes.io/aws-ebs")))
                for n in nodes if rng.random() < 0.7]
    disks = [{"name": "gce", "gcePersistentDisk": {"pdName": rng.choice("xy")}},
             {"name": "ebs", "awsElasticBlockStore": {"volumeID": rng.choice("xy")}}]
    running = []
    for i in range(rng.randint(0, 10)):
        picked = rng.sample(claims, min(len(claims), rng.randint(0, 2)))
        vols = [rng.choice(disks)] if rng.random() < 0.2 else []
        running.append(make_pod(f"r{i}", pvcs=tuple(c.name for c in picked), volumes=vols,
                                node=rng.choice(nodes).name))
    storage: list[Any] = []
    if rng.random() < 0.7:
        storage.append(CSIDriver(metadata=ObjectMeta(name=DRIVER),
                                 storage_capacity=rng.random() < 0.8,
                                 prevent_pod_scheduling_if_missing=rng.random() < 0.3))
    for i in range(rng.randint(0, 5)):
        zones = rng.sample(ZONES, rng.randint(0, 2))
        topology = (None if rng.random() < 0.1 else LabelSelector(match_labels=tuple(
            (ZONE_LABEL, z) for z in zones[:1])))
        storage.append(CSIStorageCapacity(
            metadata=ObjectMeta(name=f"cap{i}", namespace="kube-system"),
            storage_class_name=rng.choice(("csi", "csi", "csi-za", "local")),
            node_topology=topology,
            capacity=rng.choice((None, 0, 2 << 30, 20 << 30, 200 << 30)),
            maximum_volume_size=rng.choice((None, None, 8 << 30))))
    objs = objects(*classes, *claims, *pvs, *csinodes, *storage)
    return objs, snapshot_from_nodes(nodes, running), claims


@pytest.mark.parametrize("seed", range(300))
def test_random_clusters(seed: int) -> None:
    rng = random.Random(seed)
    objs, snap, claims = random_cluster(rng)
    for _ in range(3):
        names = [c.name for c in rng.sample(claims, min(len(claims), rng.randint(1, 3)))]
        if rng.random() < 0.1:
            names.append("missing")
        vols = ([rng.choice(({"name": "gce", "gcePersistentDisk": {"pdName": "x"}},
                             {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-9"}}))]
                if rng.random() < 0.2 else [])
        _check(objs, snap, make_pod(pvcs=tuple(names), volumes=vols))
