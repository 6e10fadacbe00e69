"""InterPodAffinity: PreScore, Score and NormalizeScore (upstream v1.35 ``scoring.go``).

PreScore sums, per (topologyKey, value), the weights of preferred terms between the incoming
pod and the existing pods (both directions) and of existing pods' required affinity terms
matching the incoming pod (``hardPodAffinityWeight``); anti-affinity terms subtract. A node's
score is the sum over the topology keys it has; NormalizeScore maps [min, max] onto [0, 100]
in float64 and truncates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins.interpodaffinity.counting import (
    ByCode,
    by_code_for,
    by_code_get,
    label_codes,
)
from kubesched.plugins.interpodaffinity.filtering import (
    NAME,
    PodAffinityInfo,
    WeightedAffinityTerm,
    pod_affinity_info,
)

PRE_SCORE_STATE_KEY = "PreScore" + NAME

ScoreMap = dict[str, dict[str, int]]


@dataclass(slots=True)
class PreScoreState:
    """topologyScore: per topology key something contributed to, the sums per value over the
    codes of the key's label column (``counting.PodIndex.topology_score``)."""

    topology_score: dict[str, ByCode]

    def clone(self) -> PreScoreState:
        return self  # never changed after PreScore (as upstream)


def has_preferred_terms(pod: Pod) -> bool:
    aff = pod.spec.affinity
    if aff is None:
        return False
    return bool((aff.pod_affinity is not None and aff.pod_affinity.preferred)
                or (aff.pod_anti_affinity is not None and aff.pod_anti_affinity.preferred))


def _process_terms(m: ScoreMap, terms: tuple[WeightedAffinityTerm, ...], pod: Pod,
                   ns_labels: Mapping[str, str] | None, labels: Mapping[str, str],
                   multiplier: int) -> None:
    for w in terms:
        t = w.term
        if t.matches(pod, ns_labels):
            tv = labels.get(t.topology_key)
            if tv is not None:
                d = m.setdefault(t.topology_key, {})
                d[tv] = d.get(tv, 0) + w.weight * multiplier


def compute_topology_score(pod: Pod, info: PodAffinityInfo, ns_labels: Mapping[str, str],
                           nodes: list[NodeInfo], *, all_pods: bool,
                           hard_pod_affinity_weight: int) -> ScoreMap:
    """PreScore's processExistingPod over ``nodes`` (``info``: the incoming pod's terms with
    namespace selectors merged), computed directly: the reference of
    ``counting.PodIndex.topology_score``. ``all_pods``: every pod, else only pods with
    affinity."""
    topo: ScoreMap = {}
    pref, pref_anti = info.preferred_affinity, info.preferred_anti_affinity
    memo: dict[int, bool] = {}  # id(term of an existing pod) -> matches the incoming pod

    def existing_matches(t: object) -> bool:
        r = memo.get(id(t))
        if r is None:
            r = memo[id(t)] = t.matches(pod, ns_labels)  # type: ignore[attr-defined]
        return r

    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.labels
        if not labels:
            continue
        for p in (ni.pods if all_pods else ni.pods_with_affinity):
            # The incoming pod's preferred terms against the existing pod.
            if pref:
                _process_terms(topo, pref, p, None, labels, 1)
            if pref_anti:
                _process_terms(topo, pref_anti, p, None, labels, -1)
            pinfo = pod_affinity_info(p)
            if not (pinfo.required_affinity or pinfo.preferred_affinity
                    or pinfo.preferred_anti_affinity):
                continue
            # The existing pod's terms against the incoming pod.
            if hard_pod_affinity_weight > 0:
                for t in pinfo.required_affinity:
                    if existing_matches(t):
                        tv = labels.get(t.topology_key)
                        if tv is not None:
                            d = topo.setdefault(t.topology_key, {})
                            d[tv] = d.get(tv, 0) + hard_pod_affinity_weight
            for multiplier, terms in ((1, pinfo.preferred_affinity),
                                      (-1, pinfo.preferred_anti_affinity)):
                for w in terms:
                    if existing_matches(w.term):
                        tv = labels.get(w.term.topology_key)
                        if tv is not None:
                            d = topo.setdefault(w.term.topology_key, {})
                            d[tv] = d.get(tv, 0) + w.weight * multiplier
    return topo


def score_node(s: PreScoreState, node_info: NodeInfo) -> int:
    labels = node_info.node.labels if node_info.node is not None else {}
    score = 0
    for key, b in s.topology_score.items():
        tv = labels.get(key)
        if tv is not None:
            score += by_code_get(b, tv)
    return score


def score_batch(s: PreScoreState, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    out = np.zeros(len(idx), dtype=np.int64)
    for key, b in s.topology_score.items():
        col, uniques = label_codes(table, key)
        out += by_code_for(b, uniques)[col[idx]]
    return out


def normalize(s: PreScoreState, scores: np.ndarray) -> np.ndarray:
    """NormalizeScore: ``int64(100 * float64(s-min) / float64(max-min))``, 0 when max == min."""
    scores = np.asarray(scores, dtype=np.int64)
    if not s.topology_score or len(scores) == 0:
        return scores
    lo = int(scores.min())
    diff = int(scores.max()) - lo
    if diff <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    f = float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))
    return f.astype(np.int64)
