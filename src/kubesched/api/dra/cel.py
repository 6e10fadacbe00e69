"""The CEL environment of DRA device selectors, as upstream's
``k8s.io/dynamic-resource-allocation/cel`` builds it, on Google's CEL (cel-cpp, through
``cel-expr-python``).

An expression sees one variable, ``device``: ``device.driver`` (a string),
``device.allowMultipleAllocations`` (a bool, only with DRAConsumableCapacity on),
``device.attributes[domain][id]`` (int, bool, string or a semver version, or a list of one
of these: DRAListTypeAttributes) and ``device.capacity[domain][id]`` (quantities). Attribute
and capacity names without a domain belong to the device's driver. Looking up a domain the
device does not have yields an empty map, as upstream's ``mapper`` does, so
``has(device.attributes["x"].y)`` is false rather than an error. The library is
Kubernetes' base set (strings, bindings ``cel.bind``, ``quantity``, ``semver``) and DRA's
``includes`` (``x.includes(v)``: a list attribute has ``v`` among its
values, or a scalar one equals it; declared whatever the gates, as in upstream's environment
for stored expressions); the result must be a bool.

cel-expr-python cannot carry opaque (non-CEL) values, so a quantity or a semver version
travels as a string with a private tag (``QUANTITY_TAG`` / ``SEMVER_TAG``) and their methods
are declared on strings. The difference shows only for expressions upstream's type checker
refuses (``"a".compareTo("b")`` compiles here and fails when it runs); documented in
docs/dra.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]  # no py.typed marker
from cel_expr_python.ext import (  # type: ignore[import-untyped]
    ext_bindings,
    ext_strings,
)

from kubesched.api.quantity import parse_quantity

# A private-use code point: no real value starts with it (NUL would be cut by the C++ side).
QUANTITY_TAG = "\ue000quantity:"
SEMVER_TAG = "\ue000semver:"

#: resource.k8s.io CELSelectorExpressionMaxLength / MaxCost
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000


class CelRuntimeError(Exception):
    """An expression failed while evaluating (upstream: ``CEL runtime error: …``)."""


# ---------------------------------------------------------------- quantities


def quantity_value(text: str) -> str:
    """A quantity as CEL sees it: tagged, exact, so equal quantities are equal strings."""
    q = parse_quantity(text)
    return QUANTITY_TAG + str(q)


def _q(v: Any) -> Fraction:
    if isinstance(v, str) and v.startswith(QUANTITY_TAG):
        return Fraction(v[len(QUANTITY_TAG):])
    raise ValueError("no such overload: argument is not a quantity")


def _qnew(q: Fraction) -> str:
    return QUANTITY_TAG + str(q)


def _cel_quantity(s: str) -> str:
    try:
        return quantity_value(s)
    except Exception:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {s!r}") from None


def _is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
    except Exception:
        return False
    return True


def _q_add(a: str, b: Any) -> str:
    return _qnew(_q(a) + (Fraction(b) if isinstance(b, int) else _q(b)))


def _q_sub(a: str, b: Any) -> str:
    return _qnew(_q(a) - (Fraction(b) if isinstance(b, int) else _q(b)))


def _q_as_integer(a: str) -> int:
    q = _q(a)
    if q.denominator != 1 or not -(1 << 63) <= q.numerator < (1 << 63):
        raise ValueError("cannot convert value to integer")
    return q.numerator


# ---------------------------------------------------------------- semver (blang/semver)

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


def is_semver(text: str) -> bool:
    return _SEMVER.match(text) is not None


def semver_value(text: str) -> str:
    if not is_semver(text):
        raise ValueError(f"could not parse {text!r} as semver")
    return SEMVER_TAG + text


def _sv(v: Any) -> tuple[int, int, int, tuple[tuple[int, int | str], ...] | None]:
    if not (isinstance(v, str) and v.startswith(SEMVER_TAG)):
        raise ValueError("no such overload: argument is not a semver")
    m = _SEMVER.match(v[len(SEMVER_TAG):])
    assert m is not None
    pre = None
    if m.group(4) is not None:
        pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in m.group(4).split("."))
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def _semver_cmp(a: Any, b: Any) -> int:
    """semver 2.0.0 precedence: build metadata ignored, a pre-release below its release."""
    x, y = _sv(a), _sv(b)
    if x[:3] != y[:3]:
        return -1 if x[:3] < y[:3] else 1
    px, py = x[3], y[3]
    if px == py:
        return 0
    if px is None:
        return 1
    if py is None:
        return -1
    return -1 if px < py else 1


def _cel_semver(s: str) -> str:
    try:
        return semver_value(s)
    except ValueError as e:
        raise ValueError(str(e)) from None


def _compare_to(a: Any, b: Any) -> int:
    if isinstance(a, str) and a.startswith(SEMVER_TAG):
        return _semver_cmp(a, b)
    x, y = _q(a), _q(b)
    return (x > y) - (x < y)


# ---------------------------------------------------------------- includes (KEP-5491)

#: resource.k8s.io ResourceSliceMaxAttributeValuesPerDevice: also the longest list
#: ``includes`` looks through
MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48


def _cel_equal(a: Any, b: Any) -> bool:
    """CEL's ``==`` between two values of any types (false, not an error, across types):
    Python's would say ``true == 1`` and could not see two tagged semvers as equal."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b  # CEL compares numbers across int, uint and double
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_cel_equal, a, b))
    if isinstance(a, str) and isinstance(b, str) and a.startswith(SEMVER_TAG) \
            and b.startswith(SEMVER_TAG):
        return _semver_cmp(a, b) == 0
    return type(a) is type(b) and bool(a == b)


def _includes(target: Any, arg: Any) -> bool:
    """``target.includes(arg)``: whether a list attribute has ``arg`` among its values, or a
    scalar one equals it. Lists longer than upstream's bound are an error once the search
    reaches that far, as upstream bounds the function's cost."""
    if not isinstance(target, list):
        return _cel_equal(target, arg)
    for i, item in enumerate(target):
        if i >= MAX_ATTRIBUTE_VALUES_PER_DEVICE:
            raise ValueError("'includes' function cannot be applied to lists longer than "
                             f"{MAX_ATTRIBUTE_VALUES_PER_DEVICE} values")
        if _cel_equal(item, arg):
            return True
    return False


def _includes_decl() -> Any:
    """Upstream declares ``includes`` once on (dyn, dyn); cel-cpp dispatches on the values'
    kinds at run time, so it gets one overload per pair of kinds."""
    kinds = {"list": cel.Type.List(cel.Type.DYN), "map": cel.Type.Map(cel.Type.DYN, cel.Type.DYN),
             "string": _S, "int": _I, "uint": cel.Type.UINT, "double": _D, "bool": _B}
    return cel.FunctionDecl("includes", [
        cel.Overload(f"dra_includes_{tn}_{an}", _B, [tt, at], is_member=True, impl=_includes)
        for tn, tt in kinds.items() for an, at in kinds.items()])


# ---------------------------------------------------------------- the environment

_S = cel.Type.STRING
_I = cel.Type.INT
_B = cel.Type.BOOL
_D = cel.Type.DOUBLE


def _decl(name: str, ret: Any, params: list[Any], impl: Callable[..., Any], *,
          member: bool, suffix: str = "") -> Any:
    oid = f"{'string_' if member else ''}{name}{suffix}"
    return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=member, impl=impl)])


def _functions() -> list[Any]:
    return [
        _decl("quantity", _S, [_S], _cel_quantity, member=False),
        _decl("isQuantity", _B, [_S], _is_quantity, member=False),
        _decl("semver", _S, [_S], _cel_semver, member=False),
        _decl("isSemver", _B, [_S], is_semver, member=False),
        _decl("compareTo", _I, [_S, _S], _compare_to, member=True),
        _decl("isGreaterThan", _B, [_S, _S], lambda a, b: _compare_to(a, b) > 0, member=True),
        _decl("isLessThan", _B, [_S, _S], lambda a, b: _compare_to(a, b) < 0, member=True),
        _decl("sign", _I, [_S], lambda a: (_q(a) > 0) - (_q(a) < 0), member=True),
        _decl("isInteger", _B, [_S], lambda a: _q(a).denominator == 1, member=True),
        _decl("asInteger", _I, [_S], _q_as_integer, member=True),
        _decl("asApproximateFloat", _D, [_S], lambda a: float(_q(a)), member=True),
        cel.FunctionDecl("add", [
            cel.Overload("quantity_add", _S, [_S, _S], is_member=True, impl=_q_add),
            cel.Overload("quantity_add_int", _S, [_S, _I], is_member=True, impl=_q_add)]),
        cel.FunctionDecl("sub", [
            cel.Overload("quantity_sub", _S, [_S, _S], is_member=True, impl=_q_sub),
            cel.Overload("quantity_sub_int", _S, [_S, _I], is_member=True, impl=_q_sub)]),
        _decl("major", _I, [_S], lambda a: _sv(a)[0], member=True),
        _decl("minor", _I, [_S], lambda a: _sv(a)[1], member=True),
        _decl("patch", _I, [_S], lambda a: _sv(a)[2], member=True),
        _includes_decl(),
    ]


@functools.cache
def _env() -> Any:
    return cel.NewEnv(
        variables={"device": cel.Type.Map(_S, cel.Type.DYN)},
        extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings()],
        functions=_functions())


_STRING_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')


@dataclass(frozen=True, slots=True)
class CompiledSelector:
    expression: str
    program: Any
    # string literals of the expression: the domains it may look up, pre-set to empty maps
    # on devices that lack them (upstream's lookups of unknown domains yield an empty map)
    literals: tuple[str, ...]

    def device_matches(self, device: DeviceInput) -> bool:
        """Whether the device is selected; ``CelRuntimeError`` when evaluation fails."""
        attributes, capacity = device.attributes, device.capacity
        missing = [lit for lit in self.literals
                   if lit not in attributes or lit not in capacity]
        if missing:
            attributes = dict(attributes)
            capacity = dict(capacity)
            for lit in missing:
                attributes.setdefault(lit, {})
                capacity.setdefault(lit, {})
        fields: dict[str, Any] = {
            "driver": device.driver, "attributes": attributes, "capacity": capacity}
        if device.allow_multiple_allocations is not None:
            fields["allowMultipleAllocations"] = device.allow_multiple_allocations
        value = self.program.eval(data={"device": fields})
        kind = value.type()
        if kind == cel.Type.ERROR:
            raise CelRuntimeError(_clean(str(value.value())))
        result = value.value()
        if not isinstance(result, bool):
            # upstream names the type without its parameters ("list", not "list<dyn>")
            name = kind.name().lower().partition("<")[0]
            raise CelRuntimeError(f"CEL result of type {name} could not be converted to bool")
        return result


@dataclass(frozen=True, slots=True)
class CelCompileError:
    expression: str
    detail: str


def _clean(message: str) -> str:
    for code in ("INVALID_ARGUMENT", "UNKNOWN", "NOT_FOUND", "OUT_OF_RANGE", "UNIMPLEMENTED",
                 "INTERNAL"):
        message = message.removeprefix(f"{code}: ").removesuffix(f" [{code}]")
    return message.rstrip()


@functools.lru_cache(maxsize=4096)
def compile_selector(expression: str) -> CompiledSelector | CelCompileError:
    """Compile once (upstream's cel.Cache): a program, or the error the API server would
    report for it."""
    try:
        program = _env().compile(expression)
    except RuntimeError as e:
        return CelCompileError(expression, "compilation failed: " + _clean(str(e)))
    out = program.return_type()
    if out != cel.Type.BOOL and out != cel.Type.DYN:
        return CelCompileError(expression,
                               f"must evaluate to bool or the unknown type, not "
                               f"{out.name().lower()}")
    literals = tuple(sorted({a or b for a, b in _STRING_LITERAL.findall(expression)}))
    return CompiledSelector(expression, program, literals)


# ---------------------------------------------------------------- the device variable


@dataclass(frozen=True, slots=True)
class DeviceInput:
    """What a selector sees of one device, built once per device."""

    driver: str
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, Mapping[str, str]]
    # upstream's device type has this field only with DRAConsumableCapacity on (None: off)
    allow_multiple_allocations: bool | None = None


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """``domain/id``, or the driver's domain when the name has none."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def device_input(driver: str, attributes: Mapping[str, Any],
                 capacity: Mapping[str, Fraction],
                 allow_multiple_allocations: bool | None = None) -> DeviceInput:
    """``attributes`` map names to int, bool, str or ``Semver`` values; ``capacity`` to
    exact quantities; ``allow_multiple_allocations`` None when DRAConsumableCapacity is
    off (the field is then unknown to CEL)."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, value in attributes.items():
        if value is None:
            # an attribute without a value (only in objects built directly: the loader
            # refuses it): the device cannot be evaluated, as upstream's getAttributeValue
            raise CelRuntimeError(f"attribute {name}: unsupported attribute value")
        domain, ident = split_qualified_name(name, driver)
        # a list attribute (DRAListTypeAttributes) is a CEL list of its values
        attrs.setdefault(domain, {})[ident] = (
            [_attribute_scalar(v) for v in value] if isinstance(value, tuple)
            else _attribute_scalar(value))
    caps: dict[str, dict[str, str]] = {}
    for name, q in capacity.items():
        domain, ident = split_qualified_name(name, driver)
        caps.setdefault(domain, {})[ident] = _qnew(q)
    return DeviceInput(driver, attrs, caps, allow_multiple_allocations)


def _attribute_scalar(value: Any) -> Any:
    return SEMVER_TAG + value.text if isinstance(value, Semver) else value


@dataclass(frozen=True, slots=True)
class Semver:
    """A ``version`` attribute value (validated semver 2.0.0 text)."""

    text: str
