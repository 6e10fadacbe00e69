"""What plugins may reach of the scheduler (upstream's framework.Handle)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.framework.snapshot import Snapshot

if TYPE_CHECKING:
    from kubesched.api.types import Pod
    from kubesched.backends.base import Backend
    from kubesched.clock import Clock


@dataclass
class Handle:
    snapshot: Snapshot = field(default_factory=Snapshot)
    # Scheduling objects other than pods and nodes, by kind (Service, ReplicaSet, PV, ...).
    objects: dict[str, list[Any]] = field(default_factory=dict)
    namespaces: dict[str, Any] = field(default_factory=dict)
    backend: Backend | None = None
    clock: Clock | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    # node name -> pods nominated to it (the queue's nominator fills this in)
    nominated_pods: Any = None
    # () -> {node name: its nominated pods} for every node with some (the queue's, in bulk)
    all_nominated_pods: Any = None
    parallelism: int = 16

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        if self.nominated_pods is None:
            return []
        return self.nominated_pods(node_name)

    def nominated_pods_by_node(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods → those pods (as ``nominated_pods_for_node``)."""
        if self.all_nominated_pods is not None:
            return self.all_nominated_pods()
        if self.nominated_pods is None:
            return {}
        out = {}
        for name in self.snapshot.by_name:
            pods = self.nominated_pods(name)
            if pods:
                out[name] = pods
        return out
