"""Load a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as upstream does:
strict decoding, v1 defaulting, then ValidateKubeSchedulerConfiguration.

Upstream: ``cmd/kube-scheduler/app/options/configfile.go`` (strict codec),
``pkg/scheduler/apis/config/v1/defaults.go`` and ``.../validation/validation.go``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.scenario import yaml_problem
from kubesched.api.validation import qualified_name_errors
from kubesched.config import args as argsmod
from kubesched.config.args import (
    AnyValue,
    Bool,
    DecodeError,
    Duration,
    Float,
    Int,
    ListOf,
    Obj,
    Str,
    parse_duration,
)
from kubesched.config.defaults import INVALID_V1_PLUGINS, default_plugins, merge_plugins
from kubesched.config.features import FeatureGates
from kubesched.config.plugin_args import args_to_dict, build_args
from kubesched.config.types import (
    ALL_PLUGIN_SETS,
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    FieldError,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    SchedulerConfiguration,
    join_path,
    raise_field_errors,
)
from kubesched.errors import InputError

try:  # pragma: no cover - depends on how PyYAML was built
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]  # CSafeLoader's twin

# ------------------------------------------------------------------ schema (v1 types)

_PLUGIN = Obj({"name": Str(), "weight": Int(32)})
_PLUGIN_SET = Obj({"enabled": ListOf(_PLUGIN), "disabled": ListOf(_PLUGIN)})
_PLUGINS = Obj({name: _PLUGIN_SET for name in ALL_PLUGIN_SETS})
_PLUGIN_CONFIG = Obj({"name": Str(), "args": AnyValue()})
_PROFILE = Obj({
    "schedulerName": Str(),
    "percentageOfNodesToScore": Int(32),
    "plugins": _PLUGINS,
    "pluginConfig": ListOf(_PLUGIN_CONFIG),
})
_LEADER_ELECTION = Obj({
    "leaderElect": Bool(),
    "leaseDuration": Duration(),
    "renewDeadline": Duration(),
    "retryPeriod": Duration(),
    "resourceLock": Str(),
    "resourceName": Str(),
    "resourceNamespace": Str(),
})
_CLIENT_CONNECTION = Obj({
    "kubeconfig": Str(),
    "acceptContentTypes": Str(),
    "contentType": Str(),
    "qps": Float(),
    "burst": Int(32),
})
_EXTENDER = Obj({
    "urlPrefix": Str(),
    "filterVerb": Str(),
    "preemptVerb": Str(),
    "prioritizeVerb": Str(),
    "weight": Int(64),
    "bindVerb": Str(),
    "enableHTTPS": Bool(),
    "tlsConfig": Obj({
        "insecure": Bool(),
        "serverName": Str(),
        "certFile": Str(),
        "keyFile": Str(),
        "caFile": Str(),
        "certData": Str(),
        "keyData": Str(),
        "caData": Str(),
    }),
    "httpTimeout": Duration(),
    "nodeCacheCapable": Bool(),
    "managedResources": ListOf(Obj({"name": Str(), "ignoredByScheduler": Bool()})),
    "ignorable": Bool(),
})
_CONFIG = Obj({
    "apiVersion": Str(),
    "kind": Str(),
    "parallelism": Int(32),
    "leaderElection": _LEADER_ELECTION,
    "clientConnection": _CLIENT_CONNECTION,
    "enableProfiling": Bool(),
    "enableContentionProfiling": Bool(),
    "percentageOfNodesToScore": Int(32),
    "podInitialBackoffSeconds": Int(64),
    "podMaxBackoffSeconds": Int(64),
    "profiles": ListOf(_PROFILE),
    "extenders": ListOf(_EXTENDER),
    "delayCacheUntilActive": Bool(),
})

# Extension points ValidateKubeSchedulerConfiguration checks for removed plugins (no multiPoint).
_VALIDATED_STAGES = EXTENSION_POINTS


# ------------------------------------------------------------------ public API


def default_config(features: FeatureGates | None = None) -> SchedulerConfiguration:
    """The configuration kube-scheduler runs with when given none (of the release and gates
    ``features`` names; default: the default release)."""
    return load_config({"apiVersion": API_VERSION, "kind": KIND}, source="<default>",
                       features=features)


def load_config(doc: dict[str, Any], source: str = "<config>",
                features: FeatureGates | None = None) -> SchedulerConfiguration:
    """Decode (strictly), default and validate one KubeSchedulerConfiguration document.

    Raises InputError naming ``source``, the field path (upstream's style, e.g.
    ``profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight``) and the value.
    """
    if not isinstance(doc, dict):
        raise InputError("a KubeSchedulerConfiguration must be a mapping", file=source, obj=KIND)
    api_version = doc.get("apiVersion")
    if api_version != API_VERSION:
        raise InputError(f"unsupported apiVersion (kubesched reads {API_VERSION})", file=source,
                         obj=KIND, field="apiVersion", value=api_version)
    if doc.get("kind") != KIND:
        raise InputError(f"kind must be {KIND}", file=source, obj=KIND, field="kind",
                         value=doc.get("kind"))
    try:
        raw = _CONFIG.decode(doc, "")
        cfg, configs = _build(raw, source, features)
    except DecodeError as e:
        raise e.error.to_input_error(source) from None
    raise_field_errors(_validate(cfg, configs), source)
    _apply_extender_ignored_resources(cfg, source)
    return cfg


def run_config(config_path: str | Path | None, embedded: dict[str, Any] | None,
               embedded_source: str | None, features: FeatureGates,
               plugins: dict[str, type] | None = None) -> SchedulerConfiguration:
    """The configuration one run uses: the file ``--config`` names, else the scenario's own
    (``embedded``), else the default — deciding as ``features``, with ``plugins`` (the
    out-of-tree plugin classes by name) registered."""
    if config_path:
        config = load_config_file(config_path, features)
    elif embedded is not None:
        config = load_config(embedded, embedded_source or "<scenario>", features)
    else:
        config = default_config(features)
    config.features = features
    config.out_of_tree = plugins or {}
    return config


def _apply_extender_ignored_resources(cfg: SchedulerConfiguration, source: str) -> None:
    """buildExtenders: resources an extender manages with ``ignoredByScheduler`` replace
    NodeResourcesFit's ``ignoredResources`` in every profile (the extender takes over
    checking them); a profile without NodeResourcesFit args is refused, as upstream does."""
    ignored = [r["name"] for ext in cfg.extenders for r in ext.get("managedResources", [])
               if r.get("ignoredByScheduler")]
    if not ignored:
        return
    for prof in cfg.profiles:
        args = prof.plugin_config.get("NodeResourcesFit")
        if args is None:
            raise InputError("can't find NodeResourcesFitArgs in plugin config", file=source,
                             obj=KIND, field=f"{prof.field_path}.pluginConfig")
        args.ignored_resources = list(ignored)


def load_config_file(path: str | Path, features: FeatureGates | None = None
                     ) -> SchedulerConfiguration:
    """Load a KubeSchedulerConfiguration from a YAML (or JSON) file.

    The file may hold other documents too (a scenario); exactly one must be a
    KubeSchedulerConfiguration.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", file=source) from None
    except UnicodeDecodeError:
        raise InputError("file is not UTF-8 text", file=source) from None
    docs = parse_yaml_documents(text, source)
    if len(docs) == 1:
        return load_config(docs[0], source, features)
    found = [d for d in docs if isinstance(d, dict) and d.get("kind") == KIND]
    if len(found) != 1:
        raise InputError(f"expected one {KIND} document, found {len(found)}", file=source)
    return load_config(found[0], source, features)


def parse_yaml_documents(text: str, source: str) -> list[Any]:
    """All non-empty YAML documents of ``text``; duplicate mapping keys are errors (as in
    upstream's strict decoding)."""
    try:
        return [d for d in yaml.load_all(text, Loader=_StrictLoader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        if mark is not None:
            where = f" (line {mark.line + 1}, column {mark.column + 1})"
            problem = " ".join(str(getattr(e, "problem", None) or e).split())
        else:
            line, problem = yaml_problem(e, text)
            where = f" (line {line})" if line is not None else ""
        raise InputError(f"invalid YAML{where}: {problem}", file=source) from None


# ------------------------------------------------------------------ YAML


class _StrictLoader(_BaseLoader):
    pass


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> Any:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            dup = key in seen
            seen.add(key)
        except TypeError:
            continue
        if dup:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"duplicate key {key!r}", key_node.start_mark)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# ------------------------------------------------------------------ decode + default


def _plugin_set(raw: dict[str, Any] | None) -> PluginSet:
    if not raw:
        return PluginSet()
    return PluginSet(
        enabled=[PluginRef(p.get("name", ""), p.get("weight", 0)) for p in raw.get("enabled", [])],
        disabled=[PluginRef(p.get("name", ""), p.get("weight", 0))
                  for p in raw.get("disabled", [])],
    )


class _PluginConfigEntry:
    """One pluginConfig entry as given (decoded and defaulted), for validation."""

    __slots__ = ("args", "name", "path")

    def __init__(self, name: str, args: dict[str, Any], path: str) -> None:
        self.name = name
        self.args = args
        self.path = path


def _build(raw: dict[str, Any], source: str, features: FeatureGates | None = None
           ) -> tuple[SchedulerConfiguration, list[list[_PluginConfigEntry]]]:
    cfg = SchedulerConfiguration(source=source)
    if features is not None:
        cfg.features = features
    cfg.parallelism = raw.get("parallelism", 16)

    raw_profiles = raw.get("profiles") or [{}]
    all_entries: list[list[_PluginConfigEntry]] = []
    for i, rp in enumerate(raw_profiles):
        name = rp.get("schedulerName")
        if name is None and len(raw_profiles) == 1:
            name = DEFAULT_SCHEDULER_NAME
        custom: Plugins | None = None
        if "plugins" in rp:
            custom = Plugins()
            for point in ALL_PLUGIN_SETS:
                custom.set_point(point, _plugin_set(rp["plugins"].get(point)))
        plugins = merge_plugins(default_plugins(cfg.features), custom)

        entries: list[_PluginConfigEntry] = []
        plugin_config: dict[str, Any] = {}
        for j, pc in enumerate(rp.get("pluginConfig", [])):
            pname = pc.get("name", "")
            path = f"profiles[{i}].pluginConfig[{j}].args"
            args = argsmod.decode_args(pname, pc.get("args"), path)
            built: Any = args
            if pname in argsmod.ARGS_PLUGINS:
                built = build_args(pname, args, cfg.features)
                args = args_to_dict(built)  # what validation reads
            entries.append(_PluginConfigEntry(pname, args, path))
            plugin_config.setdefault(pname, built)
        for pname in plugins.enabled_names():
            if pname in argsmod.ARGS_PLUGINS and pname not in plugin_config:
                plugin_config[pname] = build_args(pname, {}, cfg.features)
        all_entries.append(entries)
        cfg.profiles.append(Profile(
            scheduler_name=name if name is not None else "",
            percentage_of_nodes_to_score=rp.get("percentageOfNodesToScore"),
            plugins=plugins,
            plugin_config=plugin_config,
            custom_plugins=custom,
            index=i,
            source=source,
        ))

    cfg.percentage_of_nodes_to_score = raw.get("percentageOfNodesToScore", 0)

    le = dict(cfg.leader_election)
    given_le = raw.get("leaderElection", {})
    for key in ("resourceLock", "resourceName", "resourceNamespace"):
        if given_le.get(key):
            le[key] = given_le[key]
    if "leaderElect" in given_le:
        le["leaderElect"] = given_le["leaderElect"]
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if key in given_le and parse_duration(given_le[key]) != 0:
            le[key] = given_le[key]
    cfg.leader_election = le

    cc = dict(cfg.client_connection)
    given_cc = raw.get("clientConnection", {})
    for key in ("kubeconfig", "acceptContentTypes"):
        if key in given_cc:
            cc[key] = given_cc[key]
    for key in ("contentType", "qps", "burst"):
        if given_cc.get(key):
            cc[key] = given_cc[key]
    cc["qps"] = float(cc["qps"])
    cfg.client_connection = cc

    cfg.pod_initial_backoff_seconds = raw.get("podInitialBackoffSeconds", 1)
    cfg.pod_max_backoff_seconds = raw.get("podMaxBackoffSeconds", 10)
    cfg.enable_profiling = raw.get("enableProfiling", True)
    cfg.enable_contention_profiling = raw.get("enableContentionProfiling", cfg.enable_profiling)
    cfg.delay_cache_until_active = raw.get("delayCacheUntilActive", False)
    cfg.extenders = raw.get("extenders", [])
    return cfg, all_entries


# ------------------------------------------------------------------ validation


def _validate(cfg: SchedulerConfiguration, entries: Sequence[list[_PluginConfigEntry]]
              ) -> list[FieldError]:
    errs: list[FieldError] = []
    cc = cfg.client_connection
    if cc["burst"] < 0:
        errs.append(FieldError("clientConnection.burst", "must be non-negative", cc["burst"]))
    le = cfg.leader_election
    if le["leaderElect"]:
        lease, renew, retry = (parse_duration(le[k]) for k in
                               ("leaseDuration", "renewDeadline", "retryPeriod"))
        for key, d in (("leaseDuration", lease), ("renewDeadline", renew),
                       ("retryPeriod", retry)):
            if d <= 0:
                errs.append(FieldError(f"leaderElection.{key}", "must be greater than zero",
                                       le[key]))
        if lease <= renew:
            errs.append(FieldError("leaderElection.leaseDuration",
                                   "LeaseDuration must be greater than RenewDeadline",
                                   le["renewDeadline"]))
        if le["resourceLock"] != "leases":
            errs.append(FieldError("leaderElection.resourceLock",
                                   'resourceLock value must be "leases"', le["resourceLock"]))

    if cfg.parallelism <= 0:
        errs.append(FieldError("parallelism", "should be an integer value greater than zero",
                               cfg.parallelism))

    seen_names: dict[str, int] = {}
    for i, prof in enumerate(cfg.profiles):
        path = f"profiles[{i}]"
        errs.extend(_validate_profile(path, prof, entries[i], cfg.features))
        if prof.scheduler_name in seen_names:
            other = seen_names[prof.scheduler_name]
            errs.append(FieldError(f"{path}.schedulerName",
                                   f"duplicate value (also profiles[{other}].schedulerName)",
                                   prof.scheduler_name))
        else:
            seen_names[prof.scheduler_name] = i
    errs.extend(_validate_common_queue_sort(cfg.profiles, entries))

    pct = cfg.percentage_of_nodes_to_score
    if not 0 <= pct <= 100:
        errs.append(FieldError("percentageOfNodesToScore", "not in valid range [0-100]", pct))
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(FieldError("podInitialBackoffSeconds", "must be greater than 0",
                               cfg.pod_initial_backoff_seconds))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(FieldError("podMaxBackoffSeconds",
                               "must be greater than or equal to PodInitialBackoffSeconds",
                               cfg.pod_max_backoff_seconds))
    errs.extend(_validate_extenders(cfg.extenders))
    return errs


def _validate_profile(path: str, prof: Profile, entries: list[_PluginConfigEntry],
                      features: FeatureGates | None = None
                      ) -> list[FieldError]:
    errs: list[FieldError] = []
    if not prof.scheduler_name:
        errs.append(FieldError(f"{path}.schedulerName", "required value"))
    pct = prof.percentage_of_nodes_to_score
    if pct is not None and not 0 <= pct <= 100:
        errs.append(FieldError(f"{path}.percentageOfNodesToScore", "not in valid range [0-100]",
                               pct))
    invalid_msg = (f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is '
                   f'version "{API_VERSION}")')
    for stage in _VALIDATED_STAGES:
        for j, ref in enumerate(prof.plugins.point(stage).enabled):
            if ref.name in INVALID_V1_PLUGINS:
                errs.append(FieldError(f"{path}.plugins.{stage}.enabled[{j}]", invalid_msg,
                                       ref.name))
    enabled = set(prof.plugins.enabled_names())
    seen: set[str] = set()
    for j, entry in enumerate(entries):
        pc_path = f"{path}.pluginConfig[{j}]"
        if entry.name in seen:
            errs.append(FieldError(pc_path, "duplicate value", entry.name))
        seen.add(entry.name)
        if entry.name in INVALID_V1_PLUGINS:
            errs.append(FieldError(pc_path, invalid_msg, entry.name))
            continue
        # Upstream's validatePluginConfig keys NodeResourcesFit's validator as
        # "NodeResourcesFitArgs", so those args are only validated when the plugin is built
        # (NewFit), i.e. when NodeResourcesFit is enabled somewhere in the profile.
        if entry.name == "NodeResourcesFit" and entry.name not in enabled:
            continue
        errs.extend(argsmod.validate_args(entry.name, entry.args, entry.path, features))
    return errs


def _validate_common_queue_sort(profiles: list[Profile],
                                entries: Sequence[list[_PluginConfigEntry]]) -> list[FieldError]:
    errs: list[FieldError] = []
    if not profiles:
        return errs
    canon = profiles[0].plugins.queue_sort
    queue_sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(FieldError("profiles[0].plugins.queueSort.Enabled",
                               "only one queue sort plugin can be enabled", len(canon.enabled)))
    canon_args = None
    for e in entries[0]:
        if queue_sort_name and e.name == queue_sort_name:
            canon_args = e.args
    for i in range(1, len(profiles)):
        curr = profiles[i].plugins.queue_sort
        if curr != canon:
            errs.append(FieldError(f"profiles[{i}].plugins.queueSort",
                                   "must be the same for all profiles",
                                   {"enabled": curr.enabled_names(),
                                    "disabled": curr.disabled_names()}))
        for e in entries[i]:
            if e.name == queue_sort_name and e.args != canon_args:
                errs.append(FieldError(f"profiles[{i}].pluginConfig.args",
                                       "queueSort must be the same for all profiles", e.args))
    return errs


def _is_extended_resource_name(name: str) -> bool:
    # v1helper.IsExtendedResourceName: not native (has a domain that is not *kubernetes.io),
    # not a requests.* quota name, and "requests.<name>" is a qualified name.
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not qualified_name_errors("requests." + name)


def _is_http_url(url: str) -> bool:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not any(
        c.isspace() for c in url)


def _validate_extenders(extenders: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = join_path("extenders", i)
        url = ext.get("urlPrefix", "")
        if not _is_http_url(url):
            # upstream accepts any string and fails at the first call (docs/differences.md)
            errs.append(FieldError(f"{path}.urlPrefix",
                                   "must be an http:// or https:// URL with a host", url))
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(FieldError(f"{path}.weight", "must have a positive weight applied to it",
                                   ext.get("weight", 0)))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources", [])):
            p = f"{path}.managedResources[{j}].name"
            rname = res.get("name", "")
            msgs = qualified_name_errors(rname)
            errs.extend(FieldError(p, m, rname) for m in msgs)
            if not msgs and not _is_extended_resource_name(rname):
                errs.append(FieldError(p, "is an invalid extended resource name", rname))
            if rname in managed:
                errs.append(FieldError(p, "duplicate extender managed resource name", rname))
            managed.add(rname)
    if binders > 1:
        errs.append(FieldError("extenders", "only one extender can implement bind",
                               f"found {binders} extenders implementing bind"))
    return errs
