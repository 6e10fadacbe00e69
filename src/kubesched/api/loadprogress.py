"""How far a scenario's load has got, on stderr (issue 22): a large dump takes seconds, and a
silent command looks hung.

On a terminal a live line counts the documents parsed, then the objects read, and is erased
when the load ends; a load shorter than ``DELAY`` shows nothing. When the stream is not a
terminal (a log, CI) a line is printed every ``INTERVAL`` seconds, so only loads that long
print any, and a last line says when the load ended. ``KUBESCHED_PROGRESS_INTERVAL``
(seconds) replaces both ``DELAY`` and ``INTERVAL`` (tests set it to 0).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

DELAY = 0.5  # a terminal's line appears once the load has taken this long
REFRESH = 0.1  # and is redrawn at most this often
INTERVAL = 5.0  # a line this often when not on a terminal
ENV_INTERVAL = "KUBESCHED_PROGRESS_INTERVAL"


def _interval_from_env() -> float | None:
    raw = os.environ.get(ENV_INTERVAL)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= 0 else None


class LoadProgress:
    """Counts what the scenario loader reports and shows it on ``stream``."""

    def __init__(self, stream: TextIO, *, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self.clock = clock
        env = _interval_from_env()
        self.delay = env if env is not None else DELAY
        self.every = (env if env is not None else REFRESH) if self.live else (
            env if env is not None else INTERVAL)
        self.start = clock()
        self._next = self.start + (self.delay if self.live else self.every)
        self.source = ""
        self.parsed = 0
        self.read = 0
        self.reading = False
        self.shown = False

    # -- what the loader reports

    def parsing(self, source: str) -> None:
        """A file's parse begins."""
        self.source, self.parsed, self.reading = source, 0, False

    def document(self) -> None:
        self.parsed += 1
        if self.clock() >= self._next:
            self._show()

    def objects(self) -> None:
        """The file is parsed: its documents are read into objects now."""
        self.reading = True

    def object(self) -> None:
        self.read += 1
        if self.clock() >= self._next:
            self._show()

    def done(self) -> None:
        if not self.shown:
            return
        if self.live:
            self.stream.write("\r\x1b[K")
        else:
            took = self.clock() - self.start
            self.stream.write(f"loading: {self.read} objects read in {took:.1f} s\n")
        self.stream.flush()

    # -- showing

    def text(self) -> str:
        if not self.reading:
            return f"loading {self.source}: {self.parsed} documents parsed"
        return f"loading {self.source}: {self.read} objects read"

    def _show(self) -> None:
        now = self.clock()
        self._next = now + self.every
        self.shown = True
        if self.live:
            self.stream.write(f"\r\x1b[K{self.text()}")
        else:
            self.stream.write(f"{self.text()} ({now - self.start:.0f} s)\n")
        self.stream.flush()
