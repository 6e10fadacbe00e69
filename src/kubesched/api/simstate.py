"""``kind: SimulationState`` (``kubesched.io/v1alpha1``): what a run stopped by ``simulate
--until`` needs to continue as if it had not stopped, written by ``--state-out`` next to the
cluster's objects (docs/scenarios.md, "Resuming a run").

A simulation directive, not a Kubernetes object, registered with a schema of its own (so
``--strict`` reads it). Its fields are checked here, where the file is known, so that a state
edited by hand is bad input naming file, field and value: a generator state that does not
parse, a time earlier than the clock, a negative count. The simulator (``backends.sim
.resume``) decodes the rest against the objects loaded with it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.naming import set_generator_state
from kubesched.api.schema import KUBESCHED_API_VERSION, own_kind_schema, register_kind
from kubesched.errors import InputError

KIND = "SimulationState"
API_VERSION = KUBESCHED_API_VERSION

#: where a queued pod is (the scheduling queue's sub-queues)
QUEUE_PLACES = ("active", "backoff", "error_backoff", "unschedulable", "gated")

_FREE = {"type": "object"}
_LIST = {"type": "array"}
SCHEMA: dict[str, Any] = own_kind_schema(KIND, ["clock", "generators"], {
    "clock": {"type": "number"},
    "wakeup": {"type": ["number", "null"]},
    "generators": _FREE,
    "scheduler": _FREE,
    "queue": _LIST,
    "waiting": _LIST,
    "resolved": _LIST,
    "inFlight": _LIST,
    "plugins": _FREE,
    "faults": _FREE,
    "records": _FREE,
    "timeline": _LIST,
    "usedNames": _LIST,
    "nodeTree": _LIST,
    "runLoop": _FREE,
})


@dataclass
class SimulationState:
    """A checked ``SimulationState`` document (times in virtual seconds, absolute)."""

    source: str
    name: str
    clock: float
    wakeup: float | None
    names: random.Random
    tie_break: random.Random
    scheduler: dict[str, int]
    queue: list[dict[str, Any]]
    timeline: list[dict[str, Any]]
    used_names: list[str] = field(default_factory=list)
    node_tree: list[list[str]] | None = None
    run_loop: dict[str, Any] = field(default_factory=dict)
    # pods waiting at Permit (queue records with node, cycle, pending deadlines), those
    # whose outcome was known, the queue's in-flight log, the plugins' own records
    waiting: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    in_flight: list[dict[str, Any]] = field(default_factory=list)
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)
    faults: dict[str, Any] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def error(self, message: str, field: str, value: object = None) -> InputError:
        return InputError(message, file=self.source, obj=f"{KIND} {self.name}", field=field,
                          value=value)


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def parse_simulation_state(doc: Mapping[str, Any], source: str) -> SimulationState:
    md = doc.get("metadata")
    name = str(md.get("name") or "checkpoint") if isinstance(md, dict) else "checkpoint"

    def err(message: str, fld: str, value: object = None) -> InputError:
        return InputError(message, file=source, obj=f"{KIND} {name}", field=fld, value=value)

    raw_clock = doc.get("clock")
    if not _number(raw_clock) or float(raw_clock) < 0:  # type: ignore[arg-type]
        raise err("must be a non-negative number of seconds", "clock", raw_clock)
    clock = float(raw_clock)  # type: ignore[arg-type]

    def time(v: object, fld: str, *, past: bool = False) -> float:
        """A virtual time: not before the clock (``past``: not after it)."""
        if not _number(v):
            raise err("must be a number of seconds", fld, v)
        t = float(v)  # type: ignore[arg-type]
        if not past and t < clock:
            raise err(f"is earlier than the clock ({clock:g}): the clock cannot go back",
                      fld, v)
        if past and t > clock:
            raise err(f"is later than the clock ({clock:g})", fld, v)
        return t

    def count(v: object, fld: str) -> int:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise err("must be a non-negative integer", fld, v)
        return v

    wakeup = doc.get("wakeup")
    gens = doc.get("generators")
    if not isinstance(gens, dict):
        raise err("must be a mapping", "generators", gens)
    rngs = []
    for key in ("names", "tieBreak"):
        rng = random.Random()
        try:
            set_generator_state(rng, gens.get(key))
        except ValueError as e:
            raise err(str(e), f"generators.{key}", _short(gens.get(key))) from None
        rngs.append(rng)
    sched = doc.get("scheduler") or {}
    if not isinstance(sched, dict):
        raise err("must be a mapping", "scheduler", sched)
    scheduler = {k: count(sched.get(k, 0), f"scheduler.{k}")
                 for k in ("nextStartNodeIndex", "schedulingCycle", "nextSeq")}

    def queued(q: dict[str, Any], f: str) -> None:
        if not isinstance(q.get("uid"), str) or not q["uid"]:
            raise err("must name the pod's uid", f"{f}.uid", q.get("uid"))
        time(q.get("timestamp", 0), f"{f}.timestamp", past=True)
        if q.get("initialAttemptTimestamp") is not None:
            time(q["initialAttemptTimestamp"], f"{f}.initialAttemptTimestamp", past=True)
        for k in ("seq", "attempts", "unschedulableCount", "consecutiveErrorsCount"):
            count(q.get(k, 0), f"{f}.{k}")
        if q.get("backoffExpiration") is not None and not _number(q["backoffExpiration"]):
            raise err("must be a number of seconds", f"{f}.backoffExpiration",
                      q["backoffExpiration"])
        rec = q.get("record") or {}
        if not isinstance(rec, dict):
            raise err("must be a mapping", f"{f}.record", rec)
        time(rec.get("time", 0), f"{f}.record.time", past=True)
        count(rec.get("attempts", 0), f"{f}.record.attempts")

    queue = _entries(doc, "queue", err)
    for i, q in enumerate(queue):
        queued(q, f"queue[{i}]")
        if q.get("where") not in QUEUE_PLACES:
            raise err(f"must be one of {', '.join(QUEUE_PLACES)}", f"queue[{i}].where",
                      q.get("where"))
    waiting = _entries(doc, "waiting", err)
    for i, w in enumerate(waiting):
        f = f"waiting[{i}]"
        queued(w, f)
        if not isinstance(w.get("node"), str) or not w["node"]:
            raise err("must name the node the pod is assumed on", f"{f}.node", w.get("node"))
        count(w.get("cycle", 0), f"{f}.cycle")
        pending = w.get("pending")
        if not isinstance(pending, dict):
            raise err("must map each waiting plugin to [deadline, timeout]", f"{f}.pending",
                      _short(pending))
        for plugin, dt in pending.items():
            if not isinstance(dt, list) or len(dt) != 2 or not _number(dt[1]) \
                    or dt[1] < 0:
                raise err("must be [deadline, timeout] in seconds", f"{f}.pending.{plugin}",
                          _short(dt))
            deadline = time(dt[0], f"{f}.pending.{plugin}[0]")
            if deadline > clock + float(dt[1]):
                raise err(f"is further from the clock ({clock:g}) than its timeout "
                          f"({float(dt[1]):g})", f"{f}.pending.{plugin}[0]", dt[0])
        if not isinstance(w.get("messages") or {}, dict):
            raise err("must be a mapping", f"{f}.messages", _short(w.get("messages")))
        reserved = w.get("reserved") or {}
        if not isinstance(reserved, dict):
            raise err("must map each plugin to what its Reserve chose", f"{f}.reserved",
                      _short(reserved))
        for plugin, chosen in reserved.items():
            if not isinstance(chosen, dict):
                raise err("must be a mapping", f"{f}.reserved.{plugin}", _short(chosen))
    resolved = doc.get("resolved") or []
    if not isinstance(resolved, list) or not all(isinstance(u, str) for u in resolved):
        raise err("must be a list of pod uids", "resolved", _short(resolved))
    in_flight = _entries(doc, "inFlight", err)
    for i, entry in enumerate(in_flight):
        ev = entry.get("event")
        if "pod" in entry:
            if not isinstance(entry["pod"], str):
                raise err("must be a pod's uid", f"inFlight[{i}].pod", entry["pod"])
        elif not (isinstance(ev, list) and len(ev) == 3 and isinstance(ev[0], str)
                  and isinstance(ev[1], int) and not isinstance(ev[1], bool)
                  and isinstance(ev[2], str)):
            raise err("must be [resource, action, label]", f"inFlight[{i}].event", _short(ev))
    plugins = doc.get("plugins") or {}
    if not isinstance(plugins, dict) or not all(
            isinstance(v, dict) for v in plugins.values()):
        raise err("must map each profile to its plugins' records", "plugins",
                  _short(plugins))
    records = doc.get("records") or {}
    if not isinstance(records, dict):
        raise err("must map pod uids to their records", "records", _short(records))
    for uid, rec in records.items():
        if not isinstance(rec, dict):
            raise err("must be a mapping", f"records.{uid}", _short(rec))
        time(rec.get("time"), f"records.{uid}.time", past=True)
        count(rec.get("attempts", 0), f"records.{uid}.attempts")
    faults = doc.get("faults") or {}
    if not isinstance(faults, dict):
        raise err("must be a mapping", "faults", _short(faults))
    for key in ("armed", "deviceWaiting"):
        _entries(faults, key, lambda m, f, v=None: err(m, f"faults.{f}", v))
    timeline = _entries(doc, "timeline", err)
    last = clock
    for i, ev in enumerate(timeline):
        t = time(ev.get("at"), f"timeline[{i}].at")
        if t < last:
            raise err(f"is earlier than the event before it ({last:g}): the timeline is "
                      "in the order its events are applied", f"timeline[{i}].at", ev.get("at"))
        last = t
        if not isinstance(ev.get("event"), str):
            raise err("must name the event's kind", f"timeline[{i}].event", ev.get("event"))
    if wakeup is not None:
        wakeup = time(wakeup, "wakeup")
    used = doc.get("usedNames") or []
    if not isinstance(used, list) or not all(isinstance(u, str) for u in used):
        raise err("must be a list of NAMESPACE/NAME", "usedNames", _short(used))
    tree = doc.get("nodeTree")
    if tree is not None and (not isinstance(tree, list) or not all(
            isinstance(z, list) and all(isinstance(n, str) for n in z) for z in tree)):
        raise err("must be a list of lists of node names", "nodeTree", _short(tree))
    run_loop = doc.get("runLoop") or {}
    if not isinstance(run_loop, dict):
        raise err("must be a mapping", "runLoop", _short(run_loop))
    return SimulationState(source, name, clock, wakeup, rngs[0], rngs[1], scheduler,
                           queue, timeline, list(used), tree, run_loop, waiting,
                           list(resolved), in_flight, plugins, faults, records)


def _entries(doc: Mapping[str, Any], key: str, err: Any) -> list[dict[str, Any]]:
    items = doc.get(key) or []
    if not isinstance(items, list):
        raise err("must be a list", key, _short(items))
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise err("must be a mapping", f"{key}[{i}]", _short(item))
    return items


def _short(v: object) -> object:
    text = repr(v)
    return v if len(text) <= 60 else text[:57] + "..."


register_kind(KIND, {API_VERSION: SCHEMA})
