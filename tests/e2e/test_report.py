"""``simulate --report`` and ``--metrics``: the time series, its downsampling, and the
report opened in a real headless Chromium (no console errors, every plot drawn with data)."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.e2e.test_faults import fault, node, pod

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.series import Series
from kubesched.cli import main

# pods arriving over time, some finishing, some never fitting, a node going away: every
# plot has something to draw
SCENARIO = (node("n1", cpu="2") + node("n2", cpu="2") + node("n3", cpu="1")
            + "".join(pod(f"a-{i}", "500m", annotations=f"{{kubesched.io/arrival: '{i * 10}',"
                          " kubesched.io/duration: '60'}") for i in range(8))
            + pod("big", "3") + pod("picky", "100m", on="nowhere")
            + fault("f", 45, "DeleteNode", node="n3"))


def run_cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    r = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml"), *args])
    return r.exit_code, r.output


def test_metrics_is_the_time_series(tmp_path: Path) -> None:
    code, out = run_cli(tmp_path, "--metrics", str(tmp_path / "m.csv"), "--quiet")
    assert code == 0, out
    rows = list(csv.DictReader((tmp_path / "m.csv").open()))
    assert list(rows[0])[:10] == ["time", "attempts", "running", "pending", "cpu_requested",
                                  "cpu_allocatable", "memory_requested",
                                  "memory_allocatable", "pods_requested", "pods_allocatable"]
    times = [float(r["time"]) for r in rows]
    assert times == sorted(times) and times[-1] > 45
    last = rows[-1]
    # the end: the two pods that never fit are pending; every a-* pod has finished; n3 is
    # gone (5 CPUs become 4)
    assert (last["running"], last["pending"], last["cpu_allocatable"]) == ("0", "2", "4000")
    assert max(int(r["running"]) for r in rows) >= 2


def test_series_is_downsampled_evenly_and_keeps_the_end() -> None:
    text = node("n1", cpu="64", pods=500) + "".join(pod(f"p-{i}", "100m")
                                                    for i in range(300))
    sim = SimCluster(load_scenario_text(text, "s.yaml"))
    sim.series = Series(sim, max_points=20)
    sim.run()
    samples = sim.series.samples
    assert 20 <= len(samples) < 40
    assert samples[-1].running == 300 and samples[-1].pending == 0
    attempts = [s.attempts for s in samples]
    assert attempts == sorted(attempts) and attempts[-1] == 300


def test_report_is_self_contained(tmp_path: Path) -> None:
    code, out = run_cli(tmp_path, "--report", str(tmp_path / "r.html"), "--quiet")
    assert code == 0, out
    text = (tmp_path / "r.html").read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|<iframe|<img", text)
    assert "<th>reason</th>" in text and "default/big" in text  # the pending pods' table


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome")) if p), None)


# Injected first: keeps every error and console.error of the page.
CAPTURE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) { __errors.push("error: " + e.message); });
window.addEventListener("unhandledrejection", function (e) {
  __errors.push("rejection: " + e.reason); });
["error", "warn"].forEach(function (level) {
  var orig = console[level];
  console[level] = function () {
    __errors.push(level + ": " + Array.prototype.join.call(arguments, " "));
    return orig.apply(console, arguments);
  };
});
</script>"""

# Injected last: once the report says its plots are drawn, what each plot holds (traces and
# their points) and what it drew (SVG paths of lines and bars), written into the DOM.
VERDICT = """<script>
(function check(tries) {
  var drawn = document.body.getAttribute("data-plots-drawn");
  if (drawn === null && tries > 0) { return setTimeout(function () { check(tries - 1); }, 50); }
  var plots = Array.prototype.map.call(document.querySelectorAll(".kubesched-plot"),
    function (gd) {
      var points = 0;
      (gd.data || []).forEach(function (t) { points += (t.x || []).length; });
      var marks = gd.querySelectorAll(
        ".main-svg .scatterlayer path.js-line, .main-svg .barlayer path").length;
      return {id: gd.id, traces: (gd.data || []).length, points: points, marks: marks};
    });
  var out = document.createElement("pre");
  out.id = "kubesched-check";
  out.textContent = JSON.stringify({drawn: drawn, plots: plots, errors: window.__errors});
  document.body.appendChild(out);
})(200);
</script>"""


def in_chromium(tmp_path: Path, text: str, script: str) -> dict:
    """Open the report ``text`` in headless Chromium with CAPTURE injected first and
    ``script`` last; ``script`` writes its JSON verdict into ``<pre id="kubesched-check">``
    (which is returned, with the page's errors and console lines checked empty)."""
    browser = chromium()
    if browser is None:
        msg = "chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    page = tmp_path / "page.html"
    head = text.index("<head>") + len("<head>")
    body_end = text.rindex("</body>")
    page.write_text(text[:head] + CAPTURE + text[head:body_end] + script + text[body_end:])
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         # nothing may be fetched: any attempt fails, and shows as an error
         "--host-resolver-rules=MAP * ~NOTFOUND",
         "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    found = re.search(r'<pre id="kubesched-check">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"no verdict in the page (exit {proc.returncode}): {proc.stderr[-2000:]}"
    verdict = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")
                         .replace("&lt;", "<").replace("&gt;", ">"))
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert verdict["errors"] == [], verdict["errors"]
    assert console == [], console
    return verdict


def test_report_draws_every_plot_in_chromium(tmp_path: Path) -> None:
    code, out = run_cli(tmp_path, "--report", str(tmp_path / "r.html"), "--quiet")
    assert code == 0, out
    verdict = in_chromium(tmp_path, (tmp_path / "r.html").read_text(), VERDICT)
    assert verdict["drawn"] == "5", verdict
    assert len(verdict["plots"]) == 5
    for plot in verdict["plots"]:
        assert plot["traces"] > 0 and plot["points"] > 0 and plot["marks"] > 0, plot


def test_report_counts_allocated_devices_per_class(tmp_path: Path) -> None:
    from importlib import resources

    from kubesched.api.scenario import load_scenario
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.backends.sim.series import Series
    from kubesched.report import render

    path = str(resources.files("kubesched") / "examples" / "gpus.yaml")
    sim = SimCluster(load_scenario([path]))
    sim.series = Series(sim)
    result = sim.run()
    text = render(sim, result)
    # the bundled example ends with the shared claim's one device (test_dra_sim agrees)
    assert ("<h2>Allocated devices</h2><table><thead><tr><th>DeviceClass</th>"
            "<th>devices</th></tr></thead><tbody><tr><td>gpu.example.com</td><td>1</td>"
            "</tr></tbody></table>") in text


# Long node names (as clouds name them), and pods that wait for room (several attempts)
LONG = "ip-10-0-112-201.eu-west-1.compute.internal"
PLACED_SCENARIO = (node(LONG, cpu="2") + node(LONG.replace("201", "202"), cpu="2")
                   + node("small", cpu="1")
                   + "".join(node(f"ip-10-0-{i}-17.eu-west-1.compute.internal", cpu="1")
                             for i in range(30))
                   + "".join(pod(f"web-{i}", "500m", annotations="{kubesched.io/duration: "
                                 f"'{30 + 10 * i}'}}") for i in range(9))
                   + pod("late", "1500m") + pod("never", "3"))

# Once the plots are drawn: the placed pods' rows, then those left by a search; the tick
# labels of the attempts histogram and of the per-node plot, with where they were drawn.
PLACED = """<script>
(function check(tries) {
  var drawn = document.body.getAttribute("data-plots-drawn");
  if (drawn === null && tries > 0) { return setTimeout(function () { check(tries - 1); }, 50); }
  function rows() {
    return Array.prototype.map.call(document.querySelectorAll("#kubesched-placed-rows tr"),
      function (tr) { return Array.prototype.map.call(tr.children,
        function (td) { return td.textContent; }); });
  }
  function plot(title) {
    var h = Array.prototype.find.call(document.querySelectorAll("h2"),
      function (h) { return h.textContent === title; });
    return h.nextElementSibling;
  }
  function meets(a, b) {
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }
  // each tick label with whether it is drawn whole (inside the plot's SVG) and clear of
  // the other labels, the axis title and the legend
  function ticks(gd, axis) {
    var box = gd.querySelector(".main-svg").getBoundingClientRect();
    var others = Array.prototype.map.call(gd.querySelectorAll(".g-" + axis + "title, .legend"),
      function (e) { return e.getBoundingClientRect(); });
    var labels = Array.prototype.map.call(gd.querySelectorAll("." + axis + "tick text"),
      function (t) { return [t.textContent, t.getBoundingClientRect()]; });
    return labels.map(function (l, i) {
      var r = l[1];
      var clear = others.every(function (o) { return !meets(r, o); }) &&
        labels.every(function (m, j) { return i === j || !meets(r, m[1]); });
      return {text: l[0], clear: clear, inside: r.left >= box.left && r.right <= box.right &&
                                                r.top >= box.top && r.bottom <= box.bottom};
    });
  }
  var all = rows();
  var input = document.getElementById("kubesched-placed-search");
  input.value = "LATE";
  input.dispatchEvent(new Event("input"));
  var found = rows();
  var note = document.getElementById("kubesched-placed-note").textContent;
  var attempts = plot("Scheduling attempts per pod");
  var nodes = plot("Allocation per node at the end");
  var out = document.createElement("pre");
  out.id = "kubesched-check";
  out.textContent = JSON.stringify({
    all: all, found: found, note: note, attemptsX: ticks(attempts, "x"),
    attemptsY: ticks(attempts, "y"), nodeX: ticks(nodes, "x"), errors: window.__errors});
  document.body.appendChild(out);
})(200);
</script>"""


def test_report_placed_pods_are_searchable_and_axes_readable(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(PLACED_SCENARIO)
    r = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml"), "--quiet",
                                  "--report", str(tmp_path / "r.html"),
                                  "--placements", str(tmp_path / "p.jsonl")])
    assert r.exit_code == 0, r.output
    placements = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    placed = {p["pod"]: p for p in placements if p["node"] is not None}
    verdict = in_chromium(tmp_path, (tmp_path / "r.html").read_text(), PLACED)
    # every placed pod, with its node, time and attempts as --placements says
    assert {row[0]: (row[1], float(row[2]), int(row[3])) for row in verdict["all"]} == {
        k: (p["node"], p["time"], p["attempts"]) for k, p in placed.items()}
    assert verdict["note"] == f"1 of {len(placed)} placed pods"
    [late] = verdict["found"]
    assert late[0] == "default/late" and int(late[3]) > 1  # it waited for room
    # its binding cycle: the nodes that were feasible then, the chosen one's total apart
    # its binding cycle, after room was made: one node fitted, so nothing was scored
    assert late[4:] == ["", "1 of 33", "not scored: the only feasible node"]
    # the first pod's: every node feasible, the next two best first, none above it
    first = next(row for row in verdict["all"] if row[0] == "default/web-0")
    alts = [(a.rsplit(" (", 1)[0], int(a.rsplit(" (", 1)[1].rstrip(")")))
            for a in first[6].split(", ")]
    assert first[5] == "33 of 33"
    assert len(alts) == 2 and first[1] not in {n for n, _ in alts}
    totals = [int(first[4])] + [t for _, t in alts]
    assert totals == sorted(totals, reverse=True)
    # integer ticks only, on both axes of the attempts histogram
    for axis in ("attemptsX", "attemptsY"):
        assert verdict[axis] and all(t["text"].isdigit() for t in verdict[axis]), verdict[axis]
    xs = [int(t["text"]) for t in verdict["attemptsX"]]
    assert xs == list(range(xs[0], xs[-1] + 1))
    # node names whole or cut in the middle, drawn inside the plot, clear of one another,
    # of the axis title and of the legend
    names = [t["text"] for t in verdict["nodeX"]]
    assert "small" in names and len(names) == 33
    for t in verdict["nodeX"]:
        assert t["inside"] and t["clear"], t
        assert t["text"] == "small" or (t["text"].startswith("ip-10-0-")
                                        and t["text"].endswith(".internal")), t
