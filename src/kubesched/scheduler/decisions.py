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

from kubesched.framework.node_table import NodeTable
from kubesched.framework.runtime import ScoreOutcome
from kubesched.framework.table_cache import NodeValue
from kubesched.framework.types import QueuedPodInfo

DEFAULT_TOP = 3
_KEY_LIMIT = 1 << 62

Record = dict[str, Any]


class DecisionLog:
    """Builds each cycle's record and passes it to every sink (a JSON-lines writer, the
    report's keeper of placed pods' binding cycles)."""

    def __init__(self, sinks: Sequence[Callable[[Record], object]], top: int = DEFAULT_TOP
                 ) -> None:
        self.sinks = list(sinks)
        self.top = top
        self._best: list[Record] = []  # the current cycle's, from ``scored``
        self._ranks: NodeValue[np.ndarray] = NodeValue()

    def scored(self, table: NodeTable, feasible: np.ndarray, scores: ScoreOutcome) -> None:
        if self.top > 0:
            rank = self._ranks.get(table, name_ranks)
            self._best = best_nodes(table.names, rank, feasible, scores, self.top)

    def decided(self, qpi: QueuedPodInfo, time: float, node: str | None, evaluated: int,
                feasible: int, message: str | None, preemption: dict[str, Any] | None
                ) -> None:
        record = {"pod": qpi.pod.key, "time": time, "attempt": qpi.attempts, "node": node,
                  "feasible": feasible, "evaluated": evaluated, "top": self._best,
                  "message": message, "preemption": preemption}
        self._best = []
        for sink in self.sinks:
            sink(record)


def name_ranks(table: NodeTable) -> np.ndarray:
    """Each table row's place among the nodes sorted by name (ties among totals go by it)."""
    ranks = np.empty(len(table.names), dtype=np.int64)
    ranks[np.argsort(np.array(table.names, dtype=str), kind="stable")] = np.arange(len(ranks))
    return ranks


def best_nodes(names: Sequence[str], rank: np.ndarray, feasible: np.ndarray,
               scores: ScoreOutcome, k: int) -> list[Record]:
    """The ``k`` highest totals among the scored nodes (``feasible``: their table rows, in
    the order of ``scores``' columns; ``rank``: each row's place by name), best first, ties
    by node name; each with its total and every score plugin's normalized score before
    weight (and, when extenders scored, what each added to the total)."""
    totals = scores.totals
    n = len(totals)
    if k <= 0 or n == 0:
        return []
    ranks = rank[feasible]
    span = len(rank)  # ranks are 0 .. span - 1
    if -_KEY_LIMIT // span < int(totals.min()) and int(totals.max()) < _KEY_LIMIT // span:
        # one int64 key, higher first: the total, then the name's rank (a few numpy calls
        # whatever the number of nodes tied: equal nodes score alike)
        key = totals * span - ranks
        cols = np.argpartition(key, n - k)[n - k:] if k < n else np.arange(n)
        cols = cols[np.argsort(-key[cols])]
    else:
        cols = np.lexsort((ranks, -totals))[:k]
    rows = feasible[cols].tolist()
    per_node = scores.scores[:, cols].T.tolist()
    plugins = scores.plugins
    extenders = scores.extender_scores or {}
    out = []
    for c, row, total, plugin_scores in zip(cols.tolist(), rows, totals[cols].tolist(),
                                            per_node, strict=True):
        entry: Record = {"node": names[row], "total": total,
                         "scores": dict(zip(plugins, plugin_scores, strict=True))}
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
