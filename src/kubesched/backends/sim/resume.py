"""Checkpoint and resume: the ``SimulationState`` document ``--state-out`` writes next to the
cluster's objects, and the run continued from it (``simulate STATE``) as if it had never
stopped.

What the objects alone do not say, and the uninterrupted run depends on:

- the virtual clock, and the wake-up the run was about to move to when ``--until`` cut it;
- the timeline's events still to come, in the order they would be applied (arrivals,
  pods finishing or gone after their grace period, faults, the taint manager's evictions —
  stale ones too: an event that finds nothing to do still wakes the run up at its time);
- the name and tie-break generators, the scheduler's ``nextStartNodeIndex``, cycle and
  queue counters; every queued pod's place and record (attempts, backoff, the plugins that
  rejected it, its placements record so far);
- the names ever used (generated names are never reused), the node tree's order when it is
  not the nodes' order, and the end rule's memory of the round in progress;
- the pods waiting at Permit (node, deadlines, the cycle that parked them, the devices and
  volumes their Reserve chose: ``ReserveCheckpointedPlugin``) and the queue's
  in-flight log: they are parked again, not queued again (``ScheduleOne.park_again``);
- the records plugins keep between cycles (``CheckpointedPlugin``: Coscheduling,
  GangScheduling), the faults still to act (bindings still to fail, DeviceConditions waiting
  for their device), and the placements records of pending pods outside the queue.

A kind of event is carried by its ``EventCodec`` (``register_event``): a name, an encoder
to a mapping and a decoder back against the objects loaded. Events that are only ever due at
once (a binding's echo, a stored object's) are never pending when a run stops.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.faults import Fault
from kubesched.api.naming import generator_state
from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.simstate import API_VERSION, KIND, SimulationState
from kubesched.api.types import DURATION_ANNOTATION, Node, Pod
from kubesched.backends.sim.accounting import PodRecord
from kubesched.backends.sim.state import node_doc, pod_doc
from kubesched.backends.sim.timeline import (
    Arrival,
    Event,
    EvictionDue,
    FaultDue,
    PodFinished,
    PodGone,
)
from kubesched.cache.node_tree import NodeTree
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent
from kubesched.framework.interface import CheckpointedPlugin, ReserveCheckpointedPlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.types import QueuedPodInfo
from kubesched.framework.waiting import WaitingPod
from kubesched.queue.scheduling_queue import InFlightEvent

if TYPE_CHECKING:
    from kubesched.backends.sim.cluster import SimCluster


@dataclass
class Restoring:
    """What a decoder reads and sets while a run is restored."""

    sim: SimCluster
    state: SimulationState
    arriving: dict[str, Pod]  # uid -> the pods an Arrival brings (not on the API server yet)
    index: int = 0  # the timeline entry being decoded

    def error(self, message: str, field: str, value: object = None) -> InputError:
        return self.state.error(message, f"timeline[{self.index}].{field}", value)

    def pod_ref(self, entry: dict[str, Any]) -> tuple[str, str]:
        uid, key = entry.get("uid"), entry.get("pod")
        if not isinstance(uid, str) or not uid:
            raise self.error("must name the pod's uid", "uid", uid)
        return uid, key if isinstance(key, str) else ""

    def gone(self, uid: str, key: str) -> Pod:
        """A stand-in for a pod no longer on the API server: its event finds nothing."""
        ns, _, name = key.rpartition("/")
        return parse_pod({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name or "gone", "namespace": ns or "default",
                                       "uid": uid},
                          "spec": {"containers": [{"name": "c"}]}})


@dataclass(frozen=True)
class EventCodec:
    name: str
    encode: Callable[[Any, SimCluster], dict[str, Any]]
    decode: Callable[[dict[str, Any], float, Restoring], Event]


_CODECS: dict[type, EventCodec] = {}
_BY_NAME: dict[str, EventCodec] = {}


def register_event(cls: type, codec: EventCodec) -> None:
    _CODECS[cls] = codec
    _BY_NAME[codec.name] = codec


def _pod_fields(pod: Pod) -> dict[str, Any]:
    return {"pod": pod.key, "uid": pod.uid}


def _decode_arrival(e: dict[str, Any], at: float, r: Restoring) -> Event:
    uid, _key = r.pod_ref(e)
    pod = r.arriving.get(uid)
    if pod is None:
        raise r.error("names no pending Pod of the state (an arrival brings a Pod written "
                      "without spec.nodeName)", "uid", uid)
    return Arrival(pod)


def _decode_finished(e: dict[str, Any], at: float, r: Restoring) -> Event:
    uid, key = r.pod_ref(e)
    cur = r.sim.api.pods.get(uid)
    if cur is not None and cur.spec.node_name and cur.spec.node_name == e.get("node"):
        r.sim.api.finishes_at(cur, at)
        duration = e.get("duration")
        if isinstance(duration, str):  # as the pod had it (the file says what is left)
            cur.metadata.annotations[DURATION_ANNOTATION] = duration
        return PodFinished(cur)
    return PodFinished(r.gone(uid, key))


def _encode_gone(ev: PodGone, sim: SimCluster) -> dict[str, Any]:
    deleted: dict[str, str] = sim.api.deleted
    return {**_pod_fields(ev.pod), "reason": deleted.get(ev.pod.uid, "deleted")}


def _decode_gone(e: dict[str, Any], at: float, r: Restoring) -> Event:
    uid, key = r.pod_ref(e)
    cur = r.sim.api.pods.get(uid)
    if cur is not None and cur.metadata.deletion_timestamp is not None:
        reason = e.get("reason")
        api = r.sim.api
        api.deleted[uid] = fate = reason if isinstance(reason, str) else "deleted"
        if not cur.spec.node_name:  # pending and terminating: never scheduled, its fate known
            api.accounting.deleted(cur, fate, api.clock.now())
        return PodGone(cur)
    return PodGone(r.gone(uid, key))


_FAULT_FIELDS = [f.name for f in dataclasses.fields(Fault) if f.name not in ("at", "source")]


def _fault_fields(f: Fault) -> dict[str, Any]:
    return {k: getattr(f, k) for k in _FAULT_FIELDS}


def _encode_fault(ev: FaultDue, sim: SimCluster) -> dict[str, Any]:
    return {"fault": _fault_fields(ev.fault)}


def _fault(raw: object, at: float, state: SimulationState, fld: str) -> Fault:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) \
            or not isinstance(raw.get("action"), str):
        raise state.error("must be the fault's fields (name, action, ...)", fld, _short(raw))
    unknown = sorted(set(raw) - set(_FAULT_FIELDS))
    if unknown:
        raise state.error("is not a field of a fault", f"{fld}.{unknown[0]}", raw[unknown[0]])
    return Fault(at=at, source=state.source, **raw)


def _decode_fault(e: dict[str, Any], at: float, r: Restoring) -> Event:
    return FaultDue(_fault(e.get("fault"), at, r.state, f"timeline[{r.index}].fault"))


def _faults_doc(sim: SimCluster) -> dict[str, Any]:
    """The faults that acted and still act: binding faults with the bindings they must
    still fail, DeviceCondition faults waiting for their device to be allocated."""
    armed, device_waiting = sim.faults.pending()
    return {"armed": [{"fault": _fault_fields(f), "at": f.at, "left": left}
                      for f, left in armed],
            "deviceWaiting": [{"fault": _fault_fields(f), "at": f.at}
                              for f in device_waiting],
            "fired": dict(sim.faults.fired)}


def _restore_faults(sim: SimCluster, state: SimulationState) -> None:
    saved = state.faults
    if not saved:
        return
    armed, waiting = [], []
    for i, a in enumerate(saved.get("armed") or ()):
        fld = f"faults.armed[{i}]"
        left = a.get("left") if isinstance(a, dict) else None
        if not isinstance(left, int) or isinstance(left, bool) or left < 1:
            raise state.error("must be a positive integer", f"{fld}.left", left)
        armed.append((_fault(a.get("fault"), float(a.get("at", 0)), state, f"{fld}.fault"),
                      left))
    for i, w in enumerate(saved.get("deviceWaiting") or ()):
        fld = f"faults.deviceWaiting[{i}]"
        waiting.append(_fault(w.get("fault") if isinstance(w, dict) else None,
                              float(w.get("at", 0)) if isinstance(w, dict) else 0.0, state,
                              f"{fld}.fault"))
    fired = saved.get("fired") or {}
    if not isinstance(fired, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in fired.values()):
        raise state.error("must map fault names to counts", "faults.fired", _short(fired))
    sim.faults.restore(armed, waiting, {str(k): int(n) for k, n in fired.items()})


def _encode_eviction(ev: EvictionDue, sim: SimCluster) -> dict[str, Any]:
    entry = sim.api.taints.scheduled.get(ev.uid)
    return {"uid": ev.uid, "since": entry[0] if entry is not None else ev.at}


def _decode_eviction(e: dict[str, Any], at: float, r: Restoring) -> Event:
    uid, _ = r.pod_ref(e)
    since = e.get("since", at)
    if isinstance(since, bool) or not isinstance(since, int | float) or since > at:
        raise r.error("must be a time no later than the eviction's", "since", since)
    if uid in r.sim.api.pods:
        r.sim.api.taints.scheduled[uid] = (float(since), at)
    return EvictionDue(uid, at)


register_event(Arrival, EventCodec("Arrival", lambda ev, sim: _pod_fields(ev.pod),
                                   _decode_arrival))
register_event(PodFinished, EventCodec(
    "PodFinished", lambda ev, sim: {
        **_pod_fields(ev.pod), "node": ev.pod.spec.node_name,
        "duration": ev.pod.metadata.annotations.get(DURATION_ANNOTATION)},
    _decode_finished))
register_event(PodGone, EventCodec("PodGone", _encode_gone, _decode_gone))
register_event(FaultDue, EventCodec("FaultDue", _encode_fault, _decode_fault))
register_event(EvictionDue, EventCodec("EvictionDue", _encode_eviction, _decode_eviction))


# ---------------------------------------------------------------------- the checkpoint


def _qpi_doc(where: str, qpi: QueuedPodInfo) -> dict[str, Any]:
    return {"pod": qpi.pod.key, "uid": qpi.pod.uid, "where": where,
            "timestamp": qpi.timestamp, "seq": qpi.seq,
            "initialAttemptTimestamp": qpi.initial_attempt_timestamp,
            "attempts": qpi.attempts, "unschedulableCount": qpi.unschedulable_count,
            "consecutiveErrorsCount": qpi.consecutive_errors_count,
            "unschedulablePlugins": sorted(qpi.unschedulable_plugins),
            "pendingPlugins": sorted(qpi.pending_plugins),
            "gatingPlugin": qpi.gating_plugin,
            "backoffExpiration": qpi.backoff_expiration}


def _with_record(sim: SimCluster, entry: dict[str, Any]) -> dict[str, Any]:
    rec = sim.accounting.records.get(entry["uid"])
    if rec is not None:
        entry["record"] = {"time": rec.time, "attempts": rec.attempts, "message": rec.message}
    return entry


def _waiting_doc(sim: SimCluster, wp: WaitingPod) -> dict[str, Any]:
    qpi, cycle, cycle_state = wp.context
    entry = {**_qpi_doc("in_flight", qpi), "node": wp.node, "cycle": cycle,
             "pending": {p: [d, t] for p, (d, t) in wp.pending.items()},
             "messages": dict(wp.messages)}
    fwk = sim.scheduler.profiles[wp.pod.spec.scheduler_name]
    reserved = {name: got for name, p in fwk.plugins.items()
                if isinstance(p, ReserveCheckpointedPlugin)
                and (got := p.reserved_choices(cycle_state, wp.pod, wp.node)) is not None}
    if reserved:
        entry["reserved"] = reserved
    if wp.status is not None:  # its outcome came in the step the run stopped after
        entry["outcome"] = {"code": int(wp.status.code), "reasons": list(wp.status.reasons),
                            "plugin": wp.status.plugin}
    return _with_record(sim, entry)


def _object_doc(obj: Any) -> dict[str, Any] | None:
    """An object an in-flight event carries: pods and nodes as they were, other objects
    by name (the queueing hints that read them see them as they are now)."""
    if obj is None:
        return None
    if isinstance(obj, Pod):
        return {"pod": pod_doc(obj, node=obj.spec.node_name,
                               phase=obj.status.phase or "Pending")}
    if isinstance(obj, Node):
        return {"node": node_doc(obj)}
    md = getattr(obj, "metadata", None)
    kind = getattr(obj, "kind", None)
    if md is None or not isinstance(kind, str):
        return None
    return {"kind": kind, "namespace": md.namespace, "name": md.name}


def _object_from_doc(doc: object, sim: SimCluster) -> Any:
    if not isinstance(doc, dict):
        return None
    if "pod" in doc:
        return parse_pod(doc["pod"])
    if "node" in doc:
        return parse_node(doc["node"])
    for obj in sim.api.objects.get(str(doc.get("kind")), ()):
        md = obj.metadata
        if md.name == doc.get("name") and (md.namespace or "") == (doc.get("namespace") or ""):
            return obj
    return None


def _in_flight_doc(sim: SimCluster) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in sim.scheduler.queue.in_flight_log():
        if isinstance(e, str):
            out.append({"pod": e})
        else:
            ce = e.event
            out.append({"event": [ce.resource, int(ce.action), ce.label],
                        "old": _object_doc(e.old_obj), "new": _object_doc(e.new_obj)})
    return out


def _plugins_doc(sim: SimCluster) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for profile, fwk in sim.scheduler.profiles.items():
        kept = {name: p.checkpoint_state() for name, p in sorted(fwk.plugins.items())
                if isinstance(p, CheckpointedPlugin)}
        if kept:
            out[profile] = kept
    return out


def checkpoint_document(sim: SimCluster, written: set[str]) -> dict[str, Any]:
    """The ``SimulationState`` of ``sim`` now; ``written``: the keys of the pods written
    with it (the names used before and not among them are listed)."""
    sched, api = sim.scheduler, sim.api
    queue = sched.queue
    entries = [_with_record(sim, _qpi_doc(queue.where(qpi.pod.uid) or "", qpi))
               for qpi in queue.pending_pods()]
    waiting = sched.waiting
    resolved = [wp.pod.uid for wp in waiting.resolved]
    # pending pods neither queued nor waiting (still terminating, served by no profile,
    # refused by the API server): their records as they are, times included
    held = {e["uid"] for e in entries} | {wp.pod.uid for wp in waiting}
    records = {uid: {"time": rec.time, "attempts": rec.attempts, "message": rec.message,
                     **({"unserved": True} if rec.unserved else {})}
               for uid, rec in sim.accounting.records.items()
               if uid not in held and (pod := api.pods.get(uid)) is not None
               and not pod.spec.node_name}
    timeline = []
    for t, event in sim.timeline.timed():
        codec = _CODECS.get(type(event))
        if codec is None:  # (only echoes, due at once: the loop delivers them first)
            raise RuntimeError(f"a {type(event).__name__} event cannot be carried over")
        timeline.append({"at": t, "event": codec.name, **codec.encode(event, sim)})
    tree = sched.cache.tree.zones
    rebuilt = NodeTree()  # the tree the nodes make when added in the order written
    for node in api.nodes.values():
        rebuilt.add(node)
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "checkpoint"},
        "clock": float(sim.clock.now()), "wakeup": sim.loop.wakeup,
        "generators": {"names": generator_state(api.controllers.rng),
                       "tieBreak": generator_state(sched.handle.rng)},
        "scheduler": {"nextStartNodeIndex": sched.next_start_node_index,
                      "schedulingCycle": queue.scheduling_cycle,
                      "nextSeq": queue.next_seq()},
        "queue": entries,
        "waiting": [_waiting_doc(sim, wp) for wp in waiting],
        "timeline": timeline,
        "usedNames": sorted(api.used_keys() - written),
        "runLoop": {"ended": sim.loop.ended, **api.counters(), **sim.loop.rounds.memory()},
    }
    if list(rebuilt.zones.items()) != list(tree.items()):
        doc["nodeTree"] = [list(names) for names in tree.values()]
    if resolved:
        doc["resolved"] = resolved
    if records:
        doc["records"] = records
    in_flight = _in_flight_doc(sim)
    if in_flight:
        doc["inFlight"] = in_flight
    plugins = _plugins_doc(sim)
    if plugins:
        doc["plugins"] = plugins
    faults = _faults_doc(sim)
    if any(faults.values()):
        doc["faults"] = faults
    return doc


# ---------------------------------------------------------------------- resuming


def restore(sim: SimCluster, state: SimulationState) -> None:
    """``sim``'s scenario is a state written with ``state``: its objects as they were, the
    run's own state as the checkpoint left it."""
    api, sched = sim.api, sim.scheduler
    sim.clock.advance_to(state.clock)
    scenario = sim.scenario
    arriving_uids = {e.get("uid") for e in state.timeline if e.get("event") == "Arrival"}
    arriving = {p.uid: p for p in scenario.pods
                if not p.spec.node_name and p.uid in arriving_uids}
    api.load_objects(set(arriving))
    if state.node_tree is not None:
        _restore_tree(sim, state)
    api.controllers.rng.setstate(state.names.getstate())
    api.remember_keys(state.used_names)
    r = Restoring(sim, state, arriving)
    for i, entry in enumerate(state.timeline):
        r.index = i
        codec = _BY_NAME.get(entry["event"])
        if codec is None:
            raise r.error(f"unknown event (one of {', '.join(sorted(_BY_NAME))})", "event",
                          entry["event"])
        at = float(entry["at"])
        sim.timeline.push(at, codec.decode(entry, at, r))
    placed = [(str(q["where"]), _queued(sim, state, q, f"queue[{i}]"))
              for i, q in enumerate(state.queue)]
    _park_again(sim, state)
    _restore_records(sim, state)
    _restore_plugins(sim, state)
    _restore_faults(sim, state)
    s = state.scheduler
    sched.queue.restore(placed, s["schedulingCycle"], s["nextSeq"])
    sched.next_start_node_index = s["nextStartNodeIndex"]
    sched.handle.rng.setstate(state.tie_break.getstate())
    try:
        api.restore_counters(state.run_loop)
        sim.loop.restore(state.run_loop, state.wakeup)
    except (KeyError, TypeError, ValueError) as e:
        raise state.error(f"not as --state-out writes it ({e})", "runLoop") from None


def _queued(sim: SimCluster, state: SimulationState, q: dict[str, Any], fld: str
            ) -> QueuedPodInfo:
    """A queued pod's record as the checkpoint wrote it, and its placements record."""
    pod = sim.scheduler.pending.get(q["uid"])
    if pod is None:
        raise state.error("names no pending Pod of the state this scheduler serves",
                          f"{fld}.uid", q["uid"])
    qpi = QueuedPodInfo(
        pod=pod, timestamp=float(q.get("timestamp", 0)), seq=int(q.get("seq", 0)),
        initial_attempt_timestamp=q.get("initialAttemptTimestamp"),
        attempts=int(q.get("attempts", 0)),
        unschedulable_count=int(q.get("unschedulableCount", 0)),
        consecutive_errors_count=int(q.get("consecutiveErrorsCount", 0)),
        unschedulable_plugins=set(q.get("unschedulablePlugins") or ()),
        pending_plugins=set(q.get("pendingPlugins") or ()),
        gating_plugin=str(q.get("gatingPlugin") or ""),
        backoff_expiration=q.get("backoffExpiration"))
    rec = sim.accounting.records.get(pod.uid)
    got = q.get("record")
    if rec is not None and isinstance(got, dict):
        rec.time = float(got.get("time", rec.time))
        rec.attempts = int(got.get("attempts", 0))
        message = got.get("message")
        rec.message = message if isinstance(message, str) else None
    return qpi


def _park_again(sim: SimCluster, state: SimulationState) -> None:
    """The pods waiting at Permit: in flight again (with the events they have missed),
    assumed on their nodes and waiting until the same deadlines, in the order they were
    parked; outcomes already known come again in the order they came."""
    sched = sim.scheduler
    queued = {}
    for i, w in enumerate(state.waiting):
        fld = f"waiting[{i}]"
        qpi = _queued(sim, state, w, fld)
        node = w["node"]
        if node not in sim.api.nodes:
            raise state.error("names no node of the state", f"{fld}.node", node)
        if w["uid"] in {q["uid"] for q in state.queue}:
            raise state.error("is queued too: a pod is queued or waiting", f"{fld}.uid",
                              w["uid"])
        queued[qpi.pod.uid] = (qpi, w)
    log: list[str | InFlightEvent] = []
    for i, e in enumerate(state.in_flight):
        if "pod" in e:
            if e["pod"] not in queued:
                raise state.error("names no pod waiting at Permit", f"inFlight[{i}].pod",
                                  e["pod"])
            log.append(str(e["pod"]))
            continue
        resource, action, label = e["event"]
        log.append(InFlightEvent(ClusterEvent(str(resource), ActionType(int(action)),
                                              str(label)),
                                 _object_from_doc(e.get("old"), sim),
                                 _object_from_doc(e.get("new"), sim)))
    missing = sorted(set(queued) - {x for x in log if isinstance(x, str)})
    if missing:
        raise state.error("must hold a marker of every pod waiting at Permit", "inFlight",
                          missing[0])
    for qpi, _w in queued.values():
        sched.queue.delete(qpi.pod)  # (added as pending with the state's objects)
    sched.queue.restore_in_flight(log, {u: q.pod for u, (q, _w) in queued.items()})
    for i, (qpi, w) in enumerate(queued.values()):
        sched.park_again(qpi, w["node"], int(w["cycle"]),
                         {p: (float(d), float(t)) for p, (d, t) in w["pending"].items()},
                         {str(p): str(m) for p, m in (w.get("messages") or {}).items()},
                         _chooser(sim, state, qpi.pod, w, f"waiting[{i}].reserved"))
    for uid in state.resolved:
        wp = sched.waiting.get(uid)
        outcome = (queued[uid][1].get("outcome") if uid in queued else None)
        if wp is None or not isinstance(outcome, dict):
            raise state.error("names no pod waiting at Permit with an outcome", "resolved",
                              uid)
        wp.pending.clear()
        wp.resolve(Status(Code(int(outcome["code"])), tuple(outcome.get("reasons") or ()),
                          str(outcome.get("plugin") or "")))


def _chooser(sim: SimCluster, state: SimulationState, pod: Pod, w: dict[str, Any],
             fld: str) -> Callable[[CycleState], None]:
    """What the waiting pod's Reserve chose (its devices, its volumes), made again by the
    plugins that chose it."""
    fwk = sim.scheduler.profiles[pod.spec.scheduler_name]
    chosen: list[tuple[str, ReserveCheckpointedPlugin, dict[str, Any]]] = []
    for name, saved in (w.get("reserved") or {}).items():
        plugin = fwk.plugins.get(name)
        if not isinstance(plugin, ReserveCheckpointedPlugin):
            raise state.error("names no plugin of the profile whose Reserve chooses",
                              f"{fld}.{name}", _short(saved))
        chosen.append((f"{fld}.{name}", plugin, saved))

    def choose(cycle_state: CycleState) -> None:
        node = str(w["node"])
        for f, plugin, saved in chosen:
            try:
                plugin.choose_as_reserved(cycle_state, pod, node, saved)
            except InputError as e:
                raise state.error(e.message, f"{f}.{e.field}" if e.field else f,
                                  e.value) from None
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise state.error(f"not as --state-out writes it ({e})", f,
                                  _short(saved)) from None

    return choose


def _restore_records(sim: SimCluster, state: SimulationState) -> None:
    """The records of pending pods outside the queue, as the checkpoint had them (their
    time is when their fate was known, not the time the run resumed)."""
    records = sim.accounting.records
    for uid, saved in state.records.items():
        pod = sim.api.pods.get(uid)
        if pod is None or pod.spec.node_name:
            raise state.error("names no pending Pod of the state", f"records.{uid}")
        rec = records.get(uid)
        if rec is None:
            rec = records[uid] = PodRecord(pod.key, unserved=bool(saved.get("unserved")))
        rec.time = float(saved["time"])
        rec.attempts = int(saved.get("attempts", 0))
        message = saved.get("message")
        rec.message = message if isinstance(message, str) else None


def _restore_plugins(sim: SimCluster, state: SimulationState) -> None:
    for profile, kept in state.plugins.items():
        fwk = sim.scheduler.profiles.get(profile)
        for name, saved in kept.items():
            plugin = fwk.plugins.get(name) if fwk is not None else None
            fld = f"plugins.{profile}.{name}"
            if not isinstance(plugin, CheckpointedPlugin) or not isinstance(saved, dict):
                raise state.error("names no plugin of the profiles that keeps records",
                                  fld, _short(saved))
            try:
                plugin.restore_state(saved)
            except (KeyError, TypeError, ValueError) as e:
                raise state.error(f"not as --state-out writes it ({e})", fld,
                                  _short(saved)) from None


def _short(v: object) -> object:
    text = repr(v)
    return v if len(text) <= 60 else text[:57] + "..."


def _restore_tree(sim: SimCluster, state: SimulationState) -> None:
    cache = sim.scheduler.cache
    tree = state.node_tree or []
    names = [n for zone in tree for n in zone]
    if sorted(names) != sorted(n for n, ni in cache.nodes.items() if ni.node is not None):
        raise state.error("must list every node of the state once", "nodeTree",
                          names[:5])
    cache.tree.zones = {}
    cache.tree.num_nodes = 0
    for zone in tree:
        for n in zone:
            node = cache.nodes[n].node
            assert node is not None
            cache.tree.add(node)
