"""cluster-autoscaler's estimator: how many new nodes of a group the pending pods need.

As ``estimator/binpacking_estimator.go`` with ``decreasing_pod_orderer.go``: pods in
equivalence groups (same controller, equal spec and labels), the groups ordered by
decreasing ``cpu/allocatable cpu + memory/allocatable memory`` of the template; then, per
group, its pods first fit onto the nodes already imagined, and once one does not, the rest
onto the last node added or a new one — stopping when a pod does not fit an empty new node
or the group's room (``maxSize`` − current size) is used up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.types import Node, Pod, bound_copy
from kubesched.autoscaler.checker import PredicateChecker


@dataclass
class EquivalenceGroup:
    pods: list[Pod] = field(default_factory=list)

    @property
    def exemplar(self) -> Pod:
        return self.pods[0]


def _controller_uid(pod: Pod) -> str | None:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref.uid or f"{ref.kind}/{pod.namespace}/{ref.name}"
    return None


def equivalence_groups(pods: list[Pod]) -> list[EquivalenceGroup]:
    """Pods that the estimator may treat alike, in the order their first pods come: a
    controller's pods with equal spec and labels share a group; a pod with no controller is
    a group of its own (core/scaleup/equivalence)."""
    groups: list[EquivalenceGroup] = []
    by_controller: dict[str, list[EquivalenceGroup]] = {}
    for pod in pods:
        uid = _controller_uid(pod)
        if uid is None:
            groups.append(EquivalenceGroup([pod]))
            continue
        candidates = by_controller.setdefault(uid, [])
        for g in candidates:
            ex = g.exemplar
            if (ex.spec is pod.spec or ex.spec == pod.spec) and ex.labels == pod.labels:
                g.pods.append(pod)
                break
        else:
            g = EquivalenceGroup([pod])
            candidates.append(g)
            groups.append(g)
    return groups


def container_requests(pod: Pod) -> tuple[int, int]:
    """The sum of the containers' cpu (milli) and memory requests — what the pod orderer and
    the least-waste expander read (not init containers or overhead)."""
    cpu = mem = 0
    for c in pod.spec.containers:
        cpu += c.requests.get("cpu", 0)
        mem += c.requests.get("memory", 0)
    return cpu, mem


def pod_score(pod: Pod, template: Node) -> float:
    cpu, mem = container_requests(pod)
    alloc = template.status.allocatable
    score = 0.0
    if alloc.get("cpu", 0) > 0:
        score += cpu / alloc["cpu"]
    if alloc.get("memory", 0) > 0:
        score += mem / alloc["memory"]
    return score


def order_groups(groups: list[EquivalenceGroup], template: Node) -> list[EquivalenceGroup]:
    """The decreasing pod orderer (a stable sort: equal scores keep their order)."""
    return sorted(groups, key=lambda g: -pod_score(g.exemplar, template))


@dataclass
class Estimate:
    node_count: int
    pods: list[Pod]  # the pods the new nodes would hold, in the order they were placed


def estimate(groups: list[EquivalenceGroup], new_node: Callable[[int], Node], limit: int,
             new_checker: Callable[[], PredicateChecker]) -> Estimate:
    """Binpacking onto new nodes ``new_node(0)``, ``new_node(1)``, … (at most ``limit``);
    ``groups`` already ordered. The nodes are imagined in a snapshot of their own (see
    docs/autoscaling.md)."""
    return _Binpacking(new_node, limit, new_checker()).run(groups)


class _Binpacking:
    """One estimate. A group whose pods' filters read only resources
    (``PredicateChecker.reads_only_resources``) is placed by counts: how many of its
    identical pods each node takes (``PredicateChecker.capacities``), the same answers its
    pods would get one by one. Those pods are kept out of the checker's snapshot, as
    per-node column changes (``_Counted``), until a group that reads more comes."""

    def __init__(self, new_node: Callable[[int], Node], limit: int,
                 checker: PredicateChecker, *, counts: bool = True) -> None:
        self.counts = counts  # False: every group pod by pod (the tests' reference)
        self.new_node = new_node
        self.limit = limit
        self.checker = checker
        self.names: list[str] = []
        self.with_pods: set[str] = set()
        self.scheduled: list[Pod] = []
        self.last: str | None = None
        self.counted = _Counted(checker)

    def run(self, groups: list[EquivalenceGroup]) -> Estimate:
        for group in groups:
            if self.counts and self.checker.reads_only_resources(group.exemplar):
                self._by_counts(group.pods)
            else:
                self.counted.place_all(self.names)
                self._one_by_one(group.pods)
        return Estimate(len(self.with_pods), self.scheduled)

    def _add_node(self) -> str:
        node = self.new_node(len(self.names))
        self.checker.add_node(node)
        self.names.append(node.name)
        self.counted.grow()
        self.last = node.name
        return node.name

    def _by_counts(self, pods: list[Pod]) -> None:
        """As ``_one_by_one`` for identical pods whose filters read only resources."""
        names, counted, checker = self.names, self.counted, self.checker
        ex = pods[0]
        vec = checker.request_vector(ex)
        i = 0
        if names:  # tryToScheduleOnExistingNodes: each pod on the first node it fits
            caps = checker.capacities(ex, names, counted.requested(), counted.count(),
                                      len(pods))
            for at in np.flatnonzero(caps).tolist():
                take = min(int(caps[at]), len(pods) - i)
                counted.put(at, pods[i:i + take], vec)
                self._put(pods[i:i + take], names[at])
                i += take
                if i == len(pods):
                    return
        # the next pod fits none of the nodes, ``last`` included
        if self.last is not None and self.last not in self.with_pods:
            return  # an empty new node did not take it: another would not either
        if len(names) >= self.limit:
            return
        per = 0
        while i < len(pods) and len(names) < self.limit:
            name = self._add_node()
            if not per:  # a new node takes as many as the first one took from empty
                width = checker.width()
                per = int(checker.capacities(ex, [name], np.zeros((width, 1), dtype=np.int64),
                                             np.zeros(1, dtype=np.int64), len(pods) - i)[0])
                if not per:
                    return
            take = min(per, len(pods) - i)
            counted.put(len(names) - 1, pods[i:i + take], vec)
            self._put(pods[i:i + take], name)
            i += take

    def _put(self, pods: list[Pod], name: str) -> None:
        self.with_pods.add(name)
        self.scheduled.extend(pods)

    def _one_by_one(self, pods: list[Pod]) -> None:
        """estimator/binpacking_estimator.go's loop, pod by pod, each placed in the
        checker's snapshot."""
        checker, names = self.checker, self.names

        def put(pod: Pod, name: str) -> None:
            checker.add_pod(bound_copy(pod, name))
            self._put([pod], name)

        i = 0
        while i < len(pods):  # tryToScheduleOnExistingNodes
            name = checker.fits_any(pods[i], names) if names else None
            if name is None:
                break
            put(pods[i], name)
            i += 1
        while i < len(pods):  # tryToScheduleOnNewNodes
            pod = pods[i]
            last = self.last
            if last is not None and checker.fits(pod, last):
                put(pod, last)
                i += 1
                continue
            if last is not None and last not in self.with_pods:
                break  # an empty new node did not take it: another would not either
            if len(names) >= self.limit:
                break
            last = self._add_node()
            if not checker.fits(pod, last):
                break
            put(pod, last)
            i += 1


class _Counted:
    """Pods placed by counts, not in the checker's snapshot: per node of the estimate (in
    the order added), their summed requests and number, and the pods themselves to place
    in the snapshot when a group needs to see them."""

    def __init__(self, checker: PredicateChecker) -> None:
        self.checker = checker
        self._req = np.zeros((checker.width(), 0), dtype=np.int64)
        self._cnt = np.zeros(0, dtype=np.int64)
        self._n = 0
        self.pods: list[tuple[int, list[Pod]]] = []  # (node position, pods)

    def grow(self) -> None:
        self._n += 1
        if self._n > len(self._cnt):
            more = max(16, len(self._cnt))
            self._req = np.hstack([self._req, np.zeros((self._req.shape[0], more),
                                                       dtype=np.int64)])
            self._cnt = np.concatenate([self._cnt, np.zeros(more, dtype=np.int64)])

    def _widen(self, width: int) -> None:
        if self._req.shape[0] < width:
            self._req = np.vstack([self._req, np.zeros(
                (width - self._req.shape[0], self._req.shape[1]), dtype=np.int64)])

    def requested(self) -> np.ndarray:
        return self._req[:, :self._n]

    def count(self) -> np.ndarray:
        return self._cnt[:self._n]

    def put(self, at: int, pods: list[Pod], vec: np.ndarray) -> None:
        """``pods`` on the node at ``at``, each requesting ``vec``."""
        self._widen(len(vec))
        self._req[:len(vec), at] += vec * len(pods)
        self._cnt[at] += len(pods)
        self.pods.append((at, pods))

    def place_all(self, names: list[str]) -> None:
        """Every counted pod into the checker's snapshot, on its node (``names``: the nodes
        in the order added)."""
        if not self.pods:
            return
        for at, pods in self.pods:
            for pod in pods:
                self.checker.add_pod(bound_copy(pod, names[at]))
        self.pods = []
        self._req[:] = 0
        self._cnt[:] = 0
