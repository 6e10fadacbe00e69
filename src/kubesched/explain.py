"""``kubesched explain``: one pending pod's verdict against a scenario's state as loaded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.api.dra.types import ResourceClaim
from kubesched.api.scenario import ClusterState, Scenario, scenario_state
from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import ExtendedResourceClaimStatus, Pod, PodCondition
from kubesched.config import SchedulerConfiguration
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderError
from kubesched.framework.interface import PluginError, PostFilterDecide
from kubesched.framework.status import Code, Status
from kubesched.framework.types import FitError
from kubesched.plugins.dynamicresources.plugin import CANNOT_ALLOCATE, DynamicResources
from kubesched.scheduler import Scheduler
from kubesched.scheduler.algorithm import NoNodesAvailable


class ReadOnlyBackend:
    """explain never changes anything: any write is a bug."""

    def bind(self, pod: Pod, node_name: str) -> None:
        raise RuntimeError("explain does not bind")

    def extender_bind(self, pod: Pod, node_name: str, bind: Callable[[], None]) -> None:
        raise RuntimeError("explain does not bind")

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        return None

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        return None

    def delete_pod(self, pod: Pod, reason: str) -> None:
        raise RuntimeError("explain does not evict")

    wait_for_volume_binding = False

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        raise RuntimeError("explain does not bind volumes")

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim
                                       ) -> PersistentVolumeClaim:
        raise RuntimeError("explain does not bind volumes")

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        raise RuntimeError("explain does not allocate devices")

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        raise RuntimeError("explain does not allocate devices")

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        raise RuntimeError("explain does not allocate devices")

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        raise RuntimeError("explain does not allocate devices")

    def update_pod_extended_resource_claim_status(
            self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        raise RuntimeError("explain does not allocate devices")


def find_target(scenario: Scenario, key: str) -> Pod:
    for pod in scenario.pods:
        if pod.key == key:
            if pod.spec.node_name:
                raise InputError(f"pod {key} is already running on {pod.spec.node_name}; "
                                 "explain answers for pending pods", obj=f"Pod {key}")
            if pod.metadata.deletion_timestamp is not None:  # skipPodSchedule
                raise InputError(f"pod {key} is being deleted (deletionTimestamp set); the "
                                 "scheduler skips it", obj=f"Pod {key}")
            if pod.spec.scheduling_gates:
                raise InputError(f"pod {key} is gated (waiting for scheduling gates: "
                                 f"[{' '.join(pod.spec.scheduling_gates)}])", obj=f"Pod {key}")
            return pod
    raise InputError(f"pod {key} not found in the scenario", obj=f"Pod {key}")


def _controllers_pod(scenario: Scenario, key: str) -> tuple[Pod, list[dict[str, Any]]] | None:
    """The pod named ``key`` among those the scenario's controllers create at the start of
    a run (seed 0, as ``simulate`` names them by default), so ``--pod`` may name one, with
    the claims its StatefulSet creates for it; None when no controller creates it."""
    from kubesched.backends.sim.controllers import Controllers

    if not any(scenario.objects.get(k) for k in ("ReplicaSet", "ReplicationController",
                                                 "StatefulSet", "DaemonSet", "Job")):
        return None
    ctl = Controllers(scenario, 0, {n.name: n for n in scenario.nodes},
                      {p.key for p in scenario.pods})
    created, _deleted = ctl.start(scenario.pods)
    pod = next((p for p in created if p.key == key), None)
    return (pod, ctl.claims_for(pod)) if pod is not None else None


def _with_claims(state: ClusterState, docs: list[dict[str, Any]]) -> ClusterState:
    """``state`` with the claims (documents) that do not exist yet, as the StatefulSet
    controller creates them before the pod."""
    if not docs:
        return state
    from kubesched.api.storage import replace_storage_object, storage_index
    from kubesched.api.workloads import new_claim

    objects = {k: list(v) for k, v in state.objects.items()}
    for doc in docs:
        md = doc["metadata"]
        if storage_index(objects).pvc(md["namespace"], md["name"]) is None:
            replace_storage_object(objects, new_claim(doc, objects.get("StorageClass", [])))
    return ClusterState(state.nodes, state.running, state.nominated, objects,
                        state.namespaces)


def explain(scenario: Scenario, config: SchedulerConfiguration, pod_key: str) -> dict[str, Any]:
    claims: list[dict[str, Any]] = []
    try:
        target = find_target(scenario, pod_key)
    except InputError:
        created = _controllers_pod(scenario, pod_key)
        if created is None:
            raise
        target, claims = created
    refused = scenario.admission_errors.get(target.uid)
    if refused is not None:
        raise InputError(f"pod {pod_key} can never be scheduled: the API server refuses it "
                         f"({refused})", obj=f"Pod {pod_key}")
    return explain_pod(_with_claims(scenario_state(scenario), claims), config, target)


def explain_pod(cluster: ClusterState, config: SchedulerConfiguration, target: Pod
                ) -> dict[str, Any]:
    """The explanation of ``target`` (pending) against ``cluster``."""
    from kubesched.clock import VirtualClock

    pod_key = target.key
    sched = Scheduler(ReadOnlyBackend(), VirtualClock(), config)
    sched.handle.objects = cluster.objects
    sched.handle.namespaces = cluster.namespaces
    # the pods as the pod informer would list them (gang plugins count members)
    listed = [*cluster.running, *(p for p, _node in cluster.nominated)]
    sched.handle.pod_lister = lambda: listed
    fwk = sched.profiles.get(target.spec.scheduler_name)
    if fwk is None:
        raise InputError(f"pod {pod_key} is not scheduled here: {sched.not_served(target)}",
                         obj=f"Pod {pod_key}", field="spec.schedulerName")
    for node in cluster.nodes:
        sched.cache.add_node(node)
    for pod in cluster.running:
        sched.cache.add_pod(pod)
    for pod, node_name in cluster.nominated:
        if pod.uid != target.uid:
            sched.queue.add_nominated_pod(pod, node_name)
    sched.cache.update_snapshot(sched.snapshot)
    out: dict[str, Any] = {"pod": pod_key, "kubernetesVersion": config.kubernetes_version,
                           "weights": dict(fwk.score_weights)}
    try:
        return _verdicts(sched, fwk, target, out)
    except (PluginError, NoNodesAvailable, ExtenderError) as err:
        # the cycle ends in an error status before any verdict is whole: upstream writes the
        # error as the PodScheduled message and runs no PostFilter, so no node is feasible
        # and none is blamed
        out["nodes"] = [{"node": n, "feasible": False, "plugin": None, "reasons": []}
                        for n in sched.snapshot.table.names]
        out["selected"] = []
        out["message"] = str(err)
        return out


def _verdicts(sched: Scheduler, fwk: Any, target: Pod, out: dict[str, Any]
              ) -> dict[str, Any]:
    """``out`` completed with every node's verdict (raises the cycle's errors)."""
    snap = sched.snapshot
    names = snap.table.names
    state = CycleState()
    found = sched.find_nodes_that_fit(fwk, state, target, exhaustive=True)
    feasible = found.feasible
    node_rows: dict[str, dict[str, Any]] = {}
    n2s = found.diagnosis.node_to_status
    for name in names:
        st = n2s.get(name)
        node_rows[name] = {"node": name, "feasible": False,
                           "plugin": st.plugin or None, "reasons": list(st.reasons)}
    _add_device_detail(fwk, state, target, snap, node_rows)
    selected: list[str] = []
    message = None
    if len(feasible):
        scores = sched.prioritize_nodes(fwk, state, target, feasible)
        for k, row in enumerate(feasible.tolist()):
            node_rows[names[row]] = {
                "node": names[row], "feasible": True,
                "scores": {p: int(scores.scores[j, k]) for j, p in enumerate(scores.plugins)},
                "total": int(scores.totals[k]),
            }
        if sched.extenders:
            for name, (raw, weighted) in (scores.extender_scores or {}).items():
                for k, row in enumerate(feasible.tolist()):
                    node_rows[names[row]]["extender_scores"] = {
                        **node_rows[names[row]].get("extender_scores", {}),
                        name: (int(raw[k]), int(weighted[k]))}
        top = scores.totals.max()
        selected = sorted(names[int(feasible[k])] for k in np.flatnonzero(scores.totals == top))
    else:
        fe = FitError(target, snap.num_nodes, found.diagnosis)
        if fwk.post_filter:
            nominated, victims, st = decide_post_filter(fwk, state, target, n2s)
            fe.diagnosis.post_filter_msg = st.message()
            out["preemption"] = ({"node": nominated, "victims": sorted(victims)}
                                 if nominated and st.is_success() else None)
        message = str(fe)
    if sched.extenders:
        verdicts = found.extender_verdicts or {}
        for n in names:
            node_rows[n]["extenders"] = _extender_entries(
                verdicts.get(n, []), node_rows[n].pop("extender_scores", {}))
    out["nodes"] = [node_rows[n] for n in names]
    out["selected"] = selected
    out["message"] = message
    return out


def _add_device_detail(fwk: Any, state: CycleState, pod: Pod, snap: Any,
                       rows: dict[str, dict[str, Any]]) -> None:
    """``detail`` on the nodes DynamicResources rejected with upstream's "cannot allocate
    all claims": per claim and request, how the devices the node reaches narrow down to
    too few (``DynamicResources.explain_node``)."""
    for p in fwk.filter:
        if not isinstance(p, DynamicResources):
            continue
        for name, row in rows.items():
            if row["plugin"] == p.name and CANNOT_ALLOCATE in row["reasons"]:
                node_info = snap.get(name)
                if node_info is not None:
                    detail = p.explain_node(state, pod, node_info)
                    if detail:
                        row["detail"] = detail


def _extender_entries(verdicts: list[dict[str, Any]],
                      scores: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    """One entry per extender that judged or scored the node: its Filter verdict (and the
    reasons of a rejection), its Prioritize score and what that adds to ``total``."""
    out = [dict(v) for v in verdicts]
    for name, (raw, weighted) in scores.items():
        entry = next((e for e in out if e["extender"] == name), None)
        if entry is None:
            entry = {"extender": name}
            out.append(entry)
        entry["score"] = raw
        entry["weighted"] = weighted
    return out


def decide_post_filter(fwk: Any, state: CycleState, pod: Pod, n2s: Any
                       ) -> tuple[str | None, list[str], Status]:
    """The profile's PostFilter plugins as ``Framework.run_post_filter`` runs them, but
    deciding only: DefaultPreemption reports the node it would nominate and the victims
    it would evict, and evicts nothing. Returns (node, victims "ns/name", status)."""
    nominated: str | None = None
    reasons: list[str] = []
    for p in fwk.post_filter:
        name: str = p.name
        if not isinstance(p, PostFilterDecide):
            raise InputError(f"PostFilter plugin {name} cannot be asked without acting",
                             obj=f"profile {fwk.profile_name}")
        res = p.decide(state, pod, n2s)
        st = res.status
        victims = [v.key for v in res.candidate.victims.pods] if res.candidate else []
        if st.is_success() or st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return res.nominated, victims, st
        if not st.is_rejected():
            return None, [], Status(Code.ERROR, st.reasons, name)
        if res.nominated is not None:
            nominated = res.nominated
        reasons.extend(st.reasons)
    return nominated, [], Status(Code.UNSCHEDULABLE, tuple(reasons))


def pods_ahead(scenario: Scenario, config: SchedulerConfiguration, target: Pod) -> list[str]:
    """The scenario's pending pods that would be scheduled before ``target`` and which
    ``explain`` does not place: those arriving earlier, and among those arriving with it the
    ones the queue pops first (upstream's PrioritySort: higher priority, then earlier queued;
    creationTimestamp, then file order, as the simulator orders them) — of those a profile
    serves, not gated, not nominated, not refused by the API server, not terminating."""
    from kubesched.api.scenario import pod_arrival

    served = {p.scheduler_name for p in config.profiles}

    def waits(p: Pod) -> bool:
        return (not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")
                and p.spec.scheduler_name in served and not p.spec.scheduling_gates
                and not p.status.nominated_node_name
                and p.metadata.deletion_timestamp is None
                and p.uid not in scenario.admission_errors)

    def order(p: Pod, i: int) -> tuple[float, int, bool, float, int]:
        ts = p.metadata.creation_timestamp
        return (pod_arrival(p), -p.priority, ts is None, ts or 0.0, i)

    index = {p.uid: i for i, p in enumerate(scenario.pods)}
    mine = order(target, index.get(target.uid, len(index)))
    return [p.key for i, p in enumerate(scenario.pods)
            if p.uid != target.uid and waits(p) and order(p, i) < mine]
