"""Traces into scenario files (``kubesched trace``): the openb format (``openb.py``) and a
generic one, CSV or JSON Lines, for workloads from anywhere else.

Generic pods (one row or JSON object each; other columns are ignored):

| column | required | becomes |
|---|---|---|
| ``name`` | yes | ``metadata.name`` (unique within its namespace) |
| ``arrival`` | yes | ``kubesched.io/arrival``: seconds ≥ 0 of virtual time |
| ``cpu_milli``, ``memory_mib`` | yes | requests (limits equal) of the one container |
| ``duration`` | no | ``kubesched.io/duration`` (empty: runs until the end) |
| ``namespace`` | no | ``metadata.namespace`` (default ``default``) |
| ``gpu`` | no | whole GPUs: ``nvidia.com/gpu`` requests and limits |
| ``num_gpu``, ``gpu_milli``, ``gpu_model`` | no | shared GPUs: GpuShare's annotations |
| ``priority`` | no | ``spec.priority`` |
| ``priority_class`` | no | ``spec.priorityClassName`` |

Generic nodes: ``name``, ``cpu_milli``, ``memory_mib`` required; ``gpu``
(``nvidia.com/gpu``), ``pods`` (default 110), ``zone`` (``topology.kubernetes.io/zone``)
optional.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.scenario import load_scenario_docs
from kubesched.errors import InputError
from kubesched.releases import DEFAULT_VERSION
from kubesched.research.gpushare import GPU_COUNT, GPU_MILLI, GPU_MODEL, MILLI
from kubesched.research.openb import (
    Rows,
    int_cell,
    paper_workload,
    read_nodes,
    read_pods,
    read_table,
    scenario_docs,
    seconds_cell,
    seconds_text,
)

POD_COLUMNS = ("name", "arrival", "cpu_milli", "memory_mib")
NODE_COLUMNS = ("name", "cpu_milli", "memory_mib")
GPU = "nvidia.com/gpu"
DEFAULT_MAX_PODS = 110  # the kubelet's default maxPods
MIN_PRIORITY = -(2**31)  # int32, as the API server bounds spec.priority
JSONL_SUFFIXES = (".jsonl", ".ndjson")
ORDERS = ("paper", "replay")


def read_rows(path: Path, required: Sequence[str]) -> Rows:
    """The rows of a CSV file, or of a JSON Lines file (``.jsonl``/``.ndjson``), as strings by
    column, each with its line number."""
    if path.suffix.lower() not in JSONL_SUFFIXES:
        return read_table(path, required)[1]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read trace file: {getattr(e, 'strerror', None) or e}",
                         file=str(path)) from None
    rows: Rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            raise InputError(f"not JSON: {e.msg} at column {e.colno}",
                             file=f"{path}:{line}") from None
        if not isinstance(obj, dict):
            raise InputError("each line must be a JSON object", file=f"{path}:{line}")
        for col in required:
            if col not in obj:
                raise InputError(f"missing field {col!r}", file=f"{path}:{line}", field=col)
        # the cells as a CSV would hold them, so both formats go through one set of checks
        rows.append((line, {str(k): "" if v is None else str(v) for k, v in obj.items()}))
    return rows


def _text(row: dict[str, str], col: str) -> str:
    value = row.get(col, "")
    return "" if value in ("nan", "NaN") else value


def generic_pod_docs(path: Path) -> list[dict[str, Any]]:
    rows = read_rows(path, POD_COLUMNS)
    seen: dict[tuple[str, str], int] = {}
    docs = []
    for line, r in rows:
        where = f"{path}:{line}"
        name, ns = r["name"], _text(r, "namespace") or "default"
        if not name:
            raise InputError("empty pod name", file=where, field="name")
        if (ns, name) in seen:
            raise InputError(f"pod {ns}/{name} already on line {seen[ns, name]}", file=where,
                             field="name", value=name)
        seen[ns, name] = line
        arrival = seconds_cell(path, line, r, "arrival")
        if arrival is None:
            raise InputError("must be a non-negative number of seconds", file=where,
                             field="arrival", value=r["arrival"])
        duration = seconds_cell(path, line, r, "duration")
        req: dict[str, str] = {"cpu": f"{int_cell(path, line, r, 'cpu_milli')}m",
                               "memory": f"{int_cell(path, line, r, 'memory_mib')}Mi"}
        if _text(r, "gpu"):
            gpus = int_cell(path, line, r, "gpu")
            if gpus:
                req[GPU] = str(gpus)
        ann = {"kubesched.io/arrival": seconds_text(arrival)}
        if duration is not None:
            ann["kubesched.io/duration"] = seconds_text(duration)
        if _text(r, "num_gpu") and int_cell(path, line, r, "num_gpu"):
            ann[GPU_COUNT] = str(int_cell(path, line, r, "num_gpu"))
            milli = int_cell(path, line, r, "gpu_milli") if _text(r, "gpu_milli") else MILLI
            ann[GPU_MILLI] = str(min(milli, MILLI))
            if _text(r, "gpu_model"):
                ann[GPU_MODEL] = _text(r, "gpu_model")
        spec: dict[str, Any] = {"containers": [{
            "name": "main", "image": "trace",
            "resources": {"requests": req, "limits": dict(req)}}]}
        if _text(r, "priority"):
            spec["priority"] = int_cell(path, line, r, "priority", minimum=MIN_PRIORITY)
        if _text(r, "priority_class"):
            spec["priorityClassName"] = _text(r, "priority_class")
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "namespace": ns, "annotations": ann},
                     "spec": spec})
    return docs


def generic_node_docs(path: Path) -> list[dict[str, Any]]:
    docs = []
    seen: dict[str, int] = {}
    for line, r in read_rows(path, NODE_COLUMNS):
        where = f"{path}:{line}"
        name = r["name"]
        if not name:
            raise InputError("empty node name", file=where, field="name")
        if name in seen:
            raise InputError(f"node {name} already on line {seen[name]}", file=where,
                             field="name", value=name)
        seen[name] = line
        pods = int_cell(path, line, r, "pods") if _text(r, "pods") else DEFAULT_MAX_PODS
        res = {"cpu": f"{int_cell(path, line, r, 'cpu_milli')}m",
               "memory": f"{int_cell(path, line, r, 'memory_mib')}Mi", "pods": str(pods)}
        if _text(r, "gpu") and int_cell(path, line, r, "gpu"):
            res[GPU] = str(int_cell(path, line, r, "gpu"))
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
        if _text(r, "zone"):
            labels["topology.kubernetes.io/zone"] = _text(r, "zone")
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": labels},
                     "status": {"capacity": dict(res), "allocatable": dict(res)}})
    return docs


def openb_docs(pods_path: Path, nodes_path: Path | None, *, ratio: float, seed: int,
               order: str) -> list[dict[str, Any]]:
    """An openb trace as the sweep replays it (``order`` paper: the paper's workload, drawn
    with ``seed`` and inflated to ``ratio`` × the nodes' GPUs; replay: the trace's times)."""
    nodes = read_nodes(nodes_path) if nodes_path is not None else []
    pods = read_pods(pods_path)
    if order == "paper":
        if nodes_path is None and ratio > 0:
            raise InputError("--ratio is a share of the nodes' GPUs: give --nodes (or "
                             "--ratio 0 to keep the trace's pods as they are)",
                             file=str(pods_path))
        pods = paper_workload(pods, nodes, ratio=ratio, seed=seed)
    return scenario_docs(nodes, pods, order=order)


def check_docs(docs: list[dict[str, Any]], source: str, release: str = DEFAULT_VERSION
               ) -> None:
    """Refuse what ``simulate`` would refuse, now rather than when the file is read back."""
    load_scenario_docs(docs, source, release=release)


def dump_docs(docs: list[dict[str, Any]], header: str) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's is ~10× faster
    body = yaml.dump_all(docs, Dumper=dumper, sort_keys=False, explicit_start=True,
                         default_flow_style=False)
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    return comment + body
