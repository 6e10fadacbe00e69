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
        self._with_affinity: list[NodeInfo] | None = None
        self._with_required_anti: list[NodeInfo] | None = None
        self._any_affinity: bool | None = None
        self._any_required_anti: bool | None = None

    @property
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def nodes_with_pod_affinity(self) -> list[NodeInfo]:
        if self._with_affinity is None:
            self._with_affinity = [ni for ni in self.node_infos if ni.pods_with_affinity]
        return self._with_affinity

    def nodes_with_required_anti_affinity(self) -> list[NodeInfo]:
        if self._with_required_anti is None:
            self._with_required_anti = [
                ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]
        return self._with_required_anti

    def has_pods_with_affinity(self) -> bool:
        """Whether some node holds a pod with pod (anti-)affinity: the first such node
        answers (where pods with affinity come and go every cycle, the list of them all
        would be rebuilt every cycle)."""
        if self._with_affinity is not None:
            return bool(self._with_affinity)
        if self._any_affinity is None:
            self._any_affinity = any(ni.pods_with_affinity for ni in self.node_infos)
        return self._any_affinity

    def has_pods_with_required_anti_affinity(self) -> bool:
        """As ``has_pods_with_affinity``, for pods with required anti-affinity."""
        if self._with_required_anti is not None:
            return bool(self._with_required_anti)
        if self._any_required_anti is None:
            self._any_required_anti = any(
                ni.pods_with_required_anti_affinity for ni in self.node_infos)
        return self._any_required_anti

    def invalidate_pod_lists(self, anti: bool = True) -> None:
        """Forget the lists of nodes with pods with affinity and, when ``anti``, of those
        with pods with required anti-affinity."""
        self._with_affinity = None
        self._any_affinity = None
        if anti:
            self._with_required_anti = None
            self._any_required_anti = None
