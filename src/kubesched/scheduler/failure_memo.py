"""Filter scans that failed, kept for pods that would fail alike (opt-in).

A pod that no node fits, tried again before anything in the cluster changed, meets the same
statuses on every node — and so does any pod whose scheduling differs from it only in
identity (name, uid, arrival). Trace replays retry thousands of such pods at one instant
(upstream's unschedulable-leftover flush, every 5 minutes), most of them sharing their
shape with another. ``FailureMemo`` keeps the Diagnosis of each failed filter scan for the
snapshot generation it was made at; ``Algorithm.find_nodes_that_fit`` answers a later scan
of an equivalent pod at that generation with a copy, skipping only the Filter plugins.
PreFilter still runs on the pod (its state is the pod's own, for PostFilter), and the
failure handling, PostFilter and its random draws are the pod's as without the memo.

What "equivalent" means is the caller's (``equivalence``: a pod → a hashable key, or None
for a pod never to answer from the memo): only one who knows which of a pod's fields the
profile's Filter plugins read can say so. The scan's own inputs are part of the key: the
profile, the node it starts at, the PreFilter plugins' Skip verdicts, the snapshot's table
and generation (any pod added, removed or updated on a node moves it).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import Diagnosis

Equivalence = Callable[[Pod], Hashable | None]


class FailureMemo:
    def __init__(self, equivalence: Equivalence) -> None:
        self.equivalence = equivalence
        self._table: object = None
        self._generation = -1
        self._entries: dict[Hashable, Diagnosis] = {}
        self.hits = 0

    def key(self, profile: str, snapshot: Snapshot, state: CycleState, pod: Pod,
            start: int) -> Hashable | None:
        """The scan's key, or None when the pod is not to be answered from the memo.
        Entries of an older generation (or another table) are dropped here."""
        eq = self.equivalence(pod)
        if eq is None:
            return None
        if snapshot.table is not self._table or snapshot.generation != self._generation:
            self._entries.clear()
            self._table, self._generation = snapshot.table, snapshot.generation
        return profile, start, frozenset(state.skip_filter), eq

    def get(self, key: Hashable) -> Diagnosis | None:
        got = self._entries.get(key)
        if got is None:
            return None
        self.hits += 1
        return copy_diagnosis(got)

    def put(self, key: Hashable, diagnosis: Diagnosis) -> None:
        # a copy: the caller's goes on to get PostFilter's message
        self._entries[key] = copy_diagnosis(diagnosis)


def copy_diagnosis(d: Diagnosis) -> Diagnosis:
    return Diagnosis(d.node_to_status.copy(), set(d.unschedulable_plugins),
                     set(d.pending_plugins), d.pre_filter_msg, d.post_filter_msg)
