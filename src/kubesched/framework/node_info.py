"""NodeInfo: a node with the pods on it and their summed requests (per-node form)."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.types import PODS, Node, Pod

WILDCARD_IP = "0.0.0.0"


@dataclass(slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


def pod_has_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)


def pod_has_required_anti_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return a is not None and a.pod_anti_affinity is not None and bool(a.pod_anti_affinity.required)


def pod_host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) of every container port with a host port, sidecars included."""
    out: list[tuple[str, str, int]] = []
    for c in pod.spec.init_containers:
        if c.restart_policy == "Always":
            out.extend((p.host_ip or WILDCARD_IP, p.protocol or "TCP", p.host_port)
                       for p in c.ports if p.host_port > 0)
    for c in pod.spec.containers:
        out.extend((p.host_ip or WILDCARD_IP, p.protocol or "TCP", p.host_port)
                   for p in c.ports if p.host_port > 0)
    return out


class NodeInfo:
    __slots__ = (
        "generation",
        "image_states",
        "node",
        "node_generation",
        "non_zero_cpu",
        "non_zero_memory",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None) -> None:
        self.node = node
        self.pods: list[Pod] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.requested: dict[str, int] = {}
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports: dict[tuple[str, str, int], int] = {}
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = 0
        self.node_generation = 0  # generation at which ``node`` itself last changed

    @property
    def name(self) -> str:
        return self.node.metadata.name if self.node is not None else ""

    @property
    def allocatable(self) -> dict[str, int]:
        return self.node.status.allocatable if self.node is not None else {}

    @property
    def allowed_pod_number(self) -> int:
        return self.allocatable.get(PODS, 0)

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        if pod_has_affinity(pod):
            self.pods_with_affinity.append(pod)
        if pod_has_required_anti_affinity(pod):
            self.pods_with_required_anti_affinity.append(pod)
        self._account(pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove by UID; swaps with the last pod as upstream does. False if absent."""
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            _swap_remove(lst, pod.uid)
        if not _swap_remove(self.pods, pod.uid):
            return False
        self._account(pod, -1)
        return True

    def _account(self, pod: Pod, sign: int) -> None:
        req = self.requested
        for r, v in pod.requests.items():
            req[r] = req.get(r, 0) + sign * v
        self.non_zero_cpu += sign * pod.non_zero_cpu
        self.non_zero_memory += sign * pod.non_zero_memory
        for port in pod_host_ports(pod):
            n = self.used_ports.get(port, 0) + sign
            if n > 0:
                self.used_ports[port] = n
            else:
                self.used_ports.pop(port, None)

    def clone(self) -> NodeInfo:
        c = NodeInfo(self.node)
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.requested = dict(self.requested)
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_memory = self.non_zero_memory
        c.used_ports = dict(self.used_ports)
        c.image_states = self.image_states
        c.generation = self.generation
        c.node_generation = self.node_generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)})"


def _swap_remove(lst: list[Pod], uid: str) -> bool:
    for i, p in enumerate(lst):
        if p.metadata.uid == uid:
            lst[i] = lst[-1]
            lst.pop()
            return True
    return False
