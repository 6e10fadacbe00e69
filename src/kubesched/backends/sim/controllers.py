"""The pod controllers' part the simulator plays when a pod goes away: a ReplicaSet,
ReplicationController, StatefulSet or Job of the scenario that controls the pod creates a
replacement, as its controller would.

When: a ReplicaSet / ReplicationController creates the replacement as soon as the old pod is
terminating (terminating pods are not active); a StatefulSet only once the old pod is gone,
under the same name (a pod's ordinal identity); a Job at once, unless its
``podReplacementPolicy`` is ``Failed`` (set, or implied by a ``podFailurePolicy``), then once
the old pod is gone.

What: a copy of the old pod as its controller's template made it (spec, labels, annotations,
ownerReferences, priority), unbound and pending, with a new uid and — but for a StatefulSet —
a name made as ``generateName`` makes it (the controller's name and ``-``).
"""

from __future__ import annotations

import copy
import random
from typing import Any

from kubesched.api.naming import generate_name, new_uid
from kubesched.api.types import ObjectMeta, OwnerReference, Pod, PodStatus

CONTROLLER_KINDS = ("ReplicaSet", "ReplicationController", "StatefulSet", "Job")


class Controllers:
    def __init__(self, objects: dict[str, list[Any]], seed: int) -> None:
        self._owners: dict[tuple[str, str, str], Any] = {
            (kind, o.metadata.namespace, o.metadata.name): o
            for kind in CONTROLLER_KINDS for o in objects.get(kind, ())}
        # a generator of its own: naming pods must not move the scheduler's tie-breaks
        self.rng = random.Random(f"kubesched-controllers:{seed}")

    def owner(self, pod: Pod) -> tuple[OwnerReference, Any] | None:
        """The pod's controller ownerReference and that object, when the scenario has it."""
        for ref in pod.metadata.owner_references:
            if not ref.controller:
                continue
            # by kind and name, as the scenario's other checks match owners (hand-written
            # scenarios rarely keep uids consistent)
            obj = self._owners.get((ref.kind, pod.namespace, ref.name))
            return (ref, obj) if obj is not None else None
        return None

    def replaces_when_gone(self, pod: Pod) -> bool | None:
        """None: nothing replaces the pod; True: its controller waits until it is gone;
        False: it replaces it as soon as it is terminating."""
        found = self.owner(pod)
        if found is None:
            return None
        ref, obj = found
        if ref.kind == "StatefulSet":
            return True
        if ref.kind == "Job":
            spec = obj.raw.get("spec") or {}
            policy = spec.get("podReplacementPolicy") or (
                "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
            return bool(policy == "Failed")
        return False

    def replacement(self, pod: Pod, taken: set[str]) -> Pod:
        """A new pending pod in place of ``pod``; ``taken`` holds the keys already used (the
        new key is added)."""
        found = self.owner(pod)
        assert found is not None
        ref, _obj = found
        ns = pod.namespace
        if ref.kind == "StatefulSet":
            name = pod.name
        else:
            name = generate_name(f"{ref.name}-", self.rng,
                                 _Prefixed(taken, f"{ns}/"))
        taken.add(f"{ns}/{name}")
        md = pod.metadata
        new = copy.copy(pod)
        new.metadata = ObjectMeta(name=name, namespace=ns, uid=new_uid(self.rng),
                                  labels=dict(md.labels), annotations=dict(md.annotations),
                                  owner_references=list(md.owner_references))
        new.spec = copy.copy(pod.spec)
        new.spec.node_name = ""
        new.status = PodStatus()
        return new


class _Prefixed:
    """``name in taken`` for keys stored as ``namespace/name``."""

    def __init__(self, keys: set[str], prefix: str) -> None:
        self.keys = keys
        self.prefix = prefix

    def __contains__(self, name: object) -> bool:
        return f"{self.prefix}{name}" in self.keys
