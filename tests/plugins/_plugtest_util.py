"""Builders for plugin tests, in the spirit of upstream's ``st.MakePod()`` / ``st.MakeNode()``.

Quantities are strings as in upstream's tables (``"cpu": "1000"`` is 1000 cores); objects go
through ``kubesched.api.parse`` so requests and non-zero requests are computed as in real runs.
Every check runs both the per-node and the batch form of a plugin and requires them to agree.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from kubesched.api.parse import parse_node, parse_pod
from kubesched.api.types import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import NodeList, Plugin
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.testing import snapshot_from_nodes

_ids = itertools.count()


def _container(req: dict[str, Any] | None, name: str) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "busybox"}
    if req is not None:
        c["resources"] = {"requests": {k: str(v) for k, v in req.items()}}
    return c


def make_pod(name: str | None = None, *, reqs: list[dict[str, Any] | None] | None = None,
             init_reqs: list[dict[str, Any] | None] | None = None,
             sidecar_reqs: list[dict[str, Any] | None] | None = None,
             node: str = "", uid: str | None = None, tolerations: list[dict] | None = None,
             overhead: dict[str, Any] | None = None,
             pod_level_requests: dict[str, Any] | None = None,
             gates: list[str] | None = None, priority: int | None = None,
             nominated: str = "") -> Pod:
    """``reqs``: one container per entry (``None`` = a container without requests), like
    repeated ``.Req(...)``; no ``reqs`` = a pod without containers (``st.MakePod().Obj()``)."""
    name = name or f"pod-{next(_ids)}"
    spec: dict[str, Any] = {
        "containers": [_container(r, f"c{i}") for i, r in enumerate(reqs or [])],
    }
    inits = [_container(r, f"i{i}") for i, r in enumerate(init_reqs or [])]
    for i, r in enumerate(sidecar_reqs or []):
        c = _container(r, f"s{i}")
        c["restartPolicy"] = "Always"
        inits.append(c)
    if inits:
        spec["initContainers"] = inits
    if node:
        spec["nodeName"] = node
    if tolerations:
        spec["tolerations"] = tolerations
    if overhead:
        spec["overhead"] = {k: str(v) for k, v in overhead.items()}
    if pod_level_requests:
        spec["resources"] = {"requests": {k: str(v) for k, v in pod_level_requests.items()}}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if priority is not None:
        spec["priority"] = priority
    meta: dict[str, Any] = {"name": name, "uid": uid or f"uid-{name}-{next(_ids)}"}
    d: dict[str, Any] = {"metadata": meta, "spec": spec}
    if nominated:
        d["status"] = {"nominatedNodeName": nominated}
    return parse_pod(d)


def make_node(name: str = "node", *, capacity: dict[str, Any] | None = None,
              taints: list[dict] | None = None, unschedulable: bool = False,
              add_pods: bool = True) -> Node:
    """``st.MakeNode().Name(name).Capacity(capacity)``: capacity (and allocatable), with
    ``pods: 32`` unless given; no ``capacity`` = a node without any."""
    status: dict[str, Any] = {}
    if capacity is not None:
        res = {"pods": "32"} if add_pods else {}
        res.update({k: str(v) for k, v in capacity.items()})
        status = {"capacity": dict(res), "allocatable": dict(res)}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return parse_node({"metadata": {"name": name}, "spec": spec, "status": status})


def make_node_milli(name: str, milli_cpu: int, memory: int,
                    scalars: dict[str, int] | None = None) -> Node:
    """Upstream noderesources ``makeNode(name, milliCPU, memory, scalars)`` (no pods)."""
    cap: dict[str, Any] = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    cap.update({k: str(v) for k, v in (scalars or {}).items()})
    return make_node(name, capacity=cap, add_pods=False)


def snapshot(nodes: list[Node], pods: list[Pod] | None = None) -> Snapshot:
    return snapshot_from_nodes(nodes, pods or [])


def all_idx(snap: Snapshot) -> np.ndarray:
    return np.arange(snap.num_nodes, dtype=np.int64)


# ---------------------------------------------------------------- running plugins


def run_filter(plugin: Plugin, pod: Pod, snap: Snapshot) -> list[Status]:
    """PreFilter (if any), then Filter on every node in both forms; returns the statuses
    after asserting the forms agree (code and reasons)."""
    state = CycleState()
    pre = getattr(plugin, "pre_filter", None)
    if pre is not None:
        _, st = pre(state, pod, snap)
        assert st is None or st.is_success(), st
    per_node = [plugin.filter(state, pod, ni) for ni in snap.node_infos]  # type: ignore[attr-defined]
    per_node = [Status() if s is None else s for s in per_node]
    batch = plugin.filter_batch(state, pod, snap, all_idx(snap))  # type: ignore[attr-defined]
    for i, s in enumerate(per_node):
        b = batch.status_at(i, plugin.name)
        assert (b.code, b.reasons) == (s.code, s.reasons), (snap.node_infos[i].name, b, s)
    return per_node


def run_scores(plugin: Plugin, pod: Pod, snap: Snapshot, *, pre_score: bool = True,
               normalize: bool = True) -> list[int] | Status:
    """PreScore (if asked), Score on every node in both forms, NormalizeScore if the plugin
    has one; returns the scores after asserting the forms agree, or PreScore's Skip status."""
    state = CycleState()
    idx = all_idx(snap)
    if pre_score and hasattr(plugin, "pre_score"):
        st = plugin.pre_score(state, pod, NodeList(snap.node_infos, idx))  # type: ignore[attr-defined]
        if st is not None and st.code == Code.SKIP:
            return st
        assert st is None or st.is_success(), st
    per_node = np.array([plugin.score(state, pod, ni)  # type: ignore[attr-defined]
                         for ni in snap.node_infos], dtype=np.int64)
    batch = np.asarray(plugin.score_batch(state, pod, snap, idx))  # type: ignore[attr-defined]
    assert batch.dtype == np.int64
    assert per_node.tolist() == batch.tolist()
    norm = getattr(plugin, "normalize_score", None)
    if normalize and norm is not None:
        per_node = norm(state, pod, per_node)
    return per_node.tolist()
