"""A dump's "now": the moment a ``kubectl get -o yaml`` (or ``kubesched snapshot``) was taken,
which the simulator's virtual time 0 stands for.

A dump does not say when it was taken; its objects' timestamps say when things happened
before. The newest of them is the dump's now (docs/scenarios.md, "A dump's now"):

- ``metadata.creationTimestamp`` and every ``metadata.managedFields[].time``;
- for an object being deleted, when its deletion was asked for: ``metadata.deletionTimestamp``
  minus ``metadata.deletionGracePeriodSeconds`` (the API server sets the timestamp to the
  request's time plus the grace period; a Pod without the field: minus its
  ``spec.terminationGracePeriodSeconds``, default 30; other kinds: minus 0);
- ``status.conditions[].lastTransitionTime``, ``lastHeartbeatTime``, ``lastProbeTime`` and
  ``lastUpdateTime``, and ``status.startTime``;
- ``spec.taints[].timeAdded``.

Timestamps of the future (``deletionTimestamp`` itself) are left out: they are not things
that had happened when the dump was taken.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Mapping
from typing import Any

_CONDITION_TIMES = ("lastTransitionTime", "lastHeartbeatTime", "lastProbeTime",
                    "lastUpdateTime")
_DEFAULT_GRACE = 30  # the API server's default terminationGracePeriodSeconds


def epoch(v: Any) -> float | None:
    """An RFC3339 timestamp (a string, or the datetime YAML made of it) as epoch seconds;
    None when absent or not a timestamp (validation reports those where it reads them)."""
    if isinstance(v, str):
        try:
            v = _dt.datetime.fromisoformat(v)
        except ValueError:
            return None
    if not isinstance(v, _dt.datetime):
        return None
    if v.tzinfo is None:
        v = v.replace(tzinfo=_dt.UTC)
    return float(v.timestamp())


def _grace(doc: Mapping[str, Any], md: Mapping[str, Any]) -> float:
    g = md.get("deletionGracePeriodSeconds")
    if g is None and doc.get("kind") == "Pod":
        spec = doc.get("spec")
        g = spec.get("terminationGracePeriodSeconds") if isinstance(spec, Mapping) else None
        if g is None:
            g = _DEFAULT_GRACE
    return float(g) if isinstance(g, int | float) and not isinstance(g, bool) else 0.0


def _times(doc: Mapping[str, Any]) -> Iterator[float | None]:
    md = doc.get("metadata")
    if isinstance(md, Mapping):
        yield epoch(md.get("creationTimestamp"))
        for mf in md.get("managedFields") or ():
            if isinstance(mf, Mapping):
                yield epoch(mf.get("time"))
        deleted = epoch(md.get("deletionTimestamp"))
        if deleted is not None:
            yield deleted - _grace(doc, md)
    status = doc.get("status")
    if isinstance(status, Mapping):
        yield epoch(status.get("startTime"))
        for c in status.get("conditions") or ():
            if isinstance(c, Mapping):
                for key in _CONDITION_TIMES:
                    yield epoch(c.get(key))
    spec = doc.get("spec")
    if isinstance(spec, Mapping):
        taints = spec.get("taints")
        for t in taints if isinstance(taints, list) else ():
            if isinstance(t, Mapping):
                yield epoch(t.get("timeAdded"))


def newest_timestamp(doc: Mapping[str, Any]) -> float | None:
    """The newest of ``doc``'s timestamps that count for the dump's now (the list above)."""
    newest: float | None = None
    for t in _times(doc):
        if t is not None and (newest is None or t > newest):
            newest = t
    return newest


def virtual_time(at: float | None, now: float | None) -> float:
    """The virtual time of the epoch time ``at``, the dump's ``now`` being virtual time 0
    (negative: before the dump was taken); 0 when either is unknown."""
    if at is None or now is None:
        return 0.0
    return at - now
