"""The simulator's tie-break (its selectHost: the smallest node name, names prefixed with a
random permutation's entry), as the NodeOrder scores."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kubesched.api.scenario import load_scenario_docs
from kubesched.backends.sim.cluster import SimCluster
from kubesched.research.openb import (
    ORDER_LABEL,
    OpenbSpec,
    TraceNode,
    TracePod,
    load_openb,
    node_order,
    scenario_docs,
)
from kubesched.research.policies import ORDER_BASE, POLICY_WEIGHT, order_digits
from kubesched.research.run import scheduler_config


def test_order_digits_fall_by_one_a_place() -> None:
    assert order_digits(0) == (100, 100)
    # 1213 = 12 × 101 + 1
    assert order_digits(1213) == (88, 99)
    assert 101 * 88 + 99 == 10200 - 1213
    # past the places two digits tell apart: all share the last (0, 0)
    assert order_digits(10200) == order_digits(50000) == (0, 0)


def test_one_policy_point_outweighs_any_order() -> None:
    first, last = order_digits(0), order_digits(10200)
    best_order = ORDER_BASE * first[0] + first[1]  # 10200
    worst_order = ORDER_BASE * last[0] + last[1]  # 0
    assert POLICY_WEIGHT * 51 + worst_order > POLICY_WEIGHT * 50 + best_order


def test_node_order_is_a_permutation_over_sorted_names() -> None:
    nodes = [TraceNode(f"n{i}", 1000, 1024, 1, "T4") for i in (2, 0, 1)]
    ranks = node_order(nodes, random.Random(5))
    assert sorted(ranks) == ["n0", "n1", "n2"]
    assert sorted(ranks.values()) == [0, 1, 2]
    # the simulator sorts by name before it draws: input order changes nothing
    assert ranks == node_order(list(reversed(nodes)), random.Random(5))


def _placements(policy: str, ranks: dict[str, int], pods: list[TracePod], *,
                tiebreak: str = "simulator", seed: int = 1) -> list[str | None]:
    nodes = [TraceNode(n, 32000, 65536, 2, "T4") for n in ("n0", "n1", "n2")]
    sc = load_scenario_docs(scenario_docs(nodes, pods, ranks=ranks), "<test>")
    assert sc.nodes[0].labels[ORDER_LABEL] == f"{ranks['n0']:04d}"
    result = SimCluster(sc, scheduler_config(policy, pods, tiebreak=tiebreak),
                        seed=seed).run()
    by_key = {r.key: r.node for r in result.records}
    return [by_key[f"openb/{p.name}"] for p in pods]


@pytest.mark.parametrize("policy", ["FGD", "BestFit", "DotProduct", "GpuPacking",
                                    "GpuClustering"])
def test_ties_go_to_the_first_node_of_the_order(policy: str) -> None:
    # Three identical idle nodes: every policy scores them alike, the order decides (n1
    # first). The next pods of the same shape: each policy packs, so n1 again while it fits.
    pods = [TracePod(f"p{i}", 4000, 4096, 1, 1000) for i in range(3)]
    got = _placements(policy, {"n0": 2, "n1": 0, "n2": 1}, pods)
    assert got[0] == "n1"
    assert got[1] == "n1"  # one GPU left on n1
    assert got[2] == "n2"  # n1 full: n2 and n0 tie again, n2 is before n0


@pytest.mark.parametrize("policy", ["FGD", "BestFit", "GpuPacking"])
def test_the_uniform_tie_break_ignores_the_order(policy: str) -> None:
    # The same three identical idle nodes: under kube-scheduler's tie-break the first pod
    # goes to any of them, by the scheduler's seed; under the simulator's, always to n1.
    pods = [TracePod("p0", 4000, 4096, 1, 1000)]
    ranks = {"n0": 2, "n1": 0, "n2": 1}
    uniform = {_placements(policy, ranks, pods, tiebreak="uniform", seed=s)[0]
               for s in range(12)}
    assert uniform == {"n0", "n1", "n2"}
    assert {_placements(policy, ranks, pods, seed=s)[0] for s in range(4)} == {"n1"}
    cfg = scheduler_config(policy, pods, tiebreak="uniform")
    assert [p.name for p in cfg.profiles[0].plugins.score.enabled] == [policy]


def test_cpu_pods_under_gpu_policies_fill_the_first_node() -> None:
    # GpuPacking and GpuClustering score a pod without GPU 0 everywhere: ties all along,
    # so the order alone places it (the simulator packs CPU pods onto its first nodes).
    pods = [TracePod(f"c{i}", 16000, 1024, 0, 0) for i in range(3)]
    for policy in ("GpuPacking", "GpuClustering"):
        got = _placements(policy, {"n0": 1, "n1": 2, "n2": 0}, pods)
        assert got == ["n2", "n2", "n0"]


def test_load_openb_labels_every_node_with_its_place(tmp_path: Path) -> None:
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n"
        + "".join(f"n{i},32000,65536,2,T4\n" for i in range(5)))
    (tmp_path / "openb_pod_list_default.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n")
    sc, _trace, _nodes = load_openb(OpenbSpec(tmp_path, seed=3))
    places = sorted(int(n.labels[ORDER_LABEL]) for n in sc.nodes)
    assert places == [0, 1, 2, 3, 4]
    again, _t, _n = load_openb(OpenbSpec(tmp_path, seed=3))
    assert ([n.labels[ORDER_LABEL] for n in again.nodes]
            == [n.labels[ORDER_LABEL] for n in sc.nodes])
