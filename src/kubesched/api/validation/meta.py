"""ObjectMeta, labels, annotations and label selectors (apimachinery's ValidateObjectMeta,
ValidateLabels, ValidateAnnotations, ValidateLabelSelector)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from kubesched.api.samevalue import remember
from kubesched.api.validation.errors import first, invalid, required, unsupported
from kubesched.api.validation.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from kubesched.errors import InputError

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
LABEL_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")

NameCheck = Callable[[str], list[str]]


def validate_meta(md: Mapping[str, Any] | None, *, namespaced: bool,
                  name_check: NameCheck = dns1123_subdomain_errors,
                  path: str = "metadata") -> None:
    md = md or {}
    name = md.get("name")
    if not name:
        required(f"{path}.name", "name or generateName is required")
    first(name_check(name), f"{path}.name", name)
    ns = md.get("namespace")
    if namespaced and ns:
        first(dns1123_label_errors(ns), f"{path}.namespace", ns)
    validate_labels(md.get("labels"), f"{path}.labels")
    validate_annotations(md.get("annotations"), f"{path}.annotations")


# label keys and values found valid (a dump repeats a few keys, and many values)
_VALID_KEYS: dict[str, bool] = {}
_VALID_VALUES: dict[str, bool] = {}


def validate_labels(labels: Mapping[str, Any] | None, path: str) -> None:
    for k, v in (labels or {}).items():
        if type(k) is not str or k not in _VALID_KEYS:
            first(qualified_name_errors(k), path, k)
            if type(k) is str:
                remember(_VALID_KEYS, k, True)
        if type(v) is not str or v not in _VALID_VALUES:
            first(label_value_errors(v or ""), f"{path}[{k}]", v)
            if type(v) is str:
                remember(_VALID_VALUES, v, True)


def validate_annotations(annotations: Mapping[str, Any] | None, path: str) -> None:
    total = 0
    for k, v in (annotations or {}).items():
        first(qualified_name_errors(k.lower()), path, k)
        total += len(k) + len(v or "")
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        raise_too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT)


def raise_too_long(path: str, limit: int) -> NoReturn:
    raise InputError(f"Too long: may not be more than {limit} bytes", field=path)


def validate_label_selector(sel: Mapping[str, Any] | None, path: str) -> None:
    if not sel:
        return
    validate_labels(sel.get("matchLabels"), f"{path}.matchLabels")
    for i, e in enumerate(sel.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        op = e.get("operator")
        if op not in LABEL_SELECTOR_OPS:
            unsupported(f"{p}.operator", op, LABEL_SELECTOR_OPS)
        key = e.get("key") or ""
        first(qualified_name_errors(key), f"{p}.key", key)
        values = e.get("values") or []
        if op in ("In", "NotIn") and not values:
            required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        if op in ("Exists", "DoesNotExist") and values:
            invalid(f"{p}.values", values,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        for j, v in enumerate(values):
            first(label_value_errors(v), f"{p}.values[{j}]", v)


def selector_keys(sel: Mapping[str, Any] | None) -> set[str]:
    if not sel:
        return set()
    keys = set((sel.get("matchLabels") or {}).keys())
    keys.update(e.get("key") for e in sel.get("matchExpressions") or ())
    return keys
