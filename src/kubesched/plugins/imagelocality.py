"""ImageLocality (upstream ``plugins/imagelocality/image_locality.go``).

Score favours nodes that already hold the pod's images (init containers and containers):
each present image counts ``int64(float64(size) * numNodesWithImage / totalNumNodes)``, the
sum is clamped to ``[23 MiB, 1000 MiB × #images]`` and scaled to 0..100 with integer
division. ``totalNumNodes`` is every node of the snapshot. No NormalizeScore.

Image volumes (``spec.volumes[].image.reference``), by release:

* v1.35: not looked at; ``#images`` is ``#initContainers + #containers``.
* v1.36 (kubernetes#130231): a present image volume adds to the sum, but ``#images`` is
  still the containers' count.
* v1.37 (kubernetes#138951): ``#images`` counts the image volumes too.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.cache.cache import normalized_image_name
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, ScorePlugin
from kubesched.framework.node_info import ImageStateSummary, NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.table_cache import NodeValue
from kubesched.releases import at_least

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot

__all__ = ["ImageLocality", "calculate_priority", "normalized_image_name"]

NAME = "ImageLocality"

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """``scaledImageScore``: the image size scaled by its spread (float64, truncated)."""
    spread = state.num_nodes / total_num_nodes
    return int(float(state.size) * spread)


def pod_image_names(pod: Pod) -> list[str]:
    """Normalized images of the init containers, then the containers (duplicates kept, as
    upstream counts every container)."""
    return [normalized_image_name(c.image)
            for c in (*pod.spec.init_containers, *pod.spec.containers)]


def pod_volume_image_names(pod: Pod) -> list[str]:
    """Normalized references of the pod's image volumes, in spec order."""
    return [normalized_image_name(v.image_reference) for v in pod.spec.volumes
            if v.image_reference is not None]


def sum_image_scores(image_states: dict[str, ImageStateSummary], images: list[str],
                     total_num_nodes: int) -> int:
    total = 0
    for name in images:
        st = image_states.get(name)
        if st is not None:
            total += scaled_image_score(st, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """``calculatePriority``: clamp to the thresholds and scale to 0..MaxNodeScore."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    num = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    den = max_threshold - MIN_THRESHOLD
    # Go truncates toward zero; num >= 0, and den < 0 only when num == 0 (no containers).
    return num // den if den > 0 else 0


def calculate_priority_np(sums: np.ndarray, num_containers: int) -> np.ndarray:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    den = max_threshold - MIN_THRESHOLD
    if den <= 0:
        return np.zeros(len(sums), dtype=np.int64)
    clamped = np.clip(sums, MIN_THRESHOLD, max_threshold)
    return (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // den


_image_states = operator.attrgetter("image_states")


class ImageIndex:
    """Which node rows hold which image: for each image name, the rows grouped by their
    (shared, live) ImageStateSummary. Kept as a ``NodeValue`` (images change only with the
    Node objects)."""

    __slots__ = ("groups",)

    def __init__(self, infos: list[NodeInfo]) -> None:
        groups: dict[str, dict[int, tuple[ImageStateSummary, list[int]]]] = {}
        for row, states in enumerate(map(_image_states, infos)):
            for name, summary in states.items():
                g = groups.setdefault(name, {})
                entry = g.get(id(summary))
                if entry is None:
                    g[id(summary)] = (summary, [row])
                else:
                    entry[1].append(row)
        self.groups: dict[str, list[tuple[ImageStateSummary, np.ndarray]]] = {
            name: [(summary, np.asarray(rows, dtype=np.int64)) for summary, rows in g.values()]
            for name, g in groups.items()}

    def sums(self, images: list[str], total_num_nodes: int, n: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        for name in images:  # a repeated image counts each time, as upstream
            for summary, rows in self.groups.get(name, ()):
                out[rows] += scaled_image_score(summary, total_num_nodes)
        return out


class ImageLocality(ScorePlugin):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # [upstream's SignPod not read: its signer is CanonicalImageNames()]
        return ((signers.IMAGE_NAMES, (tuple(pod_image_names(pod)),
                                       tuple(pod_volume_image_names(pod)))),)

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        super().__init__(args, handle)
        self._index: NodeValue[ImageIndex] = NodeValue()
        version = handle.kubernetes_version
        self.sum_volumes = at_least(version, "1.36")  # kubernetes#130231
        self.count_volumes = at_least(version, "1.37")  # kubernetes#138951

    def _images(self, pod: Pod) -> tuple[list[str], int]:
        """The images summed and the image count of the threshold, as the release has them."""
        images = pod_image_names(pod)
        count = len(images)
        if self.sum_volumes and pod.spec.volumes:
            volumes = pod_volume_image_names(pod)
            images.extend(volumes)
            if self.count_volumes:
                count += len(volumes)
        return images, count

    def _total_num_nodes(self) -> int:
        return self.handle.snapshot.num_nodes

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        images, count = self._images(pod)
        total = self._total_num_nodes()
        return calculate_priority(sum_image_scores(node_info.image_states, images, total),
                                  count)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                    idx: np.ndarray) -> np.ndarray:
        images, count = self._images(pod)
        infos = snapshot.node_infos
        index = self._index.get(snapshot.table, lambda _: ImageIndex(infos))
        groups = index.groups
        if not any(name in groups for name in images):
            # no node has any of them: every sum is 0, which scores 0 (below the threshold)
            return np.zeros(len(idx), dtype=np.int64)
        sums = index.sums(images, snapshot.num_nodes, len(infos))
        return calculate_priority_np(sums[idx], count)
