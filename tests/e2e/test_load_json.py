"""Scenarios as JSON (issue 22): a ``kubectl get -o json`` dump is read by orjson and loads
to the same scenario as its YAML; what orjson refuses is read as YAML, as before, so the
messages about a malformed file are unchanged; ``simulate --state-out PATH.json`` writes a
JSON List that reads back to the same run as the YAML state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.api.jsonlist import json_list, wants_json
from kubesched.api.scenario import load_scenario
from kubesched.backends.sim.cluster import SimCluster
from kubesched.cli import main

DUMP = Path(__file__).parent.parent / "dumps" / "load-kubectl.json"


def _placements(paths: list[str]) -> list[dict[str, object]]:
    sim = SimCluster(load_scenario(paths, strict=True), check=True)
    return [r.as_json() for r in sim.run().placements]


def test_a_kubectl_json_dump_loads_as_its_yaml(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    as_yaml = tmp_path / "dump.yaml"
    as_yaml.write_text(yaml.safe_dump(json.loads(DUMP.read_text()), sort_keys=False))
    calls: list[int] = []
    import orjson

    real = orjson.loads
    monkeypatch.setattr(orjson, "loads", lambda text: calls.append(1) or real(text))
    from_json = load_scenario([str(DUMP)], strict=True)
    assert calls == [1]  # (read by orjson, not by the YAML parser)
    from_yaml = load_scenario([str(as_yaml)], strict=True)
    assert from_json.nodes == from_yaml.nodes and from_json.pods == from_yaml.pods
    assert from_json.documents == from_yaml.documents
    assert from_json.warnings == from_yaml.warnings == []
    assert len(from_json.pods) == 12 and len(from_json.objects["ReplicaSet"]) == 2
    assert _placements([str(DUMP)]) == _placements([str(as_yaml)])


@pytest.mark.parametrize(("text", "message"), [
    ('{"apiVersion": "v1", "kind": "List", "items": [1, ]}',
     # (YAML's flow style allows the trailing comma JSON refuses)
     "error: bad.json: document 1 items[0] is not a Kubernetes object (a mapping) "
     "(value: 1)\n"),
    ('{"kind": "Node", "apiVersion": "v1",\n  "metadata": {"name": "n"}',
     "error: bad.json:3: malformed YAML: did not find expected ',' or '}'\n"),
    ('{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "x": 1e999}}',
     None),
    ('[{"kind": "Node"}]', "error: bad.json: document 1 is not a Kubernetes object (a "
                           "mapping) (value: [{'kind': 'Node'}])\n"),
])
def test_json_orjson_refuses_is_read_as_yaml(tmp_path: Path, text: str,
                                             message: str | None) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    res = CliRunner().invoke(main, ["simulate", "--quiet", str(path)])
    assert res.exit_code == 2, res.output
    if message is not None:
        assert res.output.replace(f"{tmp_path}/", "") == message


def test_state_out_json_reads_back_as_the_yaml_state(tmp_path: Path) -> None:
    runner = CliRunner()
    for name in ("state.yaml", "state.json"):
        res = runner.invoke(main, ["simulate", "--quiet", str(DUMP), "--state-out",
                                   str(tmp_path / name)])
        assert res.exit_code == 0, res.output
    written = json.loads((tmp_path / "state.json").read_text())
    assert written["kind"] == "List"
    assert written["items"] == list(yaml.safe_load_all((tmp_path / "state.yaml").read_text()))
    assert (_placements([str(tmp_path / "state.json")])
            == _placements([str(tmp_path / "state.yaml")]))


def test_only_a_json_file_name_gets_json() -> None:
    assert wants_json("x.json") and wants_json("X.JSON")
    assert not wants_json("-") and not wants_json("x.yaml") and not wants_json("json")
    assert json.loads(json_list([{"kind": "Node", "b": b"hi"}]))["items"] == [
        {"kind": "Node", "b": "aGk="}]
