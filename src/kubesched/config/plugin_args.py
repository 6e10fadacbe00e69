"""The in-tree plugins' args as types: one dataclass per upstream ``<Plugin>Args`` kind (v1
``types_pluginargs.go``, field names in snake_case), and upstream's SetDefaults_*Args as
the one place their defaults are stated.

``build_args`` turns a decoded args dict (camelCase keys, as :func:`~kubesched.config.args.
decode_args` returns it) into the plugin's defaulted dataclass; ``args_to_dict`` gives the
camelCase dict back (what validation and ``default_args`` read). A plugin reads its args as
attributes (``typed_args``): the configuration hands them over built; a plugin built
without (a test) gets them built here from what it was given.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from kubesched.config.features import DEFAULT_FEATURE_GATES, FeatureGates

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec("cpu"), ResourceSpec("memory")]


@dataclass(slots=True)
class UtilizationShapePoint:
    utilization: int = 0
    score: int = 0


@dataclass(slots=True)
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass(slots=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = field(default_factory=_default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@dataclass(slots=True)
class NodeResourcesFitArgs:
    PLUGIN: ClassVar[str] = "NodeResourcesFit"
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass(slots=True)
class NodeResourcesBalancedAllocationArgs:
    PLUGIN: ClassVar[str] = "NodeResourcesBalancedAllocation"
    resources: list[ResourceSpec] = field(default_factory=_default_resources)


@dataclass(slots=True)
class PodTopologySpreadArgs:
    PLUGIN: ClassVar[str] = "PodTopologySpread"
    # v1.TopologySpreadConstraint documents, as given (the plugin parses them)
    default_constraints: list[dict[str, Any]] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING


@dataclass(slots=True)
class InterPodAffinityArgs:
    PLUGIN: ClassVar[str] = "InterPodAffinity"
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(slots=True)
class DefaultPreemptionArgs:
    PLUGIN: ClassVar[str] = "DefaultPreemption"
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(slots=True)
class VolumeBindingArgs:
    PLUGIN: ClassVar[str] = "VolumeBinding"
    bind_timeout_seconds: int = 600
    # None unless StorageCapacityScoring is on (then KEP-4049's default: emptier scores higher)
    shape: list[UtilizationShapePoint] | None = None


@dataclass(slots=True)
class NodeAffinityArgs:
    PLUGIN: ClassVar[str] = "NodeAffinity"
    added_affinity: Any = None  # a v1.NodeAffinity document, as given (or already parsed)


@dataclass(slots=True)
class DynamicResourcesArgs:
    PLUGIN: ClassVar[str] = "DynamicResources"
    filter_timeout: str | None = None  # Go durations; defaults depend on the gates
    binding_timeout: str | None = None


@dataclass(slots=True)
class CoschedulingArgs:
    """scheduler-plugins' CoschedulingArgs."""

    PLUGIN: ClassVar[str] = "Coscheduling"
    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10


ARGS_TYPES: dict[str, type[Any]] = {cls.PLUGIN: cls for cls in (
    NodeResourcesFitArgs, NodeResourcesBalancedAllocationArgs, PodTopologySpreadArgs,
    InterPodAffinityArgs, DefaultPreemptionArgs, VolumeBindingArgs, NodeAffinityArgs,
    DynamicResourcesArgs, CoschedulingArgs)}
_PLUGIN_OF = {cls: name for name, cls in ARGS_TYPES.items()}


def _gates(features: FeatureGates | None) -> FeatureGates:
    return features if features is not None else DEFAULT_FEATURE_GATES


# The gates that args' defaulting and validation read (None: the default release's gates).

def storage_capacity_scoring(features: FeatureGates | None) -> bool:
    return _gates(features).enabled("StorageCapacityScoring")


def filter_timeout_gate(features: FeatureGates | None) -> bool:
    """DRASchedulerFilterTimeout (beta, on from 1.34)."""
    return _gates(features).enabled("DRASchedulerFilterTimeout")


def binding_conditions(features: FeatureGates | None) -> bool:
    """KEP-5007's two gates."""
    gates = _gates(features)
    return (gates.enabled("DRADeviceBindingConditions")
            and gates.enabled("DRAResourceClaimDeviceStatus"))


def _resources(raw: list[dict[str, Any]] | None, defaulting: bool) -> list[ResourceSpec]:
    """None (or, defaulting, empty): the default (cpu, memory); a missing or zero weight
    is 1."""
    if raw is None or (defaulting and not raw):
        return _default_resources()
    return [ResourceSpec(r.get("name", ""), r.get("weight") or 1) for r in raw]


def _shape(raw: list[dict[str, Any]]) -> list[UtilizationShapePoint]:
    return [UtilizationShapePoint(p.get("utilization", 0), p.get("score", 0)) for p in raw]


def _scoring_strategy(raw: dict[str, Any] | None, defaulting: bool) -> ScoringStrategy:
    if raw is None:
        return ScoringStrategy()
    rtcr = raw.get("requestedToCapacityRatio")
    return ScoringStrategy(
        type=raw.get("type", ""),  # given without a type: validation says which are supported
        resources=_resources(raw.get("resources"), defaulting),
        requested_to_capacity_ratio=(None if rtcr is None else RequestedToCapacityRatioParam(
            _shape(rtcr.get("shape") or []))))


def build_args(plugin: str, raw: dict[str, Any], features: FeatureGates | None = None, *,
               defaulting: bool = True) -> Any:
    """Upstream's SetDefaults_<Plugin>Args on decoded args (camelCase keys): the plugin's
    dataclass; ``features``: the run's gates (default: the default release's).
    ``defaulting=False``: the args as given, a missing field taking the dataclass's
    default but no SetDefaults rule applied (an empty resource list stays empty, no
    gate-dependent value is filled in), as a plugin built outside a profile (upstream's
    plugin tests) gets them."""
    a = raw
    if plugin == "NodeResourcesFit":
        return NodeResourcesFitArgs(list(a.get("ignoredResources") or ()),
                                    list(a.get("ignoredResourceGroups") or ()),
                                    _scoring_strategy(a.get("scoringStrategy"), defaulting))
    if plugin == "NodeResourcesBalancedAllocation":
        return NodeResourcesBalancedAllocationArgs(_resources(a.get("resources"), defaulting))
    if plugin == "PodTopologySpread":
        return PodTopologySpreadArgs(
            [dict(c) for c in a.get("defaultConstraints") or ()],
            a.get("defaultingType") or SYSTEM_DEFAULTING)
    if plugin == "InterPodAffinity":
        d = InterPodAffinityArgs()
        return InterPodAffinityArgs(
            a.get("hardPodAffinityWeight", d.hard_pod_affinity_weight),
            a.get("ignorePreferredTermsOfExistingPods",
                  d.ignore_preferred_terms_of_existing_pods))
    if plugin == "DefaultPreemption":
        p = DefaultPreemptionArgs()
        return DefaultPreemptionArgs(
            a.get("minCandidateNodesPercentage", p.min_candidate_nodes_percentage),
            a.get("minCandidateNodesAbsolute", p.min_candidate_nodes_absolute))
    if plugin == "VolumeBinding":
        shape = a.get("shape")
        points = _shape(shape) if shape is not None else None
        if defaulting and not points and storage_capacity_scoring(features):
            # emptier storage scores higher (KEP-4049's default)
            points = [UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE),
                      UtilizationShapePoint(100, 0)]
        return VolumeBindingArgs(
            a.get("bindTimeoutSeconds", VolumeBindingArgs().bind_timeout_seconds), points)
    if plugin == "NodeAffinity":
        return NodeAffinityArgs(a.get("addedAffinity"))
    if plugin == "DynamicResources":
        filter_timeout = a.get("filterTimeout")
        if defaulting and "filterTimeout" not in a and filter_timeout_gate(features):
            filter_timeout = "10s"
        binding_timeout = a.get("bindingTimeout")
        if defaulting and binding_timeout is None and binding_conditions(features):
            binding_timeout = "10m0s"
        return DynamicResourcesArgs(filter_timeout, binding_timeout)
    if plugin == "Coscheduling":  # scheduler-plugins' SetDefaults_CoschedulingArgs
        c = CoschedulingArgs()
        return CoschedulingArgs(
            a.get("permitWaitingTimeSeconds", c.permit_waiting_time_seconds),
            a.get("podGroupBackoffSeconds", c.pod_group_backoff_seconds),
            a.get("podGroupRejectPercentage", c.pod_group_reject_percentage))
    raise KeyError(plugin)


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _to_dict(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_camel(f.name): _to_dict(getattr(value, f.name))
                for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_to_dict(v) for v in value]
    return value


def args_to_dict(args: Any) -> dict[str, Any]:
    """The camelCase args document of a plugin's dataclass."""
    out: dict[str, Any] = _to_dict(args)
    return out


T = TypeVar("T")


def typed_args(cls: type[T], args: Any, features: FeatureGates | None) -> T:
    """What a plugin of ``cls``'s kind reads: its args as built by the configuration, or,
    given none or a document (a plugin built outside a profile), those it gives
    (``defaulting=False``: upstream's plugin tests build a plugin from args as given)."""
    if isinstance(args, cls):
        return args
    if args is None or isinstance(args, dict):
        built: T = build_args(_PLUGIN_OF[cls], args or {}, features, defaulting=False)
        return built
    raise TypeError(f"{_PLUGIN_OF[cls]} args must be {cls.__name__}, "
                    f"not {type(args).__name__}")
