"""Every way out of the CLI is one line and an exit status (issue 14: no tracebacks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import main

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
"""
POD = """---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("args, message", [
    (["simulate", "--placements", "{tmp}/missing/out.jsonl"],
     "--placements {tmp}/missing/out.jsonl: directory '{tmp}/missing' does not exist"),
    (["simulate", "--placements", "{tmp}"], "--placements {tmp}: is a directory, not a file"),
    (["bench", "SchedulingBasic/500Nodes", "--results", "{tmp}/no/r.json"],
     "--results {tmp}/no/r.json: directory '{tmp}/no' does not exist"),
    (["bench", "--write-scenario", "{tmp}/no/s.yaml"],
     "--write-scenario {tmp}/no/s.yaml: directory '{tmp}/no' does not exist"),
    (["snapshot", "--out", "{tmp}/no/c.yaml"],
     "--out {tmp}/no/c.yaml: directory '{tmp}/no' does not exist"),
])
def test_output_paths_checked_before_any_work(tmp_path: Path, args: list[str],
                                              message: str) -> None:
    res = invoke(*(a.format(tmp=tmp_path) for a in args))
    assert res.exit_code == 2
    assert res.output.strip() == "error: " + message.format(tmp=tmp_path)


@pytest.mark.parametrize("quantity, field", [
    ('cpu: "1e18"', "status.capacity.cpu"),
    ("memory: 16Ei", "status.capacity.memory"),
])
def test_quantities_past_what_kubesched_counts_are_named(tmp_path: Path, quantity: str,
                                                         field: str) -> None:
    scen = tmp_path / "big.yaml"
    scen.write_text(NODE.replace('cpu: "2"', "pods: '1'").replace(
        "pods: \"110\"", quantity) + POD)
    res = invoke("simulate", str(scen))
    assert res.exit_code == 2
    (line,) = res.output.strip().splitlines()
    assert line.startswith(f"error: {scen}: Node n1: field {field}: more than kubesched can "
                           "count: at most 9007199254740991")


def test_large_quantities_below_the_limit_load(tmp_path: Path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(NODE.replace("memory: 4Gi", "memory: 7Pi").replace('cpu: "2"',
                                                                      'cpu: "1e12"') + POD)
    res = invoke("simulate", str(scen), "--placements", "-")
    assert res.exit_code == 0, res.output
    assert '"node": "n1"' in res.output


def test_an_unexpected_exception_is_one_line_and_exit_1(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched.backends.sim import cluster

    def boom(self, progress=None):
        raise RuntimeError("kaput")

    monkeypatch.setattr(cluster.SimCluster, "run", boom)
    monkeypatch.delenv("KUBESCHED_DEBUG", raising=False)
    res = invoke("simulate")
    assert res.exit_code == 1
    assert res.output.strip().splitlines()[-1].startswith(
        "error: internal error: RuntimeError: kaput")
    assert "Traceback" not in res.output


DRA_CLASS = """---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
"""


@pytest.mark.parametrize("doc, want", [
    ("""---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  nodeName: n1
  pool: {name: p, resourceSliceCount: 1}
  devices: [{name: a}, {name: a}]
""", "ResourceSlice s: field spec.devices[1].name: Duplicate value"),
    ("""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu, selectors: [{cel: {expression: '%s'}}]}
""" % ("1 < 2 && " * 1300 + "true"), "ResourceClaim default/c: field spec.devices.requests[0]"
     ".exactly.selectors[0].cel.expression: Too long: may not be more than 10240 bytes"),
])
def test_dra_objects_the_api_server_refuses_exit_2(tmp_path: Path, doc: str,
                                                   want: str) -> None:
    scen = tmp_path / "dra.yaml"
    scen.write_text(NODE + DRA_CLASS + doc)
    res = invoke("simulate", str(scen))
    assert res.exit_code == 2
    (line,) = res.output.strip().splitlines()
    assert line.startswith(f"error: {scen}: {want}")
