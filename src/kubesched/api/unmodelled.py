"""What a scenario holds that the run will not answer as its cluster would, each named in a
one-line load warning (docs/scenarios.md, "Warnings"): namespaces the loader had to make (when
a namespaceSelector reads their labels), nodes
already overcommitted, objects behind a feature gate that is off. (Kinds kubesched skips are
warned about where they are read, ``api.scenario``.)"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubesched.api.types import CPU, GenericObject, Node, Pod, Resources
from kubesched.releases import at_least

#: the namespaces every cluster has: a dump of pods rarely lists them
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})

_LISTED = 5  # objects named in one warning line; the rest are counted


def name_list(refs: Sequence[str]) -> str:
    """Up to five names, then how many more."""
    more = len(refs) - _LISTED
    return ", ".join(refs[:_LISTED]) + (f" and {more} more" if more > 0 else "")


def _reads_namespace_labels(pods: Iterable[Pod]) -> bool:
    """Whether a pod's affinity selects namespaces by their labels (a non-empty
    namespaceSelector): only then can a namespace's missing labels change a decision."""
    for p in pods:
        aff = p.spec.affinity
        if aff is None:
            continue
        for pa in (aff.pod_affinity, aff.pod_anti_affinity):
            if pa is None:
                continue
            terms = (*pa.required, *(w.term for w in pa.preferred))
            if any(t.namespace_selector is not None and (t.namespace_selector.match_labels
                                                         or t.namespace_selector
                                                         .match_expressions)
                   for t in terms):
                return True
    return False


def namespaces_made(names: Iterable[str], pods: Iterable[Pod]) -> list[str]:
    """The warning for the namespaces made because objects use them, when some pod selects
    namespaces by label: a made namespace has only its name label (the built-in ones are
    left out: every cluster has them)."""
    made = [n for n in dict.fromkeys(names) if n not in BUILTIN_NAMESPACES]
    if not made or not _reads_namespace_labels(pods):
        return []
    return [f"Namespace {name_list(made)}: not in the scenario; made with only its "
            "kubernetes.io/metadata.name label, all the pods' namespaceSelectors see of it"]


def overcommitted(nodes: Iterable[Node], pods: Iterable[Pod]) -> list[str]:
    """One warning per node whose bound pods (not finished; terminating ones included: they
    hold their resources) request more of a resource it lists than it has allocatable."""
    on: dict[str, list[Pod]] = {}
    for p in pods:
        if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"):
            on.setdefault(p.spec.node_name, []).append(p)
    out = []
    for node in nodes:
        bound = on.get(node.name)
        if not bound:
            continue
        used: Resources = {}
        for p in bound:
            for r, q in p.requests.items():
                used[r] = used.get(r, 0) + q
        used["pods"] = len(bound)
        alloc = node.status.allocatable
        over = [f"{r} {_quantity(r, used[r])} requested of {_quantity(r, alloc[r])} "
                "allocatable"
                for r in sorted(used) if r in alloc and used[r] > alloc[r]]
        if over:
            out.append(f"Node {node.name}: already overcommitted at load ({'; '.join(over)}): "
                       "its pods keep running; no pod needing more of that fits there")
    return out


def _quantity(resource: str, value: int) -> str:
    return f"{value}m" if resource == CPU else str(value)  # the model holds cpu in millis


def _gang_gates(release: str) -> tuple[str, ...]:
    """The gates upstream's gangs need in ``release``: the Workload API's and, before
    1.37, the GangScheduling plugin's (merged into GenericWorkload in 1.37)."""
    return ("GenericWorkload",) if at_least(release, "1.37") else ("GenericWorkload",
                                                                    "GangScheduling")


def _upstream_gang(obj: GenericObject) -> bool:
    api_version = obj.raw.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith("scheduling.k8s.io/")


#: the feature gate under which upstream's API server serves a kind at all
API_GATES = {"Workload": "GenericWorkload", "PodGroup": "GenericWorkload",
             "DeviceTaintRule": "DRADeviceTaintRules"}


def api_gate(kind: str, api_version: str) -> str | None:
    """The gate behind which ``kind`` is served (scheduler-plugins' PodGroup, a CRD, has
    none)."""
    if kind == "PodGroup" and not api_version.startswith("scheduling.k8s.io/"):
        return None
    return API_GATES.get(kind)


# kind -> (which of its objects, the gates they need in a release, what the run does)
_GATED: dict[str, tuple[Callable[[Any], bool], Callable[[str], tuple[str, ...]], str]] = {
    "Workload": (_upstream_gang, _gang_gates,
                 "no gang is formed: their pods are scheduled one by one"),
    "PodGroup": (_upstream_gang, _gang_gates,
                 "no gang is formed: their pods are scheduled one by one"),
    "DeviceTaintRule": (lambda _: True, lambda _: ("DRADeviceTaintRules",),
                        "a cluster with these gates would not serve them"),
}


def gated_objects(objects: Mapping[str, Sequence[Any]], release: str,
                  enabled: Callable[[str], bool]) -> list[str]:
    """One warning per kind whose objects need a feature gate that is off in the run."""
    out = []
    for kind, (applies, gates_of, effect) in _GATED.items():
        refs = [f"{o.metadata.namespace}/{o.metadata.name}" if o.metadata.namespace
                else o.metadata.name for o in objects.get(kind, ()) if applies(o)]
        off = [g for g in gates_of(release) if not enabled(g)]
        if refs and off:
            gates = ", ".join(off)
            out.append(f"{kind} {name_list(refs)}: feature gate {gates} "
                       f"{'is' if len(off) == 1 else 'are'} off in Kubernetes {release}; "
                       f"{effect} (--feature-gates {','.join(g + '=true' for g in off)})")
    return out
