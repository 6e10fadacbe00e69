"""InterPodAffinity's counts kept across cycles (``counting.PodIndex``) against fresh counts.

Random schedule steps on a scheduler cache and its snapshot — pods added, removed and
relabelled, nodes added and relabelled, namespaces added and relabelled between cycles —
with incoming pods drawn mostly from a few shared shapes (so the kept counts are reused and
updated) and sometimes new ones. At every step the plugin that keeps its counts must agree
with a new plugin instance on the same snapshot (counted afresh), with the direct
reference counts (``filtering.get_*_counts``, ``scoring.compute_topology_score``), and, on a
copy of the snapshot that no cache maintains, with the uncached path; Filter (both forms),
AddPod / RemovePod on cloned states and Score (both forms) included.
"""

from __future__ import annotations

import random

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
from kubesched.cache.cache import Cache
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.plugins.interpodaffinity import InterPodAffinity, filtering, scoring
from kubesched.plugins.interpodaffinity.filtering import (
    PRE_FILTER_STATE_KEY,
    namespace_labels,
    pod_affinity_info,
)
from kubesched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY

SEEDS = range(6)
STEPS = 60  # per seed
TOPOLOGY_KEYS = ["region", "zone", "hostname", "missing"]
APPS = ["a0", "a1", "a2"]
NS_NAMES = ["ns0", "ns1", "ns2", "ns3"]  # ns3 exists only once a step creates it

# ---------------------------------------------------------------- random objects


def _selector(rng: random.Random) -> LabelSelector | None:
    r = rng.random()
    if r < 0.05:
        return None
    if r < 0.1:
        return LabelSelector()
    if r < 0.6:
        return LabelSelector((("app", rng.choice(APPS)),))
    kind = rng.randrange(3)
    if kind == 0:
        req = LabelSelectorRequirement("app", "In", tuple(rng.sample(APPS, 2)))
    elif kind == 1:
        req = LabelSelectorRequirement("app", "NotIn", (rng.choice(APPS),))
    else:
        req = LabelSelectorRequirement("tier", "Exists")
    return LabelSelector((), (req,))


def _ns_selector(rng: random.Random) -> LabelSelector | None:
    r = rng.random()
    if r < 0.6:
        return None
    if r < 0.7:
        return LabelSelector()
    if r < 0.85:
        return LabelSelector((("team", "a"),))
    return LabelSelector((), (LabelSelectorRequirement("env", "DoesNotExist"),))


def _term(rng: random.Random) -> PodAffinityTerm:
    namespaces = tuple(rng.sample(NS_NAMES, rng.randint(1, 2))) if rng.random() < 0.3 else ()
    return PodAffinityTerm(_selector(rng), rng.choice(TOPOLOGY_KEYS), namespaces,
                           _ns_selector(rng))


def _kind(rng: random.Random) -> PodAffinity | None:
    required = tuple(_term(rng) for _ in range(rng.randint(1, 2))) \
        if rng.random() < 0.4 else ()
    preferred = tuple(WeightedPodAffinityTerm(rng.randint(1, 10), _term(rng))
                      for _ in range(rng.randint(1, 2))) if rng.random() < 0.5 else ()
    if not required and not preferred:
        return None
    return PodAffinity(required, preferred)


def _affinity(rng: random.Random) -> Affinity | None:
    a = Affinity(pod_affinity=_kind(rng), pod_anti_affinity=_kind(rng))
    return a if a.pod_affinity is not None or a.pod_anti_affinity is not None else None


def _labels(rng: random.Random) -> dict[str, str]:
    out = {}
    if rng.random() < 0.85:
        out["app"] = rng.choice(APPS)
    if rng.random() < 0.4:
        out["tier"] = "t0"
    return out


class _Shape:
    """A pod template: namespace, labels and one shared Affinity object."""

    def __init__(self, rng: random.Random) -> None:
        self.namespace = rng.choice(NS_NAMES)
        self.labels = _labels(rng)
        self.affinity = _affinity(rng) if rng.random() < 0.8 else None

    def pod(self, uid: int, node: str = "") -> Pod:
        return Pod(ObjectMeta(f"pod-{uid}", self.namespace, f"uid-{uid}", dict(self.labels)),
                   PodSpec(node_name=node, affinity=self.affinity))


def _node(rng: random.Random, i: int) -> Node:
    name = f"node-{i}"
    labels = {"hostname": name}
    if rng.random() < 0.9:
        labels["region"] = f"r{rng.randrange(2)}"
    if rng.random() < 0.8:
        labels["zone"] = f"z{rng.randrange(3)}"
    return Node(ObjectMeta(name, labels=labels))


def _relabel_node(rng: random.Random, n: Node) -> Node:
    labels = dict(n.metadata.labels)
    key = rng.choice(["region", "zone"])
    if rng.random() < 0.3:
        labels.pop(key, None)
    else:
        labels[key] = f"{key[0]}{rng.randrange(3)}"
    return Node(ObjectMeta(n.name, labels=labels))


def _namespace(rng: random.Random, name: str) -> Namespace:
    labels = {}
    if rng.random() < 0.5:
        labels["team"] = rng.choice(["a", "b"])
    if rng.random() < 0.3:
        labels["env"] = "prod"
    return Namespace(ObjectMeta(name, labels=labels))


# ---------------------------------------------------------------- comparisons


def _status(st: Status | None) -> tuple | None:
    return None if st is None else (st.code, st.reasons)


def _filters(p: InterPodAffinity, cs: CycleState, pod: Pod, snap: Snapshot,
             infos: list[NodeInfo]) -> list[tuple | None]:
    per_node = [_status(p.filter(cs, pod, ni)) for ni in infos]
    if infos is snap.node_infos:
        b = p.filter_batch(cs, pod, snap, np.arange(snap.num_nodes))
        batch = [_status(None if s.is_success() else s)
                 for s in (b.status_at(i, p.name) for i in range(snap.num_nodes))]
        assert batch == per_node
    return per_node


def _counts(cs: CycleState) -> tuple[dict, dict, dict] | None:
    s = cs.read(PRE_FILTER_STATE_KEY)
    if s is None:
        return None
    return (dict(s.existing_anti_affinity_counts), dict(s.affinity_counts),
            dict(s.anti_affinity_counts))


def _ref_scores(ref: scoring.ScoreMap, snap: Snapshot) -> list[int]:
    out = []
    for ni in snap.node_infos:
        labels = ni.node.labels
        out.append(sum(by_value.get(labels[k], 0) for k, by_value in ref.items() if k in labels))
    return out


def _check_step(rng: random.Random, kept: InterPodAffinity, args: dict, handle: Handle,
                snap: Snapshot, incoming: Pod, extra: Pod, other_snap: Snapshot) -> None:
    fresh = InterPodAffinity(args, handle)
    uncached = InterPodAffinity(args, Handle(snapshot=other_snap,
                                             namespaces=handle.namespaces))

    # ---- PreFilter and Filter
    states = []
    for p, s in ((kept, snap), (fresh, snap), (uncached, other_snap)):
        cs = CycleState()
        _, st = p.pre_filter(cs, incoming, s)
        states.append((p, cs, _status(st), s))
    (_, cs_k, st_k, _), (_, cs_f, st_f, _), (_, cs_u, st_u, _) = states
    assert st_k == st_f == st_u
    assert _counts(cs_k) == _counts(cs_f) == _counts(cs_u)
    info = kept._merged(pod_affinity_info(incoming), required=True)
    if info.parse_error is None:
        ns_labels = namespace_labels(handle.namespaces, incoming.metadata.namespace)
        existing = filtering.get_existing_anti_affinity_counts(
            incoming, ns_labels,
            [ni for ni in snap.node_infos if ni.pods_with_required_anti_affinity])
        aff, anti = filtering.get_incoming_affinity_anti_affinity_counts(info, snap.node_infos)
        got = _counts(cs_k)
        if got is None:
            assert not existing and not info.required_affinity \
                and not info.required_anti_affinity
        else:
            assert got == (existing, aff, anti)
    if st_k is None:
        want = _filters(fresh, cs_f, incoming, snap, snap.node_infos)
        assert _filters(kept, cs_k, incoming, snap, snap.node_infos) == want
        assert _filters(uncached, cs_u, incoming, other_snap, other_snap.node_infos) == want
        # AddPod / RemovePod on clones (as for nominated pods and preemption)
        ni = rng.choice(snap.node_infos)
        added = extra
        added.spec.node_name = ni.name
        clones = []
        for p, cs in ((kept, cs_k), (fresh, cs_f)):
            c, nc = cs.clone(), ni.clone()
            nc.add_pod(added)
            assert p.add_pod(c, incoming, added, nc) is None
            clones.append((p, c, nc))
        assert _counts(clones[0][1]) == _counts(clones[1][1])
        assert _counts(cs_k) == _counts(cs_f)  # the originals are untouched
        verdicts = [_status(p.filter(c, incoming, nc)) for p, c, nc in clones]
        assert verdicts[0] == verdicts[1]
        victim = rng.choice(clones[0][2].pods)  # the added pod, or one placed before
        for p, c, nc in clones:
            nc.remove_pod(victim)
            assert p.remove_pod(c, incoming, victim, nc) is None
        assert _counts(clones[0][1]) == _counts(clones[1][1])
        rows = np.arange(snap.num_nodes)
        b0 = clones[0][0].filter_batch(clones[0][1], incoming, snap, rows)
        b1 = clones[1][0].filter_batch(clones[1][1], incoming, snap, rows)
        assert [_status(b0.status_at(i, "x")) for i in range(len(rows))] == \
            [_status(b1.status_at(i, "x")) for i in range(len(rows))]

    # ---- PreScore and Score
    rows = np.arange(snap.num_nodes)
    results = []
    for p, s in ((kept, snap), (fresh, snap), (uncached, other_snap)):
        cs = CycleState()
        st = p.pre_score(cs, incoming, NodeList(s.node_infos, rows))
        if st is not None:
            results.append((_status(st), None))
            continue
        raw = [p.score(cs, incoming, ni) for ni in s.node_infos]
        batch = p.score_batch(cs, incoming, s, rows)
        assert batch.tolist() == raw
        assert cs.read(PRE_SCORE_STATE_KEY) is not None
        results.append((None, (raw, p.normalize_score(cs, incoming, batch).tolist())))
    assert results[0] == results[1] == results[2]
    has_pref = scoring.has_preferred_terms(incoming)
    sinfo = pod_affinity_info(incoming)
    if sinfo.parse_error is None and not (args["ignorePreferredTermsOfExistingPods"]
                                          and not has_pref):
        ref = scoring.compute_topology_score(
            incoming, kept._merged(sinfo, required=False),
            namespace_labels(handle.namespaces, incoming.metadata.namespace),
            snap.node_infos, all_pods=True, hard_pod_affinity_weight=kept.hard_pod_affinity_weight)
        if not ref:
            assert results[0][0] is not None  # Skip
        else:
            assert results[0][1] is not None
            assert results[0][1][0] == _ref_scores(ref, snap)


# ---------------------------------------------------------------- the walk


@pytest.mark.parametrize("seed", SEEDS)
def test_kept_counts_match_fresh_counts_over_random_steps(seed):
    rng = random.Random(seed)
    namespaces = {n: _namespace(rng, n) for n in NS_NAMES[:3]}
    shapes = [_Shape(rng) for _ in range(6)]
    cache = Cache()
    snap = Snapshot()
    handle = Handle(snapshot=snap, namespaces=namespaces)
    args = {"hardPodAffinityWeight": rng.choice([0, 1, 5]),
            "ignorePreferredTermsOfExistingPods": rng.random() < 0.2}
    kept = InterPodAffinity(args, handle)
    nodes = [_node(rng, i) for i in range(rng.randint(4, 10))]
    for n in nodes:
        cache.add_node(n)
    placed: dict[str, Pod] = {}
    uid = 0

    def new_pod(node: str = "") -> Pod:
        nonlocal uid
        uid += 1
        if rng.random() < 0.15:
            return _Shape(rng).pod(uid, node)  # a shape of its own
        return rng.choice(shapes).pod(uid, node)

    for _ in range(rng.randint(5, 25)):
        p = new_pod(rng.choice(nodes).name)
        cache.add_pod(p)
        placed[p.uid] = p

    for _step in range(STEPS):
        # the cluster changes between cycles
        for _ in range(rng.randint(0, 3)):
            p = new_pod(rng.choice(nodes).name)
            cache.add_pod(p)
            placed[p.uid] = p
        for _ in range(rng.randint(0, 2)):
            if placed:
                p = placed.pop(rng.choice(sorted(placed)))
                cache.remove_pod(p)
        if placed and rng.random() < 0.2:  # relabel a pod
            old = placed[rng.choice(sorted(placed))]
            new = Pod(ObjectMeta(old.name, old.metadata.namespace, old.uid, _labels(rng)),
                      PodSpec(node_name=old.spec.node_name, affinity=old.spec.affinity))
            cache.update_pod(old, new)
            placed[new.uid] = new
        if rng.random() < 0.08:  # a new node
            n = _node(rng, len(nodes))
            nodes.append(n)
            cache.add_node(n)
        if rng.random() < 0.1:  # a relabelled node
            i = rng.randrange(len(nodes))
            new_node = _relabel_node(rng, nodes[i])
            cache.update_node(nodes[i], new_node)
            nodes[i] = new_node
        if rng.random() < 0.1:  # a namespace created or relabelled
            name = rng.choice(NS_NAMES)
            namespaces[name] = _namespace(rng, name)
        cache.update_snapshot(snap)
        other = Snapshot([ni.clone() for ni in snap.node_infos])  # generation 0: uncached
        assert other.generation == 0
        incoming = new_pod()
        extra = new_pod()
        _check_step(rng, kept, args, handle, snap, incoming, extra, other)
        if rng.random() < 0.5:  # the incoming pod is scheduled
            incoming.spec.node_name = rng.choice(nodes).name
            cache.add_pod(incoming)
            placed[incoming.uid] = incoming
