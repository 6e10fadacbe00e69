"""Work done once per distinct value (issue 22): a large dump repeats the same few resource
requirements across thousands of pods, so what is judged of them (their parse, their
validity) is remembered by their content. Only success is remembered: input that fails is
judged again each time, so its message (which names where it is) stays its own."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

#: entries each memo keeps at most (a dump with more distinct values just stops gaining)
MEMO_MAX = 4096


def requirements_key(res: Any) -> Hashable | None:
    """A ``resources`` mapping's requests and limits as a hashable value, or None when they
    are not plain mappings of strings and integers (left to the full judgement)."""
    if type(res) is not dict:
        return None
    parts: list[Any] = []
    for field in ("requests", "limits"):
        lst = res.get(field)
        if lst is None:
            parts.append(None)
            continue
        if type(lst) is not dict:
            return None
        items = tuple(lst.items())
        for _, q in items:
            # (not floats: 2.0**60 == 2**60, but a float quantity is read from its repr)
            if type(q) is not str and type(q) is not int:
                return None
        parts.append(items)
    return tuple(parts)


def remember(memo: dict[Any, Any], key: Hashable, value: Any) -> None:
    if len(memo) < MEMO_MAX:
        memo[key] = value
