"""PodTopologySpread's state kept across cycles (PodCountCache for the matching-pod counts,
ShapeCache for per-pod-shape data) decides exactly as a fresh, uncached computation.

A random sequence of scheduling steps changes the cluster between cycles (pods added, removed,
relabelled or terminating; nodes added, relabelled, tainted), and every step compares one
long-lived plugin instance with a new instance that counts every node directly: PreFilter
state (domain order included), Filter in both forms, AddPod / RemovePod on cloned states,
PreScore state, Score in both forms and NormalizeScore.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from test_podtopologyspread import (
    DNS,
    HOST,
    SA,
    ZONE,
    make_node,
    make_pod,
    sc,
    service,
)

from kubesched.api.types import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    Taint,
    Toleration,
)
from kubesched.cache.cache import Cache
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeList
from kubesched.framework.pod_counts import PodCountCache
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import PodCounts, compile_matcher
from kubesched.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    critical_paths_of,
)
from kubesched.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, PreScoreState

ZONES = ("z0", "z1", "z2", "")
APPS = ("a", "b", "c")
NAMESPACES = ("default", "other")
TAINT = Taint("dedicated", "x", "NoSchedule")
TOLERATE = (Toleration(key="dedicated", operator="Equal", value="x", effect="NoSchedule"),)

SELECTORS: tuple[LabelSelector | None, ...] = (
    LabelSelector(match_labels=(("app", "a"),)),
    LabelSelector(match_labels=(("app", "b"),)),
    LabelSelector(match_expressions=(LabelSelectorRequirement("app", "Exists"),)),
    LabelSelector(match_expressions=(LabelSelectorRequirement("app", "In", ("a", "c")),)),
    LabelSelector(match_expressions=(LabelSelectorRequirement("app", "NotIn", ("a",)),)),
    LabelSelector(),  # everything: counts nothing
    None,  # nothing
)


def random_node(rng: random.Random, i: int) -> Node:
    labels: dict[str, str] = {}
    if rng.random() < 0.9:
        labels[HOST] = f"n{i}"
    if rng.random() < 0.85:
        labels[ZONE] = rng.choice(ZONES)
    if rng.random() < 0.3:
        labels["disk"] = "ssd"
    taints = (TAINT,) if rng.random() < 0.2 else ()
    return make_node(f"n{i}", taints=taints, **labels)


def random_bound_pod(rng: random.Random, uid: int, node: str) -> Pod:
    labels = {"app": rng.choice(APPS)} if rng.random() < 0.85 else {}
    if rng.random() < 0.3:
        labels["tier"] = rng.choice(("web", "db"))
    return make_pod(f"p{uid}", ns=rng.choice(NAMESPACES), labels=labels, node=node,
                    terminating=rng.random() < 0.08)


def random_incoming_pod(rng: random.Random, uid: int) -> Pod:
    constraints = []
    for _ in range(rng.choice((0, 1, 1, 2, 2, 3))):
        constraints.append(sc(
            rng.choice((1, 1, 2, 3)), rng.choice((ZONE, ZONE, HOST, "disk")),
            rng.choice((DNS, SA)), rng.choice(SELECTORS),
            min_domains=rng.choice((None, None, 2, 5)),
            naf=rng.choice((None, "Honor", "Ignore")), ntp=rng.choice((None, "Honor", "Ignore")),
            mlk=("tier",) if rng.random() < 0.2 else ()))
    labels = {"app": rng.choice(APPS)} if rng.random() < 0.9 else {}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(("web", "db"))
    return make_pod(f"in{uid}", ns=rng.choice(NAMESPACES), labels=labels,
                    constraints=tuple(constraints),
                    node_selector={"disk": "ssd"} if rng.random() < 0.2 else None,
                    tolerations=TOLERATE if rng.random() < 0.5 else ())


def relabelled(pod: Pod, rng: random.Random) -> Pod:
    new = copy.copy(pod)
    new.metadata = copy.copy(pod.metadata)
    new.metadata.labels = {"app": rng.choice(APPS)} if rng.random() < 0.9 else {}
    if rng.random() < 0.1:
        new.metadata.deletion_timestamp = 1.0
    return new


def filter_verdicts(pl: PodTopologySpread, cs: CycleState, pod: Pod, snap: Snapshot
                    ) -> list[tuple]:
    b = pl.filter_batch(cs, pod, snap, np.arange(snap.num_nodes))
    out = []
    for k, ni in enumerate(snap.node_infos):
        st = b.status_at(k, pl.name)
        one = pl.filter(cs, pod, ni)
        assert (st.code, st.reasons) == ((Code.SUCCESS, ()) if one is None
                                         else (one.code, one.reasons))
        out.append((st.code, st.reasons))
    return out


def pre_filter_view(s: PreFilterState) -> tuple:
    return ([list(m.items()) for m in s.tp_value_to_match_num],
            [p.as_tuples() for p in s.critical_paths])


def pre_score_view(s: PreScoreState) -> tuple:
    return ([list(m.items()) for m in s.topology_value_to_pod_counts],
            s.topology_normalizing_weight, sorted(s.ignored_nodes),
            s.prescore_ignored.tolist())


def cycle(pl: PodTopologySpread, pod: Pod, snap: Snapshot, rows: np.ndarray,
          extra: list[tuple[Pod, int]], rng_seed: int) -> dict:
    """One cycle's observable results."""
    out: dict = {}
    cs = CycleState()
    _, st = pl.pre_filter(cs, pod, snap)
    out["pre_filter"] = None if st is None else (st.code, st.reasons)
    s = cs.read(PRE_FILTER_STATE_KEY)
    if isinstance(s, PreFilterState):
        # AddPod / RemovePod on a clone (as for nominated pods and preemption), before
        # anything has read the original state
        c2 = cs.clone()
        for p, row in extra:
            assert pl.add_pod(c2, pod, p, snap.node_infos[row]) is None
        out["filter_after_add"] = filter_verdicts(pl, c2, pod, snap)
        out["after_add"] = pre_filter_view(c2.read(PRE_FILTER_STATE_KEY))
        out["filter"] = filter_verdicts(pl, cs, pod, snap)  # the clone's changes not seen
        out["state"] = pre_filter_view(s)
        for p, row in extra:
            assert pl.remove_pod(c2, pod, p, snap.node_infos[row]) is None
        out["after_remove"] = pre_filter_view(c2.read(PRE_FILTER_STATE_KEY))
        out["filter_after_remove"] = filter_verdicts(pl, c2, pod, snap)
    nodes = NodeList(None, rows, source=snap.node_infos)
    st = pl.pre_score(cs, pod, nodes)
    out["pre_score"] = None if st is None else (st.code, st.reasons)
    ps = cs.read(PRE_SCORE_STATE_KEY)
    if st is None and isinstance(ps, PreScoreState):
        out["score_state"] = pre_score_view(ps)
        per_node = np.array([pl.score(cs, pod, ni) for ni in nodes], dtype=np.int64)
        batch = pl.score_batch(cs, pod, snap, rows)
        assert batch.tolist() == per_node.tolist()
        out["scores"] = batch.tolist()
        out["normalized"] = pl.normalize_score(cs, pod, batch).tolist()
    return out


@pytest.mark.parametrize("args", [
    {"defaultingType": "List"},
    {"defaultingType": "System"},
    {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS},
        {"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": SA}]},
], ids=["list", "system", "list-defaults"])
@pytest.mark.parametrize("seed", [1, 2])
def test_cached_cycles_decide_as_fresh_uncached_ones(args: dict, seed: int) -> None:
    rng = random.Random(seed)
    cache = Cache()
    nodes: dict[str, Node] = {}
    for i in range(14 if seed == 1 else 45):  # 45: more hostname domains than zone ones
        n = random_node(rng, i)
        nodes[n.metadata.name] = n
        cache.add_node(n)
    next_node = len(nodes)
    bound: dict[str, Pod] = {}
    uid = 0
    for _ in range(40 if seed == 1 else 120):
        p = random_bound_pod(rng, uid, rng.choice(list(nodes)))
        uid += 1
        cache.add_pod(p)
        bound[p.uid] = p
    snap = Snapshot()
    objects = {"Service": [service("svc-a", {"app": "a"}),
                           service("svc-b", {"app": "b"}, ns="other")]}
    handle = Handle(snapshot=snap, objects=objects)
    pl = PodTopologySpread(args, handle)  # long-lived: caches across steps
    used_cache = 0
    for step in range(250):
        # cluster changes between cycles
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            r = rng.random()
            if r < 0.45 or not bound:
                p = random_bound_pod(rng, uid, rng.choice(list(nodes)))
                uid += 1
                cache.add_pod(p)
                bound[p.uid] = p
            elif r < 0.75:
                p = bound.pop(rng.choice(sorted(bound)))
                cache.remove_pod(p)
            else:
                old = bound[rng.choice(sorted(bound))]
                new = relabelled(old, rng)
                cache.update_pod(old, new)
                bound[new.uid] = new
        r = rng.random()
        if r < 0.05:
            n = random_node(rng, next_node)
            next_node += 1
            nodes[n.metadata.name] = n
            cache.add_node(n)
        elif r < 0.1:
            name = rng.choice(sorted(nodes))
            old_n = nodes[name]
            new_n = random_node(rng, int(name[1:]))
            cache.update_node(old_n, new_n)
            nodes[name] = new_n
        cache.update_snapshot(snap)

        pod = random_incoming_pod(rng, step)
        n = snap.num_nodes
        rows = np.array(sorted(rng.sample(range(n), rng.randint(1, n))), dtype=np.int64)
        rng.shuffle(rows)
        extra = [(random_bound_pod(rng, 10_000 + k, ""), rng.randrange(n))
                 for k in range(rng.choice((0, 1, 2)))]
        for p, row in extra:
            p.metadata.namespace = pod.metadata.namespace if rng.random() < 0.8 else "other"
            p.spec.node_name = snap.node_infos[row].name

        fresh = PodTopologySpread(args, handle)
        fresh.pod_count_cache = None  # count every node directly
        got = cycle(pl, pod, snap, rows, extra, step)
        want = cycle(fresh, pod, snap, rows, extra, step)
        assert got == want, f"step {step}"
        if rng.random() < 0.5:  # bind the incoming pod somewhere
            pod.spec.node_name = snap.node_infos[rng.randrange(n)].name
            cache.add_pod(pod)
            bound[pod.uid] = pod
        used_cache += bool(pl.pod_count_cache and pl.pod_count_cache._entries)
    assert used_cache > 100  # the cached path was exercised


def test_pod_counts_use_the_cache_only_for_the_snapshots_own_node_infos() -> None:
    cache = Cache()
    for name, zone in (("a", "z1"), ("b", "z2")):
        cache.add_node(make_node(name, **{ZONE: zone}))
    cache.add_pod(make_pod("p1", labels={"app": "a"}, node="a"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    pcc = PodCountCache()
    sel = SELECTORS[0]
    from kubesched.api.selectors import label_selector_as_selector
    s = label_selector_as_selector(sel)

    own = PodCounts(snap.node_infos, "default", snap, pcc)
    assert own.cached
    assert own.counts([s], [np.arange(2)])[0].tolist() == [1, 0]

    clones = [ni.clone() for ni in snap.node_infos]
    clones[1].add_pod(make_pod("p2", labels={"app": "a"}, node="b"))
    other = PodCounts(clones, "default", snap, pcc)
    assert not other.cached
    assert other.counts([s], [np.arange(2)])[0].tolist() == [1, 1]
    # the cache still holds the snapshot's counts
    assert PodCounts(snap.node_infos, "default", snap, pcc).counts(
        [s], [np.arange(2)])[0].tolist() == [1, 0]


def test_critical_paths_of_many_domains_equals_sequential_updates() -> None:
    from kubesched.plugins.podtopologyspread.filtering import CriticalPaths
    rng = random.Random(3)
    for _ in range(300):
        size = rng.randint(0, 80)
        m = {f"v{rng.randrange(1000)}": rng.randint(0, 4) for _ in range(size)}
        if rng.random() < 0.2:
            m[""] = rng.randint(0, 4)
        want = CriticalPaths()
        for v, num in m.items():
            want.update(v, num)
        assert critical_paths_of(m).as_tuples() == want.as_tuples()


def test_compile_matcher_is_what_the_cache_counts_with() -> None:
    # the key of the cached counts is (namespace, selector requirements): equal keys must
    # count the same pods
    from kubesched.api.selectors import label_selector_as_selector
    a = label_selector_as_selector(LabelSelector(match_labels=(("app", "a"), ("tier", "web"))))
    b = label_selector_as_selector(LabelSelector(match_expressions=(
        LabelSelectorRequirement("tier", "In", ("web",)),
        LabelSelectorRequirement("app", "In", ("a",)))))
    for labels in ({"app": "a", "tier": "web"}, {"app": "a"}, {}, {"tier": "web"}):
        assert compile_matcher(a)(labels) == compile_matcher(b)(labels) == a.matches(labels)
