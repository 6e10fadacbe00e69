"""The command line under random flags and files (click's CliRunner, in-process): every run
ends with exit status 0, 1 or 2 and one-line errors, never a traceback or an internal
error."""

from __future__ import annotations

import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from fuzz.strategies import ScenarioDraw, configs, mutated, scenarios, to_yaml
from kubesched.cli import main

VERSIONS = st.sampled_from(("1.35", "1.36", "1.37", "1.34", "1.38", "v1.35", "1", "", "x.y",
                            "1.35.0", " 1.35"))
GATES = st.one_of(
    st.sampled_from(("SchedulerQueueingHints=true", "SchedulerPopFromBackoffQ=false",
                     "AllAlpha=true", "AllBeta=false", "NoSuchGate=true", "=", ",",
                     "SchedulerQueueingHints=maybe", "PodLevelResources=false,AllBeta=true",
                     " SchedulerPopFromBackoffQ = true ")),
    st.text(max_size=20))


def _check(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    out = result.output
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, out)
    assert "Traceback" not in out, (args, out)
    assert "internal error" not in out, (args, out)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args, repr(result.exception))
    for line in out.splitlines():
        if line.startswith("error:"):
            assert len(line) < 2000, line


@given(st.data(), scenarios(max_nodes=4, max_pods=10))
def test_simulate_flags(data: st.DataObject, draw: ScenarioDraw) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp, "s.yaml")
        docs = list(draw.docs)
        if docs and data.draw(st.integers(0, 3)) == 0:
            i = data.draw(st.integers(0, len(docs) - 1))
            docs[i] = data.draw(mutated(docs[i])).doc
        scen.write_text(to_yaml(docs))
        args = ["simulate", str(scen)]
        if data.draw(st.booleans()):
            args += ["--seed", data.draw(st.sampled_from(("0", "7", "-1", "x", "99999999999")))]
        if data.draw(st.booleans()):
            args += ["--until", data.draw(st.sampled_from(("0", "10", "1e9", "-1", "nan",
                                                           "inf", "x")))]
        for flag in ("--strict", "--check", "--quiet"):
            if data.draw(st.booleans()):
                args.append(flag)
        if data.draw(st.booleans()):
            args += ["--placements", data.draw(st.sampled_from(
                ("-", str(Path(tmp, "p.jsonl")), str(Path(tmp, "missing", "p.jsonl")), tmp)))]
        if data.draw(st.booleans()):
            args += ["--kubernetes-version", data.draw(VERSIONS)]
        if data.draw(st.integers(0, 2)) == 0:
            args += ["--feature-gates", data.draw(GATES)]
        if data.draw(st.integers(0, 2)) == 0:
            cfg = Path(tmp, "c.yaml")
            doc = data.draw(configs())
            if data.draw(st.booleans()):
                doc = data.draw(mutated(doc)).doc
            cfg.write_text(to_yaml([doc]))
            args += ["--config", str(cfg)]
        _check(args)


@given(st.data(), scenarios(max_nodes=4, max_pods=8))
def test_explain_flags(data: st.DataObject, draw: ScenarioDraw) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp, "s.yaml")
        scen.write_text(draw.text())
        keys = [*draw.pending_keys(), "default/none", "nons", "/", "a/b/c", ""]
        args = ["explain", str(scen), "--pod", data.draw(st.sampled_from(keys))]
        if data.draw(st.booleans()):
            args += ["-o", data.draw(st.sampled_from(("json", "table", "yaml")))]
        if data.draw(st.booleans()):
            args.append("--strict")
        if data.draw(st.booleans()):
            args += ["--kubernetes-version", data.draw(VERSIONS)]
        _check(args)
