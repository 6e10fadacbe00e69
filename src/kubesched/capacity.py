"""``kubesched capacity``: how many more copies of a pod fit, and what stops the next one.

cluster-capacity's question, answered with the scheduler itself: the scenario runs to its
end (its pending pods are scheduled first), then copies of the pod are created one at a time,
each only once the one before it is bound, until one fails. Copies are named
``<name>-<i>`` from 0 as cluster-capacity names them (skipping names already in use); they
never preempt (``preemptionPolicy: Never``), and no controller adopts or counts them (the
simulator's controllers adopt orphans only when the run starts).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubesched.api.parse import make_namespace
from kubesched.api.scenario import Scenario, load_scenario, priority_admission
from kubesched.api.types import (
    ARRIVAL_ANNOTATION,
    DURATION_ANNOTATION,
    Pod,
    PodStatus,
)
from kubesched.backends.sim.cluster import SimCluster, SimResult
from kubesched.config import SchedulerConfiguration
from kubesched.errors import InputError


def without_post_filter(message: str) -> str:
    """A FitError message without what the PostFilter plugins added (DynamicResources'
    "no new claims to deallocate", DefaultPreemption's "preemption: …"): the filter part,
    ``0/N nodes are available: <reasons>.``, ends at its first ". " (no in-tree reason
    holds one)."""
    if not message.startswith("0/"):
        return message
    head, sep, _rest = message.partition(". ")
    return head + "." if sep else message


def load_pod(path: str, *, release: str, strict: bool = False) -> tuple[Pod, list[str]]:
    """The one Pod of ``path`` (validated as any scenario's), with its warnings; its
    priority is resolved later, against the scenario's PriorityClasses."""
    sc = load_scenario([path], release=release, strict=strict, admit=False)
    others = [k for k, objs in sc.objects.items() if objs] + (["Node"] if sc.nodes else [])
    if len(sc.pods) != 1 or others or sc.faults or sc.config is not None:
        found = f"{len(sc.pods)} Pod(s)" + (f" and {', '.join(sorted(others))}" if others
                                            else "")
        raise InputError(f"--pod must name a file holding exactly one Pod (found {found})",
                         file=path)
    return sc.pods[0], sc.warnings


def _template(pod: Pod, scenario: Scenario, source: str) -> Pod:
    """``pod`` as the API server would admit it into ``scenario``, and as every copy is:
    not bound, no status, no arrival or duration of its own, never preempting."""
    spec = dataclasses.replace(pod.spec, node_name="", preemption_policy=None)
    meta = dataclasses.replace(pod.metadata, annotations={
        k: v for k, v in pod.metadata.annotations.items()
        if k not in (ARRIVAL_ANNOTATION, DURATION_ANNOTATION)})
    t = dataclasses.replace(pod, metadata=meta, spec=spec, status=PodStatus())
    priority_admission(scenario)(t)
    refused = scenario.admission_errors.pop(t.uid, None)
    if refused is not None:
        raise InputError(refused, file=source, obj=f"Pod {t.key}",
                         field="spec.priorityClassName", value=t.spec.priority_class_name)
    t.spec.preemption_policy = "Never"
    if t.namespace not in scenario.namespaces:
        scenario.namespaces[t.namespace] = make_namespace(t.namespace)
    return t


@dataclasses.dataclass
class CapacityResult:
    count: int
    nodes: dict[str, int]
    message: str | None  # the FitError of the copy that failed; None: --max was reached
    first: SimResult  # the scenario's own run, before the copies
    pod: str  # the template's namespace/name
    copies: list[str]  # the bound copies' names, in order

    def as_json(self) -> dict[str, Any]:
        return {"count": self.count, "nodes": dict(sorted(self.nodes.items())),
                "message": self.message}


def capacity(scenario: Scenario, config: SchedulerConfiguration, pod: Pod, *,
             seed: int = 0, max_count: int | None = None, source: str = "<pod>"
             ) -> CapacityResult:
    template = _template(pod, scenario, source)
    sim = SimCluster(scenario, config, seed=seed)
    if not sim.scheduler.responsible_for(template):
        raise InputError("no profile of the configuration has this schedulerName, so no "
                         "copy would ever be scheduled", file=source, obj=f"Pod {pod.key}",
                         field="spec.schedulerName", value=template.spec.scheduler_name)
    if template.spec.scheduling_gates:
        raise InputError("a pod with scheduling gates is never scheduled", file=source,
                         obj=f"Pod {pod.key}", field="spec.schedulingGates",
                         value=list(template.spec.scheduling_gates))
    first = sim.run()
    nodes: dict[str, int] = {}
    names: list[str] = []
    count, index, message = 0, 0, None
    while max_count is None or count < max_count:
        name = f"{template.name}-{index}"
        index += 1
        if sim.key_in_use(f"{template.namespace}/{name}"):
            continue
        # the template's spec is shared, as a controller's pods share theirs: whoever
        # changes a pod's spec copies it first
        copy = dataclasses.replace(
            template, metadata=dataclasses.replace(
                template.metadata, name=name, uid=f"kubesched-capacity:{template.namespace}/"
                                                  f"{name}",
                labels=dict(template.metadata.labels),
                annotations=dict(template.metadata.annotations),
                owner_references=list(template.metadata.owner_references)),
            status=PodStatus())
        sim.create_pod(copy)
        sim.run_until_idle()
        rec = sim.records[copy.uid]
        if rec.node is None:
            msg = rec.message if rec.message is not None else rec.pending_reason()
            message = without_post_filter(msg)
            break
        count += 1
        nodes[rec.node] = nodes.get(rec.node, 0) + 1
        names.append(name)
    return CapacityResult(count, nodes, message, first, pod.key, names)
