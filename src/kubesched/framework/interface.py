"""Extension-point interfaces: the per-node form (as in Go) and the batch form.

A plugin is a class deriving from the extension points it implements. The batch form of
Filter and Score works on the snapshot's NodeTable for many nodes at once; the runtime uses it
when a plugin defines it and loops the per-node form otherwise. Both forms must agree.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, overload, runtime_checkable

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.snapshot import Snapshot
    from kubesched.framework.types import NodeToStatus, QueuedPodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class PluginError(Exception):
    """A plugin failed (an Error status, not a scheduling verdict)."""


class Plugin:
    name: ClassVar[str] = ""
    # never None: ``construct`` gives every plugin the profile's handle, whatever its
    # constructor takes; the in-tree plugins require one (tests build it with ``Handle()``)
    handle: Handle
    # an in-tree plugin's ``config.plugin_args`` dataclass (its subclass says which), an
    # out-of-tree plugin's pluginConfig args as given (a dict)
    args: Any

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        """An out-of-tree plugin may be built bare (its tests, docs/plugins.md): it gets a
        minimal handle until a profile gives it its own."""
        if handle is None:
            from kubesched.framework.handle import Handle

            handle = Handle()
        self.args = args or {}
        self.handle = handle


# ---------------------------------------------------------------- batch results


@dataclass(slots=True)
class BatchStatus:
    """Per-candidate Filter verdicts: ``codes[i]`` (a Code value, 0 = pass) and, for failing
    candidates, ``reasons[reason_ids[i]]``."""

    codes: np.ndarray
    reason_ids: np.ndarray
    reasons: list[tuple[str, ...]] = field(default_factory=list)

    @classmethod
    def success(cls, n: int) -> BatchStatus:
        return cls(np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int32), [])

    @classmethod
    def from_mask(cls, fail: np.ndarray, code: Code, reasons: tuple[str, ...]) -> BatchStatus:
        out = cls.success(len(fail))
        out.fail(fail, code, reasons)
        return out

    @classmethod
    def from_statuses(cls, statuses: Sequence[Status | None]) -> BatchStatus:
        """The batch form of per-node verdicts (a plugin falling back to its Filter)."""
        out = cls.success(len(statuses))
        for k, st in enumerate(statuses):
            if st is not None and not st.is_success():
                mask = np.zeros(len(statuses), dtype=bool)
                mask[k] = True
                out.fail(mask, st.code, st.reasons)
        return out

    def fail(self, mask: np.ndarray, code: Code | np.ndarray, reasons: tuple[str, ...]) -> None:
        """Mark the still-passing candidates in ``mask`` as failing with ``reasons``."""
        mask = mask & (self.codes == 0)
        if not mask.any():
            return
        rid = len(self.reasons)
        self.reasons.append(reasons)
        self.codes[mask] = code if isinstance(code, int) else code[mask]
        self.reason_ids[mask] = rid

    def status_at(self, i: int, plugin: str) -> Status:
        code = Code(int(self.codes[i]))
        if code == Code.SUCCESS:
            return Status(plugin=plugin)
        return Status(code, self.reasons[int(self.reason_ids[i])], plugin)


class NodeList(Sequence[NodeInfo]):
    """Feasible nodes handed to PreScore: their rows in the node table (``idx``) and, built
    only when a plugin reads them, the NodeInfos (batch plugins use ``idx`` alone)."""

    __slots__ = ("_items", "_source", "idx")

    def __init__(self, items: Sequence[NodeInfo] | None, idx: np.ndarray,
                 source: Sequence[NodeInfo] | None = None) -> None:
        self.idx = idx
        self._items = list(items) if items is not None else None
        self._source = source  # with items None: the NodeInfos the rows index

    @property
    def source(self) -> Sequence[NodeInfo] | None:
        """The NodeInfos ``idx`` indexes (the snapshot's), when the list was made from rows."""
        return self._source

    def _list(self) -> list[NodeInfo]:
        if self._items is None:
            src = self._source or ()
            self._items = [src[i] for i in self.idx.tolist()]
        return self._items

    def __len__(self) -> int:
        return len(self._items) if self._items is not None else len(self.idx)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...
    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        return self._list()[i]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._list())


# ---------------------------------------------------------------- extension points


class QueueSortPlugin(Plugin):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        raise NotImplementedError

    def sort_key(self, qpi: QueuedPodInfo) -> Any:
        """A key consistent with ``less``, for the heap; None to compare with ``less``."""
        return None


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod: Pod) -> Status | None:
        raise NotImplementedError


@dataclass(slots=True)
class PreFilterResult:
    node_names: set[str] | None = None  # None: all nodes

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return PreFilterResult(set(other.node_names))
        return PreFilterResult(self.node_names & other.node_names)


class PreFilterExtensions:
    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                node_info: NodeInfo) -> Status | None:
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                   node_info: NodeInfo) -> Status | None:
        return None


class PreFilterPlugin(Plugin):
    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        raise NotImplementedError

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None


#: ``FilterPlugin.filter_reads`` values.
READS_NODE = "node"
READS_RESOURCES = "resources"
READS_PODS = "pods"


class FilterPlugin(Plugin):
    """Filter, per node (the batch form is the optional ``FilterBatch``)."""

    # What Filter's verdict depends on besides the incoming pod, the CycleState and the Node
    # object. The preemption dry run and the nominated pods' two passes evaluate "these pods
    # added / removed" as a change of table columns only when every Filter that runs says
    # READS_NODE (nothing else) or READS_RESOURCES (only the table's requested and pod-count
    # columns, through ``filter_batch``). READS_PODS, anything else about the pods on the
    # node, is the safe default: those cycles run the per-node form on copied NodeInfos.
    filter_reads: ClassVar[str] = READS_PODS
    # Whether Filter's verdict on a node depends only on the incoming pod (what its filter
    # signature holds), that node's row of the node table (its Node object and the pods on
    # it) and objects other than pods and nodes: not on other nodes or their pods (as
    # InterPodAffinity's and PodTopologySpread's do). Then, for pods of one signature, a
    # node's verdict is kept across cycles until its row changes
    # (``Framework.filter_batch_kept``). READS_NODE and READS_RESOURCES imply it.
    filter_row_local: ClassVar[bool] = False

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError


class PostFilterPlugin(Plugin):
    def post_filter(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
                    ) -> tuple[str | None, Status]:
        """Returns (nominated node name or None, status)."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeList) -> Status | None:
        raise NotImplementedError


class ScorePlugin(Plugin):
    """Score, per node (optional: ``ScoreBatch``, ``NormalizeScore``)."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        raise NotImplementedError


class ReservePlugin(Plugin):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise NotImplementedError


class PermitPlugin(Plugin):
    def permit(self, state: CycleState, pod: Pod, node_name: str
               ) -> tuple[Status | None, float]:
        """(status, timeout seconds); a Wait status parks the pod until allowed or timed out."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError


class BindPlugin(Plugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------- optional capabilities
# A plugin has one of these by defining its method; the framework resolves them once per
# plugin when a profile is built (``isinstance`` against the Protocol), never at call sites.


@runtime_checkable
class FilterBatch(Protocol):
    """Filter's batch form: verdicts for the node-table rows ``idx`` at once."""

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                     ) -> BatchStatus: ...


@runtime_checkable
class FilterPasses(Protocol):
    """Filter's batch verdicts alone: which of the node-table rows ``idx`` pass, not why,
    for callers that only look for a node that fits (None: ``filter_batch`` must answer;
    it reports the error)."""

    def filter_passes(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                      ) -> np.ndarray | None: ...


@runtime_checkable
class FilterRow(Protocol):
    """Filter's verdict alone on one row of the node table, read from the table (which a
    caller may have changed, as ``FilterBatch``'s callers do): for callers that try a few
    nodes in turn (None: ``filter_batch`` must answer; it reports the error)."""

    def filter_row(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int
                   ) -> bool | None: ...


@runtime_checkable
class ScoreBatch(Protocol):
    """Score's batch form: int64 raw scores for the node-table rows ``idx``."""

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, idx: np.ndarray
                    ) -> np.ndarray: ...


@runtime_checkable
class NormalizeScore(Protocol):
    """ScoreExtensions.NormalizeScore: the scores of every scored node, in order, to 0–100."""

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray
                        ) -> np.ndarray: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """The cluster events (with queueing hints) that may make a rejected pod schedulable;
    a plugin without it is woken by every event, as upstream."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@runtime_checkable
class FrameworkAware(Protocol):
    """A plugin that drives the framework itself (DefaultPreemption's dry runs): handed
    its profile's framework once that is built."""

    def set_framework(self, framework: Any) -> None: ...


@runtime_checkable
class CheckpointedPlugin(Protocol):
    """A plugin whose records outlive a scheduling cycle (a gang's members counted, a
    group backed off): what it keeps, as plain data a checkpoint writes (``simulate
    --state-out``), and taken back when the run resumes (raising KeyError, TypeError or
    ValueError on data not as written)."""

    def checkpoint_state(self) -> dict[str, Any]: ...

    def restore_state(self, saved: dict[str, Any]) -> None: ...


@runtime_checkable
class ReserveCheckpointedPlugin(Protocol):
    """A plugin whose Reserve chooses for the pod (devices, volumes) what only its binding
    cycle writes to the API: the choices a pod waiting at Permit holds, as plain data a
    checkpoint writes (None: none), and the same choices made again when the run resumes
    (called after Filter on the node, before Reserve, which then reserves exactly them;
    raising KeyError, TypeError or ValueError on data not as written, and an InputError,
    its field within ``saved``, on data naming what is not there)."""

    def reserved_choices(self, state: CycleState, pod: Pod, node_name: str
                         ) -> dict[str, Any] | None: ...

    def choose_as_reserved(self, state: CycleState, pod: Pod, node_name: str,
                           saved: dict[str, Any]) -> None: ...


EXTENSION_POINTS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}


def implements(plugin_cls: type, point: str) -> bool:
    return issubclass(plugin_cls, EXTENSION_POINTS[point])


# CycleState key: the victims ("ns/name") of the candidate a PostFilter plugin chose and
# acted on, for the cycle's decision record (``simulate --decisions``).
PREEMPTION_VICTIMS = "kubesched.io/preemption-victims"


@runtime_checkable
class PostFilterDecide(Protocol):
    """A PostFilter plugin that can say what it would do without doing it (``explain``):
    the result has ``status``, ``nominated`` and ``candidate`` (with ``victims.pods``)."""

    def decide(self, state: CycleState, pod: Pod, node_to_status: NodeToStatus) -> Any: ...


@runtime_checkable
class PodSigner(Protocol):
    """OpportunisticBatching's SignPod: what of the pod this plugin's verdicts depend on
    (``(signer, value)`` fragments), or None when it cannot sign this pod."""

    def sign_pod(self, pod: Pod) -> Sequence[tuple[str, Hashable]] | None: ...


@runtime_checkable
class SignsNoPod(Protocol):
    """A PodSigner that knows, once built, that its configuration lets it sign no pod at
    all (its ``sign_pod`` always answers None): the framework then signs no pod of its
    profile, instead of asking every plugin in every cycle to learn the same."""

    def signs_no_pod(self) -> bool: ...
