"""Names and uids for objects the simulated cluster creates (a controller's pods).

The API server's ``generateName``: the base (truncated to leave room) and five characters
from the alphabet apimachinery's ``utilrand.String`` draws from (no vowels, no look-alike
characters). Drawn from a seeded generator so a run names its pods the same way each time.
"""

from __future__ import annotations

import base64
import binascii
import random
import struct
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


_STATE_WORDS = 625  # Mersenne Twister: 624 words of state and the position in them
_STATE_PREFIX = "mt19937:"


def generator_state(rng: random.Random) -> str:
    """``rng``'s state as text (``--state-out``): the Mersenne Twister's 625 words,
    little-endian, base64."""
    version, words, gauss = rng.getstate()
    if version != 3 or gauss is not None or len(words) != _STATE_WORDS:
        raise ValueError("a generator that has drawn Gaussians has no text state")
    return _STATE_PREFIX + base64.b64encode(struct.pack(f"<{_STATE_WORDS}I", *words)).decode()


def set_generator_state(rng: random.Random, text: object) -> None:
    """Puts ``rng`` in the state ``generator_state`` wrote; ValueError saying what is wrong
    when ``text`` is not such a state."""
    if not isinstance(text, str) or not text.startswith(_STATE_PREFIX):
        raise ValueError(f"must be a generator state written by --state-out "
                         f"({_STATE_PREFIX}BASE64)")
    try:
        raw = base64.b64decode(text[len(_STATE_PREFIX):], validate=True)
    except binascii.Error:
        raise ValueError("its state is not base64") from None
    if len(raw) != 4 * _STATE_WORDS:
        raise ValueError(f"its state must be {4 * _STATE_WORDS} bytes, not {len(raw)}")
    words = struct.unpack(f"<{_STATE_WORDS}I", raw)
    if words[-1] > _STATE_WORDS - 1 or not any(words[:-1]):
        raise ValueError("not a state the generator can be in")
    rng.setstate((3, words, None))
