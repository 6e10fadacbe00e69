"""Run the example's tests from a kubesched checkout without installing the example: its
``src`` on the path (an installed copy is found the same way, by its package name)."""

import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)
