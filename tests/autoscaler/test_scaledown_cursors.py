"""The scale-down simulation's cursors (how far along the nodes a pod of one signature need
not look, ``scaledown._Cursors``) change no answer: on random clusters, ``scale_down``
removes and keeps the same nodes, for the same reasons, as with every pod asked over
every node."""

from __future__ import annotations

import contextlib
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Pod, bound_copy
from kubesched.autoscaler import column_moves
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.column_moves import ColumnMoves
from kubesched.autoscaler.scaledown import scale_down
from kubesched.config import default_config, load_config
from kubesched.framework import FilterPlugin, unschedulable

GROUP_LABEL = "kubesched.io/node-group"
SAFE = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
# few shapes, so that signatures repeat: cpu (m), a hostPort (NodePorts reads more than
# the node's columns), a node selector
SHAPES = [(500, None, None), (1000, None, None), (1500, None, None), (2000, None, None),
          (1000, 8080, None), (500, None, "ssd"), (3000, None, None), (500, None, "with"),
          (500, None, "spread"), (1000, None, "spread")]
# "with": required pod affinity to the pods of shape 0 on the same node; "spread": spread
# over nodes, at most one apart (PodTopologySpread): verdicts that pods added elsewhere
# can turn from no fit to fit

clusters = st.tuples(
    st.lists(st.tuples(st.sampled_from([2, 3, 4, 8]), st.booleans(), st.booleans()),
             min_size=2, max_size=14),
    st.lists(st.tuples(st.integers(0, 13), st.integers(0, len(SHAPES) - 1)), max_size=60))


def _node(i: int, cpu: int, in_group: bool, ssd: bool) -> Any:
    labels = {GROUP_LABEL: "g"} if in_group else {}
    if ssd:
        labels["disk"] = "ssd"
    labels["kubernetes.io/hostname"] = f"n{i:02d}"
    return parse_node({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": f"n{i:02d}", "labels": labels},
                       "status": {"capacity": {"cpu": str(cpu), "memory": "32Gi",
                                               "pods": "110"}}})


def _pod(j: int, node: str, shape: int) -> Pod:
    cpu, port, disk = SHAPES[shape]
    container: dict[str, Any] = {"name": "c", "image": "x",
                                 "resources": {"requests": {"cpu": f"{cpu}m"}}}
    if port:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    spec: dict[str, Any] = {"containers": [container], "nodeName": node}
    if disk == "spread":
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"s": "1"}}}]
    if disk == "with":
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"shape": "0"}},
             "topologyKey": "kubernetes.io/hostname"}]}}
    elif disk:
        spec["nodeSelector"] = {"disk": disk}
    return parse_pod({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"p{j:02d}", "namespace": "default",
                                   "uid": f"p{j:02d}", "annotations": SAFE,
                                   "labels": {"shape": str(shape),
                                              "s": str(int(disk == "spread"))}},
                      "spec": spec})


def _held(checker: PredicateChecker) -> dict[str, tuple[list[str], list[int]]]:
    """What the checker's snapshot holds: per node, its pods and its requested column."""
    snap = checker.snapshot()
    table = snap.table
    return {ni.name: (sorted(p.uid for p in ni.pods),
                      table.requested[:, table.index[ni.name]].tolist())
            for ni in snap.node_infos}


def _scale_down(nodes: list[Any], pods: list[Pod], groups: list[Any], cursors: bool,
                columns: bool | None = None, *, force_checker: bool = False
                ) -> tuple[list[str], dict[str, str]]:
    """``scale_down``'s answer; ``columns``: whether the moves must (True) or must not
    (False) be column changes (``ColumnMoves``); ``force_checker``: asked of the checker
    even so. The checker is left as it was."""
    checker = PredicateChecker(default_config(), {}, {})
    for n in nodes:
        checker.add_node(n)
    for p in pods:
        checker.add_pod(p)
    if not cursors:
        checker.pending_signature = lambda pod: None  # type: ignore[method-assign]
    on: dict[str, list[Pod]] = {}
    for p in pods:
        on.setdefault(p.spec.node_name, []).append(p)
    if columns is not None and pods:
        took = ColumnMoves.of(checker, [n.name for n in nodes], pods) is not None
        assert took == columns
    before = _held(checker)
    with mock.patch.object(ColumnMoves, "of", return_value=None) if force_checker \
            else contextlib.nullcontext():
        res = scale_down(nodes, on, groups, {"g": 100}, [], pods, {}, checker)
    assert _held(checker) == before
    return res.removed, res.kept


@pytest.fixture(scope="module")
def groups() -> list[Any]:
    from kubesched.api.nodegroups import parse_node_group
    return [parse_node_group({
        "apiVersion": "kubesched.io/v1alpha1", "kind": "NodeGroup", "metadata": {"name": "g"},
        "spec": {"maxSize": 100, "template": {"status": {"capacity": {"cpu": "8"}}}}})]


def _fitting(cluster: tuple[list[Any], list[Any]], shapes: range | list[int] | None = None
             ) -> tuple[list[Any], list[Pod]]:
    """The cluster's nodes, and those of its pods (of ``shapes``, all by default) that fit
    where they are, each added after the ones before."""
    node_specs, pod_specs = cluster
    nodes = [_node(i, cpu, g, ssd) for i, (cpu, g, ssd) in enumerate(node_specs)]
    room = {n.name: n.status.allocatable["cpu"] for n in nodes}
    ports: dict[str, set[int]] = {n.name: set() for n in nodes}
    pods: list[Pod] = []
    for j, (i, shape) in enumerate(pod_specs):
        if shapes is not None:
            shape = shapes[shape % len(shapes)]
        node = nodes[i % len(nodes)]
        cpu, port, disk = SHAPES[shape]
        if room[node.name] < cpu or (port and port in ports[node.name]) \
                or (disk == "ssd" and node.metadata.labels.get("disk") != disk) \
                or (disk == "with" and not any(p.spec.node_name == node.name
                                               and p.labels["shape"] == "0" for p in pods)):
            continue  # only pods that fit where they are
        room[node.name] -= cpu
        if port:
            ports[node.name].add(port)
        pods.append(_pod(j, node.name, shape))
    return nodes, pods


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(cluster=clusters)
def test_cursors_change_no_answer(groups: list[Any],
                                  cluster: tuple[list[Any], list[Any]]) -> None:
    nodes, pods = _fitting(cluster)
    assert _scale_down(nodes, pods, groups, True) == _scale_down(nodes, pods, groups, False,
                                                                  columns=False)


# shapes whose filters read only the node and its columns: cpu and a node selector
COLUMN_SHAPES = [i for i, (_, port, disk) in enumerate(SHAPES) if not port and disk != "with"
                 and disk != "spread"]


@pytest.mark.parametrize("scan,walk,chunk,quick", [
    (4, 64, 16, True), (0, 64, 1, True), (1, 64, 3, True), (2, 3, 2, True),
    (2, 3, 2, False)])
def test_moves_as_column_changes_change_no_answer(groups: list[Any], scan: int, walk: int,
                                                  chunk: int, quick: bool) -> None:
    """Pods judged on the node and its columns only: moved as column changes
    (``ColumnMoves``), the same nodes go and stay, for the same reasons, as with every
    pod asked of the checker over every node — however many nodes are tried one by one
    and among how many nodes, and in the first batch (``_SCAN``, ``_WALK``, ``_CHUNK``),
    and whether the plugins' verdict-only forms (``filter_passes``, ``filter_row``) or
    their batch forms answer."""
    real_of = ColumnMoves.of.__func__  # type: ignore[attr-defined]

    def without_quick_forms(cls: type[ColumnMoves], *a: Any) -> ColumnMoves | None:
        got = real_of(cls, *a)
        for kind in (got._kinds.values() if got is not None else ()):
            kind.quick = kind.one = None
        return got  # type: ignore[no-any-return]

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(cluster=clusters)
    def check(cluster: tuple[list[Any], list[Any]]) -> None:
        nodes, pods = _fitting(cluster, COLUMN_SHAPES)
        got = _scale_down(nodes, pods, groups, True, columns=True)
        assert got == _scale_down(nodes, pods, groups, False, columns=False)
        # and as the checker answers them with its cursors
        assert got == _scale_down(nodes, pods, groups, True, force_checker=True)

    was = column_moves._SCAN, column_moves._WALK, column_moves._CHUNK
    column_moves._SCAN, column_moves._WALK, column_moves._CHUNK = scan, walk, chunk
    try:
        with contextlib.nullcontext() if quick else mock.patch.object(
                ColumnMoves, "of", classmethod(without_quick_forms)):
            check()
    finally:
        column_moves._SCAN, column_moves._WALK, column_moves._CHUNK = was


def _plain(name: str, node: str, cpu: str, **spec: Any) -> Pod:
    return parse_pod({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "default", "uid": name,
                                   "annotations": SAFE, "labels": {"app": name}},
                      "spec": {"nodeName": node, **spec, "containers": [{
                          "name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}})


def _named_node(name: str, cpu: int, in_group: bool, **labels: str) -> Any:
    all_labels = {GROUP_LABEL: "g"} if in_group else {}
    all_labels.update(labels, **{"kubernetes.io/hostname": name})
    return parse_node({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "labels": all_labels},
                       "status": {"capacity": {"cpu": str(cpu), "memory": "32Gi",
                                               "pods": "110"}}})


def _run(nodes: list[Any], pods: list[Pod], groups: list[Any]) -> tuple[list[str], Any]:
    removed, kept = _scale_down(nodes, pods, groups, True)
    assert (removed, kept) == _scale_down(nodes, pods, groups, False)
    return removed, kept


def test_a_failed_candidate_gives_back_the_nodes_its_pods_took(groups: list[Any]) -> None:
    # Node order a, b, c, d, e; a, d, e are candidates (group g, utilisation < 0.5); b and
    # c are labelled dest, which p2, q and r select. a (20 cpu) holds p1 (1), p2 (2), p3
    # (5): p1 to b (2 free -> 1), p2 past b to c (3 free -> 1), p3 fits nowhere (d and e
    # have under 5 free): a stays, and b and c are as before. d holds q (2, as p2): b (2
    # free) takes it; e holds r (3): c (3 free) takes it. Had b stayed passed over for
    # pods like p2, q would have gone to c, leaving r nowhere.
    dest = {"nodeSelector": {"dest": "yes"}}
    nodes = [_named_node("a", 20, True), _named_node("b", 4, False, dest="yes"),
             _named_node("c", 4, False, dest="yes"), _named_node("d", 5, True),
             _named_node("e", 7, True)]
    p2, q = _plain("p2", "a", "2", **dest), _plain("q", "d", "2", **dest)
    for p in (p2, q):  # one signature: the same labels too
        p.metadata.labels = {"app": "two"}
    pods = [_plain("p1", "a", "1"), p2, _plain("p3", "a", "5"),
            _plain("fill-b", "b", "2"), _plain("fill-c", "c", "1"),
            q, _plain("r", "e", "3", **dest)]
    removed, kept = _run(nodes, pods, groups)
    assert removed == ["d", "e"]
    assert kept == {"a": "pod default/p3 fits on no other node"}


def test_pods_that_need_other_pods_are_not_passed_over(groups: list[Any]) -> None:
    # Order a, b, c1, c2; c1 and c2 candidates. w1 and w2 need a pod labelled app=anchor
    # on their node (required pod affinity, which leaves them unsigned: every node is
    # asked): a has none at first, b has one but room for one more 1-cpu pod only. c1
    # holds w1 then anchor: w1 passes a and goes to b; anchor goes to a; c1 goes. c2 holds
    # w2: a now has the anchor and room: w2 goes there, c2 goes. (Passed over as w1
    # passed it, a would be skipped and c2 kept.)
    need = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "anchor"}},
         "topologyKey": "kubernetes.io/hostname"}]}}}
    nodes = [_named_node("a", 4, False), _named_node("b", 2, False),
             _named_node("c1", 8, True), _named_node("c2", 8, True)]
    w1 = _plain("w1", "c1", "1", **need)
    w2 = _plain("w2", "c2", "1", **need)
    for w in (w1, w2):  # one signature: the same labels
        w.metadata.labels = {"app": "w"}
    pods = [_plain("anchor-b", "b", "1"), w1, _plain("x-anchor", "c1", "1"), w2]
    for p in pods:
        if "anchor" in p.name:
            p.metadata.labels = {"app": "anchor"}
    removed, kept = _run(nodes, pods, groups)
    assert removed == ["c1", "c2"]
    assert kept == {}


class NeedsAnchor(FilterPlugin):
    """An out-of-tree Filter whose verdict a pod added to a node can turn from no to yes: a
    pod labelled needs=anchor fits only a node holding a pod labelled role=anchor. It
    signs pods (by that label), so they have a signature, but it reads more than the
    node's columns."""

    name = "NeedsAnchor"

    def sign_pod(self, pod: Pod) -> tuple[tuple[str, str], ...]:
        return (("needs", pod.labels.get("needs", "")),)

    def filter(self, state: Any, pod: Pod, node_info: Any) -> Any:
        if pod.labels.get("needs") != "anchor" or any(
                p.labels.get("role") == "anchor" for p in node_info.pods):
            return None
        return unschedulable("no anchor")


def test_a_signed_pod_judged_on_more_than_columns_is_not_passed_over(
        groups: list[Any]) -> None:
    # As above, with an out-of-tree Filter in place of pod affinity: the pods are signed,
    # so only their verdicts' reading more than the columns keeps a out of the skipped
    # nodes. Order a, b, c1, c2; c1, c2 candidates. a has no anchor; b has one, and room
    # for one 1-cpu pod. c1 holds w1 (needs an anchor) then x (an anchor): w1 passes a and
    # goes to b, x goes to a, c1 goes. c2 holds w2, as w1: a now has an anchor and room,
    # w2 goes there, c2 goes (skipping a, as w1 passed it, would keep c2).
    config = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"filter": {"enabled": [{"name": "NeedsAnchor"}]}}}]})
    config.out_of_tree = {"NeedsAnchor": NeedsAnchor}
    nodes = [_named_node("a", 4, False), _named_node("b", 2, False),
             _named_node("c1", 8, True), _named_node("c2", 8, True)]
    pods = [_plain("anchor-b", "b", "1"), _plain("w1", "c1", "1"), _plain("x", "c1", "1"),
            _plain("w2", "c2", "1")]
    for p in pods:
        p.metadata.labels = ({"needs": "anchor"} if p.name.startswith("w")
                             else {"role": "anchor"})
    on: dict[str, list[Pod]] = {}
    for p in pods:
        on.setdefault(p.spec.node_name, []).append(p)
    checker = PredicateChecker(config, {}, {})
    for n in nodes:
        checker.add_node(n)
    for p in pods:
        checker.add_pod(p)
    assert checker.pending_signature(pods[1]) is not None
    res = scale_down(nodes, on, groups, {"g": 100}, [], pods, {}, checker)
    assert (res.removed, res.kept) == (["c1", "c2"], {})


def test_a_moved_copy_is_asked_as_its_pod() -> None:
    checker = PredicateChecker(default_config(), {}, {})
    for i in (1, 2):
        checker.add_node(_node(i, 4, True, False))
    pod = _pod(1, "n01", 0)
    checker.add_pod(pod)
    checker.remove_pod(pod)
    moved = checker.add_moved(pod, "n02")
    assert (pod.spec.node_name, moved.spec.node_name) == ("n01", "n02")
    ask = checker.as_pending(moved)
    assert ask is checker.as_pending(pod)  # the pod's own pending copy, kept
    assert ask == bound_copy(moved, "") and not ask.spec.node_name
    assert checker.pending_signature(moved) == checker.pending_signature(pod) is not None


def test_pods_moved_as_columns_fill_the_nodes_they_go_to(groups: list[Any]) -> None:
    # a (8 cpu, a candidate at 2.5/8) holds p1 (1 cpu) and p2 (1.5), which select
    # dest=yes; b (4 cpu, not in the group, dest=yes) has 2 free. p1 goes to b, leaving 1:
    # p2 fits nowhere, and a stays.
    dest = {"nodeSelector": {"dest": "yes"}}
    nodes = [_named_node("a", 8, True, dest="yes"), _named_node("b", 4, False, dest="yes")]
    pods = [_plain("p1", "a", "1", **dest), _plain("p2", "a", "1500m", **dest),
            _plain("fill", "b", "2")]
    removed, kept = _scale_down(nodes, pods, groups, True, columns=True)
    assert (removed, kept) == ([], {"a": "pod default/p2 fits on no other node"})
    # and a is as before: d (10 cpu, a candidate at 4/10, no dest label) holds q (4 cpu),
    # which fits only on a (5.5 free; b has 2)
    nodes.append(_named_node("d", 10, True))
    pods.append(_plain("q", "d", "4"))
    removed, kept = _scale_down(nodes, pods, groups, True, columns=True)
    assert (removed, kept) == (["d"], {"a": "pod default/p2 fits on no other node"})
    # and no more than before: with q at 6 cpu (d 13 cpu), q fits nowhere
    nodes[-1] = _named_node("d", 13, True)
    pods[-1] = _plain("q", "d", "6")
    removed, kept = _scale_down(nodes, pods, groups, True, columns=True)
    assert (removed, kept) == ([], {"a": "pod default/p2 fits on no other node",
                                    "d": "pod default/q fits on no other node"})


def test_pods_moved_as_columns_go_only_where_their_other_filters_let_them(
        groups: list[Any]) -> None:
    # a (a candidate, disk=ssd) holds p, which selects disk=ssd; b has room but no ssd: p
    # fits nowhere else, and a stays. With c (disk=ssd) after b, p goes there.
    a, b = _named_node("a", 8, True, disk="ssd"), _named_node("b", 8, False)
    p = _plain("p", "a", "1", nodeSelector={"disk": "ssd"})
    assert _scale_down([a, b], [p], groups, True, columns=True) == (
        [], {"a": "pod default/p fits on no other node"})
    c = _named_node("c", 8, False, disk="ssd")
    assert _scale_down([a, b, c], [p], groups, True, columns=True) == (["a"], {})


@pytest.mark.parametrize("force_checker", [False, True])
def test_a_failed_candidate_keeps_the_pods_moved_onto_it(groups: list[Any],
                                                         force_checker: bool) -> None:
    # Order a, b, c, d; a, c, d candidates; b (4 cpu, dest=yes) is full. a's m (1 cpu)
    # goes to c (8 cpu, dest=yes, holding x: 3), leaving 4 free there. c's x, which selects
    # dest=yes, then fits nowhere: c stays, holding x and m. d's y (4.5 cpu) does not fit
    # c's 4: d stays too. (Were m put back where it came from, c would show 5 free and
    # take y.)
    dest = {"nodeSelector": {"dest": "yes"}}
    nodes = [_named_node("a", 8, True), _named_node("b", 4, False, dest="yes"),
             _named_node("c", 8, True, dest="yes"), _named_node("d", 10, True)]
    pods = [_plain("m", "a", "1"), _plain("fill", "b", "4"), _plain("x", "c", "3", **dest),
            _plain("y", "d", "4500m")]
    got = _scale_down(nodes, pods, groups, True, force_checker=force_checker)
    assert got == (["a"], {"c": "pod default/x fits on no other node",
                           "d": "pod default/y fits on no other node"})
