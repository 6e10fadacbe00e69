"""A throw-away Kubernetes control plane for tests: real etcd and kube-apiserver on loopback,
from envtest binaries (controller-runtime's layout: ``KUBEBUILDER_ASSETS`` names a folder
holding ``etcd`` and ``kube-apiserver``).

Where the binaries come from: ``$KUBEBUILDER_ASSETS`` when set (the user's own, used as
they are); else the xz-compressed copies in ``../shared/envtest`` (through
``tests/shared_files.py``), unpacked once with Python's ``lzma`` into a cache folder keyed by
their ``SHA256SUMS`` and checked against it. Either way the versions are checked
(kube-apiserver v1.36.*, etcd 3.4 or newer): a wrong or corrupt binary is one clear message,
never a half-working server.

``ControlPlane`` starts etcd and kube-apiserver on free loopback ports (others picked when a
port turns out taken), with a static admin token, RBAC, a self-signed serving certificate
(``cryptography``) and a service-account key pair (so TokenRequest works and
``deploy/rbac.yaml``'s ServiceAccount can be used as is); it waits for ``/readyz`` and, when
the server never gets ready, stops what it started and fails with the last lines of the
server's log. It stops exactly the processes it started, by PID (SIGTERM, then SIGKILL),
also from ``atexit`` after an interrupted run.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import lzma
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ASSETS_ENV = "KUBEBUILDER_ASSETS"
CACHE_ENV = "KUBESCHED_ENVTEST_CACHE"
APISERVER_VERSION = re.compile(r"Kubernetes v1\.36\.\d+")
ETCD_VERSION = re.compile(r"etcd Version: (\d+)\.(\d+)\.(\d+)")
ETCD_MIN = (3, 4)
ADMIN_TOKEN = "kubesched-envtest-admin"  # a loopback test server's
READY_TIMEOUT = 60.0
ETCD_READY_TIMEOUT = 30.0


class EnvtestUnavailable(RuntimeError):
    """The binaries are missing, corrupt or of the wrong version (one message for all)."""


def _ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


# ---------------------------------------------------------------------------- binaries


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _sums(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line.strip():
            digest, name = line.split()
            out[name.lstrip("*")] = digest
    return out


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "kubesched-envtest"


def unpack(src: Path, cache: Path | None = None) -> Path:
    """``src``'s ``*.xz`` unpacked into ``cache/<key>`` (key: the SHA256SUMS' own hash), each
    checked against SHA256SUMS; done once (a ``verified`` stamp), under a file lock so two
    test runs at once do not race."""
    sums_text = (src / "SHA256SUMS").read_text()
    sums = _sums(sums_text)
    key = hashlib.sha256(sums_text.encode()).hexdigest()[:16]
    dest = (cache or cache_root()) / key
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / "verified"
    with (dest / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and all((dest / n).exists() for n in sums):
            return dest
        for name, digest in sums.items():
            packed = src / f"{name}.xz"
            if not packed.exists():
                raise EnvtestUnavailable(f"{packed} is missing (named in SHA256SUMS)")
            tmp = dest / f".{name}.part"
            try:
                with lzma.open(packed) as fin, tmp.open("wb") as fout:
                    shutil.copyfileobj(fin, fout, 1 << 20)
            except (lzma.LZMAError, EOFError) as e:
                tmp.unlink(missing_ok=True)
                raise EnvtestUnavailable(f"{packed}: cannot unpack: {e}") from None
            got = _sha256(tmp)
            if got != digest:
                tmp.unlink(missing_ok=True)
                raise EnvtestUnavailable(f"{packed} unpacks to sha256 {got}, SHA256SUMS says "
                                         f"{digest}: a corrupt copy")
            tmp.chmod(0o755)
            tmp.replace(dest / name)
        stamp.write_text(sums_text)
    return dest


def _version_output(binary: Path) -> str:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             timeout=30)
    except OSError as e:
        raise EnvtestUnavailable(f"{binary}: cannot run it: {e}") from None
    return out.stdout + out.stderr


def check_versions(folder: Path) -> None:
    for name in ("etcd", "kube-apiserver"):
        b = folder / name
        if not b.exists():
            raise EnvtestUnavailable(f"{b} is missing")
        if not os.access(b, os.X_OK):
            raise EnvtestUnavailable(f"{b} is not executable")
    text = _version_output(folder / "kube-apiserver")
    if not APISERVER_VERSION.search(text):
        raise EnvtestUnavailable(f"{folder / 'kube-apiserver'} says {text.strip()[:80]!r}; "
                                 "the tests need kube-apiserver v1.36")
    m = ETCD_VERSION.search(_version_output(folder / "etcd"))
    if not m or (int(m[1]), int(m[2])) < ETCD_MIN:
        raise EnvtestUnavailable(f"{folder / 'etcd'}: etcd 3.4 or newer needed")


def find_assets() -> Path:
    """The folder holding usable ``etcd`` and ``kube-apiserver`` (see the module doc);
    ``EnvtestUnavailable`` naming ``KUBEBUILDER_ASSETS`` when there is none."""
    env = os.environ.get(ASSETS_ENV)
    if env:
        folder = Path(env)
        check_versions(folder)
        return folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from shared_files import SharedMissing, envtest_path
    finally:
        sys.path.pop(0)
    try:
        src = envtest_path()
    except SharedMissing as e:
        raise EnvtestUnavailable(f"{e}; or set {ASSETS_ENV} to a folder holding etcd and "
                                 "kube-apiserver v1.36") from None
    if src is None:
        raise EnvtestUnavailable(f"no envtest binaries: set {ASSETS_ENV} to a folder holding "
                                 "etcd and kube-apiserver v1.36 (or provide ../shared/envtest)")
    folder = unpack(src)
    check_versions(folder)
    return folder


# ---------------------------------------------------------------------------- certificates


def _write_certs(d: Path) -> None:
    """A self-signed serving certificate for 127.0.0.1 and localhost (its own CA, so the
    kubeconfig trusts exactly it) and an RSA key pair for service-account tokens."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-envtest")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (d / "serving.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (d / "serving.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (d / "sa.key").write_bytes(sa.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    (d / "sa.pub").write_bytes(sa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


# ---------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_LIVE: dict[int, subprocess.Popen[bytes]] = {}  # every process started here, by PID


def track(proc: subprocess.Popen[bytes]) -> None:
    """Stopped at exit if still running (a process started elsewhere, e.g. kube-scheduler)."""
    _LIVE[proc.pid] = proc


def stop(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    _LIVE.pop(proc.pid, None)


@atexit.register
def _stop_leftovers() -> None:
    """An interrupted run (KeyboardInterrupt past the fixtures) leaves nothing behind."""
    for proc in list(_LIVE.values()):
        stop(proc, grace=1.0)


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class ServerFailed(RuntimeError):
    pass


_PORT_TAKEN = ("address already in use", "bind: address already in use")


@dataclass
class _Proc:
    name: str
    args: Callable[[], list[str]]
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(self.args(), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        track(self.proc)

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is not None:
            if kill and self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.proc.pid, signal.SIGKILL)
            stop(self.proc)
            self.proc = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def port_taken(self) -> bool:
        return any(s in _tail(self.log, 60).lower() for s in _PORT_TAKEN)


class ControlPlane:
    """etcd + kube-apiserver in ``workdir`` (see the module doc)."""

    def __init__(self, assets: Path, workdir: Path, *,
                 extra_apiserver_args: list[str] | None = None) -> None:
        self.assets = assets
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.extra = extra_apiserver_args or []
        _write_certs(self.dir)
        (self.dir / "tokens.csv").write_text(
            f'{ADMIN_TOKEN},kubesched-envtest-admin,0,"system:masters"\n')
        self.etcd_port = self.peer_port = self.port = 0
        self.etcd = _Proc("etcd", self._etcd_args, self.dir / "etcd.log")
        self.apiserver = _Proc("kube-apiserver", self._apiserver_args,
                               self.dir / "kube-apiserver.log")
        self._ssl = ssl.create_default_context(cafile=str(self.dir / "serving.crt"))

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _etcd_args(self) -> list[str]:
        c = f"http://127.0.0.1:{self.etcd_port}"
        return [str(self.assets / "etcd"), "--name", "envtest",
                "--data-dir", str(self.dir / "etcd-data"),
                "--listen-client-urls", c, "--advertise-client-urls", c,
                "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_port}",
                "--initial-cluster", f"envtest=http://127.0.0.1:{self.peer_port}",
                "--unsafe-no-fsync"]

    def _apiserver_args(self) -> list[str]:
        d = self.dir
        return [str(self.assets / "kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--tls-cert-file={d / 'serving.crt'}",
                f"--tls-private-key-file={d / 'serving.key'}",
                f"--client-ca-file={d / 'serving.crt'}",
                f"--token-auth-file={d / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={d / 'sa.pub'}",
                f"--service-account-signing-key-file={d / 'sa.key'}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount",
                "--endpoint-reconciler-type=none",
                "--runtime-config=resource.k8s.io/v1beta2=true",
                *self.extra]

    # -------------------------------------------------------------- lifecycle

    def start(self) -> ControlPlane:
        try:
            self.start_etcd()
            self.start_apiserver()
        except BaseException:
            self.stop()
            raise
        return self

    def start_etcd(self, *, same_ports: bool = False) -> None:
        for _attempt in range(3):
            if not same_ports or not self.etcd_port:
                self.etcd_port, self.peer_port = free_port(), free_port()
            self.etcd.start()
            if self._wait(self.etcd, self._etcd_ready, ETCD_READY_TIMEOUT):
                return
            self.etcd.stop(kill=True)
            if same_ports or not self.etcd.port_taken():
                break
        raise ServerFailed(f"etcd never became ready; its last log lines:\n"
                           f"{_tail(self.etcd.log)}")

    def start_apiserver(self, *, same_port: bool = True) -> None:
        for _attempt in range(3):
            if not same_port or not self.port:
                self.port = free_port()
            self.apiserver.start()
            if self._wait(self.apiserver, self._apiserver_ready, READY_TIMEOUT):
                return
            self.apiserver.stop(kill=True)
            if not self.apiserver.port_taken():
                break
            same_port = False
        raise ServerFailed(f"kube-apiserver never became ready on {self.url}; its last log "
                           f"lines:\n{_tail(self.apiserver.log)}")

    def _wait(self, p: _Proc, ready: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not p.alive():
                return False
            if ready():
                return True
            time.sleep(0.1)
        return False

    def _etcd_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.etcd_port}/health",
                                        timeout=2) as r:
                return bool(json.loads(r.read()).get("health") == "true")
        except (OSError, ValueError):
            return False

    def _apiserver_ready(self) -> bool:
        try:
            self.request("GET", "/readyz", timeout=2)
            return True
        except (OSError, ApiFailure):
            return False

    def stop(self) -> None:
        self.apiserver.stop(kill=True)
        self.etcd.stop()

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -------------------------------------------------------------- requests

    def request(self, method: str, path: str, body: Any = None, *, token: str = ADMIN_TOKEN,
                content_type: str = "application/json", timeout: float = 30.0) -> Any:
        """One request as the admin (system:masters); the decoded answer, or ApiFailure."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {token}", "Accept": "application/json",
            **({"Content-Type": content_type} if data is not None else {})})
        try:
            with urllib.request.urlopen(req, context=self._ssl, timeout=timeout) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            raise ApiFailure(e.code, e.read().decode(errors="replace")) from None
        return json.loads(raw) if raw and raw[:1] in b"{[" else raw.decode()

    def await_priority_class(self, name: str, timeout: float = 10.0) -> None:
        """Returns once the Priority admission plugin admits pods of class ``name``: it reads
        classes from an informer, so a pod created just after its class may be refused
        (403, no PriorityClass with name ...). Asked with a dry-run pod, which runs admission
        and stores nothing."""
        probe = {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "priority-class-probe"},
                 "spec": {"priorityClassName": name,
                          "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.request("POST", "/api/v1/namespaces/default/pods?dryRun=All", probe)
                return
            except ApiFailure as e:
                if e.code != 403 or "no PriorityClass" not in e.body \
                        or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def kubeconfig(self, path: Path, token: str = ADMIN_TOKEN, user: str = "admin") -> Path:
        ca = base64.b64encode((self.dir / "serving.crt").read_bytes()).decode()
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "envtest",
            "clusters": [{"name": "envtest", "cluster": {
                "server": self.url, "certificate-authority-data": ca}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "envtest", "context": {"cluster": "envtest",
                                                         "user": user}}]}))
        return path

    def service_account_token(self, namespace: str, name: str, seconds: int = 3600) -> str:
        """A bound token for a ServiceAccount (TokenRequest), as a pod would mount it."""
        out = self.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}"
                           "/token", {"apiVersion": "authentication.k8s.io/v1",
                                      "kind": "TokenRequest",
                                      "spec": {"expirationSeconds": seconds}})
        return str(out["status"]["token"])


class ApiFailure(Exception):
    def __init__(self, code: int, body: str) -> None:
        super().__init__(f"{code}: {body[:500]}")
        self.code = code
        self.body = body


def temp_dir(prefix: str = "kubesched-envtest-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
