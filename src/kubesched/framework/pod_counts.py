"""Per-node counts of existing pods, kept across scheduling cycles.

Plugins that look at the pods already placed (PodTopologySpread, InterPodAffinity) need, for
every node, how many of its pods match something of the incoming pod — a selector, a term.
Pods of one workload share that something, so the counts are cached by a key the plugin
chooses and, from one cycle to the next, only the nodes whose pods changed are recounted
(``NodeTable.pod_generation``). A new node table (nodes added or removed) starts afresh.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.framework.snapshot import Snapshot

CountFn = Callable[[Sequence[Any]], int]  # a node's pods -> its count


class _Entry:
    __slots__ = ("counts", "seen")

    def __init__(self, counts: np.ndarray, seen: int) -> None:
        self.counts = counts
        self.seen = seen  # snapshot generation the counts are up to date with


class PodCountCache:
    def __init__(self, max_entries: int = 1024) -> None:
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._table_id = -1
        self.max_entries = max_entries

    def counts(self, snapshot: Snapshot, key: Hashable, count: CountFn) -> np.ndarray:
        """Counts per node-table row of ``snapshot`` (do not modify the array). ``count``
        must depend only on the pods it is given, and the same for every use of ``key``."""
        table = snapshot.table
        if table.table_id != self._table_id:
            self._entries.clear()
            self._table_id = table.table_id
        infos = snapshot.node_infos
        e = self._entries.get(key)
        if e is None:
            arr = np.fromiter((count(ni.pods) for ni in infos), dtype=np.int64,
                              count=len(infos))
            e = self._entries[key] = _Entry(arr, snapshot.generation)
            if len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            return arr
        self._entries.move_to_end(key)
        if e.seen < snapshot.generation:
            for row in np.flatnonzero(table.pod_generation > e.seen).tolist():
                e.counts[row] = count(infos[row].pods)
            e.seen = snapshot.generation
        return e.counts
