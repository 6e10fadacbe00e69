"""Out-of-tree plugins: found through the ``kubesched.plugins`` entry-point group of
installed packages, or named on the command line as ``module:Class`` or
``path/to/file.py:Class``; profiles then enable them by their ``name`` like any in-tree one."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path

from kubesched.errors import InputError
from kubesched.framework.interface import EXTENSION_POINTS, Plugin
from kubesched.plugins.registry import in_tree_registry

ENTRY_POINT_GROUP = "kubesched.plugins"


def load_plugin_class(spec: str, origin: str = "--plugin") -> type[Plugin]:
    """The class ``spec`` names (``module:Class`` or ``file.py:Class``)."""
    target, sep, cls_name = spec.rpartition(":")
    if not sep or not target or not cls_name:
        raise InputError("must be MODULE:CLASS or FILE.py:CLASS", field=origin, value=spec)
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise InputError("no such file", field=origin, value=spec)
            mod_name = f"kubesched_plugin_{abs(hash(path.resolve()))}"
            module_spec = importlib.util.spec_from_file_location(mod_name, path)
            if module_spec is None or module_spec.loader is None:
                raise InputError("cannot be imported", field=origin, value=spec)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[mod_name] = module  # dataclasses and pickling look modules up
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except InputError:
        raise
    except Exception as e:  # the plugin's own module failed: say so, no traceback
        raise InputError(f"importing it failed: {type(e).__name__}: {e}", field=origin,
                         value=spec) from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise InputError(f"{target} has no {cls_name}", field=origin, value=spec)
    return check_plugin_class(cls, origin, spec)


def check_plugin_class(cls: object, origin: str, spec: str) -> type[Plugin]:
    if not isinstance(cls, type) or not issubclass(cls, Plugin):
        raise InputError("is not a plugin class (one deriving from kubesched.framework's "
                         "extension points)", field=origin, value=spec)
    if not any(issubclass(cls, point) for point in EXTENSION_POINTS.values()):
        raise InputError("implements no extension point", field=origin, value=spec)
    if not cls.name:
        raise InputError("has no name (a class attribute `name`)", field=origin, value=spec)
    return cls


def out_of_tree_plugins(specs: Iterable[str] = (), *, use_entry_points: bool = True
                        ) -> dict[str, type[Plugin]]:
    """The out-of-tree plugins by name: installed entry points, then ``specs``; a name
    already taken (in-tree, or twice) is an error."""
    found: dict[str, tuple[type[Plugin], str]] = {}
    taken = in_tree_registry()

    def add(cls: type[Plugin], origin: str) -> None:
        if cls.name in taken:
            raise InputError(f'plugin name "{cls.name}" is taken by an in-tree plugin',
                             field=origin)
        if cls.name in found and found[cls.name][0] is not cls:
            raise InputError(f'plugin name "{cls.name}" is registered twice (also by '
                             f"{found[cls.name][1]})", field=origin)
        found[cls.name] = (cls, origin)

    if use_entry_points:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            origin = f"entry point {ep.name} ({ep.value})"
            try:
                obj = ep.load()
            except Exception as e:
                raise InputError(f"loading it failed: {type(e).__name__}: {e}",
                                 field=origin) from None
            add(check_plugin_class(obj, origin, ep.value), origin)
    for spec in specs:
        add(load_plugin_class(spec), f"--plugin {spec}")
    return {name: cls for name, (cls, _o) in found.items()}
