"""The sweep's figure, drawn like the FGD paper's: per trace (or scenario), a bar per policy
(or configuration) — the mean over seeds with the spread as an error bar — and, where the
sweep file gives them, the published numbers as hollow bars beside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.errors import InputError
from kubesched.research.sweep import Summary

PLOT_SUFFIXES = (".png", ".svg", ".pdf")
LABELS = {"unallocated_gpu_pct": "unallocated GPU (%)", "pending": "pending pods"}


def check_plot_path(path: str) -> None:
    if Path(path).suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(f"--plot {path}: the figure's format comes from its name: end it "
                         f"with {', '.join(PLOT_SUFFIXES)}")


def write_plot(path: str, summary: list[Summary], title: str) -> None:
    """One panel per metric (a sweep of traces and scenarios has two)."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # SVG text stays text: searchable, editable
    metrics = list(dict.fromkeys(s.metric for s in summary))
    panels = [[s for s in summary if s.metric == m] for m in metrics]
    widths = [len({(s.scenario, s.kubernetes_version, s.feature_gates) for s in p})
              * max(len({s.policy for s in p}), 1) for p in panels]
    fig, axes = plt.subplots(1, len(panels), squeeze=False, width_ratios=widths,
                             figsize=(max(6.0, 0.45 * sum(widths) + 2), 4.0))
    runs = {s.runs for s in summary}
    seeds = f"{min(runs)}–{max(runs)}" if len(runs) > 1 else str(next(iter(runs), 0))
    has_paper = any(s.paper is not None for s in summary)
    fig.suptitle(f"{title}: mean over {seeds} seed(s), error bars ±1 s.d."
                 + ("; hatched: paper" if has_paper else ""), fontsize=9)
    for ax, panel in zip(axes[0], panels, strict=True):
        _panel(ax, panel, plt.get_cmap("tab10"))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _panel(ax: Any, summary: list[Summary], colours: Any) -> None:
    groups = list(dict.fromkeys(
        (s.scenario, s.kubernetes_version, s.feature_gates) for s in summary))
    policies = list(dict.fromkeys(s.policy for s in summary))
    by = {(s.scenario, s.kubernetes_version, s.feature_gates, s.policy): s for s in summary}
    several = len({(v, g) for _, v, g in groups}) > 1
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
    ax.set_xticklabels([f"{scen}\n{ver} {gates}".strip() if several else scen
                        for scen, ver, gates in groups])
    ax.set_ylabel(LABELS.get(summary[0].metric, summary[0].metric))
    handles = ax.get_legend_handles_labels()[0]
    if has_paper:  # one legend entry for every policy's hatched bar
        from matplotlib.patches import Patch

        handles.append(Patch(fill=False, edgecolor="0.3", hatch="//", label="paper"))
    ax.legend(handles=handles, fontsize=7, ncol=min(len(handles), 4))
    ax.grid(axis="y", alpha=0.3)
