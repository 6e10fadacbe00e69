"""GPU sharing as the FGD paper's simulator models it (hkust-adsl/kubernetes-scheduler-simulator,
its ``Open-Gpu-Share`` plugin): a node has ``alibabacloud.com/gpu-count`` GPUs of one model
(label ``alibabacloud.com/gpu-card-model``), each of 1000 milli-GPU; a pod asks, in
annotations, for ``gpu-count`` GPUs of ``gpu-milli`` each (a share of one GPU when the count
is 1 and milli < 1000), optionally of one of the models in ``gpu-card-model`` ("A|B").

GPUs are annotations, not extended-resource requests, exactly as in that simulator: the
in-tree NodeResourcesFit checks cpu, memory and pods; ``GpuShare`` (Filter, Reserve,
Unreserve) checks and keeps the per-GPU allocation. Which GPU of the chosen node a pod gets
is decided at Reserve by ``gpuSelMethod`` (the simulator's names: best, worst, random, or a
policy's own rule: FGD).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework import (
    ActionType,
    BatchStatus,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    QueueingHint,
    ReservePlugin,
    Status,
    error,
    unschedulable,
)
from kubesched.framework.events import Resource
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.table_cache import NodeValue, RowVersions

MILLI = 1000
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_MODEL = "alibabacloud.com/gpu-card-model"
# The simulator's normalising constants (open-gpu-share/utils/const.go): the largest node.
MAX_SPEC_CPU = 128000
MAX_SPEC_GPU = 8000


@dataclass(frozen=True, slots=True)
class PodGpu:
    """A pod's resource shape as the paper's policies see it (its ``PodResource``)."""

    cpu: int  # milli-CPU requested
    milli: int  # per GPU, 0..1000
    count: int
    models: str = ""  # "" any model; else "A|B"

    @property
    def total_milli(self) -> int:
        return self.milli * self.count

    @property
    def is_share(self) -> bool:
        return self.count == 1 and self.milli < MILLI


@dataclass(frozen=True, slots=True)
class NodeGpu:
    """A node's free resources as the policies see them (the simulator's ``NodeResource``):
    ``left`` is indexed by GPU device index, whose order matters for tie-breaks."""

    cpu_left: int
    left: tuple[int, ...]
    model: str = ""
    cpu_capacity: int = 0

    @property
    def total_left(self) -> int:
        return sum(self.left)

    @property
    def fully_free(self) -> int:
        return sum(1 for v in self.left if v == MILLI)


def pod_gpu(pod: Pod) -> PodGpu:
    ann = pod.metadata.annotations
    count = int(ann.get(GPU_COUNT, "0") or 0)
    milli = int(ann.get(GPU_MILLI, "0") or 0) if count else 0
    return PodGpu(int(pod.requests.get("cpu", 0)), milli, count,
                  ann.get(GPU_MODEL, "") if count else "")


def node_gpu_count(node: Node | None) -> int:
    if node is None:
        return 0
    return int(node.status.allocatable.get(GPU_COUNT, 0))


def node_model(node: Node | None) -> str:
    return "" if node is None else node.labels.get(GPU_MODEL, "")


def accessible(node_model_name: str, pod_models: str) -> bool:
    """IsNodeAccessibleToPodByType: no constraint fits any node; a constraint never fits a
    node without GPUs."""
    wanted = [m for m in pod_models.split("|") if m]
    if not wanted:
        return True
    return bool(node_model_name) and node_model_name in wanted


def can_host(left: Sequence[int], pod: PodGpu) -> bool:
    """CanNodeHostPodOnGpuMemory: ``count`` GPUs each with ``milli`` free."""
    need = pod.count
    for v in left:
        if v >= pod.milli:
            need -= 1
            if need <= 0:
                return True
    return False


def subtract(node: NodeGpu, pod: PodGpu) -> NodeGpu | None:
    """NodeResource.Sub: the node with ``pod`` packed onto its least sufficient GPUs (stable
    ascending order), or None when it does not fit."""
    if node.cpu_left < pod.cpu or len(node.left) < pod.count:
        return None
    left = list(node.left)
    need = pod.count
    if need:
        for i in sorted(range(len(left)), key=left.__getitem__):
            if pod.milli <= left[i]:
                left[i] -= pod.milli
                need -= 1
                if need <= 0:
                    break
        if need > 0:
            return None
    return NodeGpu(node.cpu_left - pod.cpu, tuple(left), node.model, node.cpu_capacity)


def with_pod_on(node: NodeGpu, pod: PodGpu, ids: Sequence[int]) -> NodeGpu:
    left = list(node.left)
    for i in ids:
        left[i] -= pod.milli
    return NodeGpu(node.cpu_left - pod.cpu, tuple(left), node.model, node.cpu_capacity)


# --------------------------------------------------------------------- GPU selection


def exclusive_ids(node: NodeGpu, pod: PodGpu) -> tuple[int, ...] | None:
    """AllocateExclusiveGpuId: the first fully free GPUs by index."""
    ids = tuple(i for i, v in enumerate(node.left) if v == MILLI)[:pod.count]
    return ids if len(ids) == pod.count else None


def best_fit_id(node: NodeGpu, pod: PodGpu) -> tuple[int, ...] | None:
    best = -1
    for i, v in enumerate(node.left):
        if v >= pod.milli and (best < 0 or v < node.left[best]):
            best = i
    return (best,) if best >= 0 else None


def worst_fit_id(node: NodeGpu, pod: PodGpu) -> tuple[int, ...] | None:
    best = -1
    for i, v in enumerate(node.left):
        if v >= pod.milli and (best < 0 or v > node.left[best]):
            best = i
    return (best,) if best >= 0 else None


GpuChooser = Callable[[NodeGpu, PodGpu], "tuple[int, ...] | None"]


# --------------------------------------------------------------------- the ledger


@dataclass
class GpuLedger:
    """Which GPUs each pod holds, shared by the GPU plugins of one scheduler (one Handle).

    The pods on a node (``node_info.pods``: bound and assumed) are the truth; the ledger
    only remembers the device indices chosen at Reserve, so a pod that finishes or is
    deleted frees its GPUs by leaving ``node_info.pods``, with no event to miss."""

    assigned: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    _cache: dict[str, tuple[int, NodeInfo, NodeGpu]] = field(default_factory=dict)
    # Nodes whose devices changed at Reserve / Unreserve since the columns last looked.
    dirty: set[str] = field(default_factory=set)
    _columns: NodeValue[GpuColumns] = field(default_factory=NodeValue)

    def assign(self, uid: str, node: str, ids: tuple[int, ...]) -> None:
        self.assigned[uid] = (node, ids)
        self.dirty.add(node)

    def release(self, uid: str) -> None:
        got = self.assigned.pop(uid, None)
        if got is not None:
            self.dirty.add(got[0])

    def columns(self, snapshot: Snapshot, idx: np.ndarray) -> GpuColumns:
        """The GPU state of the snapshot's nodes as arrays over its node table, rows
        ``idx`` brought up to date."""
        table = snapshot.table
        cols = self._columns.get(table, lambda _: GpuColumns(snapshot))
        if self.dirty:
            rows = [i for i in map(table.index.get, self.dirty) if i is not None]
            cols.versions.forget(rows)
            self.dirty.clear()
        stale = cols.versions.stale(table, idx)
        for i in stale.tolist():
            cols.refresh(i, self.node_state(snapshot.node_infos[i]), snapshot.node_infos[i])
        cols.versions.mark(table, stale)
        return cols

    def node_state(self, node_info: NodeInfo, exclude: str = "") -> NodeGpu:
        """The node's free GPUs; ``exclude``: leave that pod out (Reserve runs after the pod
        is assumed, and the NodeInfo it reads may already hold it)."""
        node = node_info.node
        name = node_info.name
        # ``generation`` moves on every pod added or removed
        hit = self._cache.get(name)
        if (not exclude and hit is not None and hit[0] == node_info.generation
                and hit[1] is node_info):
            return hit[2]
        alloc_cpu = int(node_info.allocatable.get("cpu", 0))
        cpu_left = alloc_cpu - int(node_info.requested.get("cpu", 0))
        left = [MILLI] * node_gpu_count(node)
        state = NodeGpu(cpu_left, tuple(left), node_model(node), alloc_cpu)
        unplaced: list[tuple[Pod, PodGpu]] = []
        for p in node_info.pods:
            pg = pod_gpu(p)
            if not pg.count or not pg.milli or p.uid == exclude:
                continue
            a = self.assigned.get(p.uid)
            if a is None or a[0] != name:
                unplaced.append((p, pg))
                continue
            for i in a[1]:
                left[i] -= pg.milli
        # Pods bound when the scenario was loaded never went through Reserve: best fit,
        # as the simulator's own cache does for pods without a device annotation.
        for p, pg in unplaced:
            cur = NodeGpu(cpu_left, tuple(left), state.model, alloc_cpu)
            ids = exclusive_ids(cur, pg) if not pg.is_share else best_fit_id(cur, pg)
            if ids is None:
                continue  # over-committed at load: the pod holds no device
            self.assigned[p.uid] = (name, ids)
            for i in ids:
                left[i] -= pg.milli
        if exclude:
            mine = next((p for p in node_info.pods if p.uid == exclude), None)
            if mine is not None:  # its cpu is in ``requested`` already
                cpu_left += pod_gpu(mine).cpu
            return NodeGpu(cpu_left, tuple(left), state.model, alloc_cpu)
        state = NodeGpu(cpu_left, tuple(left), state.model, alloc_cpu)
        self._cache[name] = (node_info.generation, node_info, state)
        return state


class GpuColumns:
    """Per-row GPU state of one node table (a ``NodeValue``): the static columns (GPU count,
    model) and, refreshed per row when it changed (``versions``) or a Reserve changed its
    devices, the free milli of each
    GPU (``-1`` past a node's GPUs), free cpu, and an interned id of the node's state as the
    policies see it (free cpu, sorted free GPUs, model), by which scores are memoised."""

    # Interned for the life of the process, so ids (and scores memoised by them) never go
    # stale; a trace has a few thousand distinct states.
    _state_ids: ClassVar[dict[tuple[int, tuple[int, ...], str], int]] = {}
    _states: ClassVar[list[NodeGpu]] = []
    _aff_ids: ClassVar[dict[tuple[tuple[str, int], ...], int]] = {}
    affinities: ClassVar[list[tuple[tuple[str, int], ...]]] = []

    def __init__(self, snapshot: Snapshot) -> None:
        table = snapshot.table
        infos = snapshot.node_infos
        self.versions = RowVersions(table)
        n = table.size
        self.ngpu = np.array([node_gpu_count(ni.node) for ni in infos], dtype=np.int64)
        self.model_names: list[str] = []
        ids: dict[str, int] = {}
        models = [node_model(ni.node) for ni in infos]
        for m in models:
            ids.setdefault(m, len(ids))
        self.model_names = list(ids)
        self.model_index = ids
        self.model = np.array([ids[m] for m in models], dtype=np.int64)
        g = int(self.ngpu.max()) if n else 0
        self.left = np.full((n, max(g, 1)), -1, dtype=np.int64)
        self.cpu_left = np.zeros(n, dtype=np.int64)
        self.state = np.zeros(n, dtype=np.int64)
        self.aff = np.zeros(n, dtype=np.int64)  # interned pods' GPU affinities

    def total_left(self, rows: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.clip(self.left[rows], 0, None).sum(axis=1)
        return out

    def refresh(self, i: int, node: NodeGpu, info: NodeInfo) -> None:
        k = len(node.left)
        self.left[i, :k] = node.left
        self.left[i, k:] = -1
        self.cpu_left[i] = node.cpu_left
        self.state[i] = self.state_id(node)
        counts: dict[str, int] = {}
        for p in info.pods:
            pg = pod_gpu(p)
            if pg.count and pg.milli:
                a = "share" if pg.is_share else f"{pg.count}-gpu"
                counts[a] = counts.get(a, 0) + 1
        key = tuple(sorted(counts.items()))
        aid = self._aff_ids.get(key)
        if aid is None:
            aid = self._aff_ids[key] = len(self.affinities)
            self.affinities.append(key)
        self.aff[i] = aid

    @classmethod
    def state_id(cls, node: NodeGpu) -> int:
        key = (node.cpu_left, tuple(sorted(node.left)), node.model)
        got = cls._state_ids.get(key)
        if got is None:
            got = cls._state_ids[key] = len(cls._states)
            cls._states.append(node)
        return got

    @classmethod
    def state_of(cls, sid: int) -> NodeGpu:
        return cls._states[sid]

    def accessible_mask(self, rows: np.ndarray, pod_models: str) -> np.ndarray:
        """``accessible`` for each row."""
        ok = [self.model_index[m] for m in pod_models.split("|")
              if m and m in self.model_index]
        if not [m for m in pod_models.split("|") if m]:
            return np.ones(len(rows), dtype=bool)
        ok = [j for j in ok if self.model_names[j]]
        return np.isin(self.model[rows], np.array(ok, dtype=np.int64))


_LEDGER_KEY = "research/GpuLedger"


def ledger(handle: Handle) -> GpuLedger:
    """The ledger of ``handle``'s scheduler (one per Handle)."""
    got = handle.shared.get(_LEDGER_KEY)
    if got is None:
        got = handle.shared[_LEDGER_KEY] = GpuLedger()
    led: GpuLedger = got
    return led


class _GpuBase:
    """What the GPU plugins share: the handle's ledger and the node's GPU state."""

    handle: Handle

    @property
    def gpu_ledger(self) -> GpuLedger:
        led: GpuLedger | None = getattr(self, "_ledger", None)
        if led is None:
            led = ledger(self.handle)
            self._ledger = led
        return led

    def node_state(self, node_info: NodeInfo, exclude: str = "") -> NodeGpu:
        return self.gpu_ledger.node_state(node_info, exclude)

    def gpu_columns(self, snapshot: Snapshot, idx: np.ndarray) -> GpuColumns:
        return self.gpu_ledger.columns(snapshot, idx)


def gpu_fits(node: NodeGpu, pod: PodGpu) -> bool:
    return accessible(node.model, pod.models) and can_host(node.left, pod)


class GpuShare(_GpuBase, FilterPlugin, ReservePlugin):
    """Open-Gpu-Share: Filter (model and per-GPU room), Reserve (choose the devices),
    Unreserve. Args: ``gpuSelMethod`` — ``best`` (default), ``worst``, ``random``, or the
    name of a policy plugin with its own rule (``FGD``, whose ``typicalPods`` the args of
    this plugin then carry too)."""

    name = "GpuShare"
    # the node's GPUs and the devices of the pods on it; a Reserve's choice of devices
    # comes with the pod's assumption on the node (or its forgetting), which changes its row
    filter_row_local = True

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.args = args or {}
        self.handle = handle
        self.method = str(self.args.get("gpuSelMethod", "best"))
        self._chooser: GpuChooser | None = None

    def _choose(self, node: NodeGpu, pod: PodGpu) -> tuple[int, ...] | None:
        if not pod.is_share:
            return exclusive_ids(node, pod)
        if self.method == "best":
            return best_fit_id(node, pod)
        if self.method == "worst":
            return worst_fit_id(node, pod)
        if self.method == "random":
            # reservoir sampling over the fitting GPUs, as allocateGpuIdBasedOnRandomFit
            rng = self.handle.rng
            got: tuple[int, ...] | None = None
            n = 0
            for i, v in enumerate(node.left):
                if v >= pod.milli:
                    n += 1
                    if rng is None or rng.randrange(n) == 0:
                        got = (i,)
            return got
        if self._chooser is None:
            from kubesched.research.policies import gpu_chooser

            self._chooser = gpu_chooser(self.method, self.args)
        return self._chooser(node, pod)

    def sign_pod_for_filter(self, pod: Pod) -> SignFragments | None:
        """What Filter reads of a pod (its GPU share, count and models), so that a failed
        attempt is replayed for an identical pod (scheduler/failures.py). Not ``sign_pod``:
        that would also let OpportunisticBatching batch these pods, which it does not today."""
        pg = pod_gpu(pod)
        return (("GpuShare", (pg.milli, pg.count, pg.models)),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        pg = pod_gpu(pod)
        if pg.milli <= 0:
            return None
        if not node_gpu_count(node_info.node):
            return unschedulable("node(s) had no GPU")
        if not accessible(node_model(node_info.node), pg.models):
            return unschedulable("node(s) had no GPU of the requested model")
        if not can_host(self.node_state(node_info).left, pg):
            return unschedulable("node(s) had insufficient GPU")
        return None

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        pg = pod_gpu(pod)
        out = BatchStatus.success(len(idx))
        if pg.milli <= 0:
            return out
        cols = self.gpu_columns(snapshot, idx)
        out.fail(cols.ngpu[idx] == 0, Code.UNSCHEDULABLE, ("node(s) had no GPU",))
        out.fail(~cols.accessible_mask(idx, pg.models), Code.UNSCHEDULABLE,
                 ("node(s) had no GPU of the requested model",))
        room = (cols.left[idx] >= pg.milli).sum(axis=1)
        out.fail(room < pg.count, Code.UNSCHEDULABLE, ("node(s) had insufficient GPU",))
        return out

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        pg = pod_gpu(pod)
        if pg.milli <= 0:
            return None
        info = self.handle.snapshot.get(node_name)
        if info is None:
            return error(f"GpuShare: node {node_name} is not in the snapshot")
        self.gpu_ledger.release(pod.uid)
        ids = self._choose(self.node_state(info, exclude=pod.uid), pg)
        if ids is None:
            return error(f"GpuShare: no GPU of {node_name} fits {pod.key}")
        self.gpu_ledger.assign(pod.uid, node_name, ids)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.gpu_ledger.release(pod.uid)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # GPUs come free only when a pod goes or a node comes: without this, every binding
        # would wake every rejected pod (a plugin with no events is woken by all).
        return [
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE),
                                 _queue_if_bound),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD
                                              | ActionType.UPDATE_NODE_ALLOCATABLE
                                              | ActionType.UPDATE_NODE_LABEL), None),
        ]


def _queue_if_bound(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    if old is not None and old.spec.node_name and pod_gpu(old).milli > 0:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
