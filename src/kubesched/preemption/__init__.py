"""DefaultPreemption's evaluator: candidates, the dry run, victims per node, PDBs, and the
choice of node (see :mod:`kubesched.preemption.evaluator`)."""

from kubesched.framework.extender import Victims
from kubesched.preemption.evaluator import (
    NO_VICTIMS,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    NOT_HELPFUL,
    Candidate,
    Evaluator,
    PDBView,
    PreemptResult,
    filter_pods_with_pdb_violation,
    pdb_views,
)
from kubesched.preemption.gosort import sort_slice
from kubesched.preemption.util import (
    earliest_pod_start_time,
    more_important_pod,
    terminating_by_preemption,
)

__all__ = [
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "Candidate",
    "Evaluator",
    "PDBView",
    "PreemptResult",
    "Victims",
    "earliest_pod_start_time",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
    "pdb_views",
    "sort_slice",
    "terminating_by_preemption",
]
