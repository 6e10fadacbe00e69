"""A large YAML text read in two processes (``api.halves``): the same documents as one
reader gives, whatever the child does."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import halves, scenario
from kubesched.api.blockyaml import block_documents

HERE = Path(__file__).parent

# (elsewhere kubesched reads in one process: fork without exec is unsafe there)
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def _read(text: str) -> list[Any] | None:
    return block_documents(text, scenario._Loader(""))


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two-process path whatever threads earlier tests left behind."""
    monkeypatch.setattr(halves, "_may_fork", lambda: True)


def test_a_large_dump_reads_as_in_one_process(forking: None) -> None:
    text = (HERE.parent / "dumps" / "scale-kubectl.yaml").read_text()
    pids: list[int] = []

    def read(part: str) -> list[Any] | None:
        pids.append(os.getpid())
        return _read(part)

    got = halves.read_in_two(text, read, min_chars=1)
    assert got is not None and got == _read(text)
    assert pids == [os.getpid()]  # the second half was read by another process


_docs = st.lists(st.dictionaries(
    st.sampled_from(["a", "b", "kind", "x y", "z"]),
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6),
              st.sampled_from(["yes", "017", "---", "- x", "line\nline\n"]),
              st.lists(st.integers(), max_size=3),
              st.dictionaries(st.sampled_from(["p", "q"]), st.text(max_size=4), max_size=2)),
    max_size=4), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(_docs)
def test_any_dump_cut_in_two_reads_as_the_whole(docs: list[Any]) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=False, explicit_start=True)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(halves, "_may_fork", lambda: True)
        assert halves.read_in_two(text, _read, min_chars=1) == _read(text)


def test_a_half_left_to_pyyaml_leaves_the_whole_text_to_it(forking: None) -> None:
    text = "a: 1\n---\nb: 2\n---\nc: [3]\n"  # (a flow sequence in the second half)
    assert _read(text) is None
    assert halves.read_in_two(text, _read, min_chars=1) is None


def test_a_child_that_dies_leaves_its_half_to_this_process(forking: None) -> None:
    text = "---\na: 1\n---\nb: 2\n---\nc: 3\n---\nd: 4\n"
    parent = os.getpid()

    def read(part: str) -> list[Any] | None:
        if os.getpid() != parent:
            os._exit(3)
        return _read(part)

    assert halves.read_in_two(text, read, min_chars=1) == _read(text)


def test_with_another_thread_alive_one_process_reads() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        pids: list[int] = []

        def read(part: str) -> list[Any] | None:
            pids.append(os.getpid())
            return _read(part)

        text = "---\na: 1\n---\nb: 2\n"
        assert halves.read_in_two(text, read, min_chars=1) == _read(text)
        assert pids == [os.getpid()]
    finally:
        stop.set()
        t.join()
