"""Fixtures for the kube backend tests: the API server double on loopback, kubeconfigs,
in-process ``kubesched run`` instances (stopped at the end of each test), and a real etcd and
kube-apiserver (``kube_envtest.py``) for the ``real_server`` tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import kube_envtest  # noqa: E402
from kube_double import ApiServerDouble  # noqa: E402
from kube_helpers import TOKEN  # noqa: E402
from kube_real import Cluster  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_server: runs against a real etcd and kube-apiserver (envtest "
        "binaries; KUBEBUILDER_ASSETS)")


@pytest.fixture
def double() -> Iterator[ApiServerDouble]:
    d = ApiServerDouble(token=TOKEN, bookmark_interval=0.3).start()
    yield d
    d.stop()


@pytest.fixture
def kubeconfig(double: ApiServerDouble, tmp_path: Path) -> str:
    return double.kubeconfig(str(tmp_path / "kubeconfig"))


@pytest.fixture
def runners() -> Iterator[list[Any]]:
    """In-process runners started by a test; stopped at its end."""
    started: list[Any] = []
    yield started
    for r in started:
        if not r.stopping.is_set():
            r.request_stop()
            r.shutdown()


@pytest.fixture(scope="session")
def envtest_assets() -> Path:
    """The envtest binaries' folder; without usable ones the real-server tests skip (a
    message naming KUBEBUILDER_ASSETS), and fail under CI=true."""
    try:
        return kube_envtest.find_assets()
    except kube_envtest.EnvtestUnavailable as e:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {e}", pytrace=False)
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def control_plane(envtest_assets: Path, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[kube_envtest.ControlPlane]:
    """One etcd and kube-apiserver for the session (starting them takes seconds); tests
    that restart them leave them running again."""
    cp = kube_envtest.ControlPlane(envtest_assets, tmp_path_factory.mktemp("envtest"))
    try:
        cp.start()
    except kube_envtest.ServerFailed as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture
def cluster(control_plane: kube_envtest.ControlPlane, tmp_path: Path, runners: list[Any]
            ) -> Iterator[Cluster]:
    """A test's namespace on the shared control plane; its runners stopped, then everything
    tests create removed (depends on ``runners`` so that it is torn down after them)."""
    if not control_plane.apiserver.alive() or not control_plane.etcd.alive():
        pytest.fail("the control plane was left stopped by an earlier test")
    c = Cluster(control_plane, tmp_path)
    yield c
    for r in runners:
        if not r.stopping.is_set():
            r.request_stop()
            r.shutdown()
    c.cleanup()
