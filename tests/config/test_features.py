"""The gate tables per release, and --feature-gates parsing as upstream's flag."""

from __future__ import annotations

import pytest

from kubesched.config import default_config
from kubesched.config.features import (
    ALPHA,
    BETA,
    DEFAULT_VERSION,
    GA,
    GATES,
    REMOVED_IN,
    SUPPORTED_VERSIONS,
    UNIMPLEMENTED,
    FeatureGates,
    gates_for,
    parse_feature_gates,
    parse_version,
    unimplemented_warning,
)
from kubesched.errors import InputError
from kubesched.framework.handle import Handle, feature_enabled


def state(version: str, name: str) -> tuple[bool, str, bool]:
    g = gates_for(version)[name]
    return g.default, g.stage, g.locked


# ------------------------------------------------------------------ tables (upstream facts)

def test_queueing_hints_ga_and_locked_from_1_34_then_gone():
    assert state("1.35", "SchedulerQueueingHints") == (True, GA, True)
    assert state("1.36", "SchedulerQueueingHints") == (True, GA, True)
    assert "SchedulerQueueingHints" not in gates_for("1.37")
    # Gone means always on, not off.
    assert FeatureGates("1.37").enabled("SchedulerQueueingHints")


def test_gates_newer_than_the_release_are_unknown_and_off():
    for name in ("CompositePodGroup", "SchedulerPreQueueingHints", "DRADerivedAttributes"):
        assert name not in gates_for("1.35") and name not in gates_for("1.36")
        assert state("1.37", name) == (False, ALPHA, False)
        assert not FeatureGates("1.35").enabled(name)
    assert "TopologyAwareWorkloadScheduling" not in gates_for("1.35")
    assert state("1.36", "TopologyAwareWorkloadScheduling") == (False, ALPHA, False)


def test_graduations_across_the_three_releases():
    assert state("1.35", "NodeDeclaredFeatures") == (False, ALPHA, False)
    assert state("1.36", "NodeDeclaredFeatures") == (True, BETA, False)
    assert state("1.37", "NodeDeclaredFeatures") == (True, GA, True)
    assert state("1.35", "StorageCapacityScoring") == (False, ALPHA, False)
    assert state("1.36", "StorageCapacityScoring") == (False, ALPHA, False)
    assert state("1.37", "StorageCapacityScoring") == (True, BETA, False)
    assert state("1.35", "DRAPrioritizedList") == (True, BETA, False)
    assert state("1.36", "DRAPrioritizedList") == (True, GA, False)
    assert state("1.37", "DRAPrioritizedList") == (True, GA, True)
    assert state("1.35", "VolumeAttributesClass") == (True, GA, False)
    assert state("1.36", "VolumeAttributesClass") == (True, GA, True)
    assert state("1.37", "DRADeviceTaints") == (True, GA, False)  # locked only in 1.38


def test_v1_35_defaults_kubesched_implements():
    g = FeatureGates("1.35")
    assert g.enabled("SchedulerPopFromBackoffQ")
    assert g.enabled("SchedulerAsyncPreemption")
    assert not g.enabled("SchedulerAsyncAPICalls")
    assert g.enabled("OpportunisticBatching")
    assert g.enabled("PodLevelResources")
    assert g.enabled("DynamicResourceAllocation")
    assert state("1.35", "DynamicResourceAllocation") == (True, GA, True)
    assert state("1.35", "GangScheduling") == (False, ALPHA, False)
    assert "GangScheduling" not in gates_for("1.37")


def test_tables_are_well_formed():
    for name, specs in GATES.items():
        versions = [tuple(map(int, s.version.split("."))) for s in specs]
        assert versions == sorted(versions), name
        assert all(s.stage in (ALPHA, BETA, GA, "Deprecated") for s in specs), name
        assert all(not s.locked or s.stage in (GA, "Deprecated") for s in specs), name
    for name, version in REMOVED_IN.items():
        assert name in GATES and version in SUPPORTED_VERSIONS
        # Only a locked-on or never-on gate may disappear without changing decisions.
        last = GATES[name][-1]
        assert (last.locked and last.default) or last.stage == ALPHA, name
    assert DEFAULT_VERSION in SUPPORTED_VERSIONS
    assert set(UNIMPLEMENTED) <= set(SUPPORTED_VERSIONS) - {"1.35"}


def test_misspelt_gate_in_code_is_an_error_not_false():
    with pytest.raises(KeyError):
        FeatureGates().enabled("SchedulerPopFromBackoffQueue")


# ------------------------------------------------------------------ parsing

def test_versions():
    assert parse_version("1.36") == "1.36"
    assert parse_version("v1.37") == "1.37"
    for bad in ("1.34", "1.38", "2.0", "1.35.1", "latest", ""):
        with pytest.raises(InputError) as e:
            parse_version(bad)
        assert str(e.value) == (f"--kubernetes-version {bad}: not a supported release "
                                "(supported: 1.35, 1.36, 1.37)")


def test_parsing_like_upstream_set():
    warns: list[str] = []
    g = parse_feature_gates([" SchedulerPopFromBackoffQ = false ,,OpportunisticBatching=F",
                             "SchedulerAsyncAPICalls=1", "SchedulerPopFromBackoffQ=TRUE"],
                            "1.35", warns)
    assert g.enabled("SchedulerPopFromBackoffQ")  # the later setting wins
    assert not g.enabled("OpportunisticBatching")
    assert g.enabled("SchedulerAsyncAPICalls")
    assert warns == []
    assert parse_feature_gates([], "1.36") == FeatureGates("1.36")
    assert parse_feature_gates([""]).as_dict() == FeatureGates().as_dict()


def test_setting_a_ga_gate_to_its_locked_value_warns():
    warns: list[str] = []
    g = parse_feature_gates(["SchedulerQueueingHints=true"], "1.35", warns)
    assert g.enabled("SchedulerQueueingHints")
    assert warns == ["Setting GA feature gate SchedulerQueueingHints=true. "
                     "It will be removed in a future release."]


def test_all_alpha_and_all_beta():
    g = parse_feature_gates(["AllAlpha=true,GangScheduling=false"], "1.35")
    assert g.enabled("GenericWorkload") and g.enabled("TaintTolerationComparisonOperators")
    assert not g.enabled("GangScheduling")  # named itself
    assert g.enabled("SchedulerPopFromBackoffQ")  # beta: untouched
    g = parse_feature_gates(["AllBeta=false"], "1.35")
    assert not g.enabled("SchedulerPopFromBackoffQ") and not g.enabled("PodLevelResources")
    assert g.enabled("SchedulerQueueingHints")  # GA and locked


@pytest.mark.parametrize("value, version, message", [
    ("Nope=true", "1.35", "--feature-gates Nope=true: unrecognized feature gate Nope in "
                          "kube-scheduler 1.35 (known: AllAlpha, AllBeta, CSIMigrationPortworx,"),
    ("CompositePodGroup=true", "1.36", "--feature-gates CompositePodGroup=true: unrecognized "
                                       "feature gate CompositePodGroup in kube-scheduler 1.36; "
                                       "it is a gate of 1.37 (known: "),
    ("SchedulerQueueingHints=true", "1.37", "--feature-gates SchedulerQueueingHints=true: "
                                            "unrecognized feature gate SchedulerQueueingHints "
                                            "in kube-scheduler 1.37; it is a gate of 1.35, 1.36"),
    ("OpportunisticBatching=yes", "1.35", "--feature-gates OpportunisticBatching=yes: invalid "
                                          "value of OpportunisticBatching=yes (want true or "
                                          "false)"),
    # Every pair is read before any name is judged, as upstream's Set.
    ("A=true,OpportunisticBatching", "1.35", "--feature-gates A=true,OpportunisticBatching: "
                                             "missing bool value for OpportunisticBatching"),
    ("OpportunisticBatching", "1.35", "--feature-gates OpportunisticBatching: missing bool "
                                      "value for OpportunisticBatching"),
    ("schedulerpopfrombackoffq=false", "1.35", "--feature-gates schedulerpopfrombackoffq=false:"
                                               " unrecognized feature gate"),
    ("SchedulerQueueingHints=false", "1.35", "--feature-gates SchedulerQueueingHints=false: "
                                             "cannot set feature gate SchedulerQueueingHints to "
                                             "false, feature is locked to true in 1.35"),
    ("NodeDeclaredFeatures=false", "1.37", "--feature-gates NodeDeclaredFeatures=false: cannot "
                                           "set feature gate NodeDeclaredFeatures to false, "
                                           "feature is locked to true in 1.37"),
])
def test_bad_gates(value: str, version: str, message: str):
    with pytest.raises(InputError) as e:
        parse_feature_gates([value], version)
    assert str(e.value).startswith(message), str(e.value)


def test_known_list_names_every_gate_of_the_release():
    with pytest.raises(InputError) as e:
        parse_feature_gates(["X=true"], "1.37")
    listed = str(e.value).split("(known: ")[1].rstrip(")").split(", ")
    assert listed == ["AllAlpha", "AllBeta", *gates_for("1.37")]


def test_unimplemented_warning_is_one_line_per_newer_release(monkeypatch):
    # every 1.36 and 1.37 change is implemented: no warning for any supported release
    for version in SUPPORTED_VERSIONS:
        assert unimplemented_warning(version) is None
    monkeypatch.setitem(UNIMPLEMENTED, "1.37", ("a change", "another"))
    w = unimplemented_warning("1.37")
    assert w is not None and "\n" not in w and w.endswith("a change; another")


# ------------------------------------------------------------------ plumbing

def test_gates_reach_the_handle_and_the_queue():
    from kubesched.clock import VirtualClock
    from kubesched.scheduler import Scheduler

    config = default_config()
    assert config.kubernetes_version == DEFAULT_VERSION
    config.features = parse_feature_gates(["SchedulerPopFromBackoffQ=false"], "1.36")
    sched = Scheduler(None, VirtualClock(), config)  # type: ignore[arg-type]
    assert sched.handle.kubernetes_version == "1.36"
    assert not sched.handle.features.enabled("SchedulerPopFromBackoffQ")
    assert sched.queue.pop_from_backoff is False
    assert Scheduler(None, VirtualClock()).queue.pop_from_backoff is True  # type: ignore[arg-type]
    assert feature_enabled(Handle(), "SchedulerQueueingHints")  # the default release's gates
    assert not feature_enabled(Handle(features=FeatureGates("1.37")), "GangScheduling")
