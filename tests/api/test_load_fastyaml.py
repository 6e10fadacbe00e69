"""The one-pass YAML construction (``api.fastyaml``, issue 22) builds what PyYAML's own
constructor builds, and raises what it raises, on every kind of document: the common case
(string keys, standard tags), and the ones it hands back (merge keys, non-string keys,
unknown tags, recursive anchors)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import scenario
from kubesched.api.fastyaml import FastConstruct


class _PyYAMLOnly(scenario._Loader):
    """The scenario loader without the one-pass construction."""

    def construct_document(self, node: Any) -> Any:
        return scenario._BaseLoader.construct_document(self, node)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        return scenario._BaseLoader.resolve(self, kind, value, implicit)


def _both(text: str) -> tuple[Any, Any]:
    def load(loader: type) -> Any:
        try:
            return ("ok", list(yaml.load_all(text, Loader=loader)))
        except yaml.YAMLError as e:
            return ("error", type(e).__name__, str(e))
    return load(scenario._Loader), load(_PyYAMLOnly)


def test_the_scenario_loader_uses_it() -> None:
    assert issubclass(scenario._Loader, FastConstruct)


CASES = {
    "plain": "a: 1\nb: [x, 'y', 2.5, true, null, ~, yes, No, 0o17, 017, 0x1f, 1e3, 1.0e+3]\n",
    "kubernetes": ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {app: x}\n"
                   "  creationTimestamp: 2026-11-30T08:00:00Z\nspec:\n  containers:\n"
                   "  - name: c\n    resources: {requests: {cpu: 100m, memory: 1Gi}}\n"),
    "timestamps and dates": "t: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\n",
    "binary": "b: !!binary aGVsbG8=\n",
    "explicit tags": "a: !!str 12\nb: !!int '7'\nc: !!float '1'\n",
    "int, bool and float keys": "labels:\n  1: a\n  true: b\n  1.5: c\n  0.1: d\n",
    "a null key": "labels:\n  ~: a\n",
    "a date key": "x:\n  2020-01-01: a\n",
    "merge keys": "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
    "a set": "s: !!set {a, b}\n",
    "an omap": "o: !!omap [a: 1, b: 2]\n",
    "pairs": "p: !!pairs [a: 1, a: 2]\n",
    "an unknown tag": "x: !foo bar\n",
    "a python tag": "x: !!python/name:os.system\n",
    "a mapping key": "? {a: 1}\n: x\n",
    "a sequence key": "? [a]\n: x\n",
    "duplicate keys": "a: 1\na: 2\n",
    "recursive anchor": "a: &x\n  b: *x\n",
    "recursive list": "a: &x [1, *x]\n",
    "multi-document": "a: 1\n---\n- x\n---\n---\nz\n...\n",
    "empty": "",
    "a !!map on a scalar": "x: !!map a\n",
    "a !!str on a mapping": "x: !!str {a: 1}\n",
    "a value key": "x:\n  =: 1\n",
    "malformed": "a: [1, 2\n",
    "a tab": "a:\n\tb: 1\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_the_same_as_pyyaml(text: str) -> None:
    fast, slow = _both(text)
    assert repr(fast) == repr(slow)  # (recursive values do not compare with ==)


def test_an_aliased_mapping_is_one_object_as_in_pyyaml() -> None:
    doc = yaml.safe_load("a: &x {k: v}\nb: *x\nc: &y [1]\nd: *y\n")
    fast = next(yaml.load_all("a: &x {k: v}\nb: *x\nc: &y [1]\nd: *y\n",
                              Loader=scenario._Loader))
    assert fast == doc
    assert fast["a"] is fast["b"] and fast["c"] is fast["d"]


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["yes", "off", "0x1f", "017", "1e3", "1_000", "12:30", ".inf", "~", "",
                     "2026-01-02", "2026-01-02T03:04:05Z", "<<", "=", "null", "True"]))
_keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans(),
                  st.sampled_from(["<<", "=", "1", "true", "~"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_values, st.sampled_from([None, True, False]))
def test_any_document_the_same_as_pyyaml(value: Any, flow: bool | None) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow)
    fast, slow = _both(text)
    assert repr(fast) == repr(slow)
