"""Required pod-affinity term matching for the queue's cross-topology pre-check
(upstream ``AffinityTerm.Matches`` over ``PodInfo.RequiredAffinityTerms``)."""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.types import LabelSelector, Pod, PodAffinityTerm


def selector_matches(sel: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """``metav1.LabelSelectorAsSelector(sel).Matches(labels)``: a nil selector matches
    nothing, an empty one everything."""
    if sel is None:
        return False
    for key, value in sel.match_labels:
        if labels.get(key) != value:
            return False
    for req in sel.match_expressions:
        op, key = req.operator, req.key
        if op == "In":
            if key not in labels or labels[key] not in req.values:
                return False
        elif op == "NotIn":
            if key in labels and labels[key] in req.values:
                return False
        elif op == "Exists":
            if key not in labels:
                return False
        elif op == "DoesNotExist":
            if key in labels:
                return False
        else:  # unknown operators never match (validation rejects them earlier)
            return False
    return True


def term_matches(owner: Pod, term: PodAffinityTerm, pod: Pod,
                 ns_labels: Mapping[str, str]) -> bool:
    """Does ``pod`` match ``term`` of ``owner``'s affinity? Namespaces default to the owner's
    own namespace when the term names none and has no namespace selector."""
    if not term.namespaces and term.namespace_selector is None:
        in_ns = pod.namespace == owner.namespace
    else:
        in_ns = pod.namespace in term.namespaces or selector_matches(
            term.namespace_selector, ns_labels)
    return in_ns and selector_matches(term.label_selector, pod.metadata.labels)


def required_affinity_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    aff = pod.spec.affinity
    if aff is None or aff.pod_affinity is None:
        return ()
    return aff.pod_affinity.required


def any_required_affinity_term_matches(owner: Pod, pod: Pod,
                                       ns_labels: Mapping[str, str]) -> bool:
    return any(term_matches(owner, t, pod, ns_labels) for t in required_affinity_terms(owner))
