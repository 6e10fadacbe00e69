"""The sweep's figure, drawn like the FGD paper's: per trace (or scenario), a bar per policy
(or configuration) — the mean over seeds with the spread as an error bar — and, where the
sweep file gives them (its ``paper``), the authors' numbers as hollow bars beside; below,
for traces, the curve of unallocated GPU against arrived workload (the paper's Fig. 9(a)):
per policy the median over seeds, the range of the seeds as a band."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.errors import InputError
from kubesched.research.sweep import Summary

# a trace's curves: (trace, arrival level, tie-break) → policy → one curve per seed
# (research.run.arrival_levels: arrived % → allocated %)
Curves = dict[tuple[str, float, str], dict[str, list[dict[int, float]]]]

PLOT_SUFFIXES = (".png", ".svg", ".pdf")
LABELS = {"unallocated_gpu_pct": "unallocated GPU (%)", "pending": "pending pods"}


def check_plot_path(path: str) -> None:
    if Path(path).suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(f"--plot {path}: the figure's format comes from its name: end it "
                         f"with {', '.join(PLOT_SUFFIXES)}")


def _group(s: Summary) -> tuple[str, float | None, str, str, str]:
    return (s.scenario, s.ratio, s.tiebreak, s.kubernetes_version, s.feature_gates)


def write_plot(path: str, summary: list[Summary], title: str,
               curves: Curves | None = None) -> None:
    """One panel of bars per metric (a sweep of traces and scenarios has two); below, one
    panel of curves per trace, at its highest arrival level under the first tie-break."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # SVG text stays text: searchable, editable
    metrics = list(dict.fromkeys(s.metric for s in summary))
    panels = [[s for s in summary if s.metric == m] for m in metrics]
    widths = [len({_group(s) for s in p}) * max(len({s.policy for s in p}), 1)
              for p in panels]
    shown = _curves_shown(curves or {})
    width = max(6.0, 0.45 * sum(widths) + 2, 3.2 * len(shown))
    fig = plt.figure(figsize=(width, 4.0 + (3.4 if shown else 0.0)))
    grid = fig.add_gridspec(2 if shown else 1, 1, height_ratios=[4.0, 3.4] if shown else None)
    bars = grid[0].subgridspec(1, len(panels), width_ratios=widths).subplots(squeeze=False)
    runs = {s.runs for s in summary}
    seeds = f"{min(runs)}–{max(runs)}" if len(runs) > 1 else str(next(iter(runs), 0))
    has_paper = any(s.paper is not None for s in summary)
    fig.suptitle(f"{title}: mean over {seeds} seed(s), error bars ±1 s.d."
                 + ("; hatched: the authors' artifact results at the same arrival level"
                    if has_paper else ""), fontsize=9)
    colours = plt.get_cmap("tab10")
    for ax, panel in zip(bars[0], panels, strict=True):
        _panel(ax, panel, colours)
    if shown:
        policies = list(dict.fromkeys(s.policy for s in summary))
        row = grid[1].subgridspec(1, len(shown)).subplots(squeeze=False)[0]
        for ax, key in zip(row, shown, strict=True):
            _curve_panel(ax, key, (curves or {})[key], policies, colours)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _curves_shown(curves: Curves) -> list[tuple[str, float, str]]:
    """Per trace, in the order given, its highest arrival level (the paper draws Fig. 9(a)
    up to 130 %)."""
    best: dict[str, tuple[str, float, str]] = {}
    for key in curves:
        trace, ratio, _tb = key
        if trace not in best or ratio > best[trace][1]:
            best[trace] = key
    return list(best.values())


def _curve_panel(ax: Any, key: tuple[str, float, str],
                 by_policy: dict[str, list[dict[int, float]]], policies: list[str],
                 colours: Any) -> None:
    import statistics

    trace, ratio, tiebreak = key
    top = 0
    for j, pol in enumerate(policies):
        seeds = by_policy.get(pol)
        if not seeds:
            continue
        xs = sorted(set.intersection(*(set(c) for c in seeds)))
        unalloc = [[100.0 - c[x] for c in seeds] for x in xs]
        colour = colours(j % 10)
        ax.plot(xs, [statistics.median(v) for v in unalloc], color=colour, label=pol,
                linewidth=1.2)
        ax.fill_between(xs, [min(v) for v in unalloc], [max(v) for v in unalloc],
                        color=colour, alpha=0.2, linewidth=0)
        top = max(top, *xs) if xs else top
    ax.plot([0, 100], [100, 0], linestyle=":", color="grey", label="ideal")
    ax.set_xlim(75, max(top, 100))
    ax.set_ylim(0, 25)
    ax.set_xlabel("arrived workload (% of GPU capacity)")
    ax.set_ylabel("unallocated GPU (%)")
    ax.set_title(f"{trace}: arrived up to {ratio:.0%}, {tiebreak} tie-break", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)


def _panel(ax: Any, summary: list[Summary], colours: Any) -> None:
    groups = list(dict.fromkeys(_group(s) for s in summary))
    policies = list(dict.fromkeys(s.policy for s in summary))
    by = {(*_group(s), s.policy): s for s in summary}
    several = len({(v, g) for *_, v, g in groups}) > 1
    levels = len({(r, t) for _, r, t, _, _ in groups if r is not None}) > 1
    has_paper = any(s.paper is not None for s in summary)
    width = 0.8 / max(len(policies), 1)
    bar = width * (0.5 if has_paper else 1.0)
    for j, pol in enumerate(policies):
        xs, means, errs, paper_xs, paper = [], [], [], [], []
        for i, g in enumerate(groups):
            s = by.get((*g, pol))
            if s is None:
                continue
            x = i - 0.4 + width * (j + 0.5)
            xs.append(x - bar / 2 if has_paper else x)
            means.append(s.mean)
            errs.append(s.stdev)
            if s.paper is not None:
                paper_xs.append(x + bar / 2)
                paper.append(s.paper)
        colour = colours(j % 10)
        ax.bar(xs, means, bar, yerr=errs, capsize=2, color=colour, label=pol)
        if paper:
            ax.bar(paper_xs, paper, bar, fill=False, edgecolor=colour, hatch="//")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([
        scen + (f"\n{ratio:.0%} {tb}" if levels and ratio is not None else "")
        + (f"\n{ver} {gates}".rstrip() if several else "")
        for scen, ratio, tb, ver, gates in groups], fontsize=7 if levels else None)
    ax.set_ylabel(LABELS.get(summary[0].metric, summary[0].metric))
    handles = ax.get_legend_handles_labels()[0]
    if has_paper:  # one legend entry for every policy's hatched bar
        from matplotlib.patches import Patch

        handles.append(Patch(fill=False, edgecolor="0.3", hatch="//",
                             label="authors' results"))
    ax.legend(handles=handles, fontsize=7, ncol=min(len(handles), 4))
    ax.grid(axis="y", alpha=0.3)
