"""The six policies of the FGD paper as ordinary kubesched Score plugins, each following its
Go original in hkust-adsl/kubernetes-scheduler-simulator (pkg/simulator/plugin/*_score.go),
integer arithmetic and truncation included. They read the per-GPU state ``GpuShare`` keeps;
enable ``GpuShare`` beside them (its ``gpuSelMethod`` as the paper's runs set it:
``random`` for Random, ``FGD`` for FGD, ``best`` for the others).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NodeList,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from kubesched.framework.node_table import NodeTable
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.table_cache import NodeValue, RowMemo
from kubesched.research.gpushare import (
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    MILLI,
    GpuChooser,
    GpuColumns,
    NodeGpu,
    PodGpu,
    _GpuBase,
    accessible,
    can_host,
    exclusive_ids,
    pod_gpu,
    subtract,
    with_pod_on,
)
from kubesched.research.openb import ORDER_LABEL

# ------------------------------------------------------------------------ batch forms


class _Memo:
    """Scores memoised per pod shape and per interned node key (the batch forms: a
    policy's score depends only on the node's state as ``GpuColumns.state`` interns it, so
    each distinct state among the candidates is scored once, by the per-node rule)."""

    def __init__(self) -> None:
        self._by_pod: dict[PodGpu, dict[int, int]] = {}
        self._size = 0

    def scores(self, pod: PodGpu, keys: np.ndarray, score: Callable[[int], int]) -> np.ndarray:
        memo = self._by_pod.get(pod)
        if memo is None:
            if self._size > 2_000_000:
                self._by_pod.clear()
                self._size = 0
            memo = self._by_pod[pod] = {}
        uniq, inv = np.unique(keys, return_inverse=True)
        vals = np.empty(len(uniq), dtype=np.int64)
        for j, k in enumerate(uniq.tolist()):
            v = memo.get(k)
            if v is None:
                v = memo[k] = score(k)
                self._size += 1
            vals[j] = v
        out: np.ndarray = vals[inv]
        return out


class _StateScored(_GpuBase):
    """score_batch for a policy whose per-node score is ``state_score(node, pod)`` of the
    node's ``NodeGpu``."""

    def state_score(self, node: NodeGpu, pod: PodGpu) -> int:
        raise NotImplementedError

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        memo: _Memo | None = getattr(self, "_memo", None)
        if memo is None:
            memo = self._memo = _Memo()
            # a node's score changes with its state, and its state only with its row (as
            # GpuShare's verdicts: filter_row_local): per pod shape, the rows that changed
            # since are scored
            self._rows = RowMemo(max_keys=256)
        pg = pod_gpu(pod)

        def compute(_table: NodeTable, rows: np.ndarray) -> np.ndarray:
            cols = self.gpu_columns(snapshot, rows)
            return memo.scores(pg, cols.state[rows],
                               lambda sid: self.state_score(GpuColumns.state_of(sid), pg))

        return self._rows.rows(snapshot.table, pg, idx, compute)


# ------------------------------------------------------------------------ FGD


@dataclass(frozen=True, slots=True)
class TypicalPod:
    pod: PodGpu
    freq: float  # share of the target workload, the list summing to 1


def typical_pods(shapes: Iterable[PodGpu], *, popularity: int = 95, step: int = 1,
                 cpu_pods: bool = True) -> list[TypicalPod]:
    """GetTypicalPods (pkg/utils/frag.go) with the paper's settings (isInvolvedCpuPods true,
    podPopularityThreshold 95, podIncreaseStep 1, gpuResWeight 0): the most frequent pod
    shapes covering ``popularity`` % of the workload, their frequencies renormalised."""
    counts: Counter[PodGpu] = Counter()
    for s in shapes:
        if not cpu_pods and s.count == 0:
            continue
        counts[s] += 1
    total = float(sum(counts.values()))
    if not total:
        return []
    # Decreasing count; ties in decreasing (cpu, milli, count, model): sort.Reverse of Less.
    order = sorted(counts.items(),
                   key=lambda kv: (kv[1], kv[0].cpu, kv[0].milli, kv[0].count, kv[0].models),
                   reverse=True)
    expected = popularity * total / 100.0
    cum = 0.0
    i = 0
    n = 0
    while cum < expected:
        n += step
        while i < n and i < len(order):
            cum += order[i][1]
            i += 1
        if i >= len(order):
            break
    if i >= len(order):
        return [TypicalPod(p, c / total) for p, c in order]
    return [TypicalPod(p, (c / total) / (cum / total)) for p, c in order[:i]]


def typical_from_args(args: dict[str, Any]) -> list[TypicalPod]:
    out = []
    for t in args.get("typicalPods") or []:
        out.append(TypicalPod(PodGpu(int(t.get("cpuMilli", 0)), int(t.get("gpuMilli", 0)),
                                     int(t.get("gpuCount", 0)), str(t.get("gpuModel", ""))),
                              float(t["freq"])))
    return out


def typical_to_args(typical: list[TypicalPod]) -> list[dict[str, Any]]:
    return [{"cpuMilli": t.pod.cpu, "gpuMilli": t.pod.milli, "gpuCount": t.pod.count,
             "gpuModel": t.pod.models, "freq": t.freq} for t in typical]


# GetNodePodFrag's classes, indexed as FragRatioDataMap (pkg/utils/frag.go)
Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS = \
    range(7)
_FRAG_CLASSES = (Q1_LACK_BOTH, Q2_LACK_GPU, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS)


def frag_class(node: NodeGpu, pod: PodGpu) -> int:
    """GetNodePodFrag: how ``pod`` fits ``node`` (Q3: it does)."""
    cpu_ok = node.cpu_left >= pod.cpu
    if pod.milli == 0:
        return XL_SATISFIED if cpu_ok else XR_LACK_CPU
    if not accessible(node.model, pod.models):
        return NO_ACCESS
    if can_host(node.left, pod):
        return Q3_SATISFIED if cpu_ok else Q4_LACK_CPU
    return Q2_LACK_GPU if cpu_ok else Q1_LACK_BOTH


def frag_amount(node: NodeGpu, typical: list[TypicalPod]) -> float:
    """NodeGpuShareFragAmountScore: the node's free milli-GPU expected to be unusable by
    the next pod drawn from ``typical`` (every frag class but Q3; in Q3, the GPUs too small
    for that pod, counted as Q2). Summed as the Go code sums, per class then over the
    classes: FGD's score truncates a sigmoid of the difference of two such sums, and where
    that difference is 0 in exact arithmetic (a pod that changes no GPU) another order of
    additions leaves ±1e-13 and turns a 50 into a 49."""
    total = sum(node.left)
    data = [0.0] * 7
    for t in typical:
        k = frag_class(node, t.pod)
        if k == Q3_SATISFIED:
            small = sum(v for v in node.left if v < t.pod.milli)
            data[Q2_LACK_GPU] += t.freq * small
            data[Q3_SATISFIED] += t.freq * (total - small)
        else:
            data[k] += t.freq * total
    out = 0.0
    for k in _FRAG_CLASSES:
        out += data[k]
    return out


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class FragModel:
    """FGD's scoring and GPU choice over one typical-pod list, memoised by node state (most
    nodes of a trace share a handful of shapes)."""

    def __init__(self, typical: list[TypicalPod]) -> None:
        self.typical = typical
        self._memo: dict[tuple[int, tuple[int, ...], str], float] = {}

    def frag(self, node: NodeGpu) -> float:
        key = (node.cpu_left, tuple(sorted(node.left)), node.model)
        v = self._memo.get(key)
        if v is None:
            v = frag_amount(node, self.typical)
            if len(self._memo) > 1_000_000:
                self._memo.clear()
            self._memo[key] = v
        return v

    def score(self, node: NodeGpu, pod: PodGpu) -> tuple[int, tuple[int, ...] | None]:
        """calculateGpuShareFragExtendScore: sigmoid of the fragmentation the placement
        removes, per 1000 milli-GPU, × 100; for a GPU share, the best GPU of the node."""
        before = self.frag(node)
        if pod.is_share:
            best, ids = 0, None
            for i, v in enumerate(node.left):
                if v >= pod.milli:
                    after = self.frag(with_pod_on(node, pod, (i,)))
                    s = int(_sigmoid((before - after) / 1000) * MAX_NODE_SCORE)
                    if ids is None or s > best:
                        best, ids = s, (i,)
            return best, ids
        new = subtract(node, pod)
        if new is None:  # the Go code ignores Sub's error and scores the copy unchanged
            new = node
        s = int(_sigmoid((before - self.frag(new)) / 1000) * MAX_NODE_SCORE)
        return s, exclusive_ids(node, pod) if pod.count else ()


class FGD(_StateScored, ScorePlugin):
    """Fragmentation gradient descent. Args: ``typicalPods``, the target workload as
    ``[{cpuMilli, gpuMilli, gpuCount, gpuModel, freq}]`` (``kubesched trace`` computes it
    as the paper's simulator does)."""

    name = "FGD"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.args = args or {}
        self.handle = handle
        self.model = FragModel(typical_from_args(self.args))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self.state_score(self.node_state(node_info), pod_gpu(pod))

    def state_score(self, node: NodeGpu, pg: PodGpu) -> int:
        if pg.cpu == 0 and pg.total_milli == 0:
            return MAX_NODE_SCORE
        if not accessible(node.model, pg.models):
            return MIN_NODE_SCORE
        return self.model.score(node, pg)[0]


# ------------------------------------------------------------------------ BestFit


def best_fit_score(node: NodeGpu, pod: PodGpu) -> int:
    """getBestFitScore: 100 × (1 − mean of free-after-placement over the largest node), for
    cpu and total GPU; -1 when the pod does not fit."""
    free = (node.cpu_left, node.total_left)
    req = (pod.cpu, pod.total_milli)
    spec = (MAX_SPEC_CPU, MAX_SPEC_GPU)
    s = 0.0
    for f, r, m in zip(free, req, spec, strict=True):
        if f < r:
            return -1
        s += (f - r) / m * 0.5
    return int((1.0 - s) * MAX_NODE_SCORE)


def min_max_normalize(scores: np.ndarray) -> np.ndarray:
    """The simulator's NormalizeScore: highest → 100, lowest → 0 (all equal: 0)."""
    if scores.size == 0:
        return scores
    hi, lo = int(scores.max()), int(scores.min())
    if hi == lo:
        return np.zeros_like(scores)
    return (scores - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // (hi - lo) + MIN_NODE_SCORE


class BestFit(_StateScored, ScorePlugin):
    name = "BestFit"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self.state_score(self.node_state(node_info), pod_gpu(pod))

    def state_score(self, node: NodeGpu, pg: PodGpu) -> int:
        if not accessible(node.model, pg.models):
            return MIN_NODE_SCORE
        return max(best_fit_score(node, pg), MIN_NODE_SCORE)

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return min_max_normalize(scores)


# ------------------------------------------------------------------------ DotProduct


def dot_product_score(node: NodeGpu, pod: PodGpu) -> int:
    """calculateDotProductScore with the paper's settings (dimExtMethod merge, normMethod
    max): 100 × (1 − ⟨free, request⟩ / 2), both over the largest node's (cpu, GPU)."""
    if node.cpu_left < pod.cpu:
        return MIN_NODE_SCORE
    nv = (node.cpu_left / MAX_SPEC_CPU, node.total_left / MAX_SPEC_GPU)
    pv = (pod.cpu / MAX_SPEC_CPU, pod.total_milli / MAX_SPEC_GPU)
    dot = (nv[0] * pv[0] + nv[1] * pv[1]) / 2
    return int(MAX_NODE_SCORE * (1 - dot))


class DotProduct(_StateScored, ScorePlugin):
    name = "DotProduct"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return dot_product_score(self.node_state(node_info), pod_gpu(pod))

    def state_score(self, node: NodeGpu, pg: PodGpu) -> int:
        return dot_product_score(node, pg)


# ------------------------------------------------------------------------ GpuClustering


def gpu_affinity(pod: PodGpu) -> str:
    """GetGpuAffinityFromPodAnnotation: "" (no GPU), "share", or "<n>-gpu"."""
    if pod.count == 0 or pod.milli == 0:
        return ""
    if pod.count == 1 and pod.milli < MILLI:
        return "share"
    return f"{pod.count}-gpu"


def gpu_clustering_score(node: NodeGpu, affinities: Counter[str], pod: PodGpu) -> int:
    """GpuClusteringScore: the band (pod's kind alone on the node > among others > idle
    node > other kinds only), then fuller nodes first within the band (Go's int64)."""
    aff = gpu_affinity(pod)
    if not aff:
        return MIN_NODE_SCORE
    fill = MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - node.total_left) // MAX_SPEC_GPU
    if affinities.get(aff, 0) > 0:
        return fill + (MAX_NODE_SCORE * 3 // 4 if len(affinities) == 1
                       else MAX_NODE_SCORE * 2 // 4)
    if not affinities:
        return fill + MAX_NODE_SCORE // 4
    return fill


class GpuClustering(_GpuBase, ScorePlugin):
    name = "GpuClustering"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        pg = pod_gpu(pod)
        if not gpu_affinity(pg):
            return MIN_NODE_SCORE
        affs: Counter[str] = Counter()
        for p in node_info.pods:
            a = gpu_affinity(pod_gpu(p))
            if a:
                affs[a] += 1
        return gpu_clustering_score(self.node_state(node_info), affs, pg)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        # The score reads the node's total free GPU and its pods' affinities only.
        memo: _Memo | None = getattr(self, "_memo", None)
        if memo is None:
            memo = self._memo = _Memo()
        pg = pod_gpu(pod)
        if not gpu_affinity(pg):
            return np.full(len(idx), MIN_NODE_SCORE, dtype=np.int64)
        cols = self.gpu_columns(snapshot, idx)
        keys = cols.aff[idx] * _TOTAL_SPAN + cols.total_left(idx)

        def one(key: int) -> int:
            aff, total = divmod(key, _TOTAL_SPAN)
            node = NodeGpu(0, (total,))
            return gpu_clustering_score(node, Counter(dict(GpuColumns.affinities[aff])), pg)

        return memo.scores(pg, keys, one)


_TOTAL_SPAN = 1 << 32


# ------------------------------------------------------------------------ GpuPacking


def gpu_packing_score(node: NodeGpu, pod: PodGpu) -> int:
    """getPackingScore: partly used GPUs (100 − free share of the GPUs it would use / 10,
    ≥ 50) > nodes whose free GPUs it would start (50 − their number, ≥ 33) > idle nodes
    (33 − free GPUs, at least the number of free GPUs)."""
    if pod.milli <= 0:
        return MIN_NODE_SCORE
    free = node.fully_free
    if free == len(node.left):
        return max(MAX_NODE_SCORE // 3 - free, free)
    need = pod.count
    use: list[int] = []
    fresh = 0
    for i in sorted(range(len(node.left)), key=node.left.__getitem__):
        if need == 0:
            break
        if pod.milli <= node.left[i]:
            need -= 1
            use.append(i)
            if node.left[i] == MILLI:
                fresh += 1
    if need:
        return MIN_NODE_SCORE
    if fresh:
        return max(MAX_NODE_SCORE // 2 - fresh, MAX_NODE_SCORE // 3)
    ratio = sum(node.left[i] * 100 // MILLI for i in use)
    return max(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)


class GpuPacking(_StateScored, ScorePlugin):
    name = "GpuPacking"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        pg = pod_gpu(pod)
        if pg.milli <= 0:
            return MIN_NODE_SCORE
        return self.state_score(self.node_state(node_info), pg)

    def state_score(self, node: NodeGpu, pg: PodGpu) -> int:
        if pg.milli <= 0 or not accessible(node.model, pg.models):
            return MIN_NODE_SCORE
        return gpu_packing_score(node, pg)


# ------------------------------------------------------------------------ Random

_RANDOM_KEY = "research.Random/node"


@dataclass
class _Chosen:
    node: str

    def clone(self) -> _Chosen:
        return self


class Random(PreScorePlugin, ScorePlugin):
    """RandomScore: PreScore draws one feasible node uniformly (the seeded generator); it
    scores 100, every other node 0."""

    name = "Random"

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        rng = self.handle.rng
        i = rng.randrange(len(nodes)) if rng is not None and len(nodes) else 0
        state.write(_RANDOM_KEY, _Chosen(nodes[i].name if len(nodes) else ""))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        chosen: _Chosen = state.read(_RANDOM_KEY)
        return MAX_NODE_SCORE if node_info.name == chosen.node else MIN_NODE_SCORE

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        chosen: _Chosen = state.read(_RANDOM_KEY)
        i = snapshot.table.index.get(chosen.node, -1)
        out: np.ndarray = np.where(idx == i, MAX_NODE_SCORE, MIN_NODE_SCORE).astype(np.int64)
        return out


# ------------------------------------------------------------------------ ties

# The simulator's selectHost (its fork of kube-scheduler v1.20.5) gives a tie to the node
# with the smallest name, and its node names start with a random permutation's entry
# (``openb.node_order``): ties go to the node earliest in one random order fixed for the
# run, which packs, where kubesched's uniform choice per cycle spreads. The same order as
# scores: two digits of base 101 (a score is 0..100), weights 101 and 1, the policy's
# weight above their largest sum, so the order only ever decides among the policy's ties.
ORDER_BASE = MAX_NODE_SCORE + 1
ORDER_SPAN = ORDER_BASE * ORDER_BASE  # places told apart; later ones share the last
POLICY_WEIGHT = ORDER_SPAN


def order_digits(place: int) -> tuple[int, int]:
    """The scores (coarse, fine) of the node at ``place`` (0: first) of the order:
    ``ORDER_BASE × coarse + fine`` falls by one a place."""
    hi, lo = divmod(min(max(place, 0), ORDER_SPAN - 1), ORDER_BASE)
    return MAX_NODE_SCORE - hi, MAX_NODE_SCORE - lo


def node_place(label: str | None) -> int:
    """A node's place in the order from its ``openb/order`` label; last without one."""
    try:
        return int(label) if label is not None else ORDER_SPAN - 1
    except ValueError:
        return ORDER_SPAN - 1


class _NodeOrder(ScorePlugin):
    digit = 0  # 0: coarse, 1: fine

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None
                 ) -> None:
        super().__init__(args, handle)
        self._column: NodeValue[np.ndarray] = NodeValue()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        return order_digits(node_place(node.labels.get(ORDER_LABEL) if node else None)
                            )[self.digit]

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        out: np.ndarray = self._column.get(snapshot.table, self._digits)[idx]
        return out

    def _digits(self, table: NodeTable) -> np.ndarray:
        return np.array([order_digits(node_place(v))[self.digit]
                         for v in table.label_column(ORDER_LABEL)], dtype=np.int64)


class NodeOrder(_NodeOrder):
    """The tie-break order's coarse digit (weight ``ORDER_BASE``)."""

    name = "NodeOrder"
    digit = 0


class NodeOrderFine(_NodeOrder):
    """The tie-break order's fine digit (weight 1)."""

    name = "NodeOrderFine"
    digit = 1


TIE_BREAK: dict[str, tuple[type[ScorePlugin], int]] = {
    "NodeOrder": (NodeOrder, ORDER_BASE), "NodeOrderFine": (NodeOrderFine, 1)}

POLICIES: dict[str, type[ScorePlugin]] = {
    "FGD": FGD, "BestFit": BestFit, "DotProduct": DotProduct,
    "GpuPacking": GpuPacking, "GpuClustering": GpuClustering, "Random": Random,
}
# gpuSelMethod of GpuShare in the paper's runs (experiments/run_scripts): FGD chooses the
# GPU by its own score; DotProduct's "merge" dimension leaves it best fit.
GPU_SELECTION = {"FGD": "FGD", "Random": "random", "BestFit": "best", "DotProduct": "best",
                 "GpuPacking": "best", "GpuClustering": "best"}


def gpu_chooser(method: str, args: dict[str, Any]) -> GpuChooser:
    """GpuShare's device choice for a policy with its own rule (``gpuSelMethod``)."""
    if method == "FGD":
        model = FragModel(typical_from_args(args))
        return lambda node, pod: model.score(node, pod)[1]
    raise ValueError(f"GpuShare: unknown gpuSelMethod {method!r}")
