"""The Backend the scheduler core writes through on a real cluster.

* ``bind`` — the ``pods/binding`` subresource, called from the (asynchronous) binding cycle.
  A 409 is not taken on trust: kube-apiserver answers 409 to any storage error under a
  binding (an etcd failure included, when the write may have landed), so the pod is read —
  bound to the target: success; bound elsewhere, deleted or replaced: a refusal
  (``BindError``, the core forgets the assumed pod and requeues it); unreadable: the outcome
  is unknown, retried; still unbound: retried to the same node a few times
  (``BIND_CONFLICT_RETRIES``), then a refusal. 404 and other 4xx are refusals. An error that
  leaves the outcome unknown (no answer, a cut connection, a timeout, a 5xx) or a 429 is
  retried with backoff — always to the same node, never another. Retries stop at a definite
  answer; at the shutdown deadline; or once the server has kept answering without a
  definite answer for longer than its own request timeout (``UNKNOWN_SETTLE``) — then the
  pod itself says whether the binding landed.
* ``update_pod_status`` — a strategic-merge patch of ``pods/status`` (PodScheduled
  condition, ``nominatedNodeName``), only when something changes, as upstream's updatePod.
* ``record_event`` — events.k8s.io/v1 Events (``Scheduled``, ``FailedScheduling``,
  ``Preempted``); repeats of the same event become a series, as client-go's recorder does.
* ``delete_pod`` — preemption victims: a ``DisruptionTarget`` condition, then the delete
  (UID precondition); the victim's ``Preempted`` event is the evaluator's ``record_event``.

Status patches, events and deletes are queued to writer threads (ordered per pod,
retried on transient errors) so the scheduling cycle never waits on the network; a binding
waits for the writes queued for its pod before it (an earlier failure's status).
``dry_run``: nothing is written at all; bindings are logged and counted.
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.types import Pod, PodCondition
from kubesched.backends.kube.client import ApiError, KubeClient
from kubesched.backends.kube.resources import EVENTS, PODS
from kubesched.framework.backend import BindError

log = logging.getLogger("kubesched.kube.backend")

EVENT_ACTIONS = {"Scheduled": "Binding", "FailedScheduling": "Scheduling",
                 "Preempted": "Preempting"}
SERIES_WINDOW = 6 * 60.0      # an isomorphic event within this joins the series
SERIES_REFRESH = 60.0         # how often grown series counts are written
NOTE_LIMIT = 1024
BIND_RETRY_CAP = 2.0          # seconds between binding retries, at most (from 0.1 doubling)
# After this long with answers but no definite one, a lost write of ours can no longer land
# (kube-apiserver's own request timeout is 60 s): the pod is read, and if it is not bound
# there the binding fails (forget, requeue) instead of being retried for ever.
UNKNOWN_SETTLE = 60.0
# A 409 while the pod reads back unbound: retried (same node) this many times before the
# refusal stands and the pod is forgotten and requeued
BIND_CONFLICT_RETRIES = 3
# How long a binding waits for the pod's status writes queued before it (see bind)
WRITES_BEFORE_BIND = 10.0
GONE = "\x00gone"  # _where's answer for a pod deleted or replaced (no node has this name)


def micro_time(t: float | None = None) -> str:
    """metav1.MicroTime: RFC3339 with microseconds."""
    d = dt.datetime.fromtimestamp(time.time() if t is None else t, dt.UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(t: float | None = None) -> str:
    d = dt.datetime.fromtimestamp(time.time() if t is None else t, dt.UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


class Writer:
    """Worker threads for API writes; the tasks of one key (a pod) run in order on one
    worker. A task that fails with a retryable error is retried with backoff (up to
    ``attempts``); others are logged and dropped."""

    def __init__(self, workers: int = 4, attempts: int = 5) -> None:
        self.attempts = attempts
        self._queues: list[queue.Queue[Any]] = [queue.Queue() for _ in range(workers)]
        self._threads = [threading.Thread(target=self._work, args=(q,), daemon=True,
                                          name=f"writer-{i}")
                         for i, q in enumerate(self._queues)]
        self._closing = threading.Event()
        self._abandon = threading.Event()
        self._by_key: Counter[str] = Counter()  # tasks submitted and not finished, per key
        self._settled = threading.Condition()
        self.done = 0
        self.failed = 0
        for t in self._threads:
            t.start()

    def submit(self, key: str, what: str, fn: Callable[[], None]) -> None:
        if self._closing.is_set() and self._abandon.is_set():
            return
        with self._settled:
            self._by_key[key] += 1
        self._queues[hash(key) % len(self._queues)].put((key, what, fn))

    def wait_for(self, key: str, timeout: float) -> bool:
        """Wait until the tasks submitted for ``key`` so far are finished (or ``timeout``);
        True when they are."""
        with self._settled:
            return self._settled.wait_for(lambda: not self._by_key.get(key), timeout)

    def pending(self) -> int:
        return sum(q.qsize() for q in self._queues)

    def _work(self, q: queue.Queue[Any]) -> None:
        while True:
            item = q.get()
            if item is None:
                return
            key, what, fn = item
            try:
                if not self._abandon.is_set():
                    self._run(what, fn)
            finally:
                with self._settled:
                    self._by_key[key] -= 1
                    if self._by_key[key] <= 0:
                        del self._by_key[key]
                    self._settled.notify_all()

    def _run(self, what: str, fn: Callable[[], None]) -> None:
        delay = 0.2
        for attempt in range(1, self.attempts + 1):
            try:
                fn()
                self.done += 1
                break
            except ApiError as e:
                if e.status == 404:
                    log.debug("%s: gone (%s)", what, e)
                    break
                if not e.retryable or attempt == self.attempts or self._abandon.is_set():
                    self.failed += 1
                    log.warning("%s failed: %s", what, e)
                    break
                self._abandon.wait(e.retry_after or delay * (1 + random.random()))
                delay = min(delay * 2, 5.0)
            except Exception:
                self.failed += 1
                log.exception("%s failed", what)
                break

    def close(self, timeout: float) -> int:
        """Finish queued writes within ``timeout``; returns how many were left undone."""
        self._closing.set()
        for q in self._queues:
            q.put(None)
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        left = self.pending()
        if any(t.is_alive() for t in self._threads):
            self._abandon.set()
        return left


@dataclass
class _Series:
    name: str
    namespace: str
    count: int
    first: float
    last: float
    written: int


class EventRecorder:
    """events.k8s.io/v1 Events, as client-go's events recorder writes them: the first one
    created, an isomorphic one within 6 minutes turns it into a series (count 2, written at
    once), later counts written every ``SERIES_REFRESH`` seconds."""

    def __init__(self, client: KubeClient, writer: Writer, host: str | None = None) -> None:
        self.client = client
        self.writer = writer
        self.host = host or socket.gethostname()
        self._series: dict[tuple[Any, ...], _Series] = {}
        self._lock = threading.Lock()
        self.sent: Counter[str] = Counter()

    def emit(self, regarding: dict[str, Any], controller: str, event_type: str, reason: str,
             note: str, *, action: str | None = None, related: dict[str, Any] | None = None
             ) -> None:
        action = action or EVENT_ACTIONS.get(reason, reason)
        note = note if len(note) <= NOTE_LIMIT else note[: NOTE_LIMIT - 4] + " ..."
        ns = regarding.get("namespace") or "default"
        key = (regarding.get("uid"), regarding.get("name"), ns, event_type, reason, action,
               note, controller)
        now = time.time()
        with self._lock:
            s = self._series.get(key)
            if s is not None and now - s.last < SERIES_WINDOW:
                s.count += 1
                s.last = now
                if s.count == 2:
                    self._write_series(s)
                return
            name = f"{regarding.get('name', 'unknown')}.{time.time_ns():x}"
            self._series[key] = _Series(name, ns, 1, now, now, 1)
        body = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "eventTime": micro_time(now),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.host}",
            "action": action, "reason": reason, "regarding": regarding,
            "note": note, "type": event_type,
        }
        if related:
            body["related"] = related
        self.sent[reason] += 1
        self.writer.submit(str(regarding.get("uid") or name), f"event {reason} {name}",
                           lambda: self.client.request("POST", EVENTS.path(ns), body=body))

    def _write_series(self, s: _Series) -> None:
        s.written = s.count
        patch = {"series": {"count": s.count, "lastObservedTime": micro_time(s.last)}}
        self.writer.submit(s.name, f"event series {s.name}", lambda: self.client.request(
            "PATCH", EVENTS.path(s.namespace, s.name), body=patch,
            content_type="application/merge-patch+json"))

    def refresh(self) -> None:
        """Write grown series counts (called every ``SERIES_REFRESH`` seconds and at the
        end); forget series not seen for 6 minutes."""
        now = time.time()
        with self._lock:
            for key, s in list(self._series.items()):
                if s.count > s.written:
                    self._write_series(s)
                if now - s.last >= SERIES_WINDOW:
                    del self._series[key]


def pod_ref(pod: Pod) -> dict[str, Any]:
    ref = {"apiVersion": "v1", "kind": "Pod", "namespace": pod.namespace, "name": pod.name,
           "uid": pod.uid}
    if pod.metadata.resource_version:
        ref["resourceVersion"] = pod.metadata.resource_version
    return ref


class KubeBackend:
    """The scheduler core's Backend on a live API server (see the module doc)."""

    def __init__(self, client: KubeClient, *, dry_run: bool = False,
                 writer: Writer | None = None, events: EventRecorder | None = None,
                 bind_timeout: float | None = None, metrics: Any = None) -> None:
        self.client = client
        self.dry_run = dry_run
        self.writer = writer or Writer()
        self.events = events or EventRecorder(client, self.writer)
        self.bind_timeout = bind_timeout
        self.metrics = metrics
        # set when retries must stop (the shutdown deadline passed)
        self.give_up = threading.Event()
        self.decisions: Counter[str] = Counter()
        self.bound = 0
        self.bind_retries = 0
        self.unknown_outcomes: list[str] = []
        self._lock = threading.Lock()
        # told of every ResourceClaim status the API server accepted (the runner's assume
        # cache)
        self.claim_written: Callable[[Any], None] | None = None

    # ------------------------------------------------------------------ bind

    def extender_bind(self, pod: Pod, node_name: str, bind: Callable[[], None]) -> None:
        if self.dry_run:
            with self._lock:
                self.decisions["bind"] += 1
            if self.metrics is not None:
                self.metrics.dry_run_decisions.labels("bind").inc()
            log.info("dry-run: would have the bind extender bind pod %s to node %s",
                     pod.key, node_name,
                     extra={"kv": {"pod": pod.key, "node": node_name, "dryRun": True}})
            return
        bind()  # the informer reports the pod bound, as for any binding

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.dry_run:
            with self._lock:
                self.decisions["bind"] += 1
            if self.metrics is not None:
                self.metrics.dry_run_decisions.labels("bind").inc()
            log.info('dry-run: would bind pod %s to node %s', pod.key, node_name,
                     extra={"kv": {"pod": pod.key, "node": node_name, "dryRun": True}})
            return
        # an earlier cycle's status patch (PodScheduled=False, nominatedNodeName) still queued
        # would land after the binding and say a bound pod is unschedulable: upstream writes
        # it before the pod is retried
        if not self.writer.wait_for(pod.uid, WRITES_BEFORE_BIND):
            log.warning("pod %s: binding with earlier status writes still pending", pod.key,
                        extra={"kv": {"pod": pod.key, "node": node_name}})
        path = PODS.path(pod.namespace, pod.name, "binding")
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        unknown_since: float | None = None  # when an attempt first left the outcome unknown
        delay = 0.1
        attempt = 0
        unbound_conflicts = 0
        while True:
            attempt += 1
            try:
                self.client.request("POST", path, body=body, timeout=self.bind_timeout)
                self._count_bound()
                return
            except ApiError as e:
                err = e
                if e.status == 409:
                    # kube-apiserver answers 409 to any storage error under a binding (an
                    # etcd failure too, when the write may have landed): only the pod says
                    # whether this binding is in place, refused or still undecided
                    where = self._where(pod)
                    if where == node_name:
                        log.info("pod %s: binding to %s answered %s, but the pod is bound "
                                 "there: done", pod.key, node_name, e,
                                 extra={"kv": {"pod": pod.key, "node": node_name}})
                        self._count_bound()
                        return
                    if where:  # bound elsewhere, or GONE
                        raise BindError(e.message, conflict=True) from None
                    if where == "":
                        # not bound (yet): a write still in flight in etcd lands, or a
                        # retry to the same node does; a few, then the refusal stands
                        unbound_conflicts += 1
                        if unbound_conflicts > BIND_CONFLICT_RETRIES:
                            raise BindError(e.message, conflict=True) from None
                    # where is None: unreadable, the outcome unknown
                    if unknown_since is None:
                        unknown_since = time.monotonic()
                elif not e.retryable:
                    raise BindError(e.message) from None
                elif e.outcome_unknown and unknown_since is None:
                    unknown_since = time.monotonic()
            settled = (unknown_since is not None and err.status != 0
                       and time.monotonic() - unknown_since > UNKNOWN_SETTLE)
            if self.give_up.is_set() or settled:
                # past the API server's own request timeout (or at shutdown): what the pod
                # says is the outcome, when it can be read
                where = self._where(pod) if unknown_since is not None else ""
                if where == node_name:
                    self._count_bound()
                    return
                if where is None:
                    with self._lock:
                        self.unknown_outcomes.append(pod.key)
                why = "giving up at shutdown" if self.give_up.is_set() else "giving up"
                raise BindError(f"binding {pod.key} to {node_name}: {why} after "
                                f"{attempt} attempts: {err.message}",
                                conflict=bool(where)) from None
            wait = err.retry_after or delay * (1 + random.random() * 0.5)
            delay = min(delay * 2, BIND_RETRY_CAP)
            with self._lock:
                self.bind_retries += 1
            if self.metrics is not None:
                self.metrics.bind_retries.inc()
            log.warning("binding pod %s to node %s: %s; retrying in %.2fs (same node)",
                        pod.key, node_name, err, wait,
                        extra={"kv": {"pod": pod.key, "node": node_name,
                                      "attempt": attempt}})
            self.give_up.wait(wait)

    def _count_bound(self) -> None:
        with self._lock:
            self.bound += 1

    def _where(self, pod: Pod) -> str | None:
        """The node the pod is bound to, "" when unbound, ``GONE`` when deleted or replaced
        (another uid), None when unreadable."""
        try:
            cur = self.client.request("GET", PODS.path(pod.namespace, pod.name))
        except ApiError as e:
            return GONE if e.status == 404 else None
        if (cur.get("metadata") or {}).get("uid") != pod.uid:
            return GONE
        return str((cur.get("spec") or {}).get("nodeName") or "")

    # ------------------------------------------------------------------ status, events

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        if self.dry_run:
            return
        status: dict[str, Any] = {}
        if condition is not None:
            cur = next((c for c in pod.status.conditions if c.type == condition.type), None)
            if cur is None or (cur.status, cur.reason, cur.message) != (
                    condition.status, condition.reason, condition.message):
                c: dict[str, Any] = {"type": condition.type, "status": condition.status,
                                     "reason": condition.reason or None,
                                     "message": condition.message or None,
                                     "lastProbeTime": None}
                if cur is None or cur.status != condition.status:
                    c["lastTransitionTime"] = rfc3339()
                status["conditions"] = [c]
        if (nominated_node_name is not None
                and nominated_node_name != pod.status.nominated_node_name):
            status["nominatedNodeName"] = nominated_node_name or None
        if not status:
            return
        patch = {"status": status}
        if "conditions" in status:
            patch["status"]["$setElementOrder/conditions"] = [
                {"type": c.type} for c in pod.status.conditions
                if c.type != condition.type] + [{"type": condition.type}]  # type: ignore[union-attr]
        path = PODS.path(pod.namespace, pod.name, "status")
        self.writer.submit(pod.uid, f"status patch of pod {pod.key}", lambda: self.client.request(
            "PATCH", path, body=patch, content_type="application/strategic-merge-patch+json"))

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        if self.dry_run:
            with self._lock:
                self.decisions[f"event:{reason}"] += 1
            if reason == "FailedScheduling" and self.metrics is not None:
                self.metrics.dry_run_decisions.labels("unschedulable").inc()
            log.info("dry-run: %s %s: %s", reason, pod.key, message,
                     extra={"kv": {"pod": pod.key, "reason": reason, "dryRun": True}})
            return
        self.events.emit(pod_ref(pod), pod.spec.scheduler_name, event_type, reason, message)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        if self.metrics is not None:
            self.metrics.victim_deleted()
        if self.dry_run:
            with self._lock:
                self.decisions["preempt"] += 1
            log.info("dry-run: would preempt pod %s: %s", pod.key, reason,
                     extra={"kv": {"pod": pod.key, "dryRun": True}})
            return
        # (the victim's Preempted event is the evaluator's, recorded after this: upstream
        # sends one per victim)
        controller = pod.spec.scheduler_name
        cond = {"type": "DisruptionTarget", "status": "True",
                "reason": "PreemptionByScheduler",
                "message": f"{controller}: preempting to accommodate a higher priority pod",
                "lastTransitionTime": rfc3339()}
        status_path = PODS.path(pod.namespace, pod.name, "status")
        path = PODS.path(pod.namespace, pod.name)
        body = {"apiVersion": "v1", "kind": "DeleteOptions",
                "preconditions": {"uid": pod.uid}}

        def run() -> None:
            try:
                self.client.request("PATCH", status_path, body={"status": {
                    "conditions": [cond]}},
                    content_type="application/strategic-merge-patch+json")
            except ApiError as e:
                if e.status == 404:
                    return
                log.warning("pod %s: DisruptionTarget condition: %s", pod.key, e)
            self.client.request("DELETE", path, body=body)

        self.writer.submit(pod.uid, f"preemption of pod {pod.key}", run)

    # VolumeBinding's PreBind (upstream's PersistentVolumes().Update and
    # PersistentVolumeClaims().Update): the fields it changes are written onto the stored
    # object, with the resourceVersion the plugin read (a stale one is a 409).

    # PreBind checks the claims once and the pod is retried, rather than waiting in a
    # binding thread for the cluster's PV controller (docs/kube.md, differences)
    wait_for_volume_binding = False

    def update_persistent_volume(self, pv: Any) -> Any:
        def change(raw: dict[str, Any]) -> None:
            ref = pv.spec.claim_ref
            spec = raw.setdefault("spec", {})
            if ref is None:
                spec.pop("claimRef", None)
            else:
                spec["claimRef"] = {k: v for k, v in (
                    ("kind", ref.kind), ("apiVersion", ref.api_version),
                    ("namespace", ref.namespace), ("name", ref.name), ("uid", ref.uid),
                    ("resourceVersion", ref.resource_version)) if v}
        return self._update_storage("PersistentVolume", "", pv, change)

    def update_persistent_volume_claim(self, pvc: Any) -> Any:
        return self._update_storage("PersistentVolumeClaim", pvc.metadata.namespace, pvc,
                                    lambda raw: None)

    def _update_storage(self, kind: str, namespace: str, obj: Any,
                        change: Callable[[dict[str, Any]], None]) -> Any:
        from kubesched.backends.kube.resources import BY_KIND

        spec = BY_KIND[kind]
        path = spec.path(namespace or None, obj.metadata.name)
        raw = self.client.request("GET", path)
        md = raw.setdefault("metadata", {})
        md["resourceVersion"] = obj.metadata.resource_version
        md["annotations"] = dict(obj.metadata.annotations) or None
        md["labels"] = dict(obj.metadata.labels) or None
        md.pop("managedFields", None)
        change(raw)
        try:
            new = self.client.request("PUT", path, body=raw)
        except ApiError as e:
            raise BindError(e.message, conflict=e.status == 409) from None
        return spec.decode(new)

    def update_resource_claim_status(self, claim: Any) -> Any:
        """DynamicResources' ``ResourceClaims(ns).UpdateStatus``: the allocation and
        reservedFor written onto the stored claim's status subresource."""
        from kubesched.api.encode import encode_claim_status

        if self.dry_run:
            # nothing written; the claim is taken as allocated locally so that later
            # decisions do not hand its devices out again
            log.info("dry-run: would write the status of ResourceClaim %s", claim.key,
                     extra={"kv": {"claim": claim.key, "dryRun": True}})
            if self.claim_written is not None:
                self.claim_written(claim)
            return claim

        def status(raw: dict[str, Any]) -> str:
            raw["status"] = {**raw.get("status", {}),
                             **{"allocation": None, "reservedFor": None},
                             **encode_claim_status(claim)}
            return "/status"

        return self._put_claim(claim, status)

    def update_resource_claim(self, claim: Any) -> Any:
        """DynamicResources' ``ResourceClaims(ns).Update``: the claim's finalizers (PreBind's
        delete protection) written onto the stored claim."""
        if self.dry_run:
            log.info("dry-run: would update the finalizers of ResourceClaim %s", claim.key,
                     extra={"kv": {"claim": claim.key, "dryRun": True}})
            return claim

        def finalizers(raw: dict[str, Any]) -> str:
            raw["metadata"]["finalizers"] = list(claim.metadata.finalizers) or None
            return ""

        return self._put_claim(claim, finalizers)

    def _put_claim(self, claim: Any, change: Callable[[dict[str, Any]], str]) -> Any:
        """Read the stored claim, refuse a replaced one (another uid), let ``change`` edit it
        and name the subresource, write it back; the stored claim goes to the cache."""
        from kubesched.api.dra.types import parse_resource_claim

        path = f"{self._claims_path(claim.metadata.namespace)}/{claim.metadata.name}"
        raw = self.client.request("GET", path)
        md = raw.setdefault("metadata", {})
        if md.get("uid") and claim.metadata.uid and md["uid"] != claim.metadata.uid:
            raise BindError(f'resourceclaims.resource.k8s.io "{claim.metadata.name}" was '
                            "replaced", conflict=True)
        md.pop("managedFields", None)
        try:
            new = self.client.request("PUT", path + change(raw), body=raw)
        except ApiError as e:
            raise BindError(e.message, conflict=e.status == 409) from None
        stored = parse_resource_claim(new)
        if self.claim_written is not None:
            self.claim_written(stored)
        return stored

    def _claims_path(self, namespace: str) -> str:
        return f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"

    def create_resource_claim(self, claim: Any) -> Any:
        """DynamicResources' claim for a pod's extended resources backed by DRA, created at
        PreBind under the name the plugin chose."""
        from kubesched.api.dra.types import parse_resource_claim
        from kubesched.api.encode import encode_resource_claim

        if self.dry_run:
            log.info("dry-run: would create ResourceClaim %s", claim.key,
                     extra={"kv": {"claim": claim.key, "dryRun": True}})
            stored = claim
        else:
            try:
                new = self.client.request("POST", self._claims_path(claim.namespace),
                                          body=encode_resource_claim(claim))
            except ApiError as e:
                raise BindError(e.message, conflict=e.status == 409) from None
            stored = parse_resource_claim(new)
        # PreBind writes its status next, reading it from the cache: store it there now
        # (upstream polls its assume cache for the informer's copy instead)
        if self.claim_written is not None:
            self.claim_written(stored)
        return stored

    def delete_resource_claim(self, claim: Any) -> None:
        """upstream's deleteClaim: the delete-protection finalizer (PreBind's) removed by an
        Update, retried on a conflict as ``retry.DefaultRetry`` (5 tries), then Delete —
        else the claim would wait, deleting, for the resourceclaim controller."""
        from kubesched.api.dra.types import DELETE_PROTECTION_FINALIZER

        if self.dry_run:
            return
        path = f"{self._claims_path(claim.namespace)}/{claim.name}"
        try:
            for attempt in range(5):
                raw = self.client.request("GET", path)
                md = raw.setdefault("metadata", {})
                finalizers = md.get("finalizers") or []
                if DELETE_PROTECTION_FINALIZER not in finalizers:
                    break
                md["finalizers"] = [f for f in finalizers
                                    if f != DELETE_PROTECTION_FINALIZER] or None
                md.pop("managedFields", None)
                try:
                    self.client.request("PUT", path, body=raw)
                    break
                except ApiError as e:
                    if e.status != 409 or attempt == 4:
                        raise
            self.client.request("DELETE", path)
        except ApiError as e:
            if e.status != 404:
                raise BindError(e.message) from None

    def update_pod_extended_resource_claim_status(self, pod: Pod, status: Any) -> None:
        if self.dry_run:
            return
        body = {"status": {"extendedResourceClaimStatus": {
            "resourceClaimName": status.resource_claim_name,
            "requestMappings": [{"containerName": m.container_name,
                                 "resourceName": m.resource_name,
                                 "requestName": m.request_name}
                                for m in status.request_mappings]}}}
        try:
            self.client.request("PATCH", PODS.path(pod.namespace, pod.name, "status"),
                                body=body, content_type="application/merge-patch+json")
        except ApiError as e:
            raise BindError(e.message) from None

    def record_raw_event(self, raw: dict[str, Any], controller: str, event_type: str,
                         reason: str, note: str) -> None:
        """An event about an object that could not be decoded (its raw metadata)."""
        if self.dry_run:
            return
        raw_md = raw.get("metadata")
        md: dict[str, Any] = raw_md if isinstance(raw_md, dict) else {}
        ref = {"apiVersion": str(raw.get("apiVersion") or "v1"),
               "kind": str(raw.get("kind") or "Pod"),
               "namespace": str(md.get("namespace") or "default"),
               "name": str(md.get("name") or ""), "uid": str(md.get("uid") or "")}
        self.events.emit(ref, controller, event_type, reason, note)
