"""When two pods of a trace replay are scheduled alike: the equivalence behind the
scheduler's failure memo (``kubesched.scheduler.failure_memo``) in ``research.run``.

Two pods are equivalent when everything the scheduler's plugins may read of them is equal:
namespace, labels, annotations but the simulator's own (arrival, duration: read by the run
loop only), the whole spec, and the status fields plugins read (nominated node, resource
claims). Pods whose spec names objects after the pod (volumes: a generic ephemeral volume's
claim is ``<pod>-<volume>``; resource claims: generated per pod) are never equivalent to
another: their filters read objects of their own. The traces' pods have none of these.
"""

from __future__ import annotations

from collections.abc import Hashable

from kubesched.api.types import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, Pod, PodSpec

_RUN_LOOP_ONLY = (ARRIVAL_ANNOTATION, DURATION_ANNOTATION)


class PodEquivalence:
    """``pod → key``; a spec's part of the key is computed once per spec object (its repr
    costs more than a scheduling cycle's share), which is kept alive beside it, so that its
    ``id`` is never another's."""

    def __init__(self) -> None:
        self._specs: dict[int, tuple[PodSpec, str]] = {}

    def __call__(self, pod: Pod) -> Hashable | None:
        spec = pod.spec
        if spec.volumes or spec.resource_claims or spec.pod_resource_claims:
            return None
        st = pod.status
        if st.nominated_node_name or st.resource_claim_statuses \
                or st.extended_resource_claim_status is not None:
            return None
        got = self._specs.get(id(spec))
        if got is None or got[0] is not spec:
            got = self._specs[id(spec)] = (spec, repr(spec))
        meta = pod.metadata
        return (meta.namespace, got[1], tuple(sorted(meta.labels.items())),
                tuple(sorted((k, v) for k, v in meta.annotations.items()
                             if k not in _RUN_LOOP_ONLY)))
