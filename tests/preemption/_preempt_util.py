"""Builders for the ported DefaultPreemption tables, in the spirit of upstream's
``st.MakePod()`` / ``st.MakeNode()`` / ``tf.NewFramework`` (default_preemption_test.go).

Resource maps are upstream's (``smallRes`` … ``veryLargeRes``); a node's ``capacity`` also
sets allocatable and ``pods: 32`` unless given, as ``NodeWrapper.Capacity``. A framework is
built from a KubeSchedulerConfiguration enabling exactly the named plugins (in that order)
plus PrioritySort, DefaultBinder and DefaultPreemption, over the in-tree registry and the
fake plugins below.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.policy import PodDisruptionBudget, PodDisruptionBudgetStatus
from kubesched.api.types import LabelSelector, Node, ObjectMeta, Pod, PodCondition
from kubesched.config import load_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
)
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import snapshot_from_nodes

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
ERR_REASON_FAKE = "Nodes failed the fake plugin"


def make_pod(name: str, *, uid: str | None = None, node: str = "", priority: int | None = None,
             req: dict[str, str] | None = None, labels: dict[str, str] | None = None,
             start: float | None = None, policy: str | None = None, nominated: str = "",
             terminating: bool = False, conditions: list[PodCondition] | None = None,
             anti_affinity_exists: tuple[str, str] | None = None,
             spread: list[tuple[int, str, str]] | None = None,
             namespace: str = "default") -> Pod:
    """``spread``: (maxSkew, topologyKey, whenUnsatisfiable) with selector ``foo Exists``."""
    container: dict[str, Any] = {"name": "c"}
    if req:
        container["resources"] = {"requests": dict(req)}
    spec: dict[str, Any] = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    if policy is not None:
        spec["preemptionPolicy"] = policy
    if anti_affinity_exists is not None:
        key, topo = anti_affinity_exists
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": key, "operator": "Exists"}]},
             "topologyKey": topo}]}}
    if spread:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": s, "topologyKey": k, "whenUnsatisfiable": w,
             "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}
            for s, k, w in spread]
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or name,
                            "labels": dict(labels or {})}
    d: dict[str, Any] = {"metadata": meta, "spec": spec}
    if nominated:
        d["status"] = {"nominatedNodeName": nominated}
    pod = parse_pod(d)
    pod.status.start_time = start
    if terminating:
        pod.metadata.deletion_timestamp = 1.0
    if conditions:
        pod.status.conditions = list(conditions)
    return pod


def make_node(name: str, capacity: dict[str, str] | None = None,
              labels: dict[str, str] | None = None) -> Node:
    status: dict[str, Any] = {}
    if capacity is not None:
        res = {"pods": "32", **capacity}
        status = {"capacity": res, "allocatable": dict(res)}
    return parse_node({"metadata": {"name": name, "labels": dict(labels or {})},
                       "status": status})


def topo_node(spec: str, capacity: dict[str, str] = VERY_LARGE) -> Node:
    """Upstream's "name/zone/region" node names: labels hostname, zone, region."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return make_node(parts[0], capacity, labels)


def make_pdb(match_labels: dict[str, str] | None, allowed: int | None, *,
             disrupted: tuple[str, ...] = (), namespace: str = "default", name: str = "pdb",
             min_available: int | str | None = None) -> PodDisruptionBudget:
    sel = (None if match_labels is None
           else LabelSelector(match_labels=tuple(sorted(match_labels.items()))))
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=f"{namespace}/{name}"),
        selector=sel, min_available=min_available,
        status=PodDisruptionBudgetStatus(disruptions_allowed=allowed,
                                         disrupted_pods=dict.fromkeys(disrupted, 0.0)))


# ---------------------------------------------------------------- fake plugins


class FakeFilter(FilterPlugin):
    """``tf.FakeFilterPlugin``: counts its calls; fails every node with ``return_code``."""

    name = "FakeFilter"
    return_code: Code = Code.SUCCESS
    calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        type(self).calls += 1
        if self.return_code != Code.SUCCESS:
            return Status(self.return_code, (f"injecting failure for pod {pod.name}",))
        return None


class TrueFilter(FilterPlugin):
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        return None


class FalseFilter(FilterPlugin):
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_FAKE,))


class MatchFilter(FilterPlugin):
    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        if node_info.name == pod.name:
            return None
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_FAKE,))


class ErrorOnLabel(PreFilterPlugin, PreFilterExtensions):
    """Upstream's ``TestPlugin`` ("test-plugin"): AddPod/RemovePod fail on nodes labelled
    ``error=true``."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> Any:
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                node_info: Any) -> Status | None:
        if node_info.node.labels.get("error") == "true":
            return Status(Code.ERROR, (f"failed to add pod: {pod_to_schedule.name}",))
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                   node_info: Any) -> Status | None:
        if node_info.node.labels.get("error") == "true":
            return Status(Code.ERROR, (f"failed to remove pod: {pod_to_schedule.name}",))
        return None


FAKES = {c.name: c for c in (FakeFilter, TrueFilter, FalseFilter, MatchFilter, ErrorOnLabel)}


# ---------------------------------------------------------------- a fake cluster backend


@dataclass
class FakeBackend:
    """Records what preemption asks of the API server (patches, deletions, events)."""

    patched: list[tuple[str, PodCondition | None, str | None]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)

    def bind(self, pod: Pod, node_name: str) -> None:
        raise AssertionError("no binding in these tests")

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        self.patched.append((pod.name, condition, nominated_node_name))

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        self.events.append((pod.name, reason, message))

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.append(pod.name)


# ---------------------------------------------------------------- a framework


@dataclass
class Env:
    fwk: Framework
    handle: Handle
    snapshot: Snapshot
    plugin: DefaultPreemption
    backend: FakeBackend

    @property
    def evaluator(self) -> Any:
        return self.plugin.evaluator

    def pre_filter(self, pod: Pod) -> CycleState:
        state = CycleState()
        _res, st, _ = self.fwk.run_pre_filter(state, pod, self.snapshot)
        assert st.is_success() or st.is_skip(), st
        return state


def build(plugins: list[str], nodes: list[Node], pods: list[Pod], *,
          prefilter: list[str] | None = None, pdbs: list[PodDisruptionBudget] | None = None,
          args: dict[str, int] | None = None, seed: int = 0,
          nominated: dict[str, list[Pod]] | None = None,
          fake_rc: Code = Code.SUCCESS) -> Env:
    """A framework whose Filter plugins are ``plugins`` (in order) and whose PreFilter
    plugins are ``prefilter`` (default: the ``plugins`` that implement PreFilter)."""
    registry = {**in_tree_registry(), **FAKES}
    pre = prefilter if prefilter is not None else [
        n for n in plugins if issubclass(registry[n], PreFilterPlugin)]
    filters = [n for n in plugins if issubclass(registry[n], FilterPlugin)]
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "preFilter": {"enabled": [{"name": n} for n in pre]},
        "filter": {"enabled": [{"name": n} for n in filters]},
        "postFilter": {"enabled": [{"name": "DefaultPreemption"}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]}}}
    if args is not None:
        profile["pluginConfig"] = [{"name": "DefaultPreemption", "args": args}]
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration", "profiles": [profile]})
    snap = snapshot_from_nodes(nodes, pods)
    backend = FakeBackend()
    handle = Handle(snapshot=snap, objects={"PodDisruptionBudget": list(pdbs or [])},
                    backend=backend, rng=random.Random(seed))
    if nominated is not None:
        handle.nominated_pods = lambda node: list(nominated.get(node, []))
    fwk = Framework(cfg.profiles[0], registry, handle)
    plugin = fwk.post_filter[0]
    assert isinstance(plugin, DefaultPreemption)
    FakeFilter.calls = 0
    FakeFilter.return_code = fake_rc
    return Env(fwk, handle, snap, plugin, backend)


def statuses(codes: dict[str, Code], absent: Code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
             ) -> NodeToStatus:
    """``framework.NewNodeToStatus(map, absent)`` with statuses of just a code."""
    return NodeToStatus({n: Status(c) for n, c in codes.items()}, Status(absent))
