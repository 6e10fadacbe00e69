"""StatefulSet volumeClaimTemplates, from a dump taken while a StatefulSet scaled up: the
controller's claims are created before their pods (an existing one is used as it is), bound or
provisioned through VolumeBinding, so pods go where their StorageClass lets the volume be, and
the claims are in ``--state-out``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubesched.cli import main

DUMP = Path(__file__).resolve().parent.parent / "dumps" / "claims-statefulset-zones.yaml"
# eu-west-1a: the only zone gp3-eu-west-1a allows; eu-west-1c: where cache-cache-0's volume is
NODE_A = "ip-10-0-1-11.eu-west-1.compute.internal"
NODE_C = "ip-10-0-3-33.eu-west-1.compute.internal"


def _simulate(tmp_path: Path, *paths: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    placements, state = tmp_path / "p.jsonl", tmp_path / "state.yaml"
    res = CliRunner().invoke(main, ["simulate", *map(str, paths), "--check", "--quiet",
                                    "--placements", str(placements),
                                    "--state-out", str(state)])
    assert res.exit_code == 0, res.output
    lines = [yaml.safe_load(x) for x in placements.read_text().splitlines()]
    return lines, list(yaml.safe_load_all(state.read_text()))


def _claims(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == "PersistentVolumeClaim"}


def test_pods_go_where_their_claims_can_be_and_mount_them(tmp_path: Path) -> None:
    lines, docs = _simulate(tmp_path, DUMP)
    got = {x["pod"]: (x["node"], x["message"]) for x in lines}
    # pg-1's claim can only be provisioned in eu-west-1a (the default class's
    # allowedTopologies): with the emptier nodes of 1b and 1c left out
    assert got["data/pg-1"] == (NODE_A, None)
    # cache-0 mounts the claim left from before, whose volume is in eu-west-1c
    assert got["data/cache-0"] == (NODE_C, None)
    node, message = got["data/pg-2"]
    assert node is None
    assert message.startswith("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't "
                              "find available persistent volumes to bind.")
    pods = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Pod"}
    assert pods["pg-1"]["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-pg-1"}}]
    assert pods["pg-2"]["spec"]["volumes"][0]["persistentVolumeClaim"] == {
        "claimName": "data-pg-2"}
    claims = _claims(docs)
    assert sorted(claims) == ["cache-cache-0", "data-pg-0", "data-pg-1", "data-pg-2"]
    made = claims["data-pg-1"]
    assert made["metadata"]["namespace"] == "data"
    assert made["metadata"]["labels"] == {"app.kubernetes.io/name": "pg"}
    assert "ownerReferences" not in made["metadata"]  # retention policy Retain
    # the default class, as the DefaultStorageClass admission plugin sets it
    assert made["spec"]["storageClassName"] == "gp3-eu-west-1a"
    assert made["spec"]["resources"] == {"requests": {"storage": "20Gi"}}
    assert made["status"]["phase"] == "Bound"
    assert made["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == NODE_A
    assert made["spec"]["volumeName"]
    assert claims["data-pg-2"]["status"]["phase"] == "Pending"
    assert "volumeName" not in claims["data-pg-2"]["spec"]
    # the claim of the dump is used as it is: not made again
    assert claims["cache-cache-0"]["metadata"]["uid"] == "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f"


def test_the_state_reads_back_without_new_claims(tmp_path: Path) -> None:
    _, docs = _simulate(tmp_path, DUMP)
    (tmp_path / "again").mkdir()
    lines, again = _simulate(tmp_path / "again", tmp_path / "state.yaml")
    assert [(x["pod"], x["node"]) for x in lines] == [("data/pg-2", None)]
    assert sorted(_claims(again)) == sorted(_claims(docs))


def test_the_volume_provisioned_for_a_made_claim_is_in_the_state(tmp_path: Path) -> None:
    # data-pg-1 was provisioned during the run (WaitForFirstConsumer, on NODE_A): its
    # volume is written, bound to the claim with the zone it was made in, so a run on the
    # state finds the claim bound to an existing volume
    _, docs = _simulate(tmp_path, DUMP)
    claim = _claims(docs)["data-pg-1"]
    volumes = {d["metadata"]["name"]: d for d in docs if d["kind"] == "PersistentVolume"}
    pv = volumes[claim["spec"]["volumeName"]]
    assert pv["spec"]["claimRef"]["name"] == "data-pg-1"
    assert pv["spec"]["claimRef"]["namespace"] == "data"
    assert pv["spec"]["capacity"] == {"storage": str(20 * 2**30)}
    assert pv["spec"]["storageClassName"] == "gp3-eu-west-1a"
    assert pv["status"]["phase"] == "Bound"
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert [e["values"] for t in terms for e in t["matchExpressions"]] == [["eu-west-1a"]]
    (tmp_path / "again").mkdir()
    _, again = _simulate(tmp_path / "again", tmp_path / "state.yaml")
    assert [d for d in again if d["kind"] == "PersistentVolume"
            and d["metadata"]["name"] == pv["metadata"]["name"]] == [pv]


def test_retention_policy_delete_makes_the_set_the_claims_owner(tmp_path: Path) -> None:
    text = DUMP.read_text().replace("""      whenDeleted: Retain
      whenScaled: Retain
    podManagementPolicy: OrderedReady
    replicas: 3""", """      whenDeleted: Delete
      whenScaled: Retain
    podManagementPolicy: OrderedReady
    replicas: 3""")
    dump = tmp_path / "dump.yaml"
    dump.write_text(text)
    _, docs = _simulate(tmp_path, dump)
    refs = _claims(docs)["data-pg-1"]["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "pg",
                     "uid": "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f70", "controller": True,
                     "blockOwnerDeletion": True}]
    assert "ownerReferences" not in _claims(docs)["data-pg-0"]["metadata"]


def test_a_bad_claim_template_is_bad_input(tmp_path: Path) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(DUMP.read_text().replace("            storage: 5Gi\n        storageClassName",
                                             "            storage: 5Gx\n        storageClassName"))
    res = CliRunner().invoke(main, ["simulate", str(dump), "--quiet"])
    assert res.exit_code == 2
    assert "StatefulSet data/cache" in res.output
    assert "spec.volumeClaimTemplates[0].spec.resources.requests.storage" in res.output
    assert "Traceback" not in res.output


def test_explain_judges_a_created_pod_with_its_claims() -> None:
    # pg-1 is created when the run starts (pg-0 runs): explain judges it with the claim
    # its StatefulSet creates before it, not as a pod whose claim is missing
    res = CliRunner().invoke(main, ["explain", str(DUMP), "--pod", "data/pg-1", "-o", "json"])
    assert res.exit_code == 0, res.output
    out = yaml.safe_load(res.stdout)
    verdicts = {n["node"]: (n["feasible"], n.get("plugin"), n.get("reasons"))
                for n in out["nodes"]}
    assert verdicts == {
        NODE_A: (True, None, None),
        "ip-10-0-2-22.eu-west-1.compute.internal":
            (False, "VolumeBinding", ["node(s) didn't find available persistent volumes to bind"]),
        NODE_C:
            (False, "VolumeBinding", ["node(s) didn't find available persistent volumes to bind"]),
    }
    assert out["selected"] == [NODE_A]
