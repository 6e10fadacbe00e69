"""Informers: list, then watch from the list's resourceVersion, as client-go's reflector.

* The list is paged (``limit``); its items are diffed against what the informer already
  holds, so a relist reports adds, updates and deletes (nothing is lost while the watch was
  down, and nothing unchanged is reported again).
* The watch asks for bookmarks and resumes, after it ends or breaks, from the last
  resourceVersion seen (an event's or a bookmark's) — no relist.
* 410 Gone (as an HTTP status or as an ``ERROR`` event, on a watch or on a list page)
  forces a relist.
* Errors back off exponentially with jitter (client-go's 800 ms doubling to 30 s); a clean
  end of the watch (the server's ``timeoutSeconds``) re-watches at once.
* A resource marked ``optional`` (a CRD, a gated API) that the server does not serve (404)
  counts as synced and empty, and is looked for again every ``absent_retry`` seconds (the
  CRD may be installed later) — it must not hold scheduling back.
* Objects are decoded by the resource's ``decode`` (``api.parse``); one that cannot be
  decoded is reported to ``on_decode_error`` and skipped, never fatal.

Handlers run on the informer's own thread.
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.api.validation.registry import validate_object
from kubesched.backends.kube.client import ApiError, KubeClient, WatchStream
from kubesched.backends.kube.resources import ResourceSpec
from kubesched.errors import InputError

log = logging.getLogger("kubesched.kube.informer")


class Handler(Protocol):
    def on_add(self, spec: ResourceSpec, obj: Any) -> None: ...

    def on_update(self, spec: ResourceSpec, old: Any, new: Any) -> None: ...

    def on_delete(self, spec: ResourceSpec, obj: Any) -> None: ...

    def on_decode_error(self, spec: ResourceSpec, raw: dict[str, Any], err: Exception
                        ) -> None: ...


@dataclass
class Backoff:
    """client-go's exponential backoff for reflectors: 800 ms doubling to 30 s, jittered;
    reset once a list or watch succeeds."""

    initial: float = 0.8
    cap: float = 30.0
    factor: float = 2.0
    jitter: float = 1.0
    _current: float = 0.0
    _rng: random.Random = field(default_factory=random.Random)

    def next(self) -> float:
        self._current = self.initial if self._current == 0 else min(
            self.cap, self._current * self.factor)
        return self._current * (1 + self._rng.random() * self.jitter)

    def reset(self) -> None:
        self._current = 0.0


def _key(raw: dict[str, Any]) -> tuple[str, str]:
    md = raw.get("metadata") or {}
    return (md.get("namespace") or "", md.get("name") or "")


def _rv(raw: dict[str, Any]) -> str:
    return str((raw.get("metadata") or {}).get("resourceVersion") or "")


class Informer:
    def __init__(self, client: KubeClient, spec: ResourceSpec, handler: Handler, *,
                 page_size: int = 500, min_watch_timeout: float = 300.0,
                 stop: threading.Event | None = None, backoff: Backoff | None = None,
                 absent_retry: float = 60.0) -> None:
        self.client = client
        self.spec = spec
        self.handler = handler
        self.page_size = page_size
        self.min_watch_timeout = min_watch_timeout
        self.stop_event = stop or threading.Event()
        self.backoff = backoff or Backoff()
        self.synced = threading.Event()
        self.absent_retry = absent_retry
        self.absent = False  # an optional resource the server does not serve
        self.resource_version = ""
        # key -> (resourceVersion, decoded object or None when it could not be decoded)
        self.store: dict[tuple[str, str], tuple[str, Any]] = {}
        self.relists = 0
        self.watches = 0
        self.errors = 0
        self._stream: WatchStream | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Informer:
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.spec.plural}",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ the loop

    def _run(self) -> None:
        need_list = True
        while not self.stop_event.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                    self.backoff.reset()
                need_list = self._watch()
                if not need_list and not self.stop_event.is_set():
                    continue  # clean end (server timeout): re-watch at once
            except ApiError as e:
                if self.stop_event.is_set():
                    break
                if e.status == 404 and self.spec.optional:
                    if not self.absent:
                        log.info("%s.%s/%s is not served: none of them (looking again every "
                                 "%.0fs)", self.spec.plural, self.spec.group, self.spec.version,
                                 self.absent_retry)
                    self.absent = True
                    self._replace([])  # served once (a CRD since deleted): all gone
                    self.synced.set()
                    need_list = True
                    self.stop_event.wait(self.absent_retry)
                    continue
                if e.gone:
                    log.info("%s: resourceVersion %s is too old (410 Gone): relisting",
                             self.spec.plural, self.resource_version)
                    need_list = True
                    continue
                self.errors += 1
                delay = e.retry_after or self.backoff.next()
                log.warning("%s: %s; retrying in %.1fs", self.spec.plural, e, delay)
                self.stop_event.wait(delay)
            except Exception:  # a handler bug must not kill the informer
                self.errors += 1
                log.exception("%s: unexpected error; retrying", self.spec.plural)
                self.stop_event.wait(self.backoff.next())

    def _list(self) -> None:
        path = self.spec.path()
        items: list[dict[str, Any]] = []
        cont = None
        rv = ""
        while True:
            q: dict[str, Any] = {"limit": self.page_size}
            if self.spec.field_selector:
                q["fieldSelector"] = self.spec.field_selector
            if cont:
                q["continue"] = cont
            try:
                page = self.client.request("GET", path, query=q)
            except ApiError as e:
                if e.gone and cont:  # the continue token expired: list again from the start
                    items, cont = [], None
                    continue
                raise
            items.extend(page.get("items") or [])
            md = page.get("metadata") or {}
            rv = md.get("resourceVersion") or rv
            cont = md.get("continue")
            if not cont or self.stop_event.is_set():
                break
        self.relists += 1
        self.absent = False
        self._replace(items)
        self.resource_version = rv
        self.synced.set()

    def _replace(self, items: list[dict[str, Any]]) -> None:
        seen: set[tuple[str, str]] = set()
        for raw in items:
            key = _key(raw)
            seen.add(key)
            old = self.store.get(key)
            if old is not None and old[0] == _rv(raw):
                continue
            self._apply("MODIFIED" if old is not None else "ADDED", raw)
        for key in [k for k in self.store if k not in seen]:
            _rv_old, obj = self.store.pop(key)
            if obj is not None:
                self.handler.on_delete(self.spec, obj)

    def _watch(self) -> bool:
        """One watch; True when a relist is needed (410), False on a clean end."""
        timeout = self.min_watch_timeout * (1 + random.random())
        q = {"watch": 1, "resourceVersion": self.resource_version,
             "allowWatchBookmarks": True, "timeoutSeconds": int(timeout)}
        if self.spec.field_selector:
            q["fieldSelector"] = self.spec.field_selector
        stream = self.client.watch(self.spec.path(), q, timeout=timeout + 60)
        with self._lock:
            self._stream = stream
        if self.stop_event.is_set():
            stream.close()
        self.watches += 1
        try:
            for ev in stream:
                if self.stop_event.is_set():
                    return False
                etype = ev.get("type")
                obj = ev.get("object") or {}
                if etype == "ERROR":
                    code = obj.get("code") if isinstance(obj, dict) else None
                    if code == 410:
                        log.info("%s: watch expired (410 Gone): relisting", self.spec.plural)
                        return True
                    raise ApiError(int(code or 500), str(obj.get("reason") or "WatchError"),
                                   str(obj.get("message") or obj))
                rv = _rv(obj)
                if etype == "BOOKMARK":
                    if rv:
                        self.resource_version = rv
                    continue
                if etype in ("ADDED", "MODIFIED", "DELETED"):
                    self._apply(etype, obj)
                    if rv:
                        self.resource_version = rv
                self.backoff.reset()
        finally:
            with self._lock:
                self._stream = None
            stream.close()
        return False

    def _apply(self, etype: str, raw: dict[str, Any]) -> None:
        key = _key(raw)
        old = self.store.get(key)
        old_obj = old[1] if old is not None else None
        if etype == "DELETED":
            self.store.pop(key, None)
            if old_obj is not None:
                self.handler.on_delete(self.spec, old_obj)
            return
        try:
            validate_object(self.spec.kind, raw)
        except InputError as e:
            # the API server admitted it (an older release's rules, or a validation kubesched
            # has wrong): say so, and schedule it all the same
            log.warning("%s %s fails kubesched's validation (kept): %s", self.spec.kind, key, e)
        try:
            new_obj = self.spec.decode(raw)
        except (InputError, ValueError, TypeError, KeyError, AttributeError) as e:
            # kept (undecoded) so that a later good version or a delete is seen right
            self.store[key] = (_rv(raw), old_obj)
            self.handler.on_decode_error(self.spec, raw, e)
            return
        self.store[key] = (_rv(raw), new_obj)
        if old_obj is None:
            self.handler.on_add(self.spec, new_obj)
        elif old_obj.metadata.uid != new_obj.metadata.uid:
            # deleted and created again under the same name while the watch was down
            self.handler.on_delete(self.spec, old_obj)
            self.handler.on_add(self.spec, new_obj)
        else:
            self.handler.on_update(self.spec, old_obj, new_obj)
