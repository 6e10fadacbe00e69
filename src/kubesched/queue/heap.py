"""A heap of QueuedPodInfos keyed by pod UID (upstream ``backend/heap``): add-or-update,
delete, get and pop, with lazy deletion. The key is computed once when an item is pushed."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from kubesched.framework.types import QueuedPodInfo


class PodHeap:
    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self._key = key
        self._heap: list[list[Any]] = []  # [key, counter, qpi, alive]
        self._entries: dict[str, list[Any]] = {}
        self._counter = 0
        # uid -> its [key, counter, qpi, alive] entry or None: ``get`` without a Python
        # call, for loops over many pods
        self.entry = self._entries.get

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, uid: object) -> bool:
        return uid in self._entries

    def get(self, uid: str) -> QueuedPodInfo | None:
        e = self._entries.get(uid)
        return None if e is None else e[2]

    def _entry(self, qpi: QueuedPodInfo) -> list[Any]:
        """``qpi``'s new entry, replacing its old one (to be pushed)."""
        uid = qpi.pod.uid
        old = self._entries.get(uid)
        if old is not None:
            old[3] = False
        self._counter += 1
        entry = [self._key(qpi), self._counter, qpi, True]
        self._entries[uid] = entry
        return entry

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        heapq.heappush(self._heap, self._entry(qpi))
        self._maybe_compact()

    def add_all(self, qpis: Sequence[QueuedPodInfo]) -> None:
        """``add_or_update`` for each of ``qpis`` in turn (many at once: one heapify)."""
        heap = self._heap
        new = [self._entry(qpi) for qpi in qpis]
        if len(new) > 8 and len(new) * 4 > len(heap):
            heap.extend(new)
            heapq.heapify(heap)
        else:
            for entry in new:
                heapq.heappush(heap, entry)
        self._maybe_compact()

    def delete(self, uid: str) -> QueuedPodInfo | None:
        e = self._entries.pop(uid, None)
        if e is None:
            return None
        e[3] = False
        self._maybe_compact()
        qpi: QueuedPodInfo = e[2]
        return qpi

    def peek(self) -> QueuedPodInfo | None:
        self._drop_dead_head()
        if not self._heap:
            return None
        qpi: QueuedPodInfo = self._heap[0][2]
        return qpi

    def pop(self) -> QueuedPodInfo | None:
        self._drop_dead_head()
        if not self._heap:
            return None
        e = heapq.heappop(self._heap)
        qpi: QueuedPodInfo = e[2]
        del self._entries[qpi.pod.uid]
        return qpi

    def items(self) -> Iterator[QueuedPodInfo]:
        """All items, in no particular order."""
        return (e[2] for e in self._entries.values())

    def sorted_items(self) -> list[QueuedPodInfo]:
        return [e[2] for e in sorted(self._entries.values(), key=lambda e: (e[0], e[1]))]

    def _drop_dead_head(self) -> None:
        h = self._heap
        while h and not h[0][3]:
            heapq.heappop(h)

    def _maybe_compact(self) -> None:
        if len(self._heap) > 64 and len(self._heap) > 2 * len(self._entries):
            self._heap = [e for e in self._heap if e[3]]
            heapq.heapify(self._heap)
