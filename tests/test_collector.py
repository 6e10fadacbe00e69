"""The CLI collects garbage less often than CPython's default, and only when it runs."""

import gc
import subprocess
import sys
from typing import Any

import pytest

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


def test_a_pause_restores_the_setting_before_it_even_on_error() -> None:
    from kubesched.collector import paused

    assert gc.isenabled()
    try:
        with paused():
            assert not gc.isenabled()
            with paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the inner pause leaves the outer one's setting
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a program's own setting is kept
    finally:
        gc.enable()


def test_loading_a_scenario_pauses_the_collector_and_restores_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched.api import scenario

    seen = []
    real = scenario._ScenarioBuilder.finish

    def finish(self: Any) -> Any:
        seen.append(gc.isenabled())
        return real(self)

    monkeypatch.setattr(scenario._ScenarioBuilder, "finish", finish)
    scenario.load_scenario_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    assert seen == [False] and gc.isenabled()


def test_a_sweep_worker_collects_each_runs_objects_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """During a run only the youngest generation is collected, what lived before it is
    frozen, and the run's cyclic objects are freed when it ends."""
    import weakref

    from kubesched.research import sweep

    class Node:
        other: Any = None

    seen: list[Any] = []

    def run(_run: Any) -> Any:
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only a collection frees it
        seen.extend([gc.get_threshold(), gc.get_freeze_count(), weakref.ref(a)])
        return "row"

    monkeypatch.setattr(sweep, "run_safely", run)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert sweep._run_in_worker(None) == "row"  # type: ignore[arg-type]
        threshold, frozen, ref = seen
        assert threshold[0] == YOUNG_THRESHOLD and threshold[1] > 10**6
        assert frozen > 0
        assert ref() is None  # collected after the run
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
