"""Load a scenario: one or more multi-document YAML files (or ``kind: List``) of objects.

See DESIGN.md "Scenarios". Objects are parsed and defaulted by ``api.parse``; this module adds
what needs the whole scenario: duplicate detection, a Namespace for every namespace used, pod
priority from PriorityClasses (as the Priority admission plugin sets it), and the one
KubeSchedulerConfiguration document.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import yaml

from kubesched.api import gangs as _gangs  # noqa: F401  (registers the gang kinds)
from kubesched.api.blockyaml import block_documents
from kubesched.api.dra import validation as _dra_validation  # noqa: F401  (registers)
from kubesched.api.dra.gates import Gates, check_new_expressions, drop_disabled_fields
from kubesched.api.dra.types import DRA_PARSERS, create_template_claims
from kubesched.api.dumptime import newest_timestamp
from kubesched.api.fastyaml import FastConstruct
from kubesched.api.faults import KIND as FAULT_KIND
from kubesched.api.faults import Fault, parse_fault, validate_fault
from kubesched.api.halves import Part, read_parts
from kubesched.api.loadprogress import LoadProgress
from kubesched.api.nodegroups import KIND as NODE_GROUP_KIND
from kubesched.api.nodegroups import parse_node_group
from kubesched.api.parse import (
    locate_error,
    make_namespace,
    object_ref,
    parse_meta,
    parse_namespace,
    parse_node,
    parse_pod,
    parse_priority_class,
)
from kubesched.api.policy import parse_pod_disruption_budget
from kubesched.api.samevalue import remember
from kubesched.api.schema import check_document, is_clean_document, release_schema
from kubesched.api.simstate import KIND as STATE_KIND
from kubesched.api.simstate import SimulationState, parse_simulation_state
from kubesched.api.storage import STORAGE_PARSERS, assign_default_storage_class
from kubesched.api.types import (
    ARRIVAL_ANNOTATION,
    DURATION_ANNOTATION,
    GenericObject,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PriorityClass,
    Toleration,
)
from kubesched.api.unmodelled import (
    gated_objects,
    name_list,
    namespaces_made,
    overcommitted,
)
from kubesched.api.validation.objects import SYSTEM_PRIORITY_CLASSES
from kubesched.api.validation.registry import validate_object
from kubesched.api.workloads import expand_deployments
from kubesched.collector import paused
from kubesched.errors import InputError
from kubesched.releases import DEFAULT_VERSION

try:
    _BaseLoader: Any = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


class _Loader(FastConstruct, _BaseLoader):  # type: ignore[misc]  # (chosen at import time)
    """YAML as kubectl turns it into JSON (sigs.k8s.io/yaml) before the API server sees it:
    mapping keys that are numbers or booleans become strings (``labels: {1: x}`` is the
    label "1"); any other key (null, a date) is refused, as there. (Documents with only
    string keys are built by ``FastConstruct``.)"""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        if all(type(k) is str for k in mapping):
            return mapping
        out: dict[Any, Any] = {}
        for k, v in mapping.items():
            key = _json_key(k)
            if key is None:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"unsupported map key {k!r} (JSON keys are strings)", node.start_mark)
            out[key] = v
        return out


def _json_key(k: Any) -> str | None:
    """sigs.k8s.io/yaml's string for a non-string mapping key, or None where it refuses."""
    if type(k) is str:
        return k
    if type(k) is bool:
        return "true" if k else "false"
    if type(k) is int:
        return str(k)
    if type(k) is float:
        return _go_float32_text(k)
    return None


def _go_float32_text(f: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'g', -1, 32)`` (with YAML's spellings of the
    non-finite values), which sigs.k8s.io/yaml uses for float keys."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    sci = np.format_float_scientific(np.float32(f), unique=True, trim="-")
    mantissa, exp_text = sci.split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    if digits.strip("0") == "":
        return sign + "0"
    exp = int(exp_text)
    if exp < -4 or exp >= 6:  # (with the shortest precision, Go decides at 6 digits)
        frac = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{frac}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    point = exp + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"

CONFIG_KIND = "KubeSchedulerConfiguration"
CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"

#: kinds kept in ``Scenario.objects`` (namespaced?): the storage kinds typed
#: (``api.storage``), the others raw until the plugins that read them parse them.
GENERIC_KINDS: dict[str, bool] = {
    "PersistentVolume": False,
    "PersistentVolumeClaim": True,
    "StorageClass": False,
    "CSINode": False,
    "CSIDriver": False,
    "CSIStorageCapacity": True,
    "PodDisruptionBudget": True,
    "Service": True,
    "ReplicaSet": True,
    "ReplicationController": True,
    "StatefulSet": True,
    "Job": True,
    "DeviceClass": False,
    "ResourceSlice": False,
    "ResourceClaim": True,
    "ResourceClaimTemplate": True,
    "DeviceTaintRule": False,
    "Deployment": True,
    "DaemonSet": True,
    "CronJob": True,
    # gangs (api.gangs): PodGroup holds scheduler-plugins' and upstream's kinds alike
    "PodGroup": True,
    "Workload": True,
    # the autoscaler's node groups (api.nodegroups)
    NODE_GROUP_KIND: False,
}

CLUSTER_SCOPED_KINDS = frozenset(
    {"Node", "Namespace", "PriorityClass", FAULT_KIND, STATE_KIND}
    | {k for k, ns in GENERIC_KINDS.items() if not ns})


#: the DefaultTolerationSeconds admission plugin's taints and its default (its
#: --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds)
TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300

#: other kinds parsed into typed objects (``api.policy``).
TYPED_PARSERS: dict[str, Any] = {"PodDisruptionBudget": parse_pod_disruption_budget,
                                  NODE_GROUP_KIND: parse_node_group, **DRA_PARSERS}



@dataclass
class Scenario:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)  # file order; running = spec.node_name set
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    objects: dict[str, list[Any]] = field(
        default_factory=lambda: {kind: [] for kind in GENERIC_KINDS})
    config: dict[str, Any] | None = None
    config_source: str | None = None
    warnings: list[str] = field(default_factory=list)
    # Pods the API server would refuse at creation (a missing PriorityClass): uid → its
    # message. They stay pending and are never scheduled (see ``_resolve_priorities``).
    admission_errors: dict[str, str] = field(default_factory=dict)
    # Pods bound to a node the scenario does not hold: pod key → that node's name.
    missing_node_pods: dict[str, str] = field(default_factory=dict)
    # kind: Fault documents, in file order (the simulator sorts them by time)
    faults: list[Fault] = field(default_factory=list)
    # every document but Pods and Nodes, as read (and the ReplicaSets Deployments made), in
    # order: what ``simulate --state-out`` writes back as loaded
    documents: list[dict[str, Any]] = field(default_factory=list)
    # a kind: SimulationState read with the objects: the run continues from it
    resume: SimulationState | None = None
    # the dump's now (epoch seconds): its newest timestamp (``api.dumptime``), which virtual
    # time 0 stands for; None when it has none
    dump_time: float | None = None


@dataclass
class ClusterState:
    """What ``explain`` judges a pod against: nodes, the pods bound to them (terminating ones
    too), pending pods nominated to a node, and the other objects."""

    nodes: list[Node]
    running: list[Pod]
    nominated: list[tuple[Pod, str]]
    objects: dict[str, list[Any]]
    namespaces: dict[str, Namespace]


def scenario_state(scenario: Scenario) -> ClusterState:
    """The state of a scenario as loaded."""
    running = [p for p in scenario.pods
               if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    nominated = [(p, p.status.nominated_node_name) for p in scenario.pods
                 if not p.spec.node_name and p.status.nominated_node_name
                 and p.uid not in scenario.admission_errors]
    return ClusterState(scenario.nodes, running, nominated, scenario.objects,
                        scenario.namespaces)


def _annotation_seconds(pod: Pod, key: str) -> float | None:
    raw = pod.metadata.annotations.get(key)
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError("must be a non-negative number of seconds, like \"12.5\"",
                         obj=object_ref("Pod", pod.metadata),
                         field=f"metadata.annotations[{key}]", value=raw)
    return value


def pod_arrival(pod: Pod) -> float:
    """When a pending pod arrives, in virtual seconds (annotation kubesched.io/arrival; 0)."""
    return _annotation_seconds(pod, ARRIVAL_ANNOTATION) or 0.0


def pod_duration(pod: Pod) -> float | None:
    """How long a pod runs once bound (annotation kubesched.io/duration), or None: forever."""
    return _annotation_seconds(pod, DURATION_ANNOTATION)


class _ScenarioBuilder:
    """Accumulates documents from any number of sources, then resolves the scenario."""

    def __init__(self, release: str = DEFAULT_VERSION, strict: bool = False,
                 validate: bool = True, admit: bool = True,
                 gates: Gates | None = None, progress: LoadProgress | None = None
                 ) -> None:
        self.sc = Scenario()
        self.progress = progress
        # the API server's feature gates (None: every field kept)
        self.gates = gates
        self.admit = admit
        self.schema = release_schema(release)
        self.strict = strict
        self.validate = validate
        self._node_names: set[str] = set()
        self._pod_keys: set[str] = set()
        self._generic_keys: set[tuple[str, str, str, str]] = set()
        self._skipped: dict[tuple[str, str], list[str]] = {}  # (file, kind) -> objects

    # -- documents

    def add_text(self, text: str, source: str) -> None:
        progress = self.progress
        if progress is not None:
            progress.parsing(source)
        json_docs = _json_documents(text)
        parts = (iter([Part(text, 0, json_docs, None)]) if json_docs is not None else
                 read_parts(text, lambda part: block_documents(part, _Loader("")),
                            self._checked))
        n = 0
        for part in parts:
            docs = part.docs if part.docs is not None else self._read_yaml(part, source)
            if progress is not None:
                if json_docs is None:  # (JSON is parsed at once)
                    for _ in docs:
                        progress.document()
                progress.objects()
            checked = part.prepared or [False] * len(docs)
            try:
                for doc, ok in zip(docs, checked, strict=True):
                    n += 1
                    if doc is not None:
                        self._add_object(doc, source, f"document {n}", ok)
            except InputError:
                # malformed YAML further on is what reading the whole text first reports
                for later in parts:
                    if later.docs is None:
                        self._read_yaml(later, source)
                raise
        self._warn_skipped()

    def _read_yaml(self, part: Part, source: str) -> list[Any]:
        """The documents of a part the block reader left to PyYAML."""
        try:
            return list(yaml.load_all(part.text, Loader=_Loader))
        except yaml.YAMLError as e:
            line, problem = yaml_problem(e, part.text)
            where = f"{source}:{line + part.line}" if line is not None else source
            raise InputError(f"malformed YAML: {problem}", file=where) from None

    def _checked(self, docs: list[Any]) -> list[bool]:
        """For each document, whether the API server's decoding and validation pass it with
        nothing to say (``_check_structure`` then need not run them again); run by the child
        of ``read_parts`` over its part, so it must not modify the documents."""
        out = []
        for doc in docs:
            ok = False
            if isinstance(doc, dict) and is_clean_document(doc, self.schema):
                try:
                    validate_object(doc["kind"], doc)
                    ok = True
                except Exception:  # (the check proper, later, says what)
                    ok = False
            out.append(ok)
        return out

    def _warn_skipped(self) -> None:
        """One line per kind skipped in a file (a dump may hold thousands of Events)."""
        for (source, kind), refs in self._skipped.items():
            what = (f"{kind} {refs[0]}" if len(refs) == 1
                    else f"{len(refs)} {kind} objects ({name_list(refs)})")
            self.sc.warnings.append(f"{source}: skipping {what}: kind not supported")
        self._skipped.clear()

    def _add_object(self, doc: Any, source: str, where: str, checked: bool = False) -> None:
        """``checked``: ``_checked`` passed the document."""
        if not isinstance(doc, dict):
            raise InputError(f"{where} is not a Kubernetes object (a mapping)", file=source,
                             value=_short(doc))
        kind = doc.get("kind")
        if not isinstance(kind, str) or not kind:
            raise InputError(f"{where} has no kind", file=source, field="kind", value=kind)
        if kind == "List" or (kind.endswith("List") and "items" in doc):
            items = doc.get("items")
            if items is None:
                return
            if not isinstance(items, list):
                raise InputError("must be a list", file=source, obj=f"{where} ({kind})",
                                 field="items", value=_short(items))
            for j, item in enumerate(items):
                self._add_object(item, source, f"{where} items[{j}]")
            return
        if self.progress is not None:
            self.progress.object()
        self._check_structure(doc, kind, source, checked)
        newest = newest_timestamp(doc)
        if newest is not None and (self.sc.dump_time is None or newest > self.sc.dump_time):
            self.sc.dump_time = newest
        if kind not in ("Node", "Pod", STATE_KIND):
            self.sc.documents.append(doc)
        if kind == "Node":
            self._add_node(parse_node(doc, source=source), source)
        elif kind == "Pod":
            self._add_pod(parse_pod(doc, source=source), source)
        elif kind == "Namespace":
            ns = parse_namespace(doc, source=source)
            self._check_new(ns.metadata.name in self.sc.namespaces, "Namespace", ns.metadata,
                            source)
            self.sc.namespaces[ns.metadata.name] = ns
        elif kind == "PriorityClass":
            pc = parse_priority_class(doc, source=source)
            self._check_new(pc.metadata.name in self.sc.priority_classes, "PriorityClass",
                            pc.metadata, source)
            self.sc.priority_classes[pc.metadata.name] = pc
        elif kind in GENERIC_KINDS:
            self._add_generic(kind, doc, source)
        elif kind == CONFIG_KIND:
            self._add_config(doc, source)
        elif kind == FAULT_KIND:
            self._add_fault(doc, source)
        elif kind == STATE_KIND:
            if self.sc.resume is not None:
                raise InputError(f"more than one {STATE_KIND} (the first is in "
                                 f"{self.sc.resume.source})", file=source, obj=STATE_KIND)
            self.sc.resume = parse_simulation_state(doc, source)
        else:
            md = doc.get("metadata")
            md = md if isinstance(md, dict) else {}
            name = md.get("name", "?")
            md_ns = md.get("namespace")
            ref = f"{md_ns}/{name}" if md_ns else f"{name}"
            self._skipped.setdefault((source, kind), []).append(ref)

    def _check_structure(self, doc: dict[str, Any], kind: str, source: str,
                         checked: bool = False) -> None:
        """The API server's decoding (the apiVersion served, field types, unknown fields: a
        warning, as its default field validation, or an error when strict), then its
        validation of the object; ``checked``: both passed already (``_checked``), the
        validation standing unless a disabled gate's field is dropped."""
        namespaced = kind not in CLUSTER_SCOPED_KINDS
        unknown: list[str] | None = []
        if not checked:
            try:
                unknown = check_document(doc, self.schema)
            except InputError as e:
                raise locate_error(e, kind, doc, namespaced).located(file=source) from None
        dropped: list[str] = []
        if unknown is not None and self.gates is not None:
            try:
                check_new_expressions(kind, doc, self.gates)
            except InputError as e:
                raise locate_error(e, kind, doc, namespaced).located(file=source) from None
            # a field the release does not know at all (list-type attributes in 1.35) is
            # the unknown-field warning's, not a disabled gate's
            dropped = [f for f in drop_disabled_fields(kind, doc, self.gates)
                       if f not in unknown]
            if dropped:
                self.sc.warnings.append(
                    f"{source}: {locate_error(InputError(''), kind, doc, namespaced).obj}: "
                    f"{', '.join(dropped)} dropped: the API server drops fields of feature "
                    "gates that are off")
        if unknown is not None and (not checked or dropped):
            try:
                validate_object(kind, doc)
            except InputError as e:
                err = locate_error(e, kind, doc, namespaced).located(file=source)
                if self.validate:
                    raise err from None
                self.sc.warnings.append(f"{err} (the API server would refuse it; kept)")
        if not unknown or not self._reads(kind):
            return
        fields = ", ".join(f'unknown field "{f}"' for f in unknown)
        if self.strict:
            err = InputError(f"strict decoding error: {fields}", field=unknown[0])
            raise locate_error(err, kind, doc, namespaced).located(file=source)
        where = locate_error(InputError(""), kind, doc, namespaced).obj
        self.sc.warnings.append(f"{source}: {where}: {fields} (ignored; --strict refuses it)")

    @staticmethod
    def _reads(kind: str) -> bool:
        return (kind in ("Node", "Pod", "Namespace", "PriorityClass", FAULT_KIND, STATE_KIND)
                or kind in GENERIC_KINDS)

    def _check_new(self, exists: bool, kind: str, meta: ObjectMeta, source: str) -> None:
        if exists:
            raise InputError(f"duplicate {kind}: another object has the same name",
                             file=source, obj=object_ref(kind, meta))

    def _add_node(self, node: Node, source: str) -> None:
        self._check_new(node.name in self._node_names, "Node", node.metadata, source)
        self._node_names.add(node.name)
        self.sc.nodes.append(node)

    def _add_pod(self, pod: Pod, source: str) -> None:
        self._check_new(pod.key in self._pod_keys, "Pod", pod.metadata, source)
        try:
            pod_arrival(pod)
            pod_duration(pod)
        except InputError as e:
            raise e.located(file=source) from None
        self._pod_keys.add(pod.key)
        default_toleration_seconds(pod)
        self.sc.pods.append(pod)

    def _add_generic(self, kind: str, doc: dict[str, Any], source: str) -> None:
        namespaced = GENERIC_KINDS[kind]
        try:
            meta = parse_meta(doc.get("metadata"), namespaced=namespaced)
        except InputError as e:
            raise locate_error(e, kind, doc, namespaced).located(file=source) from None
        # the group too: scheduler-plugins' and upstream's PodGroup share a kind name
        api_version = doc.get("apiVersion")
        group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
        key = (kind, group, meta.namespace, meta.name)
        self._check_new(key in self._generic_keys, kind, meta, source)
        self._generic_keys.add(key)
        parser = STORAGE_PARSERS.get(kind) or TYPED_PARSERS.get(kind)
        obj = (parser(doc, source=source) if parser is not None
               else GenericObject(kind=kind, metadata=meta, raw=doc))
        self.sc.objects[kind].append(obj)

    def _add_fault(self, doc: dict[str, Any], source: str) -> None:
        # validated even when the API server's validation is only warned about: a fault
        # that is kept must be one the simulator can carry out
        try:
            validate_fault(doc)
        except InputError as e:
            raise locate_error(e, FAULT_KIND, doc, False).located(file=source) from None
        fault = parse_fault(doc, source)
        self._check_new(any(f.name == fault.name for f in self.sc.faults), FAULT_KIND,
                        ObjectMeta(name=fault.name), source)
        self.sc.faults.append(fault)

    def _add_config(self, doc: dict[str, Any], source: str) -> None:
        api_version = doc.get("apiVersion")
        if api_version != CONFIG_API_VERSION:
            raise InputError(f"unsupported apiVersion; kubesched reads {CONFIG_API_VERSION}",
                             file=source, obj=CONFIG_KIND, field="apiVersion",
                             value=api_version)
        if self.sc.config is not None:
            raise InputError(f"more than one {CONFIG_KIND} (the first is in "
                             f"{self.sc.config_source})", file=source, obj=CONFIG_KIND)
        self.sc.config = doc
        self.sc.config_source = source

    # -- whole-scenario resolution

    def finish(self) -> Scenario:
        self._warn_skipped()
        sc = self.sc
        used = [p.namespace for p in sc.pods]
        used += [o.metadata.namespace for objs in sc.objects.values() for o in objs]
        made = []
        for ns in used:
            if ns and ns not in sc.namespaces:
                sc.namespaces[ns] = make_namespace(ns)
                made.append(ns)
        sc.warnings.extend(namespaces_made(made, sc.pods))
        if self.gates is not None:
            sc.warnings.extend(gated_objects(sc.objects, self.schema.release, self.gates))
        if self.admit:
            self._resolve_priorities()
        self._check_fault_targets()
        before = len(sc.objects["ReplicaSet"])
        sc.warnings.extend(expand_deployments(sc.objects))
        sc.documents.extend(rs.raw for rs in sc.objects["ReplicaSet"][before:])
        for cj in sc.objects["CronJob"]:
            sc.warnings.append(f"CronJob {cj.metadata.namespace}/{cj.metadata.name}: "
                               "kubesched does not run CronJobs; no Job is created")
        self._warn_missing_nodes()
        sc.warnings.extend(overcommitted(sc.nodes, sc.pods))
        assign_default_storage_class(sc.objects["PersistentVolumeClaim"],
                                     sc.objects["StorageClass"])
        sc.warnings.extend(create_template_claims(sc.pods, sc.objects))
        return sc

    def _check_fault_targets(self) -> None:
        """A fault names objects of the scenario (a typo would otherwise do nothing)."""
        pods = self._pod_keys
        for f in self.sc.faults:
            for fld, value, known, what in (("spec.node", f.node, self._node_names, "Node"),
                                            ("spec.boundTo", f.bound_to, self._node_names,
                                             "Node"),
                                            ("spec.pod", f.pod, pods, "Pod")):
                if value is not None and value not in known:
                    raise InputError(f"no {what} {value} in the scenario", file=f.source,
                                     obj=f.ref, field=fld, value=value)
            if f.device is not None and f.device not in self._device_names():
                raise InputError(f"no device {f.device} in the scenario's ResourceSlices",
                                 file=f.source, obj=f.ref, field="spec.device",
                                 value=f.device)

    def _device_names(self) -> set[str]:
        return {f"{s.driver}/{s.pool}/{d.name}"
                for s in self.sc.objects.get("ResourceSlice", ()) for d in s.devices}

    def _warn_missing_nodes(self) -> None:
        """A pod bound to a Node the scenario lacks holds nothing anywhere; as in a cluster
        (no kubelet ever runs it) it stays as it is, and is reported."""
        sc = self.sc
        for pod in sc.pods:
            node = pod.spec.node_name
            if node and node not in self._node_names and pod.status.phase not in (
                    "Succeeded", "Failed"):
                sc.missing_node_pods[pod.key] = node
                sc.warnings.append(f"Pod {pod.key}: spec.nodeName {node!r} names no Node in "
                                   "the scenario; it is reported, never scheduled")

    def _resolve_priorities(self) -> None:
        """The Priority admission plugin: priority (and preemptionPolicy) from the pod's
        PriorityClass, or from the global default class when it names none.

        A pod naming a PriorityClass that does not exist is refused by that admission
        plugin upstream (``pods "x" is forbidden: no PriorityClass with name y was found``),
        so no scheduler ever sees it. That is a scheduling problem, not bad input: the pod
        is kept, pending for good, with the API server's message in
        ``Scenario.admission_errors`` (the simulator reports it as the pod's reason)."""
        sc = self.sc
        admit = priority_admission(sc)
        for pod in sc.pods:
            admit(pod)


def priority_admission(sc: Scenario) -> Callable[[Pod], None]:
    """The Priority admission plugin for ``sc``'s PriorityClasses: a function that sets a
    pod's priority (and preemptionPolicy) as the plugin does, or records why the API server
    refuses it in ``sc.admission_errors``. Used at load and for the pods controllers
    create."""
    classes: dict[str, tuple[int, str]] = {
        name: (value, "PreemptLowerPriority")
        for name, value in SYSTEM_PRIORITY_CLASSES.items()}
    defaults = []
    for name, pc in sc.priority_classes.items():
        classes[name] = (pc.value, pc.preemption_policy)
        if pc.global_default:
            defaults.append(pc)
    if len(defaults) > 1:
        names = ", ".join(pc.metadata.name for pc in defaults)
        raise InputError(f"more than one PriorityClass has globalDefault: true ({names})")
    default = defaults[0] if defaults else None

    def admit(pod: Pod) -> None:
        spec = pod.spec
        if spec.priority is not None:
            return
        if spec.priority_class_name:
            found = classes.get(spec.priority_class_name)
            if found is None:  # a running pod keeps priority 0, as before
                if not spec.node_name:
                    msg = (f'pods "{pod.name}" is forbidden: no PriorityClass with name '
                           f"{spec.priority_class_name} was found")
                    sc.admission_errors[pod.uid] = msg
                    sc.warnings.append(f"Pod {pod.key}: {msg}; it stays pending")
                return
            spec.priority, policy = found
        elif default is not None:
            spec.priority_class_name = default.metadata.name
            spec.priority, policy = default.value, default.preemption_policy
        else:
            return
        if spec.preemption_policy is None:
            spec.preemption_policy = policy

    return admit


def default_toleration_seconds(pod: Pod) -> None:
    """The DefaultTolerationSeconds admission plugin: a pod that does not tolerate the
    not-ready / unreachable NoExecute taints itself gets tolerations for them, for 300 s (so
    the taint manager evicts it 300 s after its node goes NotReady)."""
    given = pod.spec.tolerations
    # the pods of one template share their tolerations' tuple (api.parse): default it once
    known = _DEFAULTED_TOLERATIONS.get(id(given))
    if known is not None and known[0] is given:
        pod.spec.tolerations = known[1]
        return
    not_ready = unreachable = False
    for t in given:
        if t.effect in ("NoExecute", ""):
            not_ready |= t.key in (TAINT_NODE_NOT_READY, "")
            unreachable |= t.key in (TAINT_NODE_UNREACHABLE, "")
    added = tuple(Toleration(key, "Exists", "", "NoExecute", DEFAULT_TOLERATION_SECONDS)
                  for key, has in ((TAINT_NODE_NOT_READY, not_ready),
                                   (TAINT_NODE_UNREACHABLE, unreachable)) if not has)
    if added:
        pod.spec.tolerations = (*given, *added)
    remember(_DEFAULTED_TOLERATIONS, id(given), (given, pod.spec.tolerations))


# id(tolerations) -> (those tolerations, defaulted); the first item keeps the id from reuse
_DEFAULTED_TOLERATIONS: dict[int, tuple[tuple[Toleration, ...], tuple[Toleration, ...]]] = {}


_JSON_START = re.compile(r"\s*[\[{]")


def _json_documents(text: str) -> list[Any] | None:
    """The one document of a JSON text (``kubectl get -o json``, ``kubesched snapshot -o
    json``), parsed by orjson, many times faster than YAML; None when the text is not JSON
    orjson reads (YAML, or JSON it refuses: a number beyond 64 bits, NaN), which is then read
    as YAML, as before, so every message about a malformed file stays YAML's."""
    if _JSON_START.match(text) is None:
        return None
    try:
        return [orjson.loads(text)]
    except orjson.JSONDecodeError:
        return None


def yaml_problem(e: yaml.YAMLError, text: str) -> tuple[int | None, str]:
    """The line (1-based, when known) and a one-line description of a YAML error. PyYAML's
    own text spans lines; a character the reader refuses has no mark, only a position."""
    if isinstance(e, yaml.reader.ReaderError):
        line = text.count("\n", 0, e.position) + 1 if isinstance(e.position, int) else None
        char = e.character
        code = ord(char) if isinstance(char, str) else char
        return line, f"unacceptable character #x{code:04x}: {e.reason}"
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    return (mark.line + 1 if mark is not None else None), " ".join(str(problem).split())


def _short(v: Any) -> Any:
    text = repr(v)
    return v if len(text) <= 80 else text[:77] + "..."


def load_scenario_text(text: str, source: str = "<string>", *,
                       release: str = DEFAULT_VERSION, strict: bool = False,
                       validate: bool = True, gates: Gates | None = None) -> Scenario:
    """Load one YAML text (``source`` names it in messages and warnings), validated as
    Kubernetes ``release``'s API server would. ``validate=False`` keeps objects the API
    server would refuse, with a warning each (objects that never went through one: a test
    harness's, a live cluster's already admitted). ``gates``: the API server's feature
    gates, whose disabled fields it drops (``api.dra.gates``); None keeps every field."""
    loader = _ScenarioBuilder(release, strict, validate, gates=gates)
    with paused():
        loader.add_text(text, source)
        return loader.finish()


def load_scenario_docs(docs: list[dict[str, Any]], source: str, *,
                       release: str = DEFAULT_VERSION) -> Scenario:
    """Load a scenario from objects already parsed into mappings (a trace importer's), as
    ``load_scenario_text`` loads them from YAML; messages name ``source``."""
    loader = _ScenarioBuilder(release)
    with paused():
        for i, doc in enumerate(docs):
            loader._add_object(doc, source, f"object {i + 1}")
        return loader.finish()


def load_scenario(paths: list[str], *, release: str = DEFAULT_VERSION,
                  strict: bool = False, validate: bool = True, admit: bool = True,
                  gates: Gates | None = None, progress: LoadProgress | None = None
                  ) -> Scenario:
    """Load the scenario made of all ``paths`` together, in order (see
    ``load_scenario_text``). ``admit=False`` leaves pods' priorities unresolved (a pod
    meant to be admitted into another scenario: ``priority_admission`` of that one).
    ``progress`` is told of every document parsed and object read."""
    loader = _ScenarioBuilder(release, strict, validate, admit, gates, progress)
    with paused():
        for p in scenario_files(paths):
            if p == "-":
                loader.add_text(sys.stdin.read(), "<stdin>")
                continue
            try:
                text = Path(p).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                reason = getattr(e, "strerror", None) or e
                raise InputError(f"cannot read scenario file: {reason}", file=p) from None
            loader.add_text(text, p)
        scenario = loader.finish()
    if progress is not None:
        progress.done()
    return scenario


SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")


def scenario_files(paths: list[str]) -> list[str]:
    """``paths`` with each directory replaced by its ``.yaml``, ``.yml`` and ``.json`` files
    (sorted by name, not recursing, as ``kubectl apply -f DIR``); ``-`` is standard input."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if p != "-" and path.is_dir():
            files = sorted(str(f) for f in path.iterdir()
                           if f.is_file() and f.suffix in SCENARIO_SUFFIXES)
            if not files:
                raise InputError("no .yaml, .yml or .json files in this directory", file=p)
            out += files
        else:
            out.append(p)
    return out
