"""``kubesched bench``: progress while the workloads run, then a table (and JSON)."""

from __future__ import annotations

import json
import platform
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from kubesched.bench.workloads import WORKLOADS, Workload, select


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    import os

    return {"cpu_model": cpu_model(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def _fmt(v: float | None, spec: str = ".0f") -> str:
    return "-" if v is None else format(v, spec)


#: every line ``bench`` prints fits a terminal of this width (tables wrap their cells)
WIDTH = 80


def verdict_text(r: dict[str, Any]) -> str:
    status = str(r["status"])
    if status != "ok":
        return status if len(status) < 60 else status[:57] + "..."
    parts = []
    if r["threshold"]:
        parts.append(f"{r['verdict']} {r['threshold']:g}")
    if r["target"]:
        parts.append(f"target {r['target']:g} {'met' if r['target_met'] else 'NOT met'}")
    if r["throughput_source"] == "overall" and r["pods_per_second"] is not None:
        parts.append("overall rate")
    return "; ".join(parts)


def result_line(r: dict[str, Any]) -> str:
    """One workload's result, as it finishes: two lines of at most ``WIDTH`` columns (a
    long workload name has a line of its own)."""
    if r["status"] != "ok" and not r["scheduled"]:
        return textwrap.fill(f"{r['workload']}: {r['status']}", WIDTH,
                             subsequent_indent="  ")
    v = verdict_text(r)
    detail = (f"{r['scheduled']}/{r['measured_pods']} pods in {r['seconds']} s, "
              f"{_fmt(r['pods_per_second'])} pods/s (p50 {_fmt(r['throughput_p50'])}, "
              f"p99 {_fmt(r['throughput_p99'])}), attempt p50/p99 "
              f"{_fmt(r['attempt_latency_ms_p50'], '.2f')}/"
              f"{_fmt(r['attempt_latency_ms_p99'], '.2f')} ms, peak RSS {r['peak_rss_mib']} MiB"
              + (f" [{v}]" if v else ""))
    return textwrap.fill(f"{r['workload']}: {detail}", WIDTH, subsequent_indent="  ",
                         break_on_hyphens=False)


_COLUMNS = (("nodes", 6), ("pods", 11), ("pods/s", 6), ("thresh.", 7),
            ("attempt ms p50/p99", 18), ("MiB", 5))


def results_table(results: list[dict[str, Any]]) -> Any:
    """The results, ``WIDTH`` columns wide: each workload's name on a line of its own (names
    run to 60 characters), its figures on the next, the verdict wrapped at the right."""
    from rich.console import Group
    from rich.text import Text

    head = "  ".join(f"{name:>{w}}" for name, w in _COLUMNS)
    verdict_width = WIDTH - len(head) - 2
    lines = [Text("scheduler_perf workloads (pods/s: average of 1-s samples, as upstream)"),
             Text(""), Text("workload"), Text(f"{head}  verdict", style="bold"),
             Text("─" * WIDTH)]
    for r in results:
        style = ""
        if r["status"] != "ok":
            style = "yellow"
        elif r["verdict"] == "below" or r["target_met"] is False:
            style = "red"
        cells = (str(r["nodes"]), f"{r['init_pods']}+{r['measured_pods']}",
                 _fmt(r["pods_per_second"]),
                 "-" if not r["threshold"] else f"{r['threshold']:g}",
                 f"{_fmt(r['attempt_latency_ms_p50'], '.2f')}/"
                 f"{_fmt(r['attempt_latency_ms_p99'], '.2f')}",
                 _fmt(r["peak_rss_mib"], ".0f"))
        row = "  ".join(f"{c:>{w}}" for c, (_, w) in zip(cells, _COLUMNS, strict=True))
        verdict = textwrap.wrap(verdict_text(r), verdict_width) or [""]
        lines.append(Text(r["workload"], style=style or "bold"))
        lines.append(Text(f"{row}  {verdict[0]}".rstrip(), style=style))
        lines += [Text(" " * (len(row) + 2) + v, style=style) for v in verdict[1:]]
    return Group(*lines)


def list_workloads() -> str:
    """One workload a paragraph: its name, then what it runs (at most ``WIDTH`` columns)."""
    out = ["workloads (--quick: the 500-node ones)", ""]
    for w in WORKLOADS.values():
        if w.steady:
            notes = [f"{w.nodes} nodes, {w.init_pods} init pods, then {w.measured_pods} "
                     f"measured pods at a time, deleted once scheduled, for "
                     f"{w.measured.steady_seconds:g} s"]
        else:
            notes = [f"{w.nodes} nodes, {w.init_pods} init + {w.measured_pods} measured pods"]
        if w.dra is not None:
            claims = sum(n for _ns, n in w.dra.claims)
            notes.append(f"DRA: {w.dra.nodes} nodes with {w.dra.max_claims_per_node} devices"
                         + (f", {claims} claims" if claims else "")
                         + (" allocated beforehand" if claims and w.dra.allocate else ""))
        if w.churn is not None:
            notes.append(f"churn: {w.churn.mode} {'+'.join(w.churn.templates)} every "
                         f"{w.churn.interval_ms} ms")
        if w.threshold:
            notes.append(f"upstream threshold {w.threshold:g} pods/s")
        if not w.upstream:
            notes.append("size defined here")
        if w.needs_preemption:
            notes.append("needs DefaultPreemption")
        if w.percentage_of_nodes_to_score is not None:
            notes.append(f"percentageOfNodesToScore {w.percentage_of_nodes_to_score}")
        if w.target:
            notes.append(f"target {w.target:g} pods/s")
        out.append(w.name)
        out.append(textwrap.fill("; ".join(notes), WIDTH, initial_indent="  ",
                                 subsequent_indent="  "))
    return "\n".join(out)


def _console(stderr: bool = False) -> Any:
    """A rich console ``WIDTH`` columns wide (narrower on a narrower terminal)."""
    from rich.console import Console

    con = Console(stderr=stderr)
    if not con.is_terminal or con.width > WIDTH:
        con = Console(stderr=stderr, width=WIDTH)
    return con


def run_bench(names: tuple[str, ...], *, quick: bool, results_path: str | None,
              profile_dir: str | None, list_only: bool = False) -> int:
    """The ``kubesched bench`` command; returns the exit status."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from kubesched.bench.runner import run_workloads

    out = _console(stderr=results_path == "-")
    if list_only:
        out.print(list_workloads(), markup=False, highlight=False)
        return 0
    try:
        workloads = select(list(names), quick)
    except KeyError as e:
        err = _console(stderr=True)
        err.print(f"error: unknown workload(s) {e.args[0]}; see kubesched bench --list",
                  markup=False)
        return 2
    err = _console(stderr=True)
    err.print(textwrap.fill(f"{len(workloads)} workload(s) on {cpu_model()} "
                            f"({machine()['cpus']} CPUs)", WIDTH), markup=False)
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), console=err,
                  transient=True, disable=not err.is_terminal) as bar:
        overall = bar.add_task("workloads", total=len(workloads), rate="")
        tasks: dict[str, Any] = {}

        def report(w: Workload, phase: str, done: int, total: int, rate: float | None) -> None:
            key = w.name
            if key not in tasks:
                tasks[key] = bar.add_task(w.name, total=total, rate="")
            tid = tasks[key]
            desc = f"{w.name} [{phase}]"
            r = "" if rate is None else f"{rate:.0f} pods/s"
            bar.update(tid, description=desc, completed=done, total=total, rate=r)

        def finished(r: dict[str, Any]) -> None:
            tid = tasks.pop(r["workload"], None)
            if tid is not None:
                bar.remove_task(tid)
            bar.advance(overall)
            err.print(result_line(r), markup=False, highlight=False)

        results = run_workloads(workloads, report, profile_dir=profile_dir, done=finished)
    total_seconds = time.perf_counter() - started
    out.print(results_table(results))
    out.print(f"total {total_seconds:.0f} s wall", markup=False)
    if results_path:
        doc = {"machine": machine(), "total_seconds": round(total_seconds, 1),
               "quick": quick, "results": results}
        text = json.dumps(doc, indent=1)
        if results_path == "-":
            sys.stdout.write(text + "\n")
        else:
            Path(results_path).write_text(text + "\n")
    failed = [r for r in results if r["status"].startswith(("error", "timeout"))]
    return 1 if failed else 0
