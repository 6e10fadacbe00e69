"""Work done once per distinct value (issue 22): a large dump repeats the same few pod
templates (and resource requirements) across thousands of pods, so what is judged of them
(their schema check, parse, validity) is remembered by their content. Only success is
remembered: input that fails is judged again each time, so its message (which names where it
is) stays its own."""

from __future__ import annotations

import marshal
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
        items = resource_list_key(lst)
        if items is None:
            return None
        parts.append(items)
    return tuple(parts)


def resource_list_key(lst: Any) -> tuple[tuple[Any, Any], ...] | None:
    """A ResourceList's entries as a hashable value, or None when it is not a plain mapping
    of strings and integers."""
    if type(lst) is not dict:
        return None
    items = tuple(lst.items())
    for _, q in items:
        # (not floats: 2.0**60 == 2**60, but a float quantity is read from its repr)
        if type(q) is not str and type(q) is not int:
            return None
    return items


def pod_spec_key(spec: Any, labels: Any = None, *, with_labels: bool = True
                 ) -> Hashable | None:
    """A pod's ``spec`` as a hashable value without its ``nodeName`` (the one field a
    ReplicaSet's pods spread over nodes differ in; whoever uses the key judges it per pod),
    and with the pod's ``labels`` when ``with_labels`` and the spec's affinity or spread
    constraints read them (matchLabelKeys); None when the spec is not a mapping.

    The key is the value's ``marshal`` (format 2: no back-references, so it follows the
    content only): C-fast, and equal keys are equal values of the same types (``marshal.loads``
    gives the value back; 1, 1.0, True and "1" differ). A value marshal refuses (a date, a
    subclass of str) gets no key: it is judged in full."""
    if type(spec) is not dict:
        return None
    if "nodeName" in spec:
        spec = {k: v for k, v in spec.items() if k != "nodeName"}
    try:
        if with_labels and ("affinity" in spec or "topologySpreadConstraints" in spec):
            return marshal.dumps((spec, labels), 2)
        return marshal.dumps(spec, 2)
    except ValueError:
        return None


def remember(memo: dict[Any, Any], key: Hashable, value: Any) -> None:
    if len(memo) < MEMO_MAX:
        memo[key] = value
