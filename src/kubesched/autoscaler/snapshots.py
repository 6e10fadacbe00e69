"""The PredicateCheckers the simulator's autoscaler asks, kept across its loops: building one
builds a Scheduler (its profiles and plugins), which costs more than most loops' questions.

- ``CheckerPool``: empty checkers for the scale-up (the estimator's imagined nodes, the
  upcoming nodes), emptied and handed out again at the next loop;
- ``ClusterMirror``: one checker holding the cluster's nodes and bound pods, brought up to
  date at each loop by the differences only (a scale-down simulation leaves it as it found
  it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker


class CheckerPool:
    def __init__(self, make: Callable[[], PredicateChecker]) -> None:
        self._make = make
        self._all: list[PredicateChecker] = []
        self._used = 0

    def reset(self) -> None:
        """The checkers handed out since the last reset are no longer used."""
        self._used = 0

    def get(self) -> PredicateChecker:
        """An empty checker (``new_checker`` for ``scale_up_options``)."""
        if self._used == len(self._all):
            self._all.append(self._make())
        checker = self._all[self._used]
        self._used += 1
        checker.clear()
        return checker


class ClusterMirror:
    def __init__(self, make: Callable[[], PredicateChecker]) -> None:
        self.checker = make()
        self._nodes: dict[str, Node] = {}
        self._pods: dict[str, Pod] = {}

    def sync(self, nodes: Mapping[str, Node], pods: Mapping[str, Pod]) -> PredicateChecker:
        """The checker holding ``nodes`` and ``pods`` (by uid; those bound to them), as
        objects: one replaced since the last sync is replaced in the checker."""
        c = self.checker
        for name, node in list(self._nodes.items()):
            if nodes.get(name) is not node:
                c.remove_node(node)  # its pods go with it
                del self._nodes[name]
                for uid in [u for u, p in self._pods.items() if p.spec.node_name == name]:
                    del self._pods[uid]
        for name, node in nodes.items():
            if name not in self._nodes:
                c.add_node(node)
                self._nodes[name] = node
        held = self._nodes
        want = {u: p for u, p in pods.items() if p.spec.node_name in held}
        for uid, p in list(self._pods.items()):
            if want.get(uid) is not p:
                c.remove_pod(p)
                del self._pods[uid]
        for uid, p in want.items():
            if uid not in self._pods:
                c.add_pod(p)
                self._pods[uid] = p
        return c
