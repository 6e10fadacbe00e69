"""Pods nominated to nodes (upstream ``backend/queue/nominator.go``).

``nominated[node]`` keeps nomination order; ``node_of[uid]`` maps a pod to its node. The
nominator also keeps the Pod object it was given, so a nominated pod that is not in any queue
(e.g. in flight) still resolves to a full Pod rather than upstream's bare name/UID stub.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.api.types import Pod

# pod -> the latest version of it, or None when it no longer exists (upstream's podLister).
PodLister = Callable[[Pod], Pod | None]


class Nominator:
    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self.pod_lister = pod_lister
        self.nominated: dict[str, list[str]] = {}
        self.node_of: dict[str, str] = {}
        self._pods: dict[str, Pod] = {}

    def add(self, pod: Pod, node_name: str | None) -> None:
        """``addNominatedPod``: ``node_name`` None is ModeNoop (use the pod's
        ``status.nominatedNodeName``), a string is ModeOverride ("" clears)."""
        self.delete(pod)
        name = pod.status.nominated_node_name if node_name is None else node_name
        if not name:
            return
        if pod.spec.node_name:
            return
        if self.pod_lister is not None:
            latest = self.pod_lister(pod)
            if latest is None or latest.spec.node_name:
                return
        self.node_of[pod.uid] = name
        self._pods[pod.uid] = pod
        pods = self.nominated.setdefault(name, [])
        if pod.uid not in pods:
            pods.append(pod.uid)

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """``UpdateNominatedPod``: keep an in-memory nomination when neither version carries
        a nominatedNodeName (an update that raced with the nomination); otherwise follow
        ``new_pod``'s status."""
        override: str | None = None
        old_nnn = old_pod.status.nominated_node_name if old_pod is not None else ""
        if not old_nnn and not new_pod.status.nominated_node_name:
            uid = old_pod.uid if old_pod is not None else new_pod.uid
            if uid in self.node_of:
                override = self.node_of[uid]
        if old_pod is not None:
            self.delete(old_pod)
        self.add(new_pod, override)

    def delete(self, pod: Pod) -> None:
        uid = pod.uid
        node = self.node_of.pop(uid, None)
        self._pods.pop(uid, None)
        if node is None:
            return
        pods = self.nominated.get(node)
        if pods is not None:
            if uid in pods:
                pods.remove(uid)
            if not pods:
                del self.nominated[node]

    def uids_for_node(self, node_name: str) -> list[str]:
        return list(self.nominated.get(node_name, ()))

    def pod(self, uid: str) -> Pod | None:
        return self._pods.get(uid)

    def __len__(self) -> int:
        return len(self.node_of)
