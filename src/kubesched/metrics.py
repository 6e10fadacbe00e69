"""Prometheus metrics under upstream kube-scheduler's names (``pkg/scheduler/metrics``).

Recording is optional and costs nothing until ``SchedulerMetrics.instrument(scheduler)`` is
called: it wraps the scheduler's queue pop, algorithm and recorder, its frameworks'
extension points and (in one cycle out of ``plugin_sample_every``, as upstream's 10 %) its
plugins' methods, from outside — the core itself stays free of timing code and of
``prometheus_client``, which is imported only here, only when metrics are made.

The queue gauges (``pending_pods``, ``unschedulable_pods``) and the cache sizes are read at
scrape time, under the scheduler's lock.

Names (all prefixed ``scheduler_``): ``schedule_attempts_total{result,profile}``,
``scheduling_attempt_duration_seconds{result,profile}``,
``scheduling_algorithm_duration_seconds``, ``pending_pods{queue}``,
``unschedulable_pods{plugin,profile}``, ``preemption_attempts_total``,
``preemption_victims``, ``pod_scheduling_attempts``,
``pod_scheduling_sli_duration_seconds{attempts}``,
``framework_extension_point_duration_seconds{extension_point,status,profile}``,
``plugin_execution_duration_seconds{plugin,extension_point,status}``,
``scheduler_cache_size{type}`` (full name ``scheduler_scheduler_cache_size``), and
kubesched's own ``kubesched_dry_run_decisions_total{result}``,
``kubesched_shadow_evaluations_total{scheduler,result}``, ``kubesched_bind_retries_total``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.scheduler import Scheduler

NAMESPACE = "scheduler"


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    return [start * factor ** i for i in range(count)]


# extension point -> Framework method, and how to read a status out of its return value

# plugin method -> extension point label


class SchedulerMetrics:
    """The metrics of one scheduler, in their own registry (``registry`` to share one)."""

    def __init__(self, registry: Any = None, *, plugin_sample_every: int = 10) -> None:
        from prometheus_client import (
            CollectorRegistry,
            Counter,
            Gauge,
            Histogram,
            disable_created_metrics,
        )

        disable_created_metrics()  # upstream exposes no *_created series

        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        ns = NAMESPACE
        self.plugin_sample_every = max(1, plugin_sample_every)
        self.schedule_attempts = Counter(
            "schedule_attempts", "Number of attempts to schedule pods, by the result. "
            "'unschedulable' means a pod could not be scheduled, while 'error' means an "
            "internal scheduler problem.", ["result", "profile"], namespace=ns, registry=r)
        self.attempt_duration = Histogram(
            "scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"], namespace=ns, registry=r,
            buckets=exponential_buckets(0.001, 2, 15))
        self.algorithm_duration = Histogram(
            "scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds",
            namespace=ns, registry=r, buckets=exponential_buckets(0.001, 2, 15))
        self.preemption_attempts = Counter(
            "preemption_attempts", "Total preemption attempts in the cluster till now",
            namespace=ns, registry=r)
        self.preemption_victims = Histogram(
            "preemption_victims", "Number of selected preemption victims", namespace=ns,
            registry=r, buckets=exponential_buckets(1, 2, 7))
        self.pod_attempts = Histogram(
            "pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.", namespace=ns, registry=r,
            buckets=exponential_buckets(1, 2, 5))
        self.sli_duration = Histogram(
            "pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the "
            "scheduling queue and might involve multiple scheduling attempts.", ["attempts"],
            namespace=ns, registry=r, buckets=exponential_buckets(0.01, 2, 20))
        self.extension_point_duration = Histogram(
            "framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"], namespace=ns, registry=r,
            buckets=exponential_buckets(0.0001, 2, 12))
        self.plugin_duration = Histogram(
            "plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], namespace=ns, registry=r,
            buckets=exponential_buckets(0.00001, 1.5, 20))
        self.dry_run_decisions = Counter(
            "dry_run_decisions", "Decisions taken in --dry-run mode (nothing bound), by "
            "result.", ["result"], namespace="kubesched", registry=r)
        self.shadow_evaluations = Counter(
            "shadow_evaluations", "Pods bound by the shadowed scheduler, by whether kubesched "
            "would have chosen the same node (agree), another (disagree) or none "
            "(unschedulable).", ["scheduler", "result"], namespace="kubesched", registry=r)
        self.bind_retries = Counter(
            "bind_retries", "Binding requests retried after an error or no answer.",
            namespace="kubesched", registry=r)
        self._gauge_cls = Gauge
        self._sched: Scheduler | None = None
        self._starts: dict[str, float] = {}
        self._qpis: dict[str, tuple[int, float | None]] = {}
        self._cycles = 0
        self._deletes = 0
        self._deletes_before = 0

    # ------------------------------------------------------------------ direct recording

    def now(self) -> float:
        return time.perf_counter()

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        self.schedule_attempts.labels(result, profile).inc()
        self.attempt_duration.labels(result, profile).observe(seconds)

    def observe_victims(self, n: int) -> None:
        self.preemption_victims.observe(n)

    def victim_deleted(self) -> None:
        """Called by a backend for each preemption victim it deletes."""
        self._deletes += 1

    # ------------------------------------------------------------------ instrumentation

    def instrument(self, sched: Scheduler) -> None:
        """Record ``sched``'s attempts, algorithm, extension points and (sampled) plugins;
        export its queue and cache sizes at scrape time. The scheduler and its frameworks
        report to this object (they wrap their plugins' calls for it once, here)."""
        self._sched = sched
        sched.observer = self
        sched.recorder = _ChainRecorder(sched.recorder, self)
        for fwk in sched.profiles.values():
            fwk.set_observer(self)
        self.registry.register(_QueueCollector(sched))

    # the scheduler's hooks

    def popped(self, qpi: Any) -> None:
        uid = qpi.pod.uid
        self._starts[uid] = time.perf_counter()
        self._qpis[uid] = (qpi.attempts, qpi.initial_attempt_timestamp)

    def algorithm_done(self, seconds: float) -> None:
        self.algorithm_duration.observe(seconds)

    # the frameworks' hooks (framework.observer.Observer)

    def sample_cycle(self) -> bool:
        self._cycles += 1
        return self._cycles % self.plugin_sample_every == 0

    def point_started(self, point: str) -> None:
        if point == "PostFilter":
            self.preemption_attempts.inc()
            self._deletes_before = self._deletes

    def point_done(self, point: str, profile: str, status: str, seconds: float) -> None:
        self.extension_point_duration.labels(point, status, profile).observe(seconds)
        if point == "PostFilter":
            victims = self._deletes - self._deletes_before
            if victims:
                self.preemption_victims.observe(victims)

    def plugin_done(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self.plugin_duration.labels(plugin, point, status).observe(seconds)

    # ------------------------------------------------------------------ recorder side

    def attempt(self, pod: Any, result: str, node: str | None, message: str | None) -> None:
        uid = pod.uid
        t0 = self._starts.pop(uid, None)
        seconds = time.perf_counter() - t0 if t0 is not None else 0.0
        self.observe_attempt(result, pod.spec.scheduler_name, seconds)
        info = self._qpis.pop(uid, None)
        if result == "scheduled" and info is not None:
            attempts, initial = info
            self.pod_attempts.observe(attempts)
            sched = self._sched
            if initial is not None and sched is not None:
                label = str(attempts) if attempts < 15 else "15+"
                self.sli_duration.labels(label).observe(max(0.0, sched.clock.now() - initial))

    # ------------------------------------------------------------------ exposition

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _ChainRecorder:
    """Forwards attempts to the scheduler's own recorder (if any), then to the metrics."""

    def __init__(self, first: Any, metrics: SchedulerMetrics) -> None:
        self.first = first
        self.metrics = metrics

    def attempt(self, pod: Any, result: str, node: str | None, message: str | None) -> None:
        if self.first is not None:
            self.first.attempt(pod, result, node, message)
        self.metrics.attempt(pod, result, node, message)


class _QueueCollector:
    """pending_pods{queue}, unschedulable_pods{plugin,profile} and the cache sizes, read at
    scrape time."""

    def __init__(self, sched: Scheduler) -> None:
        self.sched = sched

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Any:
        from prometheus_client.core import GaugeMetricFamily

        sched = self.sched
        lock = getattr(sched, "lock", None)
        if lock is not None:
            lock.acquire()
        try:
            counts = sched.queue.pending_counts()
            unsched: dict[tuple[str, str], int] = {}
            for qpi in sched.queue.unschedulable_pods():
                for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                    k = (plugin, qpi.pod.spec.scheduler_name)
                    unsched[k] = unsched.get(k, 0) + 1
            cache = sched.cache
            n_nodes = sum(1 for ni in cache.nodes.values() if ni.node is not None)
            n_pods = len(cache.pod_states)
            n_assumed = sum(1 for st in cache.pod_states.values() if st.assumed)
        finally:
            if lock is not None:
                lock.release()
        g = GaugeMetricFamily(f"{NAMESPACE}_pending_pods",
                              "Number of pending pods, by the queue type. 'active' means "
                              "number of pods in activeQ; 'backoff' means number of pods in "
                              "backoffQ; 'unschedulable' means number of pods in "
                              "unschedulablePods that the scheduler attempted to schedule "
                              "and failed; 'gated' is the number of unschedulable pods that "
                              "the scheduler never attempted to schedule because they are "
                              "gated.", labels=["queue"])
        for q in ("active", "backoff", "unschedulable", "gated"):
            g.add_metric([q], counts.get(q, 0))
        yield g
        u = GaugeMetricFamily(f"{NAMESPACE}_unschedulable_pods",
                              "The number of unschedulable pods broken down by plugin name. A "
                              "pod will increment the gauge for all plugins that caused it to "
                              "not schedule and so this metric have meaning only when broken "
                              "down by plugin.", labels=["plugin", "profile"])
        for (plugin, profile), n in sorted(unsched.items()):
            u.add_metric([plugin, profile], n)
        yield u
        c = GaugeMetricFamily(f"{NAMESPACE}_scheduler_cache_size",
                              "Number of nodes, pods, and assumed (bound) pods in the "
                              "scheduler cache.", labels=["type"])
        c.add_metric(["nodes"], n_nodes)
        c.add_metric(["pods"], n_pods)
        c.add_metric(["assumed_pods"], n_assumed)
        yield c
