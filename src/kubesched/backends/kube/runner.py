"""``kubesched run``: the scheduler core driven by a live API server.

Threads, as kube-scheduler's goroutines:

* one informer per watched resource (``resources.WATCHED``) feeding the core's ``on_*``
  handlers under the scheduler's lock (every instance, leader or not: a standby keeps a
  warm cache, unless ``delayCacheUntilActive``);
* the scheduling loop (the leader only): ``schedule_one`` under the lock, the backoff flush
  every second and the unschedulable-leftover flush every 30 s, sleeping on a condition
  the informers notify;
* binding cycles on a thread pool (``Scheduler.binding_runner``): PreBind and Bind run
  without the lock, concurrently with scheduling;
* writer threads for status patches, events and deletes; leader election; the health and
  metrics server.

Shutdown (SIGTERM, SIGINT, or the lease lost): scheduling stops after the cycle in hand;
binding cycles in flight finish (their retries stop at the shutdown deadline); queued
writes are flushed; the lease is released; exit status 0 (1 when the lease was lost, as
kube-scheduler exits on "leaderelection lost").
"""

from __future__ import annotations

import copy
import logging
import random
import signal
import socket
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.dra.store import dra_index, remove_claim, replace_claim
from kubesched.api.storage import STORAGE_KINDS, note_storage_change
from kubesched.api.types import Pod
from kubesched.backends.kube.backend import EventRecorder, KubeBackend, Writer
from kubesched.backends.kube.client import KubeClient
from kubesched.backends.kube.informer import Informer
from kubesched.backends.kube.leader import LeaderElectionConfig, LeaderElector
from kubesched.backends.kube.resources import ResourceSpec, watched
from kubesched.backends.kube.server import HealthServer
from kubesched.clock import RealClock
from kubesched.config import SchedulerConfiguration, parse_duration
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ASSIGNED_POD_DELETE, ActionType
from kubesched.metrics import SchedulerMetrics
from kubesched.scheduler import Scheduler

log = logging.getLogger("kubesched.kube")

DEFAULT_LEASE_NAME = "kubesched"
UPSTREAM_LEASE_NAME = "kube-scheduler"
BACKOFF_FLUSH = 1.0
LEFTOVER_FLUSH = 30.0


@dataclass
class RunOptions:
    config: SchedulerConfiguration
    kubeconfig: str | None = None
    context: str | None = None
    dry_run: bool = False
    shadow: str | None = None
    address: str = "0.0.0.0:10259"
    qps: float | None = None
    burst: int | None = None
    leader_elect: bool | None = None
    lease_name: str | None = None
    lease_namespace: str | None = None
    # whether the configuration file named leaderElection.resourceName itself
    lease_name_from_config: bool = False
    identity: str | None = None
    request_timeout: float = 30.0
    shutdown_timeout: float = 30.0
    binding_workers: int = 32
    seed: int | None = None
    install_signals: bool = True
    min_watch_timeout: float = 300.0


def default_identity() -> str:
    """``hostname_<uuid>``, as kube-scheduler names itself in the lease."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _seconds(v: Any) -> float:
    return parse_duration(v) if isinstance(v, str) else float(v)


def leader_election_config(opts: RunOptions) -> LeaderElectionConfig:
    """The configuration's leaderElection fields as upstream reads them; the lease name
    defaults to ``kubesched`` (never the cluster's own ``kube-scheduler`` lease) unless the
    configuration or the command line names one."""
    le = opts.config.leader_election
    name = le.get("resourceName") or DEFAULT_LEASE_NAME
    if name == UPSTREAM_LEASE_NAME and not opts.lease_name_from_config:
        name = DEFAULT_LEASE_NAME
    return LeaderElectionConfig(
        name=opts.lease_name or name,
        namespace=opts.lease_namespace or le.get("resourceNamespace") or "kube-system",
        identity=opts.identity or default_identity(),
        lease_duration=_seconds(le.get("leaseDuration", "15s")),
        renew_deadline=_seconds(le.get("renewDeadline", "10s")),
        retry_period=_seconds(le.get("retryPeriod", "2s")),
    )


class _DecisionLog:
    """The scheduler's Recorder on a cluster: logs decisions, counts them."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def attempt(self, pod: Pod, result: str, node: str | None, message: str | None) -> None:
        self.counts[result] += 1
        if result == "scheduled":
            log.info("Successfully bound pod to node", extra={"kv": {
                "pod": pod.key, "node": node}})
        else:
            log.info("Unable to schedule pod; waiting", extra={"kv": {
                "pod": pod.key, "result": result, "err": message}})


class KubeRunner:
    def __init__(self, opts: RunOptions, client: KubeClient | None = None) -> None:
        self.opts = opts
        cc = opts.config.client_connection
        qps = float(opts.qps if opts.qps is not None else cc.get("qps", 50.0))
        burst = int(opts.burst if opts.burst is not None else cc.get("burst", 100))
        self.client = client or KubeClient.load(
            opts.kubeconfig or cc.get("kubeconfig") or None, context=opts.context, qps=qps,
            burst=burst, request_timeout=opts.request_timeout)
        self.metrics = SchedulerMetrics()
        self.writer = Writer()
        self.events = EventRecorder(self.client.with_own_limiter(), self.writer)
        self.backend = KubeBackend(self.client, dry_run=opts.dry_run, writer=self.writer,
                                   events=self.events, bind_timeout=opts.request_timeout,
                                   metrics=self.metrics)
        self.decisions = _DecisionLog()
        seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
        self.sched = Scheduler(self.backend, RealClock(), opts.config, seed=seed,
                               recorder=self.decisions)
        self.sched.binding_runner = self._run_binding
        self.metrics.instrument(self.sched)
        h = self.sched.handle
        # the gang and DRA kinds at the versions the configured release serves
        self.watched = watched(h.kubernetes_version)
        h.objects = {spec.kind: [] for spec in self.watched
                     if spec.kind not in ("Pod", "Node", "Namespace")}
        # upstream's assume cache for ResourceClaims: the claims DynamicResources wrote at
        # PreBind, by key -> the resourceVersion the write returned. The informer's copies
        # older than that are not stored, so an allocation never looks undone (its devices
        # free) between the write and the watch event that reports it.
        self._assumed_claims: dict[str, int] = {}
        self.backend.claim_written = self._assume_claim
        h.namespaces = {}
        self.cond = threading.Condition(self.sched.lock)
        self.stop_requested = threading.Event()
        self.stopping = threading.Event()
        self.exit_code = 0
        self.executor = ThreadPoolExecutor(max_workers=opts.binding_workers,
                                           thread_name_prefix="binding")
        self._inflight = 0
        self._inflight_cv = threading.Condition()
        self.informers = [Informer(self.client, spec, self,
                                   min_watch_timeout=opts.min_watch_timeout)
                          for spec in self.watched]
        self._informers_started = False
        self._sched_thread: threading.Thread | None = None
        self.shadow: Counter[str] = Counter()
        self._decode_events: set[tuple[str, str]] = set()
        le_on = opts.config.leader_election.get("leaderElect", True)
        if opts.leader_elect is not None:
            le_on = opts.leader_elect
        self.elector: LeaderElector | None = None
        if le_on and not opts.dry_run:
            self.elector = LeaderElector(
                self.client, leader_election_config(opts),
                on_started_leading=self._on_started_leading,
                on_stopped_leading=self._on_stopped_leading)
        self.server: HealthServer | None = None
        if opts.address:
            self.server = HealthServer(
                opts.address,
                healthz={"ping": lambda: None, "leaderElection": self._leader_check},
                readyz={"informer-sync": self._sync_check, "shutdown": self._shutdown_check},
                metrics=self.metrics.render)

    # ------------------------------------------------------------------ checks

    def _leader_check(self) -> str | None:
        if self.elector is None or self.elector.healthy():
            return None
        return "the lease has not been renewed in time"

    def _sync_check(self) -> str | None:
        waiting = [i.spec.plural for i in self.informers if not i.synced.is_set()]
        return None if not waiting else f"caches not synced: {', '.join(waiting)}"

    def _shutdown_check(self) -> str | None:
        return "process is shutting down" if self.stop_requested.is_set() else None

    @property
    def leading(self) -> bool:
        return self.elector is None or self.elector.leading

    # ------------------------------------------------------------------ informer handlers

    def on_add(self, spec: ResourceSpec, obj: Any) -> None:
        with self.cond:
            try:
                kind = spec.kind
                if kind == "Pod":
                    self.sched.on_pod_add(obj)
                elif kind == "Node":
                    self.sched.on_node_add(obj)
                elif kind == "Namespace":
                    self.sched.handle.namespaces[obj.metadata.name] = obj
                else:
                    self._store(spec, None, obj)
            except Exception:
                log.exception("handling %s add of %s", spec.kind, _name(obj))
            self.cond.notify_all()

    def on_update(self, spec: ResourceSpec, old: Any, new: Any) -> None:
        with self.cond:
            try:
                kind = spec.kind
                if kind == "Pod":
                    if (self.opts.shadow and not old.spec.node_name and new.spec.node_name
                            and new.spec.scheduler_name == self.opts.shadow):
                        self._shadow_evaluate(new)
                    self.sched.on_pod_update(old, new)
                elif kind == "Node":
                    self.sched.on_node_update(old, new)
                elif kind == "Namespace":
                    self.sched.handle.namespaces[new.metadata.name] = new
                else:
                    self._store(spec, old, new)
            except Exception:
                log.exception("handling %s update of %s", spec.kind, _name(new))
            self.cond.notify_all()

    def on_delete(self, spec: ResourceSpec, obj: Any) -> None:
        with self.cond:
            try:
                kind = spec.kind
                if kind == "Pod":
                    cache = self.sched.cache
                    self.sched.on_pod_delete(obj)
                    if not obj.spec.node_name and self.opts.dry_run:
                        assumed = cache.get_pod(obj.uid)
                        if assumed is not None and cache.is_assumed(assumed):
                            # "bound" by the dry run only: its room is free again
                            cache.forget_pod(assumed)
                            self.sched.queue.move_all_to_active_or_backoff(
                                ASSIGNED_POD_DELETE, assumed, None)
                elif kind == "Node":
                    self.sched.on_node_delete(obj)
                elif kind == "Namespace":
                    self.sched.handle.namespaces.pop(obj.metadata.name, None)
                else:
                    self._store(spec, obj, None)
            except Exception:
                log.exception("handling %s delete of %s", spec.kind, _name(obj))
            self.cond.notify_all()

    def on_decode_error(self, spec: ResourceSpec, raw: dict[str, Any], err: Exception) -> None:
        raw_md = raw.get("metadata")
        md: dict[str, Any] = raw_md if isinstance(raw_md, dict) else {}
        name = f"{md.get('namespace')}/{md.get('name')}" if md.get("namespace") else \
            str(md.get("name"))
        log.warning("skipping %s %s: cannot decode it: %s", spec.kind, name, err,
                    extra={"kv": {"kind": spec.kind, "object": name}})
        if spec.kind != "Pod":
            return
        raw_spec = raw.get("spec")
        spec_raw: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
        sname = spec_raw.get("schedulerName") or "default-scheduler"
        if spec_raw.get("nodeName") or sname not in self.sched.profiles or not self.leading:
            return
        key = (str(md.get("uid") or name), str(md.get("resourceVersion") or ""))
        if key in self._decode_events:
            return
        self._decode_events.add(key)
        self.backend.record_raw_event(raw, sname, "Warning", "FailedScheduling",
                                      f"the pod cannot be read: {err}")

    def _store(self, spec: ResourceSpec, old: Any, new: Any) -> None:
        """handle.objects (the other informers' listers), then the queue told of it."""
        kind = spec.kind
        objects = self.sched.handle.objects
        if kind == "ResourceClaim":
            if not self._store_claim(old, new):
                return
        else:
            lst = objects.setdefault(kind, [])
            # by identity: the informer hands back the object it gave us, and two API groups
            # share a kind (scheduler-plugins' and upstream's PodGroup)
            i = next((i for i, o in enumerate(lst) if o is old), None) \
                if old is not None else None
            if i is None:
                if new is not None:
                    lst.append(new)
            elif new is None:
                del lst[i]
            else:
                lst[i] = new
            if kind in _DRA_INDEXED:
                # the DRA index is keyed on the lists' identity and length: a new list
                objects[kind] = list(lst)
        note_storage_change()
        if kind in STORAGE_KINDS:
            if old is None:
                self.sched.on_storage_object_add(new)
            elif new is None:
                self.sched.on_storage_object_delete(old)
            else:
                self.sched.on_storage_object_update(old, new)
        elif spec.event_resource:
            action = (ActionType.ADD if old is None else ActionType.DELETE if new is None
                      else ActionType.UPDATE)
            self.sched.on_object_event(spec.event_resource, action, old, new)

    def _store_claim(self, old: Any, new: Any) -> bool:
        """A ResourceClaim from the informer, through the assume cache; False when it is
        older than the one DynamicResources wrote (kept, and nobody told)."""
        objects = self.sched.handle.objects
        if new is None:
            self._assumed_claims.pop(old.key, None)
            remove_claim(objects, old)
            return True
        assumed = self._assumed_claims.get(new.key)
        if assumed is not None:
            rv = _int_rv(new)
            if rv is not None and rv < assumed:
                return False
            del self._assumed_claims[new.key]
        replace_claim(objects, new)
        return True

    def _assume_claim(self, claim: Any) -> None:
        """The backend wrote ``claim``'s status (PreBind, Unreserve, PostFilter): what the API
        server answered is stored at once (upstream's AssumeClaimAfterAPICall)."""
        # a dry run writes nothing: its "allocation" stays, whatever the informer says, until
        # the claim goes away (as a dry run's assumed pods)
        rv = _DRY_RUN_RV if self.opts.dry_run else _int_rv(claim)
        with self.cond:
            cur = dra_index(self.sched.handle.objects).claim(claim.namespace, claim.name)
            if cur is not None and cur.uid != claim.uid:
                return  # replaced meanwhile: the informer knows better
            cur_rv = _int_rv(cur) if cur is not None else None
            if rv is None or (cur_rv is not None and cur_rv >= rv):
                return
            replace_claim(self.sched.handle.objects, claim)
            self._assumed_claims[claim.key] = rv

    # ------------------------------------------------------------------ shadow

    def _shadow_evaluate(self, bound: Pod) -> None:
        """Would kubesched have put ``bound`` (just bound by the shadowed scheduler) on the
        same node? Evaluated against the cluster as cached, before the binding is applied:
        every node filtered and scored; "agree" when the node is among the top-scoring."""
        sched = self.sched
        fwk = sched.profiles.get(bound.spec.scheduler_name) or next(iter(
            sched.profiles.values()))
        pod = copy.copy(bound)
        pod.spec = copy.copy(bound.spec)
        pod.spec.node_name = ""
        try:
            sched.cache.update_snapshot(sched.snapshot)
            result = "unschedulable"
            chosen: list[str] = []
            if sched.snapshot.num_nodes:
                state = CycleState()
                found = sched.find_nodes_that_fit(fwk, state, pod, exhaustive=True)
                if len(found.feasible):
                    scores = sched.prioritize_nodes(fwk, state, pod, found.feasible)
                    totals = scores.totals
                    top = found.feasible[np.flatnonzero(totals == totals.max())]
                    names = sched.snapshot.table.names
                    chosen = sorted(names[int(i)] for i in top)
                    result = "agree" if bound.spec.node_name in chosen else "disagree"
        except Exception as e:
            log.warning("shadow evaluation of %s failed: %s", bound.key, e)
            result = "error"
        self.shadow[result] += 1
        self.metrics.shadow_evaluations.labels(self.opts.shadow, result).inc()
        log.info("shadow evaluation", extra={"kv": {
            "pod": bound.key, "scheduler": self.opts.shadow, "node": bound.spec.node_name,
            "kubesched": chosen, "result": result}})

    # ------------------------------------------------------------------ scheduling

    def _run_binding(self, fn: Any) -> None:
        with self._inflight_cv:
            self._inflight += 1

        def task() -> None:
            try:
                fn()
            except Exception:
                log.exception("binding cycle failed")
            finally:
                with self._inflight_cv:
                    self._inflight -= 1
                    self._inflight_cv.notify_all()
                with self.cond:
                    self.cond.notify_all()

        self.executor.submit(task)

    @property
    def bindings_in_flight(self) -> int:
        with self._inflight_cv:
            return self._inflight

    def _schedule_loop(self) -> None:
        sched = self.sched
        q = sched.queue
        if not self._wait_synced():
            return
        log.info("scheduling", extra={"kv": {"profiles": list(sched.profiles),
                                             "dryRun": self.opts.dry_run}})
        next_backoff = time.monotonic()
        next_leftover = time.monotonic() + LEFTOVER_FLUSH
        while not self.stopping.is_set():
            did = False
            with self.cond:
                if self.stopping.is_set():
                    break
                now = time.monotonic()
                if now >= next_backoff:
                    q.flush_backoff_completed()
                    next_backoff = now + BACKOFF_FLUSH
                if now >= next_leftover:
                    q.flush_unschedulable_pods_leftover()
                    next_leftover = now + LEFTOVER_FLUSH
                try:
                    did = sched.schedule_one()
                except Exception:
                    log.exception("scheduling cycle failed")
                if not did:
                    self.cond.wait(max(0.005, min(next_backoff, next_leftover)
                                       - time.monotonic()))
            if did:
                time.sleep(0)  # let informers and binding cycles take the lock

    def _wait_synced(self) -> bool:
        for inf in self.informers:
            while not inf.synced.wait(0.1):
                if self.stopping.is_set():
                    return False
        return True

    def _start_informers(self) -> None:
        if self._informers_started:
            return
        self._informers_started = True
        for inf in self.informers:
            inf.start()

    def _start_scheduling(self) -> None:
        self._sched_thread = threading.Thread(target=self._schedule_loop, name="scheduler",
                                              daemon=True)
        self._sched_thread.start()

    def _on_started_leading(self) -> None:
        if self.stop_requested.is_set():
            return
        self._start_informers()
        self._start_scheduling()

    def _on_stopped_leading(self, lost: bool) -> None:
        if lost and not self.stop_requested.is_set():
            log.error("leaderelection lost")
            self.exit_code = 1
            self.backend.give_up.set()  # another instance schedules now
            self.request_stop()

    # ------------------------------------------------------------------ the run

    def request_stop(self) -> None:
        self.stop_requested.set()

    def start(self) -> KubeRunner:
        """Start everything in background threads (``run`` = start + wait + shutdown)."""
        opts = self.opts
        if self.server is not None:
            self.server.start()
            log.info("serving healthz, readyz and metrics", extra={"kv": {
                "address": f"http://{self.server.host}:{self.server.port}"}})
        log.info("kubesched starting", extra={"kv": {
            "server": self.client.description, "dryRun": opts.dry_run,
            "shadow": opts.shadow or "", "profiles": list(self.sched.profiles),
            "qps": self.client.limiter.qps, "burst": self.client.limiter.burst}})
        if not opts.config.delay_cache_until_active or self.elector is None:
            self._start_informers()
        if self.elector is not None:
            self.elector.start()
        else:
            self._start_scheduling()
        return self

    def run(self) -> int:
        if self.opts.install_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.request_stop())
        self.start()
        next_refresh = time.monotonic() + 60.0
        while not self.stop_requested.wait(1.0):
            if time.monotonic() >= next_refresh:
                self.events.refresh()
                next_refresh = time.monotonic() + 60.0
        return self.shutdown()

    def shutdown(self) -> int:
        self.stop_requested.set()
        log.info("shutting down", extra={"kv": {"bindingsInFlight": self.bindings_in_flight}})
        deadline = time.monotonic() + self.opts.shutdown_timeout
        self.stopping.set()
        with self.cond:
            self.cond.notify_all()
        if self._sched_thread is not None:
            self._sched_thread.join(max(1.0, deadline - time.monotonic()))
        with self._inflight_cv:
            while self._inflight and time.monotonic() < deadline:
                self._inflight_cv.wait(deadline - time.monotonic())
            if self._inflight:
                log.warning("shutdown deadline: giving up retries of %d binding(s)",
                            self._inflight)
                self.backend.give_up.set()
                grace = time.monotonic() + self.opts.request_timeout + 1
                while self._inflight and time.monotonic() < grace:
                    self._inflight_cv.wait(grace - time.monotonic())
        self.executor.shutdown(wait=False, cancel_futures=False)
        self.events.refresh()
        left = self.writer.close(max(2.0, deadline - time.monotonic()))
        if left:
            log.warning("shutdown: %d status/event writes left undone", left)
        if self.elector is not None:
            self.elector.stop()
            self.elector.join(self.opts.request_timeout)
        for inf in self.informers:
            inf.stop()
        if self.server is not None:
            self.server.stop()
        self._summaries()
        if self.backend.unknown_outcomes:
            log.error("bindings whose outcome is unknown at exit",
                      extra={"kv": {"pods": self.backend.unknown_outcomes}})
        log.info("shutdown complete", extra={"kv": {
            "bound": self.backend.bound, "bindRetries": self.backend.bind_retries,
            "bindingsInFlight": self.bindings_in_flight, "exitCode": self.exit_code}})
        return self.exit_code

    def _summaries(self) -> None:
        if self.opts.dry_run:
            d = self.backend.decisions
            log.info("dry-run summary", extra={"kv": {
                "wouldBind": d.get("bind", 0),
                "unschedulable": d.get("event:FailedScheduling", 0),
                "wouldPreempt": d.get("preempt", 0)}})
        if self.opts.shadow:
            n = sum(self.shadow.values())
            agree = self.shadow.get("agree", 0)
            pct = f"{100.0 * agree / n:.1f}%" if n else "n/a"
            log.info("shadow summary", extra={"kv": {
                "scheduler": self.opts.shadow, "evaluated": n, "agree": agree,
                "disagree": self.shadow.get("disagree", 0),
                "unschedulable": self.shadow.get("unschedulable", 0),
                "errors": self.shadow.get("error", 0), "agreement": pct}})


_DRY_RUN_RV = 1 << 62
_DRA_INDEXED = frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule"})


def _int_rv(obj: Any) -> int | None:
    """A resourceVersion as a number (the assume cache compares them, as upstream's does;
    opaque by contract, etcd's revision in practice)."""
    try:
        return int(obj.metadata.resource_version)
    except (TypeError, ValueError, AttributeError):
        return None


def _name(obj: Any) -> str:
    md = getattr(obj, "metadata", None)
    if md is None:
        return "?"
    return f"{md.namespace}/{md.name}" if md.namespace else md.name


def run(opts: RunOptions) -> int:
    """The ``kubesched run`` entry point (the CLI sets up logging first)."""
    return KubeRunner(opts).run()
