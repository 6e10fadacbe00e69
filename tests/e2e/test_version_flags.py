"""--kubernetes-version and --feature-gates on every deciding command, through the CLI."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import main


def _example(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    return {
        "simulate": ["simulate", _example("taints.yaml"), "--quiet"],
        "explain": ["explain", _example("taints.yaml"), "--pod", "default/small-1"],
        # The flags are checked before the kubeconfig is read: no cluster needed.
        "run": ["run", "--kubeconfig", str(tmp_path / "missing")],
    }


@pytest.mark.parametrize("command", ["simulate", "explain", "run"])
@pytest.mark.parametrize("flags, message", [
    (["--kubernetes-version", "1.34"],
     "error: --kubernetes-version 1.34: not a supported release (supported: 1.35, 1.36, "
     "1.37)\n"),
    (["--feature-gates", "NoSuchGate=true"],
     "error: --feature-gates NoSuchGate=true: unrecognized feature gate NoSuchGate in "
     "kube-scheduler 1.37 (known: AllAlpha, AllBeta, "),
    (["--kubernetes-version", "1.36", "--feature-gates", "TopologyAwareWorkloadScheduling=on"],
     "error: --feature-gates TopologyAwareWorkloadScheduling=on: invalid value of "
     "TopologyAwareWorkloadScheduling=on (want true or false)\n"),
    (["--kubernetes-version", "1.35", "--feature-gates", "CompositePodGroup=true"],
     "error: --feature-gates CompositePodGroup=true: unrecognized feature gate "
     "CompositePodGroup in kube-scheduler 1.35; it is a gate of 1.37 (known: "),
    (["--feature-gates", "InPlacePodVerticalScaling=false"],
     "error: --feature-gates InPlacePodVerticalScaling=false: cannot set feature gate "
     "InPlacePodVerticalScaling to false, feature is locked to true in 1.37\n"),
])
def test_bad_flags_exit_2_with_one_message(tmp_path: Path, command: str, flags: list[str],
                                           message: str) -> None:
    res = CliRunner().invoke(main, [*_commands(tmp_path)[command], *flags])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(message), res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.output
    assert res.stdout == ""


def test_explain_json_records_the_version() -> None:
    base = ["explain", _example("taints.yaml"), "--pod", "default/small-1", "-o", "json"]
    res = CliRunner().invoke(main, base)
    assert res.exit_code == 0, res.output
    newest = json.loads(res.stdout)
    assert newest["kubernetesVersion"] == "1.37"  # the default: the newest release
    assert res.stderr == ""
    res = CliRunner().invoke(main, [*base, "--kubernetes-version", "1.37"])
    assert json.loads(res.stdout) == newest
    # Asked for by name: every 1.37 change is implemented, so no warning.
    assert res.stderr == ""
    res = CliRunner().invoke(main, [*base, "--kubernetes-version", "1.35"])
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    default = json.loads(res.stdout)
    assert default.pop("kubernetesVersion") == "1.35"
    newest.pop("kubernetesVersion")
    # 1.36's BalancedAllocation scores the change in balance; 1.37's VolumeBinding scores
    # (0: the pod has no claims; not skipped, as upstream); nothing else differs here.
    for node in newest["nodes"]:
        if node["feasible"]:
            assert node["scores"].pop("VolumeBinding") == 0
    for node in newest["nodes"] + default["nodes"]:
        if node["feasible"]:
            node.pop("total")
            assert 50 <= node["scores"].pop("NodeResourcesBalancedAllocation") <= 100
    newest.pop("selected")
    default.pop("selected")
    assert newest == default


@pytest.mark.parametrize("example", ["quickstart.yaml", "taints.yaml", "pressure.yaml"])
def test_version_1_37_places_exactly_as_no_flag(example: str) -> None:
    base = ["simulate", _example(example), "--placements", "-"]
    plain = CliRunner().invoke(main, base)
    pinned = CliRunner().invoke(main, [*base, "--kubernetes-version", "1.37"])
    assert plain.exit_code == pinned.exit_code == 0, (plain.output, pinned.output)
    assert plain.stdout_bytes == pinned.stdout_bytes
    assert plain.stdout.startswith('{"pod": ')  # placements lines only, no header
    assert plain.stderr == ""
    assert pinned.stderr == ""  # every 1.37 change is implemented: no warning


def test_gate_values_reach_the_queue_through_the_cli(monkeypatch) -> None:
    from kubesched.scheduler import scheduler

    seen: list[bool] = []
    real = scheduler.SchedulingQueue

    def spy(*args, **kwargs):
        seen.append(kwargs["pop_from_backoff"])
        return real(*args, **kwargs)

    monkeypatch.setattr(scheduler, "SchedulingQueue", spy)
    res = CliRunner().invoke(main, ["simulate", _example("taints.yaml"), "--quiet",
                                    "--feature-gates", "SchedulerPopFromBackoffQ=false"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["simulate", _example("taints.yaml"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert seen == [False, True]
