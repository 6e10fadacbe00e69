"""Names and uids for objects the simulated cluster creates (a controller's pods).

The API server's ``generateName``: the base (truncated to leave room) and five characters
from the alphabet apimachinery's ``utilrand.String`` draws from (no vowels, no look-alike
characters). Drawn from a seeded generator so a run names its pods the same way each time.
"""

from __future__ import annotations

import random
from collections.abc import Container

# utilrand's alphanums: consonants and digits only, so names never spell words
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_RANDOM_LENGTH = 5
_MAX_NAME_LENGTH = 63
_MAX_GENERATED_NAME_LENGTH = _MAX_NAME_LENGTH - _RANDOM_LENGTH


def generate_name(base: str, rng: random.Random, taken: Container[str] = ()) -> str:
    """``base`` plus five random characters, as generateName; drawn again while the name is
    in ``taken`` (the API server answers AlreadyExists and the controller retries)."""
    if len(base) > _MAX_GENERATED_NAME_LENGTH:
        base = base[:_MAX_GENERATED_NAME_LENGTH]
    while True:
        name = base + "".join(rng.choices(ALPHANUMS, k=_RANDOM_LENGTH))
        if name not in taken:
            return name


def new_uid(rng: random.Random) -> str:
    """A version-4 UUID from ``rng`` (the API server's uids are random; these are seeded):
    what ``str(uuid.UUID(int=..., version=4))`` gives, without building the object (a
    controller may create tens of thousands of pods)."""
    n = rng.getrandbits(128)
    n = (n & ~(0xC000 << 48)) | (0x8000 << 48)  # the RFC 4122 variant
    n = (n & ~(0xF000 << 64)) | (4 << 76)  # version 4
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
