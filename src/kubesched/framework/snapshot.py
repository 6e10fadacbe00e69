"""Snapshot: the cluster state one scheduling cycle sees — NodeInfos in upstream's
zone-interleaved order plus the columnar NodeTable over them."""

from __future__ import annotations

from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable


class Snapshot:
    def __init__(self, node_infos: list[NodeInfo] | None = None) -> None:
        self.node_infos: list[NodeInfo] = node_infos or []
        self.by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self.node_infos}
        self.table = NodeTable(self.node_infos)
        self.generation = 0
        # whether some node holds a pod with pod (anti-)affinity / with required
        # anti-affinity (None: not known since the cache last said such a pod moved)
        self._any_affinity: bool | None = None
        self._any_required_anti: bool | None = None

    @property
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def has_pods_with_affinity(self) -> bool:
        """Whether some node holds a pod with pod (anti-)affinity (the first such node
        answers; kept until the cache says such a pod came or went)."""
        if self._any_affinity is None:
            self._any_affinity = any(ni.pods_with_affinity for ni in self.node_infos)
        return self._any_affinity

    def has_pods_with_required_anti_affinity(self) -> bool:
        """As ``has_pods_with_affinity``, for pods with required anti-affinity."""
        if self._any_required_anti is None:
            self._any_required_anti = any(
                ni.pods_with_required_anti_affinity for ni in self.node_infos)
        return self._any_required_anti

    def affinity_changed(self, anti: bool = True) -> None:
        """A pod with pod (anti-)affinity came, changed or went — when ``anti``, one with
        required anti-affinity too (upstream's two flags)."""
        self._any_affinity = None
        if anti:
            self._any_required_anti = None
