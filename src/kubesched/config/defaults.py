"""Default plugins, upstream's plugin-set merging, and the framework's MultiPoint expansion.

Upstream (v1.35): ``pkg/scheduler/apis/config/v1/default_plugins.go`` (getDefaultPlugins,
mergePlugins, mergePluginSet) and ``pkg/scheduler/framework/runtime/framework.go``
(NewFramework: updatePluginList, expandMultiPointPlugins, getScoreWeights).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from kubesched.config.features import DEFAULT_FEATURE_GATES, FeatureGates
from kubesched.config.types import (
    ALL_PLUGIN_SETS,
    KIND,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from kubesched.errors import InputError
from kubesched.releases import version_tuple

GANG_SCHEDULING = "GangScheduling"

# v1.35's getDefaultPlugins, all through MultiPoint, with Score weights, after
# applyFeatureGates: DynamicResources right before DefaultPreemption (the
# DynamicResourceAllocation gate is GA and locked on in v1.35), so that PostFilter first
# deallocates an idle claim rather than evicting a pod. Its weight 2 is upstream's
# (the plugins' AGENTS.md; its Score, #134711, is in v1.35).
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

# Plugins removed from the v1 API: naming them in an extension point or pluginConfig is an error.
INVALID_V1_PLUGINS: tuple[str, ...] = ("AzureDiskLimits", "CinderLimits", "EBSLimits",
                                       "GCEPDLimits")

# Go's math.MaxInt64 (fwk.MaxTotalScore) and fwk.MaxNodeScore.
MAX_TOTAL_SCORE = (1 << 63) - 1
MAX_NODE_SCORE = 100


def gang_scheduling_enabled(features: FeatureGates) -> bool:
    """Whether the default profile has GangScheduling: upstream's applyFeatureGates adds it
    under the GangScheduling gate in v1.35 and v1.36, under GenericWorkload from v1.37 (where
    the GangScheduling gate is gone)."""
    if version_tuple(features.version) >= (1, 37):
        return features.enabled("GenericWorkload")
    return features.enabled("GangScheduling")


def default_plugins(features: FeatureGates | None = None) -> Plugins:
    """A fresh copy of the default Plugins (everything in multiPoint), after upstream's
    ``applyFeatureGates``: NodeDeclaredFeatures is appended when its gate is on (beta-on
    from 1.36, GA from 1.37), GangScheduling when its gate is (off by default)."""
    gates = features if features is not None else DEFAULT_FEATURE_GATES
    p = Plugins()
    p.multi_point = PluginSet(enabled=[PluginRef(n, w) for n, w in DEFAULT_MULTI_POINT])
    if gates.enabled("NodeDeclaredFeatures"):
        p.multi_point.enabled.append(PluginRef("NodeDeclaredFeatures", 0))
    if gang_scheduling_enabled(gates):
        p.multi_point.enabled.append(PluginRef(GANG_SCHEDULING))
    return p


def gated_profile(profile: Profile, features: FeatureGates) -> Profile:
    """``profile`` with its plugins merged again over the defaults of ``features`` (the
    configuration is read before the flags choose the release and gates)."""
    if not gang_scheduling_enabled(features):
        return profile
    return dataclasses.replace(profile,
                               plugins=merge_plugins(default_plugins(features),
                                                     profile.custom_plugins))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream's mergePluginSet.

    - ``disabled`` keeps the custom disabled names, then the default's disabled names; a
      disabled name (or ``*``) removes that default plugin;
    - a custom enabled plugin that names a default plugin replaces it in place (so a weight can
      be changed without reordering);
    - the other custom enabled plugins follow the defaults, in their order (duplicates are kept:
      building the framework rejects them).
    """
    disabled = [PluginRef(p.name) for p in custom.disabled]
    disabled += [PluginRef(p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_by_name: dict[str, tuple[int, PluginRef]] = {
        p.name: (i, p) for i, p in enumerate(custom.enabled)
    }
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for d in default.enabled:
            if d.name in disabled_names:
                continue
            if d.name in custom_by_name:
                i, c = custom_by_name[d.name]
                replaced.add(i)
                d = c
            enabled.append(PluginRef(d.name, d.weight))
    for i, c in enumerate(custom.enabled):
        if i not in replaced:
            enabled.append(PluginRef(c.name, c.weight))
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Upstream's mergePlugins: merge every extension point (and multiPoint) separately."""
    if custom is None:
        return default
    out = Plugins()
    for name in ALL_PLUGIN_SETS:
        out.set_point(name, merge_plugin_set(default.point(name), custom.point(name)))
    return out


# ------------------------------------------------------------------ expansion

# NewFramework's getExtensionPoints order, and the Go interface name of each point.
_FRAMEWORK_ORDER: tuple[str, ...] = (
    "preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
    "postBind", "permit", "preEnqueue", "queueSort",
)
PLUGIN_TYPE_NAMES: dict[str, str] = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}


def expand_plugins(
    profile: Profile,
    implements: Callable[[str, str], bool],
    *,
    known: Callable[[str], bool] | None = None,
    check_required: bool = True,
) -> dict[str, list[tuple[str, int]]]:
    """The plugins the framework runs at each extension point, in order, as upstream builds them.

    ``implements(plugin, point)`` says whether a plugin implements an extension point (camelCase
    point names as in YAML). Returns ``{point: [(plugin, weight), …]}`` for every extension point
    except multiPoint; the weight is the Score weight for ``"score"`` (configured weight, a
    weight in ``score.enabled`` taking precedence over multiPoint's, 0 → 1) and 0 elsewhere.

    Per point: the plugins explicitly enabled there (each must implement it, no duplicates);
    then, unless the point disables ``"*"``, multiPoint is expanded into it: multiPoint plugins
    that implement the point and are not disabled there are added — those also enabled
    explicitly at the point ("overrides") come first in their explicit order, then the other
    multiPoint plugins in multiPoint order, then the remaining explicit plugins.

    ``known(plugin)``, when given, says whether a plugin exists in the registry (upstream's
    "does not exist" errors). With ``check_required`` a profile must end up with exactly one
    queueSort plugin and at least one bind plugin. Violations raise InputError.
    """
    plugins = profile.plugins
    base = f"{profile.field_path}.plugins"

    def fail(message: str, field: str, value: object = None) -> InputError:
        return InputError(message, file=profile.source, obj=KIND, field=field, value=value)

    result: dict[str, list[str]] = {}
    for point in _FRAMEWORK_ORDER:
        ptype = PLUGIN_TYPE_NAMES[point]
        names: list[str] = []
        for i, ref in enumerate(plugins.point(point).enabled):
            field = f"{base}.{point}.enabled[{i}]"
            if known is not None and not known(ref.name):
                raise fail(f'{ptype} "{ref.name}" does not exist', field, ref.name)
            if not implements(ref.name, point):
                raise fail(f'plugin "{ref.name}" does not extend {ptype} plugin', field, ref.name)
            if ref.name in names:
                raise fail(f'plugin "{ref.name}" already registered as "{ptype}"', field,
                           ref.name)
            names.append(ref.name)
        result[point] = names

    multi = plugins.multi_point.enabled
    if multi:
        for point in _FRAMEWORK_ORDER:
            ptype = PLUGIN_TYPE_NAMES[point]
            explicit = result[point]
            disabled = set(plugins.point(point).disabled_names())
            if "*" in disabled:
                continue
            overrides: set[str] = set()
            from_multi: list[str] = []
            for i, ref in enumerate(multi):
                field = f"{base}.multiPoint.enabled[{i}]"
                if known is not None and not known(ref.name):
                    raise fail(f'{ptype} "{ref.name}" does not exist', field, ref.name)
                if not implements(ref.name, point):
                    continue
                if ref.name in disabled:
                    continue
                if ref.name in explicit:
                    overrides.add(ref.name)
                    continue
                if ref.name in from_multi:
                    raise fail(f'plugin "{ref.name}" already registered as "{ptype}"', field,
                               ref.name)
                from_multi.append(ref.name)
            result[point] = ([n for n in explicit if n in overrides] + from_multi
                             + [n for n in explicit if n not in overrides])

    if check_required:
        if len(result["queueSort"]) != 1:
            raise fail("only one queue sort plugin required for profile with scheduler name "
                       f'"{profile.scheduler_name}", but got {len(result["queueSort"])}',
                       f"{base}.queueSort", result["queueSort"])
        if not result["bind"]:
            raise fail("at least one bind plugin is needed for profile with scheduler name "
                       f'"{profile.scheduler_name}"', f"{base}.bind")

    weights = score_weights(profile, implements)
    out: dict[str, list[tuple[str, int]]] = {}
    for point in _FRAMEWORK_ORDER:
        if point == "score":
            out[point] = [(n, weights[n]) for n in result[point]]
        else:
            out[point] = [(n, 0) for n in result[point]]
    # keep the YAML order of extension points in the returned dict
    return {p: out[p] for p in PLUGIN_TYPE_NAMES}


def score_weights(profile: Profile, implements: Callable[[str, str], bool]) -> dict[str, int]:
    """Upstream's getScoreWeights: Score plugin name -> weight.

    Walks ``score.enabled`` then ``multiPoint.enabled``; the first weight seen for a plugin
    wins (so the score set overrides multiPoint); weight 0 (unset) becomes 1. Raises InputError
    if the weights could overflow the int64 total score.
    """
    weights: dict[str, int] = {}
    total = 0
    refs = [*profile.plugins.score.enabled, *profile.plugins.multi_point.enabled]
    for ref in refs:
        if not implements(ref.name, "score") or ref.name in weights:
            continue
        w = ref.weight or 1
        weights[ref.name] = w
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise InputError("total score of Score plugins could overflow", file=profile.source,
                             obj=KIND, field=f"{profile.field_path}.plugins.score")
        total += w * MAX_NODE_SCORE
    return weights
