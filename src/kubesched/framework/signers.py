"""Pod signatures for OpportunisticBatching (upstream ``kube-scheduler/framework``
``signers.go`` and ``runtime/signature.go``).

A plugin that can say what of a pod its PreFilter/Filter/PreScore/Score depend on implements
``sign_pod(pod)``: fragments ``(signer name, value)``, or None when it cannot sign the pod
(the pod then has no signature and is never batched). Two pods whose fragments are equal get
the same feasibility and scores on the same nodes. Only equality matters, so values are
canonical Python values (sorted tuples, reprs of frozen objects) rather than upstream's
JSON; the signer names are upstream's, so fragments two plugins share (the resources of
NodeResourcesFit and BalancedAllocation, the volumes of the volume plugins) count once.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from typing import Any

from kubesched.api.types import Pod

SignFragments = Sequence[tuple[str, Hashable]]

IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
NODE_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES = "v1.Pod.Spec.RequiredFeatures()"


def host_ports(pod: Pod) -> Hashable:
    """``HostPortsSigner``: the sorted set of host ports of containers and init containers."""
    return tuple(sorted({p.host_port for c in (*pod.spec.containers, *pod.spec.init_containers)
                         for p in c.ports if p.host_port}))


def tolerations(pod: Pod) -> Hashable:
    """``TolerationsSigner``: the tolerations, sorted by key then value."""
    return tuple(sorted(pod.spec.tolerations, key=lambda t: (t.key, t.value)))


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def volumes(pod: Pod) -> Hashable:
    """``VolumesSigner``: the sources of every volume but ConfigMap and Secret ones (which
    differ per pod and change nothing for scheduling), sorted."""
    out = []
    for v in pod.spec.volumes:
        if v.source is not None and ("configMap" in v.source or "secret" in v.source):
            continue
        if v.pvc_claim_name is not None:
            out.append(_canon({"persistentVolumeClaim": {"claimName": v.pvc_claim_name,
                                                         "readOnly": v.read_only}}))
        else:
            out.append(_canon(v.source))
    return tuple(sorted(out))


def node_affinity(pod: Pod) -> Hashable:
    aff = pod.spec.affinity
    return repr(aff.node_affinity) if aff is not None and aff.node_affinity else None


def node_selector(pod: Pod) -> Hashable:
    return tuple(sorted(pod.spec.node_selector.items()))


def resources(pod: Pod) -> Hashable:
    """The pod's requests as the resource plugins compute them (containers, init
    containers, overhead, pod-level resources), with the non-zero cpu/memory scoring uses."""
    return (tuple(sorted(pod.requests.items())), pod.non_zero_cpu, pod.non_zero_memory)


def labels(pod: Pod) -> Hashable:
    return tuple(sorted(pod.metadata.labels.items()))
