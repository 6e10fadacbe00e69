"""The simulator's timeline of typed events: order, drop, typed delivery."""

from __future__ import annotations

from kubesched.api.faults import Fault
from kubesched.api.types import ObjectMeta, Pod, PodSpec
from kubesched.backends.sim.timeline import (
    Arrival,
    BindingReported,
    DeletionToldLate,
    EvictionDue,
    FaultDue,
    PodFinished,
    PodGone,
    Stored,
    Tick,
    Timeline,
)


def pod(name: str) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=f"default/{name}"),
               spec=PodSpec())


def drain(tl: Timeline, now: float) -> list[object]:
    out = []
    while (e := tl.pop_due(now)) is not None:
        out.append(e)
    return out


def test_time_first_then_kind_then_insertion():
    p, q = pod("p"), pod("q")
    tl = Timeline()
    late = Arrival(p)
    evict = EvictionDue("u", 5.0)
    tick = Tick()
    arrive_q = Arrival(q)
    bound = BindingReported(p, q)
    gone = PodGone(p)
    tl.push(7.0, late)
    tl.push(5.0, evict)
    tl.push(5.0, tick)
    tl.push(5.0, arrive_q)
    tl.push(5.0, gone)
    tl.push(5.0, bound)
    second_arrival = Arrival(p)
    tl.push(5.0, second_arrival)
    assert tl.next_time() == 5.0
    assert drain(tl, 4.9) == []
    got = drain(tl, 5.0)
    assert got == [bound, gone, arrive_q, second_arrival, tick, evict]
    assert tl.next_time() == 7.0 and len(tl) == 1
    assert drain(tl, 100.0) == [late]
    assert not tl and tl.next_time() is None


def test_the_kind_order_is_todays():
    p = pod("p")
    kinds = [BindingReported(p, p), PodFinished(p), PodGone(p), Arrival(p), Stored(None, p),
             DeletionToldLate(p), Tick(), FaultDue(Fault(name="f", at=0.0, action="DeletePod")),
             EvictionDue("u", 0.0)]
    tl = Timeline()
    for e in reversed(kinds):
        tl.push(0.0, e)
    assert drain(tl, 0.0) == kinds


def test_drop_takes_off_only_what_matches():
    p, q = pod("p"), pod("q")
    tl = Timeline()
    tl.push(1.0, EvictionDue(p.uid, 1.0))
    keep = EvictionDue(q.uid, 2.0)
    tl.push(2.0, keep)
    gone = PodGone(p)
    tl.push(3.0, gone)
    tl.drop(lambda e: isinstance(e, EvictionDue) and e.uid == p.uid)
    assert len(tl) == 2
    tl.drop(lambda e: isinstance(e, PodGone) and e.pod is q)  # none: nothing changes
    assert len(tl) == 2
    assert drain(tl, 10.0) == [keep, gone]


def test_in_order_lists_without_taking_off():
    p, q = pod("p"), pod("q")
    tl = Timeline()
    tl.push(9.0, Arrival(q))
    tl.push(1.0, Arrival(p))
    tl.push(1.0, Tick())
    assert [e.pod.name for e in tl.in_order() if isinstance(e, Arrival)] == ["p", "q"]
    assert len(tl) == 3


def test_typed_dispatch_needs_no_cast():
    """Each event carries its own fields: a match on the type gives them, typed."""
    p = pod("p")
    seen = []
    for e in (Arrival(p), EvictionDue("u", 4.0), Stored(None, p), Tick()):
        match e:
            case Arrival(pod=x):
                seen.append(("arrival", x.name))
            case EvictionDue(uid=uid, at=at):
                seen.append(("evict", uid, at))
            case Stored(old=None, new=new):
                seen.append(("added", new.name))
            case Tick():
                seen.append(("tick",))
    assert seen == [("arrival", "p"), ("evict", "u", 4.0), ("added", "p"), ("tick",)]
