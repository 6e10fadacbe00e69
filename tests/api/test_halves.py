"""A large YAML text read in two processes (``api.halves``): the same documents as one
reader gives, whatever the child does; and a scenario loaded so the same as loaded in one
process, its errors and warnings included."""

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


def _in_two(text: str, read: halves.Reader = _read, **kw: Any) -> list[Any] | None:
    """The documents of every part, one list after the other (None if a part's are)."""
    out: list[Any] = []
    for part in halves.read_parts(text, read, min_chars=1, **kw):
        if part.docs is None:
            return None
        out += part.docs
    return out


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

    got = _in_two(text, read)
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
        assert _in_two(text) == _read(text)


def test_a_half_left_to_pyyaml_is_said_with_where_it_starts(forking: None) -> None:
    text = "a: 1\n---\nb: 2\n---\nc: [3]\n"  # (a flow sequence in the second half)
    assert _read(text) is None
    parts = list(halves.read_parts(text, _read, min_chars=1))
    assert [(p.docs, p.line) for p in parts] == [([{"a": 1}, {"b": 2}], 0), (None, 3)]
    assert "".join(p.text for p in parts) == text


def test_a_child_that_dies_leaves_its_half_to_this_process(forking: None) -> None:
    text = "---\na: 1\n---\nb: 2\n---\nc: 3\n---\nd: 4\n"
    parent = os.getpid()

    def read(part: str) -> list[Any] | None:
        if os.getpid() != parent:
            os._exit(3)
        return _read(part)

    assert _in_two(text, read) == _read(text)


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
        assert _in_two(text, read) == _read(text)
        assert pids == [os.getpid()]
    finally:
        stop.set()
        t.join()


def test_the_child_prepares_its_own_part(forking: None) -> None:
    text = "---\na: 1\n---\nb: 2\n---\nc: 3\n---\nd: 4\n"
    parent = os.getpid()

    def prepare(docs: list[Any]) -> list[Any]:
        return [(os.getpid() != parent, sorted(d)) for d in docs]

    parts = list(halves.read_parts(text, _read, prepare, min_chars=1))
    assert len(parts) == 2 and parts[0].prepared is None and parts[1].docs
    assert parts[1].prepared == [(True, sorted(d)) for d in parts[1].docs]


def test_a_caller_that_stops_early_leaves_no_child(forking: None,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[int] = []
    fork = os.fork

    def recording_fork() -> int:
        pid = fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)
    text = "---\na: 1\n---\nb: 2\n---\nc: 3\n---\nd: 4\n"
    parts = halves.read_parts(text, _read, min_chars=1)
    first = next(parts)
    assert first.docs == [{"a": 1}, {"b": 2}, {"c": 3}] and len(forked) == 1
    parts.close()
    with pytest.raises(ChildProcessError):  # reaped already (other tests' children aside)
        os.waitpid(forked[0], os.WNOHANG)


# -- a scenario loaded in two processes


def _load(text: str, min_chars: int, **kw: Any) -> Any:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(halves, "MIN_CHARS", min_chars)
        m.setattr(halves, "_may_fork", lambda: True)
        return scenario.load_scenario_text(text, "dump.yaml", **kw)


def _error(text: str, min_chars: int, **kw: Any) -> str:
    with pytest.raises(scenario.InputError) as e:
        _load(text, min_chars, **kw)
    return str(e.value)


def _node(name: str, extra: str = "") -> str:
    return (f"---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n{extra}"
            "status:\n  allocatable:\n    cpu: '4'\n    memory: 8Gi\n    pods: '110'\n")


def _pod(name: str, extra: str = "") -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n"
            f"  namespace: default\nspec:\n{extra}  containers:\n  - name: c\n"
            "    image: x\n    resources:\n      requests:\n        cpu: 100m\n")


def test_a_scenario_checked_in_the_child_loads_as_in_one_process() -> None:
    # (the objects with something to say last: in the child's part)
    text = ("".join(_node(f"n{i}") for i in range(4)) + "".join(_pod(f"p{i}") for i in range(6))
            + _pod("odd", "  surprise: 1\n")  # an unknown field: a warning
            + _node("bad", "  labels:\n    a: not valid!\n"))  # refused, or kept with a warning
    for kw in ({}, {"validate": False}):
        if kw:
            one, two = _load(text, 1 << 40, **kw), _load(text, 1, **kw)
            assert [n.name for n in two.nodes] == [n.name for n in one.nodes]
            assert [p.key for p in two.pods] == [p.key for p in one.pods]
            assert two.nodes == one.nodes and two.pods == one.pods
            assert two.warnings == one.warnings and any("surprise" in w for w in one.warnings)
            assert any("not valid!" in w for w in one.warnings)
        else:
            assert _error(text, 1) == _error(text, 1 << 40)


def test_an_invalid_object_in_the_childs_part_is_refused_as_in_one_process() -> None:
    text = ("".join(_node(f"n{i}") for i in range(6))
            + _pod("p0") + _pod("Bad_Name") + _pod("p1", "  nodeName: 7\n"))
    one = _error(text, 1 << 40)
    assert "Bad_Name" in one or "nodeName" in one
    assert _error(text, 1) == one
    # a wrong type is a decoding error, refused even when validation is off
    assert _error(text, 1, validate=False) == _error(text, 1 << 40, validate=False)


def test_malformed_yaml_after_a_bad_object_is_what_is_reported() -> None:
    text = ("".join(_node(f"n{i}") for i in range(3)) + _node("bad", "spec:\n  podCIDR: 1\n")
            + "".join(_node(f"m{i}") for i in range(3)) + "---\nkind: [Pod\n")
    one = _error(text, 1 << 40)
    assert "malformed YAML" in one and f"dump.yaml:{text.count(chr(10)) + 1}:" in one
    assert _error(text, 1) == one


def test_a_kubectl_dump_loads_as_in_one_process() -> None:
    text = (HERE.parent / "dumps" / "scale-kubectl.yaml").read_text()
    one, two = _load(text, 1 << 40), _load(text, 1)
    assert len(two.nodes) > 1 and len(two.pods) > 1
    assert (two.nodes, two.pods, two.warnings, two.documents) == (
        one.nodes, one.pods, one.warnings, one.documents)
