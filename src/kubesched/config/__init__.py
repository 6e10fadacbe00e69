"""KubeSchedulerConfiguration v1: load, defaults, validation, plugin args, MultiPoint expansion."""

from kubesched.config.args import (
    ARGS_PLUGINS,
    default_args,
    parse_duration,
)
from kubesched.config.defaults import (
    DEFAULT_MULTI_POINT,
    default_plugins,
    expand_plugins,
    merge_plugin_set,
    merge_plugins,
    score_weights,
)
from kubesched.config.load import (
    default_config,
    load_config,
    load_config_file,
    parse_yaml_documents,
    run_config,
)
from kubesched.config.plugin_args import (
    LEAST_ALLOCATED,
    LIST_DEFAULTING,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SYSTEM_DEFAULTING,
)
from kubesched.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    SchedulerConfiguration,
)

__all__ = [
    "API_VERSION",
    "ARGS_PLUGINS",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "LEAST_ALLOCATED",
    "LIST_DEFAULTING",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "SYSTEM_DEFAULTING",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "SchedulerConfiguration",
    "default_args",
    "default_config",
    "default_plugins",
    "expand_plugins",
    "load_config",
    "load_config_file",
    "merge_plugin_set",
    "merge_plugins",
    "parse_duration",
    "parse_yaml_documents",
    "run_config",
    "score_weights",
]
