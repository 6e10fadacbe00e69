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

from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker, placed


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
    checker = new_checker()
    names: list[str] = []
    with_pods: set[str] = set()
    scheduled: list[Pod] = []
    last: str | None = None

    def put(pod: Pod, name: str) -> None:
        checker.add_pod(placed(pod, name))
        with_pods.add(name)
        scheduled.append(pod)

    for group in groups:
        pods = group.pods
        i = 0
        while i < len(pods):  # tryToScheduleOnExistingNodes
            name = checker.fits_any(pods[i], names) if names else None
            if name is None:
                break
            put(pods[i], name)
            i += 1
        rest = pods[i:]
        fresh = 0  # pods of this group on ``last``, a node that was empty when they came
        j = 0
        while j < len(rest):  # tryToScheduleOnNewNodes
            pod = rest[j]
            if last is not None and checker.fits(pod, last):
                put(pod, last)
                fresh += 1 if fresh else 0
                j += 1
                continue
            if last is not None and last not in with_pods:
                break  # an empty new node did not take it: another would not either
            if fresh and checker.reads_only_resources(pod):
                # a new node takes exactly as many of these identical pods as the last one,
                # which took them from empty: the checks would repeat, their answers known
                j += _fill(rest[j:], fresh, limit - len(names), new_node, names, checker, put)
                last = names[-1]
                break
            if len(names) >= limit:
                break
            node = new_node(len(names))
            checker.add_node(node)
            names.append(node.name)
            last = node.name
            if not checker.fits(pod, last):
                break
            put(pod, last)
            fresh = 1
            j += 1
    return Estimate(len(with_pods), scheduled)


def _fill(pods: list[Pod], per_node: int, room: int, new_node: Callable[[int], Node],
          names: list[str], checker: PredicateChecker, put: Callable[[Pod, str], None]
          ) -> int:
    """``pods`` onto new nodes, ``per_node`` each, at most ``room`` nodes; how many went."""
    done = 0
    while done < len(pods) and room > 0:
        node = new_node(len(names))
        checker.add_node(node)
        names.append(node.name)
        room -= 1
        for pod in pods[done:done + per_node]:
            put(pod, node.name)
        done = min(done + per_node, len(pods))
    return done
