"""The handle's typed listers: each returns the stored objects of its kind, typed as the
scenario loader stores them, empty when there are none, and follows the backend's store."""

from __future__ import annotations

import inspect

import pytest

from kubesched.api.dra.types import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubesched.api.policy import PodDisruptionBudget
from kubesched.api.scenario import load_scenario_text
from kubesched.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.api.types import GenericObject, ObjectMeta
from kubesched.framework import Handle
from kubesched.framework.listers import Listers

# lister -> (the kind it lists, the type the loader stores it as)
EXPECTED: dict[str, tuple[str, type]] = {
    "services": ("Service", GenericObject),
    "replica_sets": ("ReplicaSet", GenericObject),
    "stateful_sets": ("StatefulSet", GenericObject),
    "replication_controllers": ("ReplicationController", GenericObject),
    "pod_disruption_budgets": ("PodDisruptionBudget", PodDisruptionBudget),
    "persistent_volumes": ("PersistentVolume", PersistentVolume),
    "persistent_volume_claims": ("PersistentVolumeClaim", PersistentVolumeClaim),
    "storage_classes": ("StorageClass", StorageClass),
    "csi_nodes": ("CSINode", CSINode),
    "csi_drivers": ("CSIDriver", CSIDriver),
    "csi_storage_capacities": ("CSIStorageCapacity", CSIStorageCapacity),
    "device_classes": ("DeviceClass", DeviceClass),
    "resource_slices": ("ResourceSlice", ResourceSlice),
    "resource_claims": ("ResourceClaim", ResourceClaim),
    "resource_claim_templates": ("ResourceClaimTemplate", ResourceClaimTemplate),
    "device_taint_rules": ("DeviceTaintRule", DeviceTaintRule),
    "pod_groups": ("PodGroup", GenericObject),
    "workloads": ("Workload", GenericObject),
}

SCENARIO = """
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {selector: {app: a}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec: {replicas: 1, selector: {matchLabels: {app: a}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ss}
spec: {replicas: 1, selector: {matchLabels: {app: a}}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec: {replicas: 1, selector: {app: a}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb}
spec: {minAvailable: 1, selector: {matchLabels: {app: a}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: fast,
       csi: {driver: csi.example.com, volumeHandle: h}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc}
spec: {accessModes: [ReadWriteOnce], storageClassName: fast,
       resources: {requests: {storage: 1Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: csi.example.com, nodeID: n1}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap, namespace: kube-system}
storageClassName: fast
capacity: 10Gi
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, nodeName: n1, pool: {name: p, generation: 1, resourceSliceCount: 1},
       devices: [{name: g0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}}
---
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: dtr}
spec: {deviceSelector: {driver: d}, taint: {key: k, effect: NoSchedule}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 2}
---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: job}
spec:
  podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]
"""


def test_every_lister_is_covered() -> None:
    public = [n for n, _ in inspect.getmembers(Listers, inspect.isfunction)
              if not n.startswith("_")]
    assert sorted(public) == sorted(EXPECTED)


@pytest.fixture(scope="module")
def handle() -> Handle:
    sc = load_scenario_text(SCENARIO, "<listers>", release="1.35", validate=False)
    h = Handle()
    h.objects = sc.objects
    return h


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_lister_returns_the_stored_typed_objects(handle: Handle, method: str) -> None:
    kind, typ = EXPECTED[method]
    got = getattr(handle.listers, method)()
    assert got is handle.objects[kind]  # the stored list itself: no copy per call
    assert len(got) == 1
    assert all(isinstance(o, typ) for o in got)
    if typ is GenericObject:
        assert got[0].kind == kind


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_lister_is_empty_without_objects(method: str) -> None:
    kind, _ = EXPECTED[method]
    assert list(getattr(Handle().listers, method)()) == []
    assert list(getattr(Handle(objects={kind: []}).listers, method)()) == []


def test_listers_follow_the_backends_store() -> None:
    h = Handle()
    svc = GenericObject("Service", ObjectMeta(name="a", namespace="default"), {})
    h.objects["Service"] = [svc]  # a new list under the kind
    assert list(h.listers.services()) == [svc]
    other = GenericObject("Service", ObjectMeta(name="b", namespace="default"), {})
    h.objects = {"Service": [other]}  # the whole mapping replaced
    assert list(h.listers.services()) == [other]
    h.objects["Service"].append(svc)  # changed in place
    assert list(h.listers.services()) == [other, svc]
    assert list(h.listers.replica_sets()) == []


def test_raw_pdbs_are_parsed_and_bad_ones_skipped() -> None:
    raw = {"metadata": {"name": "db"}, "spec": {"selector": {"matchLabels": {"app": "a"}}},
           "status": {"disruptionsAllowed": 4}}
    h = Handle(objects={"PodDisruptionBudget": [
        GenericObject("PodDisruptionBudget", ObjectMeta(name="db", namespace="default"), raw),
        GenericObject("PodDisruptionBudget", ObjectMeta(name="bad", namespace="default"),
                      {"metadata": {}})]})
    (pdb,) = h.listers.pod_disruption_budgets()
    assert isinstance(pdb, PodDisruptionBudget)
    assert (pdb.name, pdb.status.disruptions_allowed) == ("db", 4)


def test_plugins_and_preemption_read_objects_through_the_listers() -> None:
    """No plugin or preemption module looks a kind up in ``handle.objects`` by its name
    (the mapping is passed whole only to the index builders)."""
    import re
    from pathlib import Path

    import kubesched

    by_name = re.compile(
        r"""objects(\(\))?\s*(\.get\(|\[)\s*(["']|[A-Z_]+_KIND\b)|_objects\(\s*["']""")
    root = Path(kubesched.__file__).parent
    offending = [f"{path.relative_to(root)}:{i}"
                 for pkg in ("plugins", "preemption")
                 for path in sorted((root / pkg).rglob("*.py"))
                 for i, line in enumerate(path.read_text().splitlines(), 1)
                 if by_name.search(line)]
    assert offending == []
