"""The openb trace format (Alibaba cluster-trace-gpu-v2023, the FGD paper's) into kubesched
scenarios, and the paper's workload construction.

Nodes (``sn,cpu_milli,memory_mib,gpu,model``) become Nodes as the paper's simulator writes
them (data/node_yaml): label ``alibabacloud.com/gpu-card-model``, allocatable cpu, memory,
``alibabacloud.com/gpu-count`` / ``gpu-milli`` and 1001 pods. Pods
(``name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time]``) become Pods requesting cpu and memory (limits equal), their
GPU request in the ``alibabacloud.com/gpu-*`` annotations (data/pod_csv_to_yaml.py).

Two ways to order them in time:

- ``paper`` (the paper's experiments): pods sorted by name and shuffled with the seed,
  then random copies of trace pods appended until the GPU requested reaches ``ratio`` ×
  the cluster's GPUs (TunePodsByNodeTotalResource, tuneUpPods / tuneDownPods), arriving one
  a second in that order and never leaving.
- ``replay``: each pod arrives at its ``creation_time`` (relative to the first) and runs
  until its ``deletion_time`` (duration from ``scheduled_time``, else ``creation_time``);
  a trace without times arrives one a second in file order and never leaves.
"""

from __future__ import annotations

import csv
import hashlib
import math
import pickle
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubesched.api.scenario import Scenario, load_scenario_docs
from kubesched.errors import InputError
from kubesched.releases import DEFAULT_VERSION
from kubesched.research.gpushare import GPU_COUNT, GPU_MILLI, GPU_MODEL, MILLI, PodGpu

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
TIME_COLUMNS = ("creation_time", "deletion_time", "scheduled_time")
TRACES = ("default", "cpu200", "gpushare100", "multigpu50")
NAMESPACE = "openb"
MAX_PODS = "1001"  # the simulator's node YAML
# The simulator renames every node "<%04d>-<name>" with its entry of a random permutation
# and breaks ties between top-scoring nodes by the smallest name: that entry, kept here as
# a label, is the node's place in the tie-break order (research.policies.NodeOrder).
ORDER_LABEL = "openb/order"


@dataclass(frozen=True, slots=True)
class TraceNode:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class TracePod:
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: str = ""
    qos: str = ""
    creation: float | None = None
    deletion: float | None = None
    scheduled: float | None = None

    @property
    def shape(self) -> PodGpu:
        milli = self.gpu_milli if self.num_gpu else 0
        return PodGpu(self.cpu_milli, milli, self.num_gpu, self.gpu_spec if self.num_gpu else "")


# --------------------------------------------------------------------- reading


Rows = list[tuple[int, dict[str, str]]]


def read_table(path: Path, required: Sequence[str]) -> tuple[list[str], Rows]:
    """A CSV trace file's header and its non-blank rows with their line numbers; a missing
    required column or a short row names the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read trace file: {getattr(e, 'strerror', None) or e}",
                         file=str(path)) from None
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None:
        raise InputError("empty trace file: expected a header line", file=f"{path}:1")
    header = [h.strip() for h in header]
    for col in required:
        if col not in header:
            raise InputError(f"missing column {col!r} (the header has {','.join(header)})",
                             file=f"{path}:1", field=col)
    rows = []
    for line, rec in enumerate(reader, start=2):
        if not rec or all(not c.strip() for c in rec):
            continue
        if len(rec) != len(header):
            raise InputError(f"{len(rec)} values where the header has {len(header)} columns",
                             file=f"{path}:{line}")
        rows.append((line, {h: v.strip() for h, v in zip(header, rec, strict=True)}))
    return header, rows


def int_cell(path: Path, line: int, row: dict[str, str], col: str, *, minimum: int = 0) -> int:
    """Column ``col`` of a row as an integer ≥ ``minimum`` (``4000.0`` is 4000: pandas
    writes integers so), or an error naming ``path:line`` and the column."""
    raw = row[col]
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or value < minimum:
        raise InputError(f"must be an integer ≥ {minimum}", file=f"{path}:{line}",
                         field=col, value=raw)
    return int(value)


def seconds_cell(path: Path, line: int, row: dict[str, str], col: str) -> float | None:
    """Column ``col`` as non-negative seconds; None when empty or ``nan`` (pandas' empty)."""
    raw = row.get(col, "")
    if raw in ("", "nan", "NaN"):
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError("must be a non-negative number of seconds", file=f"{path}:{line}",
                         field=col, value=raw)
    return value


def read_nodes(path: str | Path) -> list[TraceNode]:
    p = Path(path)
    _, rows = read_table(p, NODE_COLUMNS)
    out = []
    for line, r in rows:
        model = r["model"] if r["model"] not in ("nan", "NaN") else ""
        out.append(TraceNode(r["sn"], int_cell(p, line, r, "cpu_milli"),
                             int_cell(p, line, r, "memory_mib"), int_cell(p, line, r, "gpu"),
                             model))
        if not r["sn"]:
            raise InputError("empty node name", file=f"{p}:{line}", field="sn")
    return out


def read_pods(path: str | Path) -> list[TracePod]:
    p = Path(path)
    header, rows = read_table(p, POD_COLUMNS)
    out = []
    for line, r in rows:
        if not r["name"]:
            raise InputError("empty pod name", file=f"{p}:{line}", field="name")
        num = int_cell(p, line, r, "num_gpu")
        milli = int_cell(p, line, r, "gpu_milli")
        # pod_csv_to_yaml clamps gpu_milli into 0..1000
        milli = min(milli, MILLI)
        spec = r.get("gpu_spec", "")
        spec = "" if spec in ("nan", "NaN") else spec
        out.append(TracePod(r["name"], int_cell(p, line, r, "cpu_milli"),
                            int_cell(p, line, r, "memory_mib"), num, milli, spec,
                            r.get("qos", ""), seconds_cell(p, line, r, "creation_time"),
                            seconds_cell(p, line, r, "deletion_time"),
                            seconds_cell(p, line, r, "scheduled_time")))
    if rows and "creation_time" in header:
        for line, r in rows:
            for col in ("deletion_time", "scheduled_time"):
                c = seconds_cell(p, line, r, "creation_time")
                v = seconds_cell(p, line, r, col)
                if c is not None and v is not None and v < c:
                    raise InputError(f"{col} is before creation_time", file=f"{p}:{line}",
                                     field=col, value=r[col])
    return out


# --------------------------------------------------------------------- the paper's workload


def total_gpu_milli(nodes: Sequence[TraceNode]) -> int:
    return sum(n.gpus for n in nodes) * MILLI


def paper_workload(pods: Sequence[TracePod], nodes: Sequence[TraceNode], *, ratio: float,
                   seed: int, shuffle: bool = True,
                   rng: random.Random | None = None) -> list[TracePod]:
    """The simulator's SortClusterPods (shufflePod) then TunePodsByNodeTotalResource.

    Same procedure, another generator: Python's ``random.Random(seed)`` (or ``rng``, to go
    on drawing from it as the simulator's one math/rand stream does) where the simulator
    uses Go's math/rand, so a seed draws a different (equally distributed) workload."""
    if rng is None:
        rng = random.Random(seed)
    by_name = sorted(pods, key=lambda p: p.name)
    order = list(by_name)
    if shuffle:
        rng.shuffle(order)
    if ratio <= 0:
        return order
    target = ratio * total_gpu_milli(nodes)
    total = sum(p.shape.total_milli for p in order)
    if total > target:
        while total > target and order:
            victim = order.pop(rng.randrange(len(order)))
            total -= victim.shape.total_milli
        return order
    i = 0
    while by_name:
        src = by_name[rng.randrange(len(by_name))]
        # tuneUpPods compares the per-GPU milli, not the pod's total, with the room left
        if total + src.shape.milli > target:
            break
        total += src.shape.total_milli
        order.append(replace(src, name=f"{src.name}-tuned-{i}"))
        i += 1
    return order


def node_order(nodes: Sequence[TraceNode], rng: random.Random) -> dict[str, int]:
    """syncClusterResourceList's renaming: nodes sorted by name, node ``i`` prefixed with
    ``perm[i]`` of a random permutation. Returns each node's ``perm`` entry."""
    names = sorted(n.name for n in nodes)
    perm = list(range(len(names)))
    rng.shuffle(perm)
    return dict(zip(names, perm, strict=True))


# --------------------------------------------------------------------- to a scenario


def node_doc(n: TraceNode, order: int | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": n.name, "kubernetes.io/os": "linux"}
    if order is not None:
        labels[ORDER_LABEL] = f"{order:04d}"
    res = {"cpu": f"{n.cpu_milli}m", "memory": f"{n.memory_mib}Mi", "pods": MAX_PODS}
    if n.gpus:
        res[GPU_COUNT] = str(n.gpus)
        res[GPU_MILLI] = str(n.gpus * MILLI)
    if n.model:
        labels[GPU_MODEL] = n.model
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n.name, "labels": labels},
            "status": {"capacity": dict(res), "allocatable": dict(res)}}


def pod_doc(p: TracePod, arrival: float | None, duration: float | None) -> dict[str, Any]:
    ann: dict[str, str] = {}
    if p.num_gpu:
        ann[GPU_MILLI] = str(p.gpu_milli)
        ann[GPU_COUNT] = str(p.num_gpu)
        if p.gpu_spec:
            ann[GPU_MODEL] = p.gpu_spec
    if arrival is not None:
        ann["kubesched.io/arrival"] = seconds_text(arrival)
    if duration is not None:
        ann["kubesched.io/duration"] = seconds_text(duration)
    req = {"cpu": f"{p.cpu_milli}m", "memory": f"{p.memory_mib}Mi"}
    meta: dict[str, Any] = {"name": p.name, "namespace": NAMESPACE, "annotations": ann}
    if p.qos:
        meta["labels"] = {"openb/qos": p.qos}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "openb",
                                     "resources": {"requests": req, "limits": dict(req)}}]}}


def seconds_text(v: float) -> str:
    return str(int(v)) if v == int(v) else repr(v)


def timed(pods: Sequence[TracePod]) -> list[tuple[TracePod, float | None, float | None]]:
    """``replay`` times: arrival from creation_time, duration until deletion_time; pods
    without times one a second in file order, forever."""
    starts = [p.creation for p in pods if p.creation is not None]
    t0 = min(starts) if starts else 0.0
    out: list[tuple[TracePod, float | None, float | None]] = []
    for i, p in enumerate(pods):
        if p.creation is None:
            out.append((p, float(i), None))
            continue
        start = p.scheduled if p.scheduled is not None else p.creation
        dur = None if p.deletion is None else max(p.deletion - start, 0.0)
        out.append((p, p.creation - t0, dur))
    return out


def scenario_docs(nodes: Sequence[TraceNode], pods: Sequence[TracePod], *,
                  order: str = "paper",
                  ranks: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The scenario's objects; ``ranks``: each node's place in the tie-break order."""
    docs = [node_doc(n, None if ranks is None else ranks.get(n.name)) for n in nodes]
    if order == "paper":
        docs += [pod_doc(p, float(i), None) for i, p in enumerate(pods)]
    else:
        docs += [pod_doc(p, a, d) for p, a, d in timed(pods)]
    return docs


@dataclass
class OpenbSpec:
    """What ``trace:openb:…`` names: the data folder, the pod list, the node list, the
    construction and its parameters."""

    data: Path
    pods: str = "default"
    nodes: str = "gpu_node"
    order: str = "paper"
    ratio: float = 1.3
    seed: int = 42

    @property
    def pod_file(self) -> Path:
        name = self.pods if self.pods.endswith(".csv") else f"openb_pod_list_{self.pods}.csv"
        return self.data / name

    @property
    def node_file(self) -> Path:
        name = self.nodes if self.nodes.endswith(".csv") else f"openb_node_list_{self.nodes}.csv"
        return self.data / name


def parse_spec(text: str, data: Path | None = None) -> OpenbSpec:
    """``trace:openb:DIR[:key=value,…]`` (keys: pods, nodes, order, ratio, seed) — or, when
    ``data`` is given, ``trace:openb[:key=value,…]`` relative to it."""
    parts = text.split(":")
    if len(parts) < 2 or parts[0] != "trace" or parts[1] != "openb":
        raise InputError("a trace scenario is trace:openb:DIR[:key=value,...]", value=text)
    rest = parts[2:]
    folder = data
    if rest and "=" not in rest[0]:
        folder = Path(rest[0])
        rest = rest[1:]
    if folder is None:
        raise InputError("trace:openb needs its data folder: trace:openb:DIR", value=text)
    spec = OpenbSpec(folder)
    for item in ",".join(rest).split(","):
        if not item:
            continue
        key, _, value = item.partition("=")
        try:
            if key in ("pods", "nodes", "order"):
                setattr(spec, key, value)
            elif key == "ratio":
                spec.ratio = float(value)
            elif key == "seed":
                spec.seed = int(value)
            else:
                raise ValueError
        except ValueError:
            raise InputError(f"bad trace option {item!r} (keys: pods, nodes, order, ratio, "
                             "seed)", value=text) from None
    if spec.order not in ("paper", "replay"):
        raise InputError("order must be paper or replay", value=text, field="order")
    return spec


Loaded = tuple[Scenario, list[TracePod], list[TraceNode]]
# The scenarios this process built last, pickled (a run may change the objects it is given;
# each caller gets its own): a sweep's worker replays one workload under every policy and
# tie-break in turn, and building it costs about as much as unpickling it five times.
_BUILT: dict[tuple[Any, ...], bytes] = {}
_BUILT_KEEP = 2


def load_openb(spec: OpenbSpec, *, release: str = DEFAULT_VERSION) -> Loaded:
    """The scenario of ``spec`` as Kubernetes ``release`` loads it, with the trace's pods
    as read (FGD's target workload) and its nodes. As in the simulator, one generator draws
    the workload, then the nodes' tie-break order. Built once per process for a spec,
    release and the trace files' contents."""
    key = _built_key(spec, release)
    if _in_child:
        mine = _FOR_CHILDREN.get(key)
        if mine is not None:
            return mine
    got = _BUILT.get(key)
    if got is not None:
        out: Loaded = pickle.loads(got)
        return out
    built = build_openb(spec, release=release)
    while len(_BUILT) >= _BUILT_KEEP:
        del _BUILT[next(iter(_BUILT))]
    _BUILT[key] = pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL)
    return built


def keep_for_children(spec: OpenbSpec, *, release: str = DEFAULT_VERSION) -> None:
    """Build ``spec``'s workload in this process for the processes it forks, one per run
    (research.sweep): in them ``load_openb`` returns it as it is — their copy of the
    memory is their own — neither pickled nor unpickled."""
    key = _built_key(spec, release)
    if key in _FOR_CHILDREN:
        return
    built = build_openb(spec, release=release)
    while len(_FOR_CHILDREN) >= _BUILT_KEEP:
        del _FOR_CHILDREN[next(iter(_FOR_CHILDREN))]
    _FOR_CHILDREN[key] = built


def in_forked_child() -> None:
    """This process was forked for one run: ``keep_for_children``'s workloads are its own."""
    global _in_child
    _in_child = True


_FOR_CHILDREN: dict[tuple[Any, ...], Loaded] = {}
_in_child = False


def _built_key(spec: OpenbSpec, release: str) -> tuple[Any, ...]:
    return (_file_key(spec.node_file), _file_key(spec.pod_file), spec.order, spec.ratio,
            spec.seed, release)


def _file_key(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # reading it gives the error


def build_openb(spec: OpenbSpec, *, release: str = DEFAULT_VERSION) -> Loaded:
    """``load_openb`` without the process's cache."""
    nodes = read_nodes(spec.node_file)
    trace = read_pods(spec.pod_file)
    rng = random.Random(spec.seed)
    pods = (paper_workload(trace, nodes, ratio=spec.ratio, seed=spec.seed, rng=rng)
            if spec.order == "paper" else trace)
    ranks = node_order(nodes, rng)
    sc = load_scenario_docs(scenario_docs(nodes, pods, order=spec.order, ranks=ranks),
                            str(spec.pod_file), release=release)
    return sc, trace, nodes
