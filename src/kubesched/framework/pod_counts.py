"""Per-node counts of existing pods, kept across scheduling cycles.

Plugins that look at the pods already placed (PodTopologySpread, InterPodAffinity) need, for
every node, how many of its pods match something of the incoming pod — a selector, a term.
Pods of one workload share that something, so the counts are kept by a key the plugin
chooses and, from one cycle to the next, only the nodes whose pods changed are recounted
(``framework.table_cache.RowMemo``). A new node table (nodes added or removed) starts afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.table_cache import RowMemo

CountFn = Callable[[Sequence[Any]], int]  # a node's pods -> its count


class PodCountCache(RowMemo):
    __slots__ = ()

    def __init__(self, max_entries: int = 1024) -> None:
        super().__init__(max_entries)

    def counts(self, snapshot: Snapshot, key: Hashable, count: CountFn) -> np.ndarray:
        """Counts per node-table row of ``snapshot`` (do not modify the array). ``count``
        must depend only on the pods it is given, and the same for every use of ``key``."""
        infos = snapshot.node_infos
        return self.all_rows(snapshot.table, key, lambda row: count(infos[row].pods))
