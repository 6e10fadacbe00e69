"""The real control plane's fixture on bad input: binaries missing, corrupt or of the wrong
version (one clear message), a port already taken (others picked), a server that never gets
ready (its last log lines, and no process left behind)."""

from __future__ import annotations

import hashlib
import lzma
import os
import socket
from pathlib import Path

import kube_envtest as ke
import pytest


def fake_binary(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def fake_assets(folder: Path, apiserver_version: str = "v1.36.2") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    fake_binary(folder, "kube-apiserver", f'echo "Kubernetes {apiserver_version}"\n')
    fake_binary(folder, "etcd", 'echo "etcd Version: 3.4.23"\n')
    return folder


def packed(folder: Path, files: dict[str, bytes], sums: dict[str, bytes] | None = None
           ) -> Path:
    """A ../shared/envtest lookalike: ``files`` xz-compressed, SHA256SUMS of ``sums``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / f"{name}.xz").write_bytes(lzma.compress(data))
    (folder / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in (sums or files).items()))
    return folder


def test_without_binaries_the_message_names_kubebuilder_assets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shared_files

    monkeypatch.delenv(ke.ASSETS_ENV, raising=False)
    monkeypatch.setenv("CI", "false")
    monkeypatch.setattr(shared_files, "SHARED", tmp_path / "no-shared")
    with pytest.raises(ke.EnvtestUnavailable, match="KUBEBUILDER_ASSETS"):
        ke.find_assets()
    monkeypatch.setenv("CI", "true")  # the conftest turns this into a failure
    with pytest.raises(ke.EnvtestUnavailable, match=r"CI=true.*KUBEBUILDER_ASSETS"):
        ke.find_assets()


def test_kubebuilder_assets_wins_and_is_checked(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    good = fake_assets(tmp_path / "good")
    monkeypatch.setenv(ke.ASSETS_ENV, str(good))
    assert ke.find_assets() == good
    monkeypatch.setenv(ke.ASSETS_ENV, str(fake_assets(tmp_path / "old", "v1.30.0")))
    with pytest.raises(ke.EnvtestUnavailable, match=r"v1\.30\.0.*need kube-apiserver v1\.36"):
        ke.find_assets()
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(ke.ASSETS_ENV, str(empty))
    with pytest.raises(ke.EnvtestUnavailable, match="etcd is missing"):
        ke.find_assets()


def test_unpacked_once_and_checked(tmp_path: Path) -> None:
    src = packed(tmp_path / "src", {"etcd": b"etcd bytes", "kube-apiserver": b"apiserver"})
    cache = tmp_path / "cache"
    dest = ke.unpack(src, cache)
    assert (dest / "etcd").read_bytes() == b"etcd bytes"
    assert os.access(dest / "kube-apiserver", os.X_OK)
    mtime = (dest / "etcd").stat().st_mtime_ns
    assert ke.unpack(src, cache) == dest
    assert (dest / "etcd").stat().st_mtime_ns == mtime  # not unpacked again


def test_a_corrupt_copy_is_refused(tmp_path: Path) -> None:
    src = packed(tmp_path / "src", {"etcd": b"tampered"}, sums={"etcd": b"original"})
    with pytest.raises(ke.EnvtestUnavailable, match="corrupt"):
        ke.unpack(src, tmp_path / "cache")
    (src / "etcd.xz").write_bytes((src / "etcd.xz").read_bytes()[:20])  # truncated
    with pytest.raises(ke.EnvtestUnavailable, match="cannot unpack"):
        ke.unpack(src, tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("etcd"))


def test_a_server_that_never_gets_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    assets = fake_assets(tmp_path / "assets")
    # an "etcd" that answers nothing: the fixture gives up, shows its log, kills it
    fake_binary(assets, "etcd", 'echo "starting the fake etcd"\necho "stuck on purpose"\n'
                "exec sleep 600\n")
    monkeypatch.setattr(ke, "ETCD_READY_TIMEOUT", 1.5)
    cp = ke.ControlPlane(assets, tmp_path / "work")
    with pytest.raises(ke.ServerFailed, match=r"(?s)etcd never became ready.*stuck on purpose"):
        cp.start()
    assert not ke._LIVE, "a process was left behind"
    assert cp.etcd.proc is None


@pytest.mark.real_server
def test_a_taken_port_is_replaced(envtest_assets: Path, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ports = iter([port, ke.free_port()])
        real = ke.free_port
        monkeypatch.setattr(ke, "free_port", lambda: next(ports, None) or real())
        cp = ke.ControlPlane(envtest_assets, tmp_path / "work")
        try:
            cp.start_etcd()
            assert cp.etcd.alive() and cp.etcd_port != port
        finally:
            cp.stop()
    assert not ke._LIVE
