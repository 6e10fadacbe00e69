"""The CLI collects garbage less often than CPython's default, and only when it runs."""

import gc
import subprocess
import sys

from kubesched.collector import YOUNG_THRESHOLD


def test_importing_kubesched_leaves_the_collector_alone() -> None:
    code = "import gc, kubesched.cli, kubesched.research.sweep; print(gc.get_threshold()[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert int(out) == 700


def test_a_command_sets_the_young_threshold() -> None:
    from click.testing import CliRunner

    from kubesched.cli import main

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert CliRunner().invoke(main, ["examples", "--help"]).exit_code == 0
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    finally:
        gc.set_threshold(*before)
