"""How a plugin author tests a policy with kubesched.testing: whole simulations with the
plugins enabled by a configuration, explain's verdicts, and the batch form checked against
the per-node form."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kubesched_example_plugins import GpuFirst, NoFridays

from kubesched.testing import assert_forms_agree, explain_pod, placements


def node(name: str, day: str, gpus: int = 0) -> str:
    gpu = f", nvidia.com/gpu: '{gpus}'" if gpus else ""
    return (f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: "
            f"{{day: {day}}}}}\nstatus: {{capacity: {{cpu: '4', memory: 8Gi, pods: '110'"
            f"{gpu}}}}}\n")


def pod(name: str) -> str:
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
            "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n")


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NoFridays}, {name: GpuFirst, weight: 10}]
  pluginConfig:
  - name: NoFridays
    args: {restDay: friday}
"""
CLUSTER = node("fri", "friday", gpus=8) + node("mon", "monday") + node("tue", "tuesday", 2)


def test_gpu_nodes_first_and_never_on_fridays():
    got = placements(CLUSTER + pod("a") + pod("b"), config=CONFIG,
                     plugins=[NoFridays, GpuFirst])
    assert got == {"default/a": "tue", "default/b": "tue"}


def test_without_the_plugins_the_default_profile_spreads():
    got = placements(CLUSTER + pod("a"), plugins=[NoFridays, GpuFirst])
    assert got["default/a"] in ("fri", "mon")  # registered, but no profile enables them


def test_explain_shows_the_plugins_verdicts():
    out = explain_pod(CLUSTER + pod("a"), "default/a", config=CONFIG,
                      plugins=[NoFridays, GpuFirst])
    by_node = {n["node"]: n for n in out["nodes"]}
    assert by_node["fri"] == {"node": "fri", "feasible": False, "plugin": "NoFridays",
                              "reasons": ["node(s) rest on Fridays"]}
    assert by_node["tue"]["scores"]["GpuFirst"] == 100
    assert by_node["mon"]["scores"]["GpuFirst"] == 0
    assert out["selected"] == ["tue"]


def test_args_reach_the_constructor():
    config = CONFIG.replace("restDay: friday", "restDay: tuesday")
    got = placements(CLUSTER + pod("a"), config=config, plugins=[NoFridays, GpuFirst])
    assert got == {"default/a": "fri"}


def test_batch_form_agrees_with_the_per_node_form():
    cluster = CLUSTER + node("wed", "wednesday") + node("fri2", "friday")
    assert_forms_agree(NoFridays({"restDay": "friday"}), cluster + pod("a"), "default/a")
    assert_forms_agree(GpuFirst(), cluster + pod("a"), "default/a")


def test_a_wrong_batch_form_is_caught():
    class Broken(NoFridays):
        def filter_batch(self, state, pod, snapshot, idx):
            return super().filter_batch(state, pod, snapshot, idx[::-1])

    with pytest.raises(AssertionError, match="NoFridays on node"):
        assert_forms_agree(Broken({}), CLUSTER + pod("a"), "default/a")


def test_registered_through_its_entry_points(tmp_path: Path, monkeypatch):
    """As `pip install` leaves it: a distribution whose entry points name the classes."""
    from kubesched.plugins.loading import out_of_tree_plugins

    dist = tmp_path / "kubesched_example_plugins-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kubesched-example-plugins\n"
                                   "Version: 0.1.0\n")
    ep = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    names = ep.split('[project.entry-points."kubesched.plugins"]')[1].split("[")[0]
    # the same lines in entry_points.txt's INI form (no TOML quotes)
    (dist / "entry_points.txt").write_text("[kubesched.plugins]\n"
                                           + names.strip().replace('"', "") + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = out_of_tree_plugins()
    assert found == {"NoFridays": NoFridays, "GpuFirst": GpuFirst}
    assert sys.modules["kubesched_example_plugins"].NoFridays is NoFridays
