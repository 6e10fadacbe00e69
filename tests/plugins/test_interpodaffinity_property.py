"""InterPodAffinity on random clusters (fixed seeds): the per-node and batch forms agree, both
agree with a brute-force reference written from the definitions (no counts), and
AddPod/RemovePod keep the PreFilter state equal to one computed from scratch."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.api.selectors import label_selector_matches
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
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
)
from kubesched.testing import snapshot_from_nodes

SEEDS = range(80)
NAMESPACES = {
    "ns0": Namespace(ObjectMeta("ns0", labels={"team": "a"})),
    "ns1": Namespace(ObjectMeta("ns1", labels={"team": "b", "env": "prod"})),
    "ns2": Namespace(ObjectMeta("ns2")),
}
POD_NAMESPACES = ["ns0", "ns1", "ns2", "default"]  # "default" is not a known Namespace
TOPOLOGY_KEYS = ["region", "zone", "hostname", "rack", "missing"]
APPS = ["a0", "a1", "a2", "a3"]


# ---------------------------------------------------------------- random objects


def _selector(rng: random.Random) -> LabelSelector | None:
    r = rng.random()
    if r < 0.05:
        return None
    if r < 0.1:
        return LabelSelector()
    reqs = []
    for _ in range(rng.randint(1, 2)):
        kind = rng.randrange(5)
        if kind == 0:
            reqs.append(LabelSelectorRequirement("app", "In", tuple(rng.sample(APPS, 2))))
        elif kind == 1:
            reqs.append(LabelSelectorRequirement("app", "NotIn", (rng.choice(APPS),)))
        elif kind == 2:
            reqs.append(LabelSelectorRequirement("tier", "Exists"))
        elif kind == 3:
            reqs.append(LabelSelectorRequirement("x", "DoesNotExist"))
        else:
            return LabelSelector((("app", rng.choice(APPS)),), tuple(reqs))
    return LabelSelector((), tuple(reqs))


def _ns_selector(rng: random.Random) -> LabelSelector | None:
    r = rng.random()
    if r < 0.7:
        return None
    if r < 0.8:
        return LabelSelector()
    if r < 0.9:
        return LabelSelector((("team", "a"),))
    return LabelSelector((), (LabelSelectorRequirement("env", "DoesNotExist"),))


def _term(rng: random.Random) -> PodAffinityTerm:
    namespaces = tuple(rng.sample(POD_NAMESPACES, rng.randint(1, 2))) if rng.random() < 0.2 else ()
    return PodAffinityTerm(_selector(rng), rng.choice(TOPOLOGY_KEYS), namespaces,
                           _ns_selector(rng))


def _kind(rng: random.Random, p_required: float, p_preferred: float) -> PodAffinity | None:
    required = tuple(_term(rng) for _ in range(rng.randint(1, 2))) if rng.random() < p_required \
        else ()
    preferred = tuple(WeightedPodAffinityTerm(rng.randint(1, 100), _term(rng))
                      for _ in range(rng.randint(1, 2))) if rng.random() < p_preferred else ()
    if not required and not preferred and rng.random() < 0.7:
        return None
    return PodAffinity(required, preferred)


def _affinity(rng: random.Random, p: float) -> Affinity | None:
    if rng.random() >= p:
        return None
    return Affinity(pod_affinity=_kind(rng, 0.3, 0.4), pod_anti_affinity=_kind(rng, 0.3, 0.4))


def _labels(rng: random.Random) -> dict[str, str]:
    out = {}
    if rng.random() < 0.85:
        out["app"] = rng.choice(APPS)
    if rng.random() < 0.5:
        out["tier"] = rng.choice(["t0", "t1"])
    if rng.random() < 0.2:
        out["x"] = ""
    return out


def _pod(rng: random.Random, i: int, node: str, p_affinity: float) -> Pod:
    return Pod(ObjectMeta(f"pod-{i}", rng.choice(POD_NAMESPACES), f"uid-{i}", _labels(rng)),
               PodSpec(node_name=node, affinity=_affinity(rng, p_affinity)))


def _node(rng: random.Random, i: int) -> Node:
    name = f"node-{i}"
    labels = {}
    if rng.random() < 0.9:
        labels["region"] = f"r{rng.randrange(3)}"
    if rng.random() < 0.8:
        labels["zone"] = f"z{rng.randrange(5)}"
    if rng.random() < 0.9:
        labels["hostname"] = name
    if rng.random() < 0.3:
        labels["rack"] = f"k{rng.randrange(2)}"
    return Node(ObjectMeta(name, labels=labels))


def _cluster(seed: int):
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(rng.randint(3, 14))]
    pods = [_pod(rng, i, rng.choice(nodes).name, 0.5) for i in range(rng.randint(0, 30))]
    incoming = _pod(rng, 10_000, "", 0.9)
    return rng, nodes, pods, incoming


# ---------------------------------------------------------------- brute-force reference


def _ns_labels(ns: str) -> dict[str, str]:
    n = NAMESPACES.get(ns)
    return dict(n.metadata.labels) if n is not None else {}


def _term_matches(t: PodAffinityTerm, owner: Pod, target: Pod, *, incoming_owner: bool) -> bool:
    """Does ``owner``'s term select ``target``? The incoming pod's namespace selector is
    resolved over the known Namespaces; an existing pod's is matched against the target
    namespace's labels."""
    if not t.namespaces and t.namespace_selector is None:
        nss = {owner.metadata.namespace}
    else:
        nss = set(t.namespaces)
    ns_ok = target.metadata.namespace in nss
    sel = t.namespace_selector
    if sel is not None and not ns_ok:
        if incoming_owner:
            everything = not sel.match_labels and not sel.match_expressions
            ns_ok = everything or any(
                n == target.metadata.namespace and label_selector_matches(sel, o.metadata.labels)
                for n, o in NAMESPACES.items())
        else:
            ns_ok = label_selector_matches(sel, _ns_labels(target.metadata.namespace))
    return ns_ok and label_selector_matches(t.label_selector, target.metadata.labels)


def _required(p: Pod, anti: bool) -> tuple[PodAffinityTerm, ...]:
    a = p.spec.affinity
    k = (a.pod_anti_affinity if anti else a.pod_affinity) if a is not None else None
    return k.required if k is not None else ()


def _preferred(p: Pod, anti: bool) -> tuple[WeightedPodAffinityTerm, ...]:
    a = p.spec.affinity
    k = (a.pod_anti_affinity if anti else a.pod_affinity) if a is not None else None
    return k.preferred if k is not None else ()


def _placed(nodes: list[Node], pods: list[Pod]) -> list[tuple[Pod, dict[str, str]]]:
    by_name = {n.name: n for n in nodes}
    return [(p, by_name[p.spec.node_name].metadata.labels) for p in pods]


def ref_filter(incoming: Pod, nodes: list[Node], pods: list[Pod]):
    """'skip', or {node name: None | (code, reason)}."""
    placed = _placed(nodes, pods)
    aff, anti = _required(incoming, False), _required(incoming, True)
    existing = [(t, m) for p, m in placed for t in _required(p, True)
                if t.topology_key in m and _term_matches(t, p, incoming, incoming_owner=False)]
    if not existing and not aff and not anti:
        return "skip"
    matching_all = [m for p, m in placed
                    if aff and all(_term_matches(t, incoming, p, incoming_owner=True)
                                   for t in aff)]
    counts_empty = not any(t.topology_key in m for m in matching_all for t in aff)
    self_match = bool(aff) and all(_term_matches(t, incoming, incoming, incoming_owner=True)
                                   for t in aff)
    out = {}
    for n in nodes:
        labels = n.metadata.labels
        verdict = None
        if aff:
            if any(t.topology_key not in labels for t in aff):
                ok = False
            else:
                ok = all(any(m.get(t.topology_key) == labels[t.topology_key]
                             for m in matching_all) for t in aff)
                ok = ok or (counts_empty and self_match)
            if not ok:
                verdict = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                           ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if verdict is None and any(
                t.topology_key in labels and m.get(t.topology_key) == labels[t.topology_key]
                and _term_matches(t, incoming, p, incoming_owner=True)
                for t in anti for p, m in placed):
            verdict = (Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if verdict is None and any(labels.get(t.topology_key) == m[t.topology_key]
                                   for t, m in existing):
            verdict = (Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        out[n.name] = verdict
    return out


def _has_affinity(p: Pod) -> bool:
    a = p.spec.affinity
    return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)


def ref_scores(incoming: Pod, nodes: list[Node], pods: list[Pod], hard: int, ignore: bool):
    """'skip', or {node name: raw score}."""
    has_pref = bool(_preferred(incoming, False) or _preferred(incoming, True))
    if ignore and not has_pref:
        return "skip"
    contributions = []  # (topology key, value, delta)
    for p, m in _placed(nodes, pods):
        if not m or not (has_pref or _has_affinity(p)):
            continue
        terms = [(w.term, w.weight * sign, p, incoming, True)
                 for sign, anti in ((1, False), (-1, True))
                 for w in _preferred(incoming, anti)]
        if hard > 0:
            terms += [(t, hard, incoming, p, False) for t in _required(p, False)]
        terms += [(w.term, w.weight * sign, incoming, p, False)
                  for sign, anti in ((1, False), (-1, True)) for w in _preferred(p, anti)]
        for t, delta, target, owner, incoming_owner in terms:
            if t.topology_key in m and _term_matches(t, owner, target,
                                                     incoming_owner=incoming_owner):
                contributions.append((t.topology_key, m[t.topology_key], delta))
    if not contributions:
        return "skip"
    return {n.name: sum(d for k, v, d in contributions if n.metadata.labels.get(k) == v)
            for n in nodes}


# ---------------------------------------------------------------- properties


def _plugin(snap: Snapshot, **args) -> InterPodAffinity:
    return InterPodAffinity(args, Handle(snapshot=snap, namespaces=dict(NAMESPACES)))


@pytest.mark.parametrize("seed", SEEDS)
def test_filter_forms_agree_with_reference(seed):
    rng, nodes, pods, incoming = _cluster(seed)
    snap = snapshot_from_nodes(nodes, pods)
    p = _plugin(snap)
    state = CycleState()
    _, st = p.pre_filter(state, incoming, snap)
    want = ref_filter(incoming, nodes, pods)
    if want == "skip":
        assert st is not None and st.code == Code.SKIP
        return
    assert st is None
    per_node = {}
    for n in nodes:
        s = p.filter(state, incoming, snap.get(n.name))
        per_node[n.name] = None if s is None else (s.code, s.reasons[0])
    assert per_node == want
    # the batch form, on all rows and on a shuffled subset
    for rows in (np.arange(snap.num_nodes),
                 np.array(rng.sample(range(snap.num_nodes), rng.randint(1, snap.num_nodes)))):
        b = p.filter_batch(state, incoming, snap, rows)
        for i, r in enumerate(rows.tolist()):
            got = b.status_at(i, p.name)
            name = snap.node_infos[r].name
            assert (None if got.is_success() else (got.code, got.reasons[0])) == want[name]


@pytest.mark.parametrize("seed", SEEDS)
def test_score_forms_agree_with_reference(seed):
    rng, nodes, pods, incoming = _cluster(seed)
    hard = rng.choice([0, 1, 1, 5])
    ignore = rng.random() < 0.3
    snap = snapshot_from_nodes(nodes, pods)
    p = _plugin(snap, hardPodAffinityWeight=hard, ignorePreferredTermsOfExistingPods=ignore)
    # the feasible nodes: a random subset, in snapshot order
    rows = np.array(sorted(rng.sample(range(snap.num_nodes), rng.randint(1, snap.num_nodes))))
    infos = [snap.node_infos[r] for r in rows.tolist()]
    state = CycleState()
    st = p.pre_score(state, incoming, NodeList(infos, rows))
    want = ref_scores(incoming, nodes, pods, hard, ignore)
    if want == "skip":
        assert st is not None and st.code == Code.SKIP
        return
    assert st is None
    raw = [p.score(state, incoming, ni) for ni in infos]
    assert raw == [want[ni.name] for ni in infos]
    batch = p.score_batch(state, incoming, snap, rows)
    assert batch.tolist() == raw
    norm = p.normalize_score(state, incoming, batch)
    assert norm.min() >= 0 and norm.max() <= 100
    lo, hi = min(raw), max(raw)
    for r, n in zip(raw, norm.tolist(), strict=True):
        assert n == (int(100 * ((r - lo) / (hi - lo))) if hi > lo else 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_add_remove_pod_match_recomputation(seed):
    rng, nodes, pods, incoming = _cluster(seed)
    if not pods:
        return
    added = rng.choice(pods)
    rest = [q for q in pods if q is not added]

    def pre_filter(ps):
        snap = snapshot_from_nodes(nodes, ps)
        p = _plugin(snap)
        cs = CycleState()
        _, st = p.pre_filter(cs, incoming, snap)
        return p, cs, snap, st

    _, full_cs, _, full_st = pre_filter(pods)
    p, cs, snap, st = pre_filter(rest)
    if st is not None or full_st is not None:  # Skip: no state to update
        return
    before = cs.read(PRE_FILTER_STATE_KEY).clone()
    ni = snap.get(added.spec.node_name)
    assert p.add_pod(cs, incoming, added, ni) is None
    s, full = cs.read(PRE_FILTER_STATE_KEY), full_cs.read(PRE_FILTER_STATE_KEY)
    for attr in ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts"):
        assert getattr(s, attr) == getattr(full, attr), attr
    assert p.remove_pod(cs, incoming, added, ni) is None
    for attr in ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts"):
        assert getattr(s, attr) == getattr(before, attr), attr
