"""``kubesched`` as a process (``cli.run``) leaves at once after the command, without the
interpreter freeing what the command built: its exit status, its exit handlers and its
buffered output are those of a normal exit."""

from __future__ import annotations

import subprocess
import sys

_PROGRAM = """
import atexit, sys
from kubesched import cli
atexit.register(lambda: sys.stdout.write("handler ran\\n"))
sys.stdout.write("buffered, not flushed\\n")
sys.argv = ["kubesched", *sys.argv[1:]]
cli.run()
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROGRAM, *args], capture_output=True,
                          text=True, timeout=120)


def test_a_command_that_succeeds_exits_0_with_its_output_and_handlers() -> None:
    out = _run("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("buffered, not flushed\n")
    assert "version" in out.stdout
    assert out.stdout.endswith("handler ran\n")


def test_bad_usage_keeps_its_exit_status_and_message() -> None:
    out = _run("simulate", "/nonexistent/scenario.yaml")
    assert out.returncode == 2
    assert "does not exist" in out.stderr
    assert out.stdout.endswith("handler ran\n")


def test_the_simulator_run_leaves_with_its_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {capacity: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {containers: [{name: c, image: x}]}\n")
    placements = tmp_path / "placements.json"
    out = _run("simulate", "--placements", str(placements), str(scenario))
    assert out.returncode == 0, out.stderr
    assert "1 of 1 pods scheduled" in out.stdout
    assert '"n1"' in placements.read_text()
