"""InterPodAffinity, ported from upstream v1.35 ``plugins/interpodaffinity/filtering_test.go``
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod, TestGetTPMapMatchingIncomingAffinityAntiAffinity) and
``scoring_test.go`` (TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight), plus events and queueing hints.
Every case runs both the per-node and the batch form.

Go's test pods have namespace "" unless set; so do these.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kubesched.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    WeightedPodAffinityTerm,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList, PluginError
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    get_incoming_affinity_anti_affinity_counts,
    pod_affinity_info,
)
from kubesched.testing import snapshot_from_nodes

AFF = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))
ANTI = Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
EXISTING = Status(Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))
OK = None
SKIP = "skip"

# ---------------------------------------------------------------- builders (st.MakePod & co.)

_uid = itertools.count()


def req(key: str, op: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key, op, tuple(values))


def sel(*reqs: LabelSelectorRequirement, **match_labels: str) -> LabelSelector:
    return LabelSelector(tuple(sorted(match_labels.items())), tuple(reqs))


def term(selector: LabelSelector | None, topology_key: str = "", namespaces: tuple[str, ...] = (),
         ns_selector: LabelSelector | None = None) -> PodAffinityTerm:
    return PodAffinityTerm(selector, topology_key, namespaces, ns_selector)


def t_in(key: str, topo: str, *values: str) -> PodAffinityTerm:
    return term(sel(req(key, "In", *values)), topo)


def t_not_in(key: str, topo: str, *values: str) -> PodAffinityTerm:
    return term(sel(req(key, "NotIn", *values)), topo)


def t_exists(key: str, topo: str) -> PodAffinityTerm:
    return term(sel(req(key, "Exists")), topo)


def w(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight, t)


def affinity(required=None, anti=None, preferred=None, pref_anti=None) -> Affinity:
    """Only the kinds given are set (as st.MakePod's PodAffinity*/PodAntiAffinity*)."""
    pa = (PodAffinity(tuple(required or ()), tuple(preferred or ()))
          if required is not None or preferred is not None else None)
    paa = (PodAffinity(tuple(anti or ()), tuple(pref_anti or ()))
           if anti is not None or pref_anti is not None else None)
    return Affinity(pod_affinity=pa, pod_anti_affinity=paa)


def both(required, anti) -> Affinity:
    """createPodWithAffinityTerms: both PodAffinity and PodAntiAffinity set."""
    return Affinity(pod_affinity=PodAffinity(tuple(required or ())),
                    pod_anti_affinity=PodAffinity(tuple(anti or ())))


def pod(labels: dict[str, str] | None = None, node: str = "", ns: str = "",
        aff: Affinity | None = None, name: str = "") -> Pod:
    n = next(_uid)
    return Pod(ObjectMeta(name or f"p{n}", ns, f"uid-{n}", dict(labels or {})),
               PodSpec(node_name=node, affinity=aff))


def node(name: str, **labels: str) -> Node:
    return Node(ObjectMeta(name, labels=dict(labels)))


def namespaces(*items: tuple[str, dict[str, str]]) -> dict[str, Namespace]:
    return {n: Namespace(ObjectMeta(n, labels=dict(lbl))) for n, lbl in items}


NS_T1 = {"team": "team1"}
NS_T2 = {"team": "team2"}
TEAM_NAMESPACES = namespaces(("subteam1.team1", NS_T1), ("subteam2.team1", NS_T1),
                             ("subteam1.team2", NS_T2), ("subteam2.team2", NS_T2))


def plugin(snap: Snapshot, nss=None, **args) -> InterPodAffinity:
    return InterPodAffinity(args, Handle(snapshot=snap, namespaces=dict(nss or {})))


def run_filter(p: InterPodAffinity, snap: Snapshot, incoming: Pod, names: list[str]):
    """(PreFilter status, [Filter status per node]) with per-node and batch forms checked to
    agree."""
    state = CycleState()
    _, st = p.pre_filter(state, incoming, snap)
    if st is not None and not st.is_success():
        return st, None
    got = []
    idx = np.array([snap.table.index[n] for n in names], dtype=np.int64)
    batch = p.filter_batch(state, incoming, snap, idx)
    for i, n in enumerate(names):
        one = p.filter(state, incoming, snap.get(n))
        b = batch.status_at(i, p.name)
        assert (b.code, b.reasons) == ((one.code, one.reasons) if one else (Code.SUCCESS, ())), n
        got.append(one)
    return st, got


def same(got: Status | None, want: Status | None) -> bool:
    if want is None:
        return got is None
    return got is not None and (got.code, got.reasons) == (want.code, want.reasons)


# ============================================================ TestRequiredAffinitySingleNode

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
LABELS1 = {"region": "r1", "zone": "z11"}
BAD = "{{.bad-value.}}"
BAD_MSG = ('parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: '
           '"{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric '
           "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
           "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
           "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def _existing(**kw) -> Pod:
    return pod(POD_LABEL, "node1", **kw)


def _in_ns_sel(*values: str) -> LabelSelector:
    return sel(req("team", "In", *values))


SINGLE_NODE = [
    ("no required affinity, no pods", lambda: pod(), [], SKIP),
    ("In operator matches the existing pod",
     lambda: pod(POD_LABEL2, aff=affinity([t_in("service", "region", "securityscan", "value2")])),
     [_existing], OK),
    ("NotIn operator matches the existing pod",
     lambda: pod(POD_LABEL2, aff=affinity([t_not_in("service", "region", "securityscan3",
                                                    "value3")])),
     [_existing], OK),
    ("diff namespace",
     lambda: pod(POD_LABEL2, aff=both([term(sel(req("service", "In", "securityscan", "value2")),
                                            "", ("DiffNameSpace",))], None)),
     [lambda: pod(POD_LABEL, "node1", ns="ns")], AFF),
    ("unmatching labelSelector",
     lambda: pod(POD_LABEL, aff=affinity([t_in("service", "", "antivirusscan", "value2")])),
     [_existing], AFF),
    ("different label operators in multiple terms",
     lambda: pod(POD_LABEL2, aff=both([
         term(sel(req("service", "Exists"), req("wrongkey", "DoesNotExist")), "region"),
         term(sel(req("service", "In", "securityscan"), req("service", "NotIn", "WrongValue")),
              "region")], None)),
     [_existing], OK),
    ("matchExpressions are ANDed",
     lambda: pod(POD_LABEL2, aff=both([
         term(sel(req("service", "Exists"), req("wrongkey", "DoesNotExist")), "region"),
         term(sel(req("service", "In", "securityscan2"), req("service", "NotIn", "WrongValue")),
              "region")], None)),
     [_existing], AFF),
    ("affinity and anti-affinity satisfied",
     lambda: pod(POD_LABEL2, aff=affinity([t_in("service", "region", "securityscan", "value2")],
                                          [t_in("service", "node", "antivirusscan", "value2")])),
     [_existing], OK),
    ("affinity, anti-affinity and symmetry satisfied",
     lambda: pod(POD_LABEL2, aff=affinity([t_in("service", "region", "securityscan", "value2")],
                                          [t_in("service", "node", "antivirusscan", "value2")])),
     [lambda: pod(POD_LABEL, "node1", aff=affinity(
         anti=[t_in("service", "node", "antivirusscan", "value2")]))], OK),
    ("affinity satisfied, anti-affinity not",
     lambda: pod(POD_LABEL2, aff=affinity([t_in("service", "region", "securityscan", "value2")],
                                          [t_in("service", "zone", "securityscan", "value2")])),
     [_existing], ANTI),
    ("symmetry not satisfied",
     lambda: pod(POD_LABEL, aff=affinity([t_in("service", "region", "securityscan", "value2")],
                                         [t_in("service", "node", "antivirusscan", "value2")])),
     [lambda: pod(POD_LABEL, "node1", aff=affinity(
         anti=[t_in("service", "zone", "securityscan", "value2")]))], EXISTING),
    ("pod matches its own label, existing pod elsewhere",
     lambda: pod(POD_LABEL, aff=affinity([t_not_in("service", "region", "securityscan",
                                                   "value2")])),
     [lambda: pod(POD_LABEL, "node2")], AFF),
    ("existing anti-affinity respected without own anti-affinity: violated",
     lambda: pod(POD_LABEL),
     [lambda: pod(POD_LABEL, "node1", aff=affinity(
         anti=[t_in("service", "zone", "securityscan", "value2")]))], EXISTING),
    ("existing anti-affinity respected without own anti-affinity: satisfied",
     lambda: pod(POD_LABEL),
     [lambda: pod(POD_LABEL, "node1", aff=affinity(
         anti=[t_not_in("service", "zone", "securityscan", "value2")]))], SKIP),
    ("anti-affinity satisfied by existing pod but symmetry violated by incoming",
     lambda: pod(POD_LABEL, aff=affinity(anti=[t_exists("service", "region"),
                                               t_exists("security", "region")])),
     [lambda: pod(POD_LABEL2, "node1", aff=affinity(anti=[t_exists("security", "zone")]))],
     ANTI),
    ("symmetry a1",
     lambda: pod(POD_LABEL, aff=affinity(anti=[t_exists("service", "zone"),
                                               t_exists("security", "zone")])),
     [lambda: pod(POD_LABEL2, "node1", aff=affinity(anti=[t_exists("security", "zone")]))],
     ANTI),
    ("symmetry a2",
     lambda: pod(POD_LABEL2, aff=affinity(anti=[t_exists("security", "zone")])),
     [lambda: pod(POD_LABEL, "node1", aff=affinity(anti=[t_exists("service", "zone"),
                                                         t_exists("security", "zone")]))],
     EXISTING),
    ("symmetry b1",
     lambda: pod({"abc": "", "xyz": ""}, aff=affinity(anti=[t_exists("abc", "zone"),
                                                            t_exists("def", "zone")])),
     [lambda: pod({"def": "", "xyz": ""}, "node1", aff=affinity(
         anti=[t_exists("abc", "zone"), t_exists("def", "zone")]))], ANTI),
    ("symmetry b2",
     lambda: pod({"def": "", "xyz": ""}, aff=affinity(anti=[t_exists("abc", "zone"),
                                                            t_exists("def", "zone")])),
     [lambda: pod({"abc": "", "xyz": ""}, "node1", aff=affinity(
         anti=[t_exists("abc", "zone"), t_exists("def", "zone")]))], ANTI),
    ("invalid affinity label syntax fails PreFilter",
     lambda: pod(POD_LABEL, aff=affinity([t_in("service", "region", BAD),
                                          t_in("service", "node", "antivirusscan", "value2")])),
     [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (BAD_MSG,))),
    ("invalid second affinity term fails PreFilter",
     lambda: pod(POD_LABEL, aff=affinity([t_in("service", "region", "foo"),
                                          t_in("service", "node", BAD)])),
     [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (BAD_MSG,))),
    ("affinity with NamespaceSelector",
     lambda: pod(POD_LABEL2, aff=both([term(sel(req("service", "In", "securityscan", "value2")),
                                            "region", ns_selector=_in_ns_sel("team1"))], None)),
     [lambda: pod(POD_LABEL, "node1", ns="subteam1.team1")], OK),
    ("affinity with non-matching NamespaceSelector",
     lambda: pod(POD_LABEL2, aff=both([term(sel(req("service", "In", "securityscan", "value2")),
                                            "region", ns_selector=_in_ns_sel("team1"))], None)),
     [lambda: pod(POD_LABEL, "node1", ns="subteam1.team2")], AFF),
    ("anti-affinity with matching NamespaceSelector",
     lambda: pod(POD_LABEL2, ns="subteam1.team1", aff=both(None, [
         term(sel(req("service", "In", "securityscan", "value2")), "zone",
              ns_selector=_in_ns_sel("team1"))])),
     [lambda: pod(POD_LABEL, "node1", ns="subteam2.team1")], ANTI),
    ("anti-affinity with matching all NamespaceSelector",
     lambda: pod(POD_LABEL2, ns="subteam1.team1", aff=both(None, [
         term(sel(req("service", "In", "securityscan", "value2")), "zone",
              ns_selector=LabelSelector())])),
     [lambda: pod(POD_LABEL, "node1", ns="subteam2.team1")], ANTI),
    ("anti-affinity with non-matching NamespaceSelector",
     lambda: pod(POD_LABEL2, ns="subteam1.team1", aff=both(None, [
         term(sel(req("service", "In", "securityscan", "value2")), "zone",
              ns_selector=_in_ns_sel("team1"))])),
     [lambda: pod(POD_LABEL, "node1", ns="subteam1.team2")], OK),
]


@pytest.mark.parametrize(("name", "make_pod", "make_pods", "want"), SINGLE_NODE,
                         ids=[c[0] for c in SINGLE_NODE])
def test_required_affinity_single_node(name, make_pod, make_pods, want):
    snap = snapshot_from_nodes([node("node1", **LABELS1)], [f() for f in make_pods])
    p = plugin(snap, TEAM_NAMESPACES)
    pre, got = run_filter(p, snap, make_pod(), ["node1"])
    if want == SKIP:
        assert pre is not None and pre.code == Code.SKIP
    elif isinstance(want, Status) and want.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and \
            want.reasons[0].startswith("parsing pod"):
        assert pre is not None and (pre.code, pre.reasons) == (want.code, want.reasons)
    else:
        assert pre is None
        assert same(got[0], want), got[0]


# ============================================================ TestRequiredAffinityMultipleNodes

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _three_zones():
    return [node("nodeA", region="r1", zone="z1", hostname="nodeA"),
            node("nodeB", region="r1", zone="z2", hostname="nodeB")]


MULTI = [
    ("same topology key & value as a node with a matching pod",
     lambda: pod(aff=affinity([t_in("foo", "region", "bar")])),
     lambda: [pod({"foo": "bar"}, "node1")],
     lambda: [node("node1", **RG_CHINA), node("node2", **RG_CHINA_AZ1),
              node("node3", **RG_INDIA)],
     OK, [OK, OK, AFF]),
    ("first pod of a self-affine collection is not blocked",
     lambda: pod({"foo": "bar", "service": "securityscan"}, aff=affinity(
         [t_in("foo", "zone", "bar"), t_in("service", "zone", "securityscan")])),
     lambda: [pod({"foo": "bar"}, "nodeA")],
     lambda: [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
     OK, [OK, OK]),
    ("first pod only on nodes with the topology keys",
     lambda: pod({"foo": "bar", "service": "securityscan"}, aff=affinity(
         [t_in("foo", "zone", "bar"), t_in("service", "zone", "securityscan")])),
     lambda: [pod({"foo": "bar"}, "nodeA")],
     lambda: [node("nodeA", zoneLabel="az1", hostname="h1"),
              node("nodeB", zoneLabel="az2", hostname="h2")],
     OK, [AFF, AFF]),
    ("anti-affinity blocks the whole topology domain",
     lambda: pod(aff=affinity(anti=[t_in("foo", "region", "abc")])),
     lambda: [pod({"foo": "abc"}, "nodeA")],
     lambda: [node("nodeA", region="r1", hostname="nodeA"),
              node("nodeB", region="r1", hostname="nodeB")],
     OK, [ANTI, ANTI]),
    ("anti-affinity matches when any term matches",
     lambda: pod(aff=affinity(anti=[t_in("foo", "region", "abc"),
                                    t_in("service", "zone", "securityscan")])),
     lambda: [pod({"foo": "abc", "service": "securityscan"}, "nodeA")],
     lambda: [node("nodeA", region="r1", zone="z1", hostname="nodeA"),
              node("nodeB", region="r1", zone="z2", hostname="nodeB")],
     OK, [ANTI, ANTI]),
    ("anti-affinity: nodeC in another region fits",
     lambda: pod(aff=affinity(anti=[t_in("foo", "region", "abc")])),
     lambda: [pod({"foo": "abc"}, "nodeA")],
     lambda: [node("nodeA", **RG_CHINA), node("nodeB", **RG_CHINA_AZ1),
              node("nodeC", **RG_INDIA)],
     OK, [ANTI, ANTI, OK]),
    ("anti-affinity: matching pod of another namespace does not count",
     lambda: pod({"foo": "123"}, ns="NS1", aff=affinity(anti=[t_in("foo", "region", "bar")])),
     lambda: [pod({"foo": "bar"}, "nodeA", ns="NS1"),
              pod(None, "nodeC", ns="NS2", aff=affinity(anti=[t_in("foo", "region", "123")]))],
     lambda: [node("nodeA", **RG_CHINA), node("nodeB", **RG_CHINA_AZ1),
              node("nodeC", **RG_INDIA)],
     OK, [ANTI, ANTI, OK]),
    ("existing pod's term with a topology key no node has",
     lambda: pod({"foo": ""}),
     lambda: [pod(None, "nodeA", aff=affinity(anti=[t_exists("foo", "invalid-node-label")]))],
     lambda: [node("nodeA", region="r1", zone="z1", hostname="nodeA"),
              node("nodeB", region="r1", zone="z1", hostname="nodeB")],
     SKIP, [OK, OK]),
    ("incoming pod's anti-affinity: topology key checked after the selector",
     lambda: pod(None, "nodeA", aff=affinity(anti=[t_exists("foo", "invalid-node-label")])),
     lambda: [pod({"foo": ""}, "nodeA")],
     lambda: [node("nodeA", region="r1", zone="z1", hostname="nodeA"),
              node("nodeB", region="r1", zone="z1", hostname="nodeB")],
     OK, [OK, OK]),
    ("existing pods' anti-affinity violated on all nodes",
     lambda: pod({"foo": "", "bar": ""}),
     lambda: [pod(None, "nodeA", aff=affinity(anti=[t_exists("foo", "zone")])),
              pod(None, "nodeA", aff=affinity(anti=[t_exists("bar", "region")]))],
     _three_zones, OK, [EXISTING, EXISTING]),
    ("incoming anti-affinity violated on all nodes",
     lambda: pod(aff=affinity(anti=[t_exists("foo", "zone"), t_exists("bar", "region")])),
     lambda: [pod({"foo": ""}, "nodeA"), pod({"bar": ""}, "nodeB")],
     _three_zones, OK, [ANTI, ANTI]),
    ("existing anti-affinity: one term with an invalid topology key",
     lambda: pod({"foo": "", "bar": ""}),
     lambda: [pod(None, "nodeA", aff=affinity(anti=[t_exists("foo", "invalid-node-label"),
                                                    t_exists("bar", "zone")]))],
     _three_zones, OK, [EXISTING, OK]),
    ("incoming anti-affinity: one term with an invalid topology key",
     lambda: pod(aff=affinity(anti=[t_exists("foo", "invalid-node-label"),
                                    t_exists("bar", "zone")])),
     lambda: [pod({"foo": "", "bar": ""}, "nodeA", name="podA")],
     _three_zones, OK, [ANTI, OK]),
    ("existing anti-affinity: all terms valid",
     lambda: pod({"foo": "", "bar": ""}),
     lambda: [pod(None, "nodeA", aff=affinity(anti=[t_exists("foo", "region"),
                                                    t_exists("bar", "zone")]))],
     _three_zones, OK, [EXISTING, EXISTING]),
    ("incoming anti-affinity: all terms valid",
     lambda: pod(aff=affinity(anti=[t_exists("foo", "region"), t_exists("bar", "zone")])),
     lambda: [pod({"foo": "", "bar": ""}, "nodeA")],
     _three_zones, OK, [ANTI, ANTI]),
    ("existing pods on nodeA and nodeB: only nodeC fits",
     lambda: pod({"foo": "", "bar": ""}),
     lambda: [pod(None, "nodeA", aff=affinity(anti=[t_exists("foo", "zone"),
                                                    t_exists("labelA", "zone")])),
              pod(None, "nodeB", aff=affinity(anti=[t_exists("bar", "zone"),
                                                    t_exists("labelB", "zone")]))],
     lambda: [*_three_zones(), node("nodeC", region="r1", zone="z3", hostname="nodeC")],
     OK, [EXISTING, EXISTING, OK]),
    ("affinity: all terms match one pod",
     lambda: pod(aff=affinity([t_exists("foo", "region"), t_exists("bar", "zone")])),
     lambda: [pod({"foo": "", "bar": ""}, "nodeA", name="pod1")],
     lambda: [node("nodeA", region="r1", zone="z1", hostname="nodeA"),
              node("nodeB", region="r1", zone="z1", hostname="nodeB")],
     OK, [OK, OK]),
    ("affinity: terms matched by different pods do not count",
     lambda: pod(aff=affinity([t_exists("foo", "region"), t_exists("bar", "zone")])),
     lambda: [pod({"foo": ""}, "nodeA", name="pod1"), pod({"bar": ""}, "nodeB", name="pod2")],
     _three_zones, OK, [AFF, AFF]),
]


@pytest.mark.parametrize(("name", "make_pod", "make_pods", "make_nodes", "want_pre", "want"),
                         MULTI, ids=[c[0] for c in MULTI])
def test_required_affinity_multiple_nodes(name, make_pod, make_pods, make_nodes, want_pre, want):
    nodes = make_nodes()
    snap = snapshot_from_nodes(nodes, make_pods())
    p = plugin(snap, namespaces(("NS1", {})))
    pre, got = run_filter(p, snap, make_pod(), [n.name for n in nodes])
    if want_pre == SKIP:
        assert pre is not None and pre.code == Code.SKIP
        return
    assert pre is None
    for n, g, wnt in zip(nodes, got, want, strict=True):
        assert same(g, wnt), (n.name, g)


def test_filter_without_pre_filter_state():
    """TestPreFilterDisabled."""
    snap = snapshot_from_nodes([node("n")], [])
    p = plugin(snap)
    st = p.filter(CycleState(), pod(), snap.get("n"))
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)
    b = p.filter_batch(CycleState(), pod(), snap, np.array([0]))
    assert b.codes[0] == Code.ERROR


# ============================================================ TestPreFilterStateAddRemovePod

ANTI_FOO_BAR = [term(sel(req("foo", "In", "bar")), "region")]
COMPLEX = [term(sel(req("foo", "In", "bar", "buzz")), "region"),
           term(sel(req("service", "NotIn", "bar", "security", "test")), "zone")]
ADD_REMOVE_NODES = [("nodeA", {"region": "r1", "zone": "z11"}),
                    ("nodeB", {"region": "r1", "zone": "z12"}),
                    ("nodeC", {"region": "r2", "zone": "z21"})]
ADD_REMOVE = [
    ("anti-affinity terms updated",
     lambda: pod({"foo": "bar"}, aff=Affinity(pod_anti_affinity=PodAffinity(tuple(ANTI_FOO_BAR)))),
     lambda: [pod({"foo": "bar"}, "nodeA"),
              pod(None, "nodeC", aff=Affinity(pod_anti_affinity=PodAffinity(tuple(ANTI_FOO_BAR))))],
     lambda: pod({"foo": "bar"}, "nodeB",
                 aff=Affinity(pod_anti_affinity=PodAffinity(tuple(ANTI_FOO_BAR)))),
     {("region", "r1"): 2}, {}),
    ("complex anti-affinity terms updated",
     lambda: pod({"foo": "bar"}, aff=Affinity(pod_anti_affinity=PodAffinity(tuple(COMPLEX)))),
     lambda: [pod({"foo": "bar"}, "nodeA"),
              pod(None, "nodeC", aff=Affinity(pod_anti_affinity=PodAffinity(tuple(ANTI_FOO_BAR))))],
     lambda: pod({"foo": "bar"}, "nodeA",
                 aff=Affinity(pod_anti_affinity=PodAffinity(tuple(COMPLEX)))),
     {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {}),
    ("affinity and anti-affinity updated",
     lambda: pod({"foo": "bar"}, aff=Affinity(pod_affinity=PodAffinity(tuple(COMPLEX)))),
     lambda: [pod({"foo": "bar"}, "nodeA"),
              pod(None, "nodeC", aff=Affinity(pod_affinity=PodAffinity(tuple(COMPLEX)),
                                              pod_anti_affinity=PodAffinity(tuple(ANTI_FOO_BAR))))],
     lambda: pod({"foo": "bar"}, "nodeA",
                 aff=Affinity(pod_anti_affinity=PodAffinity(tuple(COMPLEX)))),
     {}, {("region", "r1"): 2, ("zone", "z11"): 2}),
]


def _counts(s):
    return (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)


@pytest.mark.parametrize(("name", "make_pending", "make_existing", "make_added", "want_anti",
                          "want_aff"), ADD_REMOVE, ids=[c[0] for c in ADD_REMOVE])
def test_pre_filter_state_add_remove_pod(name, make_pending, make_existing, make_added,
                                         want_anti, want_aff):
    nodes = [node(n, **lbl) for n, lbl in ADD_REMOVE_NODES]
    pending, existing, added = make_pending(), make_existing(), make_added()

    def get_state(pods):
        snap = snapshot_from_nodes(nodes, pods)
        p = plugin(snap)
        cs = CycleState()
        _, st = p.pre_filter(cs, pending, snap)
        assert st is None
        return p, cs, snap

    _, all_cs, _ = get_state([*existing, added])
    all_state = all_cs.read(PRE_FILTER_STATE_KEY)
    p, cs, snap = get_state(existing)
    original = cs.read(PRE_FILTER_STATE_KEY).clone()
    ni = snap.get(added.spec.node_name)
    assert p.add_pod(cs, pending, added, ni) is None
    state = cs.read(PRE_FILTER_STATE_KEY)
    assert state.anti_affinity_counts == want_anti
    assert state.affinity_counts == want_aff
    assert _counts(state) == _counts(all_state)
    assert p.remove_pod(cs, pending, added, ni) is None
    assert _counts(state) == _counts(original)


def test_pre_filter_state_clone_is_deep():
    snap = snapshot_from_nodes([node("nodeA", region="r1")],
                               [pod({"foo": "bar"}, "nodeA")])
    p = plugin(snap)
    cs = CycleState()
    p.pre_filter(cs, pod(aff=affinity(anti=ANTI_FOO_BAR)), snap)
    c = cs.clone()
    c.read(PRE_FILTER_STATE_KEY).anti_affinity_counts[("region", "r1")] = 7
    assert cs.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {("region", "r1"): 1}


# ============================================================ TestGetTPMapMatchingIncoming...


def _normal(*labels: str) -> Pod:
    return pod(dict.fromkeys(labels, ""), "nodeA", name="normal")


INCOMING = [
    ("nil test", [], pod(name="aaa-normal"), {}, {}),
    ("incoming pod without affinity/anti-affinity causes a no-op", [_normal("aaa")],
     pod(name="aaa-normal"), {}, {}),
    ("no pod has label that violates incoming pod's affinity and anti-affinity",
     [_normal("bbb")],
     pod(aff=affinity([t_exists("aaa", "hostname")], [t_exists("aaa", "hostname")])), {}, {}),
    ("existing pod matches incoming pod's affinity and anti-affinity - single term case",
     [_normal("aaa")],
     pod(aff=affinity([t_exists("aaa", "hostname")], [t_exists("aaa", "hostname")])),
     {("hostname", "nodeA"): 1}, {("hostname", "nodeA"): 1}),
    ("existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
     [_normal("aaa", "bbb")],
     pod(aff=affinity([t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
                      [t_exists("aaa", "hostname")])),
     {("hostname", "nodeA"): 2}, {("hostname", "nodeA"): 1}),
    ("existing pod not match incoming pod's affinity but matches anti-affinity",
     [_normal("aaa")],
     pod(aff=affinity([t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
                      [t_exists("aaa", "hostname"), t_exists("bbb", "hostname")])),
     {}, {("hostname", "nodeA"): 1}),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial "
     "term - case 1", [_normal("aaa", "bbb")],
     pod(aff=affinity([t_exists("aaa", "hostname"), t_exists("ccc", "hostname")],
                      [t_exists("aaa", "hostname"), t_exists("ccc", "hostname")])),
     {}, {("hostname", "nodeA"): 1}),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial "
     "term - case 2", [_normal("bbb")],
     pod(aff=affinity([t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
                      [t_exists("aaa", "hostname"), t_exists("bbb", "hostname")])),
     {}, {("hostname", "nodeA"): 1}),
]


@pytest.mark.parametrize(("name", "existing", "incoming", "want_aff", "want_anti"), INCOMING,
                         ids=[c[0] for c in INCOMING])
def test_incoming_affinity_anti_affinity_counts(name, existing, incoming, want_aff, want_anti):
    snap = snapshot_from_nodes([node("nodeA", hostname="nodeA")], existing)
    aff, anti = get_incoming_affinity_anti_affinity_counts(pod_affinity_info(incoming),
                                                           snap.node_infos)
    assert aff == want_aff
    assert anti == want_anti


# ============================================================ TestPreferredAffinity

S1 = {"security": "S1"}
S2 = {"security": "S2"}
CHINA, INDIA = {"region": "China"}, {"region": "India"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}

STAY_S1_REGION = affinity(preferred=[w(5, t_in("security", "region", "S1"))])
STAY_S2_REGION = affinity(preferred=[w(6, t_in("security", "region", "S2"))])
AFFINITY3 = affinity(preferred=[
    w(8, term(sel(req("security", "NotIn", "S1"), req("security", "In", "S2")), "region")),
    w(2, term(sel(req("security", "Exists"), req("wrongkey", "DoesNotExist")), "region"))])
HARD_AFFINITY = affinity([
    term(sel(req("security", "In", "S1", "value2")), "region"),
    term(sel(req("security", "Exists"), req("wrongkey", "DoesNotExist")), "region")])
AWAY_S1_AZ = affinity(pref_anti=[w(5, t_in("security", "az", "S1"))])
AWAY_S2_AZ = affinity(pref_anti=[w(5, t_in("security", "az", "S2"))])
STAY_S1_REGION_AWAY_S2_AZ = affinity(preferred=[w(8, t_in("security", "region", "S1"))],
                                     pref_anti=[w(5, t_in("security", "az", "S2"))])
_NS_TERM = term(sel(req("security", "In", "S1")), "region", ("subteam2.team2",),
                _in_ns_sel("team1"))
AFFINITY_NS_SELECTOR = affinity(preferred=[w(5, _NS_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(pref_anti=[w(5, _NS_TERM)])
INVALID_AFFINITY = affinity(preferred=[w(8, t_in("security", "region", BAD))])
INVALID_ANTI_AFFINITY = affinity(pref_anti=[w(5, t_in("security", "az", BAD))])

ERR = "error"


def _nodes(*specs: tuple[str, dict[str, str]]) -> list[Node]:
    return [node(n, **lbl) for n, lbl in specs]


def _three(a, b, c):
    return _nodes(("node1", a), ("node2", b), ("node3", c))


PREFERRED = [
    ("all nodes are same priority as Affinity is nil", lambda: pod(S1), list,
     lambda: _three(CHINA, INDIA, AZ1), SKIP, False),
    ("affinity: matching topology key & pods get the high score",
     lambda: pod(S1, aff=STAY_S1_REGION),
     lambda: [pod(S1, "node1"), pod(S2, "node2"), pod(S1, "node3")],
     lambda: _three(CHINA, INDIA, AZ1), [100, 0, 0], False),
    ("same topology key & value as a node with a match get the same score",
     lambda: pod(aff=STAY_S1_REGION), lambda: [pod(S1, "node1")],
     lambda: _three(CHINA, CHINA_AZ1, INDIA), [100, 100, 0], False),
    ("region with more matches gets the high score",
     lambda: pod(S1, aff=STAY_S2_REGION),
     lambda: [pod(S2, "node1"), pod(S2, "node1"), pod(S2, "node2"), pod(S2, "node3"),
              pod(S2, "node4"), pod(S2, "node5")],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA),
                    ("node5", INDIA)), [100, 0, 100, 100, 0], False),
    ("different label operators and values",
     lambda: pod(S1, aff=AFFINITY3),
     lambda: [pod(S1, "node1"), pod(S2, "node2"), pod(S1, "node3")],
     lambda: _three(CHINA, INDIA, AZ1), [20, 100, 0], False),
    ("affinity symmetry: preferred terms of existing pods",
     lambda: pod(S2),
     lambda: [pod(S1, "node1", aff=STAY_S1_REGION), pod(S2, "node2", aff=STAY_S2_REGION)],
     lambda: _three(CHINA, INDIA, AZ1), [0, 100, 0], False),
    ("affinity symmetry with namespace selector",
     lambda: pod(S1, ns="subteam1.team1"),
     lambda: [pod(S1, "node1", aff=AFFINITY_NS_SELECTOR), pod(S2, "node2", aff=STAY_S2_REGION)],
     lambda: _three(CHINA, INDIA, AZ1), [100, 0, 0], False),
    ("anti-affinity symmetry with namespace selector",
     lambda: pod(S1, ns="subteam1.team1"),
     lambda: [pod(S1, "node1", aff=ANTI_AFFINITY_NS_SELECTOR),
              pod(S2, "node2", aff=STAY_S2_REGION)],
     lambda: _three(CHINA, INDIA, AZ1), [0, 100, 100], False),
    ("affinity symmetry: required terms of existing pods",
     lambda: pod(S1),
     lambda: [pod(S1, "node1", aff=HARD_AFFINITY), pod(S2, "node2", aff=HARD_AFFINITY)],
     lambda: _three(CHINA, INDIA, AZ1), [100, 100, 0], False),
    ("anti-affinity: node with non-matching pods gets the high score",
     lambda: pod(S1, aff=AWAY_S1_AZ), lambda: [pod(S1, "node1"), pod(S2, "node2")],
     lambda: _nodes(("node1", AZ1), ("node2", CHINA)), [0, 100], False),
    ("anti-affinity: node without the topology key gets the high score",
     lambda: pod(S1, aff=AWAY_S1_AZ), lambda: [pod(S1, "node1"), pod(S1, "node2")],
     lambda: _nodes(("node1", AZ1), ("node2", CHINA)), [0, 100], False),
    ("anti-affinity: node with more matches gets the low score",
     lambda: pod(S1, aff=AWAY_S1_AZ),
     lambda: [pod(S1, "node1"), pod(S1, "node1"), pod(S2, "node2")],
     lambda: _nodes(("node1", AZ1), ("node2", INDIA)), [0, 100], False),
    ("anti-affinity symmetry",
     lambda: pod(S2),
     lambda: [pod(S1, "node1", aff=AWAY_S2_AZ), pod(S2, "node2", aff=AWAY_S1_AZ)],
     lambda: _nodes(("node1", AZ1), ("node2", AZ2)), [0, 100], False),
    ("affinity and anti-affinity",
     lambda: pod(S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
     lambda: [pod(S1, "node1"), pod(S1, "node2")],
     lambda: _nodes(("node1", CHINA), ("node2", AZ1)), [100, 0], False),
    ("affinity and anti-affinity, same labels",
     lambda: pod(S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
     lambda: [pod(S1, "node1"), pod(S1, "node1"), pod(S1, "node2"), pod(S1, "node3"),
              pod(S1, "node3"), pod(S1, "node4"), pod(S1, "node5")],
     lambda: _nodes(("node1", CHINA_AZ1), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA),
                    ("node5", INDIA)), [100, 0, 100, 100, 0], False),
    ("affinity, anti-affinity and symmetry",
     lambda: pod(S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
     lambda: [pod(S1, "node1"), pod(S2, "node2"), pod(None, "node3", aff=STAY_S1_REGION_AWAY_S2_AZ),
              pod(None, "node4", aff=AWAY_S1_AZ)],
     lambda: _nodes(("node1", CHINA), ("node2", AZ1), ("node3", INDIA), ("node4", AZ2)),
     [100, 0, 100, 0], False),
    ("partial nodes of a topology have pods with affinity",
     lambda: pod(S1),
     lambda: [pod(S1, "node1"), pod(None, "node2", aff=STAY_S1_REGION_AWAY_S2_AZ)],
     lambda: _nodes(("node1", CHINA), ("node2", CHINA)), [0, 0], False),
    ("invalid affinity fails PreScore", lambda: pod(aff=INVALID_AFFINITY), list,
     lambda: _nodes(("node1", CHINA), ("node2", CHINA)), ERR, False),
    ("invalid anti-affinity fails PreScore", lambda: pod(aff=INVALID_ANTI_AFFINITY), list,
     lambda: _nodes(("node1", CHINA), ("node2", CHINA)), ERR, False),
    ("affinity with pods matching NamespaceSelector",
     lambda: pod(S1, ns="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
     lambda: [pod(S1, "node1", ns="subteam1.team1"), pod(S1, "node1", ns="subteam1.team1"),
              pod(S1, "node1", ns="subteam1.team2"), pod(S1, "node2", ns="subteam2.team1")],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA)), [100, 0], False),
    ("affinity with pods matching both NamespaceSelector and Namespaces",
     lambda: pod(S1, ns="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
     lambda: [pod(S1, "node1", ns="subteam1.team1"), pod(S1, "node1", ns="subteam1.team1"),
              pod(S1, "node1", ns="subteam2.team2"), pod(S1, "node2", ns="subteam2.team1")],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA)), [100, 0], False),
    ("anti-affinity with pods matching NamespaceSelector",
     lambda: pod(S1, ns="subteam1.team1", aff=ANTI_AFFINITY_NS_SELECTOR),
     lambda: [pod(S1, "node1", ns="subteam1.team1"), pod(S1, "node1", ns="subteam1.team1"),
              pod(S1, "node1", ns="subteam1.team2"), pod(S1, "node2", ns="subteam2.team1")],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA)), [0, 100], False),
    ("anti-affinity with pods matching both NamespaceSelector and Namespaces",
     lambda: pod(S1, ns="subteam1.team1", aff=ANTI_AFFINITY_NS_SELECTOR),
     lambda: [pod(S1, "node1", ns="subteam1.team1"), pod(S1, "node1", ns="subteam1.team1"),
              pod(S1, "node1", ns="subteam2.team2"), pod(S1, "node2", ns="subteam2.team1")],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA)), [0, 100], False),
    ("ignore preferred terms of existing pods",
     lambda: pod(S2),
     lambda: [pod(S1, "node1", aff=STAY_S1_REGION_AWAY_S2_AZ),
              pod(S2, "node2", aff=STAY_S2_REGION)],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA)), SKIP, True),
    ("do not ignore preferred terms of existing pods",
     lambda: pod(S2),
     lambda: [pod(S1, "node1", aff=STAY_S1_REGION_AWAY_S2_AZ),
              pod(S2, "node2", aff=STAY_S2_REGION)],
     lambda: _nodes(("node1", CHINA), ("node2", INDIA)), [0, 100], False),
    ("no nodes to score", lambda: pod(S2), list, list, SKIP, False),
]


def run_score(p: InterPodAffinity, snap: Snapshot, incoming: Pod, names: list[str]):
    """PreScore status, or normalized scores of ``names`` (per-node and batch agree)."""
    state = CycleState()
    idx = np.array([snap.table.index[n] for n in names], dtype=np.int64)
    st = p.pre_score(state, incoming, NodeList([snap.get(n) for n in names], idx))
    if st is not None and not st.is_success():
        return st
    raw = [p.score(state, incoming, snap.get(n)) for n in names]
    batch = p.score_batch(state, incoming, snap, idx)
    assert batch.dtype == np.int64
    assert batch.tolist() == raw
    return p.normalize_score(state, incoming, np.array(raw, dtype=np.int64)).tolist()


@pytest.mark.parametrize(("name", "make_pod", "make_pods", "make_nodes", "want", "ignore"),
                         PREFERRED, ids=[c[0] for c in PREFERRED])
def test_preferred_affinity(name, make_pod, make_pods, make_nodes, want, ignore):
    nodes = make_nodes()
    snap = snapshot_from_nodes(nodes, make_pods())
    p = plugin(snap, TEAM_NAMESPACES, hardPodAffinityWeight=1,
               ignorePreferredTermsOfExistingPods=ignore)
    got = run_score(p, snap, make_pod(), [n.name for n in nodes])
    if want == SKIP:
        assert isinstance(got, Status) and got.code == Code.SKIP
    elif want == ERR:
        assert isinstance(got, Status) and got.code == Code.ERROR
        assert 'Invalid value: "{{.bad-value.}}"' in got.message()
    else:
        assert got == want


HARD_POD_AFFINITY = affinity([term(sel(req("service", "In", "S1")), "region",
                                   ("", "subteam2.team2"), _in_ns_sel("team1"))])
SERVICE_S1 = {"service": "S1"}

HARD_WEIGHT = [
    ("with default weight", "", 1, [100, 100, 0]),
    ("with zero weight", "", 0, SKIP),
    ("with no matching namespace", "subteam1.team2", 1, SKIP),
    ("with matching NamespaceSelector", "subteam1.team1", 1, [100, 100, 0]),
    ("with matching Namespaces", "subteam2.team2", 1, [100, 100, 0]),
]


@pytest.mark.parametrize(("name", "ns", "weight", "want"), HARD_WEIGHT,
                         ids=[c[0] for c in HARD_WEIGHT])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(name, ns, weight, want):
    nodes = _three(CHINA, INDIA, AZ1)
    snap = snapshot_from_nodes(nodes, [pod(None, "node1", aff=HARD_POD_AFFINITY),
                                       pod(None, "node2", aff=HARD_POD_AFFINITY)])
    p = plugin(snap, TEAM_NAMESPACES, hardPodAffinityWeight=weight)
    got = run_score(p, snap, pod(SERVICE_S1, ns=ns), [n.name for n in nodes])
    if want == SKIP:
        assert isinstance(got, Status) and got.code == Code.SKIP
    else:
        assert got == want


# ============================================================ normalize, args, events


def test_normalize_truncates_float_and_handles_ties():
    snap = snapshot_from_nodes([node("n", region="r")], [pod(S1, "n")])
    p = plugin(snap)
    state = CycleState()
    assert p.pre_score(state, pod(aff=STAY_S1_REGION), NodeList([snap.get("n")],
                                                                 np.array([0]))) is None
    # 100 * (1/3) = 33.33 -> 33; 100 * (2/3) = 66.67 -> 66 (truncated, not rounded)
    got = p.normalize_score(state, pod(), np.array([-5, -4, -3, -2], dtype=np.int64))
    assert got.tolist() == [0, 33, 66, 100]
    assert p.normalize_score(state, pod(), np.array([7, 7], dtype=np.int64)).tolist() == [0, 0]
    assert p.normalize_score(state, pod(), np.array([], dtype=np.int64)).tolist() == []


def test_score_without_pre_score_state_is_an_error():
    snap = snapshot_from_nodes([node("n")], [])
    p = plugin(snap)
    with pytest.raises(PluginError, match="PreScoreInterPodAffinity"):
        p.score(CycleState(), pod(), snap.get("n"))


def test_args_defaults_and_validation():
    p = InterPodAffinity({}, Handle())
    assert p.hard_pod_affinity_weight == 1
    assert p.ignore_preferred_terms_of_existing_pods is False
    with pytest.raises(ValueError, match=r"not in valid range \[0-100\]"):
        InterPodAffinity({"hardPodAffinityWeight": 101}, Handle())


def test_events_to_register():
    evs = InterPodAffinity({}, Handle()).events_to_register()
    assert [(e.event.resource, e.event.action) for e in evs] == [
        (Resource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]
    assert all(e.hint is not None for e in evs)


Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
_TARGET = pod(aff=affinity([t_in("service", "zone", "securityscan")],
                           [t_in("service", "hostname", "antivirusscan")]))
_MATCH_AFF = {"service": "securityscan"}
_MATCH_ANTI = {"service": "antivirusscan"}


@pytest.mark.parametrize(("name", "old", "new", "want"), [
    ("add an unscheduled pod", None, pod(_MATCH_AFF), S),
    ("add a pod matching the affinity", None, pod(_MATCH_AFF, "n1"), Q),
    ("add a pod not matching the affinity", None, pod(_MATCH_ANTI, "n1"), S),
    ("update a pod to match the affinity", pod({}, "n1"), pod(_MATCH_AFF, "n1"), Q),
    ("update a pod to stop matching the anti-affinity", pod(_MATCH_ANTI, "n1"),
     pod({}, "n1"), Q),
    ("update a pod without effect", pod({}, "n1"), pod({"a": "b"}, "n1"), S),
    ("delete a pod matching the anti-affinity", pod(_MATCH_ANTI, "n1"), None, Q),
    ("delete a pod not matching the anti-affinity", pod(_MATCH_AFF, "n1"), None, S),
])
def test_pod_change_hint(name, old, new, want):
    p = InterPodAffinity({}, Handle())
    assert p.is_schedulable_after_pod_change(_TARGET, old, new) == want


@pytest.mark.parametrize(("name", "target", "old", "new", "want"), [
    ("add a node with the affinity key", affinity([t_in("a", "zone", "x")]), None,
     node("n", zone="z1"), Q),
    ("add a node without the affinity key", affinity([t_in("a", "zone", "x")]), None,
     node("n", region="r"), S),
    ("node gains the affinity key", affinity([t_in("a", "zone", "x")]), node("n"),
     node("n", zone="z1"), Q),
    ("node changes its affinity domain", affinity([t_in("a", "zone", "x")]),
     node("n", zone="z1"), node("n", zone="z2"), Q),
    ("unrelated label change", affinity([t_in("a", "zone", "x")]), node("n", zone="z1"),
     node("n", zone="z1", other="y"), S),
    ("add any node with anti-affinity", affinity(anti=[t_in("a", "zone", "x")]), None,
     node("n"), Q),
    ("node loses the anti-affinity key", affinity(anti=[t_in("a", "zone", "x")]),
     node("n", zone="z1"), node("n"), Q),
    ("node gains the anti-affinity key", affinity(anti=[t_in("a", "zone", "x")]), node("n"),
     node("n", zone="z1"), S),
    ("node changes its anti-affinity domain", affinity(anti=[t_in("a", "zone", "x")]),
     node("n", zone="z1"), node("n", zone="z2"), Q),
    ("pod without required terms", affinity(preferred=[w(1, t_in("a", "zone", "x"))]), None,
     node("n", zone="z1"), S),
])
def test_node_change_hint(name, target, old, new, want):
    p = InterPodAffinity({}, Handle())
    assert p.is_schedulable_after_node_change(pod(aff=target), old, new) == want
