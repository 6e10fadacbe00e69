"""For tests: every Filter verdict a run reads from ``Framework.filter_batch_kept`` checked
against ``filter_batch`` run on all the same nodes, and how many verdicts were read back
rather than computed (so that a test can tell that the kept path was taken)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import FilterOutcome, Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.table_cache import RowMemo


@dataclass
class KeptStats:
    calls: int = 0
    rows: int = 0  # verdicts asked for
    computed: int = 0  # verdicts filtered again (the rest were read back)

    @property
    def read_back(self) -> int:
        return self.rows - self.computed


def verdicts(out: FilterOutcome, plugin_names: list[str]) -> list[tuple[int, str, tuple[str, ...]]]:
    """Each node's verdict: code, rejecting plugin and reasons (none for a feasible node)."""
    got = []
    for k in range(len(out.codes)):
        code = int(out.codes[k])
        if code == 0:
            got.append((0, "", ()))
        else:
            got.append((code, plugin_names[int(out.plugin[k])],
                        out.reasons[int(out.reason_ids[k])]))
    return got


@contextmanager
def checking_kept_verdicts() -> Iterator[KeptStats]:
    """Meanwhile, every kept verdict checked (an AssertionError names the pod)."""
    stats = KeptStats()
    kept = Framework.filter_batch_kept
    rows = RowMemo.rows
    inside: list[bool] = []

    def counted(self: RowMemo, table: Any, key: Any, idx: np.ndarray, compute: Any,
                one_row: Any = None) -> np.ndarray:
        if not inside:
            return rows(self, table, key, idx, compute, one_row)

        def computed(t: Any, r: np.ndarray) -> np.ndarray:
            stats.computed += len(r)
            return compute(t, r)  # type: ignore[no-any-return]

        def computed_one(r: int) -> int:
            stats.computed += 1
            return one_row(r)  # type: ignore[no-any-return]

        return rows(self, table, key, idx, computed, computed_one if one_row else None)

    def checked(self: Framework, state: CycleState, pod: object, snapshot: Snapshot,
                idx: np.ndarray, key: Hashable) -> FilterOutcome:
        inside.append(True)
        try:
            got = kept(self, state, pod, snapshot, idx, key)  # type: ignore[arg-type]
        finally:
            inside.pop()
        stats.calls += 1
        stats.rows += len(idx)
        full = self.filter_batch(state, pod, snapshot, idx)  # type: ignore[arg-type]
        names = self.filter_names
        assert verdicts(got, names) == verdicts(full, names), (
            f"kept verdicts differ for {getattr(pod, 'key', pod)}")
        return got

    RowMemo.rows = counted  # type: ignore[method-assign]
    Framework.filter_batch_kept = checked  # type: ignore[method-assign,assignment]
    try:
        yield stats
    finally:
        RowMemo.rows = rows  # type: ignore[method-assign]
        Framework.filter_batch_kept = kept  # type: ignore[method-assign]
