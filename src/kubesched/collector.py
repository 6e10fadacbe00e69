"""The process's garbage-collector setting for kubesched's commands and sweep workers."""

from __future__ import annotations

import gc

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
