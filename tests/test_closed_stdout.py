"""``kubesched simulate … | head -1``: a reader that goes away ends the command quietly, as a
Unix tool ends on SIGPIPE (status 141 from a shell), with nothing on stderr — tried with a
real pipe whose reader is gone before the first line is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
SCENARIO = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}
"""


@pytest.mark.parametrize("command, args", [
    ("simulate", []), ("simulate", ["--placements", "-"]), ("simulate", ["--state-out", "-"]),
    ("plan", []), ("explain", ["--pod", "default/p"]),
])
def test_a_closed_stdout_ends_quietly(tmp_path: Path, command: str, args: list[str]) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("KUBESCHED_DEBUG", None)
    read, write = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "kubesched", command, str(scenario),
                             *args], stdout=write, stderr=subprocess.PIPE, env=env)
    os.close(write)
    os.close(read)  # the reader is gone (| head -1 after its line)
    _, err = proc.communicate(timeout=120)
    assert err.decode() == ""
    assert proc.returncode == 141
