"""Scenarios written as JSON (issue 22): one ``kind: List`` as ``kubectl get -o json`` writes,
by orjson. Read back (``api.scenario``) it loads many times faster than the same objects as
YAML, which stays the format for people; a file named ``*.json`` gets this one."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Iterable
from typing import Any

import orjson


def wants_json(path: str) -> bool:
    """Whether an output file is to be written as JSON (by its name; stdout stays YAML)."""
    return path != "-" and path.lower().endswith(".json")


def _default(value: Any) -> Any:
    # what a YAML file can hold that JSON cannot: binary (the API server's []byte is
    # base64 text), a date without a time
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def json_list(docs: Iterable[dict[str, Any]]) -> bytes:
    """``docs`` as one JSON List (two-space indented, a final newline)."""
    return orjson.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs),
                         "metadata": {"resourceVersion": ""}}, default=_default,
                        option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
                        | orjson.OPT_NON_STR_KEYS)
