"""Upstream's ``HTTPExtender`` (``pkg/scheduler/extender.go``): a scheduler extender reached
by POSTing JSON to ``urlPrefix/verb``.

Errors carry the text upstream's would (Go's net/http and encoding/json wording), since it
ends up in the pod's condition and events.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from kubesched.api.encode import encode_node, encode_pod
from kubesched.api.types import Node, Pod
from kubesched.config.args import parse_duration
from kubesched.extender import wire
from kubesched.framework.extender import ExtenderError, FilterResult, Victims
from kubesched.framework.node_info import NodeInfo

DEFAULT_TIMEOUT = 5.0  # DefaultExtenderTimeout


class HTTPExtender:
    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self.url_prefix: str = cfg["urlPrefix"]
        self.filter_verb: str = cfg.get("filterVerb", "")
        self.prioritize_verb: str = cfg.get("prioritizeVerb", "")
        self.preempt_verb: str = cfg.get("preemptVerb", "")
        self.bind_verb: str = cfg.get("bindVerb", "")
        self._weight = int(cfg.get("weight", 0))
        self.node_cache_capable = bool(cfg.get("nodeCacheCapable", False))
        self.managed_resources = frozenset(r["name"] for r in cfg.get("managedResources") or ())
        self.ignorable = bool(cfg.get("ignorable", False))
        timeout = parse_duration(cfg.get("httpTimeout") or "0")
        self.timeout = timeout if timeout != 0 else DEFAULT_TIMEOUT
        parts = urlsplit(self.url_prefix)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = parts.path.rstrip("/")
        self._ssl = _ssl_context(cfg) if self._https else None
        self._server_name = (cfg.get("tlsConfig") or {}).get("serverName") or None
        # Idle keep-alive connections: one cycle makes one call per verb, and a fresh TCP
        # (or TLS) handshake per call would dominate the cost on loopback.
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._pod_memo: tuple[Pod | None, str] = (None, "")
        self._node_memo: dict[int, tuple[Node, str]] = {}

    # ------------------------------------------------------------------ what it does

    @property
    def name(self) -> str:
        return self.url_prefix

    @property
    def weight(self) -> int:
        return self._weight

    def is_ignorable(self) -> bool:
        return self.ignorable

    def is_filter(self) -> bool:
        return self.filter_verb != ""

    def is_prioritizer(self) -> bool:
        return self.prioritize_verb != ""

    def is_binder(self) -> bool:
        return self.bind_verb != ""

    def supports_preemption(self) -> bool:
        return self.preempt_verb != ""

    def is_interested(self, pod: Pod) -> bool:
        """A pod requesting (or limiting) one of the managed resources, in a container or an
        init container; every pod when none is managed."""
        if not self.managed_resources:
            return True
        for c in (*pod.spec.containers, *pod.spec.init_containers):
            if any(r in self.managed_resources for r in c.requests) or any(
                    r in self.managed_resources for r in c.limits):
                return True
        return False

    # ------------------------------------------------------------------ the verbs

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterResult:
        names = [ni.name for ni in nodes]
        if not self.filter_verb:
            return FilterResult(names)
        res = _decode(self._send(self.filter_verb, self._args(pod, nodes)), wire.FILTER_RESULT)
        return self._filter_result(res, set(names))

    def _filter_result(self, res: dict[str, Any], given: set[str]) -> FilterResult:
        if res["Error"]:
            raise ExtenderError(res["Error"])
        passed: list[str] = []
        if self.node_cache_capable and res["NodeNames"] is not None:
            candidates = res["NodeNames"]
        elif res["Nodes"] is not None:
            # Upstream takes the Node objects the extender sent back; kubesched keeps its own
            # by name (a node the extender made up has no NodeInfo to score).
            candidates = [(item or {}).get("ObjectMeta") or {} for item in
                          res["Nodes"]["Items"] or ()]
            candidates = [m.get("Name") or "" for m in candidates]
        else:
            candidates = []
        for name in candidates:
            name = name or ""
            if name not in given:
                raise ExtenderError(f'extender "{self.url_prefix}" claims a filtered node '
                                    f'"{name}" which is not found in the input node list')
            passed.append(name)
        return FilterResult(passed, res["FailedNodes"] or {},
                            res["FailedAndUnresolvableNodes"] or {})

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[list[tuple[str, int]], int]:
        if not self.prioritize_verb:
            return [(ni.name, 0) for ni in nodes], 0
        body = self._send(self.prioritize_verb, self._args(pod, nodes))
        res = _decode(body, wire.HOST_PRIORITY_LIST) or []
        out = [((hp or {}).get("Host") or "", (hp or {}).get("Score") or 0) for hp in res]
        return out, self._weight

    def bind(self, pod: Pod, node: str) -> None:
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid,
                "Node": node}
        res = _decode(self._send(self.bind_verb, json.dumps(args).encode()),
                      wire.BINDING_RESULT)
        if res["Error"]:
            raise ExtenderError(res["Error"])

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                           node_infos: Mapping[str, NodeInfo]) -> dict[str, Victims]:
        if not self.preempt_verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.url_prefix} "
                                "but run into ProcessPreemption")
        pod_json = self._pod_json(pod)
        if self.node_cache_capable:
            meta = {n: {"Pods": [{"UID": p.uid} for p in v.pods],
                        "NumPDBViolations": v.num_pdb_violations} for n, v in victims.items()}
            body = (f'{{"Pod":{pod_json},"NodeNameToVictims":null,'
                    f'"NodeNameToMetaVictims":{json.dumps(meta)}}}')
        else:
            full = ",".join(
                f'{json.dumps(n)}:{{"Pods":[{",".join(self._pod_json(p) for p in v.pods)}],'
                f'"NumPDBViolations":{v.num_pdb_violations}}}' for n, v in victims.items())
            body = (f'{{"Pod":{pod_json},"NodeNameToVictims":{{{full}}},'
                    '"NodeNameToMetaVictims":null}')
        res = _decode(self._send(self.preempt_verb, body.encode()), wire.PREEMPTION_RESULT)
        out: dict[str, Victims] = {}
        for node_name, mv in (res["NodeNameToMetaVictims"] or {}).items():
            ni = node_infos.get(node_name)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
            mv = mv or {}
            pods: list[Pod] = []
            for mp in mv.get("Pods") or ():
                uid = (mp or {}).get("UID") or ""
                found = next((p for p in ni.pods if p.uid == uid), None)
                if found is None:
                    # Go prints the *MetaPod with %v: &{uid}
                    raise ExtenderError(
                        f"extender: {self.url_prefix} claims to preempt pod (UID: &{{{uid}}}) "
                        f"on node: {node_name}, but the pod is not found on that node")
                pods.append(found)
            out[node_name] = Victims(pods, mv.get("NumPDBViolations") or 0)
        return out

    # ------------------------------------------------------------------ encoding

    def _pod_json(self, pod: Pod) -> str:
        memo_pod, memo = self._pod_memo
        if memo_pod is pod:
            return memo
        text = json.dumps(encode_pod(pod), separators=(",", ":"))
        self._pod_memo = (pod, text)
        return text

    def _node_json(self, node: Node) -> str:
        hit = self._node_memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        if len(self._node_memo) > 100_000:
            self._node_memo.clear()
        text = json.dumps(encode_node(node), separators=(",", ":"))
        self._node_memo[id(node)] = (node, text)
        return text

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> bytes:
        """ExtenderArgs: the node names for a nodeCacheCapable extender, else a v1.NodeList;
        the other field is null, as Go marshals a nil pointer."""
        pod_json = self._pod_json(pod)
        if self.node_cache_capable:
            names = json.dumps([ni.name for ni in nodes], separators=(",", ":"))
            return f'{{"Pod":{pod_json},"Nodes":null,"NodeNames":{names}}}'.encode()
        items = ",".join(self._node_json(ni.node) for ni in nodes if ni.node is not None)
        return (f'{{"Pod":{pod_json},"Nodes":{{"metadata":{{}},"items":[{items}]}},'
                '"NodeNames":null}').encode()

    # ------------------------------------------------------------------ transport

    def url(self, verb: str) -> str:
        return self.url_prefix.rstrip("/") + "/" + verb

    def _connection(self) -> http.client.HTTPConnection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        if self._https:
            return _HTTPSConnection(self._host, self._port, timeout=self.timeout,
                                    context=self._ssl, server_name=self._server_name)
        return _HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _send(self, verb: str, body: bytes) -> bytes:
        url = self.url(verb)
        path = self._path + "/" + verb
        headers = {"Content-Type": "application/json"}
        for attempt in (0, 1):
            conn = self._connection()
            reused = conn.sock is not None
            try:
                conn.request("POST", path, body, headers)
                resp = conn.getresponse()
                data = resp.read()
            except TimeoutError:
                conn.close()
                raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                    "(Client.Timeout exceeded while awaiting headers)") from None
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError) as e:
                conn.close()
                if reused and attempt == 0:
                    continue  # the server closed an idle keep-alive connection: redial
                raise ExtenderError(f'Post "{url}": {_go_net_error(e, self._host, self._port)}'
                                    ) from None
            except OSError as e:
                conn.close()
                raise ExtenderError(f'Post "{url}": {_go_net_error(e, self._host, self._port)}'
                                    ) from None
            if resp.will_close:
                conn.close()
            else:
                with self._lock:
                    self._idle.append(conn)
            if resp.status != 200:
                raise ExtenderError(f"failed {verb} with extender at URL {url}, "
                                    f"code {resp.status}")
            return data
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()


def _decode(body: bytes, schema: Any) -> Any:
    """An answer as Go decodes it; an undecodable one is the call's error."""
    try:
        return wire.decode(body, schema)
    except wire.DecodeError as e:
        raise ExtenderError(str(e)) from None


def _go_net_error(e: OSError, host: str, port: int | None) -> str:
    addr = f"{host}:{port}" if port else host
    if isinstance(e, ConnectionRefusedError):
        return f"dial tcp {addr}: connect: connection refused"
    if isinstance(e, socket.gaierror):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(e, http.client.RemoteDisconnected | ConnectionResetError):
        return "EOF"
    if isinstance(e, ssl.SSLError):
        return f"tls: {e.reason or e}"
    return str(e.strerror or e)


def _no_delay(sock: socket.socket | None) -> None:
    # http.client sends a large body apart from the headers; with Nagle's algorithm that
    # meets the server's delayed ACK and costs ~40 ms per call. Go's dialer sets this too.
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _HTTPConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _no_delay(self.sock)


class _HTTPSConnection(http.client.HTTPSConnection):
    """tlsConfig.serverName: the name verified and sent as SNI, whatever the URL's host."""

    def __init__(self, host: str, port: int | None, *, timeout: float,
                 context: ssl.SSLContext | None, server_name: str | None) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._server_name = server_name

    def connect(self) -> None:
        if self._server_name is None:
            super().connect()
        else:
            http.client.HTTPConnection.connect(self)
            ctx = self._context  # type: ignore[attr-defined]  # set by HTTPSConnection
            self.sock = ctx.wrap_socket(self.sock, server_hostname=self._server_name)
        _no_delay(self.sock)


def _data(value: str) -> bytes:
    """A ``[]byte`` config field: base64 in YAML/JSON, as Go decodes it."""
    return base64.b64decode(value)


def _ssl_context(cfg: Mapping[str, Any]) -> ssl.SSLContext:
    """makeTransport: tlsConfig as client-go's TLSConfigFor reads it; with enableHTTPS and
    no CA the server's certificate is not verified (upstream sets Insecure)."""
    tls = cfg.get("tlsConfig") or {}
    has_ca = bool(tls.get("caFile") or tls.get("caData"))
    insecure = bool(tls.get("insecure")) or (bool(cfg.get("enableHTTPS")) and not has_ca)
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if tls.get("caFile") or tls.get("caData"):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if tls.get("caFile"):
            ctx.load_verify_locations(cafile=tls["caFile"])
        if tls.get("caData"):
            ctx.load_verify_locations(cadata=_data(tls["caData"]).decode())
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    cert = _data(tls["certData"]) if tls.get("certData") else None
    key = _data(tls["keyData"]) if tls.get("keyData") else None
    if tls.get("certFile") or cert is not None:
        with tempfile.TemporaryDirectory() as tmp:
            cert_path = tls.get("certFile") or _write(tmp, "cert.pem", cert or b"")
            key_path = tls.get("keyFile") or (_write(tmp, "key.pem", key) if key else None)
            ctx.load_cert_chain(cert_path, key_path)
    return ctx


def _write(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path
