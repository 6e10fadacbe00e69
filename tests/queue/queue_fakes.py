"""Small stand-ins for a Framework (QueueSort, PreEnqueue, EnqueueExtensions) and pods, so the
queue is tested on its own."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.api.types import (
    Affinity,
    LabelSelector,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    PodStatus,
    Toleration,
)
from kubesched.clock import VirtualClock
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import QueuedPodInfo
from kubesched.queue import SchedulingQueue

DEFAULT = "default-scheduler"

NODE_ADD = ClusterEvent(Resource.NODE, ActionType.ADD)
PV_ADD = ClusterEvent(Resource.PERSISTENT_VOLUME, ActionType.ADD)
PV_UPDATE = ClusterEvent(Resource.PERSISTENT_VOLUME, ActionType.UPDATE)
PVC_ADD = ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)
CSI_NODE_UPDATE = ClusterEvent(Resource.CSI_NODE, ActionType.UPDATE)
ASSIGNED_POD_ADD = ClusterEvent(Resource.ASSIGNED_POD, ActionType.ADD)
UNSCHED_POD_UPDATE = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE)


def queue_hint(_pod, _old, _new) -> QueueingHint:
    return QueueingHint.QUEUE


def skip_hint(_pod, _old, _new) -> QueueingHint:
    return QueueingHint.SKIP


def failing_hint(_pod, _old, _new) -> QueueingHint:
    raise RuntimeError("hint exploded")


def make_pod(name: str, *, priority: int = 0, ns: str = "default", uid: str | None = None,
             labels: dict[str, str] | None = None, gates: tuple[str, ...] = (),
             nominated: str = "", node: str = "", scheduler: str = DEFAULT,
             affinity_to: dict[str, str] | None = None,
             tolerations: tuple[Toleration, ...] = ()) -> Pod:
    aff = None
    if affinity_to is not None:
        term = PodAffinityTerm(
            label_selector=LabelSelector(match_labels=tuple(sorted(affinity_to.items()))),
            topology_key="kubernetes.io/hostname")
        aff = Affinity(pod_affinity=PodAffinity(required=(term,)))
    return Pod(
        metadata=ObjectMeta(name=name, namespace=ns, uid=uid or f"{ns}/{name}",
                            labels=dict(labels or {})),
        spec=PodSpec(node_name=node, scheduler_name=scheduler, priority=priority,
                     scheduling_gates=gates, affinity=aff, tolerations=tolerations),
        status=PodStatus(nominated_node_name=nominated),
    )


class PrioritySort:
    """Upstream's PrioritySort: higher priority first, then the earlier timestamp."""

    name = "PrioritySort"

    def __init__(self, keyed: bool = True) -> None:
        self.keyed = keyed

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo):
        return (-qpi.pod.priority, qpi.timestamp) if self.keyed else None


class SchedulingGates:
    """Like the in-tree plugin: gates pods with spec.schedulingGates and registers
    Pod/UpdatePodSchedulingGatesEliminated."""

    name = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if pod.spec.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          (f"waiting for scheduling gates: {list(pod.spec.scheduling_gates)}",))
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: Pod, _old, new) -> QueueingHint:
            if new is not None and new.uid == pod.uid and not new.spec.scheduling_gates:
                return QueueingHint.QUEUE
            return QueueingHint.SKIP

        return [ClusterEventWithHint(
            ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED), hint)]


class FakeFramework:
    """The parts of runtime.Framework the queue uses."""

    def __init__(self, *, profile: str = DEFAULT, keyed: bool = True,
                 pre_enqueue: list | None = None,
                 extensions: dict[str, list[ClusterEventWithHint]] | None = None) -> None:
        self.profile_name = profile
        self.queue_sort = PrioritySort(keyed)
        self.pre_enqueue = list(pre_enqueue or [])
        self._extensions = dict(extensions or {})
        for p in self.pre_enqueue:
            if hasattr(p, "events_to_register"):
                self._extensions.setdefault(p.name, p.events_to_register())

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for p in self.pre_enqueue:
            st = p.pre_enqueue(pod)
            if st is not None and not st.is_success():
                st.plugin = p.name
                return st
        return Status()

    def enqueue_extensions(self) -> dict[str, list[ClusterEventWithHint]]:
        return self._extensions


def hints(mapping: dict[ClusterEvent, list[tuple[str, Callable]]]
          ) -> dict[str, list[ClusterEventWithHint]]:
    """Upstream tests' QueueingHintMap ({event: [(plugin, fn)]}) as EnqueueExtensions."""
    out: dict[str, list[ClusterEventWithHint]] = {}
    for ev, fns in mapping.items():
        for plugin, fn in fns:
            out.setdefault(plugin, []).append(ClusterEventWithHint(ev, fn))
    return out


def make_queue(*, start: float = 0.0, extensions=None, pre_enqueue=None, keyed: bool = True,
               **kw) -> tuple[SchedulingQueue, VirtualClock]:
    clock = VirtualClock(start)
    fw = FakeFramework(extensions=extensions, pre_enqueue=pre_enqueue, keyed=keyed)
    return SchedulingQueue({DEFAULT: fw}, clock, **kw), clock


def fail(q: SchedulingQueue, qpi: QueuedPodInfo, *plugins: str, pending: tuple[str, ...] = ()
         ) -> bool:
    """What the scheduler's failure handler does: record the rejectors, re-add."""
    qpi.unschedulable_plugins = set(plugins)
    qpi.pending_plugins = set(pending)
    return q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)


def pop_names(q: SchedulingQueue) -> list[str]:
    out = []
    while (qpi := q.pop()) is not None:
        out.append(qpi.pod.name)
    return out
