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
#: node names longer than this are shortened in the middle on the per-node axis (the hover
#: has the whole name)
NODE_LABEL_CHARS = 28
#: per-node bars up to this many nodes get every name (shortened) on their axis
NODE_TICKS = 60
#: placed pods shown at once in their table; the search reaches every one
PLACED_ROWS = 500

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
    counts = list(range(min(attempts), max(attempts) + 1)) if attempts else []
    figs.append(("Scheduling attempts per pod", {
        "data": [{"type": "bar", "x": counts, "y": [attempts[k] for k in counts],
                  "hovertemplate": "%{y} pods: %{x} attempt(s)<extra></extra>"}],
        "layout": layout("attempts", "pods", bargap=0.1,
                         xaxis={"title": {"text": "attempts"},
                                **_integer_ticks(max(counts, default=1))},
                         yaxis={"rangemode": "tozero",
                                **_integer_ticks(max(attempts.values(), default=1))})}))
    return figs


def _integer_ticks(top: int, most: int = 10) -> dict[str, Any]:
    """Axis ticks at whole numbers only (counts have no halves), a 1-2-5 step apart, at
    most ``most`` + 1 of them from 0 to ``top``."""
    step = next(m * 10 ** e for e in range(19) for m in (1, 2, 5) if top // (m * 10 ** e) <= most)
    return {"tickmode": "linear", "tick0": 0, "dtick": step, "tickformat": "d"}


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
        bars = [{"type": "bar", "name": r, "x": names, "y": ys, "customdata": names,
                 "hovertemplate": "%{customdata}: %{y}%<extra>" + r + "</extra>"}
                for r, ys in per.items()]
        # long names: cut in the middle (the ends tell nodes apart; names whose cuts
        # collide are kept whole), turned as plotly sees fit, given the room they need
        cut = [_middle_cut(n, NODE_LABEL_CHARS) for n in names]
        seen = Counter(cut)
        labels = [c if seen[c] == 1 else n for c, n in zip(cut, names, strict=True)]
        xaxis: dict[str, Any] = {"title": {"text": "node"}, "automargin": True}
        if len(names) <= NODE_TICKS:  # (beyond, plotly thins the labels out itself)
            xaxis.update(tickmode="array", tickvals=names, ticktext=labels)
        # the legend above the bars: below, it would lie over the turned names
        return {"data": bars, "layout": layout(
            "node", "% allocated", barmode="group", yaxis={"range": [0, 100]}, xaxis=xaxis,
            legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"})}
    # thousands of bars are unreadable: how many nodes are how full
    hists = [{"type": "histogram", "name": r, "x": [y for y in ys if y is not None],
              "xbins": {"start": 0, "end": 100.001, "size": 5}, "opacity": 0.7}
             for r, ys in per.items()]
    return {"data": hists, "layout": layout("% allocated", f"nodes (of {len(nodes)})",
                                           barmode="overlay")}


def _middle_cut(name: str, limit: int) -> str:
    if len(name) <= limit:
        return name
    keep = limit - 1
    return name[: (keep + 1) // 2] + "…" + name[len(name) - keep // 2:]


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


def _placed_rows(result: SimResult, placed: dict[str, dict[str, Any]] | None
                 ) -> list[list[Any]]:
    """Per placed pod: pod, node, time, attempts, the chosen node's total, feasible of
    evaluated nodes and the best alternatives, from the record of its binding cycle (empty
    where there is none: a pod bound by another scheduler, or no record kept)."""
    rows: list[list[Any]] = []
    for r in result.records:
        if r.node is None:
            continue
        rec = placed.get(r.key) if placed else None
        if rec is None or rec["node"] != r.node:
            rows.append([r.key, r.node, r.time, r.attempts, "", "", ""])
            continue
        top = rec["top"]
        # the chosen node has the highest total, listed or not (more than K may tie)
        chosen = top[0]["total"] if top else ""
        others = [f"{t['node']} ({t['total']})" for t in top if t["node"] != r.node]
        if not top:
            others = ["not scored: the only feasible node" if rec["feasible"] == 1
                      else "not scored"]
        rows.append([r.key, r.node, r.time, r.attempts, chosen,
                     f"{rec['feasible']} of {rec['evaluated']}", ", ".join(others)])
    return rows


def _placed_table(result: SimResult, placed: dict[str, dict[str, Any]] | None) -> str:
    """The placed pods, searchable (pod, node or alternative), drawn from the data by
    ``_PLACED``."""
    rows = _placed_rows(result, placed)
    if not rows:
        return "<p>No pod was placed.</p>"
    data = json.dumps(rows, separators=(",", ":")).replace("</", "<\\/")
    head = "".join(f"<th>{h}</th>" for h in ("pod", "node", "bound at (s)", "attempts",
                                              "total", "feasible of evaluated",
                                              "best alternatives (total)"))
    return ('<p><input type="search" id="kubesched-placed-search" size="40" '
            'placeholder="search pods, nodes, alternatives" aria-label="search placed pods">'
            ' <span id="kubesched-placed-note"></span></p>'
            f'<table class="placed"><thead><tr>{head}</tr></thead>'
            '<tbody id="kubesched-placed-rows"></tbody></table>'
            f'<script type="application/json" id="kubesched-placed">{data}</script>'
            f"<script>{_PLACED.replace('LIMIT', str(PLACED_ROWS))}</script>")


# Fills the placed pods' table with the rows that match the search (pod, node and
# alternatives; case-insensitive), the first LIMIT of them.
_PLACED = """
(function () {
  var rows = JSON.parse(document.getElementById("kubesched-placed").textContent);
  var hay = rows.map(function (r) { return [r[0], r[1], r[6]].join(" ").toLowerCase(); });
  var input = document.getElementById("kubesched-placed-search");
  var body = document.getElementById("kubesched-placed-rows");
  var note = document.getElementById("kubesched-placed-note");
  function show() {
    var q = input.value.trim().toLowerCase();
    var frag = document.createDocumentFragment();
    var matched = 0;
    rows.forEach(function (r, i) {
      if (q && hay[i].indexOf(q) < 0) { return; }
      matched += 1;
      if (matched > LIMIT) { return; }
      var tr = document.createElement("tr");
      r.forEach(function (v) {
        var td = document.createElement("td");
        td.textContent = String(v);
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    note.textContent = matched + " of " + rows.length + " placed pods" +
      (matched > LIMIT ? "; the first LIMIT shown" : "");
  }
  input.addEventListener("input", show);
  show();
})();
"""


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left;
         vertical-align: top; }
.summary { color: #444; }
table.placed td { overflow-wrap: anywhere; }
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


def render(sim: SimCluster, result: SimResult, title: str = "kubesched simulate",
           placed: dict[str, dict[str, Any]] | None = None, *,
           extra_figures: list[tuple[str, dict[str, Any]]] | None = None,
           extra_html: str = "") -> str:
    """``extra_figures`` and ``extra_html``: what a layer above adds (the autoscaler's nodes
    per group), after the run's own figures and before the tables."""
    import plotly.io as pio  # type: ignore[import-untyped]  # plotly ships no type hints
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

    figs = figures(sim, result) + list(extra_figures or ())
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
        f"{sections}{extra_html}{_devices_table(result)}"
        f"<h2>Pending pods</h2>{_pending_table(result)}"
        f"<h2>Placed pods</h2>{_placed_table(result, placed)}"
        f'<script type="application/json" id="kubesched-figures">{payload}</script>'
        f"<script>{_DRAW}</script></body></html>\n")


def write_report(path: str, sim: SimCluster, result: SimResult, title: str,
                 placed: dict[str, dict[str, Any]] | None = None, *,
                 extra_figures: list[tuple[str, dict[str, Any]]] | None = None,
                 extra_html: str = "") -> None:
    text = render(sim, result, title, placed, extra_figures=extra_figures,
                  extra_html=extra_html)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
