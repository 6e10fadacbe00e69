"""KubeSchedulerConfiguration v1 as kubesched holds it after loading: defaulted and validated.

Field names follow upstream's Go/YAML names in snake_case; the in-tree plugins' args are
the dataclasses of :mod:`kubesched.config.plugin_args`, other plugins' plain dicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubesched.config.features import FeatureGates
from kubesched.errors import InputError

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Extension points in upstream's YAML spelling, in the order of the v1 ``Plugins`` type.
EXTENSION_POINTS: tuple[str, ...] = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
MULTI_POINT = "multiPoint"
ALL_PLUGIN_SETS: tuple[str, ...] = (*EXTENSION_POINTS, MULTI_POINT)

# camelCase extension point -> attribute name on Plugins
_ATTR = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "multiPoint": "multi_point",
}


@dataclass(slots=True)
class PluginRef:
    """One entry of a PluginSet. ``weight`` 0 means "not set" (upstream's nil *int32)."""

    name: str
    weight: int = 0


@dataclass(slots=True)
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)

    def enabled_names(self) -> list[str]:
        return [p.name for p in self.enabled]

    def disabled_names(self) -> list[str]:
        return [p.name for p in self.disabled]


@dataclass(slots=True)
class Plugins:
    """One PluginSet per extension point, plus multiPoint (after upstream's mergePlugins)."""

    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)

    def point(self, name: str) -> PluginSet:
        """The PluginSet of an extension point named as in YAML (``"score"``, ``"multiPoint"``)."""
        try:
            plugin_set: PluginSet = getattr(self, _ATTR[name])
            return plugin_set
        except KeyError:
            raise KeyError(f"unknown extension point {name!r}") from None

    def set_point(self, name: str, value: PluginSet) -> None:
        setattr(self, _ATTR[name], value)

    def items(self) -> Iterator[tuple[str, PluginSet]]:
        """(camelCase name, PluginSet) for every extension point, multiPoint last."""
        for name in ALL_PLUGIN_SETS:
            yield name, self.point(name)

    def enabled_names(self) -> list[str]:
        """Every plugin enabled at some point (multiPoint included), sorted, no duplicates.

        Upstream's ``pluginsNames``: the plugins that get default args and are instantiated.
        """
        names: set[str] = set()
        for _, ps in self.items():
            names.update(p.name for p in ps.enabled)
        return sorted(names)


@dataclass(slots=True)
class Profile:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = field(default_factory=Plugins)
    # Plugin name -> defaulted args: the plugin's ``plugin_args`` dataclass. Args of plugins
    # without an upstream Args type (out-of-tree) are kept as given (a dict).
    plugin_config: dict[str, Any] = field(default_factory=dict)
    # The profile's own ``plugins`` before the merge over the defaults (None: none given),
    # to merge again when the feature gates add default plugins.
    custom_plugins: Plugins | None = field(default=None, compare=False, repr=False)
    # Where this profile came from, for error messages (not part of the configuration).
    index: int = field(default=0, compare=False, repr=False)
    source: str = field(default="<config>", compare=False, repr=False)

    @property
    def field_path(self) -> str:
        return f"profiles[{self.index}]"


def _default_leader_election() -> dict[str, Any]:
    return {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }


def _default_client_connection() -> dict[str, Any]:
    return {
        "kubeconfig": "",
        "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 50.0,
        "burst": 100,
    }


@dataclass(slots=True)
class SchedulerConfiguration:
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[Profile] = field(default_factory=list)
    leader_election: dict[str, Any] = field(default_factory=_default_leader_election)
    client_connection: dict[str, Any] = field(default_factory=_default_client_connection)
    extenders: list[dict[str, Any]] = field(default_factory=list)
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    delay_cache_until_active: bool = False
    # Not a KubeSchedulerConfiguration field (upstream has none either): the release and
    # gates chosen by --kubernetes-version / --feature-gates, which the whole core reads.
    features: FeatureGates = field(default_factory=FeatureGates)
    # Nor is this: out-of-tree plugin classes by name (--plugin, entry points), which the
    # profiles enable like in-tree ones.
    out_of_tree: dict[str, type] = field(default_factory=dict)
    source: str = field(default="<config>", compare=False, repr=False)

    @property
    def kubernetes_version(self) -> str:
        return self.features.version

    def unused_out_of_tree(self) -> list[str]:
        """Out-of-tree plugins no profile enables at any extension point."""
        enabled = {n for p in self.profiles for n in p.plugins.enabled_names()}
        return sorted(n for n in self.out_of_tree if n not in enabled)

    def profile(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None

    def profile_percentage(self, profile: Profile) -> int:
        """The percentageOfNodesToScore that applies to ``profile`` (its own, else global)."""
        if profile.percentage_of_nodes_to_score is not None:
            return profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score


# ------------------------------------------------------------------ field errors

_NO_VALUE = object()


@dataclass(slots=True)
class FieldError:
    """One validation problem, as upstream's field.Error: path, message, bad value."""

    field: str
    message: str
    value: Any = _NO_VALUE

    def to_input_error(self, source: str) -> InputError:
        value = None if self.value is _NO_VALUE else self.value
        return InputError(self.message, file=source, obj=KIND, field=self.field or None,
                          value=value)

    def render(self) -> str:
        if self.value is _NO_VALUE:
            return f"{self.field}: {self.message}"
        return f"{self.field}: {self.message} (value: {self.value!r})"


def raise_field_errors(errors: list[FieldError], source: str) -> None:
    """Raise the first error as an InputError (naming how many more there were)."""
    if not errors:
        return
    first = errors[0]
    if len(errors) == 1:
        raise first.to_input_error(source)
    message = first.message
    if first.value is not _NO_VALUE:
        message += f" (value: {first.value!r})"
    rest = "; ".join(e.render() for e in errors[1:4])
    message += f"; and {len(errors) - 1} more: {rest}{'; …' if len(errors) > 4 else ''}"
    raise InputError(message, file=source, obj=KIND, field=first.field or None)


def join_path(base: str, child: str | int) -> str:
    """Upstream's field.Path: ``a.b``, ``a[0]``."""
    if isinstance(child, int):
        return f"{base}[{child}]"
    return f"{base}.{child}" if base else child
