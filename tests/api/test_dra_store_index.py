"""The claims' list kept by ``replace_claim`` / ``remove_claim`` through the index's recorded
positions (and its claims-by-pod index) is what plain list edits give, on random sequences
of adds, replacements and removals."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.dra.store import dra_index, pod_reference, remove_claim, replace_claim
from kubesched.api.dra.types import DeviceClaim, ResourceClaim
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
