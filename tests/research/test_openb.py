"""openb trace import, the paper's workload construction, and a small replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.shared_files import shared_path

from kubesched.errors import InputError
from kubesched.research.openb import (
    OpenbSpec,
    load_openb,
    paper_workload,
    parse_spec,
    read_nodes,
    read_pods,
)
from kubesched.research.run import replay

NODES = """sn,cpu_milli,memory_mib,gpu,model
n0,32000,131072,2,V100M16
n1,32000,131072,1,T4
"""
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
        "creation_time,deletion_time,scheduled_time\n") + """\
p0,4000,8192,1,500,,LS,Running,10,100,12
p1,4000,8192,1,1000,T4,BE,Running,20,,20
p2,2000,4096,0,0,,BE,Running,30,40,30
"""


def write(tmp: Path, nodes: str = NODES, pods: str = PODS) -> Path:
    (tmp / "openb_node_list_gpu_node.csv").write_text(nodes)
    (tmp / "openb_pod_list_default.csv").write_text(pods)
    return tmp


def test_replay_order_gives_arrivals_and_durations(tmp_path: Path) -> None:
    sc, _trace, _nodes = load_openb(OpenbSpec(write(tmp_path), order="replay"))
    assert [n.metadata.name for n in sc.nodes] == ["n0", "n1"]
    assert sc.nodes[0].labels["alibabacloud.com/gpu-card-model"] == "V100M16"
    ann = [p.metadata.annotations for p in sc.pods]
    assert [a["kubesched.io/arrival"] for a in ann] == ["0", "10", "20"]
    assert ann[0]["kubesched.io/duration"] == "88"  # deletion - scheduled
    assert "kubesched.io/duration" not in ann[1]
    assert ann[1]["alibabacloud.com/gpu-card-model"] == "T4"
    assert "alibabacloud.com/gpu-count" not in ann[2]


def test_paper_workload_inflates_to_the_target_share(tmp_path: Path) -> None:
    write(tmp_path)
    nodes = read_nodes(tmp_path / "openb_node_list_gpu_node.csv")
    pods = read_pods(tmp_path / "openb_pod_list_default.csv")
    w = paper_workload(pods, nodes, ratio=2.0, seed=1)  # target 6000 milli
    assert sorted(p.name for p in w[:3]) == ["p0", "p1", "p2"]
    total = sum(p.shape.total_milli for p in w)
    assert total <= 6000 and all("-tuned-" in p.name for p in w[3:])
    assert w == paper_workload(pods, nodes, ratio=2.0, seed=1)
    assert paper_workload(pods, nodes, ratio=0.4, seed=1)  # deflates by random removal
    assert sum(p.shape.total_milli for p in paper_workload(pods, nodes, ratio=0.4,
                                                           seed=1)) <= 1200


@pytest.mark.parametrize(("pods", "where", "field"), [
    ("name,cpu_milli,memory_mib,num_gpu\np,1,1,0\n", ":1", "gpu_milli"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,x,1,0,0\n", ":2", "cpu_milli"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\np,1,1,0,0,-5\n", ":2",
     "creation_time"),
])
def test_bad_input_names_file_line_and_column(tmp_path: Path, pods: str, where: str,
                                              field: str) -> None:
    write(tmp_path, pods=pods)
    with pytest.raises(InputError) as e:
        read_pods(tmp_path / "openb_pod_list_default.csv")
    assert f"openb_pod_list_default.csv{where}" in str(e.value)
    assert field in str(e.value)


def test_spec_syntax(tmp_path: Path) -> None:
    s = parse_spec(f"trace:openb:{tmp_path}:pods=cpu200,ratio=1.1,seed=7")
    assert (s.data, s.pods, s.ratio, s.seed) == (tmp_path, "cpu200", 1.1, 7)
    with pytest.raises(InputError):
        parse_spec("trace:openb:/x:colour=blue")


@pytest.mark.parametrize("policy", ["FGD", "BestFit", "DotProduct", "GpuPacking",
                                    "GpuClustering", "Random"])
def test_small_replay_never_overcommits_a_gpu(tmp_path: Path, policy: str) -> None:
    write(tmp_path)
    r = replay(OpenbSpec(tmp_path, ratio=1.0), policy, seed=3)
    assert r.gpu_milli_total == 3000
    assert 0 <= r.unallocated_gpu_pct <= 100
    assert r.curve[-1][1] == r.gpu_milli_allocated


def test_default_trace_loads() -> None:
    data = shared_path("data", "alibaba-gpu-v2023")
    if data is None:
        pytest.skip("../shared/data is not beside the checkout")
    nodes = read_nodes(data / "openb_node_list_gpu_node.csv")
    pods = read_pods(data / "openb_pod_list_default.csv")
    assert (len(nodes), sum(n.gpus for n in nodes), len(pods)) == (1213, 6212, 8152)
    assert len(paper_workload(pods, nodes, ratio=1.3, seed=42)) == 10771
    assert all(p.creation is None for p in read_pods(data / "openb_pod_list_multigpu50.csv"))


def test_arrival_levels_follow_the_authors_tabulation() -> None:
    from kubesched.research.run import arrival_levels

    # 2 GPUs (2000 milli). Arrived % = milli / 2 / 10, rounded half to even; allocated %
    # rounded to 2 decimals; a level's value: the mean of its points, else of x ± 1's.
    points = [(500, 500),     # 25 %, 25.00
              (1000, 1000),   # 50 %, 50.00
              (1010, 1003),   # 50.5 % → 50 (half to even), 50.15
              (1030, 1000),   # 51.5 % → 52 (half to even), 50.00
              (2600, 1800)]   # 130 %, 90.00
    got = arrival_levels(points, 2000)
    assert got[25] == 25.0 and got[130] == 90.0
    assert got[50] == 50.08  # mean(50.00, 50.15) = 50.075: np.round gives 50.08
    assert got[52] == 50.0
    assert got[24] == got[26] == 25.0  # no point at 24 or 26: those at 23..25 / 25..27
    assert got[51] == 50.05  # no point at 51: the three within 50..52, mean 50.05
    assert 0 not in got and 40 not in got and 131 not in got
    assert arrival_levels([], 2000) == {} and arrival_levels(points, 0) == {}
