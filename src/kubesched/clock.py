"""Clocks: the core never reads the wall clock itself."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float, cancelled: threading.Event | None = None) -> bool:
        """Let ``seconds`` pass on this clock, or less if ``cancelled`` is set meanwhile;
        True when it was."""


class RealClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float, cancelled: threading.Event | None = None) -> bool:
        if cancelled is not None:
            return cancelled.wait(seconds)
        time.sleep(seconds)
        return False


class VirtualClock:
    """Simulated time in seconds, advanced by the simulator."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float, cancelled: threading.Event | None = None) -> bool:
        """The simulator runs on one thread: nothing else happens while a virtual sleep
        lasts, so the time just passes."""
        if cancelled is not None and cancelled.is_set():
            return True
        self.advance_to(self._now + seconds)
        return False

    def advance_to(self, t: float) -> None:
        if t > self._now:
            self._now = t
