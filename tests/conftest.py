"""Test-wide setup: ``tests/`` importable (``shared_files``), and the ``shared`` fixture."""

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from shared_files import shared_path  # noqa: E402


@pytest.fixture
def shared() -> Path:
    """The ``../shared`` folder: skips the test where it is absent (fails under CI)."""
    path = shared_path()
    if path is None:
        pytest.skip("../shared is not beside the checkout")
    return path
