"""A heap of QueuedPodInfos keyed by pod UID (upstream ``backend/heap``): add-or-update,
delete, get and pop, with lazy deletion. The key is computed once when an item is pushed.

Many pods added at once (a move of the unschedulable pool, mostly popped again right after)
are kept as a sorted run beside the binary heap: sorting them is about linear (they come
mostly in order) and popping the run's head is a deque's, where the heap's pops compare
keys all the way down. A pop takes the smaller of the two heads, so the order is the one
binary heap's of every entry."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Container, Iterator, Sequence
from typing import Any

from kubesched.framework.types import QueuedPodInfo

_RUN = 8  # more pods than this added at once go to the sorted run


class PodHeap:
    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self._key = key
        self._heap: list[list[Any]] = []  # [key, counter, qpi, alive]
        self._run: deque[list[Any]] = deque()  # entries as the heap's, ascending
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
        uid = qpi.uid
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
        """``add_or_update`` for each of ``qpis`` in turn."""
        new = [self._entry(qpi) for qpi in qpis]
        if len(new) > _RUN:
            new.sort()
            run = self._run
            if run:
                new.extend(run)
                new.sort()  # (two sorted runs: a merge)
            self._run = deque(new)
        else:
            heap = self._heap
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

    def _head(self) -> list[Any] | None:
        """The smallest live entry (dead ones at the heads dropped), or None."""
        heap, run = self._heap, self._run
        while heap and not heap[0][3]:
            heapq.heappop(heap)
        while run and not run[0][3]:
            run.popleft()
        if not run:
            return heap[0] if heap else None
        if heap and heap[0] < run[0]:
            return heap[0]
        return run[0]

    def _pop_head(self, head: list[Any]) -> QueuedPodInfo:
        """Pop ``head``, as ``_head`` returned it."""
        if self._run and self._run[0] is head:
            self._run.popleft()
        else:
            heapq.heappop(self._heap)
        qpi: QueuedPodInfo = head[2]
        del self._entries[qpi.uid]
        return qpi

    def peek(self) -> QueuedPodInfo | None:
        head = self._head()
        return None if head is None else head[2]

    def pop(self) -> QueuedPodInfo | None:
        head = self._head()
        return None if head is None else self._pop_head(head)

    def pop_while(self, take: Callable[[QueuedPodInfo], bool], limit: int,
                  dropped: Container[str]) -> list[QueuedPodInfo]:
        """Heads popped one after another while ``take`` says yes to them (at most
        ``limit``); heads whose uid is in ``dropped`` are popped and left out."""
        got: list[QueuedPodInfo] = []
        while len(got) < limit:
            head = self._head()
            if head is None:
                break
            qpi: QueuedPodInfo = head[2]
            if qpi.uid in dropped:
                self._pop_head(head)
                continue
            if not take(qpi):
                break
            self._pop_head(head)
            got.append(qpi)
        return got

    def items(self) -> Iterator[QueuedPodInfo]:
        """All items, in no particular order."""
        return (e[2] for e in self._entries.values())

    def sorted_items(self) -> list[QueuedPodInfo]:
        return [e[2] for e in sorted(self._entries.values(), key=lambda e: (e[0], e[1]))]

    def _maybe_compact(self) -> None:
        if len(self._heap) + len(self._run) > 64 and \
                len(self._heap) + len(self._run) > 2 * len(self._entries):
            self._heap = [e for e in self._heap if e[3]]
            heapq.heapify(self._heap)
            self._run = deque(e for e in self._run if e[3])
