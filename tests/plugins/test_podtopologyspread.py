"""PodTopologySpread: PreFilter state, AddPod/RemovePod and Filter, ported from upstream
``podtopologyspread/filtering_test.go`` (TestPreFilterState, TestPreFilterStateAddPod,
TestPreFilterStateRemovePod, TestSingleConstraint, TestMultipleConstraints).

All v1.35 feature gates involved (MinDomains, NodeInclusionPolicy, MatchLabelKeys) are on;
upstream cases that only exist to show a gate *off* are kept where the expected result is the
same with the gate on, and left out otherwise. Every Filter case is checked in both the
per-node and the batch form. The builders here mirror upstream's ``st.MakePod()`` /
``st.MakeNode()`` and are reused by the other ``test_podtopologyspread_*`` files.
"""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.types import (
    Affinity,
    GenericObject,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSpec,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    MAX_INT32,
)
from kubesched.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from kubesched.testing import snapshot_from_nodes

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

# ---------------------------------------------------------------- builders (st.Make*)


def exists(key: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, "Exists"),))


def labels_sel(**kv: str) -> LabelSelector:
    return LabelSelector(match_labels=tuple(sorted(kv.items())))


FOO = exists("foo")
BAR = exists("bar")
EMPTY_SEL = LabelSelector()


def sc(max_skew: int, key: str, when: str, selector: LabelSelector | None,
       min_domains: int | None = None, naf: str | None = None, ntp: str | None = None,
       mlk: tuple[str, ...] = ()) -> TopologySpreadConstraint:
    """st.PodWrapper.SpreadConstraint(maxSkew, key, when, selector, minDomains,
    nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys)."""
    return TopologySpreadConstraint(max_skew=max_skew, topology_key=key, when_unsatisfiable=when,
                                    label_selector=selector, min_domains=min_domains,
                                    node_affinity_policy=naf, node_taints_policy=ntp,
                                    match_label_keys=tuple(mlk))


def affinity_in(key: str, values: list[str]) -> Affinity:
    return Affinity(node_affinity=NodeAffinity(required=(NodeSelectorTerm(
        match_expressions=(NodeSelectorRequirement(key, "In", tuple(values)),)),)))


def affinity_not_in(key: str, values: list[str]) -> Affinity:
    return Affinity(node_affinity=NodeAffinity(required=(NodeSelectorTerm(
        match_expressions=(NodeSelectorRequirement(key, "NotIn", tuple(values)),)),)))


def make_pod(name: str, *, ns: str = "default", labels: dict[str, str] | None = None,
             node: str = "", constraints: tuple[TopologySpreadConstraint, ...] = (),
             node_selector: dict[str, str] | None = None, affinity: Affinity | None = None,
             tolerations: tuple[Toleration, ...] = (), terminating: bool = False,
             owner: tuple[str, str] | None = None) -> Pod:
    """``owner``: (kind, name) of the controlling owner."""
    meta = ObjectMeta(name=name, namespace=ns, uid=f"{ns}/{name}", labels=dict(labels or {}),
                      deletion_timestamp=1.0 if terminating else None)
    if owner is not None:
        meta.owner_references = [OwnerReference(kind=owner[0], name=owner[1], controller=True)]
    spec = PodSpec(node_name=node, topology_spread_constraints=tuple(constraints),
                   node_selector=dict(node_selector or {}), affinity=affinity,
                   tolerations=tuple(tolerations))
    return Pod(metadata=meta, spec=spec)


def P(name: str, node: str, ns: str = "default", terminating: bool = False,
      **labels: str) -> Pod:
    """An existing (bound) pod with labels."""
    return make_pod(name, ns=ns, node=node, labels=labels, terminating=terminating)


UNSCHEDULABLE_TAINT = (Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),)
TOLERATE_UNSCHEDULABLE = (Toleration(key="node.kubernetes.io/unschedulable",
                                     operator="Exists", effect="NoSchedule"),)


def make_node(name: str, taints: tuple[Taint, ...] = (), **labels: str) -> Node:
    n = Node(metadata=ObjectMeta(name=name, uid=name, labels=dict(labels)))
    n.spec.taints = tuple(taints)
    n.status.allocatable = {"cpu": 4000, "memory": 1 << 33, "pods": 110}
    return n


def N(name: str, zone: str | None = None, node: str | None = None, taints=(),
      **labels: str) -> Node:
    """A node with test labels ``zone`` and ``node`` (upstream's keys, not well-known ones)."""
    if zone is not None:
        labels["zone"] = zone
    if node is not None:
        labels["node"] = node
    return make_node(name, taints=taints, **labels)


def std4() -> list[Node]:
    return [N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
            N("node-x", "zone2", "node-x"), N("node-y", "zone2", "node-y")]


def service(name: str, selector: dict[str, str] | None, ns: str = "default") -> GenericObject:
    spec = {} if selector is None else {"selector": dict(selector)}
    return GenericObject("Service", ObjectMeta(name=name, namespace=ns),
                         {"apiVersion": "v1", "kind": "Service",
                          "metadata": {"name": name, "namespace": ns}, "spec": spec})


def controller(kind: str, name: str, selector: dict, ns: str = "default") -> GenericObject:
    api = "v1" if kind == "ReplicationController" else "apps/v1"
    return GenericObject(kind, ObjectMeta(name=name, namespace=ns),
                         {"apiVersion": api, "kind": kind,
                          "metadata": {"name": name, "namespace": ns},
                          "spec": {"selector": selector}})


def setup(nodes: list[Node], pods: list[Pod], *, objs: list[GenericObject] = (),
          args: dict | None = None) -> tuple[PodTopologySpread, Snapshot]:
    snap = snapshot_from_nodes(nodes, pods)
    objects: dict[str, list] = {}
    for o in objs:
        objects.setdefault(o.kind, []).append(o)
    handle = Handle(snapshot=snap, objects=objects)
    pl = PodTopologySpread(args if args is not None else {"defaultingType": "List"}, handle)
    return pl, snap


def sel_key(selector) -> object:
    """A comparable form of an api.selectors.Selector."""
    if selector.nothing:
        return "nothing"
    return sorted((r.key, r.op, tuple(sorted(r.values))) for r in selector.requirements)


def sorted_paths(paths: tuple[tuple[str, int], tuple[str, int]]) -> tuple:
    """Upstream's criticalPaths.sort() used when comparing: equal counts sorted by value."""
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return ((v0, n0), (v1, n1))


def C(max_skew: int, key: str, selector: LabelSelector | None, naf: str = HONOR,
      ntp: str = IGNORE, min_domains: int = 1) -> tuple:
    """Expected internal constraint."""
    from kubesched.api.selectors import label_selector_as_selector
    return (max_skew, key, sel_key(label_selector_as_selector(selector)), min_domains, naf, ntp)


def constraint_key(c) -> tuple:
    return (c.max_skew, c.topology_key, sel_key(c.selector), c.min_domains,
            c.node_affinity_policy, c.node_taints_policy)


def check_state(s: PreFilterState, constraints: list[tuple], counts: list[dict[str, int]],
                paths: list[tuple]) -> None:
    assert [constraint_key(c) for c in s.constraints] == constraints
    assert s.tp_value_to_match_num == counts
    got = [sorted_paths(cp.as_tuples()) for cp in s.critical_paths]
    assert got == [sorted_paths(p) for p in paths]


INF = ("", MAX_INT32)

# ---------------------------------------------------------------- TestPreFilterState

PRE_FILTER_CASES = [
    dict(
        name="clean cluster with one spreadConstraint",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(5, "zone", DNS, labels_sel(foo="bar")),)),
        nodes=std4(), pods=[],
        constraints=[C(5, "zone", labels_sel(foo="bar"))],
        counts=[{"zone1": 0, "zone2": 0}],
        paths=[(("zone1", 0), ("zone2", 0))],
    ),
    dict(
        name="normal case with one spreadConstraint",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo="")],
        constraints=[C(1, "zone", FOO)],
        counts=[{"zone1": 3, "zone2": 2}],
        paths=[(("zone2", 2), ("zone1", 3))],
    ),
    dict(
        name="normal case with null label selector",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, None),)),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo="")],
        constraints=[C(1, "zone", None)],
        counts=[{"zone1": 0, "zone2": 0}],
        paths=[(("zone2", 0), ("zone1", 0))],
    ),
    dict(
        name="normal case with one spreadConstraint, on a 3-zone cluster",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=[*std4(), N("node-o", "zone3", "node-o"), N("node-p", "zone3", "node-p")],
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo="")],
        constraints=[C(1, "zone", FOO)],
        counts=[{"zone1": 3, "zone2": 2, "zone3": 0}],
        paths=[(("zone3", 0), ("zone2", 2))],
    ),
    dict(
        name="namespace mismatch doesn't count",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", ns="ns1", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", ns="ns2", foo=""),
              P("p-y2", "node-y", foo="")],
        constraints=[C(1, "zone", FOO)],
        counts=[{"zone1": 2, "zone2": 1}],
        paths=[(("zone2", 1), ("zone1", 2))],
    ),
    dict(
        name="normal case with two spreadConstraints",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo=""), P("p-y3", "node-y", foo=""),
              P("p-y4", "node-y", foo="")],
        constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
        counts=[{"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        paths=[(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
    ),
    dict(
        name="soft spreadConstraints should be bypassed",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", SA, FOO), sc(1, "zone", DNS, FOO),
            sc(1, "node", SA, FOO), sc(1, "node", DNS, FOO))),
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-y", "zone2", "node-y")],
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo=""), P("p-y3", "node-y", foo=""),
              P("p-y4", "node-y", foo="")],
        constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
        counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        paths=[(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
    ),
    dict(
        name="different labelSelectors - simple version",
        pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR))),
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-y", "zone2", "node-y")],
        pods=[P("p-a", "node-a", foo=""), P("p-b", "node-b", bar="")],
        constraints=[C(1, "zone", FOO), C(1, "node", BAR)],
        counts=[{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        paths=[(("zone2", 0), ("zone1", 1)), (("node-a", 0), ("node-y", 0))],
    ),
    dict(
        name="different labelSelectors - complex pods",
        pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR))),
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-y", "zone2", "node-y")],
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo="", bar=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo="", bar=""), P("p-y3", "node-y", foo=""),
              P("p-y4", "node-y", foo="", bar="")],
        constraints=[C(1, "zone", FOO), C(1, "node", BAR)],
        counts=[{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
        paths=[(("zone1", 3), ("zone2", 4)), (("node-b", 0), ("node-a", 1))],
    ),
    dict(
        name="two spreadConstraints, and with podAffinity",
        pod=make_pod("p", labels={"foo": ""}, affinity=affinity_not_in("node", ["node-x"]),
                     constraints=(sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo=""), P("p-y3", "node-y", foo=""),
              P("p-y4", "node-y", foo="")],
        constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
        counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        paths=[(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
    ),
    dict(
        name="default constraints and a service",
        pod=make_pod("p", labels={"foo": "bar", "baz": "kar"}),
        default_constraints=[
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}],
        objs=[service("svc", {"foo": "bar"})],
        nodes=[], pods=[],
        constraints=[C(3, "node", labels_sel(foo="bar")), C(5, "rack", labels_sel(foo="bar"))],
        counts=[{}, {}],
        paths=[(INF, INF), (INF, INF)],
    ),
    dict(
        name="default constraints and a service that doesn't match",
        pod=make_pod("p", labels={"foo": "bar"}),
        default_constraints=[{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        objs=[service("svc", {"baz": "kep"})],
        nodes=[], pods=[], skip=True,
    ),
    dict(
        name="default constraints and a service, but pod has constraints",
        pod=make_pod("p", labels={"foo": "bar", "baz": "tar"}, constraints=(
            sc(1, "zone", DNS, labels_sel(baz="tar")),
            sc(2, "planet", SA, labels_sel(fot="rok")))),
        default_constraints=[{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        objs=[service("svc", {"foo": "bar"})],
        nodes=[], pods=[],
        constraints=[C(1, "zone", labels_sel(baz="tar"))],
        counts=[{}],
        paths=[(INF, INF)],
    ),
    dict(
        name="default soft constraints and a service",
        pod=make_pod("p", labels={"foo": "bar"}),
        default_constraints=[{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
        objs=[service("svc", {"foo": "bar"})],
        nodes=[], pods=[], skip=True,
    ),
    dict(
        name="TpKeyToDomainsNum is calculated when MinDomains is enabled",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
              P("p-y2", "node-y", foo=""), P("p-y3", "node-y", foo=""),
              P("p-y4", "node-y", foo="")],
        constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
        counts=[{"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        paths=[(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
    ),
]


def _policy_nodes(taint_c: bool = False, c_label: str = "bar") -> list[Node]:
    return [N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),
            N("node-c", node="node-c", taints=UNSCHEDULABLE_TAINT if taint_c else (),
              **{c_label: ""})]


def _policy_pods() -> list[Pod]:
    return [P("p-a", "node-a", bar=""), P("p-b", "node-b", bar=""), P("p-c", "node-b", bar=""),
            P("p-d", "node-c")]


PRE_FILTER_CASES += [
    dict(
        name="feature gate disabled with NodeAffinityPolicy (same result with the gate on)",
        pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                     constraints=(sc(1, "node", DNS, BAR),)),
        nodes=_policy_nodes(), pods=_policy_pods(),
        constraints=[C(1, "node", BAR)],
        counts=[{"node-a": 1, "node-b": 2}],
        paths=[(("node-a", 1), ("node-b", 2))],
    ),
    dict(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                     constraints=(sc(1, "node", DNS, BAR),)),
        nodes=_policy_nodes(), pods=_policy_pods(),
        constraints=[C(1, "node", BAR)],
        counts=[{"node-a": 1, "node-b": 2}],
        paths=[(("node-a", 1), ("node-b", 2))],
    ),
    dict(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                     constraints=(sc(1, "node", DNS, BAR, naf=IGNORE),)),
        nodes=_policy_nodes(), pods=_policy_pods(),
        constraints=[C(1, "node", BAR, naf=IGNORE)],
        counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        paths=[(("node-c", 0), ("node-a", 1))],
    ),
    dict(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
                     constraints=(sc(1, "node", DNS, BAR),)),
        nodes=_policy_nodes(),
        pods=[P("p-a", "node-a", bar=""), P("p-c", "node-b", bar=""), P("p-d", "node-b", bar=""),
              P("p-e", "node-c")],
        constraints=[C(1, "node", BAR)],
        counts=[{"node-a": 1, "node-b": 2}],
        paths=[(("node-a", 1), ("node-b", 2))],
    ),
    dict(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
                     constraints=(sc(1, "node", DNS, BAR, naf=IGNORE),)),
        nodes=_policy_nodes(), pods=_policy_pods(),
        constraints=[C(1, "node", BAR, naf=IGNORE)],
        counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        paths=[(("node-c", 0), ("node-a", 1))],
    ),
    dict(
        name="feature gate disabled with NodeTaintsPolicy (same result with the gate on)",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, BAR),)),
        nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
               N("node-c", node="node-c", taints=UNSCHEDULABLE_TAINT, bar="")],
        pods=_policy_pods(),
        constraints=[C(1, "node", BAR)],
        counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        paths=[(("node-c", 0), ("node-a", 1))],
    ),
    dict(
        name="NodeTaintsPolicy ignored",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, BAR),)),
        nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
               N("node-c", node="node-c", taints=UNSCHEDULABLE_TAINT, bar="")],
        pods=_policy_pods(),
        constraints=[C(1, "node", BAR)],
        counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        paths=[(("node-c", 0), ("node-a", 1))],
    ),
    dict(
        name="NodeTaintsPolicy honored",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, BAR, ntp=HONOR),)),
        nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
               N("node-c", node="node-c", taints=UNSCHEDULABLE_TAINT, bar="")],
        pods=_policy_pods(),
        constraints=[C(1, "node", BAR, ntp=HONOR)],
        counts=[{"node-a": 1, "node-b": 2}],
        paths=[(("node-a", 1), ("node-b", 2))],
    ),
    dict(
        name="NodeTaintsPolicy honored with tolerated taints",
        pod=make_pod("p", labels={"foo": ""}, tolerations=TOLERATE_UNSCHEDULABLE,
                     constraints=(sc(1, "node", DNS, BAR, ntp=HONOR),)),
        nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
               N("node-c", node="node-c", taints=UNSCHEDULABLE_TAINT, bar="")],
        pods=_policy_pods(),
        constraints=[C(1, "node", BAR, ntp=HONOR)],
        counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        paths=[(("node-c", 0), ("node-a", 1))],
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO, naf=IGNORE))),
        nodes=[N("node-a", "zone1", "node-a", foo=""), N("node-b", "zone1", "node-b"),
               N("node-x", "zone2", "node-x", foo="")],
        pods=[P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""),
              P("p-x1", "node-x", foo="")],
        constraints=[C(1, "zone", FOO), C(1, "node", FOO, naf=IGNORE)],
        counts=[{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        paths=[(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO, ntp=HONOR), sc(1, "node", DNS, FOO))),
        nodes=[N("node-a", "zone1", "node-a", foo=""),
               N("node-b", "zone1", "node-b", taints=UNSCHEDULABLE_TAINT),
               N("node-x", "zone2", "node-x", foo="")],
        pods=[P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""),
              P("p-x1", "node-x", foo="")],
        constraints=[C(1, "zone", FOO, ntp=HONOR), C(1, "node", FOO)],
        counts=[{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        paths=[(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        nodes=[N("node-a", "zone1", "node-a"),
               N("node-b", "zone1", "node-b", taints=UNSCHEDULABLE_TAINT, foo=""),
               N("node-x", "zone2", "node-x", foo=""), N("node-y", "zone2", "node-y")],
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
        constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
        counts=[{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
        paths=[(("zone1", 0), ("zone2", 1)), (("node-b", 0), ("node-x", 1))],
    ),
    dict(
        name="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO, naf=IGNORE), sc(1, "node", DNS, FOO, ntp=HONOR))),
        nodes=[N("node-a", "zone1", "node-a"),
               N("node-b", "zone1", "node-b", taints=UNSCHEDULABLE_TAINT, foo=""),
               N("node-x", "zone2", "node-x", foo=""), N("node-y", "zone2", "node-y", foo="")],
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-x1", "node-x", foo=""), P("p-x2", "node-x", foo=""),
              P("p-y1", "node-y", foo="")],
        constraints=[C(1, "zone", FOO, naf=IGNORE), C(1, "node", FOO, ntp=HONOR)],
        counts=[{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
        paths=[(("zone1", 2), ("zone2", 3)), (("node-y", 1), ("node-x", 2))],
    ),
]

_MLK_PODS_A = [P("p-a1", "node-a", foo="a"), P("p-a2", "node-a", foo="a"),
               P("p-b1", "node-b", foo="a"), P("p-y1", "node-y", foo="a"),
               P("p-y2", "node-y", foo="a")]

PRE_FILTER_CASES += [
    dict(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod=make_pod("p", labels={"foo": "", "bar": "a"},
                     constraints=(sc(1, "zone", DNS, FOO, mlk=("bar",)),)),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo="", bar="a"),
              P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo="", bar="a"),
              P("p-y2", "node-y", bar="")],
        constraints=[(1, "zone", sorted([("bar", "In", ("a",)), ("foo", "Exists", ())]), 1,
                      HONOR, IGNORE)],
        counts=[{"zone1": 1, "zone2": 1}],
        paths=[(("zone1", 1), ("zone2", 1))],
    ),
    dict(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod=make_pod("p", labels={"foo": "a"},
                     constraints=(sc(1, "zone", DNS, EMPTY_SEL, mlk=("foo",)),)),
        nodes=std4(), pods=list(_MLK_PODS_A),
        constraints=[C(1, "zone", labels_sel(foo="a"))],
        counts=[{"zone1": 3, "zone2": 2}],
        paths=[(("zone2", 2), ("zone1", 3))],
    ),
    dict(
        name="key in matchLabelKeys is ignored when LabelSelector is nil",
        pod=make_pod("p", labels={"foo": ""},
                     constraints=(sc(1, "zone", DNS, None, mlk=("bar",)),)),
        nodes=std4(), pods=list(_MLK_PODS_A),
        constraints=[C(1, "zone", None)],
        counts=[{"zone1": 0, "zone2": 0}],
        paths=[(("zone2", 0), ("zone1", 0))],
    ),
    dict(
        name="no pod is matched when LabelSelector is nil",
        pod=make_pod("p", labels={"foo": ""},
                     constraints=(sc(1, "zone", DNS, None, mlk=("bar",)),)),
        nodes=std4(), pods=list(_MLK_PODS_A),
        constraints=[C(1, "zone", None)],
        counts=[{"zone1": 0, "zone2": 0}],
        paths=[(("zone2", 0), ("zone1", 0))],
    ),
    dict(
        name="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO, mlk=("bar",)),)),
        nodes=std4(), pods=list(_MLK_PODS_A),
        constraints=[C(1, "zone", FOO)],
        counts=[{"zone1": 3, "zone2": 2}],
        paths=[(("zone2", 2), ("zone1", 3))],
    ),
    dict(
        name="skip if not specified",
        pod=make_pod("p", labels={"foo": ""}),
        nodes=[N("node-a", "zone1", "node-a")], pods=[], skip=True,
    ),
]


@pytest.mark.parametrize("case", PRE_FILTER_CASES, ids=[c["name"] for c in PRE_FILTER_CASES])
def test_pre_filter_state(case: dict) -> None:
    args = {"defaultingType": "List", "defaultConstraints": case.get("default_constraints", [])}
    pl, snap = setup(case["nodes"], case["pods"], objs=case.get("objs", []), args=args)
    cs = CycleState()
    _, st = pl.pre_filter(cs, case["pod"], snap)
    if case.get("skip"):
        assert st is not None and st.code == Code.SKIP
        assert cs.read(PRE_FILTER_STATE_KEY) is None
        return
    assert st is None or st.is_success()
    s = cs.read(PRE_FILTER_STATE_KEY)
    check_state(s, case["constraints"], case["counts"], case["paths"])


# ---------------------------------------------------------------- TestPreFilterStateAddPod

NODE_C = C(1, "node", FOO)
ZONE_C = C(1, "zone", FOO)

ADD_POD_CASES = [
    dict(
        name="node a and b both impact current min match",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
        pod=P("p-a1", "node-a", foo=""), pods=[], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b")],
        constraints=[NODE_C], counts=[{"node-a": 1, "node-b": 0}],
        paths=[(("node-b", 0), ("node-a", 1))],
    ),
    dict(
        name="only node a impacts current min match",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
        pod=P("p-a1", "node-a", foo=""), pods=[P("p-b1", "node-b", foo="")], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b")],
        constraints=[NODE_C], counts=[{"node-a": 1, "node-b": 1}],
        paths=[(("node-a", 1), ("node-b", 1))],
    ),
    dict(
        name="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
        pod=P("p-a1", "node-a", ns="ns1", foo=""), pods=[P("p-b1", "node-b", foo="")],
        node_idx=0, nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b")],
        constraints=[NODE_C], counts=[{"node-a": 0, "node-b": 1}],
        paths=[(("node-a", 0), ("node-b", 1))],
    ),
    dict(
        name="add pod on non-critical node won't trigger re-calculation",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
        pod=P("p-b2", "node-b", foo=""), pods=[P("p-b1", "node-b", foo="")], node_idx=1,
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b")],
        constraints=[NODE_C], counts=[{"node-a": 0, "node-b": 2}],
        paths=[(("node-a", 0), ("node-b", 2))],
    ),
    dict(
        name="node a and x both impact topologyKeyToMinPodsMap on zone and node",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        pod=P("p-a1", "node-a", foo=""), pods=[], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-x", "zone2", "node-x")],
        constraints=[ZONE_C, NODE_C],
        counts=[{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        paths=[(("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))],
    ),
    dict(
        name="only node a impacts topologyKeyToMinPodsMap on zone and node",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        pod=P("p-a1", "node-a", foo=""), pods=[P("p-x1", "node-x", foo="")], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-x", "zone2", "node-x")],
        constraints=[ZONE_C, NODE_C],
        counts=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        paths=[(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))],
    ),
    dict(
        name="node a impacts topologyKeyToMinPodsMap on node, node x impacts "
             "topologyKeyToMinPodsMap on zone",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        pod=P("p-a1", "node-a", foo=""),
        pods=[P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""),
              P("p-x1", "node-x", foo="")], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-x", "zone2", "node-x")],
        constraints=[ZONE_C, NODE_C],
        counts=[{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
        paths=[(("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))],
    ),
    dict(
        name="Constraints hold different labelSelectors, node a impacts "
             "topologyKeyToMinPodsMap on zone",
        preemptor=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR))),
        pod=P("p-a1", "node-a", foo=""),
        pods=[P("p-b1", "node-b", foo="", bar=""), P("p-x1", "node-x", foo="", bar=""),
              P("p-x2", "node-x", bar="")], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-x", "zone2", "node-x")],
        constraints=[ZONE_C, C(1, "node", BAR)],
        counts=[{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
        paths=[(("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))],
    ),
    dict(
        name="Constraints hold different labelSelectors, node a impacts "
             "topologyKeyToMinPodsMap on both zone and node",
        preemptor=make_pod("p", labels={"foo": "", "bar": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR))),
        pod=P("p-a1", "node-a", foo="", bar=""),
        pods=[P("p-b1", "node-b", bar=""), P("p-x1", "node-x", foo="", bar=""),
              P("p-x2", "node-x", bar="")], node_idx=0,
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-x", "zone2", "node-x")],
        constraints=[ZONE_C, C(1, "node", BAR)],
        counts=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
        paths=[(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))],
    ),
]

_AFF_NODES = [N("node-a", "zone1", "node-a", foo="bar"), N("node-b", "zone2", "node-b", foo="")]
_TAINT_NODES = [N("node-a", "zone1", "node-a", taints=UNSCHEDULABLE_TAINT),
                N("node-b", "zone2", "node-b")]
for _gate in ("disabled", "enabled"):  # upstream runs both; v1.35 has the policy on either way
    ADD_POD_CASES += [
        dict(
            name=f"add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy "
                 f"{_gate}",
            preemptor=make_pod("p", labels={"foo": ""}, affinity=affinity_not_in("foo", ["bar"]),
                               constraints=(sc(1, "zone", DNS, FOO),)),
            pod=P("p-a1", "node-a", foo="", zone="zone1"),
            pods=[P("p-a2", "node-a", foo="", zone="zone1"),
                  P("p-b1", "node-b", foo="", zone="zone2")],
            node_idx=0, nodes=list(_AFF_NODES), constraints=[ZONE_C],
            counts=[{"zone2": 1}], paths=[(("zone2", 1), INF)],
        ),
        dict(
            name=f"add a pod when scheduling node affinity matched pod with NodeInclusionPolicy "
                 f"{_gate}",
            preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
            pod=P("p-b1", "node-b", foo="", zone="zone2"),
            pods=[P("p-a1", "node-a", foo="", zone="zone1"),
                  P("p-b2", "node-b", foo="", zone="zone2")],
            node_idx=1, nodes=list(_AFF_NODES), constraints=[ZONE_C],
            counts=[{"zone1": 1, "zone2": 2}], paths=[(("zone1", 1), ("zone2", 2))],
        ),
    ]
ADD_POD_CASES += [
    dict(
        name="add a label selector not matched pod when with NodeInclusionPolicy enabled",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        pod=P("p-b1", "node-b", zone="zone2"),
        pods=[P("p-a1", "node-a", foo="", zone="zone1"),
              P("p-b2", "node-b", foo="", zone="zone2")],
        node_idx=1, nodes=list(_AFF_NODES), constraints=[ZONE_C],
        counts=[{"zone1": 1, "zone2": 1}], paths=[(("zone1", 1), ("zone2", 1))],
    ),
    dict(
        name="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        pod=P("p-b1", "node-b", foo="", zone="zone2"),
        pods=[P("p-a1", "node-a", foo="", zone="zone1"),
              P("p-b2", "node-b", foo="", zone="zone2")],
        node_idx=1, nodes=list(_TAINT_NODES), constraints=[ZONE_C],
        counts=[{"zone1": 1, "zone2": 2}], paths=[(("zone1", 1), ("zone2", 2))],
    ),
    dict(
        name="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
        preemptor=make_pod("p", labels={"foo": ""}, tolerations=TOLERATE_UNSCHEDULABLE,
                           constraints=(sc(1, "zone", DNS, FOO),)),
        pod=P("p-b1", "node-b", foo="", zone="zone2"),
        pods=[P("p-a1", "node-a", foo="", zone="zone1"),
              P("p-b2", "node-b", foo="", zone="zone2")],
        node_idx=1, nodes=list(_TAINT_NODES), constraints=[ZONE_C],
        counts=[{"zone1": 1, "zone2": 2}], paths=[(("zone1", 1), ("zone2", 2))],
    ),
]


@pytest.mark.parametrize("case", ADD_POD_CASES, ids=[c["name"] for c in ADD_POD_CASES])
def test_pre_filter_state_add_pod(case: dict) -> None:
    pl, snap = setup(case["nodes"], case["pods"])
    cs = CycleState()
    _, st = pl.pre_filter(cs, case["preemptor"], snap)
    assert st is None
    before = cs.read(PRE_FILTER_STATE_KEY).clone()
    ni = snap.get(case["nodes"][case["node_idx"]].name)
    clone = cs.clone()
    assert pl.add_pod(clone, case["preemptor"], case["pod"], ni) is None
    check_state(clone.read(PRE_FILTER_STATE_KEY), case["constraints"], case["counts"],
                case["paths"])
    # The original cycle state is untouched by what happened to the clone.
    s = cs.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == before.tp_value_to_match_num
    assert [p.as_tuples() for p in s.critical_paths] == [
        p.as_tuples() for p in before.critical_paths]


# ---------------------------------------------------------------- TestPreFilterStateRemovePod

REMOVE_POD_CASES = [
    dict(
        name="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-x", "zone2", "node-x")],
        pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
              P("p-x1", "node-x", foo="")],
        deleted_idx=0, node_idx=0, constraints=[ZONE_C],
        counts=[{"zone1": 1, "zone2": 1}], paths=[(("zone1", 1), ("zone2", 1))],
    ),
    dict(
        name="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
              P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
        deleted_idx=0, node_idx=0, constraints=[ZONE_C],
        counts=[{"zone1": 1, "zone2": 2}], paths=[(("zone1", 1), ("zone2", 2))],
    ),
    dict(
        name="delete an irrelevant pod won't help",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=std4(),
        pods=[P("p-a0", "node-a", bar=""), P("p-a1", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-x1", "node-x", foo=""),
              P("p-y1", "node-y", foo="")],
        deleted_idx=0, node_idx=0, constraints=[ZONE_C],
        counts=[{"zone1": 2, "zone2": 2}], paths=[(("zone1", 2), ("zone2", 2))],
    ),
    dict(
        name="delete a non-existing pod won't help",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
        nodes=std4(),
        pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
              P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
        deleted_idx=-1, deleted=P("p-a0", "node-a", bar=""), node_idx=0, constraints=[ZONE_C],
        counts=[{"zone1": 2, "zone2": 2}], paths=[(("zone1", 2), ("zone2", 2))],
    ),
    dict(
        name="two spreadConstraints",
        preemptor=make_pod("p", labels={"foo": ""}, constraints=(
            sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))),
        nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
               N("node-x", "zone2", "node-x")],
        pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
              P("p-b1", "node-b", foo=""), P("p-x1", "node-x", foo=""),
              P("p-x2", "node-x", foo="")],
        deleted_idx=3, node_idx=2, constraints=[ZONE_C, NODE_C],
        counts=[{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
        paths=[(("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))],
    ),
]
for _gate in ("disabled", "enabled"):
    REMOVE_POD_CASES += [
        dict(
            name=f"remove a pod when scheduling node affinity unmatched pod with "
                 f"NodeInclusionPolicy {_gate}",
            preemptor=make_pod("p", labels={"foo": ""}, affinity=affinity_not_in("foo", ["bar"]),
                               constraints=(sc(1, "zone", DNS, FOO),)),
            node_idx=0, deleted_idx=-1, deleted=P("p-a1", "node-a", foo="", zone="zone1"),
            pods=[P("p-a2", "node-a", foo="", zone="zone1"),
                  P("p-b1", "node-b", foo="", zone="zone2")],
            nodes=list(_AFF_NODES), constraints=[ZONE_C],
            counts=[{"zone2": 1}], paths=[(("zone2", 1), INF)],
        ),
        dict(
            name=f"remove a pod when scheduling node affinity matched pod with "
                 f"NodeInclusionPolicy {_gate}",
            preemptor=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
            node_idx=1, deleted_idx=-1, deleted=P("p-b1", "node-b", foo="", zone="zone2"),
            pods=[P("p-a1", "node-a", foo="", zone="zone1"),
                  P("p-b2", "node-b", foo="", zone="zone2")],
            nodes=list(_AFF_NODES), constraints=[ZONE_C],
            counts=[{"zone2": 0, "zone1": 1}], paths=[(("zone2", 0), ("zone1", 1))],
        ),
    ]


@pytest.mark.parametrize("case", REMOVE_POD_CASES, ids=[c["name"] for c in REMOVE_POD_CASES])
def test_pre_filter_state_remove_pod(case: dict) -> None:
    pl, snap = setup(case["nodes"], case["pods"])
    cs = CycleState()
    _, st = pl.pre_filter(cs, case["preemptor"], snap)
    assert st is None
    i = case["deleted_idx"]
    deleted = case["pods"][i] if 0 <= i < len(case["pods"]) else case["deleted"]
    ni = snap.get(case["nodes"][case["node_idx"]].name)
    assert pl.remove_pod(cs, case["preemptor"], deleted, ni) is None
    s = cs.read(PRE_FILTER_STATE_KEY)
    assert [constraint_key(c) for c in s.constraints] == case["constraints"]
    assert s.tp_value_to_match_num == case["counts"]
    got = [sorted_paths(cp.as_tuples()) for cp in s.critical_paths]
    assert got == [sorted_paths(p) for p in case["paths"]]


# ---------------------------------------------------------------- Filter helpers

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
REASON = {U: (ERR_REASON_CONSTRAINTS_NOT_MATCH,), UU: (ERR_REASON_NODE_LABEL_NOT_MATCH,)}


def run_filters(pl: PodTopologySpread, snap: Snapshot, pod: Pod) -> dict[str, tuple]:
    """Filter every node in both forms; returns name -> (code, reasons), asserting that the
    per-node and batch forms agree."""
    cs = CycleState()
    _, st = pl.pre_filter(cs, pod, snap)
    assert st is None, st
    per_node = {}
    for ni in snap.node_infos:
        r = pl.filter(cs, pod, ni)
        per_node[ni.name] = (S, ()) if r is None else (r.code, r.reasons)
    idx = np.arange(snap.num_nodes)
    b = pl.filter_batch(cs, pod, snap, idx)
    batch = {}
    for k, ni in enumerate(snap.node_infos):
        st2 = b.status_at(k, pl.name)
        batch[ni.name] = (st2.code, st2.reasons)
    assert per_node == batch
    return per_node


def check_filter(case: dict) -> None:
    pl, snap = setup(case["nodes"], case["pods"])
    got = run_filters(pl, snap, case["pod"])
    want = {n: (code, REASON.get(code, ())) for n, code in case["want"].items()}
    assert got == want


# ---------------------------------------------------------------- TestSingleConstraint

_SPREAD_2103 = [P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
                P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo=""),
                P("p-y2", "node-y", foo=""), P("p-y3", "node-y", foo="")]
_POLICY4 = [N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),
            N("node-x", node="node-x", foo=""), N("node-y", node="node-y")]
_POLICY4_T = [N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),
              N("node-x", node="node-x", foo=""),
              N("node-y", node="node-y", taints=UNSCHEDULABLE_TAINT)]
_POLICY_PODS = [P("p-b1", "node-a", foo=""), P("p-b2", "node-b", foo=""),
                P("p-y1", "node-y", foo="")]

SINGLE_CASES = [
    dict(name="no existing pods",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
         nodes=std4(), pods=[],
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="no existing pods, incoming pod doesn't match itself",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, BAR),)),
         nodes=std4(), pods=[],
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="existing pods in a different namespace do not count",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
         nodes=std4(),
         pods=[P("p-a1", "node-a", ns="ns1", foo=""), P("p-b1", "node-a", ns="ns2", foo=""),
               P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
         want={"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="existing pods do not match null selector",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, None),)),
         nodes=std4(), pods=[P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="pods spread across zones as 3/3, all nodes fit",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
         nodes=std4(), pods=list(_SPREAD_2103),
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),)),
         nodes=[N("node-a", "zone1", "node-a"), N("node-b", node="node-b", zon="zone1"),
                N("node-x", "zone2", "node-x"), N("node-y", "zone2", "node-y")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
               P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
         want={"node-a": S, "node-b": UU, "node-x": U, "node-y": U}),
    dict(name="pod cannot be scheduled as all nodes don't have label 'rack'",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "rack", DNS, FOO),)),
         nodes=[N("node-a", "zone1", "node-a"), N("node-x", "zone2", "node-x")], pods=[],
         want={"node-a": UU, "node-x": UU}),
    dict(name="pods spread across nodes as 2/1/0/3, only node-x fits",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
         nodes=std4(), pods=list(_SPREAD_2103),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(2, "node", DNS, FOO),)),
         nodes=std4(), pods=list(_SPREAD_2103),
         want={"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
         pod=make_pod("p", labels={"bar": ""}, constraints=(sc(1, "node", DNS, FOO),)),
         nodes=std4(), pods=list(_SPREAD_2103),
         want={"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
         pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("node", ["node-a", "node-y"]),
                      constraints=(sc(1, "node", DNS, FOO),)),
         nodes=std4(), pods=list(_SPREAD_2103),
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="terminating Pods should be excluded",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
         nodes=[N("node-a", node="node-a"), N("node-b", node="node-b")],
         pods=[P("p-a", "node-a", terminating=True, foo=""), P("p-b", "node-b", foo="")],
         want={"node-a": S, "node-b": U}),
    dict(name="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
         pod=make_pod("p", labels={"foo": ""}, affinity=affinity_not_in("node", ["node-b"]),
                      constraints=(sc(1, "zone", DNS, FOO),)),
         nodes=std4(),
         pods=[P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < "
              "minDomains, then the third node fits",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(2, "node", DNS, FOO, min_domains=4),)),
         nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
                N("node-c", node="node-c")],
         pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
               P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""),
               P("p-c1", "node-c", foo="")],
         want={"node-a": U, "node-b": U, "node-c": S}),
    dict(name="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > "
              "minDomains, then the all nodes fit",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(2, "node", DNS, FOO, min_domains=2),)),
         nodes=[N("node-a", node="node-a"), N("node-b", node="node-b"),
                N("node-c", node="node-c")],
         pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""),
               P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""),
               P("p-c1", "node-c", foo="")],
         want={"node-a": S, "node-b": S, "node-c": S}),
    dict(name="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < "
              "minDomains, then the third and fourth nodes fit",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(2, "zone", DNS, FOO, min_domains=3),)),
         nodes=std4(),
         pods=[P("p-b1", "node-a", foo=""), P("p-b2", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > "
              "minDomains, then the all nodes fit",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(2, "zone", DNS, FOO, min_domains=1),)),
         nodes=std4(),
         pods=[P("p-b1", "node-a", foo=""), P("p-b2", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="NodeAffinityPolicy honored with labelSelectors",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                      constraints=(sc(1, "node", DNS, FOO),)),
         nodes=list(_POLICY4), pods=list(_POLICY_PODS),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="NodeAffinityPolicy ignored with labelSelectors",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""},
                      constraints=(sc(1, "node", DNS, FOO, naf=IGNORE),)),
         nodes=list(_POLICY4), pods=list(_POLICY_PODS),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="NodeAffinityPolicy honored with nodeAffinity",
         pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
                      constraints=(sc(1, "node", DNS, FOO),)),
         nodes=list(_POLICY4), pods=list(_POLICY_PODS),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="NodeAffinityPolicy ignored with nodeAffinity",
         pod=make_pod("p", labels={"foo": ""}, affinity=affinity_in("foo", [""]),
                      constraints=(sc(1, "node", DNS, FOO, naf=IGNORE),)),
         nodes=list(_POLICY4), pods=list(_POLICY_PODS),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="NodeTaintsPolicy honored",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO, ntp=HONOR),)),
         nodes=list(_POLICY4_T), pods=list(_POLICY_PODS),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="NodeTaintsPolicy ignored",
         pod=make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),)),
         nodes=list(_POLICY4_T), pods=list(_POLICY_PODS),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
]


@pytest.mark.parametrize("case", SINGLE_CASES, ids=[c["name"] for c in SINGLE_CASES])
def test_single_constraint(case: dict) -> None:
    check_filter(case)


# ---------------------------------------------------------------- TestMultipleConstraints

_ZN = (sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO))
_ZN_FB = (sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR))

MULTI_CASES = [
    dict(name="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
         pod=make_pod("p", labels={"foo": ""}, constraints=_ZN), nodes=std4(),
         pods=list(_SPREAD_2103),
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
         pod=make_pod("p", labels={"foo": ""}, constraints=_ZN), nodes=std4(),
         pods=[*_SPREAD_2103, P("p-y4", "node-y", foo="")],
         want={"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    dict(name="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=_ZN_FB), nodes=std4(),
         pods=[P("p-a1", "node-a", foo=""), P("p-y1", "node-y", bar="")],
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=_ZN_FB), nodes=std4(),
         pods=[P("p-a1", "node-a", foo=""), P("p-x1", "node-x", bar=""),
               P("p-y1", "node-y", bar="")],
         want={"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    dict(name="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
         pod=make_pod("p", labels={"foo": "", "bar": ""}, constraints=_ZN_FB), nodes=std4(),
         pods=[P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo="", bar=""),
               P("p-y1", "node-y", foo=""), P("p-y2", "node-y", foo="", bar=""),
               P("p-y3", "node-y", foo="")],
         want={"node-a": U, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="Constraints hold different labelSelectors but pod doesn't match itself on "
              "'zone' constraint",
         pod=make_pod("p", labels={"bar": ""}, constraints=_ZN_FB), nodes=std4(),
         pods=[P("p-a1", "node-a", foo=""), P("p-x1", "node-x", bar=""),
               P("p-y1", "node-y", bar="")],
         want={"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="two Constraints on zone and node, absence of label 'node' on node-x, "
              "spreads = [1/1, 1/0/0/1]",
         pod=make_pod("p", labels={"foo": ""}, constraints=_ZN),
         nodes=[N("node-a", "zone1", "node-a"), N("node-b", "zone1", "node-b"),
                N("node-x", "zone2"), N("node-y", "zone2", "node-y")],
         pods=[P("p-a1", "node-a", foo=""), P("p-y3", "node-y", foo="")],
         want={"node-a": U, "node-b": S, "node-x": UU, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""}, constraints=(
             sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO, naf=IGNORE))),
         nodes=[N("node-a", "zone1", "node-a", foo=""), N("node-b", "zone1", "node-b", foo=""),
                N("node-x", "zone2", "node-x", foo=""), N("node-y", "zone2", "node-y")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
         pod=make_pod("p", labels={"foo": ""}, constraints=(
             sc(1, "zone", DNS, FOO, ntp=HONOR), sc(1, "node", DNS, FOO))),
         nodes=[N("node-a", "zone1", "node-a", foo=""), N("node-b", "zone1", "node-b", foo=""),
                N("node-x", "zone2", "node-x", foo=""),
                N("node-y", "zone2", "node-y", taints=UNSCHEDULABLE_TAINT)],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""}, constraints=_ZN),
         nodes=[N("node-a", "zone1", "node-a", foo=""), N("node-b", "zone1", "node-b"),
                N("node-x", "zone2", "node-x", foo=""),
                N("node-y", "zone2", "node-y", taints=UNSCHEDULABLE_TAINT, foo="")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
         pod=make_pod("p", labels={"foo": ""}, node_selector={"foo": ""}, constraints=(
             sc(1, "zone", DNS, FOO, ntp=HONOR), sc(1, "node", DNS, FOO, naf=IGNORE))),
         nodes=[N("node-a", "zone1", "node-a", foo=""), N("node-b", "zone1", "node-b"),
                N("node-x", "zone2", "node-x", foo=""),
                N("node-y", "zone2", "node-y", taints=UNSCHEDULABLE_TAINT, foo="")],
         pods=[P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""),
               P("p-y1", "node-y", foo="")],
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
]


@pytest.mark.parametrize("case", MULTI_CASES, ids=[c["name"] for c in MULTI_CASES])
def test_multiple_constraints(case: dict) -> None:
    check_filter(case)


# ---------------------------------------------------------------- other Filter behaviour


def test_filter_without_pre_filter_state() -> None:
    """TestPreFilterDisabled: Filter without PreFilter is an Error with upstream's words."""
    pl, snap = setup([N("node-a", "zone1", "node-a")], [])
    ni = snap.node_infos[0]
    st = pl.filter(CycleState(), make_pod("p"), ni)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == ('reading "PreFilterPodTopologySpread" from cycleState: not found',)
    b = pl.filter_batch(CycleState(), make_pod("p"), snap, np.arange(1))
    assert int(b.codes[0]) == Code.ERROR


def test_first_failing_constraint_decides_the_reason() -> None:
    """A node failing the skew of constraint 0 and lacking the key of constraint 1 reports
    the skew (constraints are checked in order), in both forms."""
    pod = make_pod("p", labels={"foo": ""}, constraints=(
        sc(1, "zone", DNS, FOO), sc(1, "rack", DNS, FOO)))
    nodes = [N("node-a", "zone1", "node-a", rack="r1"), N("node-b", "zone1", "node-b"),
             N("node-x", "zone2", "node-x", rack="r2")]
    pods = [P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo="")]
    pl, snap = setup(nodes, pods)
    got = run_filters(pl, snap, pod)
    assert got == {"node-a": (U, REASON[U]), "node-b": (U, REASON[U]),
                   "node-x": (S, ())}


def test_nominated_pod_via_add_pod_changes_the_filter_verdict() -> None:
    """AddPod of a nominated pod (on a clone) raises a domain's count: the node that fit
    no longer does; the original state still lets it pass."""
    pod = make_pod("p", labels={"foo": ""}, constraints=(sc(1, "node", DNS, FOO),))
    nodes = [N("node-a", node="node-a"), N("node-b", node="node-b")]
    pl, snap = setup(nodes, [P("p-a1", "node-a", foo="")])
    cs = CycleState()
    pl.pre_filter(cs, pod, snap)
    nb = snap.get("node-b")
    assert pl.filter(cs, pod, nb) is None
    c2 = cs.clone()
    pl.add_pod(c2, pod, P("nominated", "node-b", foo=""), nb)
    pl.add_pod(c2, pod, P("nominated2", "node-b", foo=""), nb)
    st = pl.filter(c2, pod, nb)
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert pl.filter(cs, pod, nb) is None
    pl.remove_pod(c2, pod, P("nominated", "node-b", foo=""), nb)
    pl.remove_pod(c2, pod, P("nominated2", "node-b", foo=""), nb)
    assert pl.filter(c2, pod, nb) is None


def test_critical_paths_update_matches_upstream() -> None:
    from kubesched.plugins.podtopologyspread.filtering import CriticalPaths
    cp = CriticalPaths()
    for v, n in [("a", 3), ("b", 1), ("c", 2), ("d", 5)]:
        cp.update(v, n)
    assert cp.as_tuples() == (("b", 1), ("c", 2))
    cp.update("b", 4)  # the minimum grows past paths[1]: swap
    assert cp.as_tuples() == (("c", 2), ("b", 4))
    cp.update("a", 0)  # a domain not on a path drops below the minimum
    assert cp.as_tuples() == (("a", 0), ("c", 2))
    # Ties keep the first value seen (strict comparisons, as upstream).
    cp3 = CriticalPaths()
    for v, n in [("a", 1), ("b", 2), ("c", 2), ("d", 1)]:
        cp3.update(v, n)
    assert cp3.as_tuples() == (("a", 1), ("d", 1))
    cp4 = CriticalPaths()
    for v, n in [("a", 1), ("b", 2), ("c", 2)]:
        cp4.update(v, n)
    assert cp4.as_tuples() == (("a", 1), ("b", 2))
    # An empty topology value coincides with the initial paths' value, as upstream.
    cp2 = CriticalPaths()
    cp2.update("", 7)
    assert cp2.as_tuples() == (("", 7), ("", MAX_INT32))


def test_state_clone_is_deep_for_counts() -> None:
    pod = make_pod("p", labels={"foo": ""}, constraints=(sc(1, "zone", DNS, FOO),))
    pl, snap = setup(std4(), [P("p-a1", "node-a", foo="")])
    cs = CycleState()
    pl.pre_filter(cs, pod, snap)
    s = cs.read(PRE_FILTER_STATE_KEY)
    c = s.clone()
    c.tp_value_to_match_num[0]["zone1"] += 5
    c.critical_paths[0].update("zone1", 6)
    assert s.tp_value_to_match_num[0]["zone1"] == 1
    assert s.critical_paths[0].as_tuples() == (("zone2", 0), ("zone1", 1))
    assert c.constraints is s.constraints


def test_invalid_selector_is_an_error_status() -> None:
    bad = LabelSelector(match_labels=(("in valid", "x"),))
    pod = make_pod("p", constraints=(sc(1, "zone", DNS, bad),))
    pl, snap = setup(std4(), [])
    _, st = pl.pre_filter(CycleState(), pod, snap)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons[0].startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: ")

