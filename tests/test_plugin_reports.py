"""What is said of out-of-tree plugins: an exception is reported once per plugin and extension
point (its traceback only under ``--debug``), however many nodes and cycles it fails; a plugin
registered but enabled in no profile is warned about."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import main

DUMP = Path(__file__).resolve().parent / "dumps" / "claims-other-schedulers.yaml"
PLUGINS = '''
from kubesched.framework import FilterPlugin, ScorePlugin


class Boom(FilterPlugin):
    name = "Boom"

    def filter(self, state, pod, node_info):
        raise ValueError("no zone label")


class Idle(ScorePlugin):
    name = "Idle"

    def score(self, state, pod, node_info):
        return 0
'''
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: Boom}]
"""


def _run(tmp_path: Path, *extra: str) -> tuple[int, str]:
    (tmp_path / "plugins.py").write_text(PLUGINS)
    (tmp_path / "config.yaml").write_text(CONFIG)
    res = CliRunner().invoke(main, ["simulate", str(DUMP), "--quiet", "--config",
                                    str(tmp_path / "config.yaml"), "--plugin",
                                    f"{tmp_path / 'plugins.py'}:Boom", *extra])
    return res.exit_code, res.stderr


def _reports(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "Boom" in r.getMessage()]


def test_an_exception_is_reported_once_per_plugin_and_point(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    code, _err = _run(tmp_path)
    assert code == 0
    # two pods attempted (one of them twice): three Filter calls raised, one report
    reports = _reports(caplog)
    assert [r.getMessage() for r in reports] == [
        "plugin Boom raised at Filter: ValueError: no zone label (reported once; --debug "
        "shows the traceback)"]
    assert reports[0].levelno == logging.ERROR and not reports[0].exc_info


def test_debug_shows_the_traceback(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    code, _err = _run(tmp_path, "--debug")
    assert code == 0
    reports = _reports(caplog)
    assert [r.getMessage() for r in reports] == [
        "plugin Boom raised at Filter: ValueError: no zone label (reported once)"]
    exc = reports[0].exc_info
    assert exc is not None and isinstance(exc[1], ValueError)


def test_a_plugin_no_profile_enables_is_warned_about(tmp_path: Path) -> None:
    code, err = _run(tmp_path, "--plugin", f"{tmp_path / 'plugins.py'}:Idle")
    assert code == 0
    assert ("warning: plugin Idle is registered (--plugin or an entry point) but no profile "
            "enables it: it takes no part in scheduling") in err
    assert "plugin Boom is registered" not in err
