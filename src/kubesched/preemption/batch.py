"""The preemption dry run over the node table: ``SelectVictimsOnNode`` for many nodes at once.

The per-node form (``Evaluator.select_victims_on_node``) copies a node, removes every
lower-priority pod, runs the Filter plugins, then adds the victims back one by one in
reprieve order, running the filters after each. When ``Framework.filters_read_only_resources``
holds for the preemptor (the common case: no inter-pod affinity, topology spreading, host
ports or volumes to check), a node's verdict with some pods gone depends only on its
requested and pod-count columns, so each of those steps is one call of the plugins' batch
forms on an ``AdjustedSnapshot`` for all the nodes at once:

1. each node's potential victims (lower-priority pods, ordered by ``sort_slice`` exactly as
   the per-node form orders them) are cached per node generation and preemptor priority;
2. one Filter pass with all of them removed — with the nominated pods' two passes — decides
   which nodes can be candidates at all, with the per-node form's statuses for the others;
3. step ``j`` of the reprieve adds back the ``j``-th pod (PDB-violating ones first) of every
   node that has one, and keeps it where the pod still fits.

Nodes are taken in the dry run's order, in chunks, and the per-node form's stopping rule is
applied to their results in that order, so the candidates, victims and recorded statuses
are the per-node form's (``tests/preemption/test_batch_dry_run.py`` checks it on random
clusters). A plugin error makes the caller rerun the per-node form, which words errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.adjusted import AdjustedSnapshot, NominatedPods
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import READS_RESOURCES, FilterBatch
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.table_cache import NodeMemo, RowVersions
from kubesched.framework.types import AtRows, NodeToStatus
from kubesched.preemption.gosort import sort_slice

if TYPE_CHECKING:
    from kubesched.framework.runtime import FilterOutcome, Framework
    from kubesched.preemption.evaluator import Candidate, PDBView

MoreImportantPod = Callable[[Pod, Pod], bool]


@dataclass(slots=True)
class NodeVictims:
    """A node's pods a preemptor may evict, most important first (``sort_slice`` order)."""

    pods: list[Pod]
    req: np.ndarray  # [len(pods), resources]
    total: np.ndarray  # [resources]


class _VictimColumns:
    """For one preemptor priority, per table row: the node's ``NodeVictims``, their count
    and summed requests as columns, and the row versions they were made at."""

    def __init__(self, table: NodeTable) -> None:
        n = table.size
        self.versions = RowVersions(table)
        self.count = np.zeros(n, dtype=np.int64)
        self.total = np.zeros((len(table.resources), n), dtype=np.int64)
        self.entries: list[NodeVictims | None] = [None] * n


class VictimCache:
    """Each node's potential victims per preemptor priority, kept while the node's pods are
    unchanged (``framework.table_cache.RowVersions``): between two preemptions few nodes
    change, so a dry run recomputes few and reads the rest as columns."""

    def __init__(self, more_important: MoreImportantPod) -> None:
        self.more_important = more_important
        self._columns: NodeMemo[_VictimColumns] = NodeMemo()  # by preemptor priority
        # share of checked nodes that passed in the last dry run: sizes the first chunk
        self.pass_rate = 1.0

    def lookup(self, table: NodeTable, infos: Sequence[NodeInfo], rows: np.ndarray,
               priority: int) -> tuple[np.ndarray, np.ndarray]:
        """The potential victims' counts ([rows]) and summed requests ([resources, rows])."""
        cols = self._columns.get(table, priority, _VictimColumns)
        width = len(table.resources)
        if cols.total.shape[0] < width:
            cols.total = _widen(cols.total.T, width).T
        stale = cols.versions.stale(table, rows)
        for r in stale.tolist():
            entry = self._victims(table, infos[r], priority)
            cols.entries[r] = entry
            cols.count[r] = len(entry.pods)
            cols.total[:, r] = _widen(entry.total, width)
        cols.versions.mark(table, stale)
        return cols.count[rows], cols.total[:, rows]

    def entry(self, table: NodeTable, row: int, priority: int) -> NodeVictims:
        """The victims of ``row`` (after a ``lookup`` that covered it)."""
        cols: _VictimColumns = self._columns.data(table)[priority]
        got = cols.entries[row]
        assert got is not None
        return got

    def _victims(self, table: NodeTable, ni: NodeInfo, priority: int) -> NodeVictims:
        pods = [p for p in ni.pods if p.priority < priority]
        sort_slice(pods, self.more_important)
        vecs = [table.request_vectors.vector(p) for p in pods]
        width = len(table.resources)
        req = (np.vstack([_widen(v, width) for v in vecs]) if vecs
               else np.zeros((0, width), dtype=np.int64))
        return NodeVictims(pods, req, req.sum(axis=0))


def _widen(a: np.ndarray, width: int) -> np.ndarray:
    """``a`` ([..., resources]) with zero columns for resources the table gained since."""
    if a.shape[-1] >= width:
        return a
    pad = np.zeros((*a.shape[:-1], width - a.shape[-1]), dtype=np.int64)
    return np.concatenate([a, pad], axis=-1)


# A node's state in a chunk before its victims are known.
_NO_VICTIMS, _FAILED, _FITS = "no victims", "failed", "fits"


class _Chunk:
    """Nodes checked together: per position a state above or (victims, number violating
    a PDB); the filter failures; and, for the nodes that pass (``passing``: positions),
    what their reprieve needs — potential victims and the column changes."""

    def __init__(self, sub: np.ndarray) -> None:
        self.results: list[object] = [_NO_VICTIMS] * len(sub)
        self.quiet = True  # no node of the chunk has a potential victim
        self.failures: list[_Failures] = []
        self.passing: list[int] = []
        self.rows = np.zeros(0, dtype=np.int64)
        self.entries: list[NodeVictims] = []
        self.cur_req = self.nom_req = np.zeros((0, 0), dtype=np.int64)
        self.cur_cnt = self.nom_cnt = np.zeros(0, dtype=np.int64)


def _chunk_size(need: int, visited: int, passed: int, last_rate: float) -> int:
    """How many nodes to check next: enough for ``need`` more candidates at the rate of
    nodes passing seen so far (at first: in the last dry run), without checking many more.
    Only the cost depends on it: results are applied in node order whatever the chunks."""
    rate = passed / visited if visited else last_rate
    if rate <= 0:
        return max(2 * visited, 16)
    return max(int(need / rate * 1.25) + 8, 16)


# failures of a Filter pass: positions among the nodes evaluated, the outcome, and the
# positions in the outcome
_Failures = tuple[np.ndarray, "FilterOutcome", np.ndarray]


class BatchDryRun:
    """The dry run of one preemption attempt over table rows (see the module docstring)."""

    def __init__(self, fwk: Framework, cache: VictimCache, state: CycleState, pod: Pod,
                 pdbs: Sequence[PDBView]) -> None:
        self.fwk = fwk
        self.cache = cache
        self.state = state
        self.pod = pod
        self.pdbs = pdbs
        self.snap = fwk.handle.snapshot
        self.adjusted = AdjustedSnapshot(self.snap)
        self.resource_filters = [p for p in fwk.filter if p.name not in state.skip_filter
                                 and p.filter_reads == READS_RESOURCES
                                 and isinstance(p, FilterBatch)]
        self.nominated = NominatedPods.of(state, fwk.handle, pod)

    # ------------------------------------------------------------------ the run

    def run(self, rows: np.ndarray, num_candidates: int
            ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """``Evaluator.dry_run_preemption`` for the nodes at ``rows`` (in dry-run order)."""
        from kubesched.framework.extender import Victims
        from kubesched.preemption.evaluator import NO_VICTIMS_STATUS, Candidate

        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errs: list[str] = []
        names = self.snap.table.names
        pos = visited = passed = 0
        while pos < len(rows):
            need = max(num_candidates - len(non_violating) - len(violating), 1)
            sub = rows[pos: pos + _chunk_size(need, visited, passed, self.cache.pass_rate)]
            pos += len(sub)
            chunk = self._check(sub)
            visited += len(sub)
            passed += len(chunk.passing)
            self.cache.pass_rate = passed / visited
            if chunk.quiet:  # what the loop below records when no node has a victim
                statuses.add_same(AtRows(names, sub), NO_VICTIMS_STATUS, sub.copy())
                continue
            stop = len(sub)
            no_victims: list[int] = []
            for k, row in enumerate(sub.tolist()):
                res = chunk.results[k]
                if res is _FAILED:
                    continue  # a filter status, recorded in bulk below
                if res is _NO_VICTIMS:
                    no_victims.append(k)  # recorded in bulk below
                    continue
                name = names[row]
                if res is _FITS:  # reprieve this node and the next ones that may be needed
                    self._reprieve(chunk, k, num_candidates - len(non_violating)
                                   - len(violating))
                    res = chunk.results[k]
                assert isinstance(res, tuple)
                victims, num_viol = res
                if victims:
                    c = Candidate(name, Victims(victims, num_viol))
                    lst = non_violating if num_viol == 0 else violating
                    if len(lst) < num_candidates:
                        lst.append(c)
                    if non_violating and len(non_violating) + len(violating) >= num_candidates:
                        stop = k
                        break
                    continue
                st = Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
                errs.append(st.message())
                statuses.set(name, st)
            quiet = sub[no_victims]
            statuses.add_same(AtRows(names, quiet), NO_VICTIMS_STATUS, quiet)
            for at, outcome, where in chunk.failures:
                keep = at < stop
                if keep.any():
                    statuses.add_failed(outcome.failed_nodes(
                        where[keep], AtRows(names, sub[at[keep]]),
                        self.fwk.filter_names))
            if stop < len(sub):
                break
        return non_violating + violating, statuses, errs

    def _check(self, sub: np.ndarray) -> _Chunk:
        """Which nodes of ``sub`` have potential victims, and on which of those the pod fits
        with them all gone (the others' statuses are the chunk's failures)."""
        table = self.snap.table
        prio = self.pod.priority
        all_counts, all_removed = self.cache.lookup(table, self.snap.node_infos, sub, prio)
        chunk = _Chunk(sub)
        at = np.flatnonzero(all_counts > 0)
        if not len(at):
            return chunk
        chunk.quiet = False
        rows = sub[at]
        counts, removed = all_counts[at], all_removed[:, at]
        nom_req, nom_cnt = self.nominated.deltas(rows)
        width = nom_req.shape[0]  # every pod's resources have rows now
        removed = _widen(removed.T, width).T
        ok, failed = self._filter(rows, -removed, -counts, nom_req, nom_cnt)
        chunk.failures = [(at[i], outcome, where) for i, outcome, where in failed]
        for i, fits in enumerate(ok.tolist()):
            chunk.results[int(at[i])] = _FITS if fits else _FAILED
        fit = np.flatnonzero(ok)
        chunk.passing = at[fit].tolist()
        chunk.rows = rows[fit]
        chunk.entries = [self.cache.entry(table, r, prio) for r in chunk.rows.tolist()]
        chunk.cur_req = -removed[:, fit]
        chunk.cur_cnt = -counts[fit]
        chunk.nom_req = nom_req[:, fit]
        chunk.nom_cnt = nom_cnt[fit]
        return chunk

    def _filter(self, rows: np.ndarray, d_req: np.ndarray, d_cnt: np.ndarray,
                nom_req: np.ndarray, nom_cnt: np.ndarray) -> tuple[np.ndarray, list[_Failures]]:
        """Every Filter plugin on ``rows`` changed by ``d_req`` / ``d_cnt``, in two passes
        where nominated pods (``nom_*``) are added first, as ``run_filter_with_nominated``:
        which rows pass, and the failures (positions in ``rows``, outcome, positions in it)."""
        fwk, adj = self.fwk, self.adjusted
        adj.set(rows, d_req + nom_req, d_cnt + nom_cnt)
        out = fwk.filter_batch(self.state, self.pod, adj.view(), rows)
        ok = out.codes == 0
        bad = np.flatnonzero(~ok)
        failed = [(bad, out, bad)]
        again = np.flatnonzero(ok & (nom_cnt > 0))
        if len(again):
            adj.set(rows[again], d_req[:, again], d_cnt[again])
            out2 = fwk.filter_batch(self.state, self.pod, adj.view(), rows[again])
            bad2 = np.flatnonzero(out2.codes != 0)
            if len(bad2):
                ok[again[bad2]] = False
                failed.append((again[bad2], out2, bad2))
        return ok, failed

    def _fits(self, rows: np.ndarray, d_req: np.ndarray, d_cnt: np.ndarray,
              nom_req: np.ndarray, nom_cnt: np.ndarray) -> np.ndarray:
        """Whether the pod fits ``rows`` changed by ``d_req`` / ``d_cnt`` (both passes). Only
        the resource-reading plugins run: the others passed these nodes already and read
        nothing that changes here."""
        ok = self._resources_fit(rows, d_req + nom_req, d_cnt + nom_cnt)
        again = np.flatnonzero(ok & (nom_cnt > 0))
        if len(again):
            ok[again] = self._resources_fit(rows[again], d_req[:, again], d_cnt[again])
        return ok

    def _resources_fit(self, rows: np.ndarray, d_req: np.ndarray, d_cnt: np.ndarray
                       ) -> np.ndarray:
        self.adjusted.set(rows, d_req, d_cnt)
        ok = np.ones(len(rows), dtype=bool)
        for p in self.resource_filters:
            # any failure, an error included, is "does not fit", as in the per-node reprieve
            ok &= p.filter_batch(self.state, self.pod, self.adjusted.view(), rows).codes == 0
        return ok

    def _reprieve(self, chunk: _Chunk, k: int, wanted: int) -> None:
        """Victims of the chunk's node at position ``k`` and of the passing nodes after it,
        as many as may still become candidates (at least a few: the call costs the same)."""
        first = chunk.passing.index(k)
        sel = np.arange(first, min(first + max(wanted, 8), len(chunk.passing)))
        found = self._victims(chunk.rows[sel], [chunk.entries[i] for i in sel.tolist()],
                              chunk.cur_req[:, sel], chunk.cur_cnt[sel],
                              chunk.nom_req[:, sel], chunk.nom_cnt[sel])
        for i, res in zip(sel.tolist(), found, strict=True):
            chunk.results[chunk.passing[i]] = res

    def _victims(self, rows: np.ndarray, entries: list[NodeVictims], cur_req: np.ndarray,
                 cur_cnt: np.ndarray, nom_req: np.ndarray, nom_cnt: np.ndarray
                 ) -> list[tuple[list[Pod], int]]:
        """The victims of each node of ``rows`` (where the pod fits with every potential
        victim gone, ``cur_*``): step ``j`` adds back every node's ``j``-th pod in reprieve
        order — PDB-violating first — and keeps it where the pod still fits."""
        from kubesched.preemption.evaluator import filter_pods_with_pdb_violation

        n = len(rows)
        width = cur_req.shape[0]
        orders: list[list[Pod]] = []
        reqs: list[np.ndarray] = []
        num_violating = np.zeros(n, dtype=np.int64)
        for i, e in enumerate(entries):
            if self.pdbs:
                viol, non_viol = filter_pods_with_pdb_violation(e.pods, self.pdbs)
                where = {id(p): j for j, p in enumerate(e.pods)}
                order = viol + non_viol
                reqs.append(_widen(e.req[[where[id(p)] for p in order]], width))
                num_violating[i] = len(viol)
            else:
                order = e.pods
                reqs.append(_widen(e.req, width))  # entries made before a new resource
            orders.append(order)
        lengths = np.array([len(o) for o in orders], dtype=np.int64)
        steps = int(lengths.max())
        # added[j, :, i]: node i's j-th pod's request (zero past its last pod)
        added = np.zeros((steps, width, n), dtype=np.int64)
        node_of = np.repeat(np.arange(n), lengths)
        step_of = np.arange(len(node_of)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        added[step_of, :, node_of] = np.concatenate(reqs)
        victim = np.zeros((steps, n), dtype=bool)
        for j in range(steps):
            sel = np.flatnonzero(lengths > j)
            trial_req = cur_req[:, sel] + added[j][:, sel]
            trial_cnt = cur_cnt[sel] + 1
            fits = self._fits(rows[sel], trial_req, trial_cnt, nom_req[:, sel], nom_cnt[sel])
            keep = sel[fits]
            cur_req[:, keep] = trial_req[:, fits]
            cur_cnt[keep] = trial_cnt[fits]
            victim[j, sel[~fits]] = True
        out: list[tuple[list[Pod], int]] = []
        for order, evicted, nv in zip(orders, victim.T.tolist(), num_violating.tolist(),
                                      strict=True):
            victims = [p for p, v in zip(order, evicted, strict=False) if v]
            if 0 < nv < len(order):  # both kinds: the per-node form sorts them again
                sort_slice(victims, self.cache.more_important)
            out.append((victims, sum(evicted[:nv])))
        return out
