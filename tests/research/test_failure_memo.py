"""The failure memo of trace replays (scheduler/failure_memo.py, research/equivalence.py): a
replay with it places, words and draws exactly as one without it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kubesched.api.scenario import load_scenario_docs
from kubesched.backends.sim.cluster import SimCluster
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import Diagnosis
from kubesched.research.equivalence import PodEquivalence
from kubesched.research.openb import OpenbSpec, build_openb
from kubesched.research.run import scheduler_config
from kubesched.scheduler.failure_memo import FailureMemo


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


def _run(folder: Path, policy: str, tiebreak: str, memo: FailureMemo | None
         ) -> list[str]:
    spec = OpenbSpec(folder, "small", ratio=2, seed=3)
    sc, trace, _nodes = build_openb(spec)
    sim = SimCluster(sc, scheduler_config(policy, trace, tiebreak=tiebreak), seed=spec.seed)
    sim.scheduler.failure_memo = memo
    result = sim.run()
    # the random stream's position at the end: every draw of the run, in order
    draws = [sim.scheduler.handle.rng.random() for _ in range(3)]
    return [json.dumps([r.key, r.node, r.time, r.attempts, r.message])
            for r in result.records] + [json.dumps(draws)]


@pytest.mark.parametrize(("policy", "tiebreak"), [
    ("BestFit", "simulator"), ("Random", "simulator"), ("FGD", "uniform")])
def test_a_replay_with_the_memo_is_the_replay_without(tmp_path: Path, policy: str,
                                                      tiebreak: str) -> None:
    folder = _trace(tmp_path)
    memo = FailureMemo(PodEquivalence())
    with_memo = _run(folder, policy, tiebreak, memo)
    without = _run(folder, policy, tiebreak, None)
    assert with_memo == without
    assert memo.hits >= 10  # the memo answered: the comparison means something


class _Snap:
    def __init__(self) -> None:
        self.table = object()
        self.generation = 1


def test_an_entry_answers_only_its_generation_and_table() -> None:
    memo = FailureMemo(lambda pod: "same")
    snap, state = _Snap(), CycleState()
    key = memo.key("p", snap, state, None, 0)  # type: ignore[arg-type]
    memo.put(key, Diagnosis(pre_filter_msg="x"))
    got = memo.get(memo.key("p", snap, state, None, 0))  # type: ignore[arg-type]
    assert got is not None and got.pre_filter_msg == "x"
    got.unschedulable_plugins.add("changed")  # a copy: the entry is not changed
    again = memo.get(key)
    assert again is not None and not again.unschedulable_plugins
    snap.generation = 2
    assert memo.get(memo.key("p", snap, state, None, 0)) is None  # type: ignore[arg-type]
    snap.generation = 1  # an entry of another generation is gone, not kept aside
    assert memo.get(memo.key("p", snap, state, None, 0)) is None  # type: ignore[arg-type]
    memo.put(key, Diagnosis())
    snap.table = object()
    assert memo.get(memo.key("p", snap, state, None, 0)) is None  # type: ignore[arg-type]
    # the scan's own inputs are in the key
    state.skip_filter.add("NodePorts")
    assert memo.key("p", snap, state, None, 0) != memo.key(  # type: ignore[arg-type]
        "p", snap, CycleState(), None, 0)  # type: ignore[arg-type]


def test_pods_are_equivalent_but_for_identity_and_arrival(tmp_path: Path) -> None:
    docs = []
    for name, arrival, cpu, qos in [("a", "1", "1", "LS"), ("b", "7", "1", "LS"),
                                    ("c", "1", "2", "LS"), ("d", "1", "1", "BE")]:
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "labels": {"qos": qos},
                                  "annotations": {"kubesched.io/arrival": arrival}},
                     "spec": {"containers": [{"name": "c", "image": "i",
                                              "resources": {"requests": {"cpu": cpu}}}]}})
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "e"},
                 "spec": {"containers": [{"name": "c", "image": "i"}],
                          "volumes": [{"name": "v", "emptyDir": {}}]}})
    pods = {p.name: p for p in load_scenario_docs(docs, "<test>").pods}
    eq = PodEquivalence()
    assert eq(pods["a"]) == eq(pods["b"])
    assert eq(pods["a"]) != eq(pods["c"])  # another request
    assert eq(pods["a"]) != eq(pods["d"])  # another label
    assert eq(pods["e"]) is None  # volumes: objects of its own
