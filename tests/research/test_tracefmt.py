"""``kubesched trace``: openb and generic traces into scenario files that simulate reads;
bad input named by file, line and column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.research.test_sweep import NODES, pods_csv

from kubesched.api.scenario import load_scenario
from kubesched.cli import main

GENERIC = """name,arrival,duration,cpu_milli,memory_mib,gpu,priority,namespace,extra
web,0,30,500,256,,,shop,ignored
train,2.5,,4000,8192,2,1000,,
"""
GENERIC_NODES = """name,cpu_milli,memory_mib,gpu,zone
a,8000,16384,,z1
g,16000,65536,4,z2
"""


def trace(*args: str) -> Result:
    return CliRunner().invoke(main, ["trace", *args])


def annotations(path: Path) -> dict[str, dict[str, str]]:
    sc = load_scenario([str(path)])
    return {p.key: dict(p.metadata.annotations) for p in sc.pods}


def test_openb_paper_order_inflates_and_arrives_one_a_second(tmp_path: Path) -> None:
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(NODES)
    pods = tmp_path / "openb_pod_list_tiny.csv"
    pods.write_text(pods_csv())
    out = tmp_path / "s.yaml"
    res = trace("openb", "--pods", str(pods), "--ratio", "1.3", "--seed", "7",
                "--out", str(out))
    assert res.exit_code == 0, res.output
    sc = load_scenario([str(out)])
    assert len(sc.nodes) == 6  # the node list beside the pod list
    ann = annotations(out)
    arrivals = [float(a["kubesched.io/arrival"]) for a in ann.values()]
    assert arrivals == [float(i) for i in range(len(arrivals))]
    assert len(ann) > 12 and any("-tuned-" in k for k in ann)  # copies up to 130 %
    milli = sum(int(a.get("alibabacloud.com/gpu-milli", 0))
                * int(a.get("alibabacloud.com/gpu-count", 0)) for a in ann.values())
    assert 14_000 < milli <= 1.3 * 14_000
    # the same seed draws the same workload
    assert trace("openb", "--pods", str(pods), "--seed", "7", "--out",
                 str(tmp_path / "again.yaml")).exit_code == 0
    assert (tmp_path / "again.yaml").read_text() == out.read_text()


def test_openb_replay_order_keeps_the_trace_times(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text(pods_csv(3).replace(",10,,10", ",10,70,15"))
    res = trace("openb", "--pods", str(pods), "--order", "replay", "--out", "-")
    assert res.exit_code == 0, res.output
    (tmp_path / "s.yaml").write_text(res.stdout)
    ann = annotations(tmp_path / "s.yaml")
    assert [a["kubesched.io/arrival"] for a in ann.values()] == ["0", "10", "20"]
    assert ann["openb/p1"]["kubesched.io/duration"] == "55"  # deletion − scheduled


def test_openb_paper_order_needs_the_nodes(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text(pods_csv(3))
    res = trace("openb", "--pods", str(pods), "--out", str(tmp_path / "s.yaml"))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {pods}: --ratio is a share of the nodes' GPUs")
    assert trace("openb", "--pods", str(pods), "--ratio", "0", "--out",
                 str(tmp_path / "s.yaml")).exit_code == 0


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_generic_trace_becomes_pods_with_arrival_and_duration(tmp_path: Path,
                                                              suffix: str) -> None:
    pods = tmp_path / f"pods{suffix}"
    if suffix == ".csv":
        pods.write_text(GENERIC)
    else:
        pods.write_text(
            '{"name": "web", "arrival": 0, "duration": 30, "cpu_milli": 500, '
            '"memory_mib": 256, "namespace": "shop"}\n\n'
            '{"name": "train", "arrival": 2.5, "duration": null, "cpu_milli": 4000, '
            '"memory_mib": 8192, "gpu": 2, "priority": 1000}\n')
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(GENERIC_NODES)
    out = tmp_path / "s.yaml"
    res = trace("--format", "generic", "--pods", str(pods), "--nodes", str(nodes),
                "--out", str(out))
    assert res.exit_code == 0, res.output
    sc = load_scenario([str(out)])
    by = {p.key: p for p in sc.pods}
    web, train = by["shop/web"], by["default/train"]
    assert web.metadata.annotations == {"kubesched.io/arrival": "0",
                                        "kubesched.io/duration": "30"}
    assert train.metadata.annotations == {"kubesched.io/arrival": "2.5"}
    assert train.spec.priority == 1000
    assert [n.metadata.name for n in sc.nodes] == ["a", "g"]
    assert sc.nodes[1].labels["topology.kubernetes.io/zone"] == "z2"
    # and simulate runs it: train needs the GPU node, web fits anywhere
    placements = tmp_path / "p.jsonl"
    sim = CliRunner().invoke(main, ["simulate", str(out), "--quiet", "--placements",
                                    str(placements)])
    assert sim.exit_code == 0, sim.output
    got = {d["pod"]: d["node"] for d in map(json.loads,
                                             placements.read_text().splitlines())}
    assert got["default/train"] == "g" and got["shop/web"] in ("a", "g")


@pytest.mark.parametrize(("content", "suffix", "where", "column", "value"), [
    ("name,arrival,cpu_milli\nx,1,1\n", ".csv", 1, "memory_mib", None),
    ("name,arrival,cpu_milli,memory_mib\nx,1,1,1\ny,1,two,1\n", ".csv", 3, "cpu_milli",
     "two"),
    ("name,arrival,cpu_milli,memory_mib\nx,-3,1,1\n", ".csv", 2, "arrival", "-3"),
    ("name,arrival,duration,cpu_milli,memory_mib\nx,1,-1,1,1\n", ".csv", 2, "duration",
     "-1"),
    ("name,arrival,cpu_milli,memory_mib\nx,,1,1\n", ".csv", 2, "arrival", ""),
    ("name,arrival,cpu_milli,memory_mib\nx,1,1,1\nx,2,1,1\n", ".csv", 3, "name", "x"),
    ('{"name": "x", "arrival": 1, "cpu_milli": 1}\n', ".jsonl", 1, "memory_mib", None),
    ('{"name": "x", "arrival": "soon", "cpu_milli": 1, "memory_mib": 1}\n', ".jsonl", 1,
     "arrival", "soon"),
])
def test_bad_generic_input_names_file_line_and_column(tmp_path: Path, content: str,
                                                      suffix: str, where: int, column: str,
                                                      value: str | None) -> None:
    pods = tmp_path / f"pods{suffix}"
    pods.write_text(content)
    res = trace("generic", "--pods", str(pods), "--out", str(tmp_path / "s.yaml"))
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"error: {pods}:{where}: field {column}: "), line
    if value is not None:
        assert line.endswith(f"(value: {value!r})")
    assert not (tmp_path / "s.yaml").exists()


def test_openb_bad_input_names_file_line_and_column(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text(pods_csv(3).replace("p1,1500,4096", "p1,1500,-4096"))
    res = trace("openb", "--pods", str(pods), "--ratio", "0", "--out", "-")
    assert res.exit_code == 2
    assert res.stderr.strip() == (f"error: {pods}:3: field memory_mib: must be an integer "
                                  "≥ 0 (value: '-4096')")


def test_an_object_the_api_server_refuses_is_refused_at_import(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text("name,arrival,cpu_milli,memory_mib\nNot_A_Name,0,1,1\n")
    res = trace("generic", "--pods", str(pods), "--out", str(tmp_path / "s.yaml"))
    assert res.exit_code == 2
    assert "Not_A_Name" in res.stderr and "metadata.name" in res.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--pods", "{p}"], "name the trace's format"),
    (["openb", "--format", "generic", "--pods", "{p}"], "the format is given twice"),
    (["generic", "--seed", "3", "--pods", "{p}"], "--seed is for openb traces"),
])
def test_format_and_options_must_agree(tmp_path: Path, args: list[str],
                                       message: str) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text(GENERIC)
    res = trace(*(a.format(p=pods) for a in args), "--out", str(tmp_path / "s.yaml"))
    assert res.exit_code == 2
    assert message in res.stderr
