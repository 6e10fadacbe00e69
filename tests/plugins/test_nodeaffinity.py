"""NodeAffinity: upstream v1.35 ``node_affinity_test.go`` tables (TestNodeAffinity,
TestNodeAffinityPriority, Test_isSchedulableAfterNodeChange) and batch / per-node agreement."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from kubesched.api.types import (
    Affinity,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
)
from kubesched.api.types import NodeAffinity as NA
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList, PluginError
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
)
from kubesched.testing import snapshot_from_nodes
from shared_files import golden_cases, load_golden

NAME_FIELD = "metadata.name"


def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, op, tuple(values))


def term(*exprs: NodeSelectorRequirement, fields: tuple = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=tuple(fields))


def name_in(*names: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(NAME_FIELD, "In", tuple(names))


def make_pod(node_selector: dict[str, str] | None = None,
             required: tuple[NodeSelectorTerm, ...] | None = None,
             preferred: tuple[PreferredSchedulingTerm, ...] = (),
             node_affinity: bool = True, name: str = "p") -> Pod:
    aff = None
    if node_affinity and (required is not None or preferred):
        aff = Affinity(node_affinity=NA(required=required, preferred=preferred))
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=name),
               spec=PodSpec(node_selector=dict(node_selector or {}), affinity=aff))


def make_node(name: str = "", labels: dict[str, str] | None = None) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=dict(labels or {})))


def required(*terms: NodeSelectorTerm) -> tuple[NodeSelectorTerm, ...]:
    return tuple(terms)


def added(required_terms: tuple[NodeSelectorTerm, ...] | None = None,
          preferred: tuple[PreferredSchedulingTerm, ...] = ()) -> dict:
    return {"addedAffinity": NA(required=required_terms, preferred=preferred)}


def unresolvable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


# ---------------------------------------------------------------- TestNodeAffinity


@dataclass
class FilterCase:
    name: str
    pod: Pod
    labels: dict[str, str] = field(default_factory=dict)
    node_name: str = ""
    want_status: Status | None = None
    want_pre_filter_status: Status | None = None
    want_pre_filter_names: set[str] | None = None
    args: dict | None = None
    run_pre_filter: bool = True


FILTER_CASES = [
    FilterCase("missing labels", make_pod({"foo": "bar"}),
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("same labels", make_pod({"foo": "bar"}), labels={"foo": "bar"}),
    FilterCase("node labels are superset", make_pod({"foo": "bar"}),
               labels={"foo": "bar", "baz": "blah"}),
    FilterCase("node labels are subset", make_pod({"foo": "bar", "baz": "blah"}),
               labels={"foo": "bar"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("matchExpressions In matches",
               make_pod(required=required(term(req("foo", "In", "bar", "value2")))),
               labels={"foo": "bar"}),
    FilterCase("matchExpressions Gt matches",
               make_pod(required=required(term(req("kernel-version", "Gt", "0204")))),
               labels={"kernel-version": "0206"}),
    FilterCase("matchExpressions NotIn matches",
               make_pod(required=required(term(req("mem-type", "NotIn", "DDR", "DDR2")))),
               labels={"mem-type": "DDR3"}),
    FilterCase("matchExpressions Exists matches",
               make_pod(required=required(term(req("GPU", "Exists")))),
               labels={"GPU": "NVIDIA-GRID-K1"}),
    FilterCase("affinity that doesn't match node's labels",
               make_pod(required=required(term(req("foo", "In", "value1", "value2")))),
               labels={"foo": "bar"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("empty MatchExpressions matches no objects",
               make_pod(required=required(term())),
               labels={"foo": "bar"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("no Affinity", make_pod(), labels={"foo": "bar"},
               want_pre_filter_status=Status(Code.SKIP)),
    FilterCase("Affinity but nil NodeSelector",
               Pod(metadata=ObjectMeta(name="p"),
                   spec=PodSpec(affinity=Affinity(node_affinity=NA(required=None)))),
               labels={"foo": "bar"}, want_pre_filter_status=Status(Code.SKIP)),
    FilterCase("multiple matchExpressions ANDed that match",
               make_pod(required=required(term(req("GPU", "Exists"),
                                               req("GPU", "NotIn", "AMD", "INTER")))),
               labels={"GPU": "NVIDIA-GRID-K1"}),
    FilterCase("multiple matchExpressions ANDed that don't match",
               make_pod(required=required(term(req("GPU", "Exists"),
                                               req("GPU", "In", "AMD", "INTER")))),
               labels={"GPU": "NVIDIA-GRID-K1"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("multiple NodeSelectorTerms ORed",
               make_pod(required=required(term(req("foo", "In", "bar", "value2")),
                                          term(req("diffkey", "In", "wrong", "value2")))),
               labels={"foo": "bar"}),
    FilterCase("Affinity and nodeSelector both satisfied",
               make_pod({"foo": "bar"}, required=required(term(req("foo", "Exists")))),
               labels={"foo": "bar"}),
    FilterCase("Affinity matches but nodeSelector not",
               make_pod({"foo": "bar"}, required=required(term(req("foo", "Exists")))),
               labels={"foo": "barrrrrr"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("invalid value in Affinity term",
               make_pod(required=required(term(req("foo", "NotIn", "invalid value: ___@#$%^")))),
               labels={"foo": "bar"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("matchFields In matches", make_pod(required=required(term(fields=(
        name_in("node1"),)))), node_name="node1", want_pre_filter_names={"node1"}),
    FilterCase("matchFields In doesn't match", make_pod(required=required(term(fields=(
        name_in("node1"),)))), node_name="node2", want_pre_filter_names={"node1"},
        want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("two terms: matchFields doesn't match, matchExpressions matches",
               make_pod(required=required(term(fields=(name_in("node1"), name_in("node2"))),
                                          term(req("foo", "In", "bar")))),
               node_name="node2", labels={"foo": "bar"}),
    FilterCase("one term: matchFields doesn't match, matchExpressions matches",
               make_pod(required=required(term(req("foo", "In", "bar"),
                                               fields=(name_in("node1"),)))),
               node_name="node2", labels={"foo": "bar"}, want_pre_filter_names={"node1"},
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("one term: both matchFields and matchExpressions match",
               make_pod(required=required(term(req("foo", "In", "bar"),
                                               fields=(name_in("node1"),)))),
               node_name="node1", labels={"foo": "bar"}, want_pre_filter_names={"node1"}),
    FilterCase("two terms: neither matchFields nor matchExpressions match",
               make_pod(required=required(term(fields=(name_in("node1"),)),
                                          term(req("foo", "In", "not-match-to-bar")))),
               node_name="node2", labels={"foo": "bar"},
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("two terms of node.Name affinity",
               make_pod(required=required(term(fields=(name_in("node1"),)),
                                          term(fields=(name_in("node2"),)))),
               node_name="node2", want_pre_filter_names={"node1", "node2"}),
    FilterCase("two conflicting match field requirements",
               make_pod(required=required(term(fields=(name_in("node1"), name_in("node2"))))),
               node_name="node2", labels={"foo": "bar"},
               want_pre_filter_status=unresolvable(ERR_REASON_CONFLICT),
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("matches added affinity and Pod's node affinity",
               make_pod(required=required(term(req("zone", "In", "foo")))),
               node_name="node2", labels={"zone": "foo"},
               args=added(required(term(fields=(name_in("node2"),))))),
    FilterCase("matches added affinity but not Pod's node affinity",
               make_pod(required=required(term(req("zone", "In", "bar")))),
               node_name="node2", labels={"zone": "foo"},
               args=added(required(term(fields=(name_in("node2"),)))),
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("doesn't match added affinity", make_pod(), node_name="node2",
               labels={"zone": "foo"}, args=added(required(term(req("zone", "In", "bar")))),
               want_status=unresolvable(ERR_REASON_ENFORCED)),
    FilterCase("matches node selector even if PreFilter is not called",
               make_pod({"foo": "bar"}), labels={"foo": "bar", "baz": "blah"},
               run_pre_filter=False),
    FilterCase("matches node affinity even if PreFilter is not called",
               make_pod(required=required(term(req("GPU", "Exists"),
                                               req("GPU", "NotIn", "AMD", "INTER")))),
               labels={"GPU": "NVIDIA-GRID-K1"}, run_pre_filter=False),
    # beyond upstream's table
    FilterCase("matchFields In with an empty value list conflicts",
               make_pod(required=required(term(fields=(NodeSelectorRequirement(
                   NAME_FIELD, "In", ()),)))),
               node_name="node1", want_pre_filter_status=unresolvable(ERR_REASON_CONFLICT),
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("matchFields In with two values narrows but never matches (parse error)",
               make_pod(required=required(term(fields=(name_in("node1", "node2"),)))),
               node_name="node1", want_pre_filter_names={"node1", "node2"},
               want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("NotIn name field does not narrow",
               make_pod(required=required(term(fields=(NodeSelectorRequirement(
                   NAME_FIELD, "NotIn", ("node1",)),)))),
               node_name="node2"),
    FilterCase("Gt with a non-integer node label never matches",
               make_pod(required=required(term(req("kernel-version", "Gt", "0204")))),
               labels={"kernel-version": "5.4"}, want_status=unresolvable(ERR_REASON_POD)),
    FilterCase("added affinity checked before the pod's",
               make_pod({"foo": "bar"}), labels={"zone": "foo"},
               args=added(required(term(req("zone", "In", "bar")))),
               want_status=unresolvable(ERR_REASON_ENFORCED)),
]


def _status_or_success(st: Status | None) -> Status:
    return Status() if st is None else Status(st.code, st.reasons)


@pytest.mark.parametrize("tc", FILTER_CASES, ids=[c.name for c in FILTER_CASES])
def test_node_affinity_filter(tc: FilterCase) -> None:
    node = make_node(tc.node_name, tc.labels)
    ni = NodeInfo(node)
    p = NodeAffinity(tc.args, Handle())
    state = CycleState()
    snap = snapshot_from_nodes([node], [])
    if tc.run_pre_filter:
        result, st = p.pre_filter(state, tc.pod, snap)
        assert _status_or_success(st) == _status_or_success(tc.want_pre_filter_status)
        got_names = None if result is None else result.node_names
        assert got_names == tc.want_pre_filter_names
    got = p.filter(state, tc.pod, ni)
    assert _status_or_success(got) == _status_or_success(tc.want_status)
    # batch form on the same node
    batch = p.filter_batch(state, tc.pod, snap, np.array([0]))
    assert _status_or_success(batch.status_at(0, "")) == _status_or_success(tc.want_status)


def test_empty_node_selector_map_skips() -> None:
    p = NodeAffinity(None, Handle())
    _, st = p.pre_filter(CycleState(), make_pod({}), Snapshot())
    assert st is not None and st.is_skip()


def test_added_affinity_from_raw_args_and_invalid_args() -> None:
    raw = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "preference": {"matchExpressions": [
                {"key": "disk", "operator": "Exists"}]}}]}}
    p = NodeAffinity(raw, Handle())
    assert p.filter(CycleState(), make_pod(), NodeInfo(make_node("n", {"zone": "a"}))) is None
    st = p.filter(CycleState(), make_pod(), NodeInfo(make_node("n", {"zone": "b"})))
    assert st == unresolvable(ERR_REASON_ENFORCED)
    assert p.score(CycleState(), make_pod(), NodeInfo(make_node("n", {"disk": ""}))) == 3
    assert NodeAffinity({"addedAffinity": None}, Handle()).added_node_selector is None
    bad = added(required(term(req("zone", "In", "-bad-"))))
    with pytest.raises(InputError, match=r"addedAffinity\.requiredDuringScheduling"):
        NodeAffinity(bad, Handle())
    bad = added(preferred=(PreferredSchedulingTerm(1, term(req("z", "Gt", "x"))),))
    with pytest.raises(InputError, match=r"addedAffinity\.preferredDuringScheduling"):
        NodeAffinity(bad, Handle())


# ---------------------------------------------------------------- TestNodeAffinityPriority

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = (PreferredSchedulingTerm(2, term(req("foo", "In", "bar"))),)
AFFINITY2 = (
    PreferredSchedulingTerm(2, term(req("foo", "In", "bar"))),
    PreferredSchedulingTerm(4, term(req("key", "In", "value"))),
    PreferredSchedulingTerm(5, term(req("foo", "In", "bar"), req("key", "In", "value"),
                                    req("az", "In", "az1"))),
)

PRIORITY_CASES = [
    ("all nodes are same priority as NodeAffinity is nil", make_pod(),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [0, 0, 0], None, True),
    ("no node matches preferred scheduling requirements", make_pod(preferred=AFFINITY1),
     [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], [0, 0, 0], None, True),
    ("only node1 matches the preferred scheduling requirements", make_pod(preferred=AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [100, 0, 0], None, True),
    ("all nodes match with different priorities", make_pod(preferred=AFFINITY2),
     [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], [18, 100, 36], None, True),
    ("added affinity", make_pod(), [("node1", LABEL1), ("node2", LABEL2)], [100, 0],
     added(preferred=AFFINITY1), True),
    ("added affinity and pod has default affinity", make_pod(preferred=AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)], [40, 60, 100],
     added(preferred=(PreferredSchedulingTerm(3, term(req("key", "In", "value"))),)), True),
    ("priorities correct even if PreScore is not called", make_pod(preferred=AFFINITY2),
     [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], [18, 100, 36], None, False),
]


@pytest.mark.parametrize(("name", "pod", "nodes", "want", "args", "run_pre_score"),
                         PRIORITY_CASES, ids=[c[0] for c in PRIORITY_CASES])
def test_node_affinity_priority(name: str, pod: Pod, nodes: list, want: list[int],
                                args: dict | None, run_pre_score: bool) -> None:
    node_objs = [make_node(n, labels) for n, labels in nodes]
    snap = snapshot_from_nodes(node_objs, [])
    p = NodeAffinity(args, Handle())
    state = CycleState()
    if run_pre_score:
        st = p.pre_score(state, pod, NodeList(snap.node_infos, np.arange(len(node_objs))))
        # upstream's table treats Skip as fine: it scores anyway
        assert st is None or st.is_skip()
    by_name = {ni.name: ni for ni in snap.node_infos}
    raw = np.array([p.score(state, pod, by_name[n]) for n, _ in nodes], dtype=np.int64)
    assert p.normalize_score(state, pod, raw).tolist() == want
    rows = np.array([snap.table.index[n] for n, _ in nodes])
    batch = p.score_batch(state, pod, snap, rows)
    assert batch.tolist() == raw.tolist()


def test_pre_score_skip_and_error() -> None:
    p = NodeAffinity(None, Handle())
    nodes = NodeList([], np.zeros(0, dtype=np.int64))
    st = p.pre_score(CycleState(), make_pod(), nodes)
    assert st is not None and st.is_skip()
    assert p.pre_score(CycleState(), make_pod(preferred=AFFINITY1), nodes) is None
    p2 = NodeAffinity(added(preferred=AFFINITY1), Handle())
    assert p2.pre_score(CycleState(), make_pod(), nodes) is None
    # all terms dropped (weight 0): not nil upstream either, so no Skip
    zero = (PreferredSchedulingTerm(0, term(req("foo", "In", "bar"))),)
    assert p.pre_score(CycleState(), make_pod(preferred=zero), nodes) is None
    bad = make_pod(preferred=(PreferredSchedulingTerm(1, term(req("foo", "Gt", "bar"))),))
    st = p.pre_score(CycleState(), bad, nodes)
    assert st is not None and st.code == Code.ERROR
    assert "must be an integer" in st.message()
    with pytest.raises(PluginError):
        p.score(CycleState(), bad, NodeInfo(make_node("n")))


# ---------------------------------------------------------------- queueing hints


POD_WITH_AFFINITY = make_pod(required=required(term(req("foo", "In", "bar"))))
ENFORCED = added(required(term(req("foo", "In", "bar"))))

HINT_CASES = {
    "skip-queue-on-add": (None, POD_WITH_AFFINITY, None, make_node(), QueueingHint.SKIP),
    "queue-on-add": (None, POD_WITH_AFFINITY, None, make_node("", {"foo": "bar"}),
                     QueueingHint.QUEUE),
    "skip-unrelated-changes": (None, POD_WITH_AFFINITY, make_node(), make_node(),
                               QueueingHint.SKIP),
    "skip-unrelated-changes-on-labels": (None, POD_WITH_AFFINITY, make_node(),
                                         make_node("", {"k": "v"}), QueueingHint.SKIP),
    "skip-labels-changes-on-suitable-node": (
        None, POD_WITH_AFFINITY, make_node("", {"foo": "bar"}),
        make_node("", {"foo": "bar", "k": "v"}), QueueingHint.SKIP),
    "skip-labels-changes-on-node-from-suitable-to-unsuitable": (
        None, POD_WITH_AFFINITY, make_node("", {"foo": "bar"}), make_node("", {"k": "v"}),
        QueueingHint.SKIP),
    "queue-on-labels-change-makes-pod-schedulable": (
        None, POD_WITH_AFFINITY, make_node(), make_node("", {"foo": "bar"}),
        QueueingHint.QUEUE),
    "skip-queue-on-add-scheduler-enforced-node-affinity": (
        ENFORCED, POD_WITH_AFFINITY, None, make_node(), QueueingHint.SKIP),
    "queue-on-add-scheduler-enforced-node-affinity": (
        ENFORCED, POD_WITH_AFFINITY, None, make_node("", {"foo": "bar"}), QueueingHint.QUEUE),
    # beyond upstream's table: parse errors and no match => Queue (the error path)
    "queue-on-unparsable-affinity": (
        None, make_pod(required=required(term(req("foo", "In", "-bad-")))), None,
        make_node("", {"foo": "bar"}), QueueingHint.QUEUE),
}


@pytest.mark.parametrize("case", list(HINT_CASES), ids=list(HINT_CASES))
def test_is_schedulable_after_node_change(case: str) -> None:
    args, pod, old, new, want = HINT_CASES[case]
    p = NodeAffinity(args, Handle())
    assert p.is_schedulable_after_node_change(pod, old, new) == want


@pytest.mark.parametrize(("old", "new"), [(None, "not-a-node"), ("not-a-node", make_node())])
def test_is_schedulable_after_node_change_wrong_objects(old, new) -> None:
    p = NodeAffinity(None, Handle())
    with pytest.raises(TypeError):
        p.is_schedulable_after_node_change(POD_WITH_AFFINITY, old, new)


def test_events_to_register() -> None:
    p = NodeAffinity(None, Handle())
    evs = p.events_to_register()
    assert len(evs) == 1
    assert evs[0].event.resource == Resource.NODE
    assert evs[0].event.action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    assert evs[0].hint is not None


# ---------------------------------------------------------------- batch == per-node

KEYS = ("zone", "disk", "gpu", "kernel")
VALUES = ("a", "b", "c", "ssd", "hdd", "1", "5", "10", "0204")


def _rand_req(rng: random.Random) -> NodeSelectorRequirement:
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    if op in ("Gt", "Lt"):
        values: tuple[str, ...] = (rng.choice(("1", "5", "0204", "x")),)
    elif op in ("Exists", "DoesNotExist"):
        values = ()
    else:
        values = tuple(rng.sample(VALUES, rng.choice((1, 1, 2, 3))))
    return NodeSelectorRequirement(rng.choice(KEYS), op, values)


def _rand_term(rng: random.Random, n: int) -> NodeSelectorTerm:
    fields = ()
    if rng.random() < 0.3:
        fields = tuple(NodeSelectorRequirement(NAME_FIELD, rng.choice(("In", "In", "NotIn")),
                                               (f"n{rng.randrange(n + 1)}",))
                       for _ in range(rng.choice((1, 1, 2))))
    return NodeSelectorTerm(
        match_expressions=tuple(_rand_req(rng) for _ in range(rng.randrange(3))),
        match_fields=fields)


def _rand_pod(rng: random.Random, n: int, i: int) -> Pod:
    ns = {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.15}
    req_terms = None
    if rng.random() < 0.6:
        req_terms = tuple(_rand_term(rng, n) for _ in range(rng.randrange(0, 4)))
    pref = tuple(PreferredSchedulingTerm(rng.randrange(0, 101), _rand_term(rng, n))
                 for _ in range(rng.choice((0, 0, 1, 2, 3))))
    return make_pod(ns, req_terms, pref, name=f"p{i}")


def _rand_args(rng: random.Random, n: int) -> dict | None:
    if rng.random() < 0.7:
        return None
    req_terms = tuple(_rand_term(rng, n) for _ in range(rng.randrange(1, 3))) \
        if rng.random() < 0.6 else None
    pref = tuple(PreferredSchedulingTerm(rng.randrange(1, 10), _rand_term(rng, n))
                 for _ in range(rng.randrange(3)))
    return added(req_terms, pref)


@pytest.mark.parametrize("seed", range(5))
def test_batch_and_per_node_forms_agree(seed: int) -> None:
    rng = random.Random(seed)
    checked = rejected = 0
    for case in range(80):
        n = rng.randrange(1, 30)
        nodes = [make_node(f"n{i}", {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.6})
                 for i in range(n)]
        snap = snapshot_from_nodes(nodes, [])
        try:
            p = NodeAffinity(_rand_args(rng, n), Handle())
        except InputError:
            continue
        for i in range(4):
            pod = _rand_pod(rng, n, case * 10 + i)
            state = CycleState()
            result, st = p.pre_filter(state, pod, snap)
            idx = np.array(rng.sample(range(n), rng.randrange(1, n + 1)), dtype=np.int64)
            batch = p.filter_batch(state, pod, snap, idx)
            per_node = [_status_or_success(p.filter(state, pod, snap.node_infos[j]))
                        for j in idx.tolist()]
            assert [_status_or_success(batch.status_at(k, "")) for k in range(len(idx))] \
                == per_node
            passing = {snap.node_infos[j].name for j, s in zip(idx.tolist(), per_node,
                                                               strict=True)
                       if s.is_success()}
            if st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                assert not passing  # "pod affinity terms conflict" is sound
            if result is not None and result.node_names is not None:
                assert passing <= result.node_names  # narrowing never drops a fit node
            rejected += sum(not s.is_success() for s in per_node)
            checked += len(per_node)
            # scores
            sstate = CycleState()
            pst = p.pre_score(sstate, pod, NodeList([snap.node_infos[j] for j in idx], idx))
            if pst is not None and pst.is_skip():
                continue
            if pst is not None:  # an unparsable preferred term: an Error, as upstream
                assert pst.code == Code.ERROR
                with pytest.raises(PluginError):
                    p.score_batch(CycleState(), pod, snap, idx)
                continue
            raw = [p.score(sstate, pod, snap.node_infos[j]) for j in idx.tolist()]
            got = p.score_batch(sstate, pod, snap, idx)
            assert got.dtype == np.int64
            assert got.tolist() == raw
            norm = p.normalize_score(sstate, pod, got)
            assert ((norm >= 0) & (norm <= 100)).all()
    assert checked > 0 and 0 < rejected < checked


# ---------------------------------------------------------------- golden explain results
#
# Upstream kube-scheduler's verdicts (../shared/golden, v1.30.6: NodeAffinity, NodePorts
# and ImageLocality did not change up to v1.35). For each node: a node rejected by this plugin
# must be rejected with upstream's reason; a feasible node, or one rejected by a later Filter
# plugin, must pass; scores must equal upstream's weighted scores on the feasible nodes.

GOLDEN_CASES = golden_cases("explain", "explain-config", "explain-spread", "explain-volumes")
GOLDEN_IDS = [f"{p.parent.name}/{p.stem}" for p in GOLDEN_CASES]

DEFAULT_FILTER_ORDER = (
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
    "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
    "VolumeZone", "PodTopologySpread", "InterPodAffinity")
DEFAULT_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2,
                   "InterPodAffinity": 2}
_F, _S = {"preFilter", "filter"}, {"preScore", "score"}
GOLDEN_POINTS: dict[str, set[str]] = {
    "SchedulingGates": {"preEnqueue"}, "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"}, "NodeName": {"filter"},
    "TaintToleration": {"filter"} | _S, "NodeAffinity": _F | _S, "NodePorts": _F,
    "NodeResourcesFit": _F | _S, "VolumeRestrictions": _F, "NodeVolumeLimits": _F,
    "VolumeBinding": _F | {"reserve", "preBind"}, "VolumeZone": _F,
    "PodTopologySpread": _F | _S, "InterPodAffinity": _F | _S,
    "DefaultPreemption": {"postFilter"}, "NodeResourcesBalancedAllocation": _S,
    "ImageLocality": {"score"}, "DefaultBinder": {"bind"},
}


@dataclass
class Golden:
    want: dict
    snap: Snapshot
    target: Pod
    args: dict | None
    filter_order: tuple[str, ...]
    filter_on: bool
    score_weight: int  # 0: not a score plugin of the profile


def golden_setup(path: Path, plugin: str) -> Golden:
    import json


    want = json.loads(path.with_suffix("").with_suffix(".upstream.json").read_text())[
        "results"][0]
    sc = load_golden(path)
    args: dict | None = None
    order, filter_on, weight = DEFAULT_FILTER_ORDER, True, DEFAULT_WEIGHTS.get(plugin, 1)
    if sc.config is not None:
        from kubesched.config import expand_plugins, load_config

        profile = load_config(sc.config, str(path)).profile("default-scheduler")
        plan = expand_plugins(profile, lambda n, pt: pt in GOLDEN_POINTS.get(n, ()))
        args = profile.plugin_config.get(plugin)
        order = tuple(n for n, _ in plan.get("filter", []))
        filter_on = plugin in order
        scored = [w for n, w in plan.get("score", []) if n == plugin]
        weight = max(scored[0], 1) if scored else 0
    running = [p for p in sc.pods if p.spec.node_name
               and p.status.phase not in ("Succeeded", "Failed")]
    snap = snapshot_from_nodes(sc.nodes, running)
    target = next(p for p in sc.pods if p.key == "default/target")
    return Golden(want, snap, target, args, order, filter_on, weight)


def golden_filter_expectations(g: Golden, plugin: str) -> dict[str, str | None]:
    """node -> upstream's reason from this plugin, or None where the plugin must pass; nodes
    rejected by an earlier plugin (or not evaluated) are left out."""
    pos = g.filter_order.index(plugin)
    filtered = g.want.get("filtered", {})
    out: dict[str, str | None] = {}
    err = g.want.get("error") or ""
    if err and not re.match(r"0/\d+ nodes are available: \d+ ", err):
        return out  # rejected at PreFilter: no node reached Filter
    for ni in g.snap.node_infos:
        verdict = filtered.get(ni.name)
        if verdict is None:
            if ni.name in g.want.get("scores", {}):
                out[ni.name] = None
            continue
        by = verdict.split(":", 1)[0]
        if by == plugin:
            out[ni.name] = verdict.split(": ", 1)[1]
        elif by in g.filter_order and g.filter_order.index(by) > pos:
            out[ni.name] = None
    return out


@pytest.mark.parametrize("path", GOLDEN_CASES, ids=GOLDEN_IDS)
def test_golden_node_affinity_verdicts(path: Path) -> None:
    g = golden_setup(path, NodeAffinity.name)
    p = NodeAffinity(g.args, Handle())
    checked = 0
    if g.filter_on:
        state = CycleState()
        result, st = p.pre_filter(state, g.target, g.snap)
        skipped = st is not None and st.is_skip()
        assert st is None or skipped
        expect = golden_filter_expectations(g, p.name)
        rows = np.array([g.snap.table.index[n] for n in expect], dtype=np.int64)
        batch = None if skipped else p.filter_batch(state, g.target, g.snap, rows)
        for k, (name, reason) in enumerate(expect.items()):
            ours = None if skipped else p.filter(state, g.target, g.snap.get(name))
            if reason is None:
                assert ours is None, name
                assert batch is None or batch.codes[k] == 0
                if result is not None and result.node_names is not None:
                    assert name in result.node_names
            else:
                assert ours is not None and ours.message() == reason, name
                assert ours.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                assert batch is not None and batch.status_at(k, "").message() == reason
            checked += 1
    scores = g.want.get("scores", {})
    if g.score_weight and scores:
        names = [ni.name for ni in g.snap.node_infos if ni.name in scores]
        ups = {n: scores[n]["plugins"].get(p.name) for n in names}
        state = CycleState()
        rows = np.array([g.snap.table.index[n] for n in names], dtype=np.int64)
        st = p.pre_score(state, g.target, NodeList([g.snap.get(n) for n in names], rows))
        if st is not None and st.is_skip():
            assert all(v is None for v in ups.values())
        else:
            assert st is None
            norm = p.normalize_score(state, g.target, p.score_batch(state, g.target, g.snap,
                                                                    rows))
            assert {n: int(v) * g.score_weight for n, v in zip(names, norm, strict=True)} == ups
        checked += 1
    if not checked:
        pytest.skip("no verdict of NodeAffinity in this case")
