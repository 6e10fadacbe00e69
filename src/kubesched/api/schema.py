"""The API server's structural checks, per upstream release: which apiVersions serve a kind,
which fields an object may have, and each field's JSON type.

The facts come from upstream's OpenAPI, as the maintained ``kubernetes-validate`` package ships
it for every release (its ``strict`` schemas: ``additionalProperties: false`` wherever the API
server's strict field validation rejects an unknown field). kubesched reads those files, not
that package's jsonschema-based validator: a scenario holds tens of thousands of objects, and a
schema compiled once into ``Shape`` trees is walked about a hundred times faster.

Kinds and fields that upstream's OpenAPI does not hold (scheduler-plugins' PodGroup, say) are
registered with ``register_kind`` / ``register_field`` by the code that reads them, so that
strict validation never refuses what kubesched itself supports.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from kubesched.api.samevalue import pod_spec_key, remember
from kubesched.api.unmodelled import api_gate
from kubesched.errors import InputError

_SCHEMA_PACKAGE = "kubernetes_validate"
_SCHEMA_DIR = "kubernetes-json-schema"
_GVK = "x-kubernetes-group-version-kind"
_PRESERVE = "x-kubernetes-preserve-unknown-fields"

# JSON types, as YAML hands them to Python
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str, _dt.datetime, _dt.date),  # YAML turns unquoted timestamps into datetimes
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}
_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string",
               "integer": "an integer", "number": "a number", "boolean": "true or false"}


@dataclass(slots=True)
class Shape:
    """One schema node, compiled: the JSON types allowed (empty: any), the known fields of an
    object, whether other fields are unknown (``closed``), and the shape of map values and
    list items."""

    types: tuple[str, ...] = ()
    props: dict[str, Shape] = field(default_factory=dict)
    closed: bool = False
    values: Shape | None = None  # additionalProperties as a schema: a map's values
    items: Shape | None = None
    nullable: bool = True
    bits: int = 0  # an integer's format (int32, int64): Go's decoding refuses the others



class ReleaseSchema:
    """One release's OpenAPI definitions, compiled lazily into Shapes."""

    def __init__(self, release: str, defs: Mapping[str, Any]) -> None:
        self.release = release
        self._defs = defs
        self._shapes: dict[str, Shape] = {}
        # (kind) -> {apiVersion: definition name}
        self.served: dict[str, dict[str, str]] = {}
        # (apiVersion, pod_spec_key) of the pod specs found clean (api.samevalue)
        self.clean_pod_specs: dict[Any, bool] = {}
        for name, d in defs.items():
            for gvk in d.get(_GVK, ()):
                group, version, kind = gvk.get("group", ""), gvk["version"], gvk["kind"]
                api_version = f"{group}/{version}" if group else version
                self.served.setdefault(kind, {})[api_version] = name

    def shape_of(self, kind: str, api_version: str) -> Shape | None:
        name = self.served.get(kind, {}).get(api_version)
        return None if name is None else self._compile_ref(name)

    def _compile_ref(self, name: str) -> Shape:
        shape = self._shapes.get(name)
        if shape is None:
            shape = Shape()
            self._shapes[name] = shape  # before compiling: definitions may refer to themselves
            _fill(shape, self._defs[name], self)
        return shape


def _fill(shape: Shape, node: Mapping[str, Any], schema: ReleaseSchema) -> None:
    ref = node.get("$ref")
    if ref is not None:
        target = schema._compile_ref(ref.rsplit("/", 1)[-1])
        shape.types, shape.props, shape.closed = target.types, target.props, target.closed
        shape.values, shape.items, shape.nullable = target.values, target.items, target.nullable
        shape.bits = target.bits
        return
    alternatives = node.get("oneOf") or node.get("anyOf")
    if alternatives:  # IntOrString, Quantity: the union of the alternatives' types
        types: set[str] = set()
        for alt in alternatives:
            t = alt.get("type")
            if t is None:
                return  # an alternative without a type: anything goes
            types.update([t] if isinstance(t, str) else t)
        shape.nullable = "null" in types
        shape.types = tuple(sorted(types - {"null"}))
        return
    t = node.get("type")
    if t is not None:
        ts = [t] if isinstance(t, str) else list(t)
        shape.nullable = "null" in ts
        shape.types = tuple(x for x in ts if x != "null")
        fmt = node.get("format")
        if shape.types == ("integer",) and fmt in ("int32", "int64"):
            shape.bits = int(fmt[3:])
    if node.get(_PRESERVE):
        return
    props = node.get("properties")
    if props:
        shape.props = {k: _compile_node(v, schema) for k, v in props.items()}
    extra = node.get("additionalProperties")
    if extra is False:
        shape.closed = True
    elif isinstance(extra, dict):
        shape.values = _compile_node(extra, schema)
    items = node.get("items")
    if isinstance(items, dict):
        shape.items = _compile_node(items, schema)


def _compile_node(node: Mapping[str, Any], schema: ReleaseSchema) -> Shape:
    ref = node.get("$ref")
    if ref is not None and len(node) <= 2:  # {"$ref", "description"}: share the definition
        return schema._compile_ref(ref.rsplit("/", 1)[-1])
    shape = Shape()
    _fill(shape, node, schema)
    return shape


# ---------------------------------------------------------------- releases


def _schema_folder() -> Traversable:
    """kubernetes-validate's folder of OpenAPI documents, found without importing the
    package (its ``__init__`` imports jsonschema, a tenth of a second at every command's
    start, for nothing kubesched uses)."""
    spec = importlib.util.find_spec(_SCHEMA_PACKAGE)
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        folder = Path(location) / _SCHEMA_DIR
        if folder.is_dir():
            return folder
    return resources.files(_SCHEMA_PACKAGE) / _SCHEMA_DIR  # (a zipped install, say)


def schema_releases() -> list[str]:
    """The releases whose OpenAPI is at hand ("1.35", …)."""
    base = _schema_folder()
    out = []
    for entry in base.iterdir():
        name = entry.name
        if name.startswith("v") and name.endswith("-local-strict"):
            out.append(".".join(name[1:].split("-")[0].split(".")[:2]))
    return sorted(out, key=lambda v: tuple(int(x) for x in v.split(".")))


@functools.lru_cache(maxsize=4)
def release_schema(release: str) -> ReleaseSchema:
    """The OpenAPI of upstream release ``release`` ("1.35"), with the registered kinds."""
    base = _schema_folder()
    folder = base / f"v{release}.0-local-strict"
    try:
        text = (folder / "_definitions.json").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no API schema for Kubernetes {release} (have: "
                         f"{', '.join(schema_releases())})") from None
    defs = dict(json.loads(text)["$defs"])
    schema = ReleaseSchema(release, defs)
    for reg in _REGISTERED_KINDS.values():
        if reg.releases is None or release in reg.releases:
            for api_version, node in reg.versions.items():
                name = f"kubesched.registered.{reg.kind}.{api_version}"
                defs[name] = node
                schema.served.setdefault(reg.kind, {})[api_version] = name
    for (kind, path), node in _REGISTERED_FIELDS.items():
        for api_version in schema.served.get(kind, {}):
            shape = schema.shape_of(kind, api_version)
            if shape is not None:
                _graft(shape, path.split("."), _compile_node(node, schema))
    return schema


def _graft(shape: Shape, path: list[str], leaf: Shape) -> None:
    head, rest = path[0], path[1:]
    if not rest:
        shape.props = {**shape.props, head: leaf}
        return
    child = shape.props.get(head)
    if child is None:
        child = Shape(types=("object",), closed=True)
        shape.props = {**shape.props, head: child}
    _graft(child.items if child.items is not None else child, rest, leaf)


# ---------------------------------------------------------------- registration


@dataclass(frozen=True)
class RegisteredKind:
    kind: str
    versions: dict[str, Mapping[str, Any]]  # apiVersion -> JSON schema (draft 2020-12 subset)
    releases: frozenset[str] | None  # the releases that serve it (None: every one)


_REGISTERED_KINDS: dict[str, RegisteredKind] = {}
_REGISTERED_FIELDS: dict[tuple[str, str], Mapping[str, Any]] = {}


def register_kind(kind: str, versions: Mapping[str, Mapping[str, Any]], *,
                  releases: frozenset[str] | None = None) -> None:
    """A kind upstream's OpenAPI lacks (a CRD kubesched reads), with a JSON schema per
    apiVersion. Registered before the first scenario is loaded."""
    _REGISTERED_KINDS[kind] = RegisteredKind(kind, dict(versions), releases)
    release_schema.cache_clear()


def register_field(kind: str, path: str, node: Mapping[str, Any]) -> None:
    """A field kubesched supports that the release's OpenAPI lacks (``spec.x.y``, dotted;
    a list in the path means its items)."""
    _REGISTERED_FIELDS[(kind, path)] = node
    release_schema.cache_clear()


# ---------------------------------------------------------------- checking


def check_document(doc: Mapping[str, Any], schema: ReleaseSchema) -> list[str] | None:
    """The unknown fields of ``doc`` (field paths, upstream's format), or None when its kind
    is not one upstream or a registration knows. A known kind at an apiVersion the release
    does not serve, or a field of the wrong JSON type, is bad input (``InputError``)."""
    served = _served_shape(doc, schema)
    if served is None:
        return None
    shape, api_version = served
    unknown: list[str] = []
    if _clean_document(doc, shape, schema, api_version):
        return unknown
    for key, value in doc.items():
        if key in ("apiVersion", "kind"):
            continue
        sub = shape.props.get(key)
        if sub is None:
            if shape.closed:
                unknown.append(key)
            continue
        _walk(value, sub, key, unknown)
    return unknown


def is_clean_document(doc: Mapping[str, Any], schema: ReleaseSchema) -> bool:
    """Whether ``check_document`` answers no unknown field, without raising — found without
    modifying ``doc`` (only the path that explains what is wrong does, zeroing bad values)."""
    try:
        served = _served_shape(doc, schema)
    except InputError:
        return False
    return served is not None and _clean_document(doc, served[0], schema, served[1])


def _served_shape(doc: Mapping[str, Any], schema: ReleaseSchema) -> tuple[Shape, str] | None:
    """The shape of ``doc``'s kind at its apiVersion, or None for a kind nobody registered;
    an apiVersion the release does not serve is an ``InputError``."""
    kind = doc.get("kind")
    if not isinstance(kind, str):
        return None
    versions = schema.served.get(kind)
    if not versions:
        return None
    api_version = doc.get("apiVersion")
    if api_version is None or api_version == "":
        raise InputError("is required", field="apiVersion", value=api_version)
    if not isinstance(api_version, str):  # (a list or a mapping is not even hashable)
        raise InputError("must be a string", field="apiVersion", value=_short(api_version))
    if api_version not in versions:
        served = ", ".join(sorted(versions))
        gate = api_gate(kind, api_version)
        behind = f", behind feature gate {gate}" if gate else ""
        raise InputError(f"Kubernetes {schema.release} does not serve {kind} at this "
                         f"apiVersion (served: {served}{behind})", field="apiVersion",
                         value=api_version)
    shape = schema.shape_of(kind, api_version)
    assert shape is not None
    return shape, api_version


def _clean_document(doc: Mapping[str, Any], shape: Shape, schema: ReleaseSchema,
                    api_version: str) -> bool:
    if doc.get("kind") == "Pod":
        return _clean_pod(doc, shape, schema, api_version)
    return _clean(doc, shape)


def _clean(value: Any, shape: Shape) -> bool:
    """Whether ``value`` has no unknown field and no wrong type: the fast pass, without
    field paths (the slow one, ``_walk``, runs only to say what is wrong)."""
    if value is None:
        return shape.nullable
    types = shape.types
    if types and not _type_ok(value, types):
        return False
    if isinstance(value, dict):
        props, values = shape.props, shape.values
        if values is not None and not props:
            if values.types == ("string",):  # labels, annotations, nodeSelector
                return all(type(v) is str for v in value.values())
            return all(v is not None and _clean(v, values) for v in value.values())
        closed = shape.closed
        for key, sub_value in value.items():
            sub = props.get(key)
            if sub is None:
                if values is not None:
                    if sub_value is None or not _clean(sub_value, values):
                        return False
                elif closed:
                    return False
            elif not _clean(sub_value, sub):
                return False
        return True
    if isinstance(value, list):
        items = shape.items
        if items is None:
            return True
        if items.types == ("string",) and not items.props:
            return all(type(v) is str for v in value)
        return all(v is not None and _clean(v, items) for v in value)
    return not shape.bits or _int_fits(value, shape.bits)


def _clean_pod(doc: Mapping[str, Any], shape: Shape, schema: ReleaseSchema,
               api_version: str) -> bool:
    """``_clean`` of a Pod, whose spec is checked once per template: a spec known clean is
    checked for its nodeName only, the rest of the pod as usual."""
    spec = doc.get("spec")
    key = pod_spec_key(spec, with_labels=False)
    if key is None:
        return _clean(doc, shape)
    key = (api_version, key)
    if key in schema.clean_pod_specs:
        assert isinstance(spec, dict)
        rest = {k: v for k, v in doc.items() if k != "spec"}
        rest["spec"] = {"nodeName": spec["nodeName"]} if "nodeName" in spec else {}
        return _clean(rest, shape)
    if not _clean(doc, shape):
        return False
    remember(schema.clean_pod_specs, key, True)
    return True


def _zero(shape: Shape) -> Any:
    """What Go's JSON decoding leaves for a null list item or map value: the type's zero
    value (an IntOrString or a Quantity: 0), which validation then judges as it would the
    API server's. None when the shape has no type."""
    types = shape.types
    if shape.props or "object" in types:
        return {}
    if "array" in types:
        return []
    if "integer" in types or "number" in types:
        return 0
    if "string" in types:
        return ""
    if "boolean" in types:
        return False
    return None


def _walk(value: Any, shape: Shape, path: str, unknown: list[str]) -> None:
    if value is None:
        if not shape.nullable:
            raise InputError("must not be null", field=path, value=None)
        return
    if shape.types and not _type_ok(value, shape.types):
        want = " or ".join(_TYPE_WORDS.get(t, t) for t in shape.types)
        raise InputError(f"must be {want}", field=path, value=_short(value))
    if shape.bits and not _int_fits(value, shape.bits):
        raise InputError(f"cannot unmarshal number {value} into a field of type "
                         f"int{shape.bits}", field=path, value=_short(value))
    if isinstance(value, dict):
        props, closed, values = shape.props, shape.closed, shape.values
        for key, sub_value in value.items():
            sub = props.get(key) if isinstance(key, str) else None
            if sub is None:
                if values is not None:
                    if sub_value is None:
                        sub_value = value[key] = _zero(values)
                    _walk(sub_value, values, f"{path}[{key}]", unknown)
                elif closed:
                    unknown.append(f"{path}.{key}")
                continue
            _walk(sub_value, sub, f"{path}.{key}", unknown)
    elif isinstance(value, list) and shape.items is not None:
        items = shape.items
        if items.types == ("string",) and not items.props:  # lists of strings: a fast path
            for i, v in enumerate(value):
                if v is None:
                    value[i] = ""
                elif not isinstance(v, str):
                    _walk(v, items, f"{path}[{i}]", unknown)
            return
        for i, v in enumerate(value):
            if v is None:
                v = value[i] = _zero(items)
            _walk(v, items, f"{path}[{i}]", unknown)


def _int_fits(value: int, bits: int) -> bool:
    limit = 1 << (bits - 1)
    return -limit <= value < limit


@functools.lru_cache(maxsize=64)
def _python_types(types: tuple[str, ...]) -> tuple[type, ...]:
    return tuple(t for name in types for t in _PY_TYPES.get(name, ()))


def _type_ok(value: Any, types: tuple[str, ...]) -> bool:
    if type(value) is bool:
        return "boolean" in types
    return isinstance(value, _python_types(types))


def _short(v: Any) -> Any:
    text = repr(v)
    return v if len(text) <= 80 else text[:77] + "..."


KUBESCHED_API_VERSION = "kubesched.io/v1alpha1"


def own_kind_schema(kind: str, required: list[str], properties: dict[str, Any]
                    ) -> dict[str, Any]:
    """The schema of one of kubesched's own kinds (``kubesched.io/v1alpha1``): apiVersion,
    kind and metadata, then ``properties`` (``required`` among them), nothing else."""
    return {
        "type": "object",
        "required": ["apiVersion", "kind", *required],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"type": "string", "enum": [KUBESCHED_API_VERSION]},
            "kind": {"type": "string", "enum": [kind]},
            "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
            **properties,
        },
    }
