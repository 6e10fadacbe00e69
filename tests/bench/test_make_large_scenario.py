"""bench/make_large_scenario.py (issue 22's benchmark dumps): at every detail the dump loads
strictly (no unknown field, no warning), holds the nodes and pods asked for, running and
pending, in scheduler_perf's shape, and is the same bytes each time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.api.scenario import load_scenario

SCRIPT = Path(__file__).resolve().parent.parent.parent / "bench" / "make_large_scenario.py"


@pytest.mark.parametrize("detail", ["kubectl", "snapshot", "minimal"])
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_the_dump_loads_strictly(tmp_path: Path, detail: str, suffix: str) -> None:
    out = tmp_path / f"dump{suffix}"
    args = [sys.executable, str(SCRIPT), "--nodes", "6", "--pods-per-node", "5",
            "--pending", "7", "--detail", detail, "-o", str(out)]
    subprocess.run(args, check=True)
    sc = load_scenario([str(out)], strict=True)
    assert sc.warnings == []
    assert len(sc.nodes) == 6 and len(sc.pods) == 30
    assert sum(1 for p in sc.pods if not p.spec.node_name) == 7
    assert {n.labels["topology.kubernetes.io/zone"] for n in sc.nodes} == {
        "zone1", "zone2", "zone3"}
    assert all(n.status.allocatable == {"cpu": 4000, "memory": 32 << 30, "pods": 110}
               for n in sc.nodes)
    assert all(p.spec.containers[0].requests == {"cpu": 100, "memory": 500 << 20}
               for p in sc.pods)
    assert len(sc.objects["ReplicaSet"]) == (0 if detail == "minimal" else 3)
    first = out.read_bytes()
    subprocess.run(args, check=True)
    assert out.read_bytes() == first
