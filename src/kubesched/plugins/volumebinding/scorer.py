"""VolumeBinding's Score by storage utilisation (upstream ``volumebinding/scorer.go`` and
``volume_binding.go``'s Score, StorageCapacityScoring).

A node's score averages, over the storage classes of the pod's claims, a broken linear
function of each class's utilisation ``requested * 100 / capacity`` (Go integer division);
a class with no capacity, or more requested than its capacity, counts as fully used. The
average is rounded half away from zero (Go's ``math.Round``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from kubesched.plugins.helper import build_broken_linear_function
from kubesched.plugins.volumebinding.binder import PodVolumes

MAX_UTILIZATION = 100
MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(slots=True)
class StorageResource:
    requested: int = 0
    capacity: int = 0


ClassResources = Mapping[str, StorageResource]
Scorer = Callable[[ClassResources], int]


def build_scorer(shape_args: Sequence[Mapping[str, int]]) -> Scorer:
    """``buildScorerFunction`` over VolumeBindingArgs' shape (scores 0–10, scaled to 0–100)."""
    raw = build_broken_linear_function(
        [(int(p.get("utilization", 0)),
          int(p.get("score", 0)) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
         for p in shape_args])

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(resources: ClassResources) -> int:
        if not resources:
            return 0
        total = sum(class_score(r.requested, r.capacity) for r in resources.values())
        return math.floor(total / len(resources) + 0.5)  # scores are never negative

    return scorer


def _value(q: int | Fraction | None) -> int:
    """``Quantity.Value()`` of an exact byte count (rounded up); a missing one counts 0
    (upstream dereferences it: a CSIStorageCapacity without ``capacity`` would panic)."""
    return 0 if q is None else math.ceil(q)


def class_resources(pod_volumes: PodVolumes) -> dict[str, StorageResource]:
    """What Score sums per storage class: the static bindings' requests against their
    volumes' sizes; without static bindings, the claims to provision against the
    CSIStorageCapacity found for the node (the capacity is the class's, so it is set, not
    added). Upstream also takes the static branch when StorageCapacityScoring is off, but
    then it builds no scorer, so that branch never scores."""
    out: dict[str, StorageResource] = {}
    if pod_volumes.static_bindings:
        for b in pod_volumes.static_bindings or []:
            # BindingInfo.StorageClassName: the volume's spec field
            r = out.setdefault(b.pv.spec.storage_class_name, StorageResource())
            r.requested += _value(b.pvc.spec.request)
            r.capacity += _value(b.pv.spec.capacity)
        return out
    for p in pod_volumes.dynamic_provisions or []:
        if p.node_capacity is None:
            continue
        r = out.setdefault(p.pvc.spec.storage_class_name or "", StorageResource())
        r.capacity = _value(p.node_capacity.capacity)
        r.requested += _value(p.pvc.spec.request)
    return out
