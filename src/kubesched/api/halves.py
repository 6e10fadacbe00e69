"""A large YAML text's documents read in two processes at once (issue 22).

Reading block YAML is most of a large scenario's load and uses one core; these machines have
two. The text is cut at a document marker near its middle, a forked child reads the second
half while this process reads the first, and the child's documents come back pickled. The
documents of a text are read independently of one another (each has its own anchors), so
the halves' documents, one list after the other, are the whole text's.

Only on Linux (fork without exec is unsafe elsewhere), only with no other thread alive
(a child forked from a threaded process may inherit a held lock), and only for large texts
(a fork costs a few milliseconds). Anything the child cannot deliver — it failed, or was
killed — is read here instead, so the answer never depends on the child.
"""

from __future__ import annotations

import os
import pickle
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

#: texts shorter than this are read in this process only
MIN_CHARS = 1 << 20

_MARKER = re.compile(r"\n---[ ]*\n")

Reader = Callable[[str], "list[Any] | None"]


def read_in_two(text: str, read: Reader, min_chars: int | None = None) -> list[Any] | None:
    """``read(text)`` — the documents of ``text``, or None when ``read`` leaves the text to
    another reader — with its second half read by a forked child meanwhile where that is
    safe and worth it. ``read`` must read each document on its own (documents cut apart
    read as they read together) and answer None for a text it does not read whole."""
    if len(text) < (MIN_CHARS if min_chars is None else min_chars) or not _may_fork():
        return read(text)
    cut = _MARKER.search(text, len(text) // 2)
    if cut is None:
        return read(text)
    first, second = text[:cut.start() + 1], text[cut.start() + 1:]
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: read, send, and leave without running anything of the parent's
        code = 1
        try:
            os.close(rfd)
            data = pickle.dumps(read(second), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    try:
        head = read(first)
    finally:
        with os.fdopen(rfd, "rb") as inp:
            data = inp.read()
        _, status = os.waitpid(pid, 0)
    tail: list[Any] | None
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
        tail = pickle.loads(data)
    else:
        tail = read(second)
    if head is None or tail is None:
        return None
    return head + tail


def _may_fork() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1
