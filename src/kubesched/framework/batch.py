"""OpportunisticBatching (upstream ``framework/runtime/batch.go``, gate OpportunisticBatching,
beta and on since v1.35).

After a pod is scheduled, the nodes it did not take are kept in score order with the pod's
signature. The next pod, if it is the next scheduling cycle of the same profile, has the same
signature, comes within ``MAX_BATCH_AGE`` and no longer fits the node the previous pod took
(the cached scores of the other nodes are then still right: one pod per node), gets the best
remaining node as a hint: it is tried first, as a nominated node is, and taken without
scoring if it passes the filters. Otherwise the cache is flushed and the pod is scheduled
the ordinary way, its results stored for the next one.

Differences, both for determinism: the age is measured on the scheduler's clock (virtual in
the simulator) instead of the wall clock; among remaining nodes with equal scores the next
hint is a uniform choice from the seeded generator, as ``select_host`` breaks ties, where
upstream pops its heap (the node heap's order among equal scores).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import random

    from kubesched.api.types import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.runtime import Framework
    from kubesched.framework.snapshot import Snapshot

MAX_BATCH_AGE = 0.5  # seconds (upstream's maxBatchAge)

Signature = Hashable


class SortedScoredNodes:
    """The nodes of a cycle but the chosen one, best total first (``sortedNodeScores``)."""

    def __init__(self, names: Sequence[str], rows: np.ndarray, totals: np.ndarray) -> None:
        order = np.argsort(-totals, kind="stable")
        self._names = names  # the table's names when stored (a new table has its own list)
        self._rows = rows[order]
        self._neg = -totals[order]  # ascending
        self._head = 0

    def __len__(self) -> int:
        return len(self._rows) - self._head

    def pop(self, rng: random.Random) -> str:
        """The best remaining node; among equal totals a seeded uniform choice."""
        h = self._head
        end = int(np.searchsorted(self._neg, self._neg[h], side="right"))
        if end - h > 1:
            k = h + rng.randrange(end - h)
            self._rows[h], self._rows[k] = self._rows[k], self._rows[h]
        self._head = h + 1
        return self._names[int(self._rows[h])]


@dataclass
class _BatchState:
    signature: Signature
    sorted_nodes: SortedScoredNodes
    created: float


@dataclass
class _LastCycle:
    cycle: int = -1
    chosen: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's batch state (upstream keeps one per framework)."""

    def __init__(self) -> None:
        self.state: _BatchState | None = None
        self.last = _LastCycle()
        self.batched_pods = 0  # pods placed on their hint (upstream's test counter)
        self.flushes: dict[str, int] = {}  # reason -> count (upstream's BatchCacheFlushed)

    def _flush(self, reason: str) -> None:
        self.flushes[reason] = self.flushes.get(reason, 0) + 1

    def get_node_hint(self, fwk: Framework, state: CycleState, pod: Pod, cycle: int,
                      snapshot: Snapshot, now: float, rng: random.Random
                      ) -> tuple[str, Signature | None]:
        """``GetNodeHint``: the hinted node ("" for none) and the pod's signature."""
        signature = fwk.sign_pod(pod)
        if not self._compatible(fwk, state, pod, signature, cycle, snapshot, now):
            return "", signature
        assert self.state is not None
        return self.state.sorted_nodes.pop(rng), signature

    def hints_nothing(self) -> bool:
        """Whether ``get_node_hint`` hints no node and counts no flush, whatever the pod
        (nothing kept to hint)."""
        s = self.state
        return s is None or not len(s.sorted_nodes)

    def _compatible(self, fwk: Framework, state: CycleState, pod: Pod,
                    signature: Signature | None, cycle: int, snapshot: Snapshot,
                    now: float) -> bool:
        s = self.state
        if s is None or not len(s.sorted_nodes):  # (hints_nothing, inline: every cycle asks)
            return False
        if cycle != self.last.cycle + 1:
            self._flush("pod_skipped")  # another profile's pod, or this one failed
            return False
        if not self.last.succeeded:
            self._flush("pod_failed")
            return False
        if signature is None or signature != s.signature:
            self._flush("pod_incompatible")
            return False
        if now > s.created + MAX_BATCH_AGE:
            self._flush("expired")
            return False
        # Only when the pod no longer fits where the previous one went are the other
        # nodes' cached scores still its scores (one pod per node).
        last = snapshot.get(self.last.chosen)
        if last is None:
            self._flush("node_missing")
            return False
        if not fwk.run_filter(state, pod, last).is_rejected():
            self._flush("node_not_full")
            return False
        return True

    def store_schedule_results(self, signature: Signature | None, hinted: str, chosen: str,
                               others: Callable[[], SortedScoredNodes] | None, n_others: int,
                               cycle: int, now: float) -> None:
        """``StoreScheduleResults``; ``others`` builds the sorted remaining nodes (only
        when they are kept: a pod without a signature does not pay for sorting them)."""
        self.last = _LastCycle(cycle, chosen, True)
        if hinted and hinted == chosen:
            self.batched_pods += 1
            return
        if signature is not None and others is not None and n_others:
            self.state = _BatchState(signature, others(), now)
        else:
            self._flush("empty_list" if others is None or not n_others
                        else "pod_not_batchable")
            self.state = None
