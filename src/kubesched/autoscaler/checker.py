"""cluster-autoscaler's PredicateChecker: the profile's own PreFilter and Filter plugins run
for one pod against chosen nodes of a snapshot the autoscaler edits (nodes it imagines, pods
it places there), without the scheduler's queue, scoring or binding."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from kubesched.api.types import Node, Pod
from kubesched.clock import VirtualClock
from kubesched.config import SchedulerConfiguration
from kubesched.explain import ReadOnlyBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler import Scheduler

# above this many nodes to try, one batch Filter over the snapshot is cheaper than a loop
_SCAN = 4


def placed(pod: Pod, node_name: str) -> Pod:
    """``pod`` as if bound to ``node_name`` (its spec copied: the original stays pending)."""
    return dataclasses.replace(pod, spec=dataclasses.replace(pod.spec, node_name=node_name))


class PredicateChecker:
    """A snapshot of nodes and bound pods, and the filters of ``config``'s profiles on it.
    Scheduler extenders are not asked, as cluster-autoscaler does not ask them."""

    def __init__(self, config: SchedulerConfiguration, objects: dict[str, list[Any]],
                 namespaces: dict[str, Any]) -> None:
        self.sched = Scheduler(ReadOnlyBackend(), VirtualClock(), config, extenders=[])
        self.sched.handle.objects = objects
        self.sched.handle.namespaces = namespaces
        self._pods: dict[str, Pod] = {}
        self.sched.handle.pod_lister = lambda: self._pods.values()
        self._dirty = True

    # -- editing the snapshot

    def add_node(self, node: Node) -> None:
        self.sched.cache.add_node(node)
        self._dirty = True

    def remove_node(self, node: Node) -> None:
        for pod in [p for p in self._pods.values() if p.spec.node_name == node.name]:
            self.remove_pod(pod)
        self.sched.cache.remove_node(node)
        self._dirty = True

    def add_pod(self, pod: Pod) -> None:
        """A bound pod (``spec.nodeName`` set)."""
        self.sched.cache.add_pod(pod)
        self._pods[pod.uid] = pod
        self._dirty = True

    def remove_pod(self, pod: Pod) -> None:
        self.sched.cache.remove_pod(self._pods.pop(pod.uid))
        self._dirty = True

    def load(self, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        for node in nodes:
            self.add_node(node)
        for pod in pods:
            self.add_pod(pod)

    # -- asking

    def _snapshot(self) -> Any:
        if self._dirty:
            self.sched.cache.update_snapshot(self.sched.snapshot)
            self._dirty = False
        return self.sched.snapshot

    def fits_any(self, pod: Pod, node_names: Sequence[str]) -> str | None:
        """The first of ``node_names`` (in their order) where ``pod`` passes the Filter
        plugins after its PreFilter, or None (cluster-autoscaler's FitsAnyNodeMatching /
        CheckPredicates). A pod no profile serves fits nowhere."""
        fwk = self.sched.profiles.get(pod.spec.scheduler_name)
        if fwk is None or not node_names:
            return None
        snap = self._snapshot()
        if len(node_names) > _SCAN:
            # the plugins' batch forms judge every node of the snapshot at once
            found = self.sched.find_nodes_that_fit(fwk, CycleState(), pod, exhaustive=True)
            names = snap.table.names
            feasible = {names[int(r)] for r in found.feasible}
            return next((n for n in node_names if n in feasible), None)
        state = CycleState()
        pre, st, _with = fwk.run_pre_filter(state, pod, snap)
        if not st.is_success():
            return None
        for name in node_names:
            if not pre.all_nodes() and name not in (pre.node_names or ()):
                continue
            ni = snap.get(name)
            if ni is not None and fwk.run_filter_with_nominated(state, pod, ni).is_success():
                return name
        return None

    def reads_only_resources(self, pod: Pod) -> bool:
        """Whether, for ``pod``, a node's verdict depends only on the requests and the number
        of the pods on it (``Framework.filters_read_only_resources``, every node kept by
        PreFilter): then identical nodes holding identical pods judge it alike."""
        fwk = self.sched.profiles.get(pod.spec.scheduler_name)
        if fwk is None:
            return False
        state = CycleState()
        pre, st, _with = fwk.run_pre_filter(state, pod, self._snapshot())
        return st.is_success() and pre.all_nodes() and fwk.filters_read_only_resources(state)

    def fits(self, pod: Pod, node_name: str) -> bool:
        return self.fits_any(pod, (node_name,)) is not None
