"""The public plugin API (issue 10): kubesched.framework's exports, constructors by
signature, capabilities resolved once per plugin, and loading plugins from outside."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.framework import FilterPlugin, ScorePlugin, unschedulable
from kubesched.plugins.loading import load_plugin_class, out_of_tree_plugins
from kubesched.testing import placements

NODES = "".join(
    f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{rack: '{r}'}}}}\n"
    f"status: {{capacity: {{cpu: '4', memory: 8Gi, pods: '110'}}}}\n"
    for n, r in (("n1", "a"), ("n2", "b"), ("n3", "c")))
POD = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
       "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n")


def config(*names: str, args: dict | None = None) -> dict:
    profile: dict = {"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"enabled": [{"name": n, "weight": 50} for n in names]}}}
    if args:
        profile["pluginConfig"] = [{"name": k, "args": v} for k, v in args.items()]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


class NoInit(ScorePlugin):
    name = "NoInit"

    def score(self, state, pod, node_info):
        return 100 if node_info.name == "n3" else 0


class ArgsOnly(FilterPlugin):
    name = "ArgsOnly"

    def __init__(self, args):
        self.rack = args["rack"]

    def filter(self, state, pod, node_info):
        return None if node_info.node.labels["rack"] == self.rack else unschedulable("rack")


class HandleOnly(ScorePlugin):
    name = "HandleOnly"

    def __init__(self, handle):
        self.seen = handle

    def score(self, state, pod, node_info):
        assert self.seen is not None and self.args == {}
        return 100 if node_info.name == "n2" else 0


def test_constructors_by_signature():
    got = placements(NODES + POD, config=config("NoInit"), plugins=[NoInit])
    assert got == {"default/p": "n3"}
    got = placements(NODES + POD, config=config("ArgsOnly", args={"ArgsOnly": {"rack": "a"}}),
                     plugins=[ArgsOnly])
    assert got == {"default/p": "n1"}
    got = placements(NODES + POD, config=config("HandleOnly"), plugins=[HandleOnly])
    assert got == {"default/p": "n2"}


def test_a_constructor_that_raises_is_named():
    with pytest.raises(InputError, match="plugin ArgsOnly could not be built: KeyError"):
        placements(NODES + POD, config=config("ArgsOnly"), plugins=[ArgsOnly])


def test_capabilities_are_resolved_once_when_the_profile_is_built():
    from kubesched.api.scenario import load_scenario_text
    from kubesched.backends.sim.cluster import SimCluster
    from kubesched.config import load_config

    cfg = load_config(config("NoInit"))
    cfg.out_of_tree = {"NoInit": NoInit}
    sim = SimCluster(load_scenario_text(NODES + POD), cfg)
    fwk = sim.scheduler.profiles["default-scheduler"]
    plugin = fwk.plugins["NoInit"]
    plugin.score = lambda *a: 0  # too late: the framework holds what it resolved
    assert {r.key: r.node for r in sim.run().records} == {"default/p": "n3"}
    assert "NodeResourcesFit" in fwk.batch_filters and "NoInit" not in fwk.batch_filters


@pytest.mark.parametrize("spec, message", [
    ("nocolon", "must be MODULE:CLASS or FILE.py:CLASS"),
    ("{tmp}/missing.py:X", "no such file"),
    ("{tmp}/plug.py:Missing", "has no Missing"),
    ("{tmp}/plug.py:NotAPlugin", "is not a plugin class"),
    ("{tmp}/plug.py:Nameless", "has no name"),
    ("{tmp}/broken.py:X", "importing it failed: ZeroDivisionError"),
    ("no_such_module_xyz:X", "importing it failed: ModuleNotFoundError"),
])
def test_bad_plugin_specs(tmp_path: Path, spec: str, message: str):
    (tmp_path / "plug.py").write_text(
        "from kubesched.framework import FilterPlugin\n"
        "class NotAPlugin: pass\n"
        "class Nameless(FilterPlugin):\n    def filter(self, s, p, n): return None\n")
    (tmp_path / "broken.py").write_text("1 / 0\n")
    with pytest.raises(InputError, match=message) as ei:
        load_plugin_class(spec.format(tmp=tmp_path))
    assert ei.value.field == "--plugin"


def test_names_must_be_unique(tmp_path: Path):
    (tmp_path / "p.py").write_text(
        "from kubesched.framework import FilterPlugin\n"
        "class A(FilterPlugin):\n    name = 'NodePorts'\n"
        "class B(FilterPlugin):\n    name = 'Same'\n"
        "class C(FilterPlugin):\n    name = 'Same'\n")
    with pytest.raises(InputError, match='"NodePorts" is taken by an in-tree plugin'):
        out_of_tree_plugins([f"{tmp_path}/p.py:A"], use_entry_points=False)
    with pytest.raises(InputError, match='"Same" is registered twice'):
        out_of_tree_plugins([f"{tmp_path}/p.py:B", f"{tmp_path}/p.py:C"],
                            use_entry_points=False)


def test_cli_plugin_flag_on_simulate_and_explain(tmp_path: Path):
    (tmp_path / "prefer.py").write_text(
        "from kubesched.framework import ScorePlugin\n"
        "class PreferRackB(ScorePlugin):\n    name = 'PreferRackB'\n"
        "    def score(self, state, pod, ni):\n"
        "        return 100 if ni.node.labels['rack'] == 'b' else 0\n")
    import yaml

    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump(config("PreferRackB")) + NODES + POD)
    spec = f"{tmp_path}/prefer.py:PreferRackB"
    res = CliRunner().invoke(main, ["simulate", str(scen), "--plugin", spec,
                                    "--placements", "-"])
    assert res.exit_code == 0, res.output
    assert '"node": "n2"' in res.output
    res = CliRunner().invoke(main, ["explain", str(scen), "--plugin", spec, "--pod",
                                    "default/p", "-o", "json"])
    assert res.exit_code == 0 and '"PreferRackB": 100' in res.output
    res = CliRunner().invoke(main, ["simulate", str(scen)])
    assert res.exit_code == 2
    assert '"PreferRackB" does not exist' in res.output


@pytest.mark.parametrize("point, message", [
    ("filter", 'running "Raises" filter plugin: ValueError: kaboom'),
    ("score", 'running Score plugin "Raises": ValueError: kaboom'),
    ("reserve", 'running Reserve plugin "Raises": ValueError: kaboom'),
    ("permit", 'running Permit plugin "Raises": ValueError: kaboom'),
])
def test_a_plugin_that_raises_fails_that_pods_cycle_only(point: str, message: str):
    """An out-of-tree plugin's exception is an Error status for that pod's cycle, in
    upstream's wording; the other pods schedule and the run ends normally."""
    from kubesched.framework import PermitPlugin, ReservePlugin

    class Raises(FilterPlugin, ScorePlugin, ReservePlugin, PermitPlugin):
        name = "Raises"

        def _maybe(self, pod, here):
            if pod.name == "bad" and here == point:
                raise ValueError("kaboom")

        def filter(self, state, pod, node_info):
            self._maybe(pod, "filter")

        def score(self, state, pod, node_info):
            self._maybe(pod, "score")
            return 0

        def reserve(self, state, pod, node_name):
            self._maybe(pod, "reserve")

        def unreserve(self, state, pod, node_name):
            pass

        def permit(self, state, pod, node_name):
            self._maybe(pod, "permit")
            return None, 0

    bad = POD.replace("name: p}", "name: bad}")
    got = placements(NODES + POD + bad, config=config("Raises"), plugins=[Raises])
    assert got["default/p"] is not None and got["default/bad"] is None
    from kubesched.testing import simulate

    rec = {r.key: r for r in simulate(NODES + POD + bad, config=config("Raises"),
                                      plugins=[Raises]).records}["default/bad"]
    assert rec.message == message
