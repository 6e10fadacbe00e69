"""The ``kubesched sweep`` and ``kubesched trace`` commands (registered by ``cli.py``).

Nothing heavy is imported until a command runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from kubesched.cliopts import decision_options, not_nan, resolve_features
from kubesched.errors import InputError, check_output_path, require_extra

if TYPE_CHECKING:
    from kubesched.config.features import FeatureGates
    from kubesched.research.plots import Curves
    from kubesched.research.sweep import AttachAutoscaler, Outcome, Results, Run, Summary
    from kubesched.research.sweepfile import CheckAutoscaler

# Where these machines keep the traces (DESIGN.md): beside the checkout, never in it.
DEFAULT_DATA = Path("..") / "shared" / "data" / "alibaba-gpu-v2023"
OPENB_NODES = "openb_node_list_gpu_node.csv"  # prepare_input.sh puts it beside each trace


# cluster-autoscaler for the scenarios' runs, given by the layer that holds it (cli):
# research sits below the autoscaler and cannot import it
_AUTOSCALER: tuple[CheckAutoscaler, AttachAutoscaler] | None = None


def use_autoscaler(check: CheckAutoscaler, attach: AttachAutoscaler) -> None:
    global _AUTOSCALER
    _AUTOSCALER = (check, attach)


def _given(name: str) -> bool:
    source = click.get_current_context().get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT)


def _plugin_specs(specs: tuple[str, ...]) -> list[str]:
    """``--plugin`` values as the workers can load them from another directory."""
    out = []
    for spec in specs:
        target, _, cls = spec.rpartition(":")
        out.append(f"{Path(target).resolve()}:{cls}" if target.endswith(".py") else spec)
    return out


@click.command("sweep")
@click.argument("sweep_file", metavar="SWEEP.yaml", type=click.Path(exists=True,
                                                                    dir_okay=False))
@click.option("--results", "results_path", required=True, metavar="PATH.csv",
              help="One row per run, appended as runs finish; runs already there are "
                   "skipped (a rerun resumes). Parquet when PATH ends .parquet.")
@click.option("--seeds", type=click.IntRange(min=1), metavar="N",
              help="N seeds from the sweep file's first seed (overrides its count).")
@click.option("--data", "data_dir", metavar="DIR",
              help=f"Where the trace files are [default: {DEFAULT_DATA}].")
@click.option("--ray", "ray_address", metavar="ADDRESS|local",
              help="Run on Ray: 'local' starts a Ray runtime here; otherwise the address "
                   "of a cluster.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N",
              help="Runs at once [default: every core; with --ray: as the cluster allows].")
@click.option("--plot", "plot_path", metavar="PATH.png|svg",
              help="Draw the sweep's runs as the FGD paper's figure: mean per policy and "
                   "trace over seeds, with error bars and the paper's numbers.")
@click.option("--quiet", is_flag=True, help="No progress and no summary.")
@decision_options
def sweep_command(sweep_file: str, results_path: str, seeds: int | None,
                  data_dir: str | None, ray_address: str | None, jobs: int | None,
                  plot_path: str | None, quiet: bool, features: FeatureGates,
                  plugins: dict[str, type]) -> None:
    """Run the grid of SWEEP.yaml (traces × policies, scenarios × configurations, × seeds
    × releases) on every core or on Ray; one results row per run.

    The sweep file's format: docs/research.md, "Sweeps"."""
    from kubesched.research.plots import check_plot_path
    from kubesched.research.sweep import (
        Results,
        check_inputs,
        default_jobs,
        grid,
        row_key,
        summarize,
    )
    from kubesched.research.sweepfile import load_sweep

    if results_path == "-":
        raise InputError("--results needs a file name (a sweep resumes from it)")
    check_output_path(results_path, "--results")
    if plot_path is not None:
        check_output_path(plot_path, "--plot")
        check_plot_path(plot_path)
        require_extra("research", "--plot", "matplotlib")
    if ray_address:
        require_extra("ray", "--ray", "ray")
    check, attach = _AUTOSCALER or (None, None)
    sweep = load_sweep(sweep_file, Path(data_dir) if data_dir else DEFAULT_DATA, check)
    if seeds is not None:
        sweep.with_seed_count(seeds)
    params = click.get_current_context().params
    sweep.plugins += _plugin_specs(params.get("plugin_specs", ()))
    if sweep.versions and not _given("kubernetes_version"):
        gates = tuple(params.get("feature_gates", ()))
        releases = [resolve_features(v, gates) for v in sweep.versions]
    else:  # the flag (or its default, when the file names no release) decides
        releases = [features]
    runs = grid(sweep, releases, attach)
    results = Results(results_path)
    todo = [r for r in runs if r.key not in results.done]
    for w in check_inputs(sweep, releases):
        click.echo(f"warning: {w}", err=True)
    workers = jobs if ray_address else jobs or default_jobs()
    if not quiet:
        where = (f"on Ray ({ray_address})" if ray_address
                 else f"on {min(workers or 1, max(len(todo), 1))} process(es)")
        skipped = len(runs) - len(todo)
        click.echo(f"{len(runs)} runs" + (f", {skipped} already in {results_path}"
                                          if skipped else "")
                   + (f"; {len(todo)} {where}" if todo else ""), err=True)
    results.start()
    failures = _run_all(todo, results, ray_address, workers, quiet)
    keys = {r.key for r in runs}
    summary = summarize([r for r in results.rows if row_key(r) in keys], sweep)
    if not quiet and summary:
        _print_summary(summary)
    if plot_path is not None and summary:
        from kubesched.research.plots import write_plot

        write_plot(plot_path, summary, sweep.name,
                   _curves([r for r in runs if r.tiebreak == sweep.tiebreaks[0]], results))
    for f in failures:
        click.echo(f"error: run {_label(f.run)} failed: {f.error}", err=True)
    if failures:
        click.echo(f"{len(failures)} run(s) failed; rerunning the same command retries "
                   "only them", err=True)
        sys.exit(1)


def _curves(runs: list[Run], results: Results) -> Curves:
    """The recorded curves of the traces' runs, by (trace, level, tie-break) and policy."""
    out: Curves = {}
    for run in runs:
        levels = results.curves.get(run.key)
        if run.ratio is not None and levels:
            out.setdefault((run.scenario, run.ratio, run.tiebreak), {}).setdefault(
                run.policy, []).append(levels)
    return out


def _label(run: Run) -> str:
    gates = f" {run.feature_gates}" if run.gates else ""
    level = f" at {run.ratio:g}, {run.tiebreak} tie-break" if run.ratio is not None else ""
    ca = f" autoscaler {run.autoscaler}" if run.autoscaler else ""
    return (f"{run.scenario}{level} {run.policy}{ca} seed {run.seed} "
            f"v{run.kubernetes_version}{gates}")


def _line(n: int, total: int, outcome: Outcome) -> str:
    row = outcome.row
    if row is None:
        return f"[{n}/{total}] {_label(outcome.run)}: failed"
    what = (f"unallocated GPU {row['unallocated_gpu_pct']:.2f} %"
            if row["unallocated_gpu_pct"] is not None
            else f"{row['scheduled']} scheduled, {row['pending']} pending")
    if row.get("node_hours") is not None:
        what += f", {row['node_hours']:.2f} node-hours, cost {row['cost']:.2f}"
    return f"[{n}/{total}] {_label(outcome.run)}: {what} ({row['wall_seconds']:.1f} s)"


def _run_all(todo: list[Run], results: Results, ray_address: str | None,
             workers: int | None, quiet: bool) -> list[Outcome]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from kubesched.research.sweep import run_local, run_ray

    if not todo:
        return []
    outcomes = (run_ray(todo, ray_address, workers) if ray_address
                else run_local(todo, workers or 1))
    err = Console(stderr=True)
    failures = []
    try:
        with Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True,
                      disable=quiet or not err.is_terminal) as bar:
            task = bar.add_task("sweep", total=len(todo))
            for n, outcome in enumerate(outcomes, start=1):
                if outcome.row is not None:
                    results.add(outcome.row, outcome.levels)
                else:
                    failures.append(outcome)
                bar.advance(task)
                if not quiet:
                    err.print(_line(n, len(todo), outcome), markup=False, highlight=False)
    finally:
        # on Ctrl-C too: the workers are terminated (or Ray shut down) before we exit
        outcomes.close()
    return failures


def _print_summary(summary: list[Summary]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    several = len({(s.kubernetes_version, s.feature_gates) for s in summary}) > 1
    levels = len({(s.ratio, s.tiebreak) for s in summary if s.ratio is not None}) > 1
    autoscaled = any(s.node_hours is not None or s.autoscaler for s in summary)
    paper = any(s.paper is not None for s in summary)
    t = Table(title="Mean over seeds (± sample s.d.)")
    for col in (["scenario"] + (["arrived", "tie-break"] if levels else []) + ["policy"]
                + (["autoscaler"] if autoscaled else []) + (["release"] if several else [])
                + ["metric", "seeds", "mean", "± s.d."] + (["paper"] if paper else [])
                + (["node-hours", "cost"] if autoscaled else [])):
        t.add_column(col, justify="right" if col in ("arrived", "seeds", "mean", "± s.d.",
                                                     "paper", "node-hours", "cost")
                     else "left")
    for s in summary:
        rel = [Text(f"{s.kubernetes_version} {s.feature_gates}".strip())] if several else []
        at = ([f"{s.ratio:.0%}" if s.ratio is not None else "", s.tiebreak] if levels
              else [])
        # the authors' means have 3 decimals: quoting 2 would round some at a half cent
        ref = ["" if s.paper is None else f"{s.paper:g}"] if paper else []
        ca = [Text(s.autoscaler or "default")] if autoscaled else []
        money = ([f"{s.node_hours:.2f}" if s.node_hours is not None else "",
                  f"{s.cost:.2f}" if s.cost is not None else ""] if autoscaled else [])
        t.add_row(Text(s.scenario), *at, Text(s.policy), *ca, *rel, s.metric, str(s.runs),
                  f"{s.mean:.2f}", f"{s.stdev:.2f}", *ref, *money)
    Console().print(t)


# ----------------------------------------------------------------------------- trace


FORMATS = ("openb", "generic")


@click.command("trace")
@click.argument("fmt", metavar="FORMAT", required=False, type=click.Choice(FORMATS))
@click.option("--format", "fmt_option", type=click.Choice(FORMATS),
              help="The trace's format (or as the first argument).")
@click.option("--pods", "pods_path", required=True, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False),
              help="The pods: openb's pod list CSV, or the generic format (CSV or JSON "
                   "Lines).")
@click.option("--nodes", "nodes_path", metavar="FILE",
              type=click.Path(exists=True, dir_okay=False),
              help=f"The nodes [openb default: {OPENB_NODES} beside --pods, if there].")
@click.option("--ratio", type=click.FloatRange(min=0), callback=not_nan, default=1.3,
              show_default=True,
              help="openb, order paper: copies of trace pods are added until the GPUs "
                   "requested reach RATIO × the nodes' GPUs (0: the trace's pods as they are).")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True,
              help="openb, order paper: the seed of the shuffle and the copies.")
@click.option("--order", type=click.Choice(["paper", "replay"]), default="paper",
              show_default=True,
              help="openb: paper (the FGD paper's workload: shuffled, inflated, one a "
                   "second, never leaving) or replay (the trace's creation and deletion "
                   "times).")
@click.option("--out", "out_path", required=True, metavar="PATH",
              help="The scenario file to write ('-': stdout).")
def trace_command(fmt: str | None, fmt_option: str | None, pods_path: str,
                  nodes_path: str | None, ratio: float, seed: int, order: str,
                  out_path: str) -> None:
    """Import a trace as a scenario file for simulate, explain, sweep.

    FORMAT: openb (the Alibaba GPU trace of the FGD paper) or generic (docs/research.md,
    "Trace import")."""
    from kubesched.research.tracefmt import (
        check_docs,
        dump_docs,
        generic_node_docs,
        generic_pod_docs,
        openb_docs,
    )

    if fmt and fmt_option and fmt != fmt_option:
        raise InputError(f"the format is given twice, as {fmt} and --format {fmt_option}")
    fmt = fmt or fmt_option
    if fmt is None:
        raise InputError("name the trace's format: kubesched trace openb|generic ...")
    check_output_path(out_path, "--out")
    pods = Path(pods_path)
    nodes = Path(nodes_path) if nodes_path else None
    if fmt == "openb":
        if nodes is None and (pods.parent / OPENB_NODES).is_file():
            nodes = pods.parent / OPENB_NODES
        docs = openb_docs(pods, nodes, ratio=ratio, seed=seed, order=order)
        how = f"order {order}" + (f", ratio {ratio:g}, seed {seed}" if order == "paper" else "")
    else:
        for opt in ("ratio", "seed", "order"):
            if _given(opt):
                raise InputError(f"--{opt} is for openb traces (a generic trace's pods "
                                 "arrive at their arrival times)")
        docs = (generic_node_docs(nodes) if nodes else []) + generic_pod_docs(pods)
        how = "arrival and duration from the trace"
    check_docs(docs, pods_path)
    sources = pods.name + (f" and {nodes.name}" if nodes else "")
    n_nodes = sum(1 for d in docs if d["kind"] == "Node")
    text = dump_docs(docs, f"kubesched trace {fmt}: {sources}; {how}\n"
                           f"{n_nodes} nodes, {len(docs) - n_nodes} pods")
    if out_path == "-":
        sys.stdout.write(text)
        return
    tmp = f"{out_path}.tmp"
    Path(tmp).write_text(text, encoding="utf-8")
    os.replace(tmp, out_path)
    click.echo(f"{out_path}: {n_nodes} nodes, {len(docs) - n_nodes} pods ({how})", err=True)

