"""Nodes added at one instant (``SchedulingQueue.move_all_after_nodes_added``): which of
them the queueing hints cannot tell apart.

Upstream's handler sends one NodeAdd per node, and each asks the hints of every pod still in
the unschedulable pool. A batch of nodes made from one template (cluster-autoscaler's new
nodes) differs only in the node's name, uid and the labels that repeat the name (the
hostname label): the in-tree NodeAdd hints read a node's labels, spec and status, and only
NodeAffinity reads label values (and, through ``matchFields``, the name). So for a pod whose
node affinity does not name those labels or fields, a hint answers alike for every node of
such a group, and is asked once per group.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from kubesched.api.types import Node, Pod

# The plugins whose NodeAdd hints read a node only through its labels, spec and status (and
# NodeAffinity its name through matchFields): a hint of another plugin may read anything, so
# a batch with one is asked node by node.
IDENTITY_FREE_HINTS = frozenset({
    "NodeAffinity", "NodeResourcesFit", "TaintToleration", "NodeUnschedulable",
    "NodeDeclaredFeatures", "InterPodAffinity", "PodTopologySpread"})
_IN_TREE = "kubesched.plugins."
# The one plugin whose hint reads label values and the name.
NODE_AFFINITY = "NodeAffinity"


def identity_labels(node: Node) -> frozenset[str]:
    """The labels of ``node`` that repeat its name (the hostname label)."""
    name = node.metadata.name
    return frozenset(k for k, v in node.metadata.labels.items() if v == name)


def node_signature(node: Node) -> Hashable:
    """What the in-tree NodeAdd hints can read of ``node`` but its name and the values of
    its identity labels: equal for two nodes of one template."""
    md, spec, st = node.metadata, node.spec, node.status
    ids = identity_labels(node)
    return (md.namespace, tuple(sorted(ids)),
            tuple(sorted((k, v) for k, v in md.labels.items() if k not in ids)),
            tuple(sorted(md.annotations.items())), md.deletion_timestamp,
            spec.unschedulable, spec.taints,
            tuple(sorted(st.capacity.items())), tuple(sorted(st.allocatable.items())),
            st.images, st.declared_features)


def hints_identity_free(entries: Iterable[Any]) -> bool:
    """Whether every hint of ``entries`` (a profile's ``HintEntry`` list for NodeAdd, less
    the default hints) reads nodes as ``node_signature`` and ``selects_on_identity`` assume:
    an in-tree plugin's of ``IDENTITY_FREE_HINTS``, NodeAffinity's only without an
    ``addedAffinity`` in its args (which may name any label or field)."""
    for e in entries:
        fn = e.fn
        if e.plugin not in IDENTITY_FREE_HINTS or not fn.__module__.startswith(_IN_TREE):
            return False
        if e.plugin == NODE_AFFINITY and getattr(getattr(fn, "__self__", None),
                                                 "added_node_selector", None) is not None:
            return False
    return True


def selects_on_identity(pod: Pod, labels: frozenset[str]) -> bool:
    """Whether NodeAffinity's hint for ``pod`` may read a node's name (``matchFields``) or
    one of ``labels``: its nodeSelector or a required node affinity term names them."""
    spec = pod.spec
    if any(k in labels for k in spec.node_selector):
        return True
    na = spec.affinity.node_affinity if spec.affinity is not None else None
    if na is None or not na.required:
        return False
    return any(t.match_fields or any(r.key in labels for r in t.match_expressions)
               for t in na.required)
