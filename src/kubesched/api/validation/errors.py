"""field.Error's kinds, as the API server words them (``spec.x: Invalid value: …``)."""

from __future__ import annotations

from typing import Any, NoReturn

from kubesched.errors import InputError


def invalid(path: str, value: Any, detail: str) -> NoReturn:
    raise InputError(f"Invalid value: {detail}", field=path, value=value)


def required(path: str, detail: str = "") -> NoReturn:
    raise InputError("Required value" + (f": {detail}" if detail else ""), field=path)


def duplicate(path: str, value: Any) -> NoReturn:
    raise InputError("Duplicate value", field=path, value=value)


def unsupported(path: str, value: Any, allowed: tuple[str, ...]) -> NoReturn:
    shown = ", ".join(f'"{a}"' for a in allowed)
    raise InputError(f"Unsupported value: supported values: {shown}", field=path, value=value)


def forbidden(path: str, detail: str, value: Any = None) -> NoReturn:
    raise InputError(f"Forbidden: {detail}", field=path, value=value)


def first(errors: list[str], path: str, value: Any) -> None:
    """The first of a validation function's messages, as an Invalid value."""
    if errors:
        invalid(path, value, errors[0])
