"""CycleState: per-scheduling-cycle data plugins share, cloned for what-if evaluation."""

from __future__ import annotations

import copy
from typing import Any


class CycleState:
    __slots__ = ("_data", "record_plugin_metrics", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """Values with a ``clone()`` method are cloned by it (as upstream's StateData.Clone);
        other values are shared, so plugins keep mutable state behind ``clone``."""
        c = CycleState()
        for k, v in self._data.items():
            cl = getattr(v, "clone", None)
            c._data[k] = cl() if cl is not None else copy.copy(v)
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        c.record_plugin_metrics = self.record_plugin_metrics
        return c
