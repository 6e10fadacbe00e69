"""A pod's spec as the API server validates it (``ValidatePodSpec`` and what it calls), for
the fields the scheduler reads: containers and their names, resources, ports, node selector
and affinity, tolerations, topology spread constraints, priority, scheduling gates, volumes
and resource claims. The image is not required here: nothing in scheduling needs it (see
docs/differences.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.samevalue import (
    pod_spec_key,
    remember,
    requirements_key,
    resource_list_key,
)
from kubesched.api.validation.errors import (
    duplicate,
    first,
    forbidden,
    invalid,
    required,
    unsupported,
)
from kubesched.api.validation.meta import (
    selector_keys,
    validate_label_selector,
    validate_labels,
)
from kubesched.api.validation.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
)

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPS = ("Exists", "Equal")
UNSATISFIABLE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Ignore", "Honor")
NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
# resources whose quantities may be fractional (IsIntegerResourceName is false for them)
_FRACTIONAL = ("cpu", "memory", "ephemeral-storage", "storage")
_NATIVE_PREFIXES = ("kubernetes.io/", "requests.")
_STANDARD_CONTAINER = ("cpu", "memory", "ephemeral-storage")


def int32(path: str, value: Any) -> None:
    if isinstance(value, int) and not INT32_MIN <= value <= INT32_MAX:
        invalid(path, value, f"must be between {INT32_MIN} and {INT32_MAX}, inclusive")


def validate_pod_spec(spec: Mapping[str, Any] | None, labels: Mapping[str, str] | None,
                      path: str = "spec") -> None:
    """``labels``: the pod's own (matchLabelKeys are merged from them)."""
    spec = spec or {}
    labels = labels or {}
    containers = spec.get("containers") or []
    if not containers:
        required(f"{path}.containers")
    names: set[str] = set()
    host_network = bool(spec.get("hostNetwork"))
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or ()):
            p = f"{path}.{field}[{i}]"
            validate_container(c, p, host_network)
            if c["name"] in names:
                duplicate(f"{p}.name", c["name"])
            names.add(c["name"])
    _validate_node_name(spec, path)
    validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    validate_resource_list(spec.get("overhead"), f"{path}.overhead")
    if spec.get("resources") is not None:
        validate_requirements(spec["resources"], f"{path}.resources", pod_level=True)
    int32(f"{path}.priority", spec.get("priority"))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        invalid(f"{path}.terminationGracePeriodSeconds", grace,
                "must be greater than or equal to 0")
    affinity = spec.get("affinity") or {}
    validate_node_affinity(affinity.get("nodeAffinity"), f"{path}.affinity.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        validate_pod_affinity(affinity.get(kind), f"{path}.affinity.{kind}", labels)
    for i, t in enumerate(spec.get("tolerations") or ()):
        validate_toleration(t, f"{path}.tolerations[{i}]")
    validate_spread_constraints(spec.get("topologySpreadConstraints"),
                                f"{path}.topologySpreadConstraints", labels)
    gates: set[str] = set()
    for i, g in enumerate(spec.get("schedulingGates") or ()):
        name = g.get("name") or ""
        first(qualified_name_errors(name), f"{path}.schedulingGates[{i}].name", name)
        if name in gates:
            duplicate(f"{path}.schedulingGates[{i}].name", name)
        gates.add(name)
    validate_volumes(spec.get("volumes"), f"{path}.volumes")
    validate_resource_claims(spec.get("resourceClaims"), f"{path}.resourceClaims")


def _validate_node_name(spec: Mapping[str, Any], path: str) -> None:
    node_name = spec.get("nodeName")
    if node_name:
        first(dns1123_subdomain_errors(node_name), f"{path}.nodeName", node_name)


_VALID_SPECS: dict[Any, bool] = {}


def validate_pod_spec_once(spec: Mapping[str, Any] | None, labels: Mapping[str, str] | None
                           ) -> None:
    """``validate_pod_spec`` of a pod's own spec, judged once per template (the nodeName,
    which the pods of one template differ in, per pod)."""
    key = pod_spec_key(spec, labels)
    if key is not None and key in _VALID_SPECS:
        assert spec is not None
        _validate_node_name(spec, "spec")
        return
    validate_pod_spec(spec, labels)
    if key is not None:
        remember(_VALID_SPECS, key, True)


def validate_container(c: Mapping[str, Any], path: str, host_network: bool) -> None:
    name = c.get("name") or ""
    if not name:
        required(f"{path}.name")
    first(dns1123_label_errors(name), f"{path}.name", name)
    if c.get("resources") is not None:
        validate_requirements(c["resources"], f"{path}.resources")
    for i, port in enumerate(c.get("ports") or ()):
        p = f"{path}.ports[{i}]"
        cp = port.get("containerPort")
        if not isinstance(cp, int) or not 1 <= cp <= 65535:
            invalid(f"{p}.containerPort", cp, "must be between 1 and 65535, inclusive")
        hp = port.get("hostPort")
        if hp is not None and hp != 0 and not 1 <= hp <= 65535:
            invalid(f"{p}.hostPort", hp, "must be between 1 and 65535, inclusive")
        if host_network and hp not in (None, 0, cp):
            invalid(f"{p}.hostPort", hp, "must match `containerPort` when `hostNetwork` is true")


def is_extended_resource(name: str) -> bool:
    """helper.IsExtendedResourceName: a qualified name outside kubernetes.io, no quota
    prefix (``requests.``)."""
    if "/" not in name or name.startswith(_NATIVE_PREFIXES):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _resource_name(name: str, path: str) -> None:
    first(qualified_name_errors(name), path, name)


def _container_resource_name(name: str, path: str) -> None:
    """validateContainerResourceName: without a domain only the standard resources (an
    unknown one such as ``gpu`` would silently request nothing); with one, a native
    (kubernetes.io) or an extended resource name."""
    if "/" not in name:
        if name not in _STANDARD_CONTAINER and not name.startswith("hugepages-"):
            invalid(path, name, "must be a standard resource for containers")
    elif "kubernetes.io/" not in name and not is_extended_resource(name):
        invalid(path, name, "doesn't follow extended resource name standard")


_VALID_LISTS: dict[Any, bool] = {}


def validate_resource_list(resources: Mapping[str, Any] | None, path: str) -> None:
    key = resource_list_key(resources)
    if key is not None and key in _VALID_LISTS:
        return
    _validate_resource_list(resources, path)
    if key is not None:
        remember(_VALID_LISTS, key, True)


def _validate_resource_list(resources: Mapping[str, Any] | None, path: str) -> None:
    from kubesched.api.quantity import parse_quantity

    for name, q in (resources or {}).items():
        _resource_name(name, path)
        if name in _FRACTIONAL or name.startswith("hugepages-"):
            continue
        try:
            value = parse_quantity(q.strip() if isinstance(q, str) else q)
        except ValueError:
            continue  # the parser names the bad quantity
        if value.denominator != 1:
            invalid(f"{path}[{name}]", q, "must be an integer")


_VALID_REQUIREMENTS: dict[Any, bool] = {}


def validate_requirements(res: Mapping[str, Any], path: str, *, pod_level: bool = False
                          ) -> None:
    key = requirements_key(res)
    if key is not None:
        key = (pod_level, key)
        if key in _VALID_REQUIREMENTS:
            return
    _validate_requirements(res, path, pod_level)
    if key is not None:
        remember(_VALID_REQUIREMENTS, key, True)


def _validate_requirements(res: Mapping[str, Any], path: str, pod_level: bool) -> None:
    requests = res.get("requests") or {}
    limits = res.get("limits") or {}
    validate_resource_list(limits, f"{path}.limits")
    validate_resource_list(requests, f"{path}.requests")
    if not pod_level:
        for field, names in (("limits", limits), ("requests", requests)):
            for name in names:
                _container_resource_name(name, f"{path}.{field}[{name}]")
    if pod_level:
        for name in (*requests, *limits):
            if name not in ("cpu", "memory") and not name.startswith("hugepages-"):
                unsupported(f"{path}.requests[{name}]" if name in requests
                            else f"{path}.limits[{name}]", name, ("cpu", "memory"))
        return
    for name in requests:
        if not is_extended_resource(name):
            continue
        if name not in limits:
            forbidden(f"{path}.limits", "Limit must be set for non overcommitable resources",
                      name)
        if str(requests[name]) != str(limits[name]):
            invalid(f"{path}.requests[{name}]", requests[name],
                    f"must be equal to {name} limit of {limits[name]}")


def validate_node_selector_term(term: Mapping[str, Any], path: str) -> None:
    for i, r in enumerate(term.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        op = r.get("operator")
        if op not in NODE_SELECTOR_OPS:
            unsupported(f"{p}.operator", op, NODE_SELECTOR_OPS)
        key = r.get("key") or ""
        first(qualified_name_errors(key), f"{p}.key", key)


def validate_node_affinity(na: Mapping[str, Any] | None, path: str) -> None:
    if not na:
        return
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        terms = req.get("nodeSelectorTerms") or []
        if not terms:
            required(f"{rp}.nodeSelectorTerms", "must have at least one node selector term")
        for i, t in enumerate(terms):
            validate_node_selector_term(t or {}, f"{rp}.nodeSelectorTerms[{i}]")
    pref = na.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    for i, t in enumerate(pref):
        p = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        w = t.get("weight")
        if not isinstance(w, int) or not 1 <= w <= 100:
            invalid(f"{p}.weight", w, "must be in the range 1-100")
        validate_node_selector_term(t.get("preference") or {}, f"{p}.preference")


def validate_label_keys(term: Mapping[str, Any], path: str, labels: Mapping[str, str]) -> None:
    """matchLabelKeys / mismatchLabelKeys as v1.35 validates them after merging: the API
    server has appended ``key In (the pod's value)`` to the selector for each matchLabelKey
    the pod carries, so such a key the user's selector already names is a duplicate."""
    selector = term.get("labelSelector")
    in_selector = selector_keys(selector)
    match_keys = term.get("matchLabelKeys") or []
    for field in ("matchLabelKeys", "mismatchLabelKeys"):
        for i, k in enumerate(term.get(field) or ()):
            p = f"{path}.{field}[{i}]"
            first(qualified_name_errors(k), p, k)
            if selector is None:
                forbidden(p, "must not be specified when labelSelector is not set", k)
            if field == "matchLabelKeys" and k in in_selector and k in labels:
                invalid(p, k, "exists in both matchLabelKeys and labelSelector")
    mismatch = set(term.get("mismatchLabelKeys") or ())
    for i, k in enumerate(match_keys):
        if k in mismatch:
            invalid(f"{path}.matchLabelKeys[{i}]", k,
                    "exists in both matchLabelKeys and mismatchLabelKeys")


def validate_pod_affinity_term(term: Mapping[str, Any], path: str,
                               labels: Mapping[str, str]) -> None:
    validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for i, ns in enumerate(term.get("namespaces") or ()):
        first(dns1123_label_errors(ns), f"{path}.namespaces[{i}]", ns)
    key = term.get("topologyKey") or ""
    if not key:
        required(f"{path}.topologyKey", "can not be empty")
    first(qualified_name_errors(key), f"{path}.topologyKey", key)
    validate_label_keys(term, path, labels)


def validate_pod_affinity(pa: Mapping[str, Any] | None, path: str,
                          labels: Mapping[str, str]) -> None:
    if not pa:
        return
    for i, t in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or ()):
        validate_pod_affinity_term(t or {}, f"{path}.requiredDuringSchedulingIgnoredDuring"
                                            f"Execution[{i}]", labels)
    for i, t in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        p = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        w = t.get("weight")
        if not isinstance(w, int) or not 1 <= w <= 100:
            invalid(f"{p}.weight", w, "must be in the range 1-100")
        validate_pod_affinity_term(t.get("podAffinityTerm") or {}, f"{p}.podAffinityTerm",
                                   labels)


def validate_toleration(t: Mapping[str, Any], path: str) -> None:
    key = t.get("key") or ""
    if key:
        first(qualified_name_errors(key), f"{path}.key", key)
    op = t.get("operator") or "Equal"
    if op not in TOLERATION_OPS:
        unsupported(f"{path}.operator", op, TOLERATION_OPS)
    if not key and op != "Exists":
        invalid(f"{path}.operator", op, 'operator must be Exists when `key` is empty, which '
                'means "match all values and all keys"')
    if op == "Exists" and t.get("value"):
        invalid(f"{path}.operator", t.get("value"),
                "value must be empty when `operator` is 'Exists'")
    effect = t.get("effect") or ""
    if effect and effect not in TAINT_EFFECTS:
        unsupported(f"{path}.effect", effect, TAINT_EFFECTS)
    if t.get("tolerationSeconds") is not None and effect != "NoExecute":
        invalid(f"{path}.effect", effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set")


def validate_spread_constraints(constraints: list[Any] | None, path: str,
                                labels: Mapping[str, str]) -> None:
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints or ()):
        p = f"{path}[{i}]"
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            invalid(f"{p}.maxSkew", skew, "must be greater than zero")
        key = c.get("topologyKey") or ""
        if not key:
            required(f"{p}.topologyKey", "can not be empty")
        first(qualified_name_errors(key), f"{p}.topologyKey", key)
        action = c.get("whenUnsatisfiable") or ""
        if action not in UNSATISFIABLE_ACTIONS:
            unsupported(f"{p}.whenUnsatisfiable", action, UNSATISFIABLE_ACTIONS)
        pair = (key, action)
        if pair in seen:
            duplicate(f"{p}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {action}}}")
        seen.add(pair)
        md = c.get("minDomains")
        if md is not None:
            if md <= 0:
                invalid(f"{p}.minDomains", md, "must be greater than zero")
            if action != "DoNotSchedule":
                invalid(f"{p}.minDomains", md,
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not "
                        f"{action}")
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(field)
            if v is not None and v not in INCLUSION_POLICIES:
                unsupported(f"{p}.{field}", v, INCLUSION_POLICIES)
        validate_label_selector(c.get("labelSelector"), f"{p}.labelSelector")
        validate_label_keys(c, p, labels)


def validate_volumes(volumes: list[Any] | None, path: str) -> None:
    names: set[str] = set()
    for i, v in enumerate(volumes or ()):
        p = f"{path}[{i}]"
        name = v.get("name") or ""
        if not name:
            required(f"{p}.name")
        first(dns1123_label_errors(name), f"{p}.name", name)
        if name in names:
            duplicate(f"{p}.name", name)
        names.add(name)
        pvc = v.get("persistentVolumeClaim")
        if pvc is not None and not pvc.get("claimName"):
            required(f"{p}.persistentVolumeClaim.claimName")


def validate_resource_claims(claims: list[Any] | None, path: str) -> None:
    names: set[str] = set()
    for i, c in enumerate(claims or ()):
        p = f"{path}[{i}]"
        name = c.get("name") or ""
        first(dns1123_label_errors(name), f"{p}.name", name)
        if name in names:
            duplicate(f"{p}.name", name)
        names.add(name)
        sources = [f for f in ("resourceClaimName", "resourceClaimTemplateName") if c.get(f)]
        if len(sources) != 1:
            invalid(p, c, "must specify one of: `resourceClaimName`, "
                          "`resourceClaimTemplateName`")
