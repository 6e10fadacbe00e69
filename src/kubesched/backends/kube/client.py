"""The API client: the official ``kubernetes`` library loads the configuration (kubeconfig
with its contexts, client certificates, tokens, exec and auth-provider plugins; or the
in-cluster service account, with token refresh) and builds the urllib3 transport (TLS,
proxies); kubesched sends its own requests over that transport and decodes the JSON answers
itself, straight into its object model (no generated models: see docs/kube.md for the
measurements behind this). Requests are JSON (upstream's default is protobuf).

Every request waits for the client-side rate limiter first (QPS/burst, as client-go's
token bucket), and fails with ``ApiError``: ``status`` is the HTTP status, or 0 when no
answer came (connection refused or cut, timeout) — then the request may or may not have been
applied (``outcome_unknown``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import orjson
import urllib3

log = logging.getLogger("kubesched.kube.client")

def json_loads(data: bytes | str) -> Any:
    """orjson: the faster decoder for large lists (measured in docs/kube.md)."""
    return orjson.loads(data)

USER_AGENT = "kubesched/0.1.0 (python)"
SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"


class ApiError(Exception):
    """A request that failed: ``status`` 0 means no answer came (transport error, timeout)."""

    def __init__(self, status: int, reason: str, message: str, *,
                 retry_after: float | None = None, body: Any = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        self.body = body

    @property
    def outcome_unknown(self) -> bool:
        """The server may have applied the request (no answer, or a 5xx)."""
        return self.status == 0 or self.status >= 500

    @property
    def retryable(self) -> bool:
        return self.status in (0, 429) or self.status >= 500

    @property
    def gone(self) -> bool:
        return self.status == 410


class TokenBucket:
    """client-go's flowcontrol token bucket: ``qps`` tokens a second, at most ``burst``
    stored. ``qps <= 0``: no limit."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self.waited = 0.0  # total seconds callers waited (for tests and logs)

    def acquire(self) -> None:
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            self.waited += wait
            time.sleep(wait)


def api_path(group: str, version: str, plural: str, namespace: str | None = None,
             name: str | None = None, subresource: str | None = None) -> str:
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    base += f"/{plural}"
    if name:
        base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
    return base


class WatchStream:
    """The lines of one watch response, decoded; ``close`` (from any thread) ends it."""

    def __init__(self, resp: urllib3.BaseHTTPResponse) -> None:
        self._resp = resp
        self._closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        buf = b""
        try:
            for chunk in self._resp.stream(65536, decode_content=True):
                if not chunk:
                    continue
                buf += chunk
                if b"\n" not in chunk:
                    continue
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield json_loads(line)
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            if self._closed:
                return
            raise ApiError(0, "StreamError", f"watch stream broken: {e}") from None
        if buf.strip() and not self._closed:
            raise ApiError(0, "StreamError", "watch stream ended inside an event")

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(Exception):
            self._resp.shutdown()  # unblocks a read in another thread
        with contextlib.suppress(Exception):
            self._resp.close()  # the connection is not reusable mid-stream
        with contextlib.suppress(Exception):
            self._resp.release_conn()


class KubeClient:
    """JSON requests to one API server, rate limited, over the ``kubernetes`` transport."""

    def __init__(self, configuration: Any, *, qps: float = 50.0, burst: int = 100,
                 request_timeout: float = 30.0, connect_timeout: float = 10.0,
                 description: str = "") -> None:
        from kubernetes.client import rest

        self.configuration = configuration
        self.host = configuration.host.rstrip("/")
        configuration.connection_pool_maxsize = max(
            configuration.connection_pool_maxsize or 0, 64)
        self._rest = rest.RESTClientObject(configuration)
        self.pool: urllib3.PoolManager = self._rest.pool_manager
        self.limiter = TokenBucket(qps, burst)
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self.description = description or self.host
        self.user_agent = USER_AGENT

    def with_own_limiter(self) -> KubeClient:
        """The same server and transport with a rate limiter of its own (kube-scheduler
        sends events through a second client, so that they never delay bindings)."""
        twin = copy.copy(self)
        twin.limiter = TokenBucket(self.limiter.qps, self.limiter.burst)
        return twin

    # ------------------------------------------------------------------ construction

    @classmethod
    def load(cls, kubeconfig: str | None = None, *, context: str | None = None,
             qps: float = 50.0, burst: int = 100, request_timeout: float = 30.0
             ) -> KubeClient:
        """From ``kubeconfig`` (a path); without one: the in-cluster service account when
        running in a pod, else ``$KUBECONFIG`` or ``~/.kube/config``, as kubectl would."""
        from kubernetes import client as kclient
        from kubernetes import config as kconfig

        conf = kclient.Configuration()
        if kubeconfig:
            if not os.path.exists(kubeconfig):
                raise FileNotFoundError(f"kubeconfig {kubeconfig}: no such file")
            kconfig.load_kube_config(config_file=kubeconfig, context=context,
                                     client_configuration=conf, persist_config=False)
            desc = f"{conf.host} (kubeconfig {kubeconfig})"
        elif os.environ.get(SERVICE_HOST_ENV) and not context:
            kconfig.load_incluster_config(client_configuration=conf)
            desc = f"{conf.host} (in-cluster)"
        else:
            path = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or os.path.expanduser(
                "~/.kube/config")
            kconfig.load_kube_config(config_file=path, context=context,
                                     client_configuration=conf, persist_config=False)
            desc = f"{conf.host} (kubeconfig {path})"
        return cls(conf, qps=qps, burst=burst, request_timeout=request_timeout,
                   description=desc)

    # ------------------------------------------------------------------ requests

    def _headers(self, content_type: str | None) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": self.user_agent}
        if content_type:
            h["Content-Type"] = content_type
        # auth_settings() runs the refresh hook (exec plugins, rotated in-cluster tokens)
        for auth in self.configuration.auth_settings().values():
            if auth.get("in") == "header" and auth.get("value"):
                h[auth["key"]] = auth["value"]
        return h

    def url(self, path: str, query: dict[str, Any] | None = None) -> str:
        if query:
            q = {k: ("true" if v is True else "false" if v is False else v)
                 for k, v in query.items() if v is not None}
            return f"{self.host}{path}?{urlencode(q)}"
        return f"{self.host}{path}"

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None,
                body: Any = None, content_type: str = "application/json",
                timeout: float | None = None) -> Any:
        """One request; the decoded JSON answer (None for an empty body)."""
        self.limiter.acquire()
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        t = self.request_timeout if timeout is None else timeout
        try:
            resp = self.pool.request(
                method, self.url(path, query), body=data,
                headers=self._headers(content_type if data is not None else None),
                timeout=urllib3.Timeout(connect=min(self.connect_timeout, t), read=t),
                retries=False, redirect=False, preload_content=True)
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ApiError(0, type(e).__name__, f"{method} {path}: {_short_error(e)}") from None
        return _decode(resp, method, path)

    def watch(self, path: str, query: dict[str, Any], *, timeout: float) -> WatchStream:
        """Open a watch (``query`` has ``watch=1``); ``timeout`` bounds the silence between
        two reads (the server sends bookmarks and closes at ``timeoutSeconds``)."""
        self.limiter.acquire()
        try:
            resp = self.pool.request(
                "GET", self.url(path, query), headers=self._headers(None),
                timeout=urllib3.Timeout(connect=self.connect_timeout, read=timeout),
                retries=False, redirect=False, preload_content=False)
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ApiError(0, type(e).__name__, f"watch {path}: {_short_error(e)}") from None
        if resp.status != 200:
            try:
                _decode(resp, "GET", path, data=resp.read())
            finally:
                resp.release_conn()
        return WatchStream(resp)


def _short_error(e: BaseException) -> str:
    text = str(e)
    return text if len(text) < 300 else text[:297] + "..."


def _decode(resp: urllib3.BaseHTTPResponse, method: str, path: str,
            data: bytes | None = None) -> Any:
    raw = resp.data if data is None else data
    body: Any = None
    if raw:
        try:
            body = json_loads(raw)
        except ValueError:
            body = None
    if 200 <= resp.status < 300:
        return body
    reason, message = "", raw.decode("utf-8", "replace")[:300] if raw else ""
    if isinstance(body, dict) and body.get("kind") == "Status":
        reason = body.get("reason") or ""
        message = body.get("message") or message
    retry_after = None
    ra = resp.headers.get("Retry-After")
    if ra:
        try:
            retry_after = float(ra)
        except ValueError:
            retry_after = None
    raise ApiError(resp.status, reason or str(resp.reason or ""), f"{method} {path}: {message}",
                   retry_after=retry_after, body=body)
