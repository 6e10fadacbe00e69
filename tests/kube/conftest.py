"""Fixtures for the kube backend tests: the API server double on loopback, kubeconfigs, and
in-process ``kubesched run`` instances (stopped at the end of each test)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from kube_double import ApiServerDouble  # noqa: E402
from kube_helpers import TOKEN  # noqa: E402


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
