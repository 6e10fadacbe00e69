"""The decision record (``simulate --decisions``): what each scheduling cycle computed, one
record per cycle, in the order the cycles ran.

``DecisionLog`` is the scheduler's ``DecisionObserver``: the algorithm hands it the scores
it computed (only when it scored: a cycle with one feasible node, or one that took the
nominated or hinted node, scored nothing), the scheduling cycle its outcome; each record
goes to the log's sinks as a dict (``json.dumps`` of it is the JSON line) and is not kept.
Nothing here recomputes a score: the K best are picked from the cycle's own totals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kubesched.framework.runtime import ScoreOutcome
from kubesched.framework.types import QueuedPodInfo

DEFAULT_TOP = 3

Record = dict[str, Any]


class DecisionLog:
    """Builds each cycle's record and passes it to every sink (a JSON-lines writer, the
    report's keeper of placed pods' binding cycles)."""

    def __init__(self, sinks: Sequence[Callable[[Record], object]], top: int = DEFAULT_TOP
                 ) -> None:
        self.sinks = list(sinks)
        self.top = top
        self._best: list[Record] = []  # the current cycle's, from ``scored``

    def scored(self, names: Sequence[str], feasible: np.ndarray, scores: ScoreOutcome
               ) -> None:
        self._best = best_nodes(names, feasible, scores, self.top)

    def decided(self, qpi: QueuedPodInfo, time: float, node: str | None, evaluated: int,
                feasible: int, message: str | None, preemption: dict[str, Any] | None
                ) -> None:
        record = {"pod": qpi.pod.key, "time": time, "attempt": qpi.attempts, "node": node,
                  "feasible": feasible, "evaluated": evaluated, "top": self._best,
                  "message": message, "preemption": preemption}
        self._best = []
        for sink in self.sinks:
            sink(record)


def best_nodes(names: Sequence[str], feasible: np.ndarray, scores: ScoreOutcome, k: int
               ) -> list[Record]:
    """The ``k`` highest totals among the scored nodes (``feasible``: their table rows, in
    the order of ``scores``' columns), best first, ties by node name; each with its total
    and every score plugin's normalized score before weight (and, when extenders scored,
    what each added to the total)."""
    totals = scores.totals
    n = len(totals)
    if k <= 0 or n == 0:
        return []
    if k < n:
        # only the nodes at or above the k-th highest total can be among the k best
        kth = np.partition(totals, n - k)[n - k]
        cols = np.flatnonzero(totals >= kth).tolist()
    else:
        cols = list(range(n))
    tot = totals.tolist()
    rows = feasible.tolist()
    cols.sort(key=lambda c: (-tot[c], names[rows[c]]))
    plugins = scores.plugins
    per_plugin = scores.scores
    extenders = scores.extender_scores or {}
    out = []
    for c in cols[:k]:
        entry: Record = {"node": names[rows[c]], "total": int(tot[c]),
                         "scores": {p: int(per_plugin[j, c]) for j, p in enumerate(plugins)}}
        if extenders:
            entry["extenders"] = {e: int(added[c]) for e, (_raw, added) in extenders.items()}
        out.append(entry)
    return out


class PlacedDecisions:
    """A sink keeping, per pod, the record of its latest cycle that chose a node (the
    binding cycle of a pod bound at the end): the report's view of placed pods."""

    def __init__(self) -> None:
        self.by_pod: dict[str, Record] = {}

    def __call__(self, record: Record) -> None:
        if record["node"] is not None:
            self.by_pod[record["pod"]] = record
