"""The ``kubesched`` command."""

from __future__ import annotations

import json
import math
import os
import sys
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kubesched.cliopts import decision_options
from kubesched.config.features import FeatureGates
from kubesched.errors import InputError, check_output_path

if TYPE_CHECKING:
    from kubesched.api.scenario import Scenario
    from kubesched.backends.sim.cluster import SimResult
    from kubesched.config import SchedulerConfiguration

BUNDLED_EXAMPLE = "quickstart.yaml"


def _bundled_examples() -> list[str]:
    base = resources.files("kubesched") / "examples"
    return sorted(p.name for p in base.iterdir() if p.name.endswith(".yaml"))


def _example_path(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


def _load(scenario_paths: tuple[str, ...], config_path: str | None, features: FeatureGates,
          strict: bool = False) -> tuple[Scenario, SchedulerConfiguration]:
    from kubesched.api.scenario import load_scenario
    from kubesched.config import default_config, load_config, load_config_file

    scenario = load_scenario(list(scenario_paths), release=features.version, strict=strict)
    for w in scenario.warnings:
        click.echo(f"warning: {w}", err=True)
    if config_path:
        config = load_config_file(config_path)
    elif scenario.config is not None:
        config = load_config(scenario.config, scenario.config_source or "<scenario>")
    else:
        config = default_config()
    config.features = features
    return scenario, config


def _fail_input(err: InputError) -> None:
    click.echo(f"error: {err}", err=True)
    sys.exit(2)


class _Commands(click.Group):
    """Every way out of a command is one line and an exit status: 2 bad input, 1 a failure
    while running (with the traceback only under KUBESCHED_DEBUG=1)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except InputError as err:
            _fail_input(err)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (| head): nothing left to say
            sys.exit(1)
        except OSError as err:  # the machine's failure (a full disk), not kubesched's
            where = f"{err.filename}: " if err.filename else ""
            click.echo(f"error: {where}{err.strerror or err}", err=True)
            sys.exit(1)
        except Exception as err:
            if os.environ.get("KUBESCHED_DEBUG"):
                raise
            click.echo(f"error: internal error: {type(err).__name__}: {err} (a bug: please "
                       "report it; KUBESCHED_DEBUG=1 shows the traceback)", err=True)
            sys.exit(1)
        return None


def _not_nan(ctx: click.Context, param: click.Parameter, value: float | None
             ) -> float | None:
    if value is not None and math.isnan(value):  # FloatRange lets nan through
        raise click.BadParameter("must be a number of seconds", ctx, param)
    return value


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kubesched")
def main() -> None:
    """kube-scheduler's pipeline in Python: simulate, explain, benchmark."""


@main.command()
@click.argument("scenario", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="A KubeSchedulerConfiguration (overrides one in the scenario).")
@click.option("--seed", default=0, show_default=True, help="Seed for tie-breaking.")
@click.option("--placements", "placements_path", metavar="PATH",
              help="Write one JSON line per pod that entered the queue ('-': stdout).")
@click.option("--until", type=click.FloatRange(min=0), metavar="SECONDS", callback=_not_nan,
              help="Stop at this virtual time (pods still pending then are reported so).")
@click.option("--quiet", is_flag=True, help="No progress bar and no summary.")
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings (the API server's "
                   "Strict field validation).")
@click.option("--check", is_flag=True,
              help="Check invariants (room, ports, taints, affinity, spread, no double "
                   "binding) at every binding; a violation ends the run with exit 1.")
@decision_options
def simulate(scenario: tuple[str, ...], config_path: str | None, seed: int,
             placements_path: str | None, until: float | None, quiet: bool, strict: bool,
             check: bool, features: FeatureGates) -> None:
    """Schedule SCENARIO files on an in-memory cluster (no argument: a bundled example)."""
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.backends.sim.invariants import InvariantViolation

    paths = scenario or (_example_path(BUNDLED_EXAMPLE),)
    check_output_path(placements_path, "--placements")
    try:
        scen, config = _load(paths, config_path, features, strict)
        sim = SimCluster(scen, config, seed=seed, check=check)
        sim.until = until
    except InputError as err:
        _fail_input(err)
        return
    show = not quiet and placements_path != "-"
    if show and not scenario:
        click.echo(f"Simulating the bundled example {BUNDLED_EXAMPLE} "
                   f"(others: {', '.join(_bundled_examples())})")
    n_pending = sum(1 for p in scen.pods if not p.spec.node_name)
    try:
        if show and n_pending >= 500 and sys.stderr.isatty():
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task("scheduling", total=n_pending)
                result = sim.run(lambda done, _t: bar.update(task, completed=done))
        else:
            result = sim.run()
    except InvariantViolation as v:
        click.echo(str(v), err=True)
        sys.exit(1)
    if placements_path:
        lines = "".join(json.dumps(r.as_json()) + "\n" for r in result.records)
        if placements_path == "-":
            sys.stdout.write(lines)
        else:
            try:
                Path(placements_path).write_text(lines)
            except OSError as err:  # (checked before the run; a full disk shows only now)
                click.echo(f"error: --placements {placements_path}: {err.strerror or err}",
                           err=True)
                sys.exit(1)
    if show:
        _print_summary(result)


def _print_summary(result: SimResult) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = Console()
    n = len(result.records)
    rate = result.scheduled / result.wall_seconds if result.wall_seconds > 0 else 0.0
    con.print(f"[bold]{result.scheduled}[/] of {n} pods scheduled, "
              f"[bold]{n - result.scheduled}[/] pending "
              f"({result.wall_seconds:.2f} s wall, {result.virtual_seconds:g} s virtual, "
              f"{rate:.0f} pods/s)")
    if result.missing_node_pods:
        listed = ", ".join(f"{k} ({n})" for k, n in list(result.missing_node_pods.items())[:5])
        more = len(result.missing_node_pods) - 5
        con.print(Text(f"{len(result.missing_node_pods)} pod(s) bound to nodes the scenario "
                       f"lacks, never run: {listed}" + (f" and {more} more" if more > 0 else "")))
    reasons = Counter(r.pending_reason() for r in result.pending)
    if reasons:
        t = Table(title="Pending pods by reason", show_lines=False)
        t.add_column("pods", justify="right")
        t.add_column("reason")
        for msg, c in reasons.most_common():
            t.add_row(str(c), Text(msg))  # reasons hold brackets: not rich markup
        con.print(t)
    nodes = result.nodes
    t = Table(title=f"Node utilisation ({len(nodes)} nodes)")
    for col in ("node", "pods", "cpu", "memory"):
        t.add_column(col, justify="left" if col == "node" else "right")
    shown = nodes if len(nodes) <= 20 else nodes[:20]
    for row in shown:
        t.add_row(Text(row["node"]), str(row["pods"]),
                  _pct(row["cpu_requested"], row["cpu_allocatable"]),
                  _pct(row["memory_requested"], row["memory_allocatable"]))
    if len(nodes) > 20:
        t.add_row(f"... {len(nodes) - 20} more", "", "", "")
    con.print(t)


def _pct(used: int, alloc: int) -> str:
    return f"{100 * used / alloc:.0f}%" if alloc else "-"


@main.command()
@click.argument("scenario", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--pod", "pod_key", required=True, help="The pending pod, as NAMESPACE/NAME.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings.")
@decision_options
def explain(scenario: tuple[str, ...], pod_key: str, config_path: str | None, fmt: str,
            strict: bool, features: FeatureGates) -> None:
    """Why a pending pod goes where it goes, or why it fits nowhere."""
    from kubesched.explain import explain as run_explain

    if "/" not in pod_key:
        _fail_input(InputError("--pod must be NAMESPACE/NAME", value=pod_key))
    try:
        scen, config = _load(scenario, config_path, features, strict)
        out = run_explain(scen, config, pod_key)
    except InputError as err:
        _fail_input(err)
        return
    if fmt == "json":
        click.echo(json.dumps(out, indent=1))
        return
    _print_explain(out)


def _print_explain(out: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = Console()
    t = Table(title=f"{out['pod']}")
    t.add_column("node")
    t.add_column("verdict")
    t.add_column("detail")
    for row in out["nodes"]:
        if row["feasible"]:
            detail = ", ".join(f"{k} {v}" for k, v in row["scores"].items())
            mark = " *" if row["node"] in out["selected"] else ""
            t.add_row(Text(row["node"]), f"total {row['total']}{mark}", detail)
        else:
            t.add_row(row["node"], "filtered",
                      Text(f"{row['plugin']}: {', '.join(row['reasons'])}"))
    con.print(t)
    if out["selected"]:
        con.print(f"selected (top score): {', '.join(out['selected'])}")
    if out["message"]:
        con.print(out["message"], markup=False)
    if "preemption" in out:
        pre = out["preemption"]
        if pre is None:
            con.print("preemption: would not help")
        else:
            victims = ", ".join(pre["victims"]) or "none"
            con.print(f"preemption: would nominate {pre['node']}, evicting {victims}",
                      markup=False)


@main.command()
@click.argument("workload", nargs=-1)
@click.option("--results", "results_path", metavar="PATH",
              help="Write the results as JSON ('-': stdout).")
@click.option("--quick", is_flag=True, help="The 500-node sizes only.")
@click.option("--list", "list_only", is_flag=True, help="List the workloads and exit.")
@click.option("--profile", "profile_dir", type=click.Path(file_okay=False),
              help="Write a cProfile of each measured phase into this directory.")
@click.option("--write-scenario", "scenario_path", type=click.Path(dir_okay=False),
              help="Instead of running, write a scheduler_perf-shaped scenario file.")
@click.option("--shape", type=click.Choice(["basic", "node-affinity", "spread", "anti-affinity",
                                            "affinity", "preferred-affinity"]),
              default="basic", show_default=True, help="With --write-scenario: the pods.")
@click.option("--nodes", default=1000, show_default=True, help="With --write-scenario.")
@click.option("--zones", default=3, show_default=True, help="With --write-scenario.")
@click.option("--running", default=0, show_default=True, help="With --write-scenario.")
@click.option("--pending", default=10000, show_default=True, help="With --write-scenario.")
@click.option("--percentage", type=click.IntRange(0, 100),
              help="With --write-scenario: percentageOfNodesToScore.")
def bench(workload: tuple[str, ...], results_path: str | None, quick: bool, list_only: bool,
          profile_dir: str | None, scenario_path: str | None, shape: str, nodes: int,
          zones: int, running: int, pending: int, percentage: int | None) -> None:
    """scheduler_perf's workloads (WORKLOAD: a name or a family such as SchedulingBasic),
    in-process on the simulator; or, with --write-scenario, a scenario file for simulate."""
    check_output_path(results_path, "--results")
    check_output_path(scenario_path, "--write-scenario")
    check_output_path(profile_dir, "--profile", directory=True)
    if scenario_path:
        from kubesched.bench.scenarios import write_scenario

        write_scenario(scenario_path, nodes, running, pending, percentage, shape=shape,
                       zones=zones)
        return
    from kubesched.bench.report import run_bench

    sys.exit(run_bench(workload, quick=quick, results_path=results_path,
                       profile_dir=profile_dir, list_only=list_only))


# `kubesched run` and `kubesched snapshot` (a live cluster): backends/kube/commands.py
from kubesched.backends.kube.commands import run_command, snapshot_command  # noqa: E402

main.add_command(run_command)
main.add_command(snapshot_command)


if __name__ == "__main__":
    main()
