"""Plugin args of the in-tree plugins: strict decoding, v1 defaulting and validation.

Upstream: ``staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go`` (fields),
``pkg/scheduler/apis/config/v1/defaults.go`` (SetDefaults_*Args) and
``pkg/scheduler/apis/config/validation/validation_pluginargs.go`` (Validate*Args).

:func:`decode_args` checks a document against the v1 schema (camelCase keys);
:func:`~kubesched.config.plugin_args.build_args` defaults it into the plugin's dataclass,
where the defaults are stated; :func:`default_args` is that as a dict (camelCase), which
:func:`validate_args` reads.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from typing import Any

from kubesched.api.validation import label_value_errors, qualified_name_errors
from kubesched.config.features import FeatureGates
from kubesched.config.plugin_args import (
    ARGS_TYPES,
    LEAST_ALLOCATED,
    LIST_DEFAULTING,
    MAX_CUSTOM_PRIORITY_SCORE,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SYSTEM_DEFAULTING,
    args_to_dict,
    binding_conditions,
    build_args,
    filter_timeout_gate,
    storage_capacity_scoring,
)
from kubesched.config.types import API_VERSION, FieldError, join_path

# ============================================================ strict decoding
#
# A tiny schema language standing in for Go's strict, case-sensitive JSON decoding into the
# v1 types: unknown fields and wrong types are errors that name the field path.


class DecodeError(Exception):
    def __init__(self, error: FieldError) -> None:
        super().__init__(error.render())
        self.error = error


class Spec:
    def decode(self, value: Any, path: str) -> Any:  # pragma: no cover - interface
        raise NotImplementedError


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _bad_type(path: str, value: Any, want: str) -> DecodeError:
    return DecodeError(FieldError(path, f"cannot decode {_type_name(value)} as {want}", value))


class Int(Spec):
    def __init__(self, bits: int = 32) -> None:
        self.bits = bits

    def decode(self, value: Any, path: str) -> int:
        n: int
        if isinstance(value, float):
            if not math.isfinite(value) or value != int(value):
                raise _bad_type(path, value, f"int{self.bits}")
            n = int(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            raise _bad_type(path, value, f"int{self.bits}")
        lim = 1 << (self.bits - 1)
        if not -lim <= n < lim:
            raise DecodeError(FieldError(path, f"number out of range for int{self.bits}", n))
        return n


class Float(Spec):
    def decode(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _bad_type(path, value, "float")
        return float(value)


class Bool(Spec):
    def decode(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise _bad_type(path, value, "bool")
        return value


class Str(Spec):
    def decode(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise _bad_type(path, value, "string")
        return value


_DURATION_RE = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0,
                   "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration (``"1m30s"``, ``"500ms"``, ``"-2h"``, ``"0"``) in seconds."""
    s = text
    sign = 1.0
    if s and s[0] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f"invalid duration {text!r}")
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _DURATION_RE.match(s, pos)
        if not m or m.group(1) in ("", "."):
            raise ValueError(f"invalid duration {text!r}")
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


class Duration(Spec):
    """metav1.Duration: a Go duration string; kept as the string."""

    def decode(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise _bad_type(path, value, "duration string")
        try:
            parse_duration(value)
        except ValueError:
            raise DecodeError(FieldError(path, "invalid duration", value)) from None
        return value


class AnyValue(Spec):
    def decode(self, value: Any, path: str) -> Any:
        return copy.deepcopy(value)


class ListOf(Spec):
    def __init__(self, item: Spec) -> None:
        self.item = item

    def decode(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise _bad_type(path, value, "array")
        return [self.item.decode(v, join_path(path, i)) for i, v in enumerate(value)]


class MapOf(Spec):
    def __init__(self, item: Spec) -> None:
        self.item = item

    def decode(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _bad_type(path, value, "object")
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise DecodeError(FieldError(path, "object keys must be strings", k))
            out[k] = self.item.decode(v, join_path(path, k))
        return out


class Obj(Spec):
    """A struct: known fields only (case-sensitive). ``null`` fields count as absent."""

    def __init__(self, fields: dict[str, Spec]) -> None:
        self.fields = fields

    def decode(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _bad_type(path, value, "object")
        out: dict[str, Any] = {}
        for k, v in value.items():
            spec = self.fields.get(k) if isinstance(k, str) else None
            if spec is None:
                raise DecodeError(FieldError(join_path(path, str(k)), "unknown field"))
            if v is None:
                continue
            out[k] = spec.decode(v, join_path(path, k))
        return out


# --------------------------------------------------------------- shared shapes

RESOURCE_SPEC = Obj({"name": Str(), "weight": Int(64)})
SHAPE_POINT = Obj({"utilization": Int(32), "score": Int(32)})
LABEL_SELECTOR = Obj({
    "matchLabels": MapOf(Str()),
    "matchExpressions": ListOf(Obj({"key": Str(), "operator": Str(), "values": ListOf(Str())})),
})
TOPOLOGY_SPREAD_CONSTRAINT = Obj({
    "maxSkew": Int(32),
    "topologyKey": Str(),
    "whenUnsatisfiable": Str(),
    "labelSelector": LABEL_SELECTOR,
    "minDomains": Int(32),
    "nodeAffinityPolicy": Str(),
    "nodeTaintsPolicy": Str(),
    "matchLabelKeys": ListOf(Str()),
})
NODE_SELECTOR_REQUIREMENT = Obj({"key": Str(), "operator": Str(), "values": ListOf(Str())})
NODE_SELECTOR_TERM = Obj({
    "matchExpressions": ListOf(NODE_SELECTOR_REQUIREMENT),
    "matchFields": ListOf(NODE_SELECTOR_REQUIREMENT),
})
NODE_AFFINITY = Obj({
    "requiredDuringSchedulingIgnoredDuringExecution": Obj({
        "nodeSelectorTerms": ListOf(NODE_SELECTOR_TERM),
    }),
    "preferredDuringSchedulingIgnoredDuringExecution": ListOf(Obj({
        "weight": Int(32),
        "preference": NODE_SELECTOR_TERM,
    })),
})

_TYPE_META = {"apiVersion": Str(), "kind": Str()}

ARGS_SCHEMAS: dict[str, Obj] = {
    "NodeResourcesFit": Obj({
        **_TYPE_META,
        "ignoredResources": ListOf(Str()),
        "ignoredResourceGroups": ListOf(Str()),
        "scoringStrategy": Obj({
            "type": Str(),
            "resources": ListOf(RESOURCE_SPEC),
            "requestedToCapacityRatio": Obj({"shape": ListOf(SHAPE_POINT)}),
        }),
    }),
    "NodeResourcesBalancedAllocation": Obj({**_TYPE_META, "resources": ListOf(RESOURCE_SPEC)}),
    "PodTopologySpread": Obj({
        **_TYPE_META,
        "defaultConstraints": ListOf(TOPOLOGY_SPREAD_CONSTRAINT),
        "defaultingType": Str(),
    }),
    "InterPodAffinity": Obj({
        **_TYPE_META,
        "hardPodAffinityWeight": Int(32),
        "ignorePreferredTermsOfExistingPods": Bool(),
    }),
    "DefaultPreemption": Obj({
        **_TYPE_META,
        "minCandidateNodesPercentage": Int(32),
        "minCandidateNodesAbsolute": Int(32),
    }),
    "VolumeBinding": Obj({
        **_TYPE_META,
        "bindTimeoutSeconds": Int(64),
        "shape": ListOf(SHAPE_POINT),
    }),
    "NodeAffinity": Obj({**_TYPE_META, "addedAffinity": NODE_AFFINITY}),
    "DynamicResources": Obj({
        **_TYPE_META,
        "filterTimeout": Duration(),
        "bindingTimeout": Duration(),
    }),
    # scheduler-plugins' CoschedulingArgs (apis/config/v1, the same API group as upstream's)
    "Coscheduling": Obj({
        **_TYPE_META,
        "permitWaitingTimeSeconds": Int(64),
        "podGroupBackoffSeconds": Int(64),
        "podGroupRejectPercentage": Int(32),
    }),
}

# Plugins with an upstream v1 ``<Name>Args`` type: they get default args when enabled.
ARGS_PLUGINS: frozenset[str] = frozenset(ARGS_SCHEMAS)

SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

def decode_args(plugin: str, raw: Any, path: str) -> dict[str, Any]:
    """Strictly decode ``args`` of a plugin. Unknown plugins: the args as given (a dict)."""
    schema = ARGS_SCHEMAS.get(plugin)
    if raw is None:
        raw = {}
    if schema is None:
        if not isinstance(raw, dict):
            raise _bad_type(path, raw, "object")
        return copy.deepcopy(raw)
    args = schema.decode(raw, path)
    kind = args.pop("kind", None)
    api_version = args.pop("apiVersion", None)
    if kind is not None and kind != f"{plugin}Args":
        raise DecodeError(FieldError(join_path(path, "kind"),
                                     f"args for plugin {plugin} must be of kind {plugin}Args",
                                     kind))
    if api_version is not None and api_version != API_VERSION:
        raise DecodeError(FieldError(join_path(path, "apiVersion"),
                                     f"args must have apiVersion {API_VERSION}", api_version))
    return args


# ============================================================ defaulting


def default_args(plugin: str, args: dict[str, Any] | None = None,
                 features: FeatureGates | None = None) -> dict[str, Any]:
    """Upstream's SetDefaults_<Plugin>Args on a decoded args dict, as a new dict (the
    defaults are the dataclasses' of ``plugin_args``); ``features``: the run's gates
    (default: the default release's)."""
    if plugin not in ARGS_TYPES:
        return copy.deepcopy(args) if args else {}
    return args_to_dict(build_args(plugin, copy.deepcopy(args) if args else {}, features))


# ============================================================ validation

def _supported(values: list[str] | tuple[str, ...]) -> str:
    return "unsupported value; supported values: " + ", ".join(f'"{v}"' for v in values)


def _validate_default_preemption(path: str, a: dict[str, Any]) -> list[FieldError]:
    errs = []
    pct_path, abs_path = join_path(path, "minCandidateNodesPercentage"), join_path(
        path, "minCandidateNodesAbsolute")
    pct, absolute = a["minCandidateNodesPercentage"], a["minCandidateNodesAbsolute"]
    if not 0 <= pct <= 100:
        errs.append(FieldError(pct_path, "not in valid range [0, 100]", pct))
    if absolute < 0:
        errs.append(FieldError(abs_path, "not in valid range [0, inf)", absolute))
    if pct == 0 and absolute == 0:
        errs.append(FieldError(pct_path,
                               "cannot be zero at the same time as minCandidateNodesAbsolute", pct))
        errs.append(FieldError(abs_path,
                               "cannot be zero at the same time as minCandidateNodesPercentage",
                               absolute))
    return errs


def _validate_inter_pod_affinity(path: str, a: dict[str, Any]) -> list[FieldError]:
    w = a["hardPodAffinityWeight"]
    if not 0 <= w <= 100:
        return [FieldError(join_path(path, "hardPodAffinityWeight"), "not in valid range [0, 100]",
                           w)]
    return []


def _validate_pod_topology_spread(path: str, a: dict[str, Any]) -> list[FieldError]:
    errs = []
    dt = a["defaultingType"]
    constraints = a["defaultConstraints"]
    if dt not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(FieldError(join_path(path, "defaultingType"),
                               _supported([SYSTEM_DEFAULTING, LIST_DEFAULTING]), dt))
    elif dt == SYSTEM_DEFAULTING and constraints:
        errs.append(FieldError(join_path(path, "defaultingType"),
                               "when .defaultConstraints are not empty", dt))
    cpath = join_path(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = join_path(cpath, i)
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.append(FieldError(join_path(p, "maxSkew"), "not in valid range (0, inf)", skew))
        key = c.get("topologyKey", "")
        if not key:
            errs.append(FieldError(join_path(p, "topologyKey"), "required value: can not be empty"))
        else:
            errs.extend(FieldError(join_path(p, "topologyKey"), m, key)
                        for m in qualified_name_errors(key))
        action = c.get("whenUnsatisfiable", "")
        if not action:
            errs.append(FieldError(join_path(p, "whenUnsatisfiable"),
                                   "required value: can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(FieldError(join_path(p, "whenUnsatisfiable"),
                                   _supported(["DoNotSchedule", "ScheduleAnyway"]), action))
        if "labelSelector" in c:
            errs.append(FieldError(join_path(p, "labelSelector"),
                                   "forbidden: constraint must not define a selector, as they "
                                   "deduced for each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
                errs.append(FieldError(p, "duplicate value", f"{{{key}, {action}}}"))
                break
    return errs


def _validate_shape(path: str, shape: list[dict[str, Any]]) -> list[FieldError]:
    if not shape:
        return [FieldError(path, "required value: at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(FieldError(join_path(join_path(path, i), "utilization"),
                                   "values must be sorted in increasing order",
                                   shape[i].get("utilization", 0)))
            break
    for i, point in enumerate(shape):
        u, s = point.get("utilization", 0), point.get("score", 0)
        if not 0 <= u <= 100:
            errs.append(FieldError(join_path(join_path(path, i), "utilization"),
                                   "not in valid range [0, 100]", u))
        if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(FieldError(join_path(join_path(path, i), "score"),
                                   f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]", s))
    return errs


def _validate_fit(path: str, a: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(a["ignoredResources"]):
        p = join_path(join_path(path, "ignoredResources"), i)
        errs.extend(FieldError(p, m, res) for m in qualified_name_errors(res))
    for i, group in enumerate(a["ignoredResourceGroups"]):
        p = join_path(join_path(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(FieldError(p, "resource group name can't contain '/'", group))
        errs.extend(FieldError(p, m, group) for m in qualified_name_errors(group))
    spath = join_path(path, "scoringStrategy")
    ss = a["scoringStrategy"]
    if ss["type"] not in SCORING_STRATEGY_TYPES:
        errs.append(FieldError(join_path(spath, "type"), _supported(SCORING_STRATEGY_TYPES),
                               ss["type"]))
    errs.extend(_validate_resource_weights(join_path(spath, "resources"), ss["resources"]))
    rtcr = ss["requestedToCapacityRatio"]
    rpath = join_path(spath, "requestedToCapacityRatio")
    if ss["type"] == REQUESTED_TO_CAPACITY_RATIO:
        if rtcr is None:
            errs.append(FieldError(rpath, "required value: must be specified when type is "
                                          "RequestedToCapacityRatio"))
        else:
            errs.extend(_validate_shape(join_path(rpath, "shape"), rtcr["shape"]))
    elif rtcr is not None:
        errs.append(FieldError(rpath,
                               "forbidden: must be nil when type is not RequestedToCapacityRatio"))
    return errs


def _validate_resource_weights(path: str, resources: list[dict[str, Any]]) -> list[FieldError]:
    errs = []
    for i, r in enumerate(resources):
        w = r["weight"]
        if w <= 0 or w > 100:
            msg = f"resource weight of {r['name']} not in valid range (0, 100]"
            errs.append(FieldError(join_path(join_path(path, i), "weight"), msg, w))
    return errs


def _validate_balanced_allocation(path: str, a: dict[str, Any]) -> list[FieldError]:
    errs = []
    seen: set[str] = set()
    rpath = join_path(path, "resources")
    for i, r in enumerate(a["resources"]):
        p = join_path(rpath, i)
        if r["name"] in seen:
            errs.append(FieldError(join_path(p, "name"), "duplicate value", r["name"]))
        seen.add(r["name"])
        if r["weight"] != 1:
            errs.append(FieldError(join_path(p, "weight"), "must be 1", r["weight"]))
    return errs


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _validate_node_selector_term(path: str, term: dict[str, Any]) -> list[FieldError]:
    errs = []
    for j, req in enumerate(term.get("matchExpressions", [])):
        p = join_path(join_path(path, "matchExpressions"), j)
        key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values", [])
        vpath = join_path(p, "values")
        if op not in _SELECTOR_OPERATORS:
            errs.append(FieldError(join_path(p, "operator"), "not a valid selector operator", op))
            continue
        errs.extend(FieldError(join_path(p, "key"), m, key) for m in qualified_name_errors(key))
        if op in ("In", "NotIn") and not values:
            errs.append(FieldError(vpath, "for 'in', 'notin' operators, values set can't be empty",
                                   values))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(FieldError(vpath, "values set must be empty for exists and does not exist",
                                   values))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(FieldError(vpath,
                                       "for 'Gt', 'Lt' operators, exactly one value is required",
                                       values))
            for i, v in enumerate(values):
                if not re.fullmatch(r"[+-]?[0-9]+", v):
                    errs.append(FieldError(join_path(vpath, i), "for 'Gt', 'Lt' operators, the "
                                                                "value must be an integer", v))
        for i, v in enumerate(values):
            errs.extend(FieldError(join_path(vpath, i), m, v) for m in label_value_errors(v))
    for j, req in enumerate(term.get("matchFields", [])):
        p = join_path(join_path(path, "matchFields"), j)
        values = req.get("values", [])
        if len(values) != 1:
            errs.append(FieldError(join_path(p, "values"), "must have one element", values))
        elif req.get("operator", "") not in ("In", "NotIn"):
            errs.append(FieldError(join_path(p, "operator"), _supported(["In", "NotIn"]),
                                   req.get("operator", "")))
    return errs


def _validate_node_affinity(path: str, a: dict[str, Any]) -> list[FieldError]:
    aff = a["addedAffinity"]
    if aff is None:
        return []
    errs = []
    base = join_path(path, "addedAffinity")
    req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        tpath = join_path(join_path(base, "requiredDuringSchedulingIgnoredDuringExecution"),
                          "nodeSelectorTerms")
        for i, term in enumerate(req.get("nodeSelectorTerms", [])):
            errs.extend(_validate_node_selector_term(join_path(tpath, i), term))
    ppath = join_path(base, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(aff.get("preferredDuringSchedulingIgnoredDuringExecution", [])):
        errs.extend(_validate_node_selector_term(join_path(join_path(ppath, i), "preference"),
                                                 pref.get("preference", {})))
    return errs


def _validate_volume_binding(path: str, a: dict[str, Any],
                             features: FeatureGates | None = None) -> list[FieldError]:
    errs = []
    if a["bindTimeoutSeconds"] < 0:
        errs.append(FieldError(join_path(path, "bindTimeoutSeconds"),
                               "invalid BindTimeoutSeconds, should not be a negative value",
                               a["bindTimeoutSeconds"]))
    if storage_capacity_scoring(features):
        errs.extend(_validate_shape(join_path(path, "shape"), a["shape"] or []))
    elif a["shape"] is not None:
        errs.append(FieldError(join_path(path, "shape"),
                               "unexpected field `shape`, remove it or turn on the feature gate "
                               "StorageCapacityScoring", a["shape"]))
    return errs


def _validate_dynamic_resources(path: str, a: dict[str, Any],
                                features: FeatureGates | None = None) -> list[FieldError]:
    errs = []
    ft = a["filterTimeout"]
    if filter_timeout_gate(features):
        if ft is not None and parse_duration(ft) < 0:
            errs.append(FieldError(join_path(path, "filterTimeout"), "must be zero or positive",
                                   ft))
    elif ft is not None:
        errs.append(FieldError(join_path(path, "filterTimeout"),
                               "forbidden: DRASchedulingFilterTimeout feature gate is disabled"))
    bt = a["bindingTimeout"]
    if binding_conditions(features):
        if bt is not None and parse_duration(bt) < 1:
            errs.append(FieldError(join_path(path, "bindingTimeout"),
                                   "must be at least 1 second", bt))
    elif bt is not None:
        errs.append(FieldError(join_path(path, "bindingTimeout"),
                               "forbidden: DRADeviceBindingConditions or "
                               "DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errs


def _validate_coscheduling(path: str, a: dict[str, Any]) -> list[FieldError]:
    """scheduler-plugins' ValidateCoschedulingArgs, with its words."""
    errs = []
    for key in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
        if a[key] < 0:
            errs.append(FieldError(join_path(path, key), "must be greater than 0", a[key]))
    pct = a["podGroupRejectPercentage"]
    if pct < 0 or pct > 100:
        errs.append(FieldError(join_path(path, "podGroupRejectPercentage"),
                               "must be between 0 and 100", pct))
    return errs


VALIDATORS: dict[str, Callable[[str, dict[str, Any]], list[FieldError]]] = {
    "Coscheduling": _validate_coscheduling,
    "DefaultPreemption": _validate_default_preemption,
    "InterPodAffinity": _validate_inter_pod_affinity,
    "NodeAffinity": _validate_node_affinity,
    "NodeResourcesBalancedAllocation": _validate_balanced_allocation,
    "NodeResourcesFit": _validate_fit,
    "PodTopologySpread": _validate_pod_topology_spread,
}
# validators whose rules depend on the run's feature gates
GATED_VALIDATORS: dict[str, Callable[[str, dict[str, Any], FeatureGates | None],
                                     list[FieldError]]] = {
    "DynamicResources": _validate_dynamic_resources,
    "VolumeBinding": _validate_volume_binding,
}


def validate_args(plugin: str, args: dict[str, Any], path: str,
                  features: FeatureGates | None = None) -> list[FieldError]:
    """Upstream's Validate<Plugin>Args on defaulted args.

    ``path`` is the args' field path, e.g. ``profiles[0].pluginConfig[1].args``;
    ``features``: the run's gates (default: the default release's).
    """
    gated = GATED_VALIDATORS.get(plugin)
    if gated is not None:
        return gated(path, args, features)
    fn = VALIDATORS.get(plugin)
    return fn(path, args) if fn else []
