"""The workload controllers, as the simulator plays them: ReplicaSet, ReplicationController,
StatefulSet, DaemonSet and Job (a Deployment's ReplicaSet is made when the scenario is loaded,
``api/workloads.py``).

One rule for all of them, as upstream's controllers: a controller owns the pods whose
controller ownerReference names it, adopts the orphans its selector matches (in its
namespace), counts the *active* ones (not terminating — a StatefulSet, and a Job whose
``podReplacementPolicy`` is ``Failed``, count a terminating pod until it is gone) and creates
or deletes pods until the count is what it wants. It reconciles when the run starts and
whenever one of its pods is deleted, is gone, finishes, or is bound (a StatefulSet with
``OrderedReady`` creates pod N+1 once pod N is bound). So a scenario whose controllers
already have their pods changes nothing, and a pod a fault takes away is replaced.

New pods are made from the controller's template (parsed once per template) with the labels,
annotations and ownerReference the controller sets; names are ``generateName``'s
(``<name>-xxxxx``, from a generator seeded by ``--seed``) but for a StatefulSet
(``<name>-<ordinal>``) and an indexed Job (``<name>-<index>-xxxxx``). A StatefulSet's pod
mounts the claims of its ``volumeClaimTemplates`` (``<template>-<name>-<ordinal>``), which the
API server creates before the pod when they are missing (``claims_for``).

A pod that finishes (``kubesched.io/duration``) counts for a Job's completions; for the other
controllers it is done and not replaced (a simulation must end; upstream would restart it).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable, Container, Mapping
from typing import Any

from kubesched.api.naming import generate_name, new_uid
from kubesched.api.parse import parse_label_selector, parse_pod
from kubesched.api.scenario import Scenario, default_toleration_seconds, priority_admission
from kubesched.api.selectors import (
    label_selector_matches,
    pod_matches_node_selector_and_affinity,
)
from kubesched.api.types import (
    GenericObject,
    Node,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodStatus,
)
from kubesched.api.workloads import (
    CONTROLLER_REVISION_HASH,
    JOB_COMPLETION_INDEX,
    JOB_CONTROLLER_UID,
    JOB_NAME,
    LEGACY_JOB_CONTROLLER_UID,
    LEGACY_JOB_NAME,
    POD_INDEX,
    STATEFULSET_POD_NAME,
    claim_templates,
    controller_ref,
    has_controller,
    label_uid,
    statefulset_claims,
    template_hash,
    with_claim_volumes,
)
from kubesched.errors import InputError

#: in the order they adopt orphans and create pods (each kind in file order)
CONTROLLER_KINDS = ("ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job")

#: what a pod deleted by its controller (scaled down) says in the placements
SCALED_DOWN = "evicted: deleted by its controller"

# AddOrUpdateDaemonPodTolerations (pkg/controller/daemon/util): (key, effect)
_DAEMON_TOLERATIONS = (("node.kubernetes.io/not-ready", "NoExecute"),
                       ("node.kubernetes.io/unreachable", "NoExecute"),
                       ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                       ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                       ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                       ("node.kubernetes.io/unschedulable", "NoSchedule"))
_NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")

Created = list[Pod]
Deleted = list[Pod]


class _Template:
    """A pod template parsed once; ``make`` stamps out pods of it."""

    def __init__(self, owner: GenericObject, raw: Mapping[str, Any], extra_labels:
                 Mapping[str, str], admit: Callable[[Pod], None], scenario: Scenario) -> None:
        md = raw.get("metadata") or {}
        self.labels = {**(md.get("labels") or {}), **extra_labels}
        self.annotations = dict(md.get("annotations") or {})
        self.spec_raw: dict[str, Any] = raw.get("spec") or {}
        self.owner = owner
        self.ref = controller_ref(owner)
        self._scenario = scenario
        self._admit = admit
        self.pod = self._parse(self.spec_raw, self.labels)
        self.refused: str | None = scenario.admission_errors.pop(self.pod.uid, None)

    def _parse(self, spec: dict[str, Any], labels: Mapping[str, str]) -> Pod:
        o = self.owner
        # a uid no pod has: the admission plugin's verdict on the template is taken back
        doc = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": o.metadata.name, "namespace": o.metadata.namespace,
                            "uid": f"kubesched-template:{o.kind}/{o.metadata.namespace}/"
                                   f"{o.metadata.name}",
                            "labels": dict(labels), "annotations": self.annotations},
               "spec": spec}
        try:
            pod = parse_pod(doc)
        except InputError as e:
            raise InputError(f"its pod template: {e.message}",
                             obj=f"{o.kind} {o.metadata.namespace}/{o.metadata.name}",
                             field=f"spec.template.{e.field}" if e.field else "spec.template",
                             value=e.value) from None
        default_toleration_seconds(pod)
        self._admit(pod)
        return pod

    def parse_spec(self, spec: dict[str, Any]) -> Pod:
        pod = self._parse(spec, self.labels)
        self._scenario.admission_errors.pop(pod.uid, None)
        return pod

    def make(self, name: str, uid: str, labels: Mapping[str, str] | None = None,
             annotations: Mapping[str, str] | None = None,
             spec: dict[str, Any] | None = None) -> Pod:
        # a spec of its own: a DaemonSet pod's node affinity
        base = self.parse_spec(spec) if spec is not None else self.pod
        # the spec is shared by the pods of one template: whoever changes a pod's spec
        # copies it first (the scheduler's assume, the simulator's binding)
        pod = Pod(ObjectMeta(name=name, namespace=base.namespace, uid=uid,
                             labels={**self.labels, **(labels or {})},
                             annotations={**self.annotations, **(annotations or {})},
                             owner_references=[self.ref]),
                  base.spec, PodStatus(), base.requests, base.non_zero_cpu,
                  base.non_zero_memory, base.raw_spec)
        if self.refused is not None:
            self._scenario.admission_errors[uid] = self.refused.replace(
                f'pods "{self.owner.metadata.name}"', f'pods "{name}"', 1)
        return pod


class _Controller:
    """What every controller shares: its object, selector, template and owned pods."""

    counts_terminating = False

    def __init__(self, obj: GenericObject, ctx: Controllers) -> None:
        self.obj = obj
        self.ctx = ctx
        self.kind = obj.kind
        self.ns = obj.metadata.namespace
        self.name = obj.metadata.name
        self.spec: dict[str, Any] = obj.raw.get("spec") or {}
        self.template = _Template(obj, self.spec.get("template") or {}, self.extra_labels(),
                                  ctx.admit, ctx.scenario)
        self.pods: dict[str, Pod] = {}  # uid -> the owned pods on the API server
        self.terminating: set[str] = set()
        self.bound: set[str] = set()
        self.finished = 0  # owned pods that ran to completion

    def extra_labels(self) -> dict[str, str]:
        return {}

    def selects(self, labels: Mapping[str, str]) -> bool:
        return label_selector_matches(
            parse_label_selector(self.spec.get("selector"), "spec.selector"), labels)

    def owns(self, pod: Pod) -> bool:
        for ref in pod.metadata.owner_references:
            if ref.controller:
                return ref.kind == self.kind and ref.name == self.name
        return False

    def active(self) -> list[Pod]:
        return [p for u, p in self.pods.items()
                if self.counts_terminating or u not in self.terminating]

    def track(self, pod: Pod) -> None:
        self.pods[pod.uid] = pod
        if pod.metadata.deletion_timestamp is not None:
            self.terminating.add(pod.uid)
        if pod.spec.node_name:
            self.bound.add(pod.uid)

    def forget(self, pod: Pod) -> None:
        self.pods.pop(pod.uid, None)
        self.terminating.discard(pod.uid)
        self.bound.discard(pod.uid)

    def reconcile(self, at_start: bool) -> tuple[Created, Deleted]:
        raise NotImplementedError

    def new_name(self, prefix: str) -> str:
        return generate_name(prefix, self.ctx.rng, _Prefixed(self.ctx.taken, f"{self.ns}/"))

    def create(self, name: str, **kw: Any) -> Pod:
        pod = self.template.make(name, new_uid(self.ctx.rng), **kw)
        self.ctx.taken.add(pod.key)
        self.pods[pod.uid] = pod
        return pod

    def scale(self, want: int, at_start: bool) -> tuple[Created, Deleted]:
        """Create or (only when the run starts: nothing changes ``want`` later) delete pods
        until ``want`` are active; the ones deleted first are the pending ones, then the
        newest (upstream's ranking, simplified: no readiness here)."""
        active = self.active()
        if len(active) < want:
            return [self.create(self.new_name(f"{self.name}-"))
                    for _ in range(want - len(active))], []
        if len(active) > want and at_start:
            order = sorted(range(len(active)),
                           key=lambda i: (active[i].uid in self.bound, -i))
            doomed = [active[i] for i in order[:len(active) - want]]
            for p in doomed:
                self.forget(p)
            return [], doomed
        return [], []


class _ReplicaSet(_Controller):
    def replicas(self) -> int:
        r = self.spec.get("replicas", 1)
        return int(r) if r is not None else 1

    def reconcile(self, at_start: bool) -> tuple[Created, Deleted]:
        return self.scale(max(self.replicas() - self.finished, 0), at_start)


class _ReplicationController(_ReplicaSet):
    def selects(self, labels: Mapping[str, str]) -> bool:
        sel = self.spec.get("selector") or self.template.labels
        return all(labels.get(k) == v for k, v in sel.items())


class _StatefulSet(_Controller):
    counts_terminating = True  # a pod's name (its identity) is taken until it is gone

    def extra_labels(self) -> dict[str, str]:
        h = template_hash(self.spec.get("template") or {})
        return {CONTROLLER_REVISION_HASH: f"{self.name}-{h}"}

    def reconcile(self, at_start: bool) -> tuple[Created, Deleted]:
        start = int((self.spec.get("ordinals") or {}).get("start") or 0)
        replicas = self.spec.get("replicas", 1)
        replicas = 1 if replicas is None else int(replicas)
        wanted = [f"{self.name}-{i}" for i in range(start, start + replicas)]
        by_name = {p.name: p for p in self.pods.values()}
        deleted: Deleted = []
        if at_start:  # condemned: ordinals out of range, and pods not named by an ordinal
            keep = set(wanted)
            deleted = [p for n, p in sorted(by_name.items()) if n not in keep]
            for p in deleted:
                self.forget(p)
        ordered = self.spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        created: Created = []
        for i, name in enumerate(wanted, start):
            pod = by_name.get(name)
            if name in self.ctx.done:
                continue
            if pod is None:
                spec = (with_claim_volumes(self.template.spec_raw, self.obj, i)
                        if claim_templates(self.obj) else None)
                created.append(self.create(name, labels={STATEFULSET_POD_NAME: name,
                                                         POD_INDEX: str(i)}, spec=spec))
                if ordered:
                    break
            elif ordered and (pod.uid in self.terminating or pod.uid not in self.bound):
                break  # OrderedReady: wait until this one runs (in the simulator: bound)
        return created, deleted


    def claims(self, pod: Pod) -> list[dict[str, Any]]:
        """The claims of ``pod`` from the volumeClaimTemplates (getPersistentVolumeClaims;
        a pod whose name has no ordinal has none)."""
        m = _ORDINAL.fullmatch(pod.name)
        if m is None or m.group(1) != self.name or not claim_templates(self.obj):
            return []
        return statefulset_claims(self.obj, int(m.group(2)))


# getParentNameAndOrdinal's statefulPodRegex
_ORDINAL = re.compile(r"(.*)-([0-9]+)")


class _DaemonSet(_Controller):
    _base: dict[str, Any] | None = None
    _probe: Pod | None = None

    def extra_labels(self) -> dict[str, str]:
        gen = self.obj.metadata.generation or 1
        return {CONTROLLER_REVISION_HASH: template_hash(self.spec.get("template") or {}),
                "pod-template-generation": str(gen)}

    def _spec_with_tolerations(self) -> dict[str, Any]:
        spec = dict(self.template.spec_raw)
        tols = [dict(t) for t in spec.get("tolerations") or ()]
        wanted = list(_DAEMON_TOLERATIONS)
        if spec.get("hostNetwork"):
            wanted.append(_NETWORK_UNAVAILABLE)
        for key, effect in wanted:  # AddOrUpdateTolerationInPodSpec
            t = {"key": key, "operator": "Exists", "effect": effect}
            for j, old in enumerate(tols):
                if old.get("key") == key and old.get("effect") == effect:
                    tols[j] = t
                    break
            else:
                tols.append(t)
        spec["tolerations"] = tols
        return spec

    def _should_run(self, node: Node, probe: Pod) -> bool:
        """NodeShouldRunDaemonPod's predicates for a new pod: nodeSelector and required
        node affinity match, and no NoSchedule / NoExecute taint left untolerated."""
        if probe.spec.node_name and probe.spec.node_name != node.name:
            return False
        if not pod_matches_node_selector_and_affinity(probe, node):
            return False
        return all(any(t.tolerates(taint) for t in probe.spec.tolerations)
                   for taint in node.spec.taints
                   if taint.effect in ("NoSchedule", "NoExecute"))

    @staticmethod
    def target_node(pod: Pod) -> str | None:
        """GetTargetNodeName: spec.nodeName, or the matchFields metadata.name term."""
        if pod.spec.node_name:
            return pod.spec.node_name
        aff = pod.spec.affinity
        na = aff.node_affinity if aff is not None else None
        for term in (na.required or ()) if na is not None else ():
            for req in term.match_fields:
                if req.key == "metadata.name" and req.operator == "In" and \
                        len(req.values) == 1:
                    return req.values[0]
        return None

    def _pod_spec_for(self, base: dict[str, Any], node: str) -> dict[str, Any]:
        """ReplaceDaemonSetPodNodeNameNodeAffinity."""
        spec = dict(base)
        term = {"matchFields": [{"key": "metadata.name", "operator": "In",
                                 "values": [node]}]}
        affinity = copy.deepcopy(spec.get("affinity") or {})
        na = affinity.setdefault("nodeAffinity", {})
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
        spec["affinity"] = affinity
        return spec

    def reconcile(self, at_start: bool) -> tuple[Created, Deleted]:
        if self._base is None or self._probe is None:
            self._base = self._spec_with_tolerations()
            self._probe = self.template.parse_spec(self._base)
        base, probe = self._base, self._probe
        by_node: dict[str, list[Pod]] = {}
        for p in self.pods.values():
            by_node.setdefault(self.target_node(p) or "", []).append(p)
        created: Created = []
        deleted: Deleted = []
        for name, node in self.ctx.nodes.items():
            here = by_node.pop(name, [])
            run = self._should_run(node, probe)
            if not here and run and (self.name, name) not in self.ctx.done:
                created.append(self.create(self.new_name(f"{self.name}-"),
                                           spec=self._pod_spec_for(base, name)))
            elif at_start and (len(here) > 1 or (here and not run)):
                extra = here if not run else sorted(
                    here, key=lambda p: p.uid in self.bound, reverse=True)[1:]
                deleted.extend(extra)
        if at_start:  # pods for nodes the cluster does not have
            deleted.extend(p for pods in by_node.values() for p in pods)
            for p in deleted:
                self.forget(p)
        return created, deleted


class _Job(_Controller):
    def __init__(self, obj: GenericObject, ctx: Controllers) -> None:
        spec = obj.raw.get("spec") or {}
        self._generated = not spec.get("manualSelector")
        self.uid_label = label_uid(obj)
        super().__init__(obj, ctx)
        policy = self.spec.get("podReplacementPolicy") or (
            "Failed" if self.spec.get("podFailurePolicy") else "TerminatingOrFailed")
        self.counts_terminating = policy == "Failed"
        self.done_indexes: set[int] = set()

    def extra_labels(self) -> dict[str, str]:
        if not self._generated:
            return {}
        # the API server's generateSelector: these labels on the template, and the selector
        return {JOB_CONTROLLER_UID: self.uid_label, JOB_NAME: self.name,
                LEGACY_JOB_CONTROLLER_UID: self.uid_label, LEGACY_JOB_NAME: self.name}

    def selects(self, labels: Mapping[str, str]) -> bool:
        if self.spec.get("selector"):
            return super().selects(labels)
        return labels.get(JOB_CONTROLLER_UID) == self.uid_label

    def count_finished(self, pod: Pod) -> None:
        self.finished += 1
        idx = pod.metadata.annotations.get(JOB_COMPLETION_INDEX)
        if idx is not None and idx.isdigit():
            self.done_indexes.add(int(idx))

    def reconcile(self, at_start: bool) -> tuple[Created, Deleted]:
        if self.spec.get("suspend"):
            return [], []
        parallelism = self.spec.get("parallelism")
        parallelism = 1 if parallelism is None else int(parallelism)
        completions = self.spec.get("completions")
        indexed = self.spec.get("completionMode") == "Indexed"
        succeeded = len(self.done_indexes) if indexed else self.finished
        if completions is None:
            # a work queue: done once any pod succeeded; no new pods after that
            want = parallelism if succeeded == 0 else min(parallelism, len(self.active()))
        else:
            want = max(min(parallelism, int(completions) - succeeded), 0)
        if not indexed or completions is None:
            return self.scale(want, at_start)
        active = self.active()
        running = {int(ix) for p in active
                   if (ix := p.metadata.annotations.get(JOB_COMPLETION_INDEX, "")).isdigit()}
        todo = [i for i in range(int(completions))
                if i not in self.done_indexes and i not in running]
        created = []
        for i in todo[:max(want - len(active), 0)]:
            created.append(self.create(self.new_name(f"{self.name}-{i}-"),
                                       labels={JOB_COMPLETION_INDEX: str(i)},
                                       annotations={JOB_COMPLETION_INDEX: str(i)}))
        return created, []


_KINDS: dict[str, type[_Controller]] = {
    "ReplicaSet": _ReplicaSet, "ReplicationController": _ReplicationController,
    "StatefulSet": _StatefulSet, "DaemonSet": _DaemonSet, "Job": _Job}


class Controllers:
    """The scenario's controllers. ``nodes`` is the cluster's live Node map (a DaemonSet
    targets the nodes there); ``taken`` every pod key used so far (new names avoid them)."""

    def __init__(self, scenario: Scenario, seed: int, nodes: Mapping[str, Node],
                 taken: set[str]) -> None:
        self.scenario = scenario
        self.nodes = nodes
        self.taken = taken
        # a generator of its own: naming pods must not move the scheduler's tie-breaks
        self.rng = random.Random(f"kubesched-controllers:{seed}")
        self.admit = priority_admission(scenario)
        # names (StatefulSet) and (DaemonSet, node) pairs whose pod ran to completion
        self.done: set[Any] = set()
        self._ctls: list[_Controller] = []
        self._by_ref: dict[tuple[str, str, str], _Controller] = {}
        for kind in CONTROLLER_KINDS:
            for obj in scenario.objects.get(kind, ()):
                ctl = _KINDS[kind](obj, self)
                self._ctls.append(ctl)
                self._by_ref[(kind, ctl.ns, ctl.name)] = ctl
        self._owner_of: dict[str, _Controller] = {}

    def owner(self, pod: Pod) -> _Controller | None:
        ctl = self._owner_of.get(pod.uid)
        if ctl is not None:
            return ctl
        for ref in pod.metadata.owner_references:
            if ref.controller:
                return self._by_ref.get((ref.kind, pod.namespace, ref.name))
        return None

    def start(self, pods: list[Pod]) -> tuple[Created, Deleted]:
        """The first reconciliation, over the scenario's pods: adoption, then what each
        controller creates (in controller order) and deletes."""
        for pod in pods:
            if pod.metadata.owner_references and has_controller(pod.metadata.owner_references):
                ctl = self.owner(pod)
            else:
                ctl = next((c for c in self._ctls if c.ns == pod.namespace
                            and c.selects(pod.labels)), None)
                if ctl is not None:  # adopted: the controller patches its ownerReference in
                    pod.metadata.owner_references = [*pod.metadata.owner_references,
                                                     OwnerReference(
                                                         kind=ctl.kind, name=ctl.name,
                                                         uid=ctl.obj.metadata.uid,
                                                         controller=True)]
            if ctl is None:
                continue
            if pod.status.phase == "Succeeded":
                self._finished(ctl, pod)
            elif pod.status.phase != "Failed":
                self._owner_of[pod.uid] = ctl
                ctl.track(pod)
        created: Created = []
        deleted: Deleted = []
        for ctl in self._ctls:
            c, d = ctl.reconcile(at_start=True)
            self._register(ctl, c)
            created += c
            deleted += d
        for p in deleted:
            self._owner_of.pop(p.uid, None)
        return created, deleted

    def _register(self, ctl: _Controller, pods: Created) -> None:
        for p in pods:
            self._owner_of[p.uid] = ctl

    def _finished(self, ctl: _Controller, pod: Pod) -> None:
        if isinstance(ctl, _Job):
            ctl.count_finished(pod)
        elif isinstance(ctl, _StatefulSet):
            self.done.add(pod.name)
        elif isinstance(ctl, _DaemonSet):
            self.done.add((ctl.name, ctl.target_node(pod)))
        else:
            ctl.finished += 1

    def _again(self, ctl: _Controller) -> Created:
        created, _ = ctl.reconcile(at_start=False)
        self._register(ctl, created)
        return created

    def deleting(self, pod: Pod) -> Created:
        """``pod`` is being deleted (terminating, or going at once): the pods its controller
        creates now."""
        ctl = self._owner_of.get(pod.uid)
        if ctl is None:
            return []
        ctl.terminating.add(pod.uid)
        return self._again(ctl)

    def gone(self, pod: Pod, finished: bool) -> Created:
        """``pod`` has left the API server, deleted or ``finished``."""
        ctl = self._owner_of.pop(pod.uid, None)
        if ctl is None:
            return []
        ctl.forget(pod)
        if finished:
            self._finished(ctl, pod)
        return self._again(ctl)

    def claims_for(self, pod: Pod) -> list[dict[str, Any]]:
        """The PersistentVolumeClaims ``pod``'s StatefulSet makes for it before it is
        created (and for a pod it has at start: createMissingPersistentVolumeClaims), as
        documents; none for other pods."""
        ctl = self._owner_of.get(pod.uid)
        return ctl.claims(pod) if isinstance(ctl, _StatefulSet) else []

    def bound(self, pod: Pod) -> Created:
        ctl = self._owner_of.get(pod.uid)
        if ctl is None:
            return []
        ctl.pods[pod.uid] = pod
        ctl.bound.add(pod.uid)
        return self._again(ctl) if isinstance(ctl, _StatefulSet) else []


class _Prefixed:
    """``name in taken`` for keys stored as ``namespace/name``."""

    def __init__(self, keys: Container[str], prefix: str) -> None:
        self.keys = keys
        self.prefix = prefix

    def __contains__(self, name: object) -> bool:
        return f"{self.prefix}{name}" in self.keys
