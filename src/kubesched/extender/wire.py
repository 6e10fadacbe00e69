"""Upstream's extender wire types (``k8s.io/kube-scheduler/extender/v1``) and reading them
as Go's ``encoding/json`` does.

The Go structs carry no JSON tags, so the keys are the field names (``Pod``, ``NodeNames``,
``FailedNodes``…). Go's decoder matches keys case-insensitively (an exact match first),
ignores unknown keys, treats ``null`` as "leave the zero value", reads only the first JSON
value of the body, and reports the first type mismatch as
``json: cannot unmarshal <kind> into Go struct field <Type>.<Field> of type <go type>``.
Answers are read here with those rules and those messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# ------------------------------------------------------------------ schema


@dataclass(frozen=True, slots=True)
class _Scalar:
    go: str  # "string", "int64", "bool"


@dataclass(frozen=True, slots=True)
class _Slice:
    go: str
    elem: Any


@dataclass(frozen=True, slots=True)
class _Map:
    go: str
    elem: Any


@dataclass(frozen=True, slots=True)
class _Struct:
    go: str  # e.g. "v1.HostPriority"
    fields: tuple[tuple[str, str, Any], ...]  # (Go field name, JSON key, schema)


STRING = _Scalar("string")
INT64 = _Scalar("int64")

_META = _Struct("v1.ObjectMeta", (("Name", "name", STRING),))
_NODE = _Struct("v1.Node", (("ObjectMeta", "metadata", _META),))
NODE_LIST = _Struct("v1.NodeList", (("Items", "items", _Slice("[]v1.Node", _NODE)),))
FAILED_NODES = _Map("v1.FailedNodesMap", STRING)
FILTER_RESULT = _Struct("v1.ExtenderFilterResult", (
    ("Nodes", "Nodes", NODE_LIST),
    ("NodeNames", "NodeNames", _Slice("[]string", STRING)),
    ("FailedNodes", "FailedNodes", FAILED_NODES),
    ("FailedAndUnresolvableNodes", "FailedAndUnresolvableNodes", FAILED_NODES),
    ("Error", "Error", STRING),
))
HOST_PRIORITY_LIST = _Slice("v1.HostPriorityList", _Struct("v1.HostPriority", (
    ("Host", "Host", STRING),
    ("Score", "Score", INT64),
)))
BINDING_RESULT = _Struct("v1.ExtenderBindingResult", (("Error", "Error", STRING),))
_META_VICTIMS = _Struct("v1.MetaVictims", (
    ("Pods", "Pods", _Slice("[]*v1.MetaPod", _Struct("v1.MetaPod", (("UID", "UID", STRING),)))),
    ("NumPDBViolations", "NumPDBViolations", INT64),
))
PREEMPTION_RESULT = _Struct("v1.ExtenderPreemptionResult", (
    ("NodeNameToMetaVictims", "NodeNameToMetaVictims",
     _Map("map[string]*v1.MetaVictims", _META_VICTIMS)),
))


class DecodeError(Exception):
    pass


# ------------------------------------------------------------------ decoding


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "string"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, list):
        return "array"
    return "object"


@dataclass(slots=True)
class _Ctx:
    struct: str = ""  # the innermost struct type being filled (without the package)
    path: list[str] = field(default_factory=list)

    def mismatch(self, v: Any, go: str) -> DecodeError:
        what = _kind(v)
        if what == "number" and go == "int64":  # Go quotes the literal only here
            what = f"number {json.dumps(v)}"
        if self.struct:
            where = f"Go struct field {self.struct}.{'.'.join(self.path)}"
        else:
            where = "Go value"
        return DecodeError(f"json: cannot unmarshal {what} into {where} of type {go}")


def _decode(v: Any, schema: Any, ctx: _Ctx) -> Any:
    if v is None:  # null leaves the zero value
        return None
    if isinstance(schema, _Scalar):
        if schema is STRING:
            if not isinstance(v, str):
                raise ctx.mismatch(v, "string")
            return v
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ctx.mismatch(v, schema.go)
        if (isinstance(v, float) and not v.is_integer()) or not -2**63 <= v < 2**63:
            raise ctx.mismatch(v, schema.go)
        return int(v)
    if isinstance(schema, _Slice):
        if not isinstance(v, list):
            raise ctx.mismatch(v, schema.go)
        if schema.elem is STRING and all(type(x) is str for x in v):
            return v  # the common large answer (NodeNames): no per-item calls
        return [_decode(x, schema.elem, ctx) for x in v]
    if isinstance(schema, _Map):
        if not isinstance(v, dict):
            raise ctx.mismatch(v, schema.go)
        if schema.elem is STRING and all(type(x) is str for x in v.values()):
            return v
        return {k: _decode(x, schema.elem, ctx) for k, x in v.items()}
    assert isinstance(schema, _Struct)
    if not isinstance(v, dict):
        raise ctx.mismatch(v, schema.go)
    out: dict[str, Any] = {}
    # Go names the innermost struct and the path of JSON keys from the root.
    struct = schema.go.split(".", 1)[-1]
    for go_name, key, sub in schema.fields:
        if key in v:
            raw = v[key]
        else:  # the first key equal under case folding
            raw = None
            folded = key.casefold()
            for k, x in v.items():
                if k.casefold() == folded:
                    raw = x
                    break
        out[go_name] = _decode(raw, sub, _Ctx(struct, [*ctx.path, key]))
    return out


def decode(body: bytes, schema: Any) -> Any:
    """The first JSON value of ``body`` decoded into ``schema`` (dicts keyed by Go field
    name; None for absent or null). Raises DecodeError with Go's wording."""
    text = body.decode("utf-8", errors="replace")
    start = len(text) - len(text.lstrip(" \t\r\n"))
    if start == len(text):
        raise DecodeError("EOF")
    try:
        value, _end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise DecodeError(_syntax_message(text, e)) from None
    return _decode(value, schema, _Ctx())


def _syntax_message(text: str, e: json.JSONDecodeError) -> str:
    if e.pos >= len(text):
        return "unexpected EOF"
    ch = text[e.pos]
    if e.msg.startswith("Expecting value"):
        return f"invalid character {_quote(ch)} looking for beginning of value"
    if e.msg.startswith("Expecting property name"):
        return f"invalid character {_quote(ch)} looking for beginning of object key string"
    if e.msg.startswith("Expecting ':'"):
        return f"invalid character {_quote(ch)} after object key"
    if e.msg.startswith("Expecting ',' delimiter"):
        where = ("array element" if _innermost(text, e.pos) == "["
                 else "object key:value pair")
        return f"invalid character {_quote(ch)} after {where}"
    return f"invalid character {_quote(ch)} ({e.msg})"


def _quote(ch: str) -> str:
    return "'\\''" if ch == "'" else f"'{ch}'"


def _innermost(text: str, pos: int) -> str:
    """The bracket of the array or object open at ``pos`` (strings skipped)."""
    stack: list[str] = []
    in_str = esc = False
    for ch in text[:pos]:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            stack.append(ch)
        elif ch in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""
