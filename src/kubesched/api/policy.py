"""PodDisruptionBudget (policy/v1): parsing, and ``status.disruptionsAllowed`` as the
disruption controller computes it.

The scheduler reads only ``metadata.namespace``, ``spec.selector``,
``status.disruptionsAllowed`` and ``status.disruptedPods`` (DefaultPreemption's
``filterPodsWithPDBViolation``). A scenario may give the status (as ``kubectl get -o yaml``
shows it, or as a test wants it); then it is used as given. Without
``status.disruptionsAllowed`` kubesched computes it from the pods the PDB selects, the way
``pkg/controller/disruption`` does (``getExpectedPodCount``, ``countHealthyPods``,
``updatePdbStatus``), at the moment the scheduler asks — so a budget shrinks as the pods it
protects are preempted.

Differences from the controller, all about information a scenario does not carry:

* a pod counts as healthy when it is bound, not Succeeded/Failed, not terminating, not in
  ``status.disruptedPods``, and has no ``Ready`` condition other than ``True`` (scenario pods
  rarely carry conditions; the kubelet would have marked them Ready);
* the pods considered are the assigned ones the scheduler knows; pending pods only matter to
  the controller through controllers that no running pod belongs to;
* controllers are looked up among the scenario's ReplicaSets, ReplicationControllers and
  StatefulSets (``spec.replicas``, default 1), and for a ReplicaSet a Deployment controls, that
  Deployment (its uid and ``spec.replicas``, as upstream's ``getPodDeployment``). Any other
  owner is not found, so — as the controller's fail-safe does when it cannot compute the
  expected count — the budget allows no disruption.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.parse import (
    _dict,
    _int,
    locate_error,
    parse_label_selector,
    parse_meta,
    parse_time,
)
from kubesched.api.selectors import SelectorError, label_selector_as_selector
from kubesched.api.types import LabelSelector, Named, ObjectMeta, Pod
from kubesched.errors import InputError

IntOrPercent = int | str

_PERCENT = re.compile(r"^[0-9]+%$")


@dataclass(slots=True)
class PodDisruptionBudgetStatus:
    disruptions_allowed: int | None = None  # None: not given, computed when asked
    disrupted_pods: dict[str, float] = field(default_factory=dict)  # pod name → time
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0


@dataclass(slots=True)
class PodDisruptionBudget(Named):
    metadata: ObjectMeta
    selector: LabelSelector | None = None
    min_available: IntOrPercent | None = None
    max_unavailable: IntOrPercent | None = None
    status: PodDisruptionBudgetStatus = field(default_factory=PodDisruptionBudgetStatus)

    kind = "PodDisruptionBudget"

    def disruptions_allowed(self, pods: Iterable[Pod],
                            objects: Mapping[str, list[Any]] | None = None) -> int:
        """``status.disruptionsAllowed``: as given, or computed from ``pods`` (all the pods
        the scheduler knows; the PDB picks its own) and the scenario's controllers."""
        if self.status.disruptions_allowed is not None:
            return self.status.disruptions_allowed
        return compute_disruptions_allowed(self, pods, objects or {})


# ---------------------------------------------------------------- parsing


def _int_or_percent(v: Any, path: str) -> IntOrPercent | None:
    """intstr.IntOrString as PDB validation accepts it: an int ≥ 0, or "N%" with N ≤ 100."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise InputError("must be an integer or a percentage", field=path, value=v)
    if isinstance(v, int):
        if v < 0:
            raise InputError("must be greater than or equal to 0", field=path, value=v)
        return v
    if isinstance(v, str):
        if not _PERCENT.match(v):
            raise InputError("a valid percent string must be a numeric string followed by an "
                             "ending '%' (e.g. '1%',  or '93%')", field=path, value=v)
        if int(v[:-1]) > 100:
            raise InputError("must not be greater than 100%", field=path, value=v)
        return v
    raise InputError("must be an integer or a percentage", field=path, value=v)


def parse_pod_disruption_budget(d: Any, *, source: str | None = None) -> PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget dict → PodDisruptionBudget (validated)."""
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"))
        spec = _dict(d.get("spec"), "spec")
        min_available = _int_or_percent(spec.get("minAvailable"), "spec.minAvailable")
        max_unavailable = _int_or_percent(spec.get("maxUnavailable"), "spec.maxUnavailable")
        if min_available is not None and max_unavailable is not None:
            raise InputError("minAvailable and maxUnavailable cannot be both set",
                             field="spec", value=None)
        selector = parse_label_selector(spec.get("selector"), "spec.selector")
        try:
            label_selector_as_selector(selector)
        except SelectorError as e:
            raise InputError(f"invalid label selector: {e}", field="spec.selector",
                             value=None) from None
        st = _dict(d.get("status"), "status")
        disrupted: dict[str, float] = {}
        for name, t in _dict(st.get("disruptedPods"), "status.disruptedPods").items():
            when = parse_time(t, f"status.disruptedPods[{name}]")
            disrupted[str(name)] = 0.0 if when is None else when
        allowed = _int(st.get("disruptionsAllowed"), "status.disruptionsAllowed")
        if allowed is not None and allowed < 0:
            raise InputError("must be greater than or equal to 0",
                             field="status.disruptionsAllowed", value=allowed)
        status = PodDisruptionBudgetStatus(
            disruptions_allowed=allowed,
            disrupted_pods=disrupted,
            current_healthy=_int(st.get("currentHealthy"), "status.currentHealthy", 0) or 0,
            desired_healthy=_int(st.get("desiredHealthy"), "status.desiredHealthy", 0) or 0,
            expected_pods=_int(st.get("expectedPods"), "status.expectedPods", 0) or 0,
        )
        return PodDisruptionBudget(metadata=meta, selector=selector,
                                   min_available=min_available,
                                   max_unavailable=max_unavailable, status=status)
    except InputError as e:
        raise locate_error(e, "PodDisruptionBudget", d, namespaced=True).located(
            file=source) from None


# ---------------------------------------------------------------- the disruption controller


def scaled_value(v: IntOrPercent, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(v, int):
        return v
    pct = int(v[:-1])
    return -(-pct * total // 100) if round_up else pct * total // 100


def _pod_ready(pod: Pod) -> bool:
    for c in pod.status.conditions:
        if c.type == "Ready":
            return c.status == "True"
    return bool(pod.spec.node_name) and pod.status.phase not in ("Succeeded", "Failed")


def count_healthy_pods(pods: Iterable[Pod], disrupted: Mapping[str, float]) -> int:
    """``countHealthyPods``: ready pods neither terminating nor recently disrupted."""
    n = 0
    for p in pods:
        if p.metadata.deletion_timestamp is not None or p.name in disrupted:
            continue
        if _pod_ready(p):
            n += 1
    return n


def _controller_ref(pod: Pod) -> Any:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref
    return None


def _find_controller(ref: Any, namespace: str, objects: Mapping[str, list[Any]]
                     ) -> tuple[str, int] | None:
    """(controller uid, scale) for a pod's controllerRef, as the controller's finders."""
    if ref.kind not in ("ReplicaSet", "ReplicationController", "StatefulSet"):
        return None
    for obj in objects.get(ref.kind) or []:
        md = obj.metadata
        if md.namespace != namespace or md.name != ref.name:
            continue
        if ref.uid and md.uid != ref.uid:
            continue
        raw = getattr(obj, "raw", None) or {}
        if ref.kind == "ReplicaSet":
            owners = (raw.get("metadata") or {}).get("ownerReferences") or []
            deployment = next((o for o in owners if isinstance(o, dict) and o.get("controller")
                               and o.get("kind") == "Deployment"), None)
            if deployment is not None:  # getPodDeployment: the Deployment's uid and scale
                return _find_deployment(deployment, namespace, objects)
        return md.uid, _replicas(raw)
    return None


def _replicas(raw: Mapping[str, Any]) -> int:
    replicas = (raw.get("spec") or {}).get("replicas")
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1


def _find_deployment(ref: Mapping[str, Any], namespace: str,
                     objects: Mapping[str, list[Any]]) -> tuple[str, int] | None:
    for obj in objects.get("Deployment") or []:
        md = obj.metadata
        if md.namespace != namespace or md.name != ref.get("name"):
            continue
        if ref.get("uid") and md.uid != ref.get("uid"):
            continue
        return md.uid, _replicas(getattr(obj, "raw", None) or {})
    return None


def expected_scale(pods: Iterable[Pod], objects: Mapping[str, list[Any]]) -> int | None:
    """``getExpectedScale``: Σ scale of the pods' controllers; None when a controller is
    missing (the controller's sync fails and its fail-safe allows no disruption)."""
    scales: dict[str, int] = {}
    for p in pods:
        ref = _controller_ref(p)
        if ref is None:
            continue  # unmanaged pod
        key = ref.uid or f"{ref.kind}/{p.namespace}/{ref.name}"
        if key in scales:
            continue
        found = _find_controller(ref, p.namespace, objects)
        if found is None:
            return None
        scales[key] = found[1]
    return sum(scales.values())


def compute_disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Pod],
                                objects: Mapping[str, list[Any]]) -> int:
    """``trySync`` → ``updatePdbStatus``: currentHealthy − desiredHealthy, and 0 when that
    is negative or when the PDB expects no pods."""
    sel = label_selector_as_selector(pdb.selector)
    matching = [p for p in pods if p.namespace == pdb.namespace and sel.matches(p.labels)]
    expected = 0
    desired = 0
    if pdb.max_unavailable is not None:
        scale = expected_scale(matching, objects)
        if scale is None:
            return 0
        expected = scale
        desired = max(expected - scaled_value(pdb.max_unavailable, expected, True), 0)
    elif pdb.min_available is not None:
        if isinstance(pdb.min_available, int):
            desired = pdb.min_available
            expected = len(matching)
        else:
            scale = expected_scale(matching, objects)
            if scale is None:
                return 0
            expected = scale
            desired = scaled_value(pdb.min_available, expected, True)
    healthy = count_healthy_pods(matching, pdb.status.disrupted_pods)
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        return 0
    return allowed
