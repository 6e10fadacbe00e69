"""The other kinds kubesched reads: Node, PriorityClass, PodDisruptionBudget, the pod
controllers, and the metadata of the rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.validation.errors import (
    duplicate,
    first,
    forbidden,
    invalid,
    required,
    unsupported,
)
from kubesched.api.validation.meta import validate_label_selector, validate_labels, validate_meta
from kubesched.api.validation.names import dns1123_label_errors, qualified_name_errors
from kubesched.api.validation.pod import (
    TAINT_EFFECTS,
    int32,
    validate_pod_spec,
    validate_pod_spec_once,
    validate_resource_list,
)

# scheduling.k8s.io: user-defined classes go up to HighestUserDefinablePriority; the names
# and values above it belong to the system classes
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
# the PriorityClasses every cluster has (scheduling.k8s.io SystemPriorityClasses)
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000,
                           "system-node-critical": 2_000_001_000}
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"


def validate_pod(doc: Mapping[str, Any]) -> None:
    md = doc.get("metadata") or {}
    validate_meta(md, namespaced=True)
    validate_pod_spec_once(doc.get("spec"), md.get("labels"))


def validate_node(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=False)
    spec = doc.get("spec") or {}
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(spec.get("taints") or ()):
        p = f"spec.taints[{i}]"
        key = t.get("key") or ""
        if not key:
            required(f"{p}.key")
        first(qualified_name_errors(key), f"{p}.key", key)
        effect = t.get("effect") or ""
        if not effect:
            required(f"{p}.effect")
        if effect not in TAINT_EFFECTS:
            unsupported(f"{p}.effect", effect, TAINT_EFFECTS)
        if (key, effect) in seen:
            duplicate(f"{p}", f"{key}:{effect}")
        seen.add((key, effect))
    status = doc.get("status") or {}
    validate_resource_list(status.get("capacity"), "status.capacity")
    validate_resource_list(status.get("allocatable"), "status.allocatable")


def validate_priority_class(doc: Mapping[str, Any]) -> None:
    md = doc.get("metadata") or {}
    validate_meta(md, namespaced=False)
    name, value = md.get("name", ""), doc.get("value")
    if value is None:
        required("value")
    int32("value", value)
    system = SYSTEM_PRIORITY_CLASSES.get(name)
    if system is not None:
        if value != system:
            invalid("value", value, f"value of {name} PriorityClass must be {system}")
    elif name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        forbidden("metadata.name", "priority class names with 'system-' prefix are reserved "
                  "for system use only", name)
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        forbidden("value", "maximum allowed value of a user defined priority is "
                  f"{HIGHEST_USER_DEFINABLE_PRIORITY}", value)
    policy = doc.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        unsupported("preemptionPolicy", policy, ("PreemptLowerPriority", "Never"))


def _int_or_percent(v: Any, path: str) -> None:
    if isinstance(v, int):
        if v < 0:
            invalid(path, v, "must be greater than or equal to 0")
    elif isinstance(v, str):
        digits = v[:-1]
        if not v.endswith("%") or not digits.isdigit():
            invalid(path, v, "a valid percent string must be a numeric string followed by an "
                    "ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                    "'[0-9]+%')")
        if int(digits) > 100:
            invalid(path, v, "must not be greater than 100%")


def validate_pod_disruption_budget(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=True)
    spec = doc.get("spec") or {}
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set")
    for f in ("minAvailable", "maxUnavailable"):
        if spec.get(f) is not None:
            _int_or_percent(spec[f], f"spec.{f}")
    validate_label_selector(spec.get("selector"), "spec.selector")


def validate_controller(doc: Mapping[str, Any]) -> None:
    """ReplicaSet, ReplicationController, StatefulSet (and the workload kinds that embed a
    pod template): replicas, a selector that selects the template, the template's pod."""
    from kubesched.api.parse import parse_label_selector
    from kubesched.api.selectors import label_selector_matches

    kind = doc.get("kind")
    validate_meta(doc.get("metadata"), namespaced=True)
    spec = doc.get("spec") or {}
    replicas = spec.get("replicas")
    if replicas is not None:
        int32("spec.replicas", replicas)
        if replicas < 0:
            invalid("spec.replicas", replicas, "must be greater than or equal to 0")
    template = spec.get("template") or {}
    tmd = template.get("metadata") or {}
    labels = tmd.get("labels") or {}
    validate_labels(labels, "spec.template.metadata.labels")
    selector = spec.get("selector")
    if kind == "ReplicationController":  # a plain map, defaulted from the template's labels
        selector = selector or labels
        validate_labels(selector, "spec.selector")
        if not selector:
            required("spec.selector")
        if any(labels.get(k) != v for k, v in selector.items()):
            invalid("spec.template.metadata.labels", labels,
                    "`selector` does not match template `labels`")
    else:
        if not selector or not (selector.get("matchLabels") or
                                selector.get("matchExpressions")):
            required("spec.selector") if selector is None else invalid(
                "spec.selector", selector, "empty selector is invalid for deployment")
        validate_label_selector(selector, "spec.selector")
        if not label_selector_matches(parse_label_selector(selector, "spec.selector"),
                                      labels):
            invalid("spec.template.metadata.labels", labels,
                    "`selector` does not match template `labels`")
    if kind == "StatefulSet":
        policy = spec.get("podManagementPolicy")
        if policy is not None and policy not in ("OrderedReady", "Parallel"):
            unsupported("spec.podManagementPolicy", policy, ("OrderedReady", "Parallel"))
        start = (spec.get("ordinals") or {}).get("start")
        if isinstance(start, int) and start < 0:
            invalid("spec.ordinals.start", start, "must be greater than or equal to 0")
        _validate_claim_templates(spec.get("volumeClaimTemplates"))
    if kind == "Deployment":
        strategy = (spec.get("strategy") or {}).get("type")
        if strategy is not None and strategy not in ("Recreate", "RollingUpdate"):
            unsupported("spec.strategy.type", strategy, ("Recreate", "RollingUpdate"))
    if kind == "DaemonSet" and replicas is not None:
        invalid("spec.replicas", replicas, "a DaemonSet has no replicas")  # not in its schema
    tspec = template.get("spec") or {}
    # ValidatePodTemplateSpecForReplicaSet / ForStatefulSet / DaemonSet: pods that restart
    policy = tspec.get("restartPolicy")
    if policy is not None and policy != "Always":
        unsupported("spec.template.spec.restartPolicy", policy, ("Always",))
    validate_pod_spec(tspec, labels, "spec.template.spec")


def _validate_claim_templates(templates: Any) -> None:
    """Each of a StatefulSet's volumeClaimTemplates is a claim the controller will create:
    checked as one now, named (the claim's name is made from it)."""
    from kubesched.api.storage import parse_persistent_volume_claim
    from kubesched.errors import InputError

    if templates is None:
        return
    if not isinstance(templates, list):
        invalid("spec.volumeClaimTemplates", templates, "must be a list")
    for i, t in enumerate(templates):
        path = f"spec.volumeClaimTemplates[{i}]"
        name = ((t.get("metadata") or {}) if isinstance(t, dict) else {}).get("name")
        if not name:
            required(f"{path}.metadata.name")
        try:
            parse_persistent_volume_claim({**t, "kind": "PersistentVolumeClaim"})
        except InputError as e:
            raise InputError(e.message, field=f"{path}.{e.field}" if e.field else path,
                             value=e.value) from None


def validate_job(doc: Mapping[str, Any]) -> None:
    """batch/v1 Job: counts, completion mode, restartPolicy OnFailure or Never, and the
    selector (the API server generates it unless ``manualSelector`` is true)."""
    validate_meta(doc.get("metadata"), namespaced=True)
    validate_job_spec(doc.get("spec") or {}, "spec")


def validate_job_spec(spec: Mapping[str, Any], path: str) -> None:
    from kubesched.api.parse import parse_label_selector
    from kubesched.api.selectors import label_selector_matches

    for f in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"):
        v = spec.get(f)
        if v is None:
            continue
        int32(f"{path}.{f}", v)
        if v < 0 or (f == "activeDeadlineSeconds" and v == 0):
            invalid(f"{path}.{f}", v, "must be greater than or equal to 0"
                    if f != "activeDeadlineSeconds" else "must be greater than 0")
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        unsupported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed"))
    if mode == "Indexed" and spec.get("completions") is None:
        required(f"{path}.completions", "when completion mode is Indexed")
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in ("TerminatingOrFailed", "Failed"):
        unsupported(f"{path}.podReplacementPolicy", replacement,
                    ("TerminatingOrFailed", "Failed"))
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    validate_labels(labels, f"{path}.template.metadata.labels")
    selector = spec.get("selector")
    if spec.get("manualSelector"):
        if not selector:
            required(f"{path}.selector")
        validate_label_selector(selector, f"{path}.selector")
        if not label_selector_matches(parse_label_selector(selector, f"{path}.selector"),
                                      labels):
            invalid(f"{path}.template.metadata.labels", labels,
                    "`selector` does not match template `labels`")
    elif selector:
        validate_label_selector(selector, f"{path}.selector")
    tspec = template.get("spec") or {}
    policy = tspec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        if policy is None:
            required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", '
                     '"Never"')
        unsupported(f"{path}.template.spec.restartPolicy", policy, ("OnFailure", "Never"))
    validate_pod_spec(tspec, labels, f"{path}.template.spec")


def validate_cron_job(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=True)
    spec = doc.get("spec") or {}
    if not spec.get("schedule"):
        required("spec.schedule")
    validate_job_spec((spec.get("jobTemplate") or {}).get("spec") or {},
                      "spec.jobTemplate.spec")


def validate_namespace(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=False, name_check=dns1123_label_errors)


def validate_service(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=True, name_check=dns1123_label_errors)
    validate_labels((doc.get("spec") or {}).get("selector"), "spec.selector")


def validate_cluster_meta(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=False)


def validate_namespaced_meta(doc: Mapping[str, Any]) -> None:
    validate_meta(doc.get("metadata"), namespaced=True)
