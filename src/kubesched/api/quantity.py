"""Kubernetes ``resource.Quantity`` parsing, exact (``fractions.Fraction``).

Follows apimachinery's ``ParseQuantity`` grammar::

    <quantity> ::= <sign>? <digits>? ( "." <digits>? )? <suffix>
    <suffix>   ::= "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) <sign>? <digits>

Deliberately stricter than Go in one way: a quantity must contain a digit (Go reads "Gi"
or "." as 0). Conversions round as Go does: ``Value()`` and ``MilliValue()`` round *away from zero*
(for the non-negative quantities the API allows, that is the ceiling).
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

from kubesched.api.types import CPU

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# sign, integer digits, optional "." and fraction digits, then the suffix characters Go
# collects ("eEinumkKMGTP"), an optional sign and digits (a decimal exponent).
_QUANTITY_RE = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?P<suffix>[eEinumkKMGTP]*(?:[+-]?[0-9]+)?)"
)


def parse_quantity(value: str | int | float | Fraction) -> Fraction:
    """Parse a Kubernetes quantity ("100m", "1.5Gi", "1e3", 2, 0.5) into an exact Fraction.

    Raises ValueError with a message naming the bad value.
    """
    if isinstance(value, bool):
        raise ValueError(f"quantities must be numbers or strings, not {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"quantity {value!r} is not a finite number")
        # A bare YAML/JSON number is read by Kubernetes from its text, as a string would be.
        value = repr(value)
    if not isinstance(value, str):
        raise ValueError(f"quantities must be numbers or strings, not {type(value).__name__}")
    return _parse_quantity_text(value)


# Scenarios repeat a handful of quantities ("4", "32Gi", "110") across thousands of nodes and
# pods; a Fraction is immutable, so one parse per distinct text serves them all.
@functools.lru_cache(maxsize=4096)
def _parse_quantity_text(s: str) -> Fraction:
    if not s:
        raise ValueError("quantity is empty")
    m = _QUANTITY_RE.fullmatch(s)
    if m is None:
        raise ValueError(f"quantity {s!r} does not match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    int_part = m.group("int") or ""
    frac_part = m.group("frac") or ""
    suffix = m.group("suffix")
    digits = int_part + frac_part
    if not digits:
        # Go reads "Gi", "-" or "." as 0; kubesched refuses a quantity without a digit.
        raise ValueError(f"quantity {s!r} has no digits")
    number = Fraction(int(digits) if digits else 0, 10 ** len(frac_part))
    if m.group("sign") == "-":
        number = -number
    if suffix in _DECIMAL_SUFFIXES:
        return number * Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return number * (1 << _BINARY_SUFFIXES[suffix])
    if len(suffix) > 1 and suffix[0] in "eE":
        exp_text = suffix[1:]
        if re.fullmatch(r"[+-]?[0-9]+", exp_text):
            exp = int(exp_text)
            if abs(exp) > 1000:
                raise ValueError(f"quantity {s!r} has an exponent out of range")
            return number * Fraction(10) ** exp
    raise ValueError(f"unable to parse quantity's suffix {suffix!r} in {s!r}")


def _round_away_from_zero(q: Fraction) -> int:
    return math.ceil(q) if q >= 0 else math.floor(q)


def int_value(q: Fraction | str | int | float) -> int:
    """Go's ``Quantity.Value()``: the value rounded up (away from zero) to an integer."""
    return _round_away_from_zero(parse_quantity(q))


def milli_value(q: Fraction | str | int | float) -> int:
    """Go's ``Quantity.MilliValue()``: value × 1000 rounded up (away from zero)."""
    return _round_away_from_zero(parse_quantity(q) * 1000)


def resource_value(name: str, q: Fraction | str | int | float) -> int:
    """The scheduler's integer for resource ``name``: milli-cores for cpu, units otherwise."""
    if isinstance(q, str):  # scenarios repeat a few quantity strings thousands of times
        return _resource_value_of_str(name == CPU, q)
    return milli_value(q) if name == CPU else int_value(q)


@functools.lru_cache(maxsize=4096)
def _resource_value_of_str(milli: bool, q: str) -> int:
    return milli_value(q) if milli else int_value(q)


def format_quantity(q: Fraction) -> str:
    """A quantity as text that parses back to the same value: an integer as is, otherwise
    milli units when exact, else nano units rounded up (as Go's canonical form, whose
    smallest unit is the nano)."""
    if q.denominator == 1:
        return str(q.numerator)
    milli = q * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return f"{math.ceil(q * 10**9)}n"
