"""The API server's validation of the objects kubesched reads, for the fields the scheduler
depends on, with upstream's field paths and wording (``names``: the apimachinery primitives;
``meta``, ``pod``, ``objects``: per kind; ``registry``: which kinds are validated, and where
other work registers its own; import it from there)."""

from kubesched.api.validation.names import (
    QUALIFIED_NAME_FMT,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    is_qualified_name,
    label_value_errors,
    qualified_name_errors,
)

__all__ = [
    "QUALIFIED_NAME_FMT",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "is_qualified_name",
    "label_value_errors",
    "qualified_name_errors",
]
