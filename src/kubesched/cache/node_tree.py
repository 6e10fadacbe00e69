"""Upstream's nodeTree: nodes grouped by zone (first-seen order), listed round-robin."""

from __future__ import annotations

from kubesched.api.types import (
    REGION_LABEL,
    REGION_LABEL_BETA,
    ZONE_LABEL,
    ZONE_LABEL_BETA,
    Node,
)


def zone_key(node: Node) -> str:
    """component-helpers GetZoneKey: region + ":\\x00:" + zone, or "" with neither label."""
    labels = node.metadata.labels
    region = labels.get(REGION_LABEL) or labels.get(REGION_LABEL_BETA) or ""
    zone = labels.get(ZONE_LABEL) or labels.get(ZONE_LABEL_BETA) or ""
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    def __init__(self) -> None:
        self.zones: dict[str, list[str]] = {}  # dict order = first-seen zone order
        self.num_nodes = 0
        # zone -> (its list, the names in it): adding one of thousands of nodes is not a
        # scan of its zone; rebuilt from the list when ``zones`` was replaced (a resumed
        # run lays the tree out again)
        self._members: dict[str, tuple[list[str], set[str]]] = {}

    def _names_in(self, key: str, names: list[str]) -> set[str]:
        entry = self._members.get(key)
        if entry is None or entry[0] is not names:
            entry = self._members[key] = (names, set(names))
        return entry[1]

    def add(self, node: Node) -> None:
        key = zone_key(node)
        names = self.zones.setdefault(key, [])
        members = self._names_in(key, names)
        if node.name in members:
            return
        names.append(node.name)
        members.add(node.name)
        self.num_nodes += 1

    def remove(self, node: Node) -> None:
        key = zone_key(node)
        names = self.zones.get(key)
        if names is None or node.name not in names:
            return
        names.remove(node.name)
        if node.name not in names:
            self._names_in(key, names).discard(node.name)
        self.num_nodes -= 1
        if not names:
            del self.zones[key]
            self._members.pop(key, None)

    def update(self, old: Node, new: Node) -> None:
        if zone_key(old) == zone_key(new):
            return
        self.remove(old)
        self.add(new)

    def list(self) -> list[str]:
        out: list[str] = []
        columns = list(self.zones.values())
        depth = 0
        while len(out) < self.num_nodes:
            for names in columns:
                if depth < len(names):
                    out.append(names[depth])
            depth += 1
        return out
