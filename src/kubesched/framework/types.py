"""Queue entries, diagnosis and the FitError message."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kubesched.api.types import Pod
from kubesched.framework.status import Code, Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod: Pod
    timestamp: float = 0.0  # when (re-)added to the queue; QueueSort's tie-breaker
    seq: int = 0  # enqueue order among equal timestamps (file order in the simulator)
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_plugin_events: tuple = ()
    backoff_expiration: float | None = None

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)


@dataclass(slots=True)
class NodeToStatus:
    """Statuses of the nodes a cycle evaluated; nodes not listed share ``absent``."""

    statuses: dict[str, Status] = field(default_factory=dict)
    absent: Status = field(
        default_factory=lambda: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))

    def get(self, name: str) -> Status:
        return self.statuses.get(name, self.absent)

    def set(self, name: str, status: Status) -> None:
        self.statuses[name] = status

    def __len__(self) -> int:
        return len(self.statuses)

    def nodes_with_code(self, code: Code, all_names: list[str]) -> list[str]:
        return [n for n in all_names if self.get(n).code == code]


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__()

    def __str__(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)


def fit_error_message(num_all_nodes: int, d: Diagnosis) -> str:
    """FitError.Error() of v1.34+: reasons counted over nodes, sorted as plain strings."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if d.pre_filter_msg:
        msg += f" {d.pre_filter_msg}."
    else:
        counts: Counter[str] = Counter()
        n2s = d.node_to_status
        for st in n2s.statuses.values():
            counts.update(st.reasons)
        if len(n2s) < num_all_nodes:
            for r in n2s.absent.reasons:
                counts[r] += num_all_nodes - len(n2s)
        items = sorted(f"{c} {r}" for r, c in counts.items())
        if items:
            msg += " " + ", ".join(items) + "."
    if d.post_filter_msg:
        msg += " " + d.post_filter_msg
    return msg


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
