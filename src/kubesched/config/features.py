"""Supported upstream releases and kube-scheduler's feature gates in each of them.

``--kubernetes-version X.Y`` chooses the release kubesched decides as; ``--feature-gates
A=true,B=false`` overrides that release's gate defaults exactly as upstream's flag does
(component-base ``featuregate.Set`` / ``SetFromMap``). The result is a :class:`FeatureGates`
that reaches the scheduler core as ``config.features`` and ``handle.features``.

Where the facts come from (read with the project's source index, December 2026):

* ``K137`` — ``staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go`` at commit
  ead35706ec68f83822a56d53b1577fa8a185ca14, upstream's own list of "scheduler-specific"
  gates with their versioned specs, in the state of v1.37 (CompositePodGroup and
  SchedulerPreQueueingHints alpha in 1.37, DRADeviceTaints GA "LockToDefault: true in 1.38").
  Every gate of that file is here, with its specs as written.
* ``K135`` — ``pkg/features/kube_features.go`` in its v1.35 state (the stored version whose
  newest specs are 1.35's, e.g. OpportunisticBatching 1.35 beta and GangScheduling 1.35
  alpha; the index does not name its commit). Gates the scheduler reads that had not moved
  to the scheduler's file by v1.37 come from here.
* The newest ``pkg/features/kube_features.go`` (v1.36, v1.37) could not be read. For the
  ``K135``-only gates, which releases still know them is inferred (``REMOVED_IN`` below, each
  with its reason) and said in ``docs/differences.md``.

A release's state of a gate is upstream's rule: the last spec whose version is ≤ the
release. A gate whose first spec is newer than the release is unknown to it (upstream would
call it PreAlpha and refuse to turn it on; kubesched refuses it either way).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.errors import InputError
from kubesched.releases import DEFAULT_VERSION, SUPPORTED_VERSIONS

ALPHA = "Alpha"
BETA = "Beta"
GA = "GA"
DEPRECATED = "Deprecated"

# Upstream's two pseudo-gates: turning one on enables every gate of that stage the flag does
# not name itself (locked gates keep their value).
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"


@dataclass(frozen=True, slots=True)
class Spec:
    """One entry of upstream's VersionedSpecs."""

    version: str
    default: bool
    stage: str
    locked: bool = False


@dataclass(frozen=True, slots=True)
class GateState:
    """A gate as one release knows it."""

    name: str
    default: bool
    stage: str
    locked: bool


def _s(version: str, default: bool, stage: str, locked: bool = False) -> Spec:
    return Spec(version, default, stage, locked)


# Gate → its versioned specs. The comment after a name says where the specs come from.
GATES: dict[str, tuple[Spec, ...]] = {
    "CompositePodGroup": (_s("1.37", False, ALPHA),),  # K137
    "CSIMigrationPortworx": (  # K135 (NodeVolumeLimits' in-tree translation)
        _s("1.23", False, ALPHA), _s("1.25", False, BETA), _s("1.31", True, BETA),
        _s("1.33", True, GA, True)),
    "DRAAdminAccess": (  # K137
        _s("1.32", False, ALPHA), _s("1.34", True, BETA), _s("1.36", True, GA, True)),
    "DRAConsumableCapacity": (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),  # K137
    "DRADerivedAttributes": (_s("1.37", False, ALPHA),),  # K137
    "DRADeviceBindingConditions": (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),  # K137
    "DRADeviceCompatibilityGroups": (_s("1.37", False, ALPHA),),  # K137
    "DRADeviceTaintRules": (  # K137
        _s("1.35", False, ALPHA), _s("1.36", False, BETA), _s("1.37", True, GA)),
    "DRADeviceTaints": (  # K137
        _s("1.33", False, ALPHA), _s("1.36", True, BETA), _s("1.37", True, GA)),
    "DRAExtendedResource": (  # K137
        _s("1.34", False, ALPHA), _s("1.36", True, BETA), _s("1.37", True, GA, True)),
    # K137 has two 1.37 specs; the second applies only from compatibility version 1.37, and
    # a 1.37 binary's default compatibility version is 1.36, so the first is the default.
    "DRAFractionalCapacityRange": (_s("1.37", False, BETA),),
    "DRAListTypeAttributes": (_s("1.36", False, ALPHA),),  # K137
    "DRANodeAllocatableResources": (_s("1.36", False, ALPHA),),  # K137
    "DRAOptionalNodeOperations": (_s("1.37", False, ALPHA),),  # K137
    "DRAPartitionableDevices": (_s("1.33", False, ALPHA), _s("1.36", True, BETA)),  # K137
    "DRAPrioritizedList": (  # K137
        _s("1.33", False, ALPHA), _s("1.34", True, BETA), _s("1.36", True, GA),
        _s("1.37", True, GA, True)),
    "DRAResourceClaimDeviceStatus": (  # K137
        _s("1.32", False, ALPHA), _s("1.33", True, BETA), _s("1.37", True, GA, True)),
    "DRASchedulerFilterTimeout": (_s("1.34", True, BETA),),  # K137
    "DRAWorkloadResourceClaims": (_s("1.36", False, ALPHA), _s("1.37", False, BETA)),  # K137
    "DynamicResourceAllocation": (  # K137
        _s("1.26", False, ALPHA), _s("1.32", False, BETA), _s("1.34", True, GA),
        _s("1.35", True, GA, True)),
    "GangScheduling": (_s("1.35", False, ALPHA),),  # K135
    "GenericWorkload": (_s("1.35", False, ALPHA), _s("1.37", False, BETA)),  # K137
    # K135 and upstream-1.37.md ("GA in 1.36"); whether 1.36 locked it was not read.
    "ImageVolume": (
        _s("1.31", False, ALPHA), _s("1.33", False, BETA), _s("1.35", True, BETA),
        _s("1.36", True, GA)),
    "InPlacePodLevelResourcesVerticalScaling": (  # K137
        _s("1.35", False, ALPHA), _s("1.36", True, BETA)),
    "InPlacePodVerticalScaling": (  # K137
        _s("1.27", False, ALPHA), _s("1.33", True, BETA), _s("1.35", True, GA, True)),
    "InPlacePodVerticalScalingSchedulerPreemption": (_s("1.37", False, ALPHA),),  # K137
    "InterPodAffinityHostnameFastPath": (_s("1.37", False, ALPHA),),  # K137
    # K135; the API server merges the keys, as kubesched's loader does for it.
    "MatchLabelKeysInPodAffinity": (
        _s("1.29", False, ALPHA), _s("1.31", True, BETA), _s("1.33", True, GA, True)),
    "MatchLabelKeysInPodTopologySpread": (  # K137
        _s("1.25", False, ALPHA), _s("1.27", True, BETA)),
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": (_s("1.34", True, BETA),),  # K135
    "NodeDeclaredFeatures": (  # K137
        _s("1.35", False, ALPHA), _s("1.36", True, BETA), _s("1.37", True, GA, True)),
    "NodeInclusionPolicyInPodTopologySpread": (  # K137
        _s("1.25", False, ALPHA), _s("1.26", True, BETA), _s("1.33", True, GA, True)),
    "NominatedNodeNameForExpectation": (_s("1.34", False, ALPHA), _s("1.35", True, BETA)),  # K137
    "OpportunisticBatching": (_s("1.35", True, BETA),),  # K137
    "PodGroupPreemptionPolicy": (_s("1.37", False, ALPHA),),  # K137
    "PodLevelResources": (_s("1.32", False, ALPHA), _s("1.34", True, BETA)),  # K137
    "PodSchedulingReadiness": (  # K135 (the SchedulingGates plugin)
        _s("1.26", False, ALPHA), _s("1.27", True, BETA), _s("1.30", True, GA, True)),
    "SchedulerAsyncAPICalls": (_s("1.34", False, BETA),),  # K137
    "SchedulerAsyncPreemption": (_s("1.32", False, ALPHA), _s("1.33", True, BETA)),  # K137
    "SchedulerPopFromBackoffQ": (_s("1.33", True, BETA),),  # K137
    "SchedulerPreQueueingHints": (_s("1.37", False, ALPHA),),  # K137
    "SchedulerQueueingHints": (  # K135
        _s("1.28", False, BETA), _s("1.32", True, BETA), _s("1.34", True, GA, True)),
    "SidecarContainers": (  # K135
        _s("1.28", False, ALPHA), _s("1.29", True, BETA), _s("1.33", True, GA, True)),
    "StorageCapacityScoring": (_s("1.33", False, ALPHA), _s("1.37", True, BETA)),  # K137
    "TaintTolerationComparisonOperators": (_s("1.35", False, ALPHA),),  # K137
    "TopologyAwareWorkloadScheduling": (_s("1.36", False, ALPHA),),  # K137
    "VolumeAttributesClass": (  # K137 (K135 has the same specs)
        _s("1.29", False, ALPHA), _s("1.31", False, BETA), _s("1.34", True, GA),
        _s("1.36", True, GA, True)),
    "VolumeLimitScaling": (_s("1.35", False, ALPHA), _s("1.37", True, BETA)),  # K137
    # Not in K135 or K137: a v1.36 source walk-through (secondary) lists it alpha in 1.36,
    # depending on GangScheduling.
    "WorkloadAwarePreemption": (_s("1.36", False, ALPHA),),
}

# Gate → the first supported release that no longer knows it. Inferred, since the newest
# pkg/features/kube_features.go could not be read: each was GA-locked (or is alpha) with an
# upstream "remove in" comment, and none is in K137's list of scheduler gates.
REMOVED_IN: dict[str, str] = {
    "CSIMigrationPortworx": "1.36",  # K135: "remove in 1.36"
    "SidecarContainers": "1.36",  # K135: "GA in 1.33 remove in 1.36"
    # GA-locked since 1.34; a v1.36.3 walk-through still lists it; gone from K137.
    "SchedulerQueueingHints": "1.37",
    # Replaced by GenericWorkload in 1.37 (upstream-1.37.md §2: GangScheduling is enabled
    # when GenericWorkload is on); gone from K137.
    "GangScheduling": "1.37",
    "WorkloadAwarePreemption": "1.37",  # gone from K137
}
# PodSchedulingReadiness and MatchLabelKeysInPodAffinity are removed only in 1.38
# (CHANGELOG-1.38, upstream-1.37.md row 25), so every supported release knows them.

# What kubesched does not decide as each newer release yet (upstream-1.37.md §1); one
# warning line names them when such a release is chosen. Every 1.36 and 1.37 change of
# docs/releases.md is implemented.
UNIMPLEMENTED: dict[str, tuple[str, ...]] = {
    "1.36": (),
    "1.37": (),
}

_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)")


def _key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def parse_version(value: str) -> str:
    """``X.Y`` (or ``vX.Y``) naming a supported release, as ``X.Y``."""
    m = _VERSION_RE.fullmatch(value.strip())
    version = f"{int(m.group(1))}.{int(m.group(2))}" if m else None
    if version not in SUPPORTED_VERSIONS:
        raise InputError(f"--kubernetes-version {value}: not a supported release "
                         f"(supported: {', '.join(SUPPORTED_VERSIONS)})")
    return version


def _spec_at(specs: tuple[Spec, ...], version: str) -> Spec | None:
    at = _key(version)
    found = None
    for spec in specs:
        if _key(spec.version) <= at:
            found = spec
    return found


def _known(name: str, version: str) -> bool:
    removed = REMOVED_IN.get(name)
    return removed is None or _key(version) < _key(removed)


def gates_for(version: str) -> dict[str, GateState]:
    """Every gate ``version`` knows, by name (sorted), in that release's state."""
    out: dict[str, GateState] = {}
    for name in sorted(GATES):
        spec = _spec_at(GATES[name], version)
        if spec is not None and _known(name, version):
            out[name] = GateState(name, spec.default, spec.stage, spec.locked)
    return out


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The effective gates of one run: a release's defaults plus the flag's overrides."""

    version: str = DEFAULT_VERSION
    overrides: tuple[tuple[str, bool], ...] = ()
    _enabled: Mapping[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        known = gates_for(self.version)
        enabled = {name: g.default for name, g in known.items()}
        explicit = dict(self.overrides)
        for pseudo, stage in ((ALL_ALPHA, ALPHA), (ALL_BETA, BETA)):
            if pseudo in explicit:
                for name, g in known.items():
                    if g.stage == stage and not g.locked and name not in explicit:
                        enabled[name] = explicit[pseudo]
        for name, value in explicit.items():
            if name in known:
                enabled[name] = value
        object.__setattr__(self, "_enabled", enabled)

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on in this run.

        A gate this release no longer knows has its final locked value (all such gates were
        GA and locked on); one newer than the release is off, as upstream's PreAlpha. A name
        no supported release knows is a programming error (KeyError), not a silent False.
        """
        value = self._enabled.get(name)
        if value is not None:
            return value
        specs = GATES[name]  # KeyError for a misspelt name
        if _spec_at(specs, self.version) is None:
            return False
        return specs[-1].default

    def as_dict(self) -> dict[str, bool]:
        """Every gate the release knows → its effective value."""
        return dict(self._enabled)


def _parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def parse_feature_gates(values: Iterable[str], version: str = DEFAULT_VERSION,
                        warn: list[str] | None = None) -> FeatureGates:
    """``--feature-gates`` values (the flag may be repeated; later settings win, as
    upstream's repeated ``Set`` calls) checked against ``version``'s gates.

    Each value is ``Name=bool`` pairs separated by commas; names and values are trimmed of
    whitespace and empty pairs skipped, as upstream's ``Set`` does. ``warn`` collects
    upstream's warnings for setting a GA or deprecated gate.
    """
    known = gates_for(version)
    explicit: dict[str, bool] = {}
    for value in values:
        # Upstream's Set reads every pair of one value before judging any name, so a
        # syntax error anywhere in the value is reported before an unknown gate.
        pairs: dict[str, bool] = {}
        for pair in value.split(","):
            if not pair:
                continue
            name, sep, raw = pair.partition("=")
            name = name.strip()
            if not sep:
                raise InputError(f"--feature-gates {value}: missing bool value for {name}")
            raw = raw.strip()
            on = _parse_bool(raw)
            if on is None:
                raise InputError(f"--feature-gates {value}: invalid value of {name}={raw} "
                                 "(want true or false)")
            pairs[name] = on
        for name, on in pairs.items():
            if name in (ALL_ALPHA, ALL_BETA):
                explicit[name] = on
                continue
            gate = known.get(name)
            if gate is None:
                accepted = ", ".join([ALL_ALPHA, ALL_BETA, *known])
                elsewhere = [v for v in SUPPORTED_VERSIONS if name in gates_for(v)]
                where = f"; it is a gate of {', '.join(elsewhere)}" if elsewhere else ""
                raise InputError(f"--feature-gates {value}: unrecognized feature gate {name} "
                                 f"in kube-scheduler {version}{where} (known: {accepted})")
            if gate.locked and on != gate.default:
                raise InputError(
                    f"--feature-gates {value}: cannot set feature gate {name} to "
                    f"{str(on).lower()}, feature is locked to {str(gate.default).lower()} "
                    f"in {version}")
            if warn is not None and gate.stage in (GA, DEPRECATED):
                warn.append(f"Setting {gate.stage} feature gate {name}={str(on).lower()}. "
                            "It will be removed in a future release.")
            explicit[name] = on
    return FeatureGates(version, tuple(explicit.items()))


def unimplemented_warning(version: str) -> str | None:
    """The one warning line for a release whose changes kubesched does not make yet."""
    missing = UNIMPLEMENTED.get(version)
    if not missing:
        return None
    return (f"--kubernetes-version {version}: kubesched does not implement these {version} "
            f"changes yet and decides as v1.35 there: {'; '.join(missing)}")


DEFAULT_FEATURE_GATES = FeatureGates()
