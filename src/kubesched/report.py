"""``simulate --report``: one self-contained HTML file of plots, and ``--metrics``: the time
series behind them as CSV.

The plots are plotly figures (validated by plotly's own figure schema) drawn by plotly.js,
which is inlined: the file fetches nothing when opened. The time series is the one the
simulator sampled as it ran (``backends/sim/series.py``), already downsampled.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.backends.sim.cluster import SimCluster, SimResult
    from kubesched.backends.sim.series import Series

#: pending pods listed in the report's table (the rest are counted; --placements has all)
TABLE_ROWS = 2000
#: reasons longer than this are cut in the bar chart's labels (the hover has all of them)
LABEL_CHARS = 70
#: per-node bars up to this many nodes; beyond, a histogram of nodes by allocation
NODE_BARS = 500

_COLORS = {"running": "#2a9d8f", "pending": "#e76f51"}


def write_metrics(path: str, series: Series) -> None:
    text = series.csv()
    if path == "-":
        import sys

        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def _unit(resource: str) -> tuple[float, str]:
    """How a resource's integer amounts are shown: cpu in cores (kept in millicores),
    memory in GiB."""
    if resource == "cpu":
        return 1000.0, "cores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return float(1 << 30), "GiB"
    return 1.0, ""


def _pct(used: float, total: float) -> float | None:
    return round(100.0 * used / total, 2) if total else None


def figures(sim: SimCluster, result: SimResult) -> list[tuple[str, dict[str, Any]]]:
    """(title, plotly figure as a dict) for each plot of the report."""
    series = sim.series
    if series is None:
        raise ValueError("the run recorded no time series (SimCluster.series)")
    samples = series.samples
    span = samples[-1].time - samples[0].time if samples else 0.0
    # A run whose pods all arrive at once is over at virtual time 0: its story is told
    # over scheduling attempts instead.
    if span > 0:
        xs: list[float] = [s.time for s in samples]
        x_title = "virtual time (s)"
    else:
        xs = [float(s.attempts) for s in samples]
        x_title = "scheduling attempts (all at virtual time 0)"
    figs: list[tuple[str, dict[str, Any]]] = []

    def layout(x: str, y: str, yaxis: dict[str, Any] | None = None, **kw: Any
               ) -> dict[str, Any]:
        return {"xaxis": {"title": {"text": x}},
                "yaxis": {"title": {"text": y}, **(yaxis or {})},
                "margin": {"t": 30, "r": 20}, "height": 380, "template": "plotly_white",
                "legend": {"orientation": "h", "y": -0.2}, **kw}

    figs.append(("Scheduled and pending pods", {
        "data": [{"type": "scatter", "mode": "lines", "name": name, "x": xs,
                  "y": [getattr(s, name) for s in samples],
                  "line": {"color": _COLORS[name], "shape": "hv"}}
                 for name in ("running", "pending")],
        "layout": layout(x_title, "pods")}))

    util = []
    for r in series.resources():
        ys = [_pct(*s.resources.get(r, (0, 0))) for s in samples]
        if any(y is not None for y in ys):
            util.append({"type": "scatter", "mode": "lines", "name": r, "x": xs, "y": ys,
                         "line": {"shape": "hv"}})
    figs.append(("Utilisation per resource (requested / allocatable)", {
        "data": util, "layout": layout(x_title, "% of the cluster",
                                       yaxis={"range": [0, 100]})}))

    figs.append(("Allocation per node at the end", _node_figure(sim, layout)))

    reasons = Counter(r.pending_reason() for r in result.pending)
    if reasons:
        ranked = reasons.most_common()
        labels = [m if len(m) <= LABEL_CHARS else m[:LABEL_CHARS - 1] + "…"
                  for m, _ in ranked]
        # distinct reasons may share a cut label: the category axis needs them distinct
        labels = [f"{lab} ({i + 1})" if labels.count(lab) > 1 else lab
                  for i, lab in enumerate(labels)]
        figs.append(("Pending pods by reason (at their last attempt)", {
            "data": [{"type": "bar", "orientation": "h", "y": labels,
                      "x": [n for _, n in ranked], "customdata": [m for m, _ in ranked],
                      "hovertemplate": "%{x} pods: %{customdata}<extra></extra>",
                      "marker": {"color": _COLORS["pending"]}}],
            "layout": layout("pods", "", height=max(250, 40 + 28 * len(ranked)),
                             yaxis={"autorange": "reversed", "automargin": True})}))

    attempts = Counter(r.attempts for r in result.records)
    figs.append(("Scheduling attempts per pod", {
        "data": [{"type": "bar", "x": sorted(attempts), "y": [attempts[k] for k in
                                                              sorted(attempts)],
                  "hovertemplate": "%{y} pods: %{x} attempt(s)<extra></extra>"}],
        "layout": layout("attempts", "pods", bargap=0.1)}))
    return figs


def _node_figure(sim: SimCluster, layout: Any) -> dict[str, Any]:
    nodes = [ni for ni in sim.scheduler.cache.nodes.values() if ni.node is not None]
    names = [ni.name for ni in nodes]
    extended = {r for ni in nodes for r in ni.allocatable if "/" in r and ni.allocatable[r] > 0}
    resources = ["cpu", "memory", *sorted(extended)]
    per: dict[str, list[float | None]] = {
        r: [_pct(ni.requested.get(r, 0), ni.allocatable.get(r, 0)) for ni in nodes]
        for r in resources}
    per["pods"] = [_pct(len(ni.pods), ni.allocatable.get("pods", 0)) for ni in nodes]
    if len(nodes) <= NODE_BARS:
        bars = [{"type": "bar", "name": r, "x": names, "y": ys} for r, ys in per.items()]
        return {"data": bars, "layout": layout("node", "% allocated", barmode="group",
                                               yaxis={"range": [0, 100]})}
    # thousands of bars are unreadable: how many nodes are how full
    hists = [{"type": "histogram", "name": r, "x": [y for y in ys if y is not None],
              "xbins": {"start": 0, "end": 100.001, "size": 5}, "opacity": 0.7}
             for r, ys in per.items()]
    return {"data": hists, "layout": layout("% allocated", f"nodes (of {len(nodes)})",
                                           barmode="overlay")}


def _devices_table(result: SimResult) -> str:
    """Devices allocated at the end of the run, by DeviceClass (as the summary prints)."""
    if not result.devices:
        return ""
    rows = "".join(f"<tr><td>{html.escape(cls or '(unknown class)')}</td><td>{n}</td></tr>"
                   for cls, n in result.devices.items())
    return ("<h2>Allocated devices</h2><table><thead><tr><th>DeviceClass</th>"
            f"<th>devices</th></tr></thead><tbody>{rows}</tbody></table>")


def _pending_table(result: SimResult) -> str:
    pending = result.pending
    if not pending:
        return "<p>No pod is pending.</p>"
    rows = []
    for r in pending[:TABLE_ROWS]:
        rows.append(f"<tr><td>{html.escape(r.key)}</td><td>{r.attempts}</td>"
                    f"<td>{r.time:g}</td><td>{html.escape(r.pending_reason())}</td></tr>")
    more = len(pending) - TABLE_ROWS
    tail = (f"<p>… and {more} more (every pod is in <code>--placements</code>).</p>"
            if more > 0 else "")
    return ("<table><thead><tr><th>pod</th><th>attempts</th><th>last attempt (s)</th>"
            "<th>reason</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            + tail)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left;
         vertical-align: top; }
.summary { color: #444; }
"""

# Draws every figure; marks the body once all are drawn (a test, or a reader's script,
# can wait for it).
_DRAW = """
(function () {
  var figs = JSON.parse(document.getElementById("kubesched-figures").textContent);
  var drawn = figs.map(function (f, i) {
    return Plotly.newPlot("kubesched-plot-" + i, f.data, f.layout,
                          {responsive: true, displaylogo: false});
  });
  Promise.all(drawn).then(function () {
    document.body.setAttribute("data-plots-drawn", String(drawn.length));
  });
})();
"""


def render(sim: SimCluster, result: SimResult, title: str = "kubesched simulate") -> str:
    import plotly.io as pio  # type: ignore[import-untyped]  # plotly ships no type hints
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

    figs = figures(sim, result)
    # validated against plotly's schema (a typo in a property fails here, not in a browser)
    specs = [json.loads(str(pio.to_json(fig, validate=True))) for _, fig in figs]
    payload = json.dumps(specs, separators=(",", ":")).replace("</", "<\\/")
    n = len(result.records)
    evicted = len(result.evicted)
    summary = (f"{result.scheduled} of {n} pods scheduled, {len(result.pending)} pending"
               + (f", {evicted} evicted" if evicted else "")
               + f"; {len(result.nodes)} nodes; {result.virtual_seconds:g} s of virtual "
               f"time, {result.wall_seconds:.2f} s wall.")
    sections = "".join(f'<h2>{html.escape(t)}</h2><div id="kubesched-plot-{i}" '
                       'class="kubesched-plot"></div>' for i, (t, _) in enumerate(figs))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>"
        f"<script>{get_plotlyjs()}</script></head><body>"
        f"<h1>{html.escape(title)}</h1><p class=\"summary\">{html.escape(summary)}</p>"
        f"{sections}{_devices_table(result)}<h2>Pending pods</h2>{_pending_table(result)}"
        f'<script type="application/json" id="kubesched-figures">{payload}</script>'
        f"<script>{_DRAW}</script></body></html>\n")


def write_report(path: str, sim: SimCluster, result: SimResult, title: str) -> None:
    text = render(sim, result, title)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
