"""A large YAML text's documents read in two processes at once (issue 22).

Reading block YAML is most of a large scenario's load and uses one core; these machines have
two. The text is cut at a document marker near its middle and a forked child reads the
second half — and runs ``prepare`` over its documents, the per-document work that needs
nothing but the document (the API server's decoding checks) — while this process reads the
first half and turns its documents into objects. The child's documents and ``prepare``'s
answers come back pickled. The documents of a text are read independently of one another
(each has its own anchors), so the parts' documents, one list after the other, are the
whole text's.

Only on Linux (fork without exec is unsafe elsewhere), only with no other thread alive
(a child forked from a threaded process may inherit a held lock), and only for large texts
(a fork costs a few milliseconds). Anything the child cannot deliver — it failed, or was
killed — is read here instead, so the answer never depends on the child.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: texts shorter than this are read in this process only
MIN_CHARS = 1 << 20

_MARKER = re.compile(r"\n---[ ]*\n")

# the documents of a text, or None when the reader leaves the text to another reader
Reader = Callable[[str], "list[Any] | None"]
# one answer per document, picklable
Prepare = Callable[[list[Any]], list[Any]]


@dataclass(slots=True)
class Part:
    """A part of the text, with the documents read from it."""

    text: str
    line: int  # lines of the whole text before this part
    docs: list[Any] | None  # None: the reader left this part to another reader
    prepared: list[Any] | None  # ``prepare``'s answers, when the child ran it


def read_parts(text: str, read: Reader, prepare: Prepare | None = None,
               min_chars: int | None = None) -> Iterator[Part]:
    """The parts of ``text`` in order, with their documents ``read(part)``: the whole text
    as one part, or its first half read here and its second half read by a forked child
    meanwhile, where that is safe and worth it (the second yielded when the caller has
    done with the first). ``read`` must read each document on its own (documents cut apart
    read as they read together); ``prepare`` must not modify the documents."""
    if len(text) < (MIN_CHARS if min_chars is None else min_chars) or not _may_fork():
        yield Part(text, 0, read(text), None)
        return
    cut = _MARKER.search(text, len(text) // 2)
    if cut is None:
        yield Part(text, 0, read(text), None)
        return
    first, second = text[:cut.start() + 1], text[cut.start() + 1:]
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: read, send, and leave without running anything of the parent's
        code = 1
        try:
            os.close(rfd)
            docs = read(second)
            prepared = prepare(docs) if prepare is not None and docs is not None else None
            data = pickle.dumps((docs, prepared), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    inp = os.fdopen(rfd, "rb")
    reaped = False
    try:
        yield Part(first, 0, read(first), None)
        data = inp.read()
        _, status = os.waitpid(pid, 0)
        reaped = True
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
            tail, prepared = pickle.loads(data)
        else:
            tail, prepared = read(second), None
        yield Part(second, first.count("\n"), tail, prepared)
    finally:
        inp.close()
        if not reaped:  # the caller stopped early: the child's answer is not wanted
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _may_fork() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1
