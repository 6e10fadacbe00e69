"""``kubesched sweep --ray local``: a real Ray runtime on this machine (two CPUs) runs the
grid as Ray tasks, and writes the rows the local processes write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.research.test_sweep import read_csv, sweep, without_wall

# The test extra installs Ray: under CI a missing Ray fails rather than skips.
ray = (__import__("ray") if os.environ.get("CI", "").lower() == "true"
       else pytest.importorskip("ray"))


def test_ray_rows_equal_the_local_rows(tmp_path: Path) -> None:
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert sweep(local, "--jobs", "2").exit_code == 0
    res = sweep(remote, "--ray", "local", "--jobs", "2")
    assert res.exit_code == 0, res.output
    assert "on Ray (local)" in res.stderr
    assert not ray.is_initialized()  # the runtime it started is shut down
    rows = read_csv(remote / "out.csv")[1]
    assert len(rows) == 6
    assert without_wall(rows) == without_wall(read_csv(local / "out.csv")[1])
    # resuming works the same on Ray: nothing is left to run
    again = sweep(remote, "--ray", "local", "--jobs", "2")
    assert again.exit_code == 0 and "6 runs, 6 already in" in again.stderr
