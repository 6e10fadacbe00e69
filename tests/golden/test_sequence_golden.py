"""kubesched simulate against upstream's placements of whole sequences
(../shared/golden/sequence/: every pod bound, no ties, so placements are fully determined)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.backends.sim.cluster import SimCluster
from kubesched.plugins.registry import in_tree_registry
from shared_files import golden_cases, golden_config, load_golden

CASES = golden_cases("sequence", pattern="seq-*.yaml")


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_sequence_matches_upstream(path: Path) -> None:
    want = json.loads(path.with_suffix("").with_suffix(".upstream.json").read_text())
    if "PodTopologySpread" not in in_tree_registry():
        pytest.skip("PodTopologySpread not registered yet")
    scenario = load_golden(path)
    config = golden_config(scenario, path)
    result = SimCluster(scenario, config, check=True).run()
    got = {r.key: r.node for r in result.records}
    assert got == want["placements"]
