"""Run scheduler_perf-shaped workloads in-process on the simulator.

A workload (``bench.workloads``) runs in two phases, as scheduler_perf's ops do:

1. **setup and init**: nodes are added, the init pods are created and scheduled to completion
   on the simulator's virtual clock (not measured);
2. **measured**: the measured pods are created at once and the scheduler runs until all of
   them are bound. In this phase the virtual clock follows the wall clock (so backoffs,
   the 1-s backoff flush and the 30-s unschedulable flush happen in real time, as for a real
   scheduler), churn objects are injected on wall-clock ticks, bindings are applied inline.
   A steady-state op (SteadyStateClusterResourceClaimTemplate) instead keeps a batch of
   pods coming for a fixed wall time: each batch is deleted once scheduled and the next
   created (``SteadyState``).

Measurement, as scheduler_perf's ``throughputCollector``: every 1 s of wall time the number of
bound measured pods is sampled; the first sample with pods bound is the baseline, intervals
without progress are skipped and the next rate is recorded once per interval covered; the
summary is the average and percentiles (``sorted[ceil(n·p/100) − 1]``) of those samples. On top
of that every ``schedule_one`` call that pops a measured pod is timed (scheduling-attempt
latency, binding included), and the workload's peak RSS is reported. Each workload runs in a
forked child process when possible, so peak RSS and the heap are its own.
"""

from __future__ import annotations

import gc
import logging
import math
import os
import resource
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.bench.workloads import (
    CHURN_NODE,
    CHURN_SERVICE,
    WORKLOADS,
    ChurnOp,
    Workload,
    churn_node,
    churn_service,
    make_pod,
    node_default,
    node_with_dra_test_driver,
)

SAMPLE_INTERVAL = 1.0  # scheduler_perf's throughputSampleInterval
BACKOFF_FLUSH_INTERVAL = 1.0  # upstream flushBackoffQCompleted period
LEFTOVER_FLUSH_INTERVAL = 30.0  # upstream flushUnschedulablePodsLeftover period
DEFAULT_TIMEOUT = 600.0  # measured-phase wall-time limit (scheduler_perf waits 10 minutes)
NEEDS_PREEMPTION = "needs DefaultPreemption"

#: progress callback: (phase, done, total, last throughput sample or None)
Progress = Callable[[str, int, int, float | None], None]


# ---------------------------------------------------------------------------- statistics


def percentile(sorted_vals: list[float], p: float) -> float:
    """scheduler_perf's percentile: ``sorted[ceil(n·p/100) − 1]`` (0 for no values)."""
    if not sorted_vals:
        return 0.0
    k = max(0, math.ceil(len(sorted_vals) * p / 100) - 1)
    return sorted_vals[k]


@dataclass
class ThroughputCollector:
    """scheduler_perf's ``throughputCollector``: call :meth:`tick` every sample interval with
    the wall time and the number of measured pods bound so far."""

    samples: list[float] = field(default_factory=list)
    started: bool = False
    last_count: int = 0
    last_time: float = 0.0
    skipped: int = 0

    def tick(self, now: float, scheduled: int) -> float | None:
        """Record one tick; returns the throughput recorded (None: no sample this tick)."""
        if scheduled == 0:
            return None
        if not self.started:  # the first sample is likely an outlier: a baseline only
            self.started = True
            self.last_count, self.last_time = scheduled, now
            return None
        new = scheduled - self.last_count
        if new == 0:  # no progress: wait for the next pod instead of recording 0 pods/s
            self.skipped += 1
            return None
        throughput = new / (now - self.last_time)
        self.samples.extend([throughput] * (self.skipped + 1))
        self.last_count, self.last_time, self.skipped = scheduled, now, 0
        return throughput

    def summary(self) -> dict[str, float] | None:
        """Average, Perc50/90/95/99 of the samples (None: nothing was sampled)."""
        if not self.samples:
            return None
        s = sorted(self.samples)
        return {"Average": sum(s) / len(s), "Perc50": percentile(s, 50),
                "Perc90": percentile(s, 90), "Perc95": percentile(s, 95),
                "Perc99": percentile(s, 99)}


class Ticker:
    """A Go ``time.Ticker`` polled from a loop: due every ``interval`` from ``start``; a late
    poll sees one tick and the missed ones are dropped."""

    def __init__(self, start: float, interval: float) -> None:
        self.start = start
        self.interval = interval
        self.next = start + interval

    def due(self, now: float) -> bool:
        if now < self.next:
            return False
        k = math.floor((now - self.start) / self.interval) + 1
        self.next = self.start + k * self.interval
        return True


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def preemption_available() -> bool:
    from kubesched.plugins.registry import in_tree_registry

    return "DefaultPreemption" in in_tree_registry()


# ---------------------------------------------------------------------------- the cluster


def build_cluster(w: Workload, *, check: bool = False) -> Any:
    """A SimCluster with the workload's nodes, namespaces and configuration."""
    from kubesched.api.parse import make_namespace, parse_node
    from kubesched.api.scenario import Scenario
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.config import API_VERSION, KIND, default_config, load_config

    plain = w.nodes - (w.dra.nodes if w.dra is not None else 0)
    scenario = Scenario(nodes=[parse_node(node_default(i, w.zone_of(i)))
                               for i in range(plain)])
    if w.dra is not None:
        from kubesched.bench.dra import dra_objects

        scenario.nodes += [parse_node(node_with_dra_test_driver(i)) for i in range(w.dra.nodes)]
        for kind, objs in dra_objects(w.dra, scenario.nodes).items():
            scenario.objects.setdefault(kind, []).extend(objs)
    for ns in w.namespaces:
        scenario.namespaces[ns] = make_namespace(ns)
    if w.percentage_of_nodes_to_score is None:
        config = default_config()
    else:
        config = load_config({"apiVersion": API_VERSION, "kind": KIND,
                              "percentageOfNodesToScore": w.percentage_of_nodes_to_score},
                             f"<{w.name}>")
    sim = SimCluster(scenario, config, check=check)
    if w.dra is not None and w.dra.allocate:
        from kubesched.bench.dra import allocate_claims
        from kubesched.plugins.dynamicresources.plugin import allocator_features

        handle = sim.scheduler.handle
        for ns in w.dra.allocate:
            allocate_claims(handle.objects, scenario.nodes, ns, allocator_features(handle))
    return sim


def make_pods(template: str, count: int, namespace: str, start: int = 0) -> list[Any]:
    from kubesched.api.parse import parse_pod

    return [parse_pod(make_pod(template, start + i, namespace)) for i in range(count)]


def create_pods(sim: Any, w: Workload, template: str, count: int, namespace: str,
                start: int = 0) -> list[Any]:
    """Pods of ``template`` as the API server gets them: with a DRA workload, the
    resourceclaim controller's claims for them are stored first (watchers hear of them)."""
    pods = make_pods(template, count, namespace, start)
    if w.dra is not None:
        from kubesched.api.dra.store import replace_claim
        from kubesched.bench.dra import claims_for_pods

        objects = sim.scheduler.handle.objects
        for claim in claims_for_pods(pods, objects):
            replace_claim(objects, claim)
            sim.scheduler.on_storage_object_add(claim)
    return pods


class Churn:
    """Injects a churn op's objects into the simulator on wall-clock ticks."""

    def __init__(self, sim: Any, op: ChurnOp, start: float) -> None:
        self.sim = sim
        self.op = op
        self.ticker = Ticker(start, op.interval_ms / 1000.0)
        self.live: list[tuple[str, Any]] = []  # recreate mode: what the last tick created
        self.count = 0
        self.created = 0
        self.deleted = 0

    def poll(self, now: float) -> None:
        if not self.ticker.due(now):
            return
        if self.op.mode == "recreate" and self.live:
            for kind, obj in self.live:
                self._delete(kind, obj)
            self.live = []
            return
        made = [self._create(t) for t in self.op.templates]
        if self.op.mode == "recreate":
            self.live = made

    def _create(self, template: str) -> tuple[str, Any]:
        from kubesched.api.parse import parse_meta, parse_node, parse_pod
        from kubesched.api.types import GenericObject

        sim = self.sim
        i = self.count
        self.count += 1
        self.created += 1
        if template == CHURN_NODE:
            node = parse_node(churn_node(i))
            sim.api.add_node(node)
            return "node", node
        if template == CHURN_SERVICE:
            raw = churn_service(i, self.op.namespace)
            svc = GenericObject("Service", parse_meta(raw["metadata"]), raw)
            sim.scheduler.handle.objects.setdefault("Service", []).append(svc)
            return "service", svc
        pod = parse_pod(make_pod(template, i, self.op.namespace))
        sim.add_pending([pod], at=sim.clock.now())
        return "pod", pod

    def _delete(self, kind: str, obj: Any) -> None:
        sim = self.sim
        self.deleted += 1
        if kind == "node":
            # scheduler_perf runs no pod GC: pods bound to the node stay
            sim.api.remove_node(obj.name, pod_gc=False)
        elif kind == "service":
            services = sim.scheduler.handle.objects.get("Service") or []
            if obj in services:
                services.remove(obj)
        else:
            sim.delete_pod(obj, "deleted by churn")


class SteadyState:
    """``createPods`` with ``steadyState``: once every pod of the current batch is scheduled,
    the namespace's pods are deleted (grace period 0: gone at once, their claims released by
    the resourceclaim controller and garbage collector) and a new batch is created."""

    def __init__(self, sim: Any, w: Workload, first: list[Any]) -> None:
        self.sim = sim
        self.w = w
        self.live = [p.uid for p in first]
        self.created = len(first)
        self.pending = len(first)
        self.batches = 1

    def bound(self) -> None:
        self.pending -= 1
        if self.pending:
            return
        sim = self.sim
        # upstream deletes the pods it has seen scheduled through the informer: the
        # bindings' events first (a deletion before them would leave the pod in the cache)
        sim.deliver_due()
        for uid in self.live:
            pod = sim.pods.get(uid)
            if pod is not None:
                sim.delete(pod, "deleted by the steady-state op", force=True)
        op = self.w.measured
        pods = create_pods(sim, self.w, op.template, op.count, op.namespace, self.created)
        self.created += len(pods)
        self.live = [p.uid for p in pods]
        self.pending = len(pods)
        self.batches += 1
        sim.add_pending(pods, at=sim.clock.now())


# ---------------------------------------------------------------------------- one workload


class _Throttle:
    def __init__(self, report: Progress | None, every: float = 0.25) -> None:
        self.report = report
        self.every = every
        self.next = 0.0

    def __call__(self, phase: str, done: int, total: int, rate: float | None = None,
                 *, force: bool = False) -> None:
        if self.report is None:
            return
        now = time.perf_counter()
        if force or now >= self.next:
            self.next = now + self.every
            self.report(phase, done, total, rate)


def run_workload(w: Workload, report: Progress | None = None, *,
                 profile_path: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, check: bool = False) -> dict[str, Any]:
    """Run one workload in this process and return its result record (``check``: with the
    simulator's invariant checker, which raises InvariantViolation)."""
    if w.needs_preemption and not preemption_available():
        return _record(w, status=NEEDS_PREEMPTION)
    progress = _Throttle(report)
    t_setup = time.perf_counter()
    progress("setup", 0, w.nodes, force=True)
    sim = build_cluster(w, check=check)
    sim.load()
    setup_seconds = time.perf_counter() - t_setup

    # init pods: scheduled to completion on the virtual clock
    t_init = time.perf_counter()
    for op in w.init:
        pods = create_pods(sim, w, op.template, op.count, op.namespace)
        base = sim.bound_count
        sim.add_pending(pods, at=sim.clock.now())
        sim.run_until_idle(lambda n, _t, base=base, total=op.count:
                           progress("init", n - base, total))
    init_bound = sim.bound_count
    init_seconds = time.perf_counter() - t_init
    init_pending = w.init_pods - init_bound

    measured = create_pods(sim, w, w.measured.template, w.measured.count, w.measured.namespace)
    gc.collect()
    prof = None
    if profile_path:
        import cProfile

        prof = cProfile.Profile()
    out = _measure(sim, w, measured, progress, prof, timeout)
    if prof is not None and profile_path:
        prof.dump_stats(profile_path)
    return _record(w, setup_seconds=setup_seconds, init_seconds=init_seconds,
                   init_unscheduled=init_pending, events=dict(sim.event_counts), **out)


class _Popped:
    """A SchedulerObserver: the pod the last step popped, and when."""

    def __init__(self) -> None:
        self.qpi: Any = None
        self.at = 0.0

    def popped(self, qpi: Any) -> None:
        self.qpi = qpi
        self.at = time.perf_counter()

    def algorithm_done(self, seconds: float) -> None:
        pass


def _measure(sim: Any, w: Workload, measured: list[Any], progress: _Throttle,
             prof: Any, timeout: float) -> dict[str, Any]:
    """The measured phase, on the simulator's run loop (its steps and its end rule) with
    the virtual clock following the wall clock and upstream's flushes on wall-clock
    tickers."""
    loop = sim.loop
    queue = sim.scheduler.queue
    clock = sim.clock
    api_pods = sim.pods
    step = loop.step
    perf = time.perf_counter
    ns = w.measured.namespace
    total = len(measured)

    popped = _Popped()
    sim.scheduler.observer = popped
    collector = ThroughputCollector()
    latencies: list[float] = []
    scheduled = 0
    last_rate: float | None = None
    status = "ok"
    t0 = perf()
    v0 = clock.now()
    sample = Ticker(t0, SAMPLE_INTERVAL)
    backoff_flush = Ticker(t0, BACKOFF_FLUSH_INTERVAL)
    leftover_flush = Ticker(t0, LEFTOVER_FLUSH_INTERVAL)
    churn = Churn(sim, w.churn, t0) if w.churn is not None else None
    steady = SteadyState(sim, w, measured) if w.steady else None
    duration = w.measured.steady_seconds
    sim.add_pending(measured, at=v0)
    if prof is not None:
        prof.enable()
    try:
        while (perf() - t0 < duration) if steady is not None else scheduled < total:
            now = perf()
            clock.advance_to(v0 + (now - t0))
            if sample.due(now):
                r = collector.tick(now, scheduled)
                if r is not None:
                    last_rate = r
                progress("measure", scheduled, total, last_rate, force=True)
            if churn is not None:
                churn.poll(now)
            if backoff_flush.due(now):
                queue.flush_backoff_completed()
            if leftover_flush.due(now):
                queue.flush_unschedulable_pods_leftover()
            popped.qpi = None
            st = step()
            e = perf()
            q = popped.qpi
            if q is not None and q.pod.metadata.namespace == ns:
                latencies.append(e - popped.at)
                cur = api_pods.get(q.pod.uid)
                if cur is not None and cur.spec.node_name:
                    scheduled += 1
                    if steady is not None:
                        steady.bound()
            if churn is None and loop.over(st):  # churn brings changes no timeline holds
                status = "measured pods left unschedulable"
                break
            if not st.busy:
                if e - t0 > timeout:
                    status = f"timeout after {timeout:g} s"
                    break
                time.sleep(0.0005)
    finally:
        if prof is not None:
            prof.disable()
        sim.scheduler.observer = None
    elapsed = perf() - t0
    progress("measure", scheduled, total, last_rate, force=True)
    lat = sorted(latencies)
    return {
        "status": status, "scheduled": scheduled, "seconds": elapsed,
        "throughput": collector.summary(), "samples": len(collector.samples),
        "attempts": len(latencies),
        "latency_ms": {"p50": percentile(lat, 50) * 1e3, "p99": percentile(lat, 99) * 1e3,
                       "max": (lat[-1] * 1e3) if lat else 0.0,
                       "avg": (sum(lat) / len(lat) * 1e3) if lat else 0.0},
        "churn": None if churn is None else {"created": churn.created,
                                             "deleted": churn.deleted},
        "steady_batches": None if steady is None else steady.batches,
    }


def _record(w: Workload, *, status: str = "ok", **kw: Any) -> dict[str, Any]:
    """The result record of one workload (what ``--results`` writes)."""
    thr = kw.get("throughput")
    seconds = kw.get("seconds", 0.0)
    scheduled = kw.get("scheduled", 0)
    overall = scheduled / seconds if seconds > 0 else 0.0
    status = kw.pop("status", status)
    avg = thr["Average"] if thr else None
    pods_per_second = avg if avg is not None else (overall if scheduled else None)
    verdict = None
    if w.threshold and status == "ok" and pods_per_second is not None:
        verdict = "above" if pods_per_second > w.threshold else "below"
    lat = kw.get("latency_ms") or {}
    r: dict[str, Any] = {
        "workload": w.name, "status": status, "nodes": w.nodes, "init_pods": w.init_pods,
        "measured_pods": w.measured_pods, "scheduled": scheduled,
        "upstream_workload": w.upstream,
        "percentage_of_nodes_to_score": w.percentage_of_nodes_to_score,
        "pods_per_second": _round(pods_per_second),
        "throughput_source": "samples" if avg is not None else "overall",
        "throughput_p50": _round(thr["Perc50"]) if thr else None,
        "throughput_p90": _round(thr["Perc90"]) if thr else None,
        "throughput_p99": _round(thr["Perc99"]) if thr else None,
        "throughput_samples": kw.get("samples", 0),
        "overall_pods_per_second": _round(overall) if scheduled else None,
        "threshold": w.threshold or None, "verdict": verdict,
        "target": w.target or None,
        "target_met": (pods_per_second > w.target) if (w.target and pods_per_second) else None,
        "attempts": kw.get("attempts", 0),
        "attempt_latency_ms_p50": _round(lat.get("p50"), 3),
        "attempt_latency_ms_p99": _round(lat.get("p99"), 3),
        "attempt_latency_ms_max": _round(lat.get("max"), 3),
        "seconds": _round(seconds, 3), "setup_seconds": _round(kw.get("setup_seconds"), 3),
        "init_seconds": _round(kw.get("init_seconds"), 3),
        "init_unscheduled": kw.get("init_unscheduled", 0),
        "churn": kw.get("churn"), "steady_batches": kw.get("steady_batches"),
        "events": kw.get("events"),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    return r


def _round(v: float | None, nd: int = 1) -> float | None:
    return None if v is None else round(v, nd)


# ---------------------------------------------------------------------------- many workloads


def run_isolated(w: Workload, report: Progress | None = None, **kw: Any) -> dict[str, Any]:
    """``run_workload`` in a forked child (its own heap and peak RSS); in-process where fork
    is unavailable."""
    import multiprocessing as mp

    try:
        ctx = mp.get_context("fork")
    except ValueError:
        return run_workload(w, report, **kw)
    parent, child = ctx.Pipe(duplex=False)

    def target() -> None:
        parent.close()
        # the "not implemented yet" warning, once per child: run_bench says it once instead
        logging.getLogger("kubesched.framework.runtime").setLevel(logging.ERROR)

        def send(phase: str, done: int, total: int, rate: float | None) -> None:
            child.send(("progress", phase, done, total, rate))

        try:
            child.send(("result", run_workload(w, send, **kw)))
        except BaseException:
            child.send(("result", _record(w, status="error: " + traceback.format_exc(
                limit=-3).strip().replace("\n", " | "))))
        finally:
            child.close()

    proc = ctx.Process(target=target, name=f"bench {w.name}")
    proc.start()
    child.close()
    result: dict[str, Any] | None = None
    try:
        while result is None:
            try:
                msg = parent.recv()
            except EOFError:
                break
            if msg[0] == "progress":
                if report is not None:
                    report(*msg[1:])
            else:
                result = msg[1]
    finally:
        if result is None and proc.is_alive():
            proc.terminate()
        proc.join()
        parent.close()
    if result is None:
        result = _record(w, status=f"error: benchmark process exited with {proc.exitcode}")
    return result


def run_workloads(workloads: list[Workload], report: Callable[[Workload, str, int, int,
                                                                 float | None], None]
                  | None = None, *, isolate: bool = True, profile_dir: str | None = None,
                  done: Callable[[dict[str, Any]], None] | None = None,
                  ) -> list[dict[str, Any]]:
    out = []
    for w in workloads:
        prof = None
        if profile_dir:
            os.makedirs(profile_dir, exist_ok=True)
            prof = os.path.join(profile_dir, w.name.replace("/", "_") + ".prof")
        rep = None if report is None else (
            lambda phase, d, t, r, w=w: report(w, phase, d, t, r))
        run = run_isolated if isolate else run_workload
        r = run(w, rep, profile_path=prof)
        out.append(r)
        if done is not None:
            done(r)
    return out


__all__ = ["WORKLOADS", "ThroughputCollector", "Ticker", "percentile", "run_workload",
           "run_workloads"]
