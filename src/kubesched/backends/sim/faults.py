"""Faults in the simulated cluster (``kind: Fault``) and the controllers that react to them:
the node lifecycle controller's not-ready taints, the taint manager's NoExecute evictions.

docs/faults.md describes the actions; docs/differences.md what is simpler than upstream.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from kubesched.api import faults as fk
from kubesched.api.dra.store import dra_index, with_status
from kubesched.api.dra.types import (
    AllocatedDeviceStatus,
    DeviceCondition,
    DeviceRequestAllocationResult,
    ResourceClaim,
)
from kubesched.api.dumptime import virtual_time
from kubesched.api.faults import Fault
from kubesched.api.scenario import TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE
from kubesched.api.types import Node, Pod, Taint, Toleration
from kubesched.backends.sim.ports import FaultTarget
from kubesched.framework.backend import BindError

NO_EXECUTE = "NoExecute"
# what the node lifecycle controller puts on a node whose Ready condition is False: the
# NoSchedule taint (TaintNodesByCondition) keeps new pods off, the NoExecute one makes the
# taint manager evict the pods there
NOT_READY_TAINTS = (Taint(TAINT_NODE_NOT_READY, "", "NoSchedule"),
                    Taint(TAINT_NODE_NOT_READY, "", NO_EXECUTE))


EVICTED_PREFIX = "evicted: "  # the placement message of a pod a fault took away


def node_removed(node: str) -> str:
    return f"{EVICTED_PREFIX}node {node} removed"


POD_DELETED = f"{EVICTED_PREFIX}pod deleted"
# a pod the dump holds terminating: its deletion was asked for before the dump was taken
TERMINATING_AT_LOAD = f"{EVICTED_PREFIX}pod deleted (terminating at load)"


def taint_eviction(node: Node) -> str:
    keys = [t.key for t in node.spec.taints if t.effect == NO_EXECUTE]
    if TAINT_NODE_NOT_READY in keys:
        return f"evicted: node {node.name} not ready"
    if TAINT_NODE_UNREACHABLE in keys:
        return f"evicted: node {node.name} unreachable"
    return f"evicted: node {node.name} has taint(s) {', '.join(keys)}:NoExecute"


@dataclass(slots=True)
class _ArmedBinding:
    """A binding fault waiting for the bindings it applies to."""

    fault: Fault
    left: int


class FaultRunner:
    """Carries out the scenario's faults on ``sim``: timed ones when the simulator's clock
    reaches them (``apply``), binding ones when the scheduler binds (``intercept_bind``)."""

    def __init__(self, sim: FaultTarget) -> None:
        self.sim = sim
        self._armed: list[_ArmedBinding] = []
        # DeviceCondition faults due while no claim held their device: the driver acts as
        # soon as one is allocated it
        self._device_waiting: list[Fault] = []
        self.fired: dict[str, int] = {}  # fault name -> how many times it acted

    def pending(self) -> tuple[list[tuple[Fault, int]], list[Fault]]:
        """What is still to act (``--state-out``): the binding faults armed with the
        bindings each must still fail, and the DeviceCondition faults waiting for a claim
        to be allocated their device."""
        return [(a.fault, a.left) for a in self._armed], list(self._device_waiting)

    def restore(self, armed: list[tuple[Fault, int]], device_waiting: list[Fault],
                fired: dict[str, int]) -> None:
        """A resumed run's faults as ``pending`` and ``fired`` had them."""
        self._armed = [_ArmedBinding(f, left) for f, left in armed]
        self._device_waiting = list(device_waiting)
        self.fired = dict(fired)

    def apply(self, fault: Fault) -> None:
        sim = self.sim
        a = fault.action
        if a in (fk.BIND_ERROR, fk.BIND_CONFLICT) or (a == fk.DELETE_POD
                                                      and fault.during_binding):
            self._armed.append(_ArmedBinding(fault, fault.count))
            return
        acted = False
        if a == fk.DEVICE_CONDITION:
            acted = self._set_device_condition(fault)
            if not acted:
                self._device_waiting.append(fault)
        elif a == fk.DELETE_NODE:
            acted = sim.remove_node(fault.node or "")
        elif a == fk.NODE_NOT_READY:
            acted = self._set_taints(fault.node or "", ready=False)
        elif a == fk.NODE_READY:
            acted = self._set_taints(fault.node or "", ready=True)
        elif a == fk.DELETE_POD:
            pod = sim.pod_by_key(fault.pod or "")
            if pod is not None and pod.metadata.deletion_timestamp is None:
                sim.delete(pod, POD_DELETED)
                acted = True
        if acted:
            self.fired[fault.name] = self.fired.get(fault.name, 0) + 1

    def claim_written(self, claim: ResourceClaim) -> None:
        """A claim's status was written (PreBind's allocation): waiting DeviceCondition
        faults for its devices act now."""
        if claim.allocation is None or not self._device_waiting:
            return
        held = {(r.driver, r.pool, r.device) for r in claim.allocation.results}
        for fault in list(self._device_waiting):
            if tuple((fault.device or "").split("/")) in held:
                self._device_waiting.remove(fault)
                if self._set_device_condition(fault):
                    self.fired[fault.name] = self.fired.get(fault.name, 0) + 1

    def _set_device_condition(self, fault: Fault) -> bool:
        """The device's driver writes the condition into ``status.devices`` of every claim
        that has the device allocated; False when none has."""
        driver, pool, device = (fault.device or "//").split("/")
        cond = DeviceCondition(fault.condition or "", fault.status, fault.reason,
                               fault.message)
        acted = False
        for claim in list(dra_index(self.sim.objects).claims.values()):
            if claim.allocation is None:
                continue
            for r in claim.allocation.results:
                if (r.driver, r.pool, r.device) != (driver, pool, device):
                    continue
                self.sim.update_resource_claim_status(
                    with_status(claim, devices=set_device_condition(claim, r, cond)))
                acted = True
                break
        return acted

    def _set_taints(self, name: str, *, ready: bool) -> bool:
        node = self.sim.nodes.get(name)
        if node is None:
            return False
        kept = tuple(t for t in node.spec.taints if t not in NOT_READY_TAINTS)
        taints = kept if ready else (*kept, *NOT_READY_TAINTS)
        if taints == node.spec.taints:
            return False
        new = copy.copy(node)
        new.spec = copy.copy(node.spec)
        new.spec.taints = taints
        self.sim.update_node(node, new)
        return True

    def intercept_bind(self, pod: Pod, node_name: str) -> None:
        """Before the simulated API server looks at a binding: the first armed fault that
        applies to it acts (raising the API server's answer), or nothing happens."""
        for armed in self._armed:
            f = armed.fault
            if (f.pod is not None and f.pod != pod.key) or \
                    (f.node is not None and f.node != node_name):
                continue
            armed.left -= 1
            if armed.left <= 0:
                self._armed.remove(armed)
            self.fired[f.name] = self.fired.get(f.name, 0) + 1
            # the fault is used up (or one less): a retry may now succeed, so the run's
            # end rule must see a change after the failed attempt is recorded
            self.sim.changed_after_attempt()
            if f.action == fk.BIND_ERROR:
                raise BindError(f"Internal error occurred: binding failed (Fault {f.name})")
            if f.action == fk.BIND_CONFLICT:
                where = self.sim.bind_elsewhere(pod, node_name, f.bound_to)
                raise BindError(f'Operation cannot be fulfilled on pods/binding "{pod.name}": '
                                f'pod {pod.name} is already assigned to node "{where}"',
                                conflict=True)
            # DeletePod during the binding cycle: the deletion lands first, the scheduler's
            # informer hears of it only later, and the binding finds no pod
            current = self.sim.pods.get(pod.uid)
            if current is not None:
                self.sim.delete(current, POD_DELETED, informer_later=True)
            raise BindError(f'pods "{pod.name}" not found')


class TaintManager:
    """Upstream's NoExecute taint manager (the taint-eviction controller), on the virtual
    clock: a pod on a node with NoExecute taints it does not tolerate is deleted at once; one
    that tolerates them all is deleted after the least tolerationSeconds among the
    tolerations used (never, when none of them sets it), counted from when the taints (or
    the pod's binding) were seen; the deletion is cancelled when the taints go."""

    def __init__(self, sim: FaultTarget) -> None:
        self.sim = sim
        # uid -> (when the eviction was first scheduled, when it fires)
        self.scheduled: dict[str, tuple[float, float]] = {}

    def node_changed(self, node: Node) -> None:
        """A node added or its taints changed: every pod on it is looked at again."""
        taints = [t for t in node.spec.taints if t.effect == NO_EXECUTE]
        for pod in self._pods_on(node.name):
            if not taints:
                self.cancel(pod.uid)
            else:
                self._process(pod, node, taints)

    def node_loaded(self, node: Node, dump_time: float | None) -> None:
        """A node as the scenario holds it. NoExecute taints with ``timeAdded`` (a cluster's:
        the node lifecycle controller's, ``kubectl taint``'s) have been the taint manager's
        since the first of them was added (virtual time 0 being the dump's now
        ``dump_time``; one without it counts from now), so a pod whose tolerationSeconds have
        run out by now goes at once, the others when they run out. A node whose NoExecute
        taints have no ``timeAdded`` (a scenario written by hand, as upstream's scheduler
        tests write them) is left as it is: no taint manager has seen them."""
        taints = [t for t in node.spec.taints if t.effect == NO_EXECUTE]
        if all(t.time_added is None for t in taints):
            return
        since = min(virtual_time(t.time_added, dump_time) for t in taints)
        for pod in self._pods_on(node.name):
            self._process(pod, node, taints, since)

    def pod_bound(self, pod: Pod) -> None:
        node = self.sim.nodes.get(pod.spec.node_name)
        if node is None:
            return
        taints = [t for t in node.spec.taints if t.effect == NO_EXECUTE]
        if taints:
            self._process(pod, node, taints)

    def cancel(self, uid: str) -> None:
        if self.scheduled.pop(uid, None) is not None:
            self.sim.cancel_eviction(uid)

    def fire(self, uid: str, at: float) -> None:
        """A scheduled eviction is due (``at``: the time it was scheduled for)."""
        entry = self.scheduled.get(uid)
        if entry is None or entry[1] != at:
            return  # cancelled or moved
        del self.scheduled[uid]
        pod = self.sim.pods.get(uid)
        node = self.sim.nodes.get(pod.spec.node_name) if pod is not None else None
        if pod is None or node is None or pod.metadata.deletion_timestamp is not None:
            return
        self.sim.delete(pod, taint_eviction(node))

    def _process(self, pod: Pod, node: Node, taints: list[Taint],
                 since: float | None = None) -> None:
        """``since``: when the taints were first seen, if before now."""
        if pod.metadata.deletion_timestamp is not None:
            return
        used = _matching_tolerations(taints, pod.spec.tolerations)
        now = self.sim.clock.now()
        if used is None:  # a taint not tolerated: deleted right away
            self.cancel(pod.uid)
            self.sim.delete(pod, taint_eviction(node))
            return
        wait = _min_toleration_seconds(used)
        if wait is None:
            self.cancel(pod.uid)
            return
        start = now if since is None else since
        fire_at = start + wait
        entry = self.scheduled.get(pod.uid)
        if entry is not None:
            start = entry[0]
            if start + wait < fire_at:  # the eviction already scheduled stays
                return
            self.cancel(pod.uid)
        if fire_at <= now:
            self.sim.delete(pod, taint_eviction(node))
            return
        self.scheduled[pod.uid] = (start, fire_at)
        self.sim.schedule_eviction(pod.uid, fire_at)

    def _pods_on(self, node_name: str) -> list[Pod]:
        pods = self.sim.pods
        return sorted((pods[u] for u in self.sim.pods_on_node(node_name)),
                      key=lambda p: p.key)


def _matching_tolerations(taints: list[Taint], tolerations: tuple[Toleration, ...]
                          ) -> list[Toleration] | None:
    """For each taint the first toleration that tolerates it; None when one is not."""
    used = []
    for taint in taints:
        match = next((t for t in tolerations if t.tolerates(taint)), None)
        if match is None:
            return None
        used.append(match)
    return used


def _min_toleration_seconds(used: list[Toleration]) -> float | None:
    """How long the pod may stay: the least tolerationSeconds set (0 and below: not at
    all); None (forever) when none of them sets one."""
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not seconds:
        return None
    return float(max(0, min(seconds)))


def set_device_condition(claim: ResourceClaim, result: DeviceRequestAllocationResult,
                         cond: DeviceCondition) -> tuple[AllocatedDeviceStatus, ...]:
    """``status.devices`` with ``cond`` set (replacing one of its type) on the entry of the
    allocated device ``result`` (created when missing), as the driver would write it."""
    out = []
    found = False
    for d in claim.devices:
        if (d.driver, d.pool, d.device, d.share_id) == \
                (result.driver, result.pool, result.device, result.share_id):
            found = True
            d = AllocatedDeviceStatus(d.driver, d.pool, d.device, d.share_id, (
                *(c for c in d.conditions if c.type != cond.type), cond))
        out.append(d)
    if not found:
        out.append(AllocatedDeviceStatus(result.driver, result.pool, result.device,
                                         result.share_id, (cond,)))
    return tuple(out)
