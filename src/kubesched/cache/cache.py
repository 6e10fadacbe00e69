"""The scheduler cache: nodes and the pods on them, assumed pods, generations.

Every NodeInfo change bumps one global generation; ``update_snapshot`` refreshes only the
NodeInfos (and node-table rows) changed since the snapshot's generation, and rebuilds the
node order only when nodes were added or removed, as upstream's cache does.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from kubesched.api.types import Node, Pod
from kubesched.cache.node_tree import NodeTree, zone_key
from kubesched.framework.node_info import (
    ImageStateSummary,
    NodeInfo,
    pod_has_affinity,
    pod_has_required_anti_affinity,
)
from kubesched.framework.node_table import NodeTable
from kubesched.framework.snapshot import Snapshot


class CacheError(Exception):
    """A call the cache cannot honour (assuming a pod twice, forgetting an unknown pod...)."""


@dataclass(slots=True)
class _PodState:
    pod: Pod
    assumed: bool = False
    binding_finished: bool = False


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` when the name has no tag (upstream normalizedImageName)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class Cache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.tree = NodeTree()
        self.pod_states: dict[str, _PodState] = {}
        self.generation = 0
        self._recent: OrderedDict[str, None] = OrderedDict()  # most recently changed last
        self._order_changed = True
        # a pod with pod (anti-)affinity came or went; one with required anti-affinity (the
        # snapshot's answer for each kind is asked again only when its own kind of pod
        # moved, as upstream's two flags: most pods with affinity have no required one)
        self._affinity_changed = False
        self._anti_changed = False
        self._images: dict[str, ImageStateSummary] = {}
        # Nodes only ever appended at the end of the node order (the autoscaler's imagined
        # nodes): the snapshot's table grows by their rows instead of being rebuilt.
        self.grow_tables = False

    # ------------------------------------------------------------------ helpers

    def _touch(self, ni: NodeInfo, *, node_changed: bool = False) -> None:
        self.generation += 1
        ni.generation = self.generation
        if node_changed:
            ni.node_generation = self.generation
        name = ni.name or self._ghost_name(ni)
        recent = self._recent
        recent[name] = None
        recent.move_to_end(name)

    @staticmethod
    def _ghost_name(ni: NodeInfo) -> str:
        return ni.pods[0].spec.node_name if ni.pods else ""

    def _node_info_for(self, node_name: str) -> NodeInfo:
        ni = self.nodes.get(node_name)
        if ni is None:  # a pod on a node not seen yet: placeholder, as upstream
            ni = self.nodes[node_name] = NodeInfo(None)
        return ni

    # ------------------------------------------------------------------ nodes

    def add_node(self, node: Node) -> NodeInfo:
        ni = self.nodes.get(node.name)
        if ni is None:
            ni = self.nodes[node.name] = NodeInfo(node)
        elif ni.node is not None:
            self._remove_images(ni.node)
            self.tree.remove(ni.node)
        ni.node = node
        self.tree.add(node)
        self._add_images(node, ni)
        self._order_changed = True
        self._touch(ni, node_changed=True)
        return ni

    def update_node(self, old: Node, new: Node) -> NodeInfo:
        ni = self.nodes.get(new.name)
        if ni is None or ni.node is None:
            return self.add_node(new)
        self._remove_images(ni.node)
        ni.node = new
        self._add_images(new, ni)
        if zone_key(old) != zone_key(new):
            self.tree.update(old, new)
            self._order_changed = True
        self._touch(ni, node_changed=True)
        return ni

    def remove_node(self, node: Node) -> None:
        ni = self.nodes.get(node.name)
        if ni is None:
            return
        if ni.node is not None:
            self._remove_images(ni.node)
            self.tree.remove(ni.node)
        self._order_changed = True
        if ni.pods:  # ghost kept while pods remain (excluded from snapshots)
            ni.node = None
            self._touch(ni, node_changed=True)
        else:
            del self.nodes[node.name]
            self._recent.pop(node.name, None)

    def _add_images(self, node: Node, ni: NodeInfo) -> None:
        states: dict[str, ImageStateSummary] = {}
        for image in node.status.images:
            for name in image.names:
                key = name  # as the node reports it (the pod's side is normalized)
                st = self._images.get(key)
                if st is None:
                    st = self._images[key] = ImageStateSummary(image.size_bytes, 0)
                if key not in states:
                    st.num_nodes += 1
                    states[key] = st
        ni.image_states = states

    def _remove_images(self, node: Node) -> None:
        seen = set()
        for image in node.status.images:
            for name in image.names:
                key = name
                if key in seen:
                    continue
                seen.add(key)
                st = self._images.get(key)
                if st is not None:
                    st.num_nodes -= 1
                    if st.num_nodes <= 0:
                        del self._images[key]

    # ------------------------------------------------------------------ pods

    def _note_affinity(self, pod: Pod) -> None:
        if pod_has_affinity(pod):
            self._affinity_changed = True
            self._anti_changed |= pod_has_required_anti_affinity(pod)

    def _add_pod_to_node(self, pod: Pod) -> None:
        self._note_affinity(pod)
        ni = self._node_info_for(pod.spec.node_name)
        ni.add_pod(pod)
        self._touch(ni)

    def _remove_pod_from_node(self, pod: Pod) -> None:
        self._note_affinity(pod)
        ni = self.nodes.get(pod.spec.node_name)
        if ni is None or not ni.remove_pod(pod):
            raise CacheError(f"pod {pod.key} not found on node {pod.spec.node_name!r}")
        if ni.node is None and not ni.pods:
            del self.nodes[pod.spec.node_name]
            self._recent.pop(pod.spec.node_name, None)
            self._order_changed = True
        else:
            self._touch(ni)

    def assume_pod(self, pod: Pod) -> None:
        """``pod`` has spec.node_name set; its resources count at once."""
        if pod.uid in self.pod_states:
            raise CacheError(f"pod {pod.key} ({pod.uid}) is in the cache, so can't be assumed")
        self._add_pod_to_node(pod)
        self.pod_states[pod.uid] = _PodState(pod, assumed=True)

    def finish_binding(self, pod: Pod) -> None:
        st = self.pod_states.get(pod.uid)
        if st is not None and st.assumed:
            st.binding_finished = True

    def forget_pod(self, pod: Pod) -> None:
        st = self.pod_states.get(pod.uid)
        if st is None or not st.assumed:
            raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
        if st.pod.spec.node_name != pod.spec.node_name:
            raise CacheError(f"pod {pod.key} was assumed on {st.pod.spec.node_name} "
                             f"but assigned to {pod.spec.node_name}")
        self._remove_pod_from_node(st.pod)
        del self.pod_states[pod.uid]

    def is_assumed(self, pod: Pod) -> bool:
        st = self.pod_states.get(pod.uid)
        return st is not None and st.assumed

    def get_pod(self, uid: str) -> Pod | None:
        st = self.pod_states.get(uid)
        return st.pod if st else None

    def add_pod(self, pod: Pod) -> None:
        """An assigned pod seen by the informer (confirms an assumed pod)."""
        st = self.pod_states.get(pod.uid)
        if st is not None and st.assumed:
            if st.pod.spec.node_name != pod.spec.node_name:
                # bound somewhere else than assumed: move it
                self._remove_pod_from_node(st.pod)
                self._add_pod_to_node(pod)
            else:
                self._replace_pod(st.pod, pod)
            st.pod, st.assumed, st.binding_finished = pod, False, False
            return
        if st is not None:
            raise CacheError(f"pod {pod.key} was already in added state")
        self._add_pod_to_node(pod)
        self.pod_states[pod.uid] = _PodState(pod)

    def _replace_pod(self, old: Pod, new: Pod) -> None:
        self._note_affinity(old)
        self._note_affinity(new)
        ni = self._node_info_for(old.spec.node_name)
        if not ni.remove_pod(old):
            raise CacheError(f"pod {old.key} not found on node {old.spec.node_name!r}")
        ni.add_pod(new)
        self._touch(ni)

    def update_pod(self, old: Pod, new: Pod) -> None:
        st = self.pod_states.get(new.uid)
        if st is None:
            raise CacheError(f"pod {new.key} is not in the cache, so can't be updated")
        if st.assumed:
            raise CacheError(f"assumed pod {new.key} can't be updated")
        if st.pod.spec.node_name != new.spec.node_name:
            raise CacheError(f"pod {new.key} updated to another node: cache corrupted")
        self._replace_pod(st.pod, new)
        st.pod = new

    def remove_pod(self, pod: Pod) -> None:
        st = self.pod_states.get(pod.uid)
        if st is None:
            raise CacheError(f"pod {pod.key} is not in the cache, so can't be removed")
        self._remove_pod_from_node(st.pod)
        del self.pod_states[pod.uid]

    # ------------------------------------------------------------------ snapshot

    def node_count(self) -> int:
        return self.tree.num_nodes

    def update_snapshot(self, snap: Snapshot) -> None:
        if self._order_changed or (snap.generation == 0 and self.generation > 0):
            order = [self.nodes[name] for name in self.tree.list()]
            before = snap.node_infos
            grown = (self.grow_tables and snap.generation > 0 and len(order) > len(before)
                     and all(a is b for a, b in zip(before, order, strict=False)))
            snap.node_infos = order
            snap.by_name = {ni.name: ni for ni in order}
            if grown:
                old = len(before)
                snap.table = NodeTable.grown(snap.table, order)
                self._refresh_rows(snap, old)  # the new rows were just computed
            else:
                snap.table = NodeTable(order)
            snap.affinity_changed()
            self._order_changed = False
        else:
            self._refresh_rows(snap)
            if self._affinity_changed:
                snap.affinity_changed(anti=self._anti_changed)
        self._affinity_changed = self._anti_changed = False
        snap.generation = self.generation

    def _refresh_rows(self, snap: Snapshot, below: int | None = None) -> None:
        """The rows (before row ``below``) of the NodeInfos changed since the snapshot's
        generation."""
        table = snap.table
        for name in reversed(self._recent):
            ni = self.nodes.get(name)
            if ni is None or ni.generation <= snap.generation:
                break
            i = table.index.get(name)
            if i is None or (below is not None and i >= below):
                continue
            if ni.node_generation > snap.generation:
                table.refresh_node(i, ni)
            table.refresh_pods(i, ni)
