"""cluster-autoscaler's scale-down simulation, with its default options.

A node is a candidate when it belongs to a node group above its ``minSize``, is not
annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"``, and its
utilisation — the larger of requested cpu / allocatable cpu and requested memory /
allocatable memory, every pod on it counted; on a node with GPUs, requested GPUs /
allocatable GPUs alone (core/scaledown/eligibility, simulator/utilization) — is below the
threshold (the GPU threshold on a node with GPUs). It is removed when every pod on it that
must move may be evicted (the drainability rules of simulator/drainability, below) and fits
on another node that stays (the profile's own filters, the pods already moved counted);
nodes are tried in name order, each removal kept for the next.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.nodegroups import GROUP_LABEL, NodeGroup
from kubesched.api.policy import PodDisruptionBudget
from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.column_moves import ColumnMoves

DEFAULT_UTILIZATION_THRESHOLD = 0.5  # --scale-down-utilization-threshold
DEFAULT_GPU_UTILIZATION_THRESHOLD = 0.5  # --scale-down-gpu-utilization-threshold
# utils/gpu GPUVendorResourceNames: a node with one of these allocatable (the first, in this
# order) is a GPU node (cluster-autoscaler also asks the cloud provider's GPU label)
GPU_RESOURCES = ("nvidia.com/gpu", "habana.ai/gaudi", "gpu.intel.com/xe", "amd.com/gpu",
                 "microsoft.com/directx")
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


def gpu_resource(node: Node) -> str | None:
    """The GPU resource a node has allocatable (not zero), or None: then it is no GPU node."""
    alloc = node.status.allocatable
    return next((r for r in GPU_RESOURCES if alloc.get(r, 0) > 0), None)


def utilization(node: Node, pods: Iterable[Pod]) -> float:
    """simulator/utilization's ``Calculate``: on a GPU node, its GPUs' utilisation;
    otherwise the larger of cpu's and memory's, and 0 when the node has no cpu or no memory
    allocatable (cluster-autoscaler's error there leaves the utilisation at zero)."""
    alloc = node.status.allocatable
    gpu = gpu_resource(node)
    names = (gpu,) if gpu is not None else ("cpu", "memory")
    if any(alloc.get(r, 0) <= 0 for r in names):
        return 0.0
    used = dict.fromkeys(names, 0)
    for pod in pods:
        req = pod.requests  # (PodRequests, as parsed)
        for r in names:
            used[r] += req.get(r, 0)
    return max(used[r] / alloc[r] for r in names)


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
               candidates: Collection[str] | None = None, *,
               gpu_threshold: float = DEFAULT_GPU_UTILIZATION_THRESHOLD) -> ScaleDownResult:
    """``checker`` holds ``nodes`` and their pods; it is left so (the removals are
    simulated on it and undone). ``threshold`` applies to nodes without GPUs,
    ``gpu_threshold`` to those with.
    ``candidates``: the only nodes that may go (the others only take pods; None: any), and
    the only ones ``pods_on`` must list."""
    by_name = {g.name: g for g in groups}
    size = dict(sizes)
    budget = [p.disruptions_allowed(all_pods, objects) for p in pdbs]
    out = ScaleDownResult()
    removed: set[str] = set()
    cursors = _Cursors([n.name for n in nodes])
    # the pods on each node as the removals so far leave them (core/scaledown/planner
    # simulates each removal on the snapshot the earlier ones changed); the utilisation is
    # the cluster's, computed before (eligibility)
    now = {name: list(pods) for name, pods in pods_on.items()}
    columns = ColumnMoves.of(checker, cursors.order, [
        p for name, pods in pods_on.items() if candidates is None or name in candidates
        for p in pods_to_move(pods)])
    for node in sorted(nodes, key=lambda n: n.name):
        group = by_name.get(node.metadata.labels.get(GROUP_LABEL, ""))
        if group is None or node.metadata.annotations.get(SCALE_DOWN_DISABLED) == "true" \
                or (candidates is not None and node.name not in candidates):
            continue
        pods = pods_on.get(node.name, [])
        limit = threshold if gpu_resource(node) is None else gpu_threshold
        if utilization(node, pods) >= limit:
            continue
        if size[group.name] <= group.min_size:
            out.kept[node.name] = f"node group {group.name} is at its minSize"
            continue
        movers = pods_to_move(now.get(node.name, []))
        reason = next(filter(None, (blocking_reason(p, pdbs) for p in movers)), None)
        used = [0] * len(pdbs)
        for p in movers:
            for i in _matching(p, pdbs):
                used[i] += 1
        short = next((pdbs[i] for i, n in enumerate(used) if n > budget[i]), None)
        if reason is None and short is not None:
            reason = (f"PodDisruptionBudget {short.namespace}/{short.name} allows "
                      f"{max(budget[pdbs.index(short)], 0)} disruption(s)")
        moved: list[tuple[Pod, str]] = []
        if reason is None:
            reason, moved = (_move(node, movers, removed, checker, cursors) if columns is None
                             else columns.move(node.name, movers, cursors.start))
        if reason is not None:
            out.kept[node.name] = reason
            continue
        for p, target in moved:
            now.setdefault(target, []).append(p)
        for i, n in enumerate(used):
            budget[i] -= n
        removed.add(node.name)
        size[group.name] -= 1
        out.removed.append(node.name)
    if columns is None:
        _put_back(checker, {n.name: n for n in nodes}, out.removed, pods_on)
    return out


def _put_back(checker: PredicateChecker, nodes: Mapping[str, Node], removed: list[str],
              pods_on: Mapping[str, list[Pod]]) -> None:
    """``_move``'s removals undone, in the order they were made: each node back with its
    pods, the copies of the pods it moved taken off the nodes they went to (by uid: a copy
    moved on again by a later removal is that one; gone already when it went with a
    node removed after its own)."""
    for name in removed:
        pods = pods_on.get(name, [])
        for p in pods_to_move(pods):
            with contextlib.suppress(KeyError):
                checker.remove_pod(p)
        checker.add_node(nodes[name])
        for p in pods:
            checker.add_pod(p)


class _Cursors:
    """Per pod signature, how far along the nodes' order a pod of it need not look during
    one scale-down simulation: the nodes before did not fit such a pod, judged on columns
    that only fill up meanwhile (``PredicateChecker.first_fit``). Pods are only added to
    the nodes that stay; the candidate whose pods are taken off (skipped as their
    destination, not judged) is then removed, or put back as it was with the cursors of
    before."""

    def __init__(self, order: list[str]) -> None:
        self.order = order
        self.position = {n: i for i, n in enumerate(order)}
        self.start: dict[Hashable, int] = {}


def _move(node: Node, movers: list[Pod], removed: set[str], checker: PredicateChecker,
          cursors: _Cursors) -> tuple[str | None, list[tuple[Pod, str]]]:
    """Places ``movers`` on the other nodes that stay and removes ``node`` from
    ``checker``: (None, [(pod's copy bound there, that node)]); or, when one does not fit,
    leaves ``checker`` as it was and says which: (reason, [])."""
    for p in movers:
        checker.remove_pod(p)
    order = cursors.order

    def dest(start: int) -> Iterator[str]:
        """The other nodes that stay, from ``start`` in the order (read as far as needed:
        most pods fit on one of the first)."""
        return (n for n in itertools.islice(order, start, None)
                if n != node.name and n not in removed)

    before = dict(cursors.start)
    moved: list[tuple[Pod, str]] = []
    for p in movers:
        ask = checker.as_pending(p)
        key = checker.pending_signature(p)
        start = cursors.start.get(key, 0) if key is not None else 0
        target, columns = checker.first_fit(ask, dest(start))
        if start and not columns:  # judged otherwise now: the nodes skipped may fit it
            target, columns = checker.first_fit(ask, dest(0))
        if key is not None and columns:
            cursors.start[key] = len(order) if target is None else cursors.position[target]
        if target is None:
            for m, _ in moved:
                checker.remove_pod(m)
            for q in movers:
                checker.add_pod(q)
            cursors.start = before
            return f"pod {p.key} fits on no other node", []
        # (the copy, bound there: put back on this node should a later removal of it fail)
        moved.append((checker.add_moved(p, target), target))
    checker.remove_node(node, later=True)
    return None, moved
