"""cluster-autoscaler's scale-down simulation, with its default options.

A node is a candidate when it belongs to a node group above its ``minSize``, is not
annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"``, and its
utilisation — the larger of requested cpu / allocatable cpu and requested memory /
allocatable memory, every pod on it counted (core/scaledown/eligibility, utilization) — is
below the threshold. It is removed when every pod on it that must move may be evicted (the
drainability rules of simulator/drainability, below) and fits on another node that stays
(the profile's own filters, the pods already moved counted); nodes are tried in name order,
each removal kept for the next.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.nodegroups import GROUP_LABEL, NodeGroup
from kubesched.api.policy import PodDisruptionBudget
from kubesched.api.resources import pod_requests
from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker, placed

DEFAULT_UTILIZATION_THRESHOLD = 0.5  # --scale-down-utilization-threshold
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# the controllers cluster-autoscaler knows (--skip-nodes-with-custom-controller-pods=true:
# a pod any other controller owns counts as not replicated)
REPLICATED_KINDS = frozenset({"ReplicationController", "ReplicaSet", "StatefulSet", "Job",
                              "DaemonSet"})


@dataclass
class ScaleDownResult:
    removed: list[str] = field(default_factory=list)
    # candidate node → why it stays (the first reason found)
    kept: dict[str, str] = field(default_factory=dict)


def utilization(node: Node, pods: Iterable[Pod]) -> float:
    cpu = mem = 0
    for pod in pods:
        req = pod_requests(pod)
        cpu += req.get("cpu", 0)
        mem += req.get("memory", 0)
    alloc = node.status.allocatable
    out = 0.0
    for used, have in ((cpu, alloc.get("cpu", 0)), (mem, alloc.get("memory", 0))):
        if have > 0:
            out = max(out, used / have)
    return out


def _controller_kind(pod: Pod) -> str | None:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref.kind
    return None


def _stays(pod: Pod) -> bool:
    """Pods the drain leaves where they are: DaemonSet and mirror pods, finished pods."""
    return (_controller_kind(pod) == "DaemonSet" or MIRROR_ANNOTATION in pod.annotations
            or pod.status.phase in ("Succeeded", "Failed"))


def pods_to_move(pods: Iterable[Pod]) -> list[Pod]:
    """The pods a drain evicts (the others stay: ``_stays``)."""
    return [p for p in pods if not _stays(p)]


def _local_storage(pod: Pod) -> bool:
    allowed = set(filter(None, pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",")))
    for v in pod.spec.volumes:
        src = v.source or {}
        empty = src.get("emptyDir")
        local = "hostPath" in src or (
            "emptyDir" in src and (empty or {}).get("medium") != "Memory")
        if local and v.name not in allowed:
            return True
    return False


def blocking_reason(pod: Pod, pdbs: list[PodDisruptionBudget]) -> str | None:
    """Why ``pod`` stops its node's removal (drainability rules with the defaults
    --skip-nodes-with-system-pods, --skip-nodes-with-local-storage and
    --skip-nodes-with-custom-controller-pods all true), or None."""
    safe = pod.annotations.get(SAFE_TO_EVICT)
    if safe == "false":
        return f"pod {pod.key} is annotated {SAFE_TO_EVICT}: \"false\""
    if safe == "true":
        return None
    kind = _controller_kind(pod)
    if kind is None:
        return f"pod {pod.key} has no controller"
    if kind not in REPLICATED_KINDS:
        return f"pod {pod.key} is owned by a {kind}, not a controller cluster-autoscaler knows"
    if pod.namespace == "kube-system" and not any(
            p.namespace == "kube-system" and label_selector_matches(p.selector, pod.labels)
            for p in pdbs):
        return f"pod {pod.key} is in kube-system and no PodDisruptionBudget covers it"
    if _local_storage(pod):
        return f"pod {pod.key} has local storage"
    return None


def _matching(pod: Pod, pdbs: list[PodDisruptionBudget]) -> list[int]:
    return [i for i, p in enumerate(pdbs)
            if p.namespace == pod.namespace and p.selector is not None
            and label_selector_matches(p.selector, pod.labels)]


def scale_down(nodes: list[Node], pods_on: Mapping[str, list[Pod]], groups: list[NodeGroup],
               sizes: Mapping[str, int], pdbs: list[PodDisruptionBudget],
               all_pods: list[Pod], objects: Mapping[str, list[Any]],
               checker: PredicateChecker, threshold: float = DEFAULT_UTILIZATION_THRESHOLD,
               candidates: Collection[str] | None = None) -> ScaleDownResult:
    """``checker`` holds ``nodes`` and their pods; it is left as the removals leave it.
    ``candidates``: the only nodes that may go (the others only take pods; None: any), and
    the only ones ``pods_on`` must list."""
    by_name = {g.name: g for g in groups}
    size = dict(sizes)
    budget = [p.disruptions_allowed(all_pods, objects) for p in pdbs]
    out = ScaleDownResult()
    removed: set[str] = set()
    order = [n.name for n in nodes]
    for node in sorted(nodes, key=lambda n: n.name):
        group = by_name.get(node.metadata.labels.get(GROUP_LABEL, ""))
        if group is None or node.metadata.annotations.get(SCALE_DOWN_DISABLED) == "true" \
                or (candidates is not None and node.name not in candidates):
            continue
        pods = pods_on.get(node.name, [])
        if utilization(node, pods) >= threshold:
            continue
        if size[group.name] <= group.min_size:
            out.kept[node.name] = f"node group {group.name} is at its minSize"
            continue
        movers = pods_to_move(pods)
        reason = next(filter(None, (blocking_reason(p, pdbs) for p in movers)), None)
        used = [0] * len(pdbs)
        for p in movers:
            for i in _matching(p, pdbs):
                used[i] += 1
        short = next((pdbs[i] for i, n in enumerate(used) if n > budget[i]), None)
        if reason is None and short is not None:
            reason = (f"PodDisruptionBudget {short.namespace}/{short.name} allows "
                      f"{max(budget[pdbs.index(short)], 0)} disruption(s)")
        if reason is None:
            reason = _move(node, movers, order, removed, checker)
        if reason is not None:
            out.kept[node.name] = reason
            continue
        for i, n in enumerate(used):
            budget[i] -= n
        removed.add(node.name)
        size[group.name] -= 1
        out.removed.append(node.name)
    return out


def _move(node: Node, movers: list[Pod], order: list[str], removed: set[str],
          checker: PredicateChecker) -> str | None:
    """Places ``movers`` on the other nodes that stay and removes ``node`` from
    ``checker``; or, when one does not fit, leaves ``checker`` as it was and says which."""
    for p in movers:
        checker.remove_pod(p)
    dest = [n for n in order if n != node.name and n not in removed]
    moved: list[Pod] = []
    for p in movers:
        # asked as a pending pod: its nodeName would pin it to the node it leaves
        target = checker.fits_any(placed(p, ""), dest)
        if target is None:
            for m in moved:
                checker.remove_pod(m)
            for q in movers:
                checker.add_pod(q)
            return f"pod {p.key} fits on no other node"
        copy = placed(p, target)
        checker.add_pod(copy)
        moved.append(copy)
    checker.remove_node(node)
    return None
