"""Block-style YAML read line by line (``api.blockyaml``, issue 22) reads what PyYAML reads:
on dumps as kubectl, ``kubesched snapshot`` and PyYAML write them it answers PyYAML's
documents, and on anything else it answers None (the text goes to PyYAML, errors included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import scenario
from kubesched.api.blockyaml import block_documents

HERE = Path(__file__).parent


def _pyyaml(text: str) -> Any:
    return list(yaml.load_all(text, Loader=scenario._Loader))


def _block(text: str) -> Any:
    return block_documents(text, scenario._Loader(""))


KUBECTL_POD = """\
apiVersion: v1
kind: Pod
metadata:
  annotations:
    note: "a \\"quoted\\" word, a tab\\t, \\u00e9 and \\x41"
    other: 'it''s'
  creationTimestamp: "2026-11-30T08:00:00Z"
  labels:
    app: web
    pod-template-hash: 5d4f8c7b9
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          .: {}
          f:app: {}
      f:status:
        f:conditions:
          k:{"type":"Ready"}:
            .: {}
            f:status: {}
    manager: kubelet
    time: "2026-11-30T08:00:01Z"
  name: web-5d4f8c7b9-abcde
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-5d4f8c7b9
    uid: 0b9d6c3e-1111-2222-3333-444455556666
  resourceVersion: "12345"
spec:
  containers:
  - args:
    - --port=80
    - -v
    command:
    - /bin/sh
    - -c
    - |
      echo one
        indented: two

      # not a comment
    image: nginx:1.27
    name: web
    ports:
    - containerPort: 80
      protocol: TCP
    resources:
      limits:
        memory: 1Gi
      requests:
        cpu: 250m
        memory: 512Mi
  nodeName: node-1
  priority: 0
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
status:
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2026-11-30T08:00:02Z"
    status: "True"
    type: Ready
  phase: Running
  podIP: 10.0.0.7
  startTime: 2026-11-30T08:00:00Z
---
# a comment line, and a document with a literal that is stripped
apiVersion: v1
kind: ConfigMap
data:
  script: |-
    line one

    line three
  empty: ""
  numbers: []
  answer: yes
  octal: 0o17
  float: 1e3
  neg: -1
  colon: :x
  null-ish: ~
metadata:
  name: c
"""

SUPPORTED = {
    "a kubectl dump": KUBECTL_POD,
    "PyYAML's anchors": "a: &id001\n  cpu: '4'\n  pods: '110'\nb: *id001\n",
    "empty documents": "---\n---\na: 1\n---\n",
    "a leading comment only": "# nothing\n",
    "empty": "",
    "sequences at the key's column and nested": "a:\n- b:\n  - 1\n  c: 2\n",
    "a null item": "a:\n-\n- x\n-\n  b: 1\n",
    "trailing spaces": "a: x   \nb:   'y'  \n",
}

UNSUPPORTED = {
    "flow mapping": "a: {b: 1}\n",
    "flow sequence": "a: [1, 2]\n",
    "a tag": "a: !!str 1\n",
    "a comment after a value": "a: 1 # one\n",
    "a multi-line plain scalar": "a: one\n  two\n",
    "a multi-line quoted scalar": "a: \"one\n  two\"\n",
    "folded": "a: >\n  x\n",
    "kept": "a: |+\n  x\n\n",
    "a literal at the very end": "a: |\n  x",
    "a tab": "a:\n\tb: 1\n",
    "CRLF": "a: 1\r\nb: 2\r\n",
    "a directive": "%YAML 1.1\n---\na: 1\n",
    "a document end": "a: 1\n...\n",
    "content after ---": "--- a\n",
    "an int key": "labels:\n  1: a\n",
    "a merge key": "base: &b\n  x: 1\nd:\n  <<: *b\n",
    "an unknown alias": "a: *nope\n",
    "a recursive anchor": "a: &x\n  b: *x\n",
    "an anchor on a scalar": "a: &x 1\nb: *x\n",
    "a mapping value inside a value": "a: b: c\n",
    "bad indentation": "a:\n    b: 1\n  c: 2\n",
    "a sequence after a mapping": "a: 1\n- x\n",
    "a top-level scalar": "just text\n",
    "a compact nested sequence": "- - x\n",
    "a complex key": "? a\n: b\n",
    "an unterminated quote": "a: 'x\n",
    "a bad escape": 'a: "\\q"\n',
    "a flow key": "a: 1\n[b]: 2\n",
}


@pytest.mark.parametrize("text", SUPPORTED.values(), ids=SUPPORTED.keys())
def test_dumps_read_as_pyyaml_reads_them(text: str) -> None:
    got = _block(text)
    assert got is not None
    assert got == _pyyaml(text)


def test_an_anchored_mapping_is_one_object_as_in_pyyaml() -> None:
    a, = _block(SUPPORTED["PyYAML's anchors"])
    assert a["a"] is a["b"]


def test_the_literal_block_and_escapes() -> None:
    pod, cm = _block(KUBECTL_POD)
    assert pod["spec"]["containers"][0]["command"][2] == (
        "echo one\n  indented: two\n\n# not a comment\n")
    assert pod["metadata"]["annotations"]["note"] == 'a "quoted" word, a tab\t, é and A'
    assert cm["data"]["script"] == "line one\n\nline three"


@pytest.mark.parametrize("text", UNSUPPORTED.values(), ids=UNSUPPORTED.keys())
def test_anything_else_is_left_to_pyyaml(text: str) -> None:
    assert _block(text) is None


def test_the_scenario_loader_reads_dumps_with_it() -> None:
    sc = scenario.load_scenario_text(KUBECTL_POD.split("---")[0], "dump.yaml")
    assert [p.name for p in sc.pods] == ["web-5d4f8c7b9-abcde"]
    with pytest.raises(Exception) as e:
        scenario.load_scenario_text("a: b: c\n", "bad.yaml")
    assert "bad.yaml:1" in str(e.value)


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
    st.text(max_size=12), st.text(alphabet=" #:-'\"\\|>&*!{}[],?x\u00e9\u2028\t\r", max_size=8),
    st.sampled_from(["yes", "off", "0x1f", "017", "1e3", "1_000", "12:30", ".inf", "~", "",
                     "2026-01-02", "2026-01-02T03:04:05Z", "<<", "=", "null", "True", "---",
                     "...", "- x", "a: b", "a #b", "line\nline\n", "x\n\n  y", " lead"]))
_keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans(),
                  st.sampled_from(["<<", "=", "1", "true", "~", "k:{\"a\":1}", ".", "- x"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(_values, st.sampled_from([None, False]), st.sampled_from([2, 4]),
       st.sampled_from([20, 80]), st.booleans())
def test_any_dump_the_same_as_pyyaml(value: Any, flow: bool | None, indent: int, width: int,
                                     unicode: bool) -> None:
    text = yaml.safe_dump_all([value, value], default_flow_style=flow, indent=indent,
                              width=width, allow_unicode=unicode)
    got = _block(text)
    if got is not None:
        assert repr(got) == repr(_pyyaml(text))


def test_the_large_dumps_are_read_with_it() -> None:
    text = (HERE.parent / "dumps" / "scale-kubectl.yaml").read_text()
    got = _block(text)
    assert got is not None and got == _pyyaml(text)
