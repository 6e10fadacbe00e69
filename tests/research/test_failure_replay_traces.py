"""Failed attempts replayed in trace replays (scheduler/failures.py, GpuShare's filter
signature): a replay that replays them places, words and draws exactly as one that filters
every attempt."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from kept_filter import checking_kept_verdicts
from kubesched.backends.sim.cluster import SimCluster
from kubesched.framework.runtime import Framework
from kubesched.research.openb import OpenbSpec, build_openb
from kubesched.research.run import scheduler_config


def _trace(folder: Path) -> Path:
    """16 GPU nodes given twice their GPUs in requests (paper order: about 750 pods of a few
    shapes, most of them CPU-only): the pods that fail often share their shape and the
    snapshot with another, and some wait for a leftover flush."""
    rng = random.Random(7)
    nodes = ["sn,cpu_milli,memory_mib,gpu,model"]
    for i in range(16):
        nodes.append(f"node-{i:02d},{rng.choice([32000, 64000, 96000])},262144,"
                     f"{rng.choice([4, 8])},{rng.choice(['T4', 'V100'])}")
    shapes = ([(1000, 2048, 1, 250)] * 3 + [(4000, 8192, 1, 500)] * 3
              + [(8000, 16384, 1, 1000)] * 2 + [(500, 1024, 0, 0)] * 15)
    rows = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec"]
    for i in range(1000):
        cpu, mem, num, milli = rng.choice(shapes)
        spec = "V100" if num and rng.random() < 0.1 else ""
        rows.append(f"pod-{i:04d},{cpu},{mem},{num},{milli},{spec}")
    (folder / "openb_node_list_gpu_node.csv").write_text("\n".join(nodes) + "\n")
    (folder / "openb_pod_list_small.csv").write_text("\n".join(rows) + "\n")
    return folder


def _run(folder: Path, policy: str, tiebreak: str, replay: bool) -> tuple[list[str], int]:
    spec = OpenbSpec(folder, "small", ratio=2, seed=3)
    sc, trace, _nodes = build_openb(spec)
    sim = SimCluster(sc, scheduler_config(policy, trace, tiebreak=tiebreak), seed=spec.seed)
    memo = sim.scheduler.failures
    hits = []
    recall = memo.recall

    def counted(key: Any) -> Any:
        got = recall(key) if replay else None
        hits.append(got is not None)
        return got

    memo.recall = counted  # type: ignore[method-assign]
    result = sim.run()
    # the random stream's position at the end: every draw of the run, in order
    draws = [sim.scheduler.handle.rng.random() for _ in range(3)]
    return ([json.dumps([r.key, r.node, r.time, r.attempts, r.message])
             for r in result.records] + [json.dumps(draws)], sum(hits))


@pytest.mark.parametrize(("policy", "tiebreak"), [
    ("BestFit", "simulator"), ("Random", "simulator"), ("FGD", "uniform")])
def test_a_replay_that_replays_failures_is_the_replay_without(tmp_path: Path, policy: str,
                                                              tiebreak: str) -> None:
    folder = _trace(tmp_path)
    with_replay, replayed = _run(folder, policy, tiebreak, True)
    without, _ = _run(folder, policy, tiebreak, False)
    assert with_replay == without
    assert replayed >= 10  # failures were replayed: the comparison means something


@pytest.mark.parametrize("policy", ["FGD", "BestFit"])
def test_verdicts_kept_per_node_are_gpushares_own(tmp_path: Path, policy: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """GpuShare's verdicts are kept per node (``filter_row_local``) across cycles: each one
    read back is the verdict it gives now, and the replay is the one that filters every
    node in every cycle."""
    folder = _trace(tmp_path)
    with checking_kept_verdicts() as stats:
        kept, _ = _run(folder, policy, "simulator", True)
    assert stats.read_back > stats.computed  # most verdicts were read back
    monkeypatch.setattr(Framework, "rows_kept_key", lambda self, state, pod: None)
    assert _run(folder, policy, "simulator", True)[0] == kept
