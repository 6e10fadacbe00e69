"""The Scheduler: its construction from a configuration (profiles, queue, cache, handle)
and its run state (upstream's ``scheduler.go``).

Synchronous and deterministic: the backend calls the ``on_*`` handlers with object events
(``eventhandlers``) and calls ``schedule_one`` to run one scheduling attempt
(``schedule_one``, whose filter and score pass is the ``algorithm``); the binding cycle
runs right after a successful scheduling cycle (a backend may apply the binding later and
report it back as a pod update, as an API server would).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence

from kubesched.api.types import Pod
from kubesched.cache.cache import Cache
from kubesched.clock import Clock
from kubesched.config import SchedulerConfiguration, default_config
from kubesched.config.defaults import gated_profile
from kubesched.framework.backend import Backend
from kubesched.framework.extender import Extender
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Plugin
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.queue import SchedulingQueue
from kubesched.releases import at_least
from kubesched.scheduler.eventhandlers import EventHandlers, waits_for_unscheduled_add
from kubesched.scheduler.failures import FailureMemo
from kubesched.scheduler.observer import Recorder
from kubesched.scheduler.schedule_one import ScheduleOne


class Scheduler(EventHandlers, ScheduleOne):
    def __init__(
        self,
        backend: Backend,
        clock: Clock,
        config: SchedulerConfiguration | None = None,
        *,
        seed: int = 0,
        registry: dict[str, type[Plugin]] | None = None,
        recorder: Recorder | None = None,
        extenders: Sequence[Extender] | None = None,
    ) -> None:
        from kubesched.plugins.registry import in_tree_registry

        self.config = config or default_config()
        self.backend = backend
        self.clock = clock
        self.recorder = recorder
        self.observer = None  # metrics (kubesched.metrics)
        self.decisions = None  # the decision record (simulate --decisions)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.handle = Handle(snapshot=self.snapshot, backend=backend, clock=clock,
                             rng=random.Random(seed), parallelism=self.config.parallelism,
                             features=self.config.features)
        if extenders is None:
            extenders = []
            if self.config.extenders:  # (the HTTP client's modules only when used)
                from kubesched.extender import build_extenders

                extenders = build_extenders(self.config)
        # The only I/O the core does goes through these (tests pass their own).
        self.extenders: list[Extender] = list(extenders)
        self.handle.extenders = self.extenders
        reg = dict(registry if registry is not None else in_tree_registry())
        reg.update(self.config.out_of_tree)
        pct = self.config.percentage_of_nodes_to_score
        features = self.config.features
        self.profiles: dict[str, Framework] = {
            p.scheduler_name: Framework(gated_profile(p, features), reg, self.handle, pct,
                                        guarded=frozenset(self.config.out_of_tree))
            for p in self.config.profiles}
        self.queue = SchedulingQueue(
            self.profiles, clock,
            initial_backoff=float(self.config.pod_initial_backoff_seconds),
            max_backoff=float(self.config.pod_max_backoff_seconds),
            pop_from_backoff=self.config.features.enabled("SchedulerPopFromBackoffQ"),
            nominate_gated=at_least(self.config.features.version, "1.37"))
        self.handle.nominated_pods = self.queue.nominated_pods_for_node
        self.handle.all_nominated_pods = self.queue.nominated_pods_by_node
        self.handle.pod_lister = self._all_pods
        self.handle.activator = self.queue.activate
        self._unscheduled_add_matters = any(
            waits_for_unscheduled_add(fwk) for fwk in self.profiles.values())
        self.next_start_node_index = 0
        self.pending: dict[str, Pod] = {}  # unassigned pods this scheduler is responsible for
        # A backend that drives the core from several threads (the kube backend: informers,
        # the scheduling loop, binding cycles) holds ``lock`` around on_* and schedule_one;
        # the binding cycle takes it for its own state changes. Uncontended in the simulator.
        self.lock = threading.RLock()
        # None: the binding cycle runs right after the scheduling cycle (the simulator).
        # Set: it is handed the binding cycle to run asynchronously, as upstream's goroutine
        # (PreBind and Bind then run without the lock, concurrently with scheduling).
        self.binding_runner = None
        self._cancel_pre_bind = at_least(self.handle.kubernetes_version, "1.36")
        self._batching = self.config.features.enabled("OpportunisticBatching")
        self.failures = FailureMemo()

    def _all_pods(self) -> list[Pod]:
        """Every pod known: bound ones from the cache (assumed pods are still pending in the
        API server's eyes) and the pending ones."""
        bound = [st.pod for st in self.cache.pod_states.values() if not st.assumed]
        return bound + list(self.pending.values())

    def pre_enqueue_message(self, pod: Pod) -> str | None:
        """Why a PreEnqueue plugin keeps ``pod`` out of the active queue, or None."""
        qpi = self.queue.get(pod.uid)
        fwk = self.profiles.get(pod.spec.scheduler_name)
        if qpi is None or not qpi.gated or fwk is None:
            return None
        st = fwk.run_pre_enqueue(pod)
        return None if st.is_success() else st.message()
