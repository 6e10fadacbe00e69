"""The upstream releases kubesched decides as: the one list every layer reads (the API's
schemas, the feature gates, the commands' flags)."""

SUPPORTED_VERSIONS: tuple[str, ...] = ("1.35", "1.36", "1.37")

# kubesched decides as v1.35 today. DESIGN.md makes the newest supported release the
# default; this becomes "1.37" when issue 11's 1.36/1.37 behaviour changes land.
DEFAULT_VERSION = "1.35"


def at_least(version: str, minimum: str) -> bool:
    """Whether release ``version`` (``X.Y``) is ``minimum`` or newer: for behaviour upstream
    changed in a release without a feature gate."""
    major, minor = version.split(".")
    want_major, want_minor = minimum.split(".")
    return (int(major), int(minor)) >= (int(want_major), int(want_minor))
