"""Progress while a scenario loads (issue 22): on a terminal a live line of documents parsed
and objects read, erased at the end; elsewhere a line every few seconds. The intervals are
checked with a clock the test moves, never with real time; the command is checked through a
pseudo-terminal and through a pipe with ``KUBESCHED_PROGRESS_INTERVAL=0``."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched.api.loadprogress import ENV_INTERVAL, INTERVAL, LoadProgress
from kubesched.api.scenario import load_scenario

DUMP = Path(__file__).parent.parent / "dumps" / "load-kubectl.json"
SRC = Path(__file__).resolve().parent.parent.parent / "src"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_INTERVAL, raising=False)


def test_not_a_terminal_a_line_every_interval_and_one_at_the_end() -> None:
    out, clock = io.StringIO(), Clock()
    p = LoadProgress(out, live=False, clock=clock)
    p.parsing("big.yaml")
    for _ in range(3):
        p.document()
    assert out.getvalue() == ""  # (a load shorter than the interval prints nothing)
    clock.now += INTERVAL
    p.document()
    p.objects()
    clock.now += 1
    p.object()
    assert out.getvalue() == "loading big.yaml: 4 documents parsed (5 s)\n"
    clock.now += INTERVAL
    p.object()
    p.done()
    assert out.getvalue().splitlines()[1:] == ["loading big.yaml: 2 objects read (11 s)",
                                               "loading: 2 objects read in 11.0 s"]


def test_a_short_load_prints_nothing() -> None:
    out, clock = io.StringIO(), Clock()
    for live in (True, False):
        p = LoadProgress(out, live=live, clock=clock)
        p.parsing("small.yaml")
        p.document()
        p.objects()
        p.object()
        p.done()
    assert out.getvalue() == ""


def test_a_terminal_line_is_redrawn_then_erased() -> None:
    out, clock = io.StringIO(), Clock()
    p = LoadProgress(out, live=True, clock=clock)
    p.parsing("big.yaml")
    p.document()
    clock.now += 0.5
    p.document()
    p.document()  # (within the refresh interval: not redrawn)
    p.objects()
    clock.now += 0.1
    p.object()
    p.done()
    assert out.getvalue() == ("\r\x1b[Kloading big.yaml: 2 documents parsed"
                              "\r\x1b[Kloading big.yaml: 1 objects read\r\x1b[K")


def test_the_loader_reports_every_document_and_object() -> None:
    out, clock = io.StringIO(), Clock()
    p = LoadProgress(out, live=False, clock=clock)
    load_scenario([str(DUMP)], progress=p)
    # (10 Namespaces, 3 Nodes, 2 ReplicaSets, 12 Pods; JSON is parsed at once)
    assert (p.source, p.parsed, p.read) == (str(DUMP), 0, 27)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC), ENV_INTERVAL: "0", "COLUMNS": "200"}


def test_simulate_through_a_pipe_prints_progress_lines(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
         "status": {"capacity": {"cpu": "1", "pods": "10"}}} for i in range(3)]}))
    env = _env()
    res = subprocess.run([sys.executable, "-m", "kubesched", "simulate", str(scenario)],
                         env=env, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("loading")]
    assert lines[0].startswith(f"loading {scenario}: 1 documents parsed (")
    assert lines[-1].startswith("loading: 3 objects read in ")
    assert f"loading {scenario}: 3 objects read (" in res.stderr
    quiet = subprocess.run([sys.executable, "-m", "kubesched", "simulate", "--quiet",
                            str(scenario)], env=env, capture_output=True, text=True,
                           check=False)
    assert quiet.returncode == 0 and "loading" not in quiet.stderr


def test_simulate_on_a_terminal_shows_a_live_line() -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: stderr (and stdout) a terminal
        os.execve(sys.executable, [sys.executable, "-m", "kubesched", "simulate", str(DUMP)],
                  _env())
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # (the child is gone: EIO)
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert f"\r\x1b[Kloading {DUMP}: 27 objects read\r\x1b[K" in text
    assert "objects read in" not in text  # (no closing line on a terminal)
