"""The upstream releases kubesched decides as: the one list every layer reads (the API's
schemas, the feature gates, the commands' flags)."""

SUPPORTED_VERSIONS: tuple[str, ...] = ("1.35", "1.36", "1.37")

# kubesched decides as v1.35 today. DESIGN.md makes the newest supported release the
# default; this becomes "1.37" when issue 11's 1.36/1.37 behaviour changes land.
DEFAULT_VERSION = "1.35"


def version_tuple(version: str) -> tuple[int, ...]:
    """"1.36" → (1, 36), for comparing releases."""
    return tuple(int(x) for x in version.split("."))
