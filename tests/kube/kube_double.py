"""An API server double: the parts of the Kubernetes API that kubesched's kube backend uses,
served over real HTTP/1.1 on loopback, with the semantics kept exactly where kubesched
depends on them.

* One global resourceVersion (etcd's revision): every write bumps it; lists answer with the
  current one; watches resume from any resourceVersion still in the history and answer
  410 Gone (an ``ERROR`` event with a ``Status`` of code 410, or an HTTP 410 with
  ``gone_as_http``) for one older than the last compaction.
* Watches stream chunked JSON lines (``ADDED``/``MODIFIED``/``DELETED``), send ``BOOKMARK``
  events when asked (``allowWatchBookmarks``), honour ``timeoutSeconds`` and field
  selectors (an object that stops matching arrives as ``DELETED``, one that starts matching
  as ``ADDED``), and page lists with ``limit``/``continue``.
* ``pods/binding``: 201 and the pod gets ``spec.nodeName`` and ``PodScheduled=True``; 409 when
  the pod is already bound (or the binding's UID precondition fails); 404 when it is gone.
* ``pods/status`` patches: strategic merge (``status.conditions`` merged by ``type``) or JSON
  merge patch.
* events.k8s.io/v1 Events (create, patch), coordination.k8s.io/v1 Leases with optimistic
  concurrency (an update whose ``metadata.resourceVersion`` is not the current one is 409).

Faults for the tests: ``drop_watches`` (streams end cleanly), ``cut_watches`` (connections cut
mid-chunk), ``compact`` (history dropped: resuming watches get 410), ``go_away``/``come_back``
(the whole server gone, then back on the same port with its state), and per-request binding
faults (``bind_faults``): 500 before or after the write, an answer that never comes (before
or after the write), a connection cut before or after the write, a 409 after the write (as
kube-apiserver answers when etcd fails under it); ``pod_read_failures``: reads of a pod
answered 503 (etcd unavailable).
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import datetime as dt
import itertools
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# (group, version, plural) -> (kind, namespaced)
RESOURCES: dict[tuple[str, str, str], tuple[str, bool]] = {
    ("", "v1", "pods"): ("Pod", True),
    ("", "v1", "nodes"): ("Node", False),
    ("", "v1", "namespaces"): ("Namespace", False),
    ("", "v1", "persistentvolumes"): ("PersistentVolume", False),
    ("", "v1", "persistentvolumeclaims"): ("PersistentVolumeClaim", True),
    ("", "v1", "services"): ("Service", True),
    ("", "v1", "replicationcontrollers"): ("ReplicationController", True),
    ("storage.k8s.io", "v1", "storageclasses"): ("StorageClass", False),
    ("storage.k8s.io", "v1", "csinodes"): ("CSINode", False),
    ("storage.k8s.io", "v1", "csidrivers"): ("CSIDriver", False),
    ("storage.k8s.io", "v1", "csistoragecapacities"): ("CSIStorageCapacity", True),
    ("scheduling.k8s.io", "v1", "priorityclasses"): ("PriorityClass", False),
    ("policy", "v1", "poddisruptionbudgets"): ("PodDisruptionBudget", True),
    ("apps", "v1", "replicasets"): ("ReplicaSet", True),
    ("apps", "v1", "statefulsets"): ("StatefulSet", True),
    ("events.k8s.io", "v1", "events"): ("Event", True),
    ("coordination.k8s.io", "v1", "leases"): ("Lease", True),
    # gangs: scheduler-plugins' CRD and upstream's Workload API at v1.37's preferred version
    ("scheduling.x-k8s.io", "v1alpha1", "podgroups"): ("PodGroup", True),
    ("scheduling.k8s.io", "v1beta1", "workloads"): ("Workload", True),
    ("scheduling.k8s.io", "v1beta1", "podgroups"): ("PodGroup", True),
    # DRA (DeviceTaintRule deliberately not served: a gated API the scheduler must do without)
    ("resource.k8s.io", "v1", "deviceclasses"): ("DeviceClass", False),
    ("resource.k8s.io", "v1", "resourceslices"): ("ResourceSlice", False),
    ("resource.k8s.io", "v1", "resourceclaims"): ("ResourceClaim", True),
    ("resource.k8s.io", "v1", "resourceclaimtemplates"): ("ResourceClaimTemplate", True),
}
# by kind; a kind served by two groups (PodGroup) is told apart by apiVersion (_resource_of)
KIND_TO_RESOURCE = {kind: res for res, (kind, _ns) in reversed(RESOURCES.items())}


def _resource_of(kind: str, api_version: str | None = None) -> tuple[str, str, str]:
    if api_version:
        group, _, version = api_version.rpartition("/")
        for res, (k, _ns) in RESOURCES.items():
            if k == kind and (res[0], res[1]) == (group, version):
                return res
    return KIND_TO_RESOURCE[kind]

# Binding faults (see module doc).
OK = "ok"
ERROR_BEFORE = "500-before"      # 500, nothing written
ERROR_AFTER = "500-after"        # written, then 500
HANG_BEFORE = "hang-before"      # no answer for ``hang`` seconds, nothing written
HANG_AFTER = "hang-after"        # written, then no answer for ``hang`` seconds
CUT_BEFORE = "cut-before"        # connection cut, nothing written
CUT_AFTER = "cut-after"          # written, then connection cut
CONFLICT = "409"                 # 409 Conflict, nothing written (the pod stays unbound)
STOLEN = "stolen"                # another scheduler binds the pod elsewhere first: a real 409
# written, then 409: kube-apiserver's answer when etcd fails under the write (it wraps any
# storage error of a binding in a Conflict) although the write may have landed
CONFLICT_AFTER = "409-after"
UNKNOWN_OUTCOME = (ERROR_BEFORE, ERROR_AFTER, HANG_BEFORE, HANG_AFTER, CUT_BEFORE, CUT_AFTER,
                   CONFLICT_AFTER)
BIND_FAULTS = (OK, ERROR_BEFORE, ERROR_AFTER, HANG_BEFORE, HANG_AFTER, CUT_BEFORE, CUT_AFTER,
               CONFLICT, STOLEN, CONFLICT_AFTER)
ETCD_UNAVAILABLE = ("rpc error: code = Unavailable desc = error reading from server: EOF")


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_body(code: int, reason: str, message: str, details: dict | None = None) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success" if code < 400 else "Failure",
            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def _get_path(obj: dict, path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def parse_field_selector(sel: str) -> list[tuple[str, str, str]]:
    out = []
    for term in filter(None, (t.strip() for t in sel.split(","))):
        for op in ("!=", "==", "="):
            if op in term:
                k, v = term.split(op, 1)
                out.append((k.strip(), "!=" if op == "!=" else "=", v.strip()))
                break
        else:
            raise ApiError(400, "BadRequest", f"invalid field selector term {term!r}")
    return out


def field_match(obj: dict, terms: list[tuple[str, str, str]]) -> bool:
    for path, op, value in terms:
        got = _get_path(obj, path)
        got = "" if got is None else str(got)
        if (got == value) != (op == "="):
            return False
    return True


def merge_patch(target: Any, patch: Any, *, strategic: bool, path: str = "") -> Any:
    """RFC 7386 merge patch; with ``strategic``, lists under the pod-status ``conditions``
    key are merged by ``type`` (the patchMergeKey upstream declares)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue  # $setElementOrder/… directives: order is kept by type anyway
        p = f"{path}.{k}" if path else k
        if v is None:
            out.pop(k, None)
        elif strategic and k == "conditions" and isinstance(v, list):
            merged = list(out.get(k) or [])
            for cond in v:
                for i, old in enumerate(merged):
                    if old.get("type") == cond.get("type"):
                        merged[i] = merge_patch(old, cond, strategic=True, path=p)
                        break
                else:
                    merged.append({kk: vv for kk, vv in cond.items() if vv is not None})
            out[k] = merged
        else:
            out[k] = merge_patch(out.get(k), v, strategic=strategic, path=p)
    return out


@dataclass
class WatchStream:
    handler: BaseHTTPRequestHandler
    resource: tuple[str, str, str]
    drop: bool = False


@dataclass
class Stats:
    """What the tests assert on."""

    # (pod key, node, the fault served: kubesched saw no definite answer for the unknown ones)
    binding_requests: list[tuple[str, str, str]] = field(default_factory=list)
    bindings_applied: list[tuple[str, str]] = field(default_factory=list)
    status_patches: list[tuple[str, dict]] = field(default_factory=list)
    status_puts: list[str] = field(default_factory=list)
    lists: int = 0
    watches: int = 0
    gone: int = 0
    deletes: list[str] = field(default_factory=list)
    requests: int = 0
    pod_reads_failed: int = 0


class ApiServerDouble:
    def __init__(self, *, port: int = 0, token: str | None = None,
                 bookmark_interval: float = 1.0, gone_as_http: bool = False,
                 history_limit: int = 100_000) -> None:
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.gone_as_http = gone_as_http
        self.history_limit = history_limit
        self.lock = threading.Condition()
        self.rv = 1
        self.objects: dict[tuple[str, str, str], dict[tuple[str, str], dict]] = {
            r: {} for r in RESOURCES}
        self.history: dict[tuple[str, str, str], list[tuple]] = {r: [] for r in RESOURCES}
        self.compacted: dict[tuple[str, str, str], int] = dict.fromkeys(RESOURCES, 0)
        self.bind_faults: deque[str] = deque()
        # the next this many GETs of one pod answer 503 (etcd unavailable for reads too)
        self.pod_read_failures = 0
        self.hang = 3.0
        self.stats = Stats()
        self.stolen: list[tuple[str, str]] = []
        self.watches: list[WatchStream] = []
        self._pages: dict[str, tuple[list[dict], str]] = {}
        self._page_ids = itertools.count(1)
        self._uids = itertools.count(1)
        self._conns: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = port
        self.up = False

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ApiServerDouble:
        double = self

        class Handler(_Handler):
            server_double = double

        srv = _Server(("127.0.0.1", self.port), Handler)
        srv.daemon_threads = True
        srv.block_on_close = False
        self.port = srv.server_address[1]
        self._server = srv
        self._thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="apiserver-double", daemon=True)
        self._thread.start()
        self.up = True
        return self

    def go_away(self) -> None:
        """The server disappears: listening socket closed, every connection cut."""
        srv = self._server
        if srv is None:
            return
        self.up = False
        srv.shutdown()
        srv.server_close()
        with self.lock:
            for s in self.watches:
                s.drop = True
            self.lock.notify_all()
            conns = list(self._conns)
        for c in conns:
            _hard_close(c)
        self._server = None

    def come_back(self) -> None:
        self.start()

    def stop(self) -> None:
        self.go_away()

    def __enter__(self) -> ApiServerDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kubeconfig(self, path: str, *, token: str | None = None) -> str:
        """Write a kubeconfig for this server; returns the path."""
        import yaml

        tok = token if token is not None else (self.token or "double-token")
        doc = {
            "apiVersion": "v1", "kind": "Config", "current-context": "double",
            "clusters": [{"name": "double", "cluster": {"server": self.url}}],
            "users": [{"name": "double", "user": {"token": tok}}],
            "contexts": [{"name": "double", "context": {"cluster": "double", "user": "double"}}],
        }
        with open(path, "w") as f:
            yaml.safe_dump(doc, f)
        return path

    # ------------------------------------------------------------------ store (Python API)

    def _bump(self) -> str:
        self.rv += 1
        return str(self.rv)

    def _record(self, res: tuple[str, str, str], etype: str, obj: dict,
                old: dict | None) -> None:
        h = self.history[res]
        h.append((self.rv, etype, copy.deepcopy(obj), copy.deepcopy(old) if old else None))
        if len(h) > self.history_limit:
            cut = len(h) - self.history_limit
            self.compacted[res] = h[cut - 1][0]
            del h[:cut]
        self.lock.notify_all()

    def create(self, obj: dict) -> dict:
        """Create an object as given (a dict with kind); returns the stored copy."""
        res = _resource_of(obj["kind"], obj.get("apiVersion"))
        with self.lock:
            return self._create(res, obj, None)

    def _create(self, res: tuple[str, str, str], obj: dict, ns: str | None) -> dict:
        kind, namespaced = RESOURCES[res]
        obj = copy.deepcopy(obj)
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", f"{res[0]}/{res[1]}" if res[0] else res[1])
        md = obj.setdefault("metadata", {})
        if not md.get("name") and md.get("generateName"):
            md["name"] = f"{md['generateName']}{next(self._uids):05x}"
        if not md.get("name"):
            raise ApiError(422, "Invalid", "metadata.name: Required value")
        if namespaced:
            md["namespace"] = ns or md.get("namespace") or "default"
        else:
            md.pop("namespace", None)
        key = (md.get("namespace", ""), md["name"])
        if key in self.objects[res]:
            raise ApiError(409, "AlreadyExists",
                           f'{res[2]} "{md["name"]}" already exists')
        md["uid"] = md.get("uid") or f"uid-{next(self._uids):06d}"
        md.setdefault("creationTimestamp", now_rfc3339())
        md["resourceVersion"] = self._bump()
        if kind == "Pod":
            obj.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
            obj.setdefault("status", {}).setdefault("phase", "Pending")
        self.objects[res][key] = obj
        self._record(res, "ADDED", obj, None)
        return copy.deepcopy(obj)

    def update(self, obj: dict) -> dict:
        """Replace an object unconditionally (test setup)."""
        res = _resource_of(obj["kind"], obj.get("apiVersion"))
        with self.lock:
            md = obj["metadata"]
            key = (md.get("namespace", "default") if RESOURCES[res][1] else "", md["name"])
            return self._update(res, key, obj, check_rv=False)

    def _update(self, res: tuple[str, str, str], key: tuple[str, str], obj: dict,
                *, check_rv: bool) -> dict:
        cur = self.objects[res].get(key)
        if cur is None:
            raise ApiError(404, "NotFound", f'{res[2]} "{key[1]}" not found')
        given = (obj.get("metadata") or {}).get("resourceVersion")
        if check_rv and given and given != cur["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict",
                           f'Operation cannot be fulfilled on {res[2]} "{key[1]}": the object '
                           "has been modified; please apply your changes to the latest version "
                           "and try again")
        new = copy.deepcopy(obj)
        md = new.setdefault("metadata", {})
        for k in ("uid", "creationTimestamp", "namespace", "name"):
            if k in cur["metadata"]:
                md[k] = cur["metadata"][k]
        md["resourceVersion"] = self._bump()
        self.objects[res][key] = new
        self._record(res, "MODIFIED", new, cur)
        return copy.deepcopy(new)

    def patch(self, kind: str, name: str, patch: dict, namespace: str = "default",
              *, strategic: bool = True) -> dict:
        res = KIND_TO_RESOURCE[kind]
        key = (namespace if RESOURCES[res][1] else "", name)
        with self.lock:
            cur = self.objects[res].get(key)
            if cur is None:
                raise ApiError(404, "NotFound", f'{res[2]} "{name}" not found')
            new = merge_patch(cur, patch, strategic=strategic)
            return self._update(res, key, new, check_rv=False)

    def delete(self, kind: str, name: str, namespace: str = "default") -> dict | None:
        res = KIND_TO_RESOURCE[kind]
        key = (namespace if RESOURCES[res][1] else "", name)
        with self.lock:
            return self._delete(res, key, None)

    def _delete(self, res: tuple[str, str, str], key: tuple[str, str],
                uid: str | None) -> dict:
        cur = self.objects[res].get(key)
        if cur is None:
            raise ApiError(404, "NotFound", f'{res[2]} "{key[1]}" not found')
        if uid and cur["metadata"].get("uid") != uid:
            raise ApiError(409, "Conflict",
                           f"Precondition failed: UID in precondition: {uid}, UID in object "
                           f"meta: {cur['metadata'].get('uid')}")
        del self.objects[res][key]
        gone = copy.deepcopy(cur)
        gone["metadata"]["resourceVersion"] = self._bump()
        self._record(res, "DELETED", gone, None)
        return gone

    def get(self, kind: str, name: str, namespace: str = "default") -> dict | None:
        res = KIND_TO_RESOURCE[kind]
        with self.lock:
            obj = self.objects[res].get((namespace if RESOURCES[res][1] else "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def list(self, kind: str) -> list[dict]:
        with self.lock:
            return [copy.deepcopy(o) for o in self.objects[KIND_TO_RESOURCE[kind]].values()]

    def compact(self) -> None:
        """Drop all history: a watch resuming from any older resourceVersion gets 410."""
        with self.lock:
            for res in RESOURCES:
                self.history[res].clear()
                self.compacted[res] = self.rv

    def drop_watches(self) -> None:
        """End every watch stream cleanly (as the API server does at its timeout)."""
        with self.lock:
            for s in self.watches:
                s.drop = True
            self.lock.notify_all()

    def cut_watches(self) -> None:
        """Cut every watch connection in the middle of a chunk."""
        with self.lock:
            streams = list(self.watches)
        for s in streams:
            try:
                s.handler.wfile.write(b"40\r\n{\"type\":\"MODI")
                s.handler.wfile.flush()
            except OSError:
                pass
            _hard_close(s.handler.connection)

    # ------------------------------------------------------------------ HTTP side

    def _check_auth(self, h: BaseHTTPRequestHandler) -> None:
        if self.token is None:
            return
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            raise ApiError(401, "Unauthorized", "Unauthorized")

    def handle(self, h: _Handler, method: str) -> None:
        self.stats.requests += 1
        url = urlsplit(h.path)
        q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        try:
            self._check_auth(h)
            route = _route(url.path)
            if route is None:
                raise ApiError(404, "NotFound", "the server could not find the requested "
                               "resource")
            res, ns, name, sub = route
            body = h.read_body()
            if method == "GET" and name is None:
                if q.get("watch") in ("1", "true"):
                    self._watch(h, res, ns, q)
                else:
                    h.send_json(200, self._list(res, ns, q))
            elif method == "GET":
                with self.lock:
                    if res[2] == "pods" and self.pod_read_failures > 0:
                        self.pod_read_failures -= 1
                        self.stats.pod_reads_failed += 1
                        raise ApiError(503, "ServiceUnavailable", ETCD_UNAVAILABLE)
                    obj = self.objects[res].get((ns or "", name))
                    if obj is None:
                        raise ApiError(404, "NotFound", f'{res[2]} "{name}" not found')
                    h.send_json(200, obj)
            elif method == "POST" and name is None:
                with self.lock:
                    h.send_json(201, self._create(res, body, ns))
            elif method == "POST" and sub == "binding" and res[2] == "pods":
                self._bind(h, ns or "default", name, body)
            elif method == "PUT" and name is not None and sub is None:
                with self.lock:
                    h.send_json(200, self._update(res, (ns or "", name), body, check_rv=True))
            elif method == "PUT" and name is not None and sub == "status":
                # the status subresource: only status changes, the rest is the stored one's
                with self.lock:
                    cur = self.objects[res].get((ns or "", name))
                    if cur is None:
                        raise ApiError(404, "NotFound", f'{res[2]} "{name}" not found')
                    new = {**copy.deepcopy(cur), "status": (body or {}).get("status") or {}}
                    new["metadata"]["resourceVersion"] = (
                        (body or {}).get("metadata") or {}).get("resourceVersion")
                    self.stats.status_puts.append(f"{ns}/{name}" if ns else name)
                    h.send_json(200, self._update(res, (ns or "", name), new, check_rv=True))
            elif method == "PATCH" and name is not None and sub in (None, "status"):
                ctype = h.headers.get("Content-Type", "")
                strategic = "strategic" in ctype
                if "json-patch" in ctype:
                    raise ApiError(415, "UnsupportedMediaType", "json-patch not supported")
                if sub == "status":
                    body = {"status": body.get("status", {})} if isinstance(body, dict) else {}
                with self.lock:
                    cur = self.objects[res].get((ns or "", name))
                    if cur is None:
                        raise ApiError(404, "NotFound", f'{res[2]} "{name}" not found')
                    new = merge_patch(cur, body, strategic=strategic)
                    out = self._update(res, (ns or "", name), new, check_rv=False)
                    if sub == "status":
                        self.stats.status_patches.append((f"{ns}/{name}", body))
                h.send_json(200, out)
            elif method == "DELETE" and name is not None:
                uid = ((body or {}).get("preconditions") or {}).get("uid")
                with self.lock:
                    gone = self._delete(res, (ns or "", name), uid)
                    self.stats.deletes.append(f"{ns}/{name}" if ns else name)
                h.send_json(200, gone)
            else:
                raise ApiError(405, "MethodNotAllowed", f"{method} not allowed")
        except ApiError as e:
            h.send_json(e.code, status_body(e.code, e.reason, e.message))
        except (BrokenPipeError, ConnectionResetError, OSError):
            h.close_connection = True

    def _list(self, res: tuple[str, str, str], ns: str | None, q: dict[str, str]) -> dict:
        kind = RESOURCES[res][0]
        limit = int(q.get("limit") or 0)
        cont = q.get("continue")
        with self.lock:
            self.stats.lists += 1
            if cont:
                page = self._pages.pop(cont, None)
                if page is None:
                    raise ApiError(410, "Expired", "The provided continue parameter is too "
                                   "old to display a consistent list result.")
                items, rv = page
            else:
                terms = parse_field_selector(q.get("fieldSelector", ""))
                items = [copy.deepcopy(o) for (ons, _n), o in sorted(self.objects[res].items())
                         if (ns is None or ons == ns) and field_match(o, terms)]
                rv = str(self.rv)
        md: dict[str, Any] = {"resourceVersion": rv}
        if limit and len(items) > limit:
            token = f"page-{next(self._page_ids)}"
            with self.lock:
                self._pages[token] = (items[limit:], rv)
            md["continue"] = token
            md["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        return {"kind": f"{kind}List", "apiVersion": f"{res[0]}/{res[1]}" if res[0] else res[1],
                "metadata": md, "items": items}

    def _watch(self, h: _Handler, res: tuple[str, str, str], ns: str | None,
               q: dict[str, str]) -> None:
        terms = parse_field_selector(q.get("fieldSelector", ""))
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true")
        timeout = float(q.get("timeoutSeconds") or 1800)
        rv_param = q.get("resourceVersion", "")
        deadline = time.monotonic() + timeout
        stream = WatchStream(h, res)
        with self.lock:
            self.stats.watches += 1
            initial: list[dict] = []
            if rv_param in ("", "0"):
                cursor = self.rv
                initial = [{"type": "ADDED", "object": copy.deepcopy(o)}
                           for (ons, _n), o in sorted(self.objects[res].items())
                           if (ns is None or ons == ns) and field_match(o, terms)]
            else:
                try:
                    cursor = int(rv_param)
                except ValueError:
                    raise ApiError(400, "BadRequest", f"invalid resourceVersion {rv_param!r}"
                                   ) from None
                if cursor < self.compacted[res]:
                    self.stats.gone += 1
                    msg = (f"too old resource version: {cursor} "
                           f"({self.compacted[res]})")
                    if self.gone_as_http:
                        raise ApiError(410, "Expired", msg)
                    initial = [{"type": "ERROR", "object": status_body(410, "Expired", msg)}]
                    cursor = -1
            self.watches.append(stream)
        try:
            h.start_chunked()
            for ev in initial:
                h.write_chunk(ev)
            if cursor < 0:
                h.end_chunked()
                return
            next_bookmark = time.monotonic() + self.bookmark_interval
            while True:
                with self.lock:
                    while True:
                        out = []
                        hist = self.history[res]
                        start = bisect.bisect_right(hist, cursor, key=_rv_of)
                        for _rv, etype, obj, old in hist[start:]:
                            ev = self._filter_event(etype, obj, old, ns, terms)
                            if ev is not None:
                                out.append(ev)
                        if self.history[res]:
                            cursor = max(cursor, self.history[res][-1][0])
                        now = time.monotonic()
                        if out or stream.drop or now >= deadline or (
                                bookmarks and now >= next_bookmark):
                            break
                        wait = deadline - now
                        if bookmarks:
                            wait = min(wait, next_bookmark - now)
                        self.lock.wait(max(wait, 0.001))
                    bookmark_rv = str(self.rv)
                for ev in out:
                    h.write_chunk(ev)
                if stream.drop or time.monotonic() >= deadline:
                    h.end_chunked()
                    return
                if bookmarks and time.monotonic() >= next_bookmark:
                    kind = RESOURCES[res][0]
                    h.write_chunk({"type": "BOOKMARK", "object": {
                        "kind": kind, "apiVersion": f"{res[0]}/{res[1]}" if res[0] else res[1],
                        "metadata": {"resourceVersion": bookmark_rv}}})
                    next_bookmark = time.monotonic() + self.bookmark_interval
        finally:
            with self.lock:
                if stream in self.watches:
                    self.watches.remove(stream)
            h.close_connection = True

    @staticmethod
    def _filter_event(etype: str, obj: dict, old: dict | None, ns: str | None,
                      terms: list) -> dict | None:
        if ns is not None and obj["metadata"].get("namespace") != ns:
            return None
        now_match = field_match(obj, terms)
        if etype == "MODIFIED" and terms:
            was = old is not None and field_match(old, terms)
            if was and not now_match:
                return {"type": "DELETED", "object": obj}
            if now_match and not was:
                return {"type": "ADDED", "object": obj}
        if not now_match:
            return None
        return {"type": etype, "object": obj}

    def _bind(self, h: _Handler, ns: str, name: str, body: dict) -> None:
        target = ((body or {}).get("target") or {}).get("name", "")
        uid = ((body or {}).get("metadata") or {}).get("uid")
        with self.lock:
            fault = self.bind_faults.popleft() if self.bind_faults else OK
            self.stats.binding_requests.append((f"{ns}/{name}", target, fault))
        if fault == HANG_BEFORE:
            time.sleep(self.hang)
            h.send_json(504, status_body(504, "Timeout", "request did not complete"))
            return
        if fault == CUT_BEFORE:
            _hard_close(h.connection)
            return
        if fault == ERROR_BEFORE:
            h.send_json(500, status_body(500, "InternalError", "injected failure"))
            return
        if fault == CONFLICT:
            h.send_json(409, status_body(409, "Conflict", "Operation cannot be fulfilled on "
                                         f'pods/binding "{name}": injected conflict'))
            return
        with self.lock:
            if fault == STOLEN:
                self._steal(ns, name, target)
            pod = self.objects[("", "v1", "pods")].get((ns, name))
            if pod is None:
                raise ApiError(404, "NotFound", f'pods "{name}" not found')
            if uid and pod["metadata"].get("uid") != uid:
                raise ApiError(409, "Conflict",
                               f'Operation cannot be fulfilled on pods/binding "{name}": '
                               f"Precondition failed: UID in precondition: {uid}, UID in "
                               f"object meta: {pod['metadata'].get('uid')}")
            if pod.get("spec", {}).get("nodeName"):
                raise ApiError(409, "Conflict",
                               f'Operation cannot be fulfilled on pods/binding "{name}": pod '
                               f'{name} is already assigned to node '
                               f'"{pod["spec"]["nodeName"]}"')
            if pod["metadata"].get("deletionTimestamp"):
                raise ApiError(409, "Conflict",
                               f"pod {name} is being deleted, cannot be assigned to a host")
            new = copy.deepcopy(pod)
            new["spec"]["nodeName"] = target
            conds = [c for c in new.setdefault("status", {}).get("conditions", [])
                     if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True",
                          "lastTransitionTime": now_rfc3339()})
            new["status"]["conditions"] = conds
            self._update(("", "v1", "pods"), (ns, name), new, check_rv=False)
            self.stats.bindings_applied.append((f"{ns}/{name}", target))
        if fault == HANG_AFTER:
            time.sleep(self.hang)
        elif fault == CUT_AFTER:
            _hard_close(h.connection)
            return
        elif fault == ERROR_AFTER:
            h.send_json(500, status_body(500, "InternalError", "injected failure"))
            return
        elif fault == CONFLICT_AFTER:
            h.send_json(409, status_body(409, "Conflict", "Operation cannot be fulfilled on "
                                         f'pods/binding "{name}": {ETCD_UNAVAILABLE}'))
            return
        h.send_json(201, status_body(201, "", ""))

    def _steal(self, ns: str, name: str, target: str) -> None:
        """Bind the pod to another node, as another scheduler would (under the lock)."""
        pod = self.objects[("", "v1", "pods")].get((ns, name))
        # the emptiest other node (another scheduler that overcommits nothing)
        load = [o.get("spec", {}).get("nodeName") for o in self.objects[("", "v1", "pods")]
                .values()]
        others = sorted((n for (_s, n) in self.objects[("", "v1", "nodes")] if n != target),
                        key=lambda n: (load.count(n), n))
        if pod is None or not others or pod.get("spec", {}).get("nodeName"):
            return
        new = copy.deepcopy(pod)
        new["spec"]["nodeName"] = others[0]
        self._update(("", "v1", "pods"), (ns, name), new, check_rv=False)
        self.stats.bindings_applied.append((f"{ns}/{name}", others[0]))
        self.stolen.append((f"{ns}/{name}", others[0]))

    # ------------------------------------------------------------------ assertions

    def bound_pods(self) -> dict[str, str]:
        """pod key -> node, for every bound pod."""
        with self.lock:
            return {f"{ns}/{n}": o["spec"]["nodeName"]
                    for (ns, n), o in self.objects[("", "v1", "pods")].items()
                    if o.get("spec", {}).get("nodeName")}

    def events(self, reason: str | None = None) -> list[dict]:
        with self.lock:
            evs = [copy.deepcopy(o) for o in self.objects[("events.k8s.io", "v1",
                                                            "events")].values()]
        return [e for e in evs if reason is None or e.get("reason") == reason]


def _rv_of(entry: tuple) -> int:
    return entry[0]


def _route(path: str) -> tuple[tuple[str, str, str], str | None, str | None, str | None] | None:
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    ns = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        ns, rest = rest[1], rest[2:]
    elif len(rest) in (1, 2) and rest[0] == "namespaces" and (group, version) == ("", "v1"):
        pass  # the namespaces resource itself
    if not rest:
        return None
    res = (group, version, rest[0])
    if res not in RESOURCES:
        return None
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    return res, ns, name, sub


def _hard_close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a real API server does not drop a burst of connects
    allow_reuse_address = True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_double: ApiServerDouble

    def setup(self) -> None:
        super().setup()
        with self.server_double.lock:
            self.server_double._conns.add(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        with self.server_double.lock:
            self.server_double._conns.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def read_body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        if not n:
            return None
        raw = self.rfile.read(n)
        try:
            return json.loads(raw)
        except ValueError:
            raise ApiError(400, "BadRequest", "body is not JSON") from None

    def send_json(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self._headers_buffer.append(b"\r\n")  # headers and body in one segment
        self.wfile.write(b"".join(self._headers_buffer) + data)
        self._headers_buffer = []
        self.wfile.flush()

    def start_chunked(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def write_chunk(self, ev: dict) -> None:
        data = json.dumps(ev).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        self.server_double.handle(self, "GET")

    def do_POST(self) -> None:
        self.server_double.handle(self, "POST")

    def do_PUT(self) -> None:
        self.server_double.handle(self, "PUT")

    def do_PATCH(self) -> None:
        self.server_double.handle(self, "PATCH")

    def do_DELETE(self) -> None:
        self.server_double.handle(self, "DELETE")


# ---------------------------------------------------------------------- object builders


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: int = 110,
         labels: dict[str, str] | None = None, **extra: Any) -> dict:
    lab = {"kubernetes.io/hostname": name, **(labels or {})}
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
           "spec": {}, "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)},
                                  "allocatable": {"cpu": cpu, "memory": memory,
                                                  "pods": str(pods)}}}
    obj.update(extra)
    return obj


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", *, namespace: str = "default",
        scheduler: str = "kubesched", node_name: str | None = None,
        labels: dict[str, str] | None = None, priority: int | None = None) -> dict:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}
