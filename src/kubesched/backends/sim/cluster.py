"""The embedded simulator: an in-memory cluster on a virtual clock, assembled from its parts.

- ``timeline``: what is due when, as typed events;
- ``apiserver``: the simulated API server (the scheduler's ``Backend``) and the controllers
  acting at once with it; it pushes what watchers are to hear onto the timeline, and
  delivers each event when due;
- ``runloop``: delivers, schedules, moves the clock to the next wake-up, and ends the run by
  its one rule;
- ``accounting``: each pod's fate, attempts, events, preemptions, the run's result;
- ``faults``, ``controllers``, ``invariants``, ``series``: the scenario's faults and the
  controllers reacting to them, the workload controllers, ``--check``, ``--report``.

``SimCluster`` is what the commands and tests use.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.dra.store import devices_per_class, dra_index
from kubesched.api.dra.types import ResourceClaim
from kubesched.api.scenario import ClusterState, Scenario
from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import ExtendedResourceClaimStatus, Node, Pod, PodCondition
from kubesched.backends.sim.accounting import Accounting, PodRecord, SimResult
from kubesched.backends.sim.apiserver import ApiServer
from kubesched.backends.sim.controllers import Controllers
from kubesched.backends.sim.faults import FaultRunner, TaintManager
from kubesched.backends.sim.invariants import InvariantViolation
from kubesched.backends.sim.runloop import RunLoop
from kubesched.backends.sim.series import Series
from kubesched.backends.sim.timeline import Timeline
from kubesched.clock import VirtualClock
from kubesched.config import SchedulerConfiguration, default_config
from kubesched.framework.interface import Plugin
from kubesched.scheduler import Scheduler

__all__ = ["PodRecord", "SimCluster", "SimResult"]


class SimCluster:
    def __init__(self, scenario: Scenario, config: SchedulerConfiguration | None = None,
                 *, seed: int = 0, registry: dict[str, type[Plugin]] | None = None,
                 check: bool = False, names_seed: int | None = None) -> None:
        self.scenario = scenario
        self.clock = VirtualClock()
        self.timeline = Timeline()
        # the controllers' names come from ``seed`` too, unless told otherwise (``compare``
        # of two seeds: the same pods under the same names on both sides)
        self.api = ApiServer(scenario, self.clock, self.timeline,
                             names_seed=seed if names_seed is None else names_seed,
                             check=check)
        self.accounting = Accounting(self.api.alive, self.clock.now)
        # the scheduler's Backend is this object, passing each call to the API server (a
        # caller may wrap one of them here, as the preemption goldens wrap delete_pod)
        self.scheduler = Scheduler(self, self.clock, config or default_config(), seed=seed,
                                   registry=registry, recorder=self.accounting)
        self.accounting.scheduler = self.scheduler
        self.api.attach(self.scheduler, self.accounting)
        self.loop = RunLoop(self.api, self.scheduler, self.clock, self.timeline)
        self.until: float | None = None  # bound on virtual time (``simulate --until``)
        # simulate --report / --metrics: the run's time series, sampled as it goes (None:
        # not recorded, and nothing is paid for it)
        self.series: Series | None = None

    # ------------------------------------------------------------------ the run

    def load(self) -> None:
        state = self.scenario.resume
        if state is None:
            self.api.load()
        else:
            import kubesched.backends.sim.resume_nodes  # noqa: F401  (NodeAdded's codec)
            from kubesched.backends.sim.resume import restore

            restore(self, state)
            periodic = state.run_loop.get("periodic")
            if self.loop.periodic is not None and periodic is not None:
                try:
                    self.loop.restore_periodic(periodic)
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    raise state.error(f"not as --state-out writes it ({e})",
                                      "runLoop.periodic") from None

    def run(self, progress: Callable[[int, int], None] | None = None) -> SimResult:
        start = time.perf_counter()
        self.load()
        self.run_until_idle(progress)
        if self.series is not None:
            self.series.finish()
        wall = time.perf_counter() - start
        acc = self.accounting
        acc.say_why_pending(self.api.pods, self.scheduler)
        everyone = list(acc.records.values())
        return SimResult([r for r in everyone if not r.unserved], self.utilisation(), wall,
                         self.clock.now(), dict(acc.event_counts),
                         dict(self.scenario.missing_node_pods), dict(acc.preemptions),
                         devices_per_class(dra_index(self.scheduler.handle.objects)
                                           .claims.values()),
                         unserved=[r for r in everyone if r.unserved], placements=everyone)

    def run_until_idle(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Deliver events and schedule until the run is over (``runloop``)."""
        self.loop.series = self.series
        self.loop.run(progress, until=self.until)

    def deliver_due(self) -> None:
        self.loop.deliver_due()

    def utilisation(self) -> list[dict[str, Any]]:
        out = []
        for name, ni in self.scheduler.cache.nodes.items():
            if ni.node is None:
                continue
            alloc = ni.allocatable
            out.append({
                "node": name,
                "pods": len(ni.pods),
                "cpu_requested": ni.requested.get("cpu", 0),
                "cpu_allocatable": alloc.get("cpu", 0),
                "memory_requested": ni.requested.get("memory", 0),
                "memory_allocatable": alloc.get("memory", 0),
                # every resource (GPUs, extended resources, …): the summary's columns
                "requested": dict(ni.requested),
                "allocatable": dict(alloc),
            })
        return out

    # ------------------------------------------------------------------ the API server's

    @property
    def nodes(self) -> dict[str, Node]:
        return self.api.nodes

    @property
    def pods(self) -> dict[str, Pod]:
        return self.api.pods

    @property
    def objects(self) -> dict[str, list[Any]]:
        return self.api.objects

    @property
    def created(self) -> list[Pod]:
        return self.api.created

    @property
    def finished(self) -> list[Pod]:
        return self.api.finished

    @property
    def made_objects(self) -> list[dict[str, Any]]:
        return self.api.made_objects

    @property
    def controllers(self) -> Controllers:
        return self.api.controllers

    @property
    def faults(self) -> FaultRunner:
        return self.api.faults

    @property
    def taints(self) -> TaintManager:
        return self.api.taints

    @property
    def violation(self) -> InvariantViolation | None:
        return self.api.violation

    @property
    def bound_count(self) -> int:
        return self.api.bound_count

    def delete(self, current: Pod, reason: str, *, force: bool = False) -> None:
        self.api.delete(current, reason, force=force)

    def pod_by_key(self, key: str) -> Pod | None:
        return self.api.pod_by_key(key)

    def pods_on_node(self, node_name: str) -> set[str]:
        return self.api.pods_on_node(node_name)

    def key_in_use(self, key: str) -> bool:
        return self.api.key_in_use(key)

    def create_pod(self, pod: Pod) -> None:
        self.api.create_pod(pod)

    def add_pending(self, pods: list[Pod], at: float | None = None) -> None:
        self.api.add_pending(pods, at)

    def finish_time(self, uid: str) -> float | None:
        return self.api.finish_time(uid)

    def not_arrived(self) -> list[Pod]:
        return self.api.not_arrived()

    def arrivals(self) -> list[tuple[float, Pod]]:
        return self.api.arrivals()

    def pods_in_order(self) -> list[Pod]:
        # a node's pods in the scheduler's order, which a resumed run must see again
        # (preemption and tie-breaks walk them in that order)
        pods = self.api.pods
        bound = [pods[p.uid] for ni in self.scheduler.cache.nodes.values() for p in ni.pods
                 if p.uid in pods]
        seen = {p.uid for p in bound}
        return bound + [p for p in pods.values() if p.uid not in seen]

    def checkpoint(self, written: set[str]) -> dict[str, Any]:
        import kubesched.backends.sim.resume_nodes  # noqa: F401  (NodeAdded's codec)
        from kubesched.backends.sim.resume import checkpoint_document

        doc = checkpoint_document(self, written)
        if self.loop.periodic is not None:
            doc["runLoop"]["periodic"] = self.loop.periodic_memory()
        return doc

    # ------------------------------------------------------------------ the Backend

    def bind(self, pod: Pod, node_name: str) -> None:
        self.api.bind(pod, node_name)

    def extender_bind(self, pod: Pod, node_name: str, bind: Callable[[], None]) -> None:
        self.api.extender_bind(pod, node_name, bind)

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        self.api.update_pod_status(pod, condition, nominated_node_name)

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        self.api.record_event(pod, event_type, reason, message)

    def failed_scheduling(self, failures: Sequence[tuple[Pod, PodCondition, str | None, str]]
                          ) -> None:
        self.api.failed_scheduling(failures)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.api.delete_pod(pod, reason)

    # the PV controller's binding happens within the update (ApiServer), so a claim not bound
    # after it never will be: PreBind need not poll
    wait_for_volume_binding = False

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        return self.api.update_persistent_volume(pv)

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim
                                       ) -> PersistentVolumeClaim:
        return self.api.update_persistent_volume_claim(pvc)

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        return self.api.update_resource_claim_status(claim)

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        return self.api.update_resource_claim(claim)

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        return self.api.create_resource_claim(claim)

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        self.api.delete_resource_claim(claim)

    def update_pod_extended_resource_claim_status(
            self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        self.api.update_pod_extended_resource_claim_status(pod, status)

    # ------------------------------------------------------------------ the accounting's

    @property
    def records(self) -> dict[str, PodRecord]:
        return self.accounting.records

    @property
    def event_counts(self) -> dict[str, int]:
        return self.accounting.event_counts

    @property
    def preemptions(self) -> dict[str, list[str]]:
        return self.accounting.preemptions

    @property
    def attempts(self) -> int:
        return self.accounting.attempts

    @property
    def explain_keys(self) -> set[str]:
        return self.accounting.explain_keys

    @explain_keys.setter
    def explain_keys(self, keys: set[str]) -> None:
        self.accounting.explain_keys = keys

    @property
    def last_attempt(self) -> dict[str, tuple[Pod, ClusterState]]:
        return self.accounting.last_attempt
