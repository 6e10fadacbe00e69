"""The claims' list kept by ``replace_claim`` / ``remove_claim`` through the index's recorded
positions (and its claims-by-pod index) is what plain list edits give, on random sequences
of adds, replacements and removals; the allocated state the index keeps by counting, and
what it tells moved between two states (the DynamicResources memo's input)."""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.dra.store import (
    AllocatedState,
    dra_index,
    pod_reference,
    remove_claim,
    replace_claim,
)
from kubesched.api.dra.types import (
    AllocationResult,
    DeviceClaim,
    DeviceRequestAllocationResult,
    ResourceClaim,
)
from kubesched.api.types import ObjectMeta, OwnerReference


def _claim(i: int, rng: random.Random) -> ResourceClaim:
    owner = [OwnerReference(kind="Pod", name=f"p{i % 5}", uid=f"p{i % 5}", controller=True)]
    return ResourceClaim(metadata=ObjectMeta(name=f"c{i}", namespace="ns", uid=f"c{i}",
                                             owner_references=owner if rng.random() < 0.5
                                             else []),
                         spec=DeviceClaim())


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_claims_list_and_pod_index_follow_every_change(seed: int) -> None:
    rng = random.Random(seed)
    objects: dict[str, list[object]] = {"ResourceClaim": []}
    model: list[ResourceClaim] = []  # the list as plain edits leave it
    for _ in range(rng.randint(1, 400)):
        i = rng.randint(0, 30)
        op = rng.random()
        current = next((c for c in model if c.name == f"c{i}"), None)
        if op < 0.5:
            new = _claim(i, rng) if current is None else dataclasses.replace(
                current, reserved_for=(pod_reference(f"p{rng.randint(0, 6)}",
                                                     f"p{rng.randint(0, 6)}"),)
                if rng.random() < 0.6 else ())
            replace_claim(objects, new)  # type: ignore[arg-type]
            if current is None:
                model.append(new)
            else:
                model[model.index(current)] = new
        elif current is not None:
            remove_claim(objects, current)  # type: ignore[arg-type]
            model.remove(current)
        assert [c.name for c in objects["ResourceClaim"]] == [c.name for c in model]  # type: ignore[attr-defined]
        assert all(a is b for a, b in zip(objects["ResourceClaim"], model, strict=True))
        idx = dra_index(objects)  # type: ignore[arg-type]
        for p in range(7):
            uid = f"p{p}"
            want = [c for c in model
                    if any(r.uid == uid for r in c.reserved_for)
                    or any(o.uid == uid and o.controller and o.kind == "Pod"
                           for o in c.metadata.owner_references)]
            assert idx.claims_of_pod(uid) == want


def _allocated(i: int, rng: random.Random) -> ResourceClaim:
    """Claim ``c<i>`` allocated on random devices of pool ``p``: held exclusively, with
    admin access, or shared (a shareID, consuming some capacity)."""
    results = []
    for k in range(rng.randint(0, 3)):
        kind = rng.random()
        results.append(DeviceRequestAllocationResult(
            request=f"r{k}", driver="drv", pool="p", device=f"d{rng.randint(0, 5)}",
            admin_access=True if kind < 0.1 else None,
            share_id=f"s{i}-{k}" if kind > 0.5 else None,
            consumed_capacity={"slots": Fraction(rng.randint(0, 2))} if kind > 0.5 else {}))
    return ResourceClaim(metadata=ObjectMeta(name=f"c{i}", namespace="ns", uid=f"c{i}"),
                         spec=DeviceClaim(), allocation=AllocationResult(tuple(results))
                         if results or rng.random() < 0.5 else None)


def _difference(a: AllocatedState, b: AllocatedState) -> set[tuple[str, str, str]]:
    out = a.devices ^ b.devices
    out |= a.shared ^ b.shared
    out |= {d for d in a.capacity.keys() | b.capacity.keys()
            if a.capacity.get(d) != b.capacity.get(d)}
    return out


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), consumable=st.booleans())
def test_allocated_state_follows_every_change_and_knows_what_moved(seed: int,
                                                                   consumable: bool) -> None:
    """The index's allocated state (kept by counting as claims change) is the one built from
    all claims afresh (GatherAllocatedState), and ``changed_since`` names at least every
    device whose part of it changed — held, shared or consumed capacity — in-flight claims
    included."""
    rng = random.Random(seed)
    objects: dict[str, list[object]] = {"ResourceClaim": []}
    prev: AllocatedState | None = None
    for _ in range(rng.randint(1, 60)):
        i = rng.randint(0, 8)
        idx = dra_index(objects)  # type: ignore[arg-type]
        current = idx.claims.get(f"ns/c{i}")
        if current is not None and rng.random() < 0.3:
            remove_claim(objects, current)  # type: ignore[arg-type]
        else:
            replace_claim(objects, _allocated(i, rng))  # type: ignore[arg-type]
        in_flight = [_allocated(100 + k, rng) for k in range(rng.randint(0, 2))]
        state = dra_index(objects).allocated_state(consumable, in_flight)  # type: ignore[arg-type]
        fresh = AllocatedState()
        for c in [*objects["ResourceClaim"], *in_flight]:
            fresh.add(c, consumable)  # type: ignore[arg-type]
        assert (state.devices, state.shared, state.capacity) == \
            (fresh.devices, fresh.shared, fresh.capacity)
        if prev is not None:
            changed = state.changed_since(prev)
            if prev.index is state.index:
                assert changed is not None
                assert _difference(state, prev) <= set(changed)
        prev = state
    # a state extended after it was taken is not trusted
    assert prev is not None
    later = dra_index(objects).allocated_state(consumable)  # type: ignore[arg-type]
    later.add(_allocated(200, rng), consumable)
    assert later.changed_since(prev) is None and prev.changed_since(later) is None
