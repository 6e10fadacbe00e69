"""The real kube-scheduler v1.36.2's banked verdicts (``tests/kube/oracle/*.json``, made by
``bank_oracle.py`` on a real kube-apiserver) replayed through ``kubesched simulate
--kubernetes-version 1.36``: every pending pod of every case on the same node, and a pod
kube-scheduler could not place with the same FailedScheduling message. No server needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kube_oracle import with_arrivals
from oracle_cases import BANK, SCHEDULER, banked_scenario


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(BANK.glob("*.json")):
        bank = json.loads(path.read_text())
        assert bank["scheduler"] == SCHEDULER, path
        out += [(f"{bank['family']}/{c['case']}", c) for c in bank["cases"]]
    return out


CASES = _cases()

def simulate(objects: list[dict[str, Any]], tmp: Path) -> dict[str, dict[str, Any]]:
    from click.testing import CliRunner

    from kubesched.cli import main

    path = tmp / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": with_arrivals(objects)}))
    placements = tmp / "placements.jsonl"
    res = CliRunner().invoke(main, ["simulate", str(path), "--kubernetes-version", "1.36",
                                    "--placements", str(placements), "--quiet"])
    assert res.exit_code == 0, res.output
    return {r["pod"]: r for r in map(json.loads, placements.read_text().splitlines())}


def test_the_bank_is_a_few_hundred_cases_of_every_family() -> None:
    families = {name.split("/")[0] for name, _ in CASES}
    assert families == {"explain", "explain-config", "explain-spread", "explain-volumes",
                        "sequence", "dra"}
    assert len(CASES) >= 200
    pods = [v for _, c in CASES for v in c["verdicts"]]
    assert any(v["node"] is None for v in pods) and any(v["node"] for v in pods)


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[n for n, _ in CASES])
def test_simulate_agrees_with_kube_scheduler(case: dict[str, Any], tmp_path: Path) -> None:
    objects = banked_scenario(case)
    if objects is None:
        pytest.skip("../shared/golden is absent")
    ours = simulate(objects, tmp_path)
    for want in case["verdicts"]:
        got = ours.get(want["pod"])
        assert got is not None, f"{want['pod']}: never scheduled by kubesched"
        assert got["node"] == want["node"], (want, got)
        if want["node"] is None:
            assert got["message"] == want["message"], (want, got)
