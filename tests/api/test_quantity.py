from fractions import Fraction

import pytest

from kubesched.api.quantity import int_value, milli_value, parse_quantity, resource_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", Fraction(0)),
        ("1", Fraction(1)),
        ("100m", Fraction(1, 10)),
        ("0.5", Fraction(1, 2)),
        (".5", Fraction(1, 2)),
        ("1.", Fraction(1)),
        ("+2", Fraction(2)),
        ("-2", Fraction(-2)),
        ("1n", Fraction(1, 10**9)),
        ("1u", Fraction(1, 10**6)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1G", Fraction(10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        ("1Ki", Fraction(1024)),
        ("1Mi", Fraction(2**20)),
        ("1Gi", Fraction(2**30)),
        ("1Ti", Fraction(2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1.5Gi", Fraction(1610612736)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("1e+3", Fraction(1000)),
        ("5e-3", Fraction(5, 1000)),
        ("12.5e1", Fraction(125)),
        (2, Fraction(2)),
        (0.5, Fraction(1, 2)),
        (0.1, Fraction(1, 10)),
    ],
)
def test_parse_quantity(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "bad", ["12x", "", "1.2.3", "abc", "1K", "1mi", "1e", "1e3e3", " 1", "1 ", "Gi", "-", ".",
            "1Gi3", True, None, [1], float("inf")])
def test_parse_quantity_rejects(bad):
    with pytest.raises(ValueError):
        parse_quantity(bad)


def test_error_message_names_value():
    with pytest.raises(ValueError, match="12x"):
        parse_quantity("12x")


def test_milli_and_int_values_round_up():
    assert milli_value("100m") == 100
    assert milli_value("1") == 1000
    assert milli_value("0.1") == 100
    assert milli_value("1.5") == 1500
    assert milli_value("1n") == 1  # Go's MilliValue rounds up
    assert milli_value("0.0001") == 1
    assert int_value("1.5") == 2
    assert int_value("100m") == 1
    assert int_value("1Ki") == 1024
    assert int_value("1e3") == 1000
    assert int_value("-1.5") == -2  # away from zero, as Go


def test_resource_value():
    assert resource_value("cpu", "100m") == 100
    assert resource_value("cpu", "1") == 1000
    assert resource_value("cpu", "0.1") == 100
    assert resource_value("cpu", 2) == 2000
    assert resource_value("memory", "1.5Gi") == 1610612736
    assert resource_value("memory", "200Mi") == 200 * 1024 * 1024
    assert resource_value("memory", "1k") == 1000
    assert resource_value("pods", "110") == 110
    assert resource_value("nvidia.com/gpu", 1) == 1
    assert resource_value("ephemeral-storage", "10Gi") == 10 * 2**30
