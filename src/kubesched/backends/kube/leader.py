"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package.

* Acquire: every ``retry_period`` (jittered ×1.2) read the Lease; create it when missing;
  take it when its holder is empty (released) or has not renewed it — as observed on the
  local clock since its record last changed — for ``leaseDurationSeconds``; an update whose
  resourceVersion is stale is a 409 and is just another failed try (optimistic concurrency).
* Renew: every ``retry_period``; a leader that cannot renew within ``renew_deadline`` has
  lost the lease (``on_stopped_leading(lost=True)``; kube-scheduler then exits).
* Release on stop: the holder is cleared (``leaseDurationSeconds: 1``) so that a standby
  takes over at its next try instead of waiting for the lease to expire.

Upstream's defaults: lease 15 s, renew deadline 10 s, retry period 2 s.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.backends.kube.backend import micro_time
from kubesched.backends.kube.client import ApiError, KubeClient
from kubesched.backends.kube.resources import LEASES

log = logging.getLogger("kubesched.kube.leader")

HEALTHZ_TOLERANCE = 20.0  # upstream's HealthzAdaptor timeout


@dataclass
class LeaderElectionConfig:
    name: str = "kubesched"
    namespace: str = "kube-system"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True


class LeaderElector:
    def __init__(self, client: KubeClient, config: LeaderElectionConfig, *,
                 on_started_leading: Callable[[], None],
                 on_stopped_leading: Callable[[bool], None],
                 on_new_leader: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.config = config
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.stop_event = threading.Event()
        self.leading = False
        self.observed_spec: dict[str, Any] | None = None
        self.observed_time = 0.0  # monotonic
        self.last_renew = 0.0     # monotonic
        self.leader = ""
        self.transitions_seen = 0
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LeaderElector:
        self._thread = threading.Thread(target=self.run, name="leader-election", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def healthy(self) -> bool:
        """False when leading and the lease has not been renewed for far too long."""
        if not self.leading:
            return True
        return (time.monotonic() - self.last_renew
                < self.config.lease_duration + HEALTHZ_TOLERANCE)

    # ------------------------------------------------------------------ the loop

    def run(self) -> None:
        cfg = self.config
        stop = self.stop_event
        log.info("attempting to acquire leader lease %s/%s...", cfg.namespace, cfg.name,
                 extra={"kv": {"lease": f"{cfg.namespace}/{cfg.name}",
                               "identity": cfg.identity}})
        while not stop.is_set():
            if self.try_acquire_or_renew():
                break
            stop.wait(cfg.retry_period * (1 + random.random() * 0.2))
        if stop.is_set():
            return
        self.leading = True
        log.info("successfully acquired lease %s/%s", cfg.namespace, cfg.name,
                 extra={"kv": {"lease": f"{cfg.namespace}/{cfg.name}",
                               "identity": cfg.identity}})
        self.on_started_leading()
        lost = False
        while not stop.is_set():
            deadline = time.monotonic() + cfg.renew_deadline
            renewed = False
            while not stop.is_set() and time.monotonic() < deadline:
                if self.try_acquire_or_renew():
                    renewed = True
                    break
                stop.wait(min(cfg.retry_period, max(0.0, deadline - time.monotonic())))
            if stop.is_set():
                break
            if not renewed:
                lost = True
                break
            stop.wait(cfg.retry_period)
        if lost:
            self.leading = False
            log.error("failed to renew lease %s/%s within %gs: leader election lost",
                      cfg.namespace, cfg.name, cfg.renew_deadline)
            self.on_stopped_leading(True)
            return
        if cfg.release_on_cancel:
            self.release()
        self.leading = False
        self.on_stopped_leading(False)

    def _timeout(self) -> float:
        return max(self.config.retry_period, self.config.renew_deadline / 2)

    def _record(self, now: float, spec: dict[str, Any] | None) -> dict[str, Any]:
        cfg = self.config
        rec: dict[str, Any] = {"holderIdentity": cfg.identity,
                               "leaseDurationSeconds": max(1, int(cfg.lease_duration)),
                               "acquireTime": micro_time(now), "renewTime": micro_time(now),
                               "leaseTransitions": 0}
        if spec is not None:
            if spec.get("holderIdentity") == cfg.identity:
                rec["acquireTime"] = spec.get("acquireTime") or rec["acquireTime"]
                rec["leaseTransitions"] = spec.get("leaseTransitions") or 0
            else:
                rec["leaseTransitions"] = (spec.get("leaseTransitions") or 0) + 1
        return rec

    def try_acquire_or_renew(self) -> bool:
        cfg = self.config
        now = time.time()
        path = LEASES.path(cfg.namespace, cfg.name)
        try:
            lease = self.client.request("GET", path, timeout=self._timeout())
        except ApiError as e:
            if e.status != 404:
                log.warning("error retrieving lease %s/%s: %s", cfg.namespace, cfg.name, e)
                return False
            rec = self._record(now, None)
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": cfg.name, "namespace": cfg.namespace}, "spec": rec}
            try:
                self.client.request("POST", LEASES.path(cfg.namespace), body=body,
                                    timeout=self._timeout())
            except ApiError as e2:
                log.info("error creating lease %s/%s: %s", cfg.namespace, cfg.name, e2)
                return False
            self._observe(rec)
            self.last_renew = time.monotonic()
            return True
        spec = lease.get("spec") or {}
        if spec != self.observed_spec:
            self._observe(spec)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        if (holder and holder != cfg.identity
                and self.observed_time + duration > time.monotonic()):
            return False
        rec = self._record(now, spec)
        lease = dict(lease)
        lease["spec"] = rec
        try:
            self.client.request("PUT", path, body=lease, timeout=self._timeout())
        except ApiError as e:
            if e.status != 409:
                log.warning("error updating lease %s/%s: %s", cfg.namespace, cfg.name, e)
            return False
        self._observe(rec)
        self.last_renew = time.monotonic()
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        self.observed_spec = spec
        self.observed_time = time.monotonic()
        holder = spec.get("holderIdentity") or ""
        if holder != self.leader:
            self.leader = holder
            if holder and holder != self.config.identity:
                log.info("new leader elected: %s", holder, extra={"kv": {"leader": holder}})
            if self.on_new_leader is not None:
                self.on_new_leader(holder)

    def release(self) -> bool:
        cfg = self.config
        if self.observed_spec is None or (
                self.observed_spec.get("holderIdentity") != cfg.identity):
            return False
        path = LEASES.path(cfg.namespace, cfg.name)
        now = time.time()
        try:
            lease = self.client.request("GET", path, timeout=self._timeout())
            if (lease.get("spec") or {}).get("holderIdentity") != cfg.identity:
                return False
            lease = dict(lease)
            lease["spec"] = {"holderIdentity": None, "leaseDurationSeconds": 1,
                             "acquireTime": micro_time(now), "renewTime": micro_time(now),
                             "leaseTransitions": (self.observed_spec or {}).get(
                                 "leaseTransitions") or 0}
            self.client.request("PUT", path, body=lease, timeout=self._timeout())
        except ApiError as e:
            log.warning("failed to release lease %s/%s: %s", cfg.namespace, cfg.name, e)
            return False
        log.info("released lease %s/%s", cfg.namespace, cfg.name)
        return True
