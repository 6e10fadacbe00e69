"""The autoscaler's part of ``simulate --report``: nodes per group over the run (a plotly
figure as a dict, drawn by the report as its own) and a table of node-hours and cost."""

from __future__ import annotations

import html
from typing import Any

from kubesched.autoscaler.simulated import AutoscaleSummary


def node_group_figure(done: AutoscaleSummary) -> dict[str, Any]:
    """Per group, the nodes billed (joined or asked for) and the nodes joined, as steps."""
    data = []
    for g in done.groups:
        xs = [t for t, _b, _r in g.series]
        for what, i, dash in (("nodes", 1, "solid"), ("joined", 2, "dot")):
            data.append({"type": "scatter", "mode": "lines", "name": f"{g.name} ({what})",
                         "x": xs, "y": [row[i] for row in g.series],
                         "line": {"shape": "hv", "dash": dash}})
    return {"data": data,
            "layout": {"xaxis": {"title": {"text": "virtual time (s)"}},
                       "yaxis": {"title": {"text": "nodes"}, "rangemode": "tozero"},
                       "margin": {"t": 30, "r": 20}, "height": 380,
                       "template": "plotly_white",
                       "legend": {"orientation": "h", "y": -0.2}}}


def node_group_table(done: AutoscaleSummary) -> str:
    cols = ("group", "min", "max", "start", "peak", "end", "added", "removed", "node-hours",
            "price", "cost")
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
            g.name, g.min_size, g.max_size, g.at_start, g.peak, g.at_end, g.added, g.removed,
            f"{g.node_hours:.2f}", f"{g.price:g}", f"{g.cost:.2f}")) + "</tr>"
        for g in done.groups)
    total = (f"<tr><td>total</td>{'<td></td>' * 7}<td>{done.node_hours:.2f}</td><td></td>"
             f"<td>{done.cost:.2f}</td></tr>")
    head = "".join(f"<th>{c}</th>" for c in cols)
    cannot = ""
    if done.cannot_help:
        cannot = (f"<p>{len(done.cannot_help)} pending pod(s) no node group can host: "
                  f"{html.escape(', '.join(done.cannot_help[:20]))}</p>")
    return (f"<h2>Node groups (cluster-autoscaler)</h2><table><tr>{head}</tr>{rows}{total}"
            f"</table>{cannot}")
