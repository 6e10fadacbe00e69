"""apimachinery's name and label validation (IsQualifiedName, IsValidLabelValue), with
upstream's error messages: the one place the API model, the selectors and the configuration
check label keys and values."""

from __future__ import annotations

import re

QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(f"({QUALIFIED_NAME_FMT})?")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_RE = re.compile(rf"{_DNS1123_LABEL_FMT}(\.{_DNS1123_LABEL_FMT})*")


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery ``IsQualifiedName`` (a label key)."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + e for e in dns1123_subdomain_errors(prefix)]
    else:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character with an optional DNS "
                "subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _QNAME_RE.fullmatch(name):
        errs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                    "'my.name',  or '123-abc', regex used for validation is "
                    f"'{QUALIFIED_NAME_FMT}')")
    return errs


def _length_and_format(value: str, limit: int, regex: re.Pattern[str], message: str
                       ) -> list[str]:
    """apimachinery's usual pair of checks: a maximum length, then a RegexError."""
    errs = []
    if len(value) > limit:
        errs.append(f"must be no more than {limit} characters")
    if not regex.fullmatch(value):
        errs.append(message)
    return errs


def label_value_errors(value: str) -> list[str]:
    """apimachinery ``IsValidLabelValue``."""
    return _length_and_format(
        value, 63, _LABEL_VALUE_RE,
        "a valid label must be an empty string or consist of alphanumeric characters, '-', "
        "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
        "or 'my_value',  or '12345', regex used for validation is "
        f"'({QUALIFIED_NAME_FMT})?')")


def is_qualified_name(value: str) -> bool:
    return not qualified_name_errors(value)


_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_FMT = rf"{_DNS1123_LABEL_FMT}(\.{_DNS1123_LABEL_FMT})*"


def dns1123_label_errors(value: str) -> list[str]:
    """apimachinery ``IsDNS1123Label`` (namespaces, container and volume names)."""
    return _length_and_format(
        value, 63, _DNS1123_LABEL_RE,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        f"'123-abc', regex used for validation is '{_DNS1123_LABEL_FMT}')")


def dns1123_subdomain_errors(value: str) -> list[str]:
    """apimachinery ``IsDNS1123Subdomain`` (most object names)."""
    return _length_and_format(
        value, 253, _DNS1123_SUBDOMAIN_RE,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. "
        f"'example.com', regex used for validation is '{_DNS1123_SUBDOMAIN_FMT}')")
