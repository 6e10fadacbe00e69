"""Kubernetes JSON/YAML dicts → the lean object model, with the API server's defaulting.

Every bad field raises ``InputError`` naming the object ("Pod ns/name"), the field path
(``spec.containers[0].resources.requests.cpu``) and the bad value; the scenario loader adds
the file. Missing or null collections are empty. Defaulting applied, as the API server would:

* namespace ``default`` for namespaced objects; uid ``"<namespace>/<name>"`` (nodes and
  other cluster-scoped objects: ``"<name>"``) when absent;
* pods: schedulerName ``default-scheduler``, terminationGracePeriodSeconds 30, container
  (and init container) requests from limits for resources with only a limit, pod-level
  requests as ``defaultPodRequests`` sets them, toleration operator ``Equal``, port protocol
  ``TCP`` (hostNetwork pods: hostPort = containerPort), and the pod-affinity /
  topology-spread ``matchLabelKeys`` merged into the label selectors (v1.35 API server);
* nodes: allocatable from capacity for every resource it lacks;
* namespaces: the ``kubernetes.io/metadata.name`` label.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kubesched.api import resources as _res
from kubesched.api.quantity import parse_quantity, resource_value
from kubesched.api.samevalue import (
    pod_spec_key,
    remember,
    requirements_key,
    resource_list_key,
)
from kubesched.api.types import (
    Affinity,
    Container,
    ContainerExtendedResourceRequest,
    ContainerImage,
    ContainerPort,
    ExtendedResourceClaimStatus,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodResourceClaim,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    PriorityClass,
    Resources,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    WorkloadRef,
)
from kubesched.api.validation.meta import LABEL_SELECTOR_OPS
from kubesched.api.validation.pod import NODE_SELECTOR_OPS, TAINT_EFFECTS
from kubesched.errors import InputError

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

PROTOCOLS = ("TCP", "UDP", "SCTP")
MAX_QUANTITY = 2**63 - 1
# Node-table columns are int64 sums of per-pod values, and scores go through float64: values
# up to 2^53-1 keep both exact (a node's worth of pods cannot overflow the sums).
MAX_COUNTABLE = 2**53 - 1


# ---------------------------------------------------------------- primitive readers


def _err(message: str, path: str, value: object) -> InputError:
    return InputError(message, field=path, value=value)


def _dict(v: Any, path: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _err("must be an object", path, v)
    return v


def _list(v: Any, path: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise _err("must be a list", path, v)
    return v


def _str(v: Any, path: str, default: str = "") -> str:
    if v is None:
        return default
    if not isinstance(v, str):
        raise _err("must be a string", path, v)
    return v


def _opt_bool(v: Any, path: str) -> bool | None:
    return None if v is None else _bool(v, path)


def _req_str(v: Any, path: str) -> str:
    s = _str(v, path)
    if not s:
        raise _err("is required", path, v)
    return s


def _int(v: Any, path: str, default: int | None = None) -> int | None:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise _err("must be an integer", path, v)
    return v


def _bool(v: Any, path: str, default: bool = False) -> bool:
    if v is None:
        return default
    if not isinstance(v, bool):
        raise _err("must be true or false", path, v)
    return v


def _str_map(v: Any, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, val in _dict(v, path).items():
        if not isinstance(k, str):
            raise _err("keys must be strings", path, k)
        if not isinstance(val, str):
            raise _err("must be a string", f"{path}[{k}]", val)
        out[k] = val
    return out


def _str_list(v: Any, path: str) -> tuple[str, ...]:
    items = _list(v, path)
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise _err("must be a string", f"{path}[{i}]", s)
    return tuple(items)


def _one_of(v: Any, path: str, allowed: tuple[str, ...], default: str | None = None) -> str:
    if v is None and default is not None:
        return default
    if v not in allowed:
        raise _err(f"must be one of {', '.join(allowed)}", path, v)
    return str(v)


def parse_time(v: Any, path: str) -> float | None:
    """An RFC3339 timestamp (string, or the datetime YAML made of it) → epoch seconds."""
    if v is None:
        return None
    if isinstance(v, _dt.datetime):
        t = v
    elif isinstance(v, _dt.date):
        t = _dt.datetime(v.year, v.month, v.day)
    elif isinstance(v, str):
        try:
            t = _dt.datetime.fromisoformat(v)
        except ValueError:
            raise _err("must be an RFC3339 timestamp like 2024-01-02T15:04:05Z", path, v) from None
    else:
        raise _err("must be an RFC3339 timestamp like 2024-01-02T15:04:05Z", path, v)
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return t.timestamp()


# ---------------------------------------------------------------- quantities


def parse_quantity_field(v: Any, path: str) -> Fraction:
    """One quantity; negative values are invalid for every field kubesched reads."""
    try:
        # Quantity.UnmarshalJSON trims surrounding whitespace before parsing.
        q = parse_quantity(v.strip() if isinstance(v, str) else v)
    except ValueError as e:
        raise _err(f"invalid quantity: {e}", path, v) from None
    if q < 0:
        raise _err("must be greater than or equal to 0", path, v)
    # the API server caps quantities at 2^63-1 (resource.Quantity's documented limit)
    return min(q, Fraction(MAX_QUANTITY))


def parse_resource_list_exact(v: Any, path: str) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, q in _dict(v, path).items():
        if not isinstance(name, str) or not name:
            raise _err("resource names must be non-empty strings", path, name)
        out[name] = parse_quantity_field(q, f"{path}.{name}")
    return out


def _to_ints(exact: Mapping[str, Fraction], path: str) -> Resources:
    out: Resources = {}
    for name, q in exact.items():
        n = resource_value(name, q)
        if n > MAX_COUNTABLE:
            unit = "millicores" if name == "cpu" else "units"
            raise _err(f"more than kubesched can count: at most {MAX_COUNTABLE} {unit} "
                       "(2^53-1) per quantity", f"{path}.{name}", _quantity_text(q))
        out[name] = n
    return out


def _quantity_text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else str(float(q))


_RESOURCE_LISTS: dict[Any, Resources] = {}


def parse_resource_list(v: Any, path: str) -> Resources:
    """A ResourceList → integers (cpu milli-cores, everything else whole units / bytes)."""
    key = resource_list_key(v)
    if key is not None:
        known = _RESOURCE_LISTS.get(key)
        if known is not None:
            return dict(known)
    out = _to_ints(parse_resource_list_exact(v, path), path)
    if key is not None:
        remember(_RESOURCE_LISTS, key, dict(out))
    return out


_REQUIREMENTS: dict[Any, tuple[Resources, Resources]] = {}


def _parse_requirements(v: Any, path: str, *, requests_from_limits: bool = True) -> (
        tuple[Resources, Resources]):
    """resources: {requests, limits}; requests ≤ limits. For a container, requests default
    to limits (SetDefaults_Pod); pod-level requests are defaulted later, by
    ``_default_pod_level_resources``."""
    key = requirements_key(v)
    if key is not None:
        key = (requests_from_limits, key)
        known = _REQUIREMENTS.get(key)
        if known is not None:
            return dict(known[0]), dict(known[1])
    requests, limits = _parse_requirements_of(v, path, requests_from_limits)
    if key is not None:
        remember(_REQUIREMENTS, key, (dict(requests), dict(limits)))
    return requests, limits


def _parse_requirements_of(v: Any, path: str, requests_from_limits: bool) -> (
        tuple[Resources, Resources]):
    d = _dict(v, path)
    requests = parse_resource_list_exact(d.get("requests"), f"{path}.requests")
    limits = parse_resource_list_exact(d.get("limits"), f"{path}.limits")
    for name, lim in limits.items():
        if name not in requests:
            if requests_from_limits:
                requests[name] = lim
        elif requests[name] > lim:
            raise _err(f"must be less than or equal to {name} limit of {d['limits'][name]}",
                       f"{path}.requests.{name}", d["requests"][name])
    return _to_ints(requests, f"{path}.requests"), _to_ints(limits, f"{path}.limits")


# ---------------------------------------------------------------- metadata


def object_ref(kind: str, meta: ObjectMeta) -> str:
    """"Kind ns/name" (or "Kind name" for cluster-scoped objects) for messages."""
    return f"{kind} {meta.namespace}/{meta.name}" if meta.namespace else f"{kind} {meta.name}"


def parse_owner_references(v: Any, path: str) -> list[OwnerReference]:
    refs = []
    for i, r in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        r = _dict(r, p)
        refs.append(OwnerReference(
            kind=_req_str(r.get("kind"), f"{p}.kind"),
            name=_req_str(r.get("name"), f"{p}.name"),
            uid=_str(r.get("uid"), f"{p}.uid"),
            controller=_bool(r.get("controller"), f"{p}.controller"),
        ))
    return refs


def parse_meta(d: Any, *, namespaced: bool = True, path: str = "metadata") -> ObjectMeta:
    """An object's ``metadata`` mapping → ObjectMeta (namespace and uid defaulted)."""
    d = _dict(d, path)
    name = _req_str(d.get("name"), f"{path}.name")
    namespace = _str(d.get("namespace"), f"{path}.namespace") if namespaced else ""
    if namespaced and not namespace:
        namespace = DEFAULT_NAMESPACE
    uid = d.get("uid")
    uid = _str(uid, f"{path}.uid") if uid is not None else ""
    if not uid:
        uid = f"{namespace}/{name}" if namespaced else name
    rv = d.get("resourceVersion")
    return ObjectMeta(
        name=name,
        namespace=namespace,
        uid=uid,
        labels=_str_map(d.get("labels"), f"{path}.labels"),
        annotations=_str_map(d.get("annotations"), f"{path}.annotations"),
        creation_timestamp=parse_time(d.get("creationTimestamp"), f"{path}.creationTimestamp"),
        deletion_timestamp=parse_time(d.get("deletionTimestamp"), f"{path}.deletionTimestamp"),
        finalizers=_str_list(d.get("finalizers"), f"{path}.finalizers"),
        owner_references=parse_owner_references(d.get("ownerReferences"),
                                                f"{path}.ownerReferences"),
        resource_version="" if rv is None else str(rv),
        generation=_int(d.get("generation"), f"{path}.generation", 0) or 0,
    )


def locate_error(err: InputError, kind: str, d: Mapping[str, Any],
                 namespaced: bool) -> InputError:
    """``err`` with the object "Kind ns/name" taken from the raw dict ``d``."""
    raw_md = d.get("metadata")
    md: Mapping[str, Any] = raw_md if isinstance(raw_md, dict) else {}
    name = md.get("name") if isinstance(md.get("name"), str) else None
    if name is None:
        return err.located(obj=kind)
    ns = md.get("namespace") if isinstance(md.get("namespace"), str) else ""
    if namespaced:
        return err.located(obj=f"{kind} {ns or DEFAULT_NAMESPACE}/{name}")
    return err.located(obj=f"{kind} {name}")


# ---------------------------------------------------------------- selectors


def parse_label_selector(v: Any, path: str) -> LabelSelector | None:
    """metav1.LabelSelector; ``None`` stays None (matches nothing where that matters)."""
    if v is None:
        return None
    d = _dict(v, path)
    match_labels = _str_map(d.get("matchLabels"), f"{path}.matchLabels")
    exprs = []
    for i, e in enumerate(_list(d.get("matchExpressions"), f"{path}.matchExpressions")):
        p = f"{path}.matchExpressions[{i}]"
        e = _dict(e, p)
        key = _req_str(e.get("key"), f"{p}.key")
        op = _one_of(e.get("operator"), f"{p}.operator", LABEL_SELECTOR_OPS)
        values = _str_list(e.get("values"), f"{p}.values")
        if op in ("In", "NotIn") and not values:
            raise _err("must be specified when `operator` is 'In' or 'NotIn'", f"{p}.values",
                       e.get("values"))
        if op in ("Exists", "DoesNotExist") and values:
            raise _err("may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                       f"{p}.values", e.get("values"))
        exprs.append(LabelSelectorRequirement(key=key, operator=op, values=values))
    return LabelSelector(match_labels=tuple(sorted(match_labels.items())),
                         match_expressions=tuple(exprs))


def _node_selector_requirement(e: Any, p: str, *, field_selector: bool) -> NodeSelectorRequirement:
    e = _dict(e, p)
    key = _req_str(e.get("key"), f"{p}.key")
    op = _one_of(e.get("operator"), f"{p}.operator", NODE_SELECTOR_OPS)
    values = _str_list(e.get("values"), f"{p}.values")
    if field_selector:
        if key != "metadata.name":
            raise _err("field selectors support only metadata.name", f"{p}.key", key)
        if op not in ("In", "NotIn"):
            raise _err("must be one of In, NotIn for a field selector", f"{p}.operator", op)
        if len(values) != 1:
            raise _err("must be only one value when `operator` is 'In' or 'NotIn' for node "
                       "field selector", f"{p}.values", e.get("values"))
    elif op in ("In", "NotIn") and not values:
        raise _err("must be specified when `operator` is 'In' or 'NotIn'", f"{p}.values",
                   e.get("values"))
    elif op in ("Exists", "DoesNotExist") and values:
        raise _err("may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                   f"{p}.values", e.get("values"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise _err("must be specified single value when `operator` is 'Lt' or 'Gt'",
                       f"{p}.values", e.get("values"))
        try:
            int(values[0])
        except ValueError:
            raise _err("must be an integer for 'Lt' or 'Gt'", f"{p}.values[0]",
                       values[0]) from None
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def parse_node_selector_term(v: Any, path: str) -> NodeSelectorTerm:
    d = _dict(v, path)
    exprs = tuple(
        _node_selector_requirement(e, f"{path}.matchExpressions[{i}]", field_selector=False)
        for i, e in enumerate(_list(d.get("matchExpressions"), f"{path}.matchExpressions")))
    fields = tuple(
        _node_selector_requirement(e, f"{path}.matchFields[{i}]", field_selector=True)
        for i, e in enumerate(_list(d.get("matchFields"), f"{path}.matchFields")))
    return NodeSelectorTerm(match_expressions=exprs, match_fields=fields)


def _weight(v: Any, path: str) -> int:
    w = _int(v, path)
    if w is None or not 1 <= w <= 100:
        raise _err("must be in the range 1-100", path, v)
    return w


def parse_node_affinity(v: Any, path: str) -> NodeAffinity | None:
    if v is None:
        return None
    d = _dict(v, path)
    required = None
    rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    if d.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        r = _dict(d["requiredDuringSchedulingIgnoredDuringExecution"], rp)
        terms = _list(r.get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms")
        if not terms:
            raise _err("must have at least one node selector term", f"{rp}.nodeSelectorTerms",
                       r.get("nodeSelectorTerms"))
        required = tuple(parse_node_selector_term(t, f"{rp}.nodeSelectorTerms[{i}]")
                         for i, t in enumerate(terms))
    preferred = []
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, t in enumerate(_list(d.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
        p = f"{pp}[{i}]"
        t = _dict(t, p)
        preferred.append(PreferredSchedulingTerm(
            weight=_weight(t.get("weight"), f"{p}.weight"),
            preference=parse_node_selector_term(t.get("preference"), f"{p}.preference"),
        ))
    return NodeAffinity(required=required, preferred=tuple(preferred))


def _merge_label_keys(sel: LabelSelector | None, labels: Mapping[str, str],
                      match_keys: tuple[str, ...], mismatch_keys: tuple[str, ...]) -> (
                          LabelSelector | None):
    """The API server's ``applyMatchLabelKeysAndMismatchLabelKeys``: ``key In (value)`` for
    matchLabelKeys, ``key NotIn (value)`` for mismatchLabelKeys, keys the pod has only."""
    if sel is None or not (match_keys or mismatch_keys):
        return sel
    extra = [LabelSelectorRequirement(k, "In", (labels[k],)) for k in match_keys if k in labels]
    extra += [LabelSelectorRequirement(k, "NotIn", (labels[k],))
              for k in mismatch_keys if k in labels]
    if not extra:
        return sel
    return LabelSelector(match_labels=sel.match_labels,
                         match_expressions=(*sel.match_expressions, *extra))


def parse_pod_affinity_term(v: Any, path: str,
                            pod_labels: Mapping[str, str] | None = None) -> PodAffinityTerm:
    d = _dict(v, path)
    match_keys = _str_list(d.get("matchLabelKeys"), f"{path}.matchLabelKeys")
    mismatch_keys = _str_list(d.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys")
    sel = parse_label_selector(d.get("labelSelector"), f"{path}.labelSelector")
    if pod_labels is not None:
        sel = _merge_label_keys(sel, pod_labels, match_keys, mismatch_keys)
    return PodAffinityTerm(
        label_selector=sel,
        topology_key=_req_str(d.get("topologyKey"), f"{path}.topologyKey"),
        namespaces=_str_list(d.get("namespaces"), f"{path}.namespaces"),
        namespace_selector=parse_label_selector(d.get("namespaceSelector"),
                                                f"{path}.namespaceSelector"),
        match_label_keys=match_keys,
        mismatch_label_keys=mismatch_keys,
    )


def parse_pod_affinity(v: Any, path: str,
                       pod_labels: Mapping[str, str] | None = None) -> PodAffinity | None:
    """podAffinity / podAntiAffinity. With ``pod_labels``, matchLabelKeys are merged."""
    if v is None:
        return None
    d = _dict(v, path)
    rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        parse_pod_affinity_term(t, f"{rp}[{i}]", pod_labels)
        for i, t in enumerate(_list(d.get("requiredDuringSchedulingIgnoredDuringExecution"), rp)))
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred = []
    for i, t in enumerate(_list(d.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
        p = f"{pp}[{i}]"
        t = _dict(t, p)
        preferred.append(WeightedPodAffinityTerm(
            weight=_weight(t.get("weight"), f"{p}.weight"),
            term=parse_pod_affinity_term(t.get("podAffinityTerm"), f"{p}.podAffinityTerm",
                                         pod_labels),
        ))
    return PodAffinity(required=required, preferred=tuple(preferred))


def parse_affinity(v: Any, path: str,
                   pod_labels: Mapping[str, str] | None = None) -> Affinity | None:
    if v is None:
        return None
    d = _dict(v, path)
    return Affinity(
        node_affinity=parse_node_affinity(d.get("nodeAffinity"), f"{path}.nodeAffinity"),
        pod_affinity=parse_pod_affinity(d.get("podAffinity"), f"{path}.podAffinity",
                                        pod_labels),
        pod_anti_affinity=parse_pod_affinity(d.get("podAntiAffinity"),
                                             f"{path}.podAntiAffinity", pod_labels),
    )


# ---------------------------------------------------------------- taints & spreading


def parse_toleration(v: Any, path: str) -> Toleration:
    d = _dict(v, path)
    key = _str(d.get("key"), f"{path}.key")
    op = _one_of(d.get("operator"), f"{path}.operator", ("Equal", "Exists"), default="Equal")
    value = _str(d.get("value"), f"{path}.value")
    effect = d.get("effect")
    effect = "" if effect in (None, "") else _one_of(effect, f"{path}.effect", TAINT_EFFECTS)
    if not key and op != "Exists":
        raise _err("operator must be Exists when `key` is empty, which means \"match all "
                   "values and all keys\"", f"{path}.operator", d.get("operator"))
    if op == "Exists" and value:
        raise _err("value must be empty when `operator` is 'Exists'", f"{path}.value", value)
    seconds = _int(d.get("tolerationSeconds"), f"{path}.tolerationSeconds")
    return Toleration(key=key, operator=op, value=value, effect=effect,
                      toleration_seconds=seconds)


def parse_tolerations(v: Any, path: str) -> tuple[Toleration, ...]:
    return tuple(parse_toleration(t, f"{path}[{i}]") for i, t in enumerate(_list(v, path)))


def parse_taint(v: Any, path: str) -> Taint:
    d = _dict(v, path)
    return Taint(
        key=_req_str(d.get("key"), f"{path}.key"),
        value=_str(d.get("value"), f"{path}.value"),
        effect=_one_of(d.get("effect"), f"{path}.effect", TAINT_EFFECTS),
        time_added=parse_time(d.get("timeAdded"), f"{path}.timeAdded"),
    )


def parse_taints(v: Any, path: str) -> tuple[Taint, ...]:
    return tuple(parse_taint(t, f"{path}[{i}]") for i, t in enumerate(_list(v, path)))


def parse_topology_spread_constraint(
    v: Any, path: str, pod_labels: Mapping[str, str] | None = None
) -> TopologySpreadConstraint:
    d = _dict(v, path)
    max_skew = _int(d.get("maxSkew"), f"{path}.maxSkew")
    if max_skew is None or max_skew <= 0:
        raise _err("must be greater than zero", f"{path}.maxSkew", d.get("maxSkew"))
    when = _one_of(d.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable",
                   ("DoNotSchedule", "ScheduleAnyway"))
    min_domains = _int(d.get("minDomains"), f"{path}.minDomains")
    if min_domains is not None:
        if min_domains <= 0:
            raise _err("must be greater than zero", f"{path}.minDomains", min_domains)
        if when != "DoNotSchedule":
            raise _err("can only use minDomains if whenUnsatisfiable=DoNotSchedule",
                       f"{path}.minDomains", min_domains)
    policies = ("Honor", "Ignore")
    na = d.get("nodeAffinityPolicy")
    nt = d.get("nodeTaintsPolicy")
    keys = _str_list(d.get("matchLabelKeys"), f"{path}.matchLabelKeys")
    sel = parse_label_selector(d.get("labelSelector"), f"{path}.labelSelector")
    if pod_labels is not None:
        sel = _merge_label_keys(sel, pod_labels, keys, ())
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=_req_str(d.get("topologyKey"), f"{path}.topologyKey"),
        when_unsatisfiable=when,
        label_selector=sel,
        min_domains=min_domains,
        node_affinity_policy=None if na is None else _one_of(
            na, f"{path}.nodeAffinityPolicy", policies),
        node_taints_policy=None if nt is None else _one_of(
            nt, f"{path}.nodeTaintsPolicy", policies),
        match_label_keys=keys,
    )


def parse_topology_spread_constraints(
    v: Any, path: str, pod_labels: Mapping[str, str] | None = None
) -> tuple[TopologySpreadConstraint, ...]:
    return tuple(parse_topology_spread_constraint(c, f"{path}[{i}]", pod_labels)
                 for i, c in enumerate(_list(v, path)))


# ---------------------------------------------------------------- containers & volumes


def _port_number(v: Any, path: str, *, required: bool) -> int:
    n = _int(v, path, None if required else 0)
    if n is None or not (1 if required else 0) <= n <= 65535:
        raise _err("must be between 1 and 65535, inclusive", path, v)
    return n


def parse_ports(v: Any, path: str, *, host_network: bool = False) -> list[ContainerPort]:
    ports = []
    for i, p in enumerate(_list(v, path)):
        pp = f"{path}[{i}]"
        d = _dict(p, pp)
        cport = _port_number(d.get("containerPort"), f"{pp}.containerPort", required=True)
        hport = _port_number(d.get("hostPort"), f"{pp}.hostPort", required=False)
        if host_network and hport == 0:
            hport = cport  # defaultHostNetworkPorts
        ports.append(ContainerPort(
            container_port=cport,
            host_port=hport,
            protocol=_one_of(d.get("protocol"), f"{pp}.protocol", PROTOCOLS, default="TCP"),
            host_ip=_str(d.get("hostIP"), f"{pp}.hostIP"),
        ))
    return ports


def parse_container(v: Any, path: str, *, host_network: bool = False) -> Container:
    d = _dict(v, path)
    requests, limits = _parse_requirements(d.get("resources"), f"{path}.resources")
    rp = d.get("restartPolicy")
    restart_all = False
    for i, rule in enumerate(_list(d.get("restartPolicyRules"), f"{path}.restartPolicyRules")):
        rule = _dict(rule, f"{path}.restartPolicyRules[{i}]")
        if rule.get("action") == "RestartAllContainers":
            restart_all = True
    bind_mount_options = False
    for i, m in enumerate(_list(d.get("volumeMounts"), f"{path}.volumeMounts")):
        m = _dict(m, f"{path}.volumeMounts[{i}]")
        if m.get("bindMountOptions"):
            bind_mount_options = True
    return Container(
        name=_str(d.get("name"), f"{path}.name"),
        image=_str(d.get("image"), f"{path}.image"),
        requests=requests,
        limits=limits,
        ports=parse_ports(d.get("ports"), f"{path}.ports", host_network=host_network),
        restart_policy=None if rp is None else _one_of(rp, f"{path}.restartPolicy",
                                                       ("Always", "OnFailure", "Never")),
        restart_all_containers=restart_all,
        bind_mount_options=bind_mount_options,
    )


def parse_volume(v: Any, path: str) -> Volume:
    d = _dict(v, path)
    name = _req_str(d.get("name"), f"{path}.name")
    if d.get("persistentVolumeClaim") is not None:
        pp = f"{path}.persistentVolumeClaim"
        pvc = _dict(d["persistentVolumeClaim"], pp)
        return Volume(
            name=name,
            pvc_claim_name=_req_str(pvc.get("claimName"), f"{pp}.claimName"),
            read_only=_bool(pvc.get("readOnly"), f"{pp}.readOnly"),
        )
    source = {k: val for k, val in d.items() if k != "name"} or {"emptyDir": {}}
    image_reference = None
    if d.get("image") is not None:  # an image volume (ImageVolume, GA in 1.36)
        image = _dict(d["image"], f"{path}.image")
        image_reference = _str(image.get("reference"), f"{path}.image.reference")
    return Volume(name=name, source=source, image_reference=image_reference)


# ---------------------------------------------------------------- pod


def _default_pod_level_resources(pod: Pod) -> None:
    """``defaultHugePagePodLimits`` + ``defaultPodRequests`` (PodLevelResources, v1.35)."""
    res = pod.spec.resources
    if res is None or not (res.requests or res.limits):
        return
    agg_limits = _res.aggregate_container_limits(pod)
    for name, value in agg_limits.items():
        if (name.startswith(_res.HUGEPAGES_PREFIX) and name not in res.requests
                and name not in res.limits):
            res.limits[name] = value
    if not res.limits:
        return
    for name, value in _res.aggregate_container_requests(pod).items():
        # Overcommittable supported resources (cpu, memory) from the containers' requests.
        if (name not in res.requests and _res.is_supported_pod_level_resource(name)
                and not name.startswith(_res.HUGEPAGES_PREFIX)):
            res.requests[name] = value
    for name, value in res.limits.items():
        if name not in res.requests and _res.is_supported_pod_level_resource(name):
            res.requests[name] = value


def parse_pod(d: Any, *, source: str | None = None) -> Pod:
    """A Pod dict → Pod, defaulted, with ``requests`` / ``non_zero_*`` computed."""
    d = _dict(d, "")
    try:
        pod = _parse_pod(d)
    except InputError as e:
        raise locate_error(e, "Pod", d, namespaced=True).located(file=source) from None
    return pod


@dataclass(slots=True)
class _Template:
    """What a pod spec parses into, before its nodeName (``_parse_pod``'s memo)."""

    spec: PodSpec
    requests: Resources
    non_zero_cpu: int
    non_zero_memory: int


_TEMPLATES: dict[Any, _Template] = {}


def _parse_pod(d: dict[str, Any]) -> Pod:
    meta = parse_meta(d.get("metadata"))
    s = _dict(d.get("spec"), "spec")
    key = pod_spec_key(s, meta.labels)
    known = None if key is None else _TEMPLATES.get(key)
    if known is None:
        spec, status = _parse_pod_spec(s, meta), _parse_pod_status(d)
        pod = Pod(metadata=meta, spec=spec, status=status, raw_spec=s)
        _default_pod_level_resources(pod)
        _res.compute_pod_resources(pod)
        if key is not None:
            template = _own_spec(spec)
            template.node_name = ""
            remember(_TEMPLATES, key, _Template(template, dict(pod.requests), pod.non_zero_cpu,
                                                pod.non_zero_memory))
        return pod
    spec = _own_spec(known.spec)
    spec.node_name = _str(s.get("nodeName"), "spec.nodeName")
    return Pod(metadata=meta, spec=spec, status=_parse_pod_status(d), raw_spec=s,
               requests=dict(known.requests), non_zero_cpu=known.non_zero_cpu,
               non_zero_memory=known.non_zero_memory)


def _own_spec(template: PodSpec) -> PodSpec:
    """A copy of ``template`` whose mutable parts (containers, lists, mappings) are the
    pod's own, as a parse of its own would make them; the immutable ones are shared."""
    spec = copy.copy(template)
    spec.containers = [_own_container(c) for c in template.containers]
    if template.init_containers:
        spec.init_containers = [_own_container(c) for c in template.init_containers]
    else:
        spec.init_containers = []
    if template.resources is not None:
        spec.resources = _own_container(template.resources)
    spec.overhead = dict(template.overhead)
    spec.node_selector = dict(template.node_selector)
    spec.volumes = list(template.volumes)
    spec.resource_claims = list(template.resource_claims)
    return spec


def _own_container(c: Container) -> Container:
    return Container(c.name, c.image, dict(c.requests), dict(c.limits), list(c.ports),
                     c.restart_policy, c.restart_all_containers, c.bind_mount_options)


def _parse_pod_spec(s: dict[str, Any], meta: ObjectMeta) -> PodSpec:
    host_network = _bool(s.get("hostNetwork"), "spec.hostNetwork")
    containers = [parse_container(c, f"spec.containers[{i}]", host_network=host_network)
                  for i, c in enumerate(_list(s.get("containers"), "spec.containers"))]
    init_containers = [
        parse_container(c, f"spec.initContainers[{i}]", host_network=host_network)
        for i, c in enumerate(_list(s.get("initContainers"), "spec.initContainers"))]
    pod_resources = None
    if s.get("resources") is not None:
        requests, limits = _parse_requirements(s["resources"], "spec.resources",
                                               requests_from_limits=False)
        pod_resources = Container(name="", requests=requests, limits=limits)

    gates = []
    for i, g in enumerate(_list(s.get("schedulingGates"), "spec.schedulingGates")):
        gates.append(_req_str(_dict(g, f"spec.schedulingGates[{i}]").get("name"),
                              f"spec.schedulingGates[{i}].name"))
    claims = []
    pod_claims = []
    for i, c in enumerate(_list(s.get("resourceClaims"), "spec.resourceClaims")):
        p = f"spec.resourceClaims[{i}]"
        c = _dict(c, p)
        claims.append(_req_str(c.get("name"), f"{p}.name"))
        pod_claims.append(PodResourceClaim(
            claims[-1], _str(c.get("resourceClaimName"), f"{p}.resourceClaimName"),
            _str(c.get("resourceClaimTemplateName"), f"{p}.resourceClaimTemplateName")))
    grace = _int(s.get("terminationGracePeriodSeconds"), "spec.terminationGracePeriodSeconds",
                 30)
    assert grace is not None
    if grace < 0:
        raise _err("must be greater than or equal to 0", "spec.terminationGracePeriodSeconds",
                   grace)
    pp = s.get("preemptionPolicy")
    workload_ref = None
    if s.get("workloadRef") is not None:
        wr = _dict(s["workloadRef"], "spec.workloadRef")
        workload_ref = WorkloadRef(
            name=_req_str(wr.get("name"), "spec.workloadRef.name"),
            pod_group=_req_str(wr.get("podGroup"), "spec.workloadRef.podGroup"),
            replica_key=_str(wr.get("podGroupReplicaKey"), "spec.workloadRef.podGroupReplicaKey"))
    scheduling_group = None
    if s.get("schedulingGroup") is not None:
        sg = _dict(s["schedulingGroup"], "spec.schedulingGroup")
        scheduling_group = _str(sg.get("podGroupName"), "spec.schedulingGroup.podGroupName") \
            or None

    return PodSpec(
        node_name=_str(s.get("nodeName"), "spec.nodeName"),
        scheduler_name=_str(s.get("schedulerName"), "spec.schedulerName") or
        DEFAULT_SCHEDULER_NAME,
        priority=_int(s.get("priority"), "spec.priority"),
        priority_class_name=_str(s.get("priorityClassName"), "spec.priorityClassName"),
        preemption_policy=None if pp is None else _one_of(
            pp, "spec.preemptionPolicy", ("PreemptLowerPriority", "Never")),
        containers=containers,
        init_containers=init_containers,
        overhead=parse_resource_list(s.get("overhead"), "spec.overhead"),
        resources=pod_resources,
        node_selector=_str_map(s.get("nodeSelector"), "spec.nodeSelector"),
        affinity=parse_affinity(s.get("affinity"), "spec.affinity", meta.labels),
        tolerations=parse_tolerations(s.get("tolerations"), "spec.tolerations"),
        topology_spread_constraints=parse_topology_spread_constraints(
            s.get("topologySpreadConstraints"), "spec.topologySpreadConstraints", meta.labels),
        volumes=[parse_volume(v, f"spec.volumes[{i}]")
                 for i, v in enumerate(_list(s.get("volumes"), "spec.volumes"))],
        scheduling_gates=tuple(gates),
        termination_grace_period_seconds=grace,
        resource_claims=claims,
        pod_resource_claims=tuple(pod_claims),
        host_network=host_network,
        host_users=_opt_bool(s.get("hostUsers"), "spec.hostUsers"),
        workload_ref=workload_ref,
        scheduling_group=scheduling_group,
    )


def _parse_pod_status(d: dict[str, Any]) -> PodStatus:
    st = _dict(d.get("status"), "status")
    conditions = []
    for i, c in enumerate(_list(st.get("conditions"), "status.conditions")):
        p = f"status.conditions[{i}]"
        c = _dict(c, p)
        conditions.append(PodCondition(
            type=_req_str(c.get("type"), f"{p}.type"),
            status=_req_str(c.get("status"), f"{p}.status"),
            reason=_str(c.get("reason"), f"{p}.reason"),
            message=_str(c.get("message"), f"{p}.message"),
        ))
    return PodStatus(
        phase=_str(st.get("phase"), "status.phase") or "Pending",
        nominated_node_name=_str(st.get("nominatedNodeName"), "status.nominatedNodeName"),
        start_time=parse_time(st.get("startTime"), "status.startTime"),
        conditions=conditions,
        resource_claim_statuses=_claim_statuses(st.get("resourceClaimStatuses")),
        extended_resource_claim_status=_extended_claim_status(
            st.get("extendedResourceClaimStatus")),
    )


# ---------------------------------------------------------------- cluster objects


def _claim_statuses(v: Any) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for i, c in enumerate(_list(v, "status.resourceClaimStatuses")):
        p = f"status.resourceClaimStatuses[{i}]"
        c = _dict(c, p)
        name = c.get("resourceClaimName")
        out[_req_str(c.get("name"), f"{p}.name")] = (
            None if name is None else _str(name, f"{p}.resourceClaimName"))
    return out


def _extended_claim_status(v: Any) -> ExtendedResourceClaimStatus | None:
    if v is None:
        return None
    p = "status.extendedResourceClaimStatus"
    d = _dict(v, p)
    mappings = []
    for i, m in enumerate(_list(d.get("requestMappings"), f"{p}.requestMappings")):
        q = f"{p}.requestMappings[{i}]"
        m = _dict(m, q)
        mappings.append(ContainerExtendedResourceRequest(
            container_name=_req_str(m.get("containerName"), f"{q}.containerName"),
            resource_name=_req_str(m.get("resourceName"), f"{q}.resourceName"),
            request_name=_req_str(m.get("requestName"), f"{q}.requestName")))
    return ExtendedResourceClaimStatus(
        resource_claim_name=_req_str(d.get("resourceClaimName"), f"{p}.resourceClaimName"),
        request_mappings=tuple(mappings))


def parse_node(d: Any, *, source: str | None = None) -> Node:
    """A Node dict → Node; allocatable defaults to capacity per missing resource."""
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
        s = _dict(d.get("spec"), "spec")
        st = _dict(d.get("status"), "status")
        capacity = parse_resource_list(st.get("capacity"), "status.capacity")
        allocatable = parse_resource_list(st.get("allocatable"), "status.allocatable")
        for name, value in capacity.items():
            allocatable.setdefault(name, value)
        images = []
        for i, img in enumerate(_list(st.get("images"), "status.images")):
            p = f"status.images[{i}]"
            img = _dict(img, p)
            size = _int(img.get("sizeBytes"), f"{p}.sizeBytes", 0) or 0
            images.append(ContainerImage(names=_str_list(img.get("names"), f"{p}.names"),
                                         size_bytes=size))
        declared = _str_list(st.get("declaredFeatures"), "status.declaredFeatures")
        return Node(
            metadata=meta,
            spec=NodeSpec(unschedulable=_bool(s.get("unschedulable"), "spec.unschedulable"),
                          taints=parse_taints(s.get("taints"), "spec.taints")),
            status=NodeStatus(capacity=capacity, allocatable=allocatable,
                              images=tuple(images), declared_features=declared),
        )
    except InputError as e:
        raise locate_error(e, "Node", d, namespaced=False).located(file=source) from None


def parse_namespace(d: Any, *, source: str | None = None) -> Namespace:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
    except InputError as e:
        raise locate_error(e, "Namespace", d, namespaced=False).located(file=source) from None
    meta.labels[NAMESPACE_NAME_LABEL] = meta.name
    return Namespace(metadata=meta)


def make_namespace(name: str) -> Namespace:
    """The Namespace an API server would have for ``name`` (label included)."""
    return Namespace(metadata=ObjectMeta(name=name, uid=name,
                                         labels={NAMESPACE_NAME_LABEL: name}))


def parse_priority_class(d: Any, *, source: str | None = None) -> PriorityClass:
    d = _dict(d, "")
    try:
        meta = parse_meta(d.get("metadata"), namespaced=False)
        value = _int(d.get("value"), "value")
        if value is None:
            raise _err("is required", "value", None)
        if not -2147483648 <= value <= 2147483647:
            raise _err("must be a 32-bit integer", "value", value)
        return PriorityClass(
            metadata=meta,
            value=value,
            global_default=_bool(d.get("globalDefault"), "globalDefault"),
            preemption_policy=_one_of(d.get("preemptionPolicy"), "preemptionPolicy",
                                      ("PreemptLowerPriority", "Never"),
                                      default="PreemptLowerPriority"),
        )
    except InputError as e:
        raise locate_error(e, "PriorityClass", d, namespaced=False).located(file=source) from None
