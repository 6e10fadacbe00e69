"""The ``kubesched`` command."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from kubesched.cliopts import decision_options, not_nan
from kubesched.collector import settled, tune_for_bulk
from kubesched.config.features import FeatureGates
from kubesched.errors import InputError, check_output_path, debug, require_extra

if TYPE_CHECKING:
    from kubesched.api.scenario import Scenario
    from kubesched.backends.sim.cluster import SimCluster, SimResult
    from kubesched.config import SchedulerConfiguration

BUNDLED_EXAMPLE = "quickstart.yaml"


def _bundled_examples() -> list[str]:
    base = resources.files("kubesched") / "examples"
    return sorted(p.name for p in base.iterdir() if p.name.endswith(".yaml"))


def _example_path(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


def _load(scenario_paths: tuple[str, ...], config_path: str | None, features: FeatureGates,
          strict: bool = False, plugins: dict[str, type] | None = None,
          quiet: bool = False) -> tuple[Scenario, SchedulerConfiguration]:
    from kubesched.api.gangs import coscheduling_off
    from kubesched.api.loadprogress import LoadProgress
    from kubesched.api.scenario import load_scenario
    from kubesched.config import run_config

    scenario = load_scenario(list(scenario_paths), release=features.version, strict=strict,
                             gates=features.enabled,
                             progress=None if quiet else LoadProgress(sys.stderr))
    for w in scenario.warnings:
        click.echo(f"warning: {w}", err=True)
    config = run_config(config_path, scenario.config, scenario.config_source, features,
                        plugins)
    cosched = any("Coscheduling" in p.plugins.enabled_names() for p in config.profiles)
    for w in coscheduling_off(scenario.objects, cosched):
        click.echo(f"warning: {w}", err=True)
    for name in config.unused_out_of_tree():
        click.echo(f"warning: plugin {name} is registered (--plugin or an entry point) but "
                   "no profile enables it: it takes no part in scheduling", err=True)
    settled()
    return scenario, config


def _console() -> Any:
    """rich's Console, but a reader gone (| head) ends the command as any output does
    (``_Commands``), not with rich's own exit status 1."""
    from rich.console import Console

    class _Quiet(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return _Quiet()


def _fail_input(err: InputError) -> None:
    click.echo(f"error: {err}", err=True)
    sys.exit(2)


class _Commands(click.Group):
    """Every way out of a command is one line and an exit status: 2 bad input, 1 a failure
    while running (with the traceback only under KUBESCHED_DEBUG=1)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            out = super().invoke(ctx)
            sys.stdout.flush()  # a reader gone shows here, not at the interpreter's exit
            return out
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except InputError as err:
            _fail_input(err)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            # the reader went away (| head): nothing left to say, and what is still
            # buffered goes nowhere; the exit status a shell gives a process SIGPIPE ended
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(128 + 13)
        except OSError as err:  # the machine's failure (a full disk), not kubesched's
            where = f"{err.filename}: " if err.filename else ""
            click.echo(f"error: {where}{err.strerror or err}", err=True)
            sys.exit(1)
        except Exception as err:
            if debug():
                raise
            click.echo(f"error: internal error: {type(err).__name__}: {err} (a bug: please "
                       "report it; KUBESCHED_DEBUG=1 shows the traceback)", err=True)
            sys.exit(1)
        return None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kubesched")
def main() -> None:
    """kube-scheduler's pipeline in Python: simulate, explain, benchmark."""
    tune_for_bulk()


SCENARIO_ARG = click.Path(exists=True, allow_dash=True)

EXPANDER_CHOICE = click.Choice(["least-waste", "most-pods", "priority", "price", "random"])

# cluster-autoscaler's flags that the simulator's autoscaler takes (docs/cli.md): name,
# click type, metavar, help
_AUTOSCALER_FLAGS: list[tuple[str, Any, str, str]] = [
    ("expander", EXPANDER_CHOICE, "NAME",
     "The autoscaler's expander: which node group a scale-up takes [default: random]."),
    ("scan-interval", str, "DURATION",
     "How often the autoscaler's loop runs, in virtual time (10s, 1m, or seconds) "
     "[default: 10s]."),
    ("scale-down-enabled", click.BOOL, "BOOL",
     "Whether the autoscaler removes unneeded nodes [default: true]."),
    ("scale-down-unneeded-time", str, "DURATION",
     "How long a node must be unneeded before it may go [default: 10m]."),
    ("scale-down-delay-after-add", str, "DURATION",
     "No scale-down this long after a scale-up [default: 10m]."),
    ("scale-down-delay-after-delete", str, "DURATION",
     "No scale-down this long after a node deletion [default: 0s]."),
    ("scale-down-utilization-threshold", float, "F",
     "A node whose requested cpu and memory are both below this fraction of its "
     "allocatable may be unneeded [default: 0.5]."),
    ("max-nodes-total", int, "N",
     "No scale-up past this many nodes in the cluster (0: no limit) [default: 0]."),
]


def _autoscaler_flags(multiple: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """cluster-autoscaler's options (with NodeGroups in the scenario); the command receives
    the ones given as ``autoscaler: dict[str, Any]`` (flag name -> value; with ``multiple``,
    -> the tuple of values given, one per side)."""
    import functools

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {}
            for name, *_rest in _AUTOSCALER_FLAGS:
                v = kwargs.pop("ca_" + name.replace("-", "_"))
                if v is not None and v != ():
                    given[name] = v
            return f(*args, autoscaler=given, **kwargs)

        for name, typ, metavar, help_text in reversed(_AUTOSCALER_FLAGS):
            if multiple:
                help_text += " Given twice: A, then B."
            wrapper = click.option(f"--{name}", "ca_" + name.replace("-", "_"), type=typ,
                                   metavar=metavar, help=help_text,
                                   multiple=multiple)(wrapper)
        return wrapper

    return decorate


autoscaler_flags = _autoscaler_flags(multiple=False)


@main.command()
@click.argument("scenario", nargs=-1, type=SCENARIO_ARG)
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="A KubeSchedulerConfiguration (overrides one in the scenario).")
@click.option("--seed", default=0, show_default=True, help="Seed for tie-breaking.")
@click.option("--placements", "placements_path", metavar="PATH",
              help="Write one JSON line per pod that entered the queue ('-': stdout).")
@click.option("--state-out", "state_path", metavar="PATH",
              help="Write the end state as a scenario ('-': stdout) that simulate and "
                   "explain read back (PATH.json: one JSON List, faster to read back).")
@click.option("--explain", "explain_keys", metavar="NS/NAME", multiple=True,
              help="After the summary, why this pod is still pending: its explain table "
                   "against the cluster at its last attempt (repeatable).")
@click.option("--top", type=click.IntRange(min=1), metavar="N",
              help="With --explain: the N best nodes; the rest grouped by verdict.")
@click.option("--until", type=click.FloatRange(min=0), metavar="SECONDS", callback=not_nan,
              help="Stop at this virtual time (pods still pending then are reported so).")
@click.option("--report", "report_path", metavar="PATH.html",
              help="Write a self-contained HTML report: pods, utilisation and pending "
                   "reasons over the run, allocation per node, the pending pods.")
@click.option("--metrics", "metrics_path", metavar="PATH.csv",
              help="Write the run's time series as CSV ('-': stdout).")
@click.option("--decisions", "decisions_path", metavar="PATH.jsonl",
              help="Write one JSON line per scheduling cycle as it runs ('-': stdout): the "
                   "node chosen, the feasible and evaluated node counts, the best nodes "
                   "with their scores, the failure and the preemption.")
@click.option("--decisions-top", "decisions_top", type=click.IntRange(min=0), metavar="K",
              help="With --decisions: how many of the best nodes each line lists "
                   "[default: 3].")
@click.option("--quiet", is_flag=True, help="No progress bar and no summary.")
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings (the API server's "
                   "Strict field validation).")
@click.option("--check", is_flag=True,
              help="Check invariants (room, ports, taints, affinity, spread, no double "
                   "binding) at every binding; a violation ends the run with exit 1.")
@autoscaler_flags
@decision_options
def simulate(scenario: tuple[str, ...], config_path: str | None, seed: int,
             placements_path: str | None, state_path: str | None, explain_keys: tuple[str, ...],
             top: int | None, until: float | None, report_path: str | None,
             metrics_path: str | None, decisions_path: str | None, decisions_top: int | None,
             quiet: bool, strict: bool, check: bool, features: FeatureGates,
             plugins: dict[str, type], autoscaler: dict[str, Any]) -> None:
    """Schedule SCENARIO files on an in-memory cluster (no argument: a bundled example).
    With NodeGroups in the scenario, cluster-autoscaler runs too, on the virtual clock
    (docs/autoscaling.md).

    SCENARIO: YAML or JSON files, directories of them, or '-' (standard input)."""
    from kubesched.autoscaler.options import flag_error, options_from
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.backends.sim.invariants import InvariantViolation

    paths = scenario or (_example_path(BUNDLED_EXAMPLE),)
    check_output_path(placements_path, "--placements")
    check_output_path(state_path, "--state-out")
    check_output_path(report_path, "--report")
    check_output_path(metrics_path, "--metrics")
    check_output_path(decisions_path, "--decisions")
    if decisions_top is not None and not decisions_path:
        _fail_input(InputError("--decisions-top needs --decisions"))
    if report_path == "-":
        _fail_input(InputError("--report needs a file name (an HTML file is not for a "
                               "terminal)"))
    if report_path:
        require_extra("report", "--report", "plotly")
    stdout_users = [o for o, p in (("--placements", placements_path),
                                   ("--state-out", state_path),
                                   ("--metrics", metrics_path),
                                   ("--decisions", decisions_path)) if p == "-"]
    for key in explain_keys:
        if key.count("/") != 1:
            _fail_input(InputError("--explain must be NAMESPACE/NAME", value=key))
    if len(stdout_users) > 1:
        both = "both" if len(stdout_users) == 2 else "all"
        _fail_input(InputError(f"{' and '.join(stdout_users)} cannot {both} be stdout"))
    try:
        ca_options = options_from(autoscaler)
    except InputError as err:
        _fail_input(flag_error(err))
        return
    try:
        scen, config = _load(paths, config_path, features, strict, plugins, quiet)
        sim = SimCluster(scen, config, seed=seed, check=check)
        settled()
        ca = _attach_autoscaler(sim, ca_options, seed, bool(autoscaler))
        sim.until = until
        sim.explain_keys = set(explain_keys)
        if report_path or metrics_path:
            from kubesched.backends.sim.series import Series

            sim.series = Series(sim)
    except InputError as err:
        _fail_input(err)
        return
    stream, placed = _record_decisions(sim, decisions_path, decisions_top, bool(report_path))
    show = not quiet and not stdout_users
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
    finally:
        if stream is not None:
            stream.close()
    if placements_path:
        lines = "".join(json.dumps(r.as_json()) + "\n" for r in result.placements)
        if placements_path == "-":
            sys.stdout.write(lines)
        else:
            try:
                Path(placements_path).write_text(lines)
            except OSError as err:  # (checked before the run; a full disk shows only now)
                click.echo(f"error: --placements {placements_path}: {err.strerror or err}",
                           err=True)
                sys.exit(1)
    if state_path:
        from kubesched.api.jsonlist import json_list, wants_json
        from kubesched.backends.sim.state import state_documents, write_state

        if wants_json(state_path):
            Path(state_path).write_bytes(json_list(state_documents(sim)))
        else:
            text = write_state(sim)
            if state_path == "-":
                sys.stdout.write(text)
            else:
                Path(state_path).write_text(text)
    if metrics_path and sim.series is not None:
        from kubesched.report import write_metrics

        write_metrics(metrics_path, sim.series)
    if report_path:
        from kubesched.report import write_report

        names = ", ".join(Path(p).name for p in paths)
        extra: tuple[list[tuple[str, dict[str, Any]]], str] = ([], "")
        if ca is not None:
            from kubesched.autoscaler.figures import node_group_figure, node_group_table

            done = ca.summary(result.virtual_seconds)
            extra = ([("Nodes per node group", node_group_figure(done))],
                     node_group_table(done))
        write_report(report_path, sim, result, f"kubesched simulate {names}", placed,
                     extra_figures=extra[0], extra_html=extra[1])
    if show:
        _print_summary(result)
        if ca is not None:
            _print_autoscale(ca.summary(result.virtual_seconds))
    for key in explain_keys:
        _explain_after_run(sim, config, key, top)


def _attach_autoscaler(sim: SimCluster, options: Any, seed: int, given: bool) -> Any:
    """cluster-autoscaler as the run's periodic controller when the scenario has
    NodeGroups (the ClusterAutoscaler), else None."""
    if not sim.scenario.objects.get("NodeGroup"):
        if given:
            click.echo("warning: the autoscaler's options have no effect: the scenario has "
                       "no NodeGroup", err=True)
        return None
    from kubesched.autoscaler.simulated import attach

    return attach(sim, options, seed)


def _print_autoscale(done: Any) -> None:
    """The autoscaler's part of the summary: nodes per group, node-hours and cost."""
    from rich.table import Table
    from rich.text import Text

    con = _console()
    t = Table(title="Node groups (cluster-autoscaler)")
    for col in ("group", "min", "max", "start", "peak", "end", "added", "removed",
                "node-hours", "cost"):
        t.add_column(col, justify="left" if col == "group" else "right")
    for g in done.groups:
        t.add_row(Text(g.name), str(g.min_size), str(g.max_size), str(g.at_start),
                  str(g.peak), str(g.at_end), str(g.added), str(g.removed),
                  f"{g.node_hours:.2f}", f"{g.cost:.2f}")
    t.add_section()
    t.add_row("total", "", "", "", "", "", "", "", f"{done.node_hours:.2f}", f"{done.cost:.2f}")
    con.print(t)
    if done.cannot_help:
        con.print(Text(f"{len(done.cannot_help)} pending pod(s) no node group can host: "
                       f"{_first(done.cannot_help, SHOWN_NAMES)}"))


def _record_decisions(sim: SimCluster, path: str | None, top: int | None, for_report: bool
                      ) -> tuple[TextIO | None, dict[str, dict[str, Any]] | None]:
    """Attach the decision record to ``sim``'s scheduler: each cycle's line streamed to
    ``path`` (the file is returned open, for the caller to close after the run), and for
    the report the record of each placed pod's binding cycle (returned, filled as the run
    goes). Nothing is attached when neither is asked for: the cycles then do no work."""
    from kubesched.scheduler.decisions import DEFAULT_TOP, DecisionLog, PlacedDecisions

    sinks: list[Callable[[dict[str, Any]], object]] = []
    stream: TextIO | None = None
    if path == "-":
        out = sys.stdout
        sinks.append(lambda rec: out.write(json.dumps(rec) + "\n"))
    elif path:
        try:
            stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed after the run)
        except OSError as err:
            _fail_input(InputError(f"--decisions {path}: {err.strerror or err}"))
            raise
        file = stream
        sinks.append(lambda rec: file.write(json.dumps(rec) + "\n"))
    placed = PlacedDecisions() if for_report else None
    if placed is not None:
        sinks.append(placed)
    if sinks:
        sim.scheduler.decisions = DecisionLog(sinks, DEFAULT_TOP if top is None else top)
    return stream, (placed.by_pod if placed is not None else None)


def _explain_after_run(sim: Any, config: SchedulerConfiguration, key: str,
                       top: int | None) -> None:
    from kubesched.explain import explain_pod

    current = sim.pod_by_key(key)
    rec = next((r for r in reversed(list(sim.records.values())) if r.key == key), None)
    if current is not None and current.spec.node_name:
        click.echo(f"{key}: bound to {current.spec.node_name}; nothing to explain")
        return
    kept = sim.last_attempt.get(key)
    if current is None or kept is None:
        why = (rec.pending_reason() if rec is not None and current is not None
               else (rec.message or "gone") if rec is not None else "no such pod in the run")
        click.echo(f"{key}: not explained: {why}")
        return
    pod, state = kept
    _print_explain(explain_pod(state, config, pod), top)


def _print_summary(result: SimResult) -> None:
    from rich.table import Table
    from rich.text import Text

    con = _console()
    n = len(result.records) + len(result.unserved)
    rate = result.scheduled / result.wall_seconds if result.wall_seconds > 0 else 0.0
    counts = [f"[bold]{len(result.pending)}[/] pending"]
    for what, recs in (("evicted", result.evicted), ("preempted", result.preempted),
                       ("for other schedulers", result.unserved)):
        if recs:
            counts.append(f"[bold]{len(recs)}[/] {what}")
    said = ", ".join(counts[:-1]) + " and " + counts[-1] if len(counts) > 1 else counts[0]
    con.print(f"[bold]{result.scheduled}[/] of {n} pods scheduled, {said} "
              f"({result.wall_seconds:.2f} s wall, {result.virtual_seconds:g} s virtual, "
              f"{rate:.0f} pods/s)")
    if result.unserved:
        names: dict[str, list[str]] = {}
        for r in result.unserved:
            names.setdefault(r.message or "", []).append(r.key)
        for msg, keys in names.items():
            con.print(Text(f"{msg}: {_first(keys, SHOWN_NAMES)}"))
    if result.missing_node_pods:
        listed = ", ".join(f"{k} ({n})" for k, n in list(result.missing_node_pods.items())[:5])
        more = len(result.missing_node_pods) - 5
        con.print(Text(f"{len(result.missing_node_pods)} pod(s) bound to nodes the scenario "
                       f"lacks, never run: {listed}" + (f" and {more} more" if more > 0 else "")))
    groups: dict[str, list[str]] = {}
    for r in result.pending:
        groups.setdefault(r.pending_reason(), []).append(r.key)
    if groups:
        t = Table(title="Pending pods by reason", show_lines=False)
        t.add_column("pods", justify="right")
        t.add_column("reason")
        t.add_column("first pods")
        for msg, keys in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            # reasons hold brackets: not rich markup
            t.add_row(str(len(keys)), Text(msg), Text(_first(keys, SHOWN_NAMES)))
        con.print(t)
    if result.preemptions:
        victims = sum(len(v) for v in result.preemptions.values())
        con.print(f"[bold]{len(result.preemptions)}[/] pod(s) preempted [bold]{victims}[/]:")
        for preemptor, keys in list(result.preemptions.items())[:SHOWN_PREEMPTIONS]:
            con.print(Text(f"  {preemptor} evicted {_first(keys, SHOWN_NAMES)}"))
        if len(result.preemptions) > SHOWN_PREEMPTIONS:
            con.print(f"  ... and {len(result.preemptions) - SHOWN_PREEMPTIONS} more")
    if result.devices:
        t = Table(title="Devices allocated (DRA) at the end")
        t.add_column("device class")
        t.add_column("devices", justify="right")
        for cls, count in result.devices.items():
            t.add_row(Text(cls), str(count))
        con.print(t)
    nodes = result.nodes
    resources = utilisation_columns(nodes)
    t = Table(title=f"Node utilisation ({len(nodes)} nodes)")
    t.add_column("node")
    t.add_column("pods", justify="right")
    for res in resources:
        t.add_column(Text(res), justify="right")
    shown = nodes if len(nodes) <= 20 else nodes[:20]
    for row in shown:
        t.add_row(Text(row["node"]), str(row["pods"]),
                  *(_pct(row["requested"].get(res, 0), row["allocatable"].get(res, 0))
                    for res in resources))
    if len(nodes) > 20:
        t.add_row(f"... {len(nodes) - 20} more", "", *("" for _ in resources))
    t.add_section()
    t.add_row("total", str(sum(n["pods"] for n in nodes)),
              *(_pct(*_totals(nodes, res)) for res in resources))
    con.print(t)


def _totals(nodes: list[dict[str, Any]], resource: str) -> tuple[int, int]:
    return (sum(n["requested"].get(resource, 0) for n in nodes),
            sum(n["allocatable"].get(resource, 0) for n in nodes))


def utilisation_columns(nodes: list[dict[str, Any]]) -> list[str]:
    """Every resource some node has (``pods`` has its own column), the most allocated
    (requested / allocatable over all nodes) first, then by name."""
    names = {r for n in nodes for r, v in n["allocatable"].items() if v > 0 and r != "pods"}

    def share(r: str) -> float:
        used, alloc = _totals(nodes, r)
        return used / alloc if alloc else 0.0

    return sorted(names, key=lambda r: (-share(r), r))


SHOWN_NAMES = 3
SHOWN_PREEMPTIONS = 10


def _first(keys: list[str], n: int) -> str:
    more = len(keys) - n
    return ", ".join(keys[:n]) + (f" and {more} more" if more > 0 else "")


def _pct(used: int, alloc: int) -> str:
    return f"{100 * used / alloc:.0f}%" if alloc else "-"


@main.command()
@click.argument("scenario", nargs=-1, required=True, type=SCENARIO_ARG)
@click.option("--pod", "pod_key", required=True, help="The pending pod, as NAMESPACE/NAME.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--top", type=click.IntRange(min=1), metavar="N",
              help="Table only: the N best nodes; the rest grouped by identical verdict "
                   "(JSON always lists every node).")
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings.")
@decision_options
def explain(scenario: tuple[str, ...], pod_key: str, config_path: str | None, fmt: str,
            top: int | None, strict: bool, features: FeatureGates,
            plugins: dict[str, type]) -> None:
    """Why a pending pod goes where it goes, or why it fits nowhere.

    SCENARIO: YAML or JSON files, directories of them, or '-' (standard input)."""
    from kubesched.explain import explain as run_explain
    from kubesched.explain import pods_ahead

    if "/" not in pod_key:
        _fail_input(InputError("--pod must be NAMESPACE/NAME", value=pod_key))
    try:
        scen, config = _load(scenario, config_path, features, strict, plugins)
        out = run_explain(scen, config, pod_key)
        target = next((p for p in scen.pods if p.key == pod_key), None)
        ahead = (pods_ahead(scen, config, target)
                 if target is not None and fmt == "table" else [])
    except InputError as err:
        _fail_input(err)
        return
    note = None
    if ahead:
        # explain places no pending pod: the answer may not be the cluster's
        note = (f"note: {len(ahead)} other pending pod(s) would be scheduled before "
                f"{pod_key} ({_first(ahead, SHOWN_NAMES)}); this judges the scenario as "
                f"loaded, without them: `kubesched simulate SCENARIO… --explain {pod_key}` "
                "explains it against the cluster at its last attempt in a run")
    if fmt == "json":  # its format is pinned; the table's reader is the one to tell
        click.echo(json.dumps(out, indent=1))
        return
    _print_explain(out, top)
    if note:
        click.echo(note)


def explain_rows(out: dict[str, Any], top: int | None) -> list[tuple[str, str, str]]:
    """The explain table's rows (node(s), verdict, detail): feasible nodes best first (the
    ``top`` best alone, the others grouped by identical scores), then the infeasible ones
    grouped by identical verdict, largest group first."""
    feasible = sorted((r for r in out["nodes"] if r["feasible"]),
                      key=lambda r: -r["total"])
    rows: list[tuple[str, str, str]] = []
    alone = feasible if top is None else feasible[:top]
    for row in alone:
        mark = " *" if row["node"] in out["selected"] else ""
        rows.append((row["node"], f"total {row['total']}{mark}", _score_detail(row)))
    same: dict[tuple[int, str], list[str]] = {}
    for row in feasible[len(alone):]:
        same.setdefault((row["total"], _score_detail(row)), []).append(row["node"])
    for (total, detail), names in same.items():
        rows.append((_group(names), f"total {total}", detail))
    filtered: dict[str, list[str]] = {}
    for row in out["nodes"]:
        if not row["feasible"]:
            rejector = _rejector(row)
            # no rejector: the cycle ended in an error before judging the node
            verdict = (f"{rejector}: {', '.join(row['reasons'])}" if rejector
                       else "not judged: the cycle failed (below)")
            if row.get("detail"):  # DynamicResources: why no devices fit
                verdict += "\n  " + "\n  ".join(row["detail"])
            filtered.setdefault(verdict, []).append(row["node"])
    for verdict, names in sorted(filtered.items(), key=lambda kv: -len(kv[1])):
        rows.append((_group(names), "filtered", verdict))
    return rows


def _detail_header(out: dict[str, Any]) -> str:
    """The detail column's header: with scores shown (some node feasible), the weight each
    shown plugin's score is multiplied by in ``total``."""
    shown = {p for r in out["nodes"] if r["feasible"] for p in r["scores"]}
    weights = [f"{p} ×{w}" for p, w in (out.get("weights") or {}).items() if p in shown]
    return f"detail (score weights: {', '.join(weights)})" if weights else "detail"


def _score_detail(row: dict[str, Any]) -> str:
    """Each plugin's score, then each extender's (raw, and weighted as added to the total)."""
    exts = row.get("extenders") or []
    return ", ".join([f"{k} {v}" for k, v in row["scores"].items()]
                     + [f"extender {e['extender']} {e['score']} (+{e['weighted']})"
                        for e in exts if "score" in e])


def _rejector(row: dict[str, Any]) -> str:
    """The plugin that filtered the node out, or the extender (whose verdict names none);
    "" when neither did (an error ended the cycle)."""
    if row["plugin"] is not None:
        return str(row["plugin"])
    return next((f"extender {e['extender']}" for e in row.get("extenders") or []
                 if e.get("verdict") not in (None, "Success", "Error (ignored)")), "")


def _group(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return f"{len(names)} nodes: {_first(names, SHOWN_NAMES)}"


def _print_explain(out: dict[str, Any], top: int | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    con = _console()
    t = Table(title=f"{out['pod']}")
    t.add_column("node")
    t.add_column("verdict")
    t.add_column(Text(_detail_header(out)))
    for nodes, verdict, detail in explain_rows(out, top):
        t.add_row(Text(nodes), verdict, Text(detail))
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
@click.argument("scenario", nargs=-1, required=True, type=SCENARIO_ARG)
@click.option("--pod", "pod_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A file holding the Pod to copy.")
@click.option("--max", "max_count", type=click.IntRange(min=0), metavar="N",
              help="Stop after N copies (the message is then null).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="A KubeSchedulerConfiguration (overrides one in the scenario).")
@click.option("--seed", default=0, show_default=True, help="Seed for tie-breaking.")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings.")
@decision_options
def capacity(scenario: tuple[str, ...], pod_path: str, max_count: int | None,
             config_path: str | None, seed: int, fmt: str, strict: bool,
             features: FeatureGates, plugins: dict[str, type]) -> None:
    """How many more copies of a pod fit, and what stops the next one.

    The scenario's pending pods are scheduled first; then copies of the pod (named
    NAME-0, NAME-1, ...), one at a time, never preempting, until one fails.

    SCENARIO: YAML or JSON files, directories of them, or '-' (standard input)."""
    from kubesched.capacity import capacity as run_capacity
    from kubesched.capacity import load_pod

    try:
        scen, config = _load(scenario, config_path, features, strict, plugins)
        pod, warnings = load_pod(pod_path, release=features.version, strict=strict)
        for w in warnings:
            click.echo(f"warning: {w}", err=True)
        out = run_capacity(scen, config, pod, seed=seed, max_count=max_count,
                           source=pod_path)
    except InputError as err:
        _fail_input(err)
        return
    if fmt == "json":
        click.echo(json.dumps(out.as_json(), indent=1))
        return
    from rich.table import Table
    from rich.text import Text

    con = _console()
    first = out.first
    if first.records:
        con.print(Text(f"The scenario's {len(first.records)} pending pod(s) first: "
                       f"{first.scheduled} scheduled, {len(first.pending)} pending."))
    con.print(Text(f"{out.count} cop{'y' if out.count == 1 else 'ies'} of {out.pod} fit"
                   + (f" on {len(out.nodes)} node(s)." if out.nodes else ".")))
    if out.nodes:
        t = Table()
        t.add_column("node")
        t.add_column("copies", justify="right")
        ranked = sorted(out.nodes.items(), key=lambda kv: (-kv[1], kv[0]))
        for name, n in ranked[:SHOWN_NODES]:
            t.add_row(Text(name), str(n))
        if len(ranked) > SHOWN_NODES:
            rest = ranked[SHOWN_NODES:]
            t.add_row(f"... {len(rest)} more nodes", str(sum(n for _, n in rest)))
        con.print(t)
    if out.message is None:
        con.print(Text(f"Stopped at --max {max_count}."))
    else:
        con.print(Text(f"The next copy does not fit: {out.message}"))


SHOWN_NODES = 20


@main.command()
@click.argument("scenario", nargs=-1, required=True, type=SCENARIO_ARG)
@click.option("--expander", type=click.Choice(["least-waste", "most-pods", "priority", "price",
                                               "random"]),
              default="random", show_default=True,
              help="cluster-autoscaler's expander: which node group a scale-up takes.")
@click.option("--scale-down", "scale_down", is_flag=True,
              help="Also run cluster-autoscaler's scale-down simulation (the 'remove' list).")
@click.option("--scale-down-utilization-threshold", "threshold", default=0.5,
              show_default=True, type=click.FloatRange(0, 1), callback=not_nan,
              help="A node whose requested cpu and memory are both below this fraction of "
                   "its allocatable is a scale-down candidate.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="A KubeSchedulerConfiguration (overrides one in the scenario).")
@click.option("--seed", default=0, show_default=True,
              help="Seed for tie-breaking and the random expander.")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings.")
@decision_options
def plan(scenario: tuple[str, ...], expander: str, scale_down: bool, threshold: float,
         config_path: str | None, seed: int, fmt: str, strict: bool,
         features: FeatureGates, plugins: dict[str, type]) -> None:
    """How many nodes of which NodeGroup cluster-autoscaler would add for the pending pods
    (and, with --scale-down, which nodes it would remove).

    The scenario's pending pods are scheduled first; then cluster-autoscaler's scale-up loop
    runs on those still pending (docs/autoscaling.md).

    SCENARIO: YAML or JSON files, directories of them, or '-' (standard input)."""
    from kubesched.autoscaler.plan import plan as run_plan

    try:
        scen, config = _load(scenario, config_path, features, strict, plugins)
        out = run_plan(scen, config, expander=expander, seed=seed,
                       scale_down_nodes=scale_down, threshold=threshold)
    except InputError as err:
        _fail_input(err)
        return
    if fmt == "json":
        click.echo(json.dumps(out.as_json(), indent=1))
        return
    from rich.table import Table
    from rich.text import Text

    con = _console()
    if out.add:
        t = Table()
        t.add_column("node group")
        t.add_column("add", justify="right")
        for name, n in sorted(out.add.items()):
            t.add_row(Text(name), str(n))
        con.print(t)
    else:
        con.print(Text("No nodes to add."))
    for title, keys in (("No node group can host", out.cannot_help),
                        ("Still pending after the scale-up", out.pending_after)):
        if keys:
            con.print(Text(f"{title} ({len(keys)}): {_first(keys, 10)}"))
    if scale_down:
        con.print(Text(f"Scale-down removes {len(out.remove)} node(s)"
                       + (f": {_first(out.remove, 20)}" if out.remove else ".")))


@main.command()
@click.argument("scenario", nargs=-1, required=True, type=SCENARIO_ARG)
@click.option("--config", "config_paths", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="A KubeSchedulerConfiguration per side (given twice: A, then B).")
@click.option("--seed", "seeds", multiple=True, type=int,
              help="A seed per side (given twice: A, then B; default 0).")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--strict", is_flag=True,
              help="Unknown fields in the scenario are errors, not warnings.")
@_autoscaler_flags(multiple=True)
@decision_options
def compare(scenario: tuple[str, ...], config_paths: tuple[str, ...], seeds: tuple[int, ...],
            fmt: str, strict: bool, features: FeatureGates, plugins: dict[str, type],
            autoscaler: dict[str, tuple[Any, ...]]) -> None:
    """One scenario under two configurations (or two seeds, or two values of an autoscaler
    option), side by side: pods placed differently, pods pending on one side only,
    utilisation and fragmentation; with NodeGroups, node-hours and cost.

    SCENARIO: YAML or JSON files, directories of them, or '-' (standard input)."""
    from kubesched.autoscaler.options import flag_error, options_from
    from kubesched.compare import Side, differences, run_side

    counts = [len(config_paths), len(seeds), *(len(v) for v in autoscaler.values())]
    if max(counts) > 2 or max(counts) < 2:
        _fail_input(InputError("compare needs two sides: --config A --config B, or --seed "
                               "N --seed M, or an autoscaler option twice (--expander A "
                               "--expander B; or several, paired in order)"))
    try:
        side_options = [options_from({k: v[i if len(v) == 2 else 0]
                                      for k, v in autoscaler.items()}) for i in range(2)]
    except InputError as err:
        _fail_input(flag_error(err))
        return
    if "-" in scenario:
        # each side reads the scenario anew (a run changes the objects it loaded)
        text = sys.stdin.read()
        scenario = tuple(_stdin_copy(text) if p == "-" else p for p in scenario)
    configs: list[str | None] = [*config_paths] * (2 // max(len(config_paths), 1)) or [None,
                                                                                        None]
    side_seeds = list(seeds) * (2 // max(len(seeds), 1)) or [0, 0]
    sides = []
    for i in range(2):
        cfg, seed = configs[i], side_seeds[i]
        name = " ".join(([Path(cfg).name] if len(config_paths) == 2 and cfg else [])
                        + ([f"seed {seed}"] if len(seeds) == 2 else [])
                        + [f"--{k} {v[i]}" for k, v in autoscaler.items() if len(v) == 2])
        sides.append(Side(name, cfg, seed))
    try:
        for side, ca_options in zip(sides, side_options, strict=True):
            scen, config = _load(scenario, side.config, features, strict, plugins)

            def prepare(sim: SimCluster, ca_options: Any = ca_options,
                        seed: int = side.seed) -> Callable[[float], dict[str, Any]] | None:
                ca = _attach_autoscaler(sim, ca_options, seed, False)
                return None if ca is None else lambda end: ca.summary(end).as_json()

            run_side(side, scen, config, names_seed=sides[0].seed, prepare=prepare)
    except InputError as err:
        _fail_input(err)
        return
    out = differences(sides[0], sides[1])
    if fmt == "json":
        click.echo(json.dumps(out, indent=1))
        return
    _print_compare(out)


def _stdin_copy(text: str) -> str:
    import atexit
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    atexit.register(os.unlink, f.name)
    return f.name


def _print_compare(out: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    con = _console()
    a, b = out["sides"]
    t = Table()
    t.add_column("")
    t.add_column(Text(f"A: {a['name']}"), justify="right")
    t.add_column(Text(f"B: {b['name']}"), justify="right")
    t.add_row("scheduled", str(a["scheduled"]), str(b["scheduled"]))
    t.add_row("pending", str(a["pending"]), str(b["pending"]))

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}%"

    for r in a["utilisation"]:
        t.add_row(Text(f"{r} utilisation"), pct(a["utilisation"][r]),
                  pct(b["utilisation"].get(r)))
    for r in a["fragmentation"]:
        t.add_row(Text(f"{r} fragmentation"), pct(a["fragmentation"][r]),
                  pct(b["fragmentation"].get(r)))
    if "autoscaler" in a and "autoscaler" in b:
        ca, cb = a["autoscaler"], b["autoscaler"]
        t.add_row("node-hours", f"{ca['nodeHours']:.2f}", f"{cb['nodeHours']:.2f}")
        t.add_row("cost", f"{ca['cost']:.2f}", f"{cb['cost']:.2f}")
        t.add_row("nodes added", str(sum(g["added"] for g in ca["groups"])),
                  str(sum(g["added"] for g in cb["groups"])))
    con.print(t)
    placed = out["placed_differently"]
    con.print(f"{len(placed)} pod(s) placed differently")
    if placed:
        t = Table()
        for col in ("pod", "A", "B"):
            t.add_column(col)
        for row in placed[:SHOWN_NODES]:
            t.add_row(Text(row["pod"]), Text(row["a"]), Text(row["b"]))
        if len(placed) > SHOWN_NODES:
            t.add_row(f"... {len(placed) - SHOWN_NODES} more", "", "")
        con.print(t)
    for side in ("a", "b"):
        keys = out["pending_only"][side]
        con.print(Text(f"{len(keys)} pod(s) pending in {side.upper()} only"
                       + (f": {_first(keys, 10)}" if keys else "")))


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False))
def examples(directory: str) -> None:
    """Write the README's example files into DIRECTORY (default: the current one):
    cluster.yaml, workload.yaml, pod.yaml, nodegroups.yaml, least-allocated.yaml,
    most-allocated.yaml, and the sweeps sweep.yaml, fgd.yaml and fgd-uniform.yaml. Files
    already there are left as they are."""
    base = resources.files("kubesched") / "examples" / "readme"
    target = Path(directory)
    if target.exists() and not target.is_dir():
        _fail_input(InputError(f"{directory} is not a directory"))
    target.mkdir(parents=True, exist_ok=True)
    for item in sorted(base.iterdir(), key=lambda p: p.name):
        if not item.name.endswith(".yaml"):
            continue
        dest = target / item.name
        if dest.exists():
            click.echo(f"{dest}: exists, left as it is")
            continue
        dest.write_text(item.read_text(encoding="utf-8"), encoding="utf-8")
        click.echo(f"{dest}")


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

# `kubesched sweep` and `kubesched trace` (GPU traces, research grids): research/commands.py
from kubesched.research.commands import (  # noqa: E402
    sweep_command,
    trace_command,
    use_autoscaler,
)


def _check_autoscaler_options(values: dict[str, Any]) -> object:
    from kubesched.autoscaler.sweeping import check_options

    return check_options(values)


def _attach_autoscaler_for_run(sim: Any, values: dict[str, Any], seed: int) -> Any:
    # module-level, so that it reaches the sweep's worker processes by name; the autoscaler
    # is imported only when a run needs it (this module loads nothing heavy)
    from kubesched.autoscaler.sweeping import attach_for_run

    return attach_for_run(sim, values, seed)


main.add_command(sweep_command)
use_autoscaler(_check_autoscaler_options, _attach_autoscaler_for_run)
main.add_command(trace_command)


def run(prog_name: str | None = None) -> None:
    """The command as a process: ``main``, then out at once. A run leaves millions of objects
    (a loaded cluster) that the interpreter's exit would free one by one — a tenth of a
    second at 5 000 nodes, a third at 50 000 pods — for nothing; exit handlers still run
    and the standard streams are flushed. With other threads alive, the usual exit."""
    import atexit
    import contextlib
    import threading

    try:
        main(prog_name=prog_name)
        code: object = 0
    except SystemExit as e:
        code = e.code
    if threading.active_count() > 1:
        sys.exit(code)  # type: ignore[arg-type]
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        # (a reader gone, a stream closed: nothing more to say)
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
