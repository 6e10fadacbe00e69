"""The six policies' scoring rules on small hand-worked cases (the Go originals in
hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from kubesched.research.gpushare import NodeGpu, PodGpu, best_fit_id, exclusive_ids, subtract
from kubesched.research.policies import (
    FragModel,
    TypicalPod,
    best_fit_score,
    dot_product_score,
    frag_amount,
    gpu_clustering_score,
    gpu_packing_score,
    min_max_normalize,
    typical_pods,
)

HALF = PodGpu(cpu=4000, milli=500, count=1)
WHOLE = PodGpu(cpu=8000, milli=1000, count=1)


def test_frag_amount_counts_gpus_too_small_for_each_typical_pod() -> None:
    # 2 GPUs with 300 and 1000 free. Typical pods: half a GPU (60 %), a whole GPU (40 %).
    node = NodeGpu(cpu_left=32000, left=(300, 1000))
    typical = [TypicalPod(HALF, 0.6), TypicalPod(WHOLE, 0.4)]
    # HALF fits (Q3): only the 300 GPU is a fragment for it; WHOLE fits: 300 again.
    assert frag_amount(node, typical) == 0.6 * 300 + 0.4 * 300
    # Without cpu, no pod fits (Q4 / Q1): all 1300 free milli are fragments.
    starved = NodeGpu(cpu_left=1000, left=(300, 1000))
    assert frag_amount(starved, typical) == 1300


def test_frag_amount_cpu_pods_and_models() -> None:
    cpu_pod = PodGpu(cpu=1000, milli=0, count=0)
    node = NodeGpu(cpu_left=32000, left=(1000,), model="V100M16")
    assert frag_amount(node, [TypicalPod(cpu_pod, 1.0)]) == 1000  # XL: all of it
    other = PodGpu(cpu=1000, milli=500, count=1, models="T4")
    assert frag_amount(node, [TypicalPod(other, 1.0)]) == 1000  # no access


def test_fgd_prefers_the_gpu_whose_use_leaves_less_fragmentation() -> None:
    # Typical workload: whole GPUs only. Placing a 500m share on the half-used GPU leaves
    # the free GPU whole: fragmentation falls from 500 to 0 -> sigmoid(0.5) -> 62.
    model = FragModel([TypicalPod(WHOLE, 1.0)])
    node = NodeGpu(cpu_left=64000, left=(500, 1000))
    score, ids = model.score(node, HALF)
    assert ids == (0,)
    assert score == int(1 / (1 + math.exp(-0.5)) * 100) == 62
    # On an idle node the share breaks a whole GPU: +500 fragmentation -> sigmoid(-0.5).
    idle = NodeGpu(cpu_left=64000, left=(1000, 1000))
    assert model.score(idle, HALF) == (int(1 / (1 + math.exp(0.5)) * 100), (0,))


def test_fgd_whole_gpu_pod_packs_exclusive_gpus() -> None:
    model = FragModel([TypicalPod(WHOLE, 1.0)])
    node = NodeGpu(cpu_left=64000, left=(200, 1000, 1000))
    # before: 200 (too small for WHOLE); after taking GPU 1: still 200 -> sigmoid(0) = 50
    assert model.score(node, WHOLE) == (50, (1,))


def test_typical_pods_take_the_most_frequent_shapes_to_95_percent() -> None:
    shapes = [HALF] * 60 + [WHOLE] * 38 + [PodGpu(1000, 0, 0)] * 2
    got = typical_pods(shapes)
    assert [t.pod for t in got] == [HALF, WHOLE]
    assert math.isclose(got[0].freq, 60 / 98) and math.isclose(got[1].freq, 38 / 98)


def test_best_fit_score() -> None:
    # free (64000 cpu, 2000 gpu) - request (4000, 500): (60000/128000 + 1500/8000) / 2
    node = NodeGpu(cpu_left=64000, left=(1000, 1000))
    s = (60000 / 128000 + 1500 / 8000) * 0.5
    assert best_fit_score(node, HALF) == int((1 - s) * 100) == 67
    assert best_fit_score(NodeGpu(1000, (1000,)), HALF) == -1
    assert list(min_max_normalize(np.array([67, 50, 84]))) == [50, 0, 100]
    assert list(min_max_normalize(np.array([7, 7]))) == [0, 0]


def test_dot_product_score() -> None:
    node = NodeGpu(cpu_left=64000, left=(1000, 1000))
    dot = (64000 / 128000 * 4000 / 128000 + 2000 / 8000 * 500 / 8000) / 2
    assert dot_product_score(node, HALF) == int(100 * (1 - dot)) == 98
    assert dot_product_score(NodeGpu(1000, (1000,)), HALF) == 0


def test_gpu_clustering_bands() -> None:
    node = NodeGpu(cpu_left=64000, left=(500, 1000))  # 1500 free: 25*(6500)//8000 = 20
    assert gpu_clustering_score(node, Counter({"share": 1}), HALF) == 20 + 75
    assert gpu_clustering_score(node, Counter({"share": 1, "1-gpu": 1}), HALF) == 20 + 50
    assert gpu_clustering_score(node, Counter(), HALF) == 20 + 25
    assert gpu_clustering_score(node, Counter({"1-gpu": 2}), HALF) == 20
    assert gpu_clustering_score(node, Counter(), PodGpu(1000, 0, 0)) == 0


def test_gpu_packing_tiers() -> None:
    # idle node of 8 GPUs: max(33 - 8, 8) = 25
    assert gpu_packing_score(NodeGpu(64000, (1000,) * 8), HALF) == 25
    # would open one free GPU on a used node: max(50 - 1, 33) = 49
    assert gpu_packing_score(NodeGpu(64000, (300, 1000)), HALF) == 49
    # fits on a used GPU with 600 free: 100 - 60 // 10 = 94
    assert gpu_packing_score(NodeGpu(64000, (600, 1000)), HALF) == 94
    assert gpu_packing_score(NodeGpu(64000, (1000,)), PodGpu(1000, 0, 0)) == 0


def test_gpu_choice_helpers() -> None:
    node = NodeGpu(64000, (700, 1000, 600, 1000))
    assert best_fit_id(node, HALF) == (2,)
    assert exclusive_ids(node, PodGpu(8000, 1000, 2)) == (1, 3)
    assert exclusive_ids(node, PodGpu(8000, 1000, 3)) is None
    after = subtract(node, HALF)
    assert after is not None and after.left == (700, 1000, 100, 1000)
    assert after.cpu_left == 60000


def test_fgd_sums_fragments_per_class_as_the_simulator_does() -> None:
    # Four CPU-only typical pods (19, 4, 7 and 11 of 41): every free milli of the node is a
    # fragment for each, before and after a 4-core pod, so the change is 0 in exact
    # arithmetic. The simulator sums per class (FragRatioDataMap: Q1, Q2, Q3, Q4, XL, XR,
    # NA), then the classes but Q3: after the pod, the 16-core typical pod moves from XL to
    # XR, the additions regroup, and the difference is not 0 in float64.
    f = [19 / 41, 4 / 41, 7 / 41, 11 / 41]
    cpus = [2000, 16000, 8000, 4000]
    typical = [TypicalPod(PodGpu(c, 0, 0), w) for c, w in zip(cpus, f, strict=True)]
    node = NodeGpu(cpu_left=16000, left=(300, 300, 190, 190, 1000, 1000, 500, 0))
    t = 3480.0  # free milli
    before = 0.0 + ((((0.0 + f[0] * t) + f[1] * t) + f[2] * t) + f[3] * t)  # all XL
    xl_after = ((0.0 + f[0] * t) + f[2] * t) + f[3] * t
    after = (0.0 + xl_after) + (0.0 + f[1] * t)  # XL, then XR
    assert frag_amount(node, typical) == before
    assert frag_amount(NodeGpu(12000, node.left), typical) == after
    expected = int(1 / (1 + math.exp(-(before - after) / 1000)) * 100)
    assert before != after and expected == 49
    assert FragModel(typical).score(node, PodGpu(4000, 0, 0))[0] == expected
