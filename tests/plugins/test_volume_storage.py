"""The storage objects (``api.storage``): parsing with the API server's defaulting, one clear
InputError per bad field, the DefaultStorageClass admission, scenarios keeping them typed, and
the index the plugins read them through."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.api.storage import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    controller_bind,
    parse_csi_node,
    parse_persistent_volume,
    parse_persistent_volume_claim,
    parse_storage_class,
    provision_volume,
    pvc_storage_class,
    replace_storage_object,
    storage_index,
)
from kubesched.errors import InputError

PV = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
      "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
               "local": {"path": "/mnt"}}}
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c1"},
       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def with_spec(base: dict, **spec) -> dict:
    return {**base, "spec": {**base["spec"], **spec}}


def test_pv_defaults() -> None:
    pv = parse_persistent_volume(PV)
    assert pv.spec.capacity == Fraction(10 * 2**30)
    assert pv.spec.volume_mode == "Filesystem"
    assert pv.spec.reclaim_policy == "Retain"
    assert pv.status.phase == "Pending"
    assert pv.spec.storage_class_name == ""
    assert pv.spec.source_kind == "local"
    assert pv.spec.node_affinity is None and pv.spec.claim_ref is None
    rbd = parse_persistent_volume({**PV, "spec": {
        "capacity": {"storage": "1"}, "accessModes": ["ReadOnlyMany"],
        "rbd": {"monitors": ["m"], "image": "i"}}})
    assert rbd.spec.source["pool"] == "rbd"


def test_pv_fields() -> None:
    pv = parse_persistent_volume(with_spec(
        PV, storageClassName="fast", volumeMode="Block",
        persistentVolumeReclaimPolicy="Delete",
        claimRef={"namespace": "ns", "name": "c", "uid": "u"},
        nodeAffinity={"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a"]}]}]}}))
    assert pv.spec.claim_ref.name == "c" and pv.spec.claim_ref.uid == "u"
    assert pv.spec.node_affinity[0].match_expressions[0].values == ("a",)
    assert (pv.spec.volume_mode, pv.spec.reclaim_policy) == ("Block", "Delete")
    csi = parse_persistent_volume({**PV, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "csi": {"driver": "d", "volumeHandle": "h"}}})
    assert (csi.spec.csi_driver, csi.spec.csi_volume_handle) == ("d", "h")


BAD_PVS = [
    ({"capacity": {}}, "spec.capacity.storage", "is required"),
    ({"capacity": {"storage": "ten"}}, "spec.capacity.storage", "invalid quantity"),
    ({"accessModes": []}, "spec.accessModes", "at least 1 access mode is required"),
    ({"accessModes": ["ReadWriteSometimes"]}, "spec.accessModes[0]", "must be one of"),
    ({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]}, "spec.accessModes",
     "may not use ReadWriteOncePod with other access modes"),
    ({"volumeMode": "Raw"}, "spec.volumeMode", "must be one of"),
    ({"persistentVolumeReclaimPolicy": "Keep"}, "spec.persistentVolumeReclaimPolicy",
     "must be one of"),
    ({"local": None}, "spec", "must specify a volume type"),
    ({"nfs": {"server": "s", "path": "/"}}, "spec.local", "may not specify more than 1 volume"),
    ({"local": None, "csi": {"driver": "d"}}, "spec.csi.volumeHandle", "is required"),
    ({"claimRef": {"namespace": "x"}}, "spec.claimRef.name", "is required"),
    ({"nodeAffinity": {"required": {"nodeSelectorTerms": []}}},
     "spec.nodeAffinity.required.nodeSelectorTerms", "at least one node selector term"),
    ({"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "k", "operator": "Near", "values": ["a"]}]}]}}},
     "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
     "must be one of"),
]


@pytest.mark.parametrize(("spec", "field", "msg"), BAD_PVS, ids=[b[1] for b in BAD_PVS])
def test_bad_pv(spec, field, msg) -> None:
    with pytest.raises(InputError) as e:
        parse_persistent_volume(with_spec(PV, **spec), source="f.yaml")
    assert e.value.field == field
    assert msg in e.value.message
    assert e.value.obj == "PersistentVolume pv1"
    assert e.value.file == "f.yaml"


def test_bad_phase() -> None:
    with pytest.raises(InputError) as e:
        parse_persistent_volume({**PV, "status": {"phase": "Happy"}})
    assert e.value.field == "status.phase"


def test_pvc_defaults_and_fields() -> None:
    pvc = parse_persistent_volume_claim(PVC)
    assert pvc.metadata.namespace == "default"
    assert pvc.spec.storage_class_name is None
    assert pvc.spec.volume_mode == "Filesystem"
    assert pvc.status.phase == "Pending"
    assert pvc.spec.request == Fraction(2**30)
    assert pvc_storage_class(pvc) == ""
    full = parse_persistent_volume_claim(with_spec(
        PVC, storageClassName="", volumeName="pv1",
        selector={"matchLabels": {"speed": "fast"}}))
    assert full.spec.storage_class_name == ""
    assert full.spec.selector.match_labels == (("speed", "fast"),)
    beta = parse_persistent_volume_claim({**PVC, "metadata": {
        "name": "c", "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}}})
    assert pvc_storage_class(beta) == "old"


BAD_PVCS = [
    ({"accessModes": None}, "spec.accessModes", "at least 1 access mode"),
    ({"resources": {}}, "spec.resources.requests.storage", "is required"),
    ({"resources": {"requests": {"storage": "-1Gi"}}}, "spec.resources.requests.storage",
     "greater than or equal to 0"),
    ({"volumeMode": "block"}, "spec.volumeMode", "must be one of"),
    ({"selector": {"matchExpressions": [{"key": "k", "operator": "In"}]}},
     "spec.selector.matchExpressions[0].values", "must be specified"),
]


@pytest.mark.parametrize(("spec", "field", "msg"), BAD_PVCS, ids=[b[1] for b in BAD_PVCS])
def test_bad_pvc(spec, field, msg) -> None:
    with pytest.raises(InputError) as e:
        parse_persistent_volume_claim(with_spec(PVC, **spec))
    assert e.value.field == field
    assert msg in e.value.message
    assert e.value.obj == "PersistentVolumeClaim default/c1"


def test_storage_class() -> None:
    sc = parse_storage_class({"metadata": {"name": "s"}, "provisioner": "p"})
    assert (sc.volume_binding_mode, sc.reclaim_policy) == ("Immediate", "Delete")
    sc = parse_storage_class({"metadata": {"name": "s"}, "provisioner": "p",
                              "volumeBindingMode": "WaitForFirstConsumer",
                              "allowedTopologies": [{"matchLabelExpressions": [
                                  {"key": "zone", "values": ["a", "b"]}]}]})
    assert sc.allowed_topologies[0].match_label_expressions[0].values == ("a", "b")
    for bad, field in (({"provisioner": ""}, "provisioner"),
                       ({"provisioner": "p", "volumeBindingMode": "Later"},
                        "volumeBindingMode"),
                       ({"provisioner": "p", "reclaimPolicy": "Recycle"}, "reclaimPolicy"),
                       ({"provisioner": "p", "allowedTopologies": [{"matchLabelExpressions": [
                           {"key": "zone", "values": []}]}]},
                        "allowedTopologies[0].matchLabelExpressions[0].values")):
        with pytest.raises(InputError) as e:
            parse_storage_class({"metadata": {"name": "s"}, **bad})
        assert e.value.field == field
        assert e.value.obj == "StorageClass s"


def test_csi_node() -> None:
    cn = parse_csi_node({"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "d", "nodeID": "n1", "topologyKeys": ["zone"], "allocatable": {"count": 3}},
        {"name": "e", "nodeID": "n1"}]}})
    assert [(d.name, d.allocatable_count) for d in cn.drivers] == [("d", 3), ("e", None)]
    for bad, field in (([{"nodeID": "n1"}], "spec.drivers[0].name"),
                       ([{"name": "d"}], "spec.drivers[0].nodeID"),
                       ([{"name": "d", "nodeID": "x", "allocatable": {"count": -1}}],
                        "spec.drivers[0].allocatable.count"),
                       ([{"name": "d", "nodeID": "x", "allocatable": {"count": "3"}}],
                        "spec.drivers[0].allocatable.count"),
                       ([{"name": "d", "nodeID": "x"}, {"name": "d", "nodeID": "x"}],
                        "spec.drivers[1].name")):
        with pytest.raises(InputError) as e:
            parse_csi_node({"metadata": {"name": "n1"}, "spec": {"drivers": bad}})
        assert e.value.field == field


SCENARIO = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: old-default, annotations: {storageclass.kubernetes.io/is-default-class: "true"},
  creationTimestamp: "2024-01-01T00:00:00Z"}
provisioner: p
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: new-default, annotations: {storageclass.kubernetes.io/is-default-class: "true"},
  creationTimestamp: "2025-01-01T00:00:00Z"}
provisioner: p
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: no-class, namespace: team}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: empty-class, namespace: team}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", resources: {requests: {storage: 1Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: []}
"""


def test_scenario_keeps_storage_typed_with_default_class() -> None:
    sc = load_scenario_text(SCENARIO, "s.yaml")
    assert all(isinstance(o, StorageClass) for o in sc.objects["StorageClass"])
    assert all(isinstance(o, CSINode) for o in sc.objects["CSINode"])
    claims = {c.name: c for c in sc.objects["PersistentVolumeClaim"]}
    assert all(isinstance(c, PersistentVolumeClaim) for c in claims.values())
    assert claims["no-class"].spec.storage_class_name == "new-default"  # the newest default
    assert claims["empty-class"].spec.storage_class_name == ""  # explicitly no class
    assert "team" in sc.namespaces
    assert sc.objects["PersistentVolume"] == []


def test_scenario_bad_storage_object_names_file_object_field() -> None:
    with pytest.raises(InputError) as e:
        load_scenario_text(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: bad}\n"
            "spec: {capacity: {storage: 1Gi}, accessModes: [RWO], local: {path: /}}\n", "x.yaml")
    assert str(e.value) == ("x.yaml: PersistentVolume bad: field spec.accessModes[0]: must be "
                            "one of ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod "
                            "(value: 'RWO')")
    with pytest.raises(InputError, match="duplicate PersistentVolume"):
        load_scenario_text("\n---\n".join([
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: a}\n"
            "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], local: {path: /}}"]
            * 2))


def test_index_and_replace() -> None:
    sc = load_scenario_text(SCENARIO)
    objs = sc.objects
    idx = storage_index(objs)
    assert idx.pvc("team", "no-class") is not None and idx.pvc("default", "no-class") is None
    assert storage_index(objs) is idx  # cached while unchanged
    pv = parse_persistent_volume({**PV, "spec": {**PV["spec"], "storageClassName": "new-default"}})
    assert replace_storage_object(objs, pv) is None  # added
    idx2 = storage_index(objs)
    assert idx2 is not idx and idx2.pv("pv1") is pv
    assert [p.name for p in idx2.pvs_by_class["new-default"]] == ["pv1"]
    pv2 = parse_persistent_volume({**PV, "spec": {**PV["spec"], "storageClassName": "x"}})
    assert replace_storage_object(objs, pv2) is pv
    assert storage_index(objs).pv("pv1") is pv2
    assert "new-default" not in storage_index(objs).pvs_by_class


def test_controller_bind_and_provision() -> None:
    pv = parse_persistent_volume(PV)
    pvc = parse_persistent_volume_claim(PVC)
    new_pv, new_pvc = controller_bind(pv, pvc)
    assert new_pv.spec.claim_ref.uid == pvc.metadata.uid and new_pv.status.phase == "Bound"
    assert new_pvc.spec.volume_name == "pv1" and new_pvc.status.phase == "Bound"
    assert new_pvc.metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert pvc.spec.volume_name == "" and pv.spec.claim_ref is None  # copies
    sc = parse_storage_class({"metadata": {"name": "s"}, "provisioner": "d"})
    cn = parse_csi_node({"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "d", "nodeID": "n1", "topologyKeys": ["zone", "rack"]}]}})
    made: PersistentVolume = provision_volume(pvc, sc, {"zone": "a"}, cn)
    assert made.metadata.name == "pvc-default-c1"
    assert made.spec.capacity == pvc.spec.request
    assert made.spec.node_affinity[0].match_expressions[0].key == "zone"
    assert len(made.spec.node_affinity[0].match_expressions) == 1  # no rack label on the node
    assert provision_volume(pvc, sc, {"zone": "a"}, None).spec.node_affinity is None
