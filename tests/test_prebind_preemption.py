"""A victim in PreBind (v1.36, kubernetes#135502), as on a real cluster where binding
cycles run beside scheduling (the kube backend's thread pool): preemption cancels its
binding cycle instead of deleting it; the cycle fails with an Error, so the victim is
forgotten and goes to backoffQ, its pod object untouched (v1.35 deletes it:
tests/preemption/test_preempt_pod.py)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import Pod, PodCondition
from kubesched.clock import VirtualClock
from kubesched.config import load_config
from kubesched.config.features import FeatureGates
from kubesched.framework import CycleState, Status
from kubesched.framework.interface import PreBindPlugin
from kubesched.framework.status import Code
from kubesched.scheduler import Scheduler

TEXT = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 4Gi, pods: "110"}}
""" + "".join(
    f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {n}}}\nspec:\n  priority: {prio}\n"
    f"  containers: [{{name: c, image: x, resources: {{requests: {{cpu: '3'}}}}}}]\n"
    for n, prio in (("low", 0), ("high", 100)))


class SlowPreBind(PreBindPlugin):
    """PreBind that waits (as VolumeBinding waits for the PV controller) until its binding
    cycle is cancelled."""

    name = "SlowPreBind"
    entered = threading.Event()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.name != "low":
            return None
        entry = self.handle.get_pod_in_pre_bind(pod.uid)
        SlowPreBind.entered.set()
        if entry is not None and entry.cancelled.wait(10):
            return Status(Code.ERROR, ("context canceled",))
        return None


@dataclass
class Backend:
    bound: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    patched: list[str] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)

    def bind(self, pod: Pod, node_name: str) -> None:
        self.bound.append(pod.name)

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        if condition is not None:
            self.patched.append(f"{pod.name}:{condition.type}")

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        self.events.append((pod.name, reason))

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.append(pod.name)


def run(version: str) -> tuple[Scheduler, Backend, Pod]:
    cfg = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "multiPoint": {"enabled": [{"name": "SlowPreBind"}]}}}]},
        features=FeatureGates(version))
    cfg.out_of_tree = {"SlowPreBind": SlowPreBind}
    backend = Backend()
    sched = Scheduler(backend, VirtualClock(), cfg)  # type: ignore[arg-type]
    threads: list[threading.Thread] = []

    def runner(fn):
        t = threading.Thread(target=fn)
        threads.append(t)
        t.start()

    sched.binding_runner = runner
    scen = load_scenario_text(TEXT)
    for n in scen.nodes:
        sched.on_node_add(n)
    low, high = scen.pods
    SlowPreBind.entered.clear()
    with sched.lock:
        sched.on_pod_add(low)
        assert sched.schedule_one()
    assert SlowPreBind.entered.wait(5)  # low's binding cycle is in PreBind
    with sched.lock:
        sched.on_pod_add(high)
        assert sched.schedule_one()  # no room: preempts low
    for t in threads:
        t.join(15)
    return sched, backend, low


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_victim_in_prebind_is_cancelled_not_deleted(version):
    sched, backend, low = run(version)
    assert backend.deleted == [] and "low:DisruptionTarget" not in backend.patched
    # the binding cycle's failure: PodScheduled=False (SchedulerError), as any Error
    assert "low:PodScheduled" in backend.patched
    assert ("low", "Preempted") in backend.events
    assert backend.bound == []
    assert not sched.cache.is_assumed(low)
    assert len(sched.handle.pods_in_pre_bind) == 0
    # the Error sends it to backoffQ (not the unschedulable pods)
    assert low.uid in {q.pod.uid for q in sched.queue.backoff_pods()}
    assert sched.queue.nominated_pods_for_node("n1")[0].name == "high"


def test_cancel_before_anyone_waits_sets_the_event_when_asked_for():
    """The entry's Event is made lazily: a cancel that came first is seen by a plugin that
    asks for it afterwards, and one that asked first is woken by the cancel."""
    from kubesched.framework.waiting import PodsInPreBind

    pods = PodsInPreBind()
    early = pods.add("a")
    assert early.cancel_pod("preempted")
    assert early.cancelled.is_set()
    assert not early.mark_prebound()
    late = pods.add("b")
    event = late.cancelled
    assert not event.is_set()
    assert late.cancel_pod("preempted") and event.is_set()
    done = pods.add("c")
    assert done.mark_prebound() and not done.cancel_pod("too late")
    assert not done.cancelled.is_set()
