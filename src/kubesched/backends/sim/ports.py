"""What the simulator's helpers need of the cluster they work on, and no more: the fault
runner and taint manager (``faults``), the invariant checker, the time series and
``--state-out`` depend on these Protocols, never on ``SimCluster`` (which assembles them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kubesched.api.dra.types import ResourceClaim
from kubesched.api.scenario import Scenario
from kubesched.api.types import Namespace, Node, Pod
from kubesched.clock import Clock
from kubesched.config import SchedulerConfiguration
from kubesched.scheduler import Scheduler


class ClusterView(Protocol):
    """The simulated API server's objects, read."""

    @property
    def nodes(self) -> Mapping[str, Node]: ...

    @property
    def pods(self) -> Mapping[str, Pod]: ...

    @property
    def objects(self) -> dict[str, list[Any]]: ...

    def pods_on_node(self, node_name: str) -> set[str]: ...


class FaultTarget(ClusterView, Protocol):
    """What faults and the controllers reacting to them change (``faults``)."""

    @property
    def clock(self) -> Clock: ...

    def pod_by_key(self, key: str) -> Pod | None: ...

    def delete(self, current: Pod, reason: str, *, force: bool = False,
               informer_later: bool = False) -> None: ...

    def remove_node(self, name: str) -> bool: ...

    def update_node(self, old: Node, new: Node) -> None: ...

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim: ...

    def bind_elsewhere(self, pod: Pod, node_name: str, other: str | None) -> str: ...

    def changed_after_attempt(self) -> None: ...

    def schedule_eviction(self, uid: str, at: float) -> None: ...

    def cancel_eviction(self, uid: str) -> None: ...


class JudgedCluster(ClusterView, Protocol):
    """What the invariant checker judges a binding against."""

    @property
    def config(self) -> SchedulerConfiguration: ...

    @property
    def namespaces(self) -> Mapping[str, Namespace]: ...


class SampledRun(Protocol):
    """What the time series samples."""

    @property
    def scheduler(self) -> Scheduler: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def attempts(self) -> int: ...


class EndState(ClusterView, Protocol):
    """What ``--state-out`` writes out."""

    @property
    def clock(self) -> Clock: ...

    @property
    def scenario(self) -> Scenario: ...

    @property
    def finished(self) -> list[Pod]: ...

    @property
    def made_objects(self) -> list[dict[str, Any]]: ...

    def finish_time(self, uid: str) -> float | None: ...

    def arrivals(self) -> list[tuple[float, Pod]]: ...

    def pods_in_order(self) -> list[Pod]:
        """The pods on the API server: those bound in the order each node lists them,
        then the others."""

    def checkpoint(self, written: set[str]) -> dict[str, Any]:
        """The ``SimulationState`` document, ``written`` the keys of the pods written."""
