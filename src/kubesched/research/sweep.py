"""``kubesched sweep``: the grid of a sweep file run on every core (or on Ray), one results
row per run, appended as each run finishes so that a rerun resumes where the last stopped.

A run is deterministic given its seed (the workload draw and the scheduler's tie-breaks), so
where it runs — in-process, a local worker process, a Ray worker — does not change its row,
except ``wall_seconds``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
import pickle
import signal
import statistics
import sys
import traceback
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.collector import for_one_run, one_run, tune_for_bulk
from kubesched.config.features import FeatureGates
from kubesched.errors import InputError, require_extra
from kubesched.research.openb import OpenbSpec, read_nodes, read_pods
from kubesched.research.sweepfile import SCENARIO_TIEBREAK, Autoscaler, Config, Sweep

if TYPE_CHECKING:
    from kubesched.api.scenario import Scenario
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.config import SchedulerConfiguration

# DESIGN.md's contract: scenario, policy, seed, kubernetes_version, then the metrics. The
# gate overrides, the arrival level (traces), the tie-break and the autoscaler's options
# (scenarios) are part of a run's key too, but go last so that readers of the contract's
# column order are not disturbed.
KEY_COLUMNS = ("scenario", "policy", "seed", "kubernetes_version", "feature_gates", "ratio",
               "tiebreak", "autoscaler")
METRIC_COLUMNS = ("pods", "scheduled", "pending", "unallocated_gpu_pct",
                  "gpu_milli_allocated", "gpu_milli_total", "node_hours", "cost",
                  "wall_seconds")
COLUMNS = KEY_COLUMNS[:4] + METRIC_COLUMNS + KEY_COLUMNS[4:]
INT_COLUMNS = frozenset({"seed", "pods", "scheduled", "pending", "gpu_milli_allocated",
                         "gpu_milli_total"})
FLOAT_COLUMNS = frozenset({"unallocated_gpu_pct", "wall_seconds", "ratio", "node_hours",
                           "cost"})
# A run's autoscaler, wired in by the layer that holds it: given the run's cluster, the
# options (flag → value) and the seed, it attaches cluster-autoscaler when the scenario has
# NodeGroups and returns what gives (node-hours, cost) at the run's end; None otherwise.
# A module-level function, so that it travels to worker processes by name.
AttachAutoscaler = Callable[["SimCluster", dict[str, Any], int],
                            Callable[[float], tuple[float, float]] | None]

Row = dict[str, Any]
Key = tuple[str, ...]


@dataclass(frozen=True)
class Run:
    """One cell of the grid: everything a worker needs, and nothing that does not pickle
    (plugins travel as their ``module:Class`` specs)."""

    scenario: str
    policy: str
    seed: int
    kubernetes_version: str
    gates: tuple[tuple[str, bool], ...] = ()
    trace: OpenbSpec | None = None
    files: tuple[str, ...] = ()
    config: Config | None = None
    plugins: tuple[str, ...] = ()
    tiebreak: str = SCENARIO_TIEBREAK
    autoscaler: str = ""  # the options' name; "": cluster-autoscaler's defaults
    autoscaler_options: tuple[tuple[str, Any], ...] = ()
    attach: AttachAutoscaler | None = None

    @property
    def feature_gates(self) -> str:
        return gates_text(self.gates)

    @property
    def ratio(self) -> float | None:
        """The arrival level a trace's workload is inflated to; none for scenarios."""
        return self.trace.ratio if self.trace is not None else None

    @property
    def key(self) -> Key:
        return (self.scenario, self.policy, str(self.seed), self.kubernetes_version,
                self.feature_gates, _cell(self.ratio), self.tiebreak, self.autoscaler)


def gates_text(gates: Iterable[tuple[str, bool]]) -> str:
    """The ``--feature-gates`` overrides as the results record them (sorted, so the same
    overrides always make the same key)."""
    return ",".join(f"{n}={'true' if v else 'false'}" for n, v in sorted(gates))


def row_key(row: Row) -> Key:
    return tuple(_cell(row.get(c)) for c in KEY_COLUMNS)


def grid(sweep: Sweep, features: list[FeatureGates],
         attach: AttachAutoscaler | None = None) -> list[Run]:
    """Seeds outermost, so that a sweep stopped early has every trace and policy for its
    first seeds rather than every seed of its first traces. ``attach``: how a scenario's
    run gets its autoscaler (none: NodeGroups are not acted on)."""
    autoscalers = sweep.autoscalers or [Autoscaler("")]
    runs: list[Run] = []
    for seed in sweep.seeds:
        for gates in features:
            v, g = gates.version, gates.overrides
            for t in sweep.traces:
                runs += [Run(t.name, p, seed, v, g, trace=t.at(ratio), tiebreak=tb)
                         for ratio in t.ratios or (t.spec.ratio,)
                         for tb in sweep.tiebreaks for p in sweep.policies]
            for s in sweep.scenarios:
                runs += [Run(s.name, c.name, seed, v, g, files=s.files, config=c,
                             plugins=tuple(sweep.plugins), autoscaler=a.name,
                             autoscaler_options=a.options, attach=attach)
                         for c in sweep.configs for a in autoscalers]
    return runs


# ----------------------------------------------------------------------- checking first


def check_inputs(sweep: Sweep, features: list[FeatureGates]) -> list[str]:
    """Read every trace, scenario and configuration the grid names, as the runs will, so
    that bad input ends the sweep before any run starts; returns the scenarios' warnings."""
    from kubesched.api.scenario import load_scenario, load_scenario_docs
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.plugins.loading import out_of_tree_plugins

    for path in sorted({t.spec.node_file for t in sweep.traces}):
        read_nodes(path)
    for path in sorted({t.spec.pod_file for t in sweep.traces}):
        read_pods(path)
    warnings: list[str] = []
    if not sweep.scenarios:
        return warnings
    plugins = out_of_tree_plugins(sweep.plugins)
    for gates in features:
        empty = load_scenario_docs([], "<empty>", release=gates.version)
        loaded = []
        for s in sweep.scenarios:
            sc = load_scenario(list(s.files), release=gates.version)
            warnings += [w for w in sc.warnings if w not in warnings]
            loaded.append(sc)
        for c in sweep.configs:
            own = c.file is None and c.doc is None  # then each scenario's own is checked
            for sc in loaded if own else loaded[:1]:
                # building the scheduler checks the profiles' plugin names
                SimCluster(empty, configuration(c, sc, gates, plugins))
    return warnings


def configuration(config: Config | None, scenario: Scenario, features: FeatureGates,
                  plugins: dict[str, type]) -> SchedulerConfiguration:
    """What a generic run decides with: the sweep's configuration (a file, or a document
    written in the sweep file), else the scenario's own, else the default."""
    from kubesched.config import run_config

    if config is not None and config.doc is not None:
        return run_config(None, config.doc, config.source, features, plugins)
    return run_config(config.file if config else None, scenario.config,
                      scenario.config_source, features, plugins)


# ----------------------------------------------------------------------- one run


def run_one(run: Run) -> tuple[Row, dict[int, float] | None]:
    """The run's results row, and for a trace its curve: allocated GPU % at each whole
    percentage of arrived workload (research.run.arrival_levels)."""
    features = FeatureGates(run.kubernetes_version, run.gates)
    row: Row = dict(zip(KEY_COLUMNS, (run.scenario, run.policy, run.seed,
                                      run.kubernetes_version, run.feature_gates, run.ratio,
                                      run.tiebreak, run.autoscaler), strict=True))
    levels = None
    if run.trace is not None:
        from kubesched.research.run import replay

        r = replay(run.trace, run.policy, seed=run.seed, name=run.scenario, features=features,
                   tiebreak=run.tiebreak)
        row.update(pods=r.pods, scheduled=r.scheduled, pending=r.pods - r.scheduled,
                   unallocated_gpu_pct=round(r.unallocated_gpu_pct, 6),
                   gpu_milli_allocated=r.gpu_milli_allocated,
                   gpu_milli_total=r.gpu_milli_total, wall_seconds=r.wall_seconds)
        levels = r.levels()
    else:
        from kubesched.api.scenario import load_scenario
        from kubesched.backends.sim.cluster import SimCluster
        from kubesched.plugins.loading import out_of_tree_plugins

        sc = load_scenario(list(run.files), release=run.kubernetes_version)
        config = configuration(run.config, sc, features, out_of_tree_plugins(run.plugins))
        sim = SimCluster(sc, config, seed=run.seed)
        figures = (run.attach(sim, dict(run.autoscaler_options), run.seed)
                   if run.attach is not None else None)
        result = sim.run()
        row.update(pods=len(result.records), scheduled=result.scheduled,
                   pending=len(result.pending), wall_seconds=result.wall_seconds)
        if figures is not None:
            hours, cost = figures(result.virtual_seconds)
            row.update(node_hours=round(hours, 6), cost=round(cost, 6))
    row["wall_seconds"] = round(row["wall_seconds"], 3)
    return {c: row.get(c) for c in COLUMNS}, levels


@dataclass(frozen=True)
class Outcome:
    run: Run
    row: Row | None
    error: str | None  # one line; with KUBESCHED_DEBUG=1 the traceback too
    levels: dict[int, float] | None = None


def run_safely(run: Run) -> Outcome:
    """``run_one`` with its failure as data: a worker's exception must not lose the rows
    the other workers are finishing."""
    try:
        row, levels = run_one(run)
        return Outcome(run, row, None, levels)
    except InputError as e:
        return Outcome(run, None, str(e))
    except Exception as e:
        text = f"{type(e).__name__}: {e}"
        if os.environ.get("KUBESCHED_DEBUG"):
            text += "\n" + traceback.format_exc()
        return Outcome(run, None, text)


# ----------------------------------------------------------------------- where runs run


def _worker_init() -> None:
    # Ctrl-C is the parent's to handle: it terminates the pool (no traceback per worker)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_in_worker(run: Run) -> Outcome:
    """A run in a process of the sweep's own (a pool's or Ray's), collecting garbage as
    kubesched's commands do."""
    tune_for_bulk()
    with one_run():
        return run_safely(run)


def _run_forked(run: Run) -> Outcome:
    """A run in a process forked for it from the pool's worker (Linux): a trace's workload
    is built once in the worker and read by every run's process as it is (not unpickled),
    and a run's objects go with its process at once — freeing a replay's cyclic object
    graph by a collection took 0.8 s of its 10. Ends the run's process with the worker's."""
    tune_for_bulk()
    if run.trace is not None:
        from kubesched.research.openb import keep_for_children

        try:
            keep_for_children(replace(run.trace, seed=run.seed),
                              release=run.kubernetes_version)
        except Exception:  # the run in this process says what is wrong, as ever
            return _run_in_worker(run)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the run's process: never returns
        code = 1
        try:
            os.close(read)
            _end_with_parent()
            from kubesched.research.openb import in_forked_child

            in_forked_child()
            for_one_run()
            data = pickle.dumps(run_safely(run), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)  # no clean-up: the kernel frees the run's memory
    os.close(write)
    with os.fdopen(read, "rb") as inp:
        data = inp.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return Outcome(run, None, f"the run's process ended without a result "
                                  f"(wait status {status})")
    got: Outcome = pickle.loads(data)
    return got


def _end_with_parent() -> None:
    """Linux's parent-death signal: the run's process is ended when its worker is (the
    sweep interrupted terminates the pool's workers)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


_PR_SET_PDEATHSIG = 1


def _can_fork() -> bool:
    return sys.platform == "linux" and hasattr(os, "fork")


def run_local(runs: list[Run], jobs: int) -> Generator[Outcome, None, None]:
    """The runs on ``jobs`` processes (in this one when 1), outcomes as they finish."""
    if jobs <= 1 or len(runs) <= 1:
        for run in runs:
            yield run_safely(run)
        return
    import multiprocessing

    # spawn: a fresh interpreter per worker, safe beside the progress bar's thread (fork
    # would copy its locks mid-use) and the same on every platform
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(min(jobs, len(runs)), initializer=_worker_init)
    try:
        work = _run_forked if _can_fork() else _run_in_worker
        yield from pool.imap_unordered(work, runs, chunksize=1)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def run_ray(runs: list[Run], address: str, jobs: int | None) -> Generator[Outcome, None, None]:
    """The runs as Ray tasks: ``address`` ``local`` starts a Ray runtime on this machine
    (``jobs`` CPUs, default all), anything else is a cluster to connect to. At most
    ``jobs`` tasks are in flight when given. Every node needs kubesched installed and the
    trace and scenario files at the same paths as here."""
    require_extra("ray", "--ray", "ray")
    import ray
    # (Ray's INFO lines, "Started a local Ray instance", would interleave with the sweep's)
    if address == "local":
        # The workers must import the kubesched this process runs (a checkout on
        # PYTHONPATH, or the installed one): the Ray processes started here inherit the
        # environment, so it names this one first while they start.
        before = os.environ.get("PYTHONPATH")
        here = str(Path(__file__).resolve().parents[2])
        os.environ["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [before])])
        try:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        finally:
            if before is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = before
    else:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, ValueError) as e:
            raise InputError(f"--ray {address}: cannot connect: {e}") from None
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_run_in_worker)
        waiting = iter(runs)
        limit = jobs or len(runs)
        in_flight: dict[Any, Run] = {}

        def submit() -> None:
            for run in waiting:
                in_flight[task.remote(run)] = run
                if len(in_flight) >= limit:
                    return

        submit()
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            run = in_flight.pop(ready[0])
            try:
                yield ray.get(ready[0])
            except ray.exceptions.RayError as e:  # the worker died (killed, out of memory)
                yield Outcome(run, None, f"Ray: {type(e).__name__}: {e}")
            submit()
    finally:
        ray.shutdown()


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


# ----------------------------------------------------------------------- the results file


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back to the same float
    return str(value)


def _typed(column: str, text: str) -> Any:
    if column not in INT_COLUMNS and column not in FLOAT_COLUMNS:
        return text
    if text == "":
        return None
    if column in INT_COLUMNS:
        return int(text)
    if column in FLOAT_COLUMNS:
        return float(text)
    return text


def curves_path(results: Path) -> Path:
    """Where the traces' curves go beside a results file: ``R.csv`` → ``R.curves.jsonl``."""
    return results.with_name(results.stem + ".curves.jsonl")


def _whole_lines(path: Path) -> str:
    """The file's text without a last line cut short (the machine stopped mid-write): that
    line's run reruns. The file is truncated to match, so the rerun appends cleanly."""
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
        path.write_text(text, encoding="utf-8")
    return text


class Results:
    """The results file: rows already there (a rerun skips their runs) and rows appended
    one at a time, each on disk when ``add`` returns. CSV; Parquet when the path ends
    ``.parquet`` (rewritten whole, atomically, after each row: Parquet cannot be appended
    to, and a sweep's few thousand rows take milliseconds). Beside it, the traces' curves
    (``curves_path``), one JSON line per run: its key columns, ``arrived_pct`` (whole
    percentages of the cluster's GPUs) and ``allocated_pct`` at each."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.parquet = self.path.suffix.lower() == ".parquet"
        if self.parquet:
            require_extra("research", "--results PATH.parquet", "pyarrow")
        self.rows: list[Row] = []
        if self.path.exists() and self.path.stat().st_size > 0:
            self.rows = self._read_parquet() if self.parquet else self._read_csv()
        self.done: set[Key] = {row_key(r) for r in self.rows}
        self.curves_path = curves_path(self.path)
        self.curves: dict[Key, dict[int, float]] = {}
        if self.curves_path.exists():
            self._read_curves()

    def _read_curves(self) -> None:
        for line, text in enumerate(_whole_lines(self.curves_path).splitlines(), start=1):
            try:
                rec = json.loads(text)
                key = tuple(_cell(rec[c]) for c in KEY_COLUMNS)
                levels = dict(zip(rec["arrived_pct"], rec["allocated_pct"], strict=True))
            except (ValueError, KeyError, TypeError):
                raise InputError("not a curve line of kubesched sweep",
                                 file=f"{self.curves_path}:{line}") from None
            self.curves[key] = {int(x): float(v) for x, v in levels.items()}

    def _read_csv(self) -> list[Row]:
        text = _whole_lines(self.path)
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header is None:
            return []
        if tuple(header) != COLUMNS:
            older = {tuple(c for c in COLUMNS if c not in gone) for gone in (
                ("ratio", "tiebreak", "autoscaler", "node_hours", "cost"),
                ("autoscaler", "node_hours", "cost"))}
            hint = ("; written by an earlier kubesched, before the ratio, tiebreak, autoscaler, "
                    "node_hours and cost columns: add them or start a new results file"
                    if tuple(header) in older else "")
            raise InputError(f"not a results file of kubesched sweep (its header is "
                             f"{','.join(header)}; expected {','.join(COLUMNS)}){hint}",
                             file=f"{self.path}:1")
        rows = []
        for line, rec in enumerate(reader, start=2):
            if len(rec) != len(COLUMNS):
                raise InputError(f"{len(rec)} values where the header has {len(COLUMNS)}",
                                 file=f"{self.path}:{line}")
            try:
                rows.append({c: _typed(c, v) for c, v in zip(COLUMNS, rec, strict=True)})
            except ValueError:
                raise InputError("not a number where one is expected",
                                 file=f"{self.path}:{line}") from None
        return rows

    def _read_parquet(self) -> list[Row]:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(self.path)
        except Exception as e:  # pyarrow's own error types: ArrowInvalid, OSError
            raise InputError(f"not a Parquet file: {e}", file=str(self.path)) from None
        if tuple(table.column_names) != COLUMNS:
            raise InputError(f"not a results file of kubesched sweep (its columns are "
                             f"{','.join(table.column_names)})", file=str(self.path))
        return list(table.to_pylist())

    def add(self, row: Row, levels: dict[int, float] | None = None) -> None:
        """The row, and its curve first when it has one (a curve without its row is done
        again and replaced; a row without its curve would keep it missing)."""
        if levels:
            rec = {c: row[c] for c in KEY_COLUMNS}
            rec.update(arrived_pct=list(levels), allocated_pct=list(levels.values()))
            with self.curves_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
            self.curves[row_key(row)] = dict(levels)
        self.rows.append(row)
        self.done.add(row_key(row))
        if self.parquet:
            self._write_parquet()
            return
        new = not self.path.exists() or self.path.stat().st_size == 0
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if new:
            w.writerow(COLUMNS)
        w.writerow([_cell(row[c]) for c in COLUMNS])
        with self.path.open("a", encoding="utf-8") as f:
            f.write(buf.getvalue())  # one write per row: a kill leaves whole lines

    def start(self) -> None:
        """An empty results file with its header now, so that a sweep of no new runs (or
        one interrupted before its first row) still leaves a readable file."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            if self.parquet:
                self._write_parquet()
            else:
                self.path.write_text(",".join(COLUMNS) + "\n", encoding="utf-8")

    def _write_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {c: pa.int64() if c in INT_COLUMNS else pa.float64() if c in FLOAT_COLUMNS
                 else pa.string() for c in COLUMNS}
        schema = pa.schema([(c, types[c]) for c in COLUMNS])
        table = pa.Table.from_pylist(self.rows, schema=schema)
        tmp = self.path.with_name(self.path.name + ".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, self.path)


# ----------------------------------------------------------------------- summary


@dataclass(frozen=True)
class Summary:
    scenario: str
    policy: str
    kubernetes_version: str
    feature_gates: str
    ratio: float | None
    tiebreak: str
    metric: str
    runs: int
    mean: float
    stdev: float  # sample standard deviation over seeds (0 for one seed)
    paper: float | None
    autoscaler: str = ""
    node_hours: float | None = None  # means over seeds, where an autoscaler ran
    cost: float | None = None


def summarize(rows: list[Row], sweep: Sweep) -> list[Summary]:
    """Mean and spread over seeds per (scenario, policy, release, gates, arrival level,
    tie-break, autoscaler), in the sweep's order: unallocated GPU % for traces, pending pods for
    scenarios."""
    groups: dict[tuple[str, str, str, str, float | None, str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["policy"], r["kubernetes_version"],
                           r["feature_gates"] or "", r["ratio"], r["tiebreak"],
                           r.get("autoscaler") or ""), []).append(r)
    autoscalers = {a.name: i for i, a in enumerate(sweep.autoscalers)}
    tiebreaks = {t: i for i, t in enumerate(sweep.tiebreaks)}
    order = {name: i for i, name in enumerate(
        [t.name for t in sweep.traces] + [s.name for s in sweep.scenarios])}
    policy_order = {name: i for i, name in enumerate(
        sweep.policies + [c.name for c in sweep.configs])}
    out = []
    for (scen, pol, ver, gates, ratio, tb, ca), rs in sorted(
            groups.items(), key=lambda kv: (
                order.get(kv[0][0], math.inf), kv[0][2], kv[0][3],
                -math.inf if kv[0][4] is None else kv[0][4], tiebreaks.get(kv[0][5], math.inf),
                autoscalers.get(kv[0][6], -1), policy_order.get(kv[0][1], math.inf))):
        gpu = [r["unallocated_gpu_pct"] for r in rs if r["unallocated_gpu_pct"] is not None]
        metric, values = (("unallocated_gpu_pct", gpu) if gpu
                          else ("pending", [float(r["pending"]) for r in rs]))
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        paper = (sweep.paper_value(scen, ratio, pol) if metric == "unallocated_gpu_pct"
                 else None)
        hours = [r["node_hours"] for r in rs if r.get("node_hours") is not None]
        costs = [r["cost"] for r in rs if r.get("cost") is not None]
        out.append(Summary(scen, pol, ver, gates, ratio, tb, metric, len(values),
                           statistics.fmean(values), sd, paper, ca,
                           statistics.fmean(hours) if hours else None,
                           statistics.fmean(costs) if costs else None))
    return out

