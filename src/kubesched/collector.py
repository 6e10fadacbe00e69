"""The garbage collector's settings: the process's for kubesched's commands and sweep workers,
and a pause while a scenario is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: collections of the youngest generation after this many container objects allocated
#: (CPython 3.11's default is 700)
YOUNG_THRESHOLD = 10_000


def tune_for_bulk() -> None:
    """Collect less often. A scenario's load and a run build hundreds of thousands of
    long-lived objects (pods, NodeInfos, the node table's rows); at the default threshold
    the collector walks the survivors again every 700 of them, which was 20 % of the CPU
    of `simulate` on 5 000 nodes and 50 000 pods and 40 % of loading them. kubesched's
    objects seldom form cycles, so the memory this keeps a little longer is small (peak RSS
    unchanged on that run). Process-wide: called by the CLI and by sweep workers, never on
    import, so a program embedding kubesched keeps its own setting."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, max(older, 10), max(oldest, 10))


@contextmanager
def paused() -> Iterator[None]:
    """No collection meanwhile: for building many objects that all stay alive (a scenario's
    load), where each collection would only walk them again (a quarter of the CPU of loading
    5 000 nodes and 50 000 pods, even at ``YOUNG_THRESHOLD``). The setting before is restored,
    so nesting and a program's own setting are kept."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def settled() -> None:
    """What lives now lives till the command ends (a scenario loaded, a simulator built):
    frozen, so that no collection walks it again. Its objects reach the oldest generation
    during the run, and a full collection walks them all (3.7 s for the 9.6 M objects of
    a 50 000-node, 500 000-pod cluster). Called by the CLI, as ``tune_for_bulk``."""
    gc.freeze()


@contextmanager
def one_run() -> Iterator[None]:
    """For each run of a process that makes many (a sweep's worker). What lives before the
    run (modules, the workloads built, interned states) is frozen: no collection walks it
    again. During the run only the youngest generation is collected — transient garbage
    dies young, and what survives is the run's cluster, alive till its end, which older
    collections would only walk again and again (12 % of a trace replay's time). After the
    run, one collection frees its objects: their graph is cyclic (the framework, its
    plugins and the handle refer to one another), so only a collection can."""
    before = gc.get_threshold()
    for_one_run()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.collect()


def for_one_run() -> None:
    """For a process that makes one run and ends without clean-up (a sweep's run forked
    from its worker): what it inherited is frozen, and only the youngest generation is
    ever collected."""
    gc.freeze()
    gc.set_threshold(gc.get_threshold()[0], _NEVER, _NEVER)


_NEVER = 2**31 - 1  # collections of a younger generation before an older one is collected
