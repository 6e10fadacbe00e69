"""CSIDriver and CSIStorageCapacity in scenarios, through the CLI: the objects load (bad ones
are bad input naming object, field and value), VolumeBinding's capacity check and Score and
NodeVolumeLimits' missing-driver check decide per release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import main

NODES = """
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {zone: a}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {zone: b}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: c1, labels: {zone: c}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
"""


def capacity(zone: str, size: str) -> str:
    return f"""
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {{name: cap-{zone}, namespace: kube-system}}
storageClassName: fast
nodeTopology: {{matchLabels: {{zone: {zone}}}}}
capacity: {size}
"""


def claim_pod(name: str, size: str) -> str:
    return f"""
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {{requests: {{storage: {size}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: c, image: x}}]
  volumes: [{{name: d, persistentVolumeClaim: {{claimName: {name}}}}}]
"""


DRIVER = """
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {storageCapacity: true}
"""


def write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return str(p)


def explain(path: str, pod: str, *flags: str) -> dict:
    res = CliRunner().invoke(main, ["explain", path, "--pod", pod, "-o", "json", *flags])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_capacity_filter_and_score(tmp_path: Path, version: str) -> None:
    """10Gi, 100Gi and 1Gi free in zones a, b, c; a 5Gi claim: zone c is short of storage in
    every release (the capacity check is GA); only 1.37 scores the emptier zone b higher."""
    path = write(tmp_path, NODES + DRIVER + capacity("a", "10Gi") + capacity("b", "100Gi")
                 + capacity("c", "1Gi") + claim_pod("p", "5Gi"))
    out = explain(path, "default/p", "--kubernetes-version", version)
    nodes = {n["node"]: n for n in out["nodes"]}
    assert nodes["c1"]["feasible"] is False
    assert nodes["c1"]["plugin"] == "VolumeBinding"
    assert nodes["c1"]["reasons"] == ["node(s) did not have enough free storage"]
    assert out["message"] is None
    if version == "1.37":
        assert nodes["a1"]["scores"]["VolumeBinding"] == 50
        assert nodes["b1"]["scores"]["VolumeBinding"] == 95
        assert out["selected"] == ["b1"]
    else:
        assert "VolumeBinding" not in nodes["a1"]["scores"]
        assert out["selected"] == ["a1", "b1"]


def test_no_capacity_anywhere_is_the_fit_error(tmp_path: Path) -> None:
    path = write(tmp_path, NODES + DRIVER + capacity("a", "1Gi") + claim_pod("p", "5Gi"))
    res = CliRunner().invoke(main, ["simulate", path, "--placements", "-", "--quiet"])
    assert res.exit_code == 0, res.output
    line = json.loads(res.stdout.splitlines()[0])
    assert line["node"] is None
    assert line["message"].startswith(
        "0/3 nodes are available: 3 node(s) did not have enough free storage. ")


def test_driver_without_storage_capacity_is_not_checked(tmp_path: Path) -> None:
    path = write(tmp_path, NODES + DRIVER.replace("true", "false") + claim_pod("p", "5Gi"))
    out = explain(path, "default/p")
    assert all(n["feasible"] for n in out["nodes"])
    assert {n["scores"]["VolumeBinding"] for n in out["nodes"]} == {0}  # no capacity known


CSINODE = """
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: a1}
spec:
  drivers: [{name: csi.example.com, nodeID: a1}]
"""


@pytest.mark.parametrize(("version", "gates", "rejected"), [
    ("1.37", [], True),
    ("1.37", ["--feature-gates", "VolumeLimitScaling=false"], False),
    ("1.36", [], False),
    ("1.36", ["--feature-gates", "VolumeLimitScaling=true"], True),
])
def test_missing_driver(tmp_path: Path, version: str, gates: list[str], rejected: bool) -> None:
    driver = DRIVER.replace("{storageCapacity: true}", "{preventPodSchedulingIfMissing: true}")
    path = write(tmp_path, NODES + driver + CSINODE + claim_pod("p", "5Gi"))
    out = explain(path, "default/p", "--kubernetes-version", version, *gates)
    nodes = {n["node"]: n for n in out["nodes"]}
    assert nodes["a1"]["feasible"] is True
    for name in ("b1", "c1"):
        if rejected:
            assert nodes[name]["plugin"] == "NodeVolumeLimits"
            assert nodes[name]["reasons"] == [
                "csi.example.com CSI driver is not installed on the node"]
        else:
            assert nodes[name]["feasible"] is True


def test_prevent_field_is_unknown_to_1_35(tmp_path: Path) -> None:
    """The field came with 1.36's API: a 1.35 API server does not know it (strict: bad
    input naming the field)."""
    driver = DRIVER.replace("{storageCapacity: true}", "{preventPodSchedulingIfMissing: true}")
    path = write(tmp_path, NODES + driver + claim_pod("p", "5Gi"))
    res = CliRunner().invoke(main, ["simulate", path, "--quiet", "--strict",
                                    "--kubernetes-version", "1.35"])
    assert res.exit_code == 2
    assert "spec.preventPodSchedulingIfMissing" in res.stderr


@pytest.mark.parametrize(("doc", "words"), [
    (capacity("a", "lots"), ["CSIStorageCapacity", "kube-system/cap-a", "capacity", "lots"]),
    (capacity("a", "-1Gi"), ["CSIStorageCapacity", "capacity", "-1Gi",
                             "must be greater than or equal to 0"]),
    (capacity("a", "1Gi").replace("storageClassName: fast\n", ""),
     ["CSIStorageCapacity", "storageClassName", "Required"]),
    (DRIVER.replace("true", '"yes"'), ["CSIDriver", "csi.example.com", "spec.storageCapacity"]),
])
def test_bad_objects_are_bad_input(tmp_path: Path, doc: str, words: list[str]) -> None:
    path = write(tmp_path, NODES + doc)
    res = CliRunner().invoke(main, ["simulate", path, "--quiet"])
    assert res.exit_code == 2, res.output
    for w in words:
        assert w.lower() in res.stderr.lower(), res.stderr
