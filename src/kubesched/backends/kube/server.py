"""``/healthz``, ``/livez``, ``/readyz`` and ``/metrics`` over plain HTTP (kube-scheduler
serves them over HTTPS on 10259 with delegated authn/authz; kubesched serves them without
TLS or authentication: expose the port only to the kubelet's probes and to Prometheus).

Each check is a name and a callable returning None (ok) or a reason; ``?verbose`` lists
them, as the upstream endpoints do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("kubesched.kube.server")

Check = Callable[[], str | None]


def parse_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep:
        raise ValueError(f"address {address!r}: expected HOST:PORT")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


class HealthServer:
    def __init__(self, address: str, *, healthz: dict[str, Check], readyz: dict[str, Check],
                 metrics: Callable[[], tuple[bytes, str]] | None = None) -> None:
        self.healthz = healthz
        self.readyz = readyz
        self.metrics = metrics
        host, port = parse_address(address)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                outer._serve(self)

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        bound_host, bound_port = self._httpd.socket.getsockname()[:2]
        self.host: str = bound_host
        self.port: int = bound_port
        self._thread: threading.Thread | None = None

    def start(self) -> HealthServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.2}, daemon=True,
                                        name="health-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        url = urlsplit(h.path)
        path = url.path.rstrip("/") or "/"
        try:
            if path == "/metrics" and self.metrics is not None:
                body, ctype = self.metrics()
                self._send(h, 200, body, ctype)
            elif path in ("/healthz", "/livez"):
                self._checks(h, path[1:], self.healthz, "verbose" in url.query)
            elif path == "/readyz":
                self._checks(h, "readyz", {**self.healthz, **self.readyz},
                             "verbose" in url.query)
            else:
                self._send(h, 404, b"404 page not found\n", "text/plain; charset=utf-8")
        except Exception:  # never let a probe kill the server
            log.exception("serving %s", path)
            self._send(h, 500, b"internal error\n", "text/plain; charset=utf-8")

    def _checks(self, h: BaseHTTPRequestHandler, what: str, checks: dict[str, Check],
                verbose: bool) -> None:
        lines = []
        failed = False
        for name, fn in checks.items():
            reason = fn()
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                failed = True
                lines.append(f"[-]{name} failed: {reason}")
        if failed:
            body = "\n".join(lines) + f"\n{what} check failed\n"
            self._send(h, 500, body.encode(), "text/plain; charset=utf-8")
        elif verbose:
            body = "\n".join(lines) + f"\n{what} check passed\n"
            self._send(h, 200, body.encode(), "text/plain; charset=utf-8")
        else:
            self._send(h, 200, b"ok", "text/plain; charset=utf-8")

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, code: int, body: bytes, ctype: str) -> None:
        h.send_response(code)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("X-Content-Type-Options", "nosniff")
        h.end_headers()
        h.wfile.write(body)
