"""Every ``kubesched`` command in README.md's shell blocks runs as written, in a directory
where ``kubesched examples`` (the first of them) has written the files the others name —
except those that need a live cluster (``run``, ``snapshot``). ``bench`` fits 80 columns."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import kubesched

README = Path(__file__).resolve().parent.parent / "README.md"
NEEDS_A_CLUSTER = ("run", "snapshot")


def readme_commands() -> list[str]:
    """The ``kubesched …`` commands of the README's ```sh blocks, in order (a line's
    ``&&``-joined parts, comments dropped)."""
    out: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        for line in block.splitlines():
            for part in line.split("#", 1)[0].split("&&"):
                words = shlex.split(part)
                if words[:1] == ["kubesched"] and words[1] not in NEEDS_A_CLUSTER:
                    out.append(part.strip())
    return out


COMMANDS = readme_commands()


def test_the_readme_names_the_commands() -> None:
    subcommands = [shlex.split(c)[1] if len(shlex.split(c)) > 1 else "" for c in COMMANDS]
    assert subcommands[:2] == ["simulate", "examples"]
    assert {"simulate", "explain", "capacity", "compare", "bench"} <= set(subcommands)
    assert any("--report" in c for c in COMMANDS)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme")


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    src = str(Path(kubesched.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", *shlex.split(command)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs_as_written(command: str, workdir: Path) -> None:
    if " examples" not in command and not (workdir / "cluster.yaml").exists():
        run("kubesched examples", workdir)  # the block's first command, if run alone
    proc = run(command, workdir)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    if shlex.split(command)[1] == "bench":
        wide = [line for line in (proc.stdout + proc.stderr).splitlines() if len(line) > 80]
        assert wide == [], wide
    if "--report" in command:
        assert (workdir / "report.html").stat().st_size > 1_000_000  # plotly.js inlined
        assert (workdir / "metrics.csv").read_text().startswith("time,attempts,")
