"""A real scheduler extender on loopback: a threaded http.server whose verbs are Python
functions a test sets, recording every request it gets."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

# A verb: request JSON -> (status code, body); a body that is not bytes is JSON-encoded.
Verb = Callable[[dict[str, Any]], tuple[int, Any]]


class FakeExtender:
    def __init__(self) -> None:
        self.verbs: dict[str, Verb] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.delay = 0.0
        # close the connection after answering without saying so (an idle keep-alive
        # connection the server dropped)
        self.drop_connections = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/scheduler"

    def calls(self, verb: str) -> list[dict[str, Any]]:
        return [body for path, body in self.requests if path.endswith("/" + verb)]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        ext = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Go's client uses
            disable_nagle_algorithm = True  # as Go's servers (else ~40 ms per answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                ext.requests.append((self.path, body))
                if ext.delay:
                    time.sleep(ext.delay)
                verb = self.path.rsplit("/", 1)[-1]
                fn = ext.verbs.get(verb)
                code, answer = (404, b"no such verb") if fn is None else fn(body)
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                if ext.drop_connections:
                    self.close_connection = True

        return Handler


@pytest.fixture
def extender() -> Iterator[FakeExtender]:
    ext = FakeExtender()
    try:
        yield ext
    finally:
        ext.close()


@pytest.fixture
def extender2() -> Iterator[FakeExtender]:
    ext = FakeExtender()
    try:
        yield ext
    finally:
        ext.close()


# ------------------------------------------------------------------ upstream's fake verbs
# (pkg/scheduler/testing/framework/fake_extender.go), answering over HTTP


def node_names(args: dict[str, Any]) -> list[str]:
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in args["Nodes"]["items"]]


def predicate_verb(fits: Callable[[str], bool], *, cache_capable: bool = True) -> Verb:
    """A filter verb: nodes where ``fits`` passes, the others failed with upstream's fake
    extender message."""

    def verb(args: dict[str, Any]) -> tuple[int, Any]:
        names = node_names(args)
        ok = [n for n in names if fits(n)]
        failed = {n: "FakeExtender: node failed" for n in names if not fits(n)}
        if cache_capable:
            return 200, {"NodeNames": ok, "FailedNodes": failed}
        items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in ok]
        return 200, {"Nodes": {"items": items}, "FailedNodes": failed}

    return verb


def error_verb(args: dict[str, Any]) -> tuple[int, Any]:
    return 200, {"Error": "some error"}


def prioritizer_verb(score: Callable[[str], int]) -> Verb:
    def verb(args: dict[str, Any]) -> tuple[int, Any]:
        return 200, [{"Host": n, "Score": score(n)} for n in node_names(args)]

    return verb
