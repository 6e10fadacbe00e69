"""Selector semantics (apimachinery labels / metav1.LabelSelector / component-helpers
nodeaffinity) and agreement of the per-object and columnar forms."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.api import selectors as sel
from kubesched.api.selectors import (
    EVERYTHING,
    NOTHING,
    Requirement,
    SelectorError,
    compile_node_selector,
    compile_preferred_terms,
    factorize_column,
    get_required_node_affinity,
    label_selector_as_selector,
    label_selector_matches,
    label_value_errors,
    new_node_selector,
    new_requirement,
    node_matches_terms,
    parse_int64,
    qualified_name_errors,
    selector_from_set,
)
from kubesched.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
)
from kubesched.testing import snapshot_from_nodes


def node(name: str = "n", **labels: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=dict(labels)))


def node_l(name: str, labels: dict[str, str]) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=dict(labels)))


def expr(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, op, tuple(values))


def term(*exprs: NodeSelectorRequirement, fields: tuple = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=tuple(fields))


def name_in(*names: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement("metadata.name", "In", tuple(names))


def name_not_in(*names: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement("metadata.name", "NotIn", tuple(names))


# ---------------------------------------------------------------- validation helpers


@pytest.mark.parametrize(("text", "want"), [
    ("0", 0), ("0204", 204), ("+5", 5), ("-5", -5), ("9223372036854775807", 2**63 - 1),
    ("-9223372036854775808", -(2**63)), ("9223372036854775808", None), ("", None),
    (" 5", None), ("5 ", None), ("1_000", None), ("0x10", None), ("1.5", None),
    ("\u0663", None), ("5\n", None), ("+", None), ("--1", None),
])
def test_parse_int64_is_go_parse_int(text: str, want: int | None) -> None:
    assert parse_int64(text) == want


@pytest.mark.parametrize(("key", "valid"), [
    ("foo", True), ("Foo_bar.baz-1", True), ("example.com/foo", True), ("a" * 63, True),
    ("a" * 64, False), ("-foo", False), ("foo-", False), ("", False), ("/foo", False),
    ("example.com/", False), ("Example.com/foo", False), ("a/b/c", False),
    ("kubernetes.io/hostname", True), ("foo bar", False), ("foo\n", False),
])
def test_qualified_name(key: str, valid: bool) -> None:
    assert (not qualified_name_errors(key)) is valid


@pytest.mark.parametrize(("value", "valid"), [
    ("", True), ("a", True), ("a-b_c.d", True), ("0204", True), ("a" * 63, True),
    ("a" * 64, False), ("-a", False), ("a-", False), ("invalid value: ___@#$%^", False),
    ("a\n", False),
])
def test_label_value(value: str, valid: bool) -> None:
    assert (not label_value_errors(value)) is valid


# ---------------------------------------------------------------- requirements


@pytest.mark.parametrize(("op", "values", "label", "want"), [
    ("In", ("a", "b"), "a", True),
    ("In", ("a", "b"), "c", False),
    ("In", ("a",), None, False),
    ("In", ("",), "", True),
    ("In", ("",), None, False),
    ("NotIn", ("a", "b"), "a", False),
    ("NotIn", ("a", "b"), "c", True),
    ("NotIn", ("a",), None, True),
    ("Exists", (), "", True),
    ("Exists", (), None, False),
    ("DoesNotExist", (), "x", False),
    ("DoesNotExist", (), None, True),
    ("Gt", ("0204",), "0206", True),
    ("Gt", ("0204",), "204", False),
    ("Gt", ("0",), "-1", False),
    ("Gt", ("5",), "abc", False),
    ("Gt", ("5",), None, False),
    ("Gt", ("5",), "", False),
    ("Lt", ("5",), "4", True),
    ("Lt", ("5",), "+4", True),
    ("Lt", ("5",), "5", False),
    ("Lt", ("5",), "99999999999999999999", False),
    ("Lt", ("5",), None, False),
])
def test_requirement_matches(op: str, values: tuple[str, ...], label: str | None,
                             want: bool) -> None:
    r = new_requirement("k", op, values)
    labels = {} if label is None else {"k": label}
    assert r.matches(labels) is want
    col = np.array([label, label], dtype=object)
    assert r.matches_column(col, np.array([1])).tolist() == [want]


@pytest.mark.parametrize(("key", "op", "values"), [
    ("k", "In", ()),
    ("k", "NotIn", ()),
    ("k", "Exists", ("a",)),
    ("k", "DoesNotExist", ("a",)),
    ("k", "Gt", ()),
    ("k", "Gt", ("1", "2")),
    ("k", "Lt", ("abc",)),
    ("k", "Lt", ("1.5",)),
    ("k", "Gt", ("-1",)),  # a valid int64 but not a valid label value
    ("k", "Equals", ("a",)),
    ("bad key", "Exists", ()),
    ("k", "In", ("invalid value: ___@#$%^",)),
])
def test_new_requirement_rejects(key: str, op: str, values: tuple[str, ...]) -> None:
    with pytest.raises(SelectorError):
        new_requirement(key, op, values)


def test_requirement_error_messages_follow_go() -> None:
    with pytest.raises(SelectorError) as ei:
        new_requirement("k", "Gt", ("x",), "nodeSelectorTerms[0].matchExpressions[0]")
    assert ei.value.errors == [
        'nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "x": '
        "for 'Gt', 'Lt' operators, the value must be an integer"]
    with pytest.raises(SelectorError) as ei:
        new_requirement("k", "In", ())
    assert str(ei.value) == ("values: Invalid value: []string{}: for 'in', 'notin' operators, "
                             "values set can't be empty")


# ---------------------------------------------------------------- label selectors


def test_label_selector_nil_and_empty() -> None:
    assert label_selector_as_selector(None) is NOTHING
    assert not label_selector_matches(None, {"a": "b"})
    assert label_selector_as_selector(LabelSelector()) is EVERYTHING
    assert label_selector_matches(LabelSelector(), {})
    assert EVERYTHING.empty() and not NOTHING.empty()


def test_label_selector_match_labels_and_expressions() -> None:
    s = LabelSelector(
        match_labels=(("app", "web"),),
        match_expressions=(LabelSelectorRequirement("tier", "In", ("front", "back")),
                           LabelSelectorRequirement("canary", "DoesNotExist")))
    assert label_selector_matches(s, {"app": "web", "tier": "front"})
    assert not label_selector_matches(s, {"app": "web", "tier": "front", "canary": ""})
    assert not label_selector_matches(s, {"app": "web"})
    assert not label_selector_matches(s, {"app": "db", "tier": "back"})
    ns = LabelSelector(match_expressions=(LabelSelectorRequirement("tier", "NotIn", ("x",)),))
    assert label_selector_matches(ns, {})
    ex = LabelSelector(match_expressions=(LabelSelectorRequirement("tier", "Exists"),))
    assert label_selector_matches(ex, {"tier": ""}) and not label_selector_matches(ex, {})


@pytest.mark.parametrize("bad", [
    LabelSelector(match_expressions=(LabelSelectorRequirement("a", "Gt", ("1",)),)),
    LabelSelector(match_expressions=(LabelSelectorRequirement("a", "In", ()),)),
    LabelSelector(match_labels=(("a", "-bad-"),)),
    LabelSelector(match_labels=(("bad key", "v"),)),
])
def test_label_selector_invalid_raises(bad: LabelSelector) -> None:
    with pytest.raises(SelectorError):
        label_selector_as_selector(bad)


def test_label_selector_gt_message() -> None:
    bad = LabelSelector(match_expressions=(LabelSelectorRequirement("a", "Gt", ("1",)),))
    with pytest.raises(SelectorError, match='"Gt" is not a valid label selector operator'):
        label_selector_as_selector(bad)


def test_selector_from_set() -> None:
    assert selector_from_set({}).matches({})
    s = selector_from_set({"foo": "bar", "empty": ""})
    assert s.matches({"foo": "bar", "empty": "", "x": "y"})
    assert not s.matches({"foo": "bar"})
    assert not s.matches({"foo": "baz", "empty": ""})
    # no validation: an invalid value is just a value to compare
    assert selector_from_set({"k": "a b"}).matches({"k": "a b"})


# ---------------------------------------------------------------- node selectors


def test_terms_are_ored_and_requirements_anded() -> None:
    ns = compile_node_selector((
        term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")),
        term(expr("zone", "In", "a")),
    ))
    assert ns.matches(node(GPU="NVIDIA"))
    assert not ns.matches(node(GPU="AMD"))
    assert ns.matches(node(GPU="AMD", zone="a"))
    assert not ns.matches(node())


def test_empty_terms_match_nothing() -> None:
    assert not compile_node_selector(()).matches(node(a="b"))
    assert not compile_node_selector((term(),)).matches(node(a="b"))
    assert compile_node_selector((term(), term(expr("a", "Exists")))).matches(node(a="b"))
    assert compile_node_selector((term(),)).terms == ()


def test_parse_errors_are_lazy() -> None:
    bad = term(expr("foo", "NotIn", "invalid value: ___@#$%^"))
    good = term(expr("foo", "In", "bar"))
    ns = compile_node_selector((bad, good))
    assert ns.match(node(foo="bar")) == (True, None)
    matched, err = ns.match(node(foo="baz"))
    assert not matched and err is not None
    assert err.startswith("nodeSelectorTerms[0].matchExpressions[0].values[0][foo]: "
                          'Invalid value: "invalid value: ___@#$%^"')
    # the bad term never matches, even where its requirement would hold
    assert not compile_node_selector((bad,)).matches(node(foo="bar"))
    with pytest.raises(SelectorError):
        new_node_selector((bad, good))
    assert new_node_selector((good,)).matches(node(foo="bar"))


def test_unsupported_operator_is_a_parse_error() -> None:
    ns = compile_node_selector((term(expr("a", "Equals", "b")),))
    assert not ns.matches(node(a="b"))
    assert "Unsupported value" in (ns.match(node(a="b"))[1] or "")


def test_match_fields() -> None:
    ns = compile_node_selector((term(fields=(name_in("node1"),)),))
    assert ns.matches(node("node1")) and not ns.matches(node("node2"))
    ns = compile_node_selector((term(fields=(name_not_in("node1"),)),))
    assert not ns.matches(node("node1")) and ns.matches(node("node2"))
    # two values: a parse error ("must have one element"), the term matches nothing
    ns = compile_node_selector((term(fields=(name_in("node1", "node2"),)),))
    assert not ns.matches(node("node1"))
    assert "must have one element" in (ns.match(node("node1"))[1] or "")
    # field operators other than In/NotIn are parse errors
    ns = compile_node_selector((term(fields=(NodeSelectorRequirement(
        "metadata.name", "Exists", ()),)),))
    assert not ns.matches(node("node1"))
    # a node without a name has no fields: matchFields is not checked
    ns = compile_node_selector((term(fields=(name_in("node1"),)),))
    assert ns.matches(node(""))
    # other field keys read as "" (fields.Set.Get)
    other = NodeSelectorRequirement("metadata.uid", "In", ("",))
    assert compile_node_selector((term(fields=(other,)),)).matches(node("x"))
    other = NodeSelectorRequirement("metadata.uid", "In", ("u",))
    assert not compile_node_selector((term(fields=(other,)),)).matches(node("x"))


def test_match_fields_and_expressions_anded_in_one_term() -> None:
    ns = compile_node_selector((term(expr("foo", "In", "bar"), fields=(name_in("node1"),)),))
    assert ns.matches(node("node1", foo="bar"))
    assert not ns.matches(node("node2", foo="bar"))
    assert not ns.matches(node("node1", foo="baz"))


def test_node_matches_terms_helper() -> None:
    assert node_matches_terms(node(a="1"), (term(expr("a", "Gt", "0")),))
    assert not node_matches_terms(node(a="x"), (term(expr("a", "Gt", "0")),))


def test_preferred_terms() -> None:
    pt = compile_preferred_terms((
        PreferredSchedulingTerm(2, term(expr("foo", "In", "bar"))),
        PreferredSchedulingTerm(0, term(expr("foo", "In", "bar"))),  # weight 0: dropped
        PreferredSchedulingTerm(7, term()),  # empty preference: dropped
        PreferredSchedulingTerm(5, term(expr("key", "Exists"))),
    ))
    assert len(pt.terms) == 2
    assert pt.score(node(foo="bar", key="v")) == 7
    assert pt.score(node(foo="bar")) == 2
    assert pt.score(node()) == 0
    with pytest.raises(SelectorError):
        compile_preferred_terms((PreferredSchedulingTerm(1, term(expr("k", "Gt", "x"))),))
    # an invalid term with weight 0 is skipped before parsing
    assert compile_preferred_terms(
        (PreferredSchedulingTerm(0, term(expr("k", "Gt", "x"))),)).terms == ()


def test_required_node_affinity() -> None:
    def pod(node_selector=None, required=None) -> Pod:
        aff = Affinity(node_affinity=NodeAffinity(required=required)) if required else None
        return Pod(metadata=ObjectMeta(name="p"),
                   spec=PodSpec(node_selector=dict(node_selector or {}), affinity=aff))

    assert get_required_node_affinity(pod()).matches(node())
    r = get_required_node_affinity(pod({"foo": "bar"}, (term(expr("foo", "Exists")),)))
    assert r.matches(node(foo="bar"))
    assert not r.matches(node(foo="barrrrrr"))
    assert r.match(node(foo="x")) == (False, None)
    r = get_required_node_affinity(pod(required=(term(expr("foo", "In", "-bad-")),)))
    matched, err = r.match(node(foo="bar"))
    assert not matched and err
    assert sel.pod_matches_node_selector_and_affinity(pod({"a": "b"}), node(a="b"))
    # pods of one shape share the compiled object
    assert get_required_node_affinity(pod({"a": "b"})) is get_required_node_affinity(
        pod({"a": "b"}))


# ---------------------------------------------------------------- columns


def test_factorize_column() -> None:
    # kept per node-table label: tests/framework/test_table_cache.py
    col = np.array(["a", None, "b", "a"], dtype=object)
    codes, values = factorize_column(col)
    assert codes.tolist() == [0, -1, 1, 0] and values == ["a", "b"]
    assert values.code == {"a": 0, "b": 1}
    other = np.array(["z"], dtype=object)
    assert factorize_column(other)[1] == ["z"]


KEYS = ("a", "b", "zone", "kernel")
VALUES = ("x", "y", "z", "1", "10", "-3", "0204", "abc", "", "+7")
REQ_VALUES = ("x", "y", "z", "1", "10", "0204", "abc", "")
OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def random_nodes(rng: random.Random, n: int) -> list[Node]:
    nodes = []
    for i in range(n):
        labels = {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.6}
        name = f"n{i}" if rng.random() > 0.03 else ""
        nodes.append(node_l(name, labels))
    return nodes


def random_requirement(rng: random.Random) -> NodeSelectorRequirement:
    """Mostly valid requirements; a few that do not parse (and so never match)."""
    op = rng.choice(OPS)
    broken = rng.random() < 0.04
    if op in ("Gt", "Lt"):
        values = [rng.choice(("1", "10", "0204", "0"))]
        if broken:
            values = rng.choice(([], ["1", "2"], ["abc"]))
    elif op in ("Exists", "DoesNotExist"):
        values = ["x"] if broken else []
    else:
        values = [] if broken else rng.sample(REQ_VALUES, rng.choice((1, 1, 2, 3)))
    if values and rng.random() < 0.03:
        values[0] = rng.choice(("-3", "+7", "bad value"))  # not valid label values
    return NodeSelectorRequirement(rng.choice(KEYS), op, tuple(values))


def random_field(rng: random.Random, n: int) -> NodeSelectorRequirement:
    key = "metadata.name" if rng.random() < 0.9 else "metadata.uid"
    op = "In" if rng.random() < 0.6 else ("NotIn" if rng.random() < 0.97 else "Exists")
    k = 1 if rng.random() < 0.96 else 2
    vals = tuple(rng.choice([f"n{rng.randrange(n + 2)}", ""]) for _ in range(k))
    return NodeSelectorRequirement(key, op, vals)


def random_term(rng: random.Random, n: int) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=tuple(random_requirement(rng) for _ in range(rng.randrange(4))),
        match_fields=tuple(random_field(rng, n) for _ in range(rng.choice((0, 0, 1, 2)))))


@pytest.mark.parametrize("seed", range(6))
def test_columnar_forms_agree_with_per_node(seed: int) -> None:
    rng = random.Random(seed)
    for _case in range(60):
        n = rng.randrange(1, 25)
        nodes = random_nodes(rng, n)
        # unnamed nodes cannot share the cache; keep at most one
        seen = False
        for nd in nodes:
            if nd.metadata.name == "":
                if seen:
                    nd.metadata.name = f"u{id(nd)}"
                seen = True
        snap = snapshot_from_nodes(nodes, [])
        table = snap.table
        infos = snap.node_infos
        idx = np.array(rng.sample(range(len(infos)), rng.randrange(len(infos) + 1)),
                       dtype=np.int64)
        terms = tuple(random_term(rng, n) for _ in range(rng.randrange(4)))
        ns = compile_node_selector(terms)
        want = [ns.matches(infos[i].node) for i in idx.tolist()]
        assert ns.match_table(table, idx).tolist() == want
        for t in ns.terms:
            assert t.match_table(table, idx).tolist() == [
                t.matches(infos[i].node) for i in idx.tolist()]
        ls = sel.Selector(Requirement(r.key, r.operator, frozenset(r.values))
                          for r in (random_requirement(rng) for _ in range(rng.randrange(3)))
                          if r.operator in ("In", "NotIn", "Exists", "DoesNotExist"))
        assert ls.matches_columns(table.label_column, idx).tolist() == [
            ls.matches(infos[i].node.metadata.labels) for i in idx.tolist()]
        prefs = tuple(PreferredSchedulingTerm(rng.randrange(0, 5), random_term(rng, n))
                      for _ in range(rng.randrange(4)))
        try:
            pt = compile_preferred_terms(prefs)
        except SelectorError:
            continue
        assert pt.score_table(table, idx).tolist() == [
            pt.score(infos[i].node) for i in idx.tolist()]
