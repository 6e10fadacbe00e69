"""What plugins may reach of the scheduler (upstream's framework.Handle)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.clock import VirtualClock
from kubesched.config.features import DEFAULT_FEATURE_GATES, FeatureGates
from kubesched.framework.dra_manager import DraManager
from kubesched.framework.listers import Listers
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.waiting import PodInPreBind, PodsInPreBind, WaitingPod, WaitingPods

if TYPE_CHECKING:
    from kubesched.api.types import Pod
    from kubesched.clock import Clock
    from kubesched.framework.backend import Backend
    from kubesched.framework.extender import Extender


@dataclass
class Handle:
    snapshot: Snapshot = field(default_factory=Snapshot)
    # Scheduling objects other than pods and nodes, by kind (Service, ReplicaSet, PV, ...):
    # the backend's store. Plugins read it through ``listers``; the index builders
    # (storage_index, dra_index, the gang look-ups) take it whole.
    objects: dict[str, list[Any]] = field(default_factory=dict)
    namespaces: dict[str, Any] = field(default_factory=dict)
    backend: Backend | None = None
    clock: Clock | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    # node name -> pods nominated to it (the queue's nominator fills this in)
    nominated_pods: Callable[[str], list[Pod]] | None = None
    # () -> {node name: its nominated pods} for every node with some (the queue's, in bulk)
    all_nominated_pods: Callable[[], dict[str, list[Pod]]] | None = None
    parallelism: int = 16
    # The release decided as and its effective feature gates (--kubernetes-version,
    # --feature-gates): plugins and the queue branch on ``features.enabled("Name")``.
    features: FeatureGates = DEFAULT_FEATURE_GATES
    # pods parked at Permit (Scheduler fills it in; plugins allow or reject them)
    waiting_pods: WaitingPods = field(default_factory=WaitingPods)
    # pods whose binding cycle is in PreBind (v1.36: preemption cancels them)
    pods_in_pre_bind: PodsInPreBind = field(default_factory=PodsInPreBind)
    # The configured scheduler extenders, in upstream's order (preemption asks them).
    extenders: list[Extender] = field(default_factory=list)
    # DRA allocations decided but not yet written (upstream's SharedDRAManager)
    dra: DraManager = field(default_factory=DraManager)
    # Every pod the scheduler knows, pending (assumed ones too) or bound: upstream's pod
    # informer lister (the Scheduler fills it in)
    pod_lister: Callable[[], Iterable[Pod]] | None = None
    # Moves pods to the active queue (upstream's PodActivator; the Scheduler fills it in)
    activator: Callable[[Iterable[Pod]], None] | None = None
    # What the plugins of one scheduler share beyond the above, under a key their module
    # owns (research's GPU ledger): it lives as long as the scheduler does.
    shared: dict[str, Any] = field(default_factory=dict)
    # The typed listers over ``objects`` (they read it on every call: a backend may replace
    # the mapping or its lists)
    listers: Listers = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.listers = Listers(self)

    @property
    def kubernetes_version(self) -> str:
        return self.features.version

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        for wp in self.waiting_pods:
            callback(wp)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        wp = self.waiting_pods.get(uid)
        return wp if wp is not None and wp.status is None else None

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        return self.pods_in_pre_bind.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod (upstream: when the pod is deleted); False if none."""
        wp = self.get_waiting_pod(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def list_pods(self) -> list[Pod]:
        return list(self.pod_lister()) if self.pod_lister is not None else []

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move ``pods`` to the active queue (upstream's ``Handle.Activate``)."""
        if self.activator is not None:
            self.activator(pods)

    def creation_time(self, creation_timestamp: float | None) -> float:
        """An object's creation time on the scheduler's clock. The simulator's objects were
        all created before its virtual time 0, and their creationTimestamps (wall-clock
        seconds) cannot be compared with virtual times; on a real clock they can."""
        if isinstance(self.clock, VirtualClock) or self.clock is None:
            return 0.0
        return creation_timestamp if creation_timestamp is not None else self.clock.now()

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


def feature_enabled(handle: Handle, name: str) -> bool:
    """A gate as the plugin's handle has it."""
    return handle.features.enabled(name)
