"""NodeDeclaredFeatures (upstream ``plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``;
the inference is ``k8s.io/component-helpers/nodedeclaredfeatures``, KEP-5328).

PreFilter infers the node features a pod needs (``InferForPodScheduling``); a pod that needs
none is Skipped, so the plugin costs nothing for ordinary pods. Filter rejects a node whose
``status.declaredFeatures`` lacks one of them, UnschedulableAndUnresolvable (preemption
cannot add a feature to a node).

The plugin is in the default profile when its gate is on (upstream's ``applyFeatureGates``
appends it to multiPoint): off (alpha) in 1.35, beta-on in 1.36, GA and locked in 1.37. With
the gate off a profile naming it gets a plugin that Skips every pod, as upstream's.

Inferred at scheduling time, per release (the registry ``features.AllFeatures``):

* ``RestartAllContainersOnContainerExits``: a container or init container with a
  ``restartPolicyRules`` rule whose action is ``RestartAllContainers`` (every release);
* ``UserNamespacesHostNetworkSupport``: ``hostNetwork: true`` with ``hostUsers: false``
  (v1.36 on: component-helpers v0.36.3's registry has it; the v1.35 registry did not);
* ``VolumeBindMountOptions``: a volumeMount of a container or init container with
  ``bindMountOptions`` (v1.37 on; which release added it to the registry is not verified).

The other registered features (in-place resize ones) are inferred only for pod updates, so
they never constrain scheduling. Reasons: v1.35 and v1.36 write ``node declared features
check failed - unsatisfied requirements: <features>`` (the features in Go map order, sorted
here); v1.37 writes ``node(s) didn't match Pod's required features``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.handle import feature_enabled
from kubesched.framework.interface import (
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.signers import SignFragments
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status, skip
from kubesched.releases import at_least

NAME = "NodeDeclaredFeatures"
GATE = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"

ERR_REASON_PREFIX = "node declared features check failed - unsatisfied requirements: "
ERR_REASON_UNSATISFIED = "node(s) didn't match Pod's required features"


def infer_for_pod_scheduling(pod: Pod, version: str) -> frozenset[str]:
    """``Framework.InferForPodScheduling`` with the release's registry (no feature of it has
    a MaxVersion, so the scheduler's own version does not drop any)."""
    spec = pod.spec
    restart_all = bind_mount = False
    for c in (*spec.containers, *spec.init_containers):
        restart_all = restart_all or c.restart_all_containers
        bind_mount = bind_mount or c.bind_mount_options
    host_network_userns = spec.host_network and spec.host_users is False
    if not (restart_all or bind_mount or host_network_userns):
        return _NO_FEATURES  # every PreFilter of an ordinary pod: one pass, no set
    reqs: set[str] = set()
    if restart_all:
        reqs.add(RESTART_ALL_CONTAINERS)
    if host_network_userns and at_least(version, "1.36"):
        reqs.add(USER_NAMESPACES_HOST_NETWORK)
    if bind_mount and at_least(version, "1.37"):
        reqs.add(VOLUME_BIND_MOUNT_OPTIONS)
    return frozenset(reqs)


_NO_FEATURES: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    reqs: frozenset[str]

    def clone(self) -> _PreFilterState:
        return self


class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        return ((signers.FEATURES,
                 tuple(sorted(infer_for_pod_scheduling(pod, self._version)))),)

    @property
    def _version(self) -> str:
        return self.handle.kubernetes_version

    @property
    def enabled(self) -> bool:
        return feature_enabled(self.handle, GATE)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[None, Status | None]:
        if not self.enabled:
            return None, skip()
        reqs = infer_for_pod_scheduling(pod, self._version)
        if not reqs:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(reqs))
        return None, None

    def _reason(self, missing: set[str]) -> str:
        if at_least(self._version, "1.37"):
            return ERR_REASON_UNSATISFIED
        return ERR_REASON_PREFIX + ", ".join(sorted(missing))

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (f'error reading "{PRE_FILTER_STATE_KEY}" from '
                                       "cycle-state: not found",))
        declared = node_info.node.status.declared_features if node_info.node else ()
        missing = set(s.reqs).difference(declared)
        if not missing:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (self._reason(missing),))

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        # Only pods with requirements get here (PreFilter Skips the others): few, so a loop.
        out = BatchStatus.success(len(idx))
        infos = snapshot.node_infos
        by_reason: dict[str, list[int]] = {}
        for k, row in enumerate(idx.tolist()):
            st = self.filter(state, pod, infos[row])
            if st is not None:
                if st.code == Code.ERROR:
                    raise RuntimeError(st.reasons[0])
                by_reason.setdefault(st.reasons[0], []).append(k)
        for reason, rows in by_reason.items():
            mask = np.zeros(len(idx), dtype=bool)
            mask[rows] = True
            out.fail(mask, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))
        return out

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE,
                             ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.UPDATE),
                                 self.is_schedulable_after_pod_update),
        ]

    def is_schedulable_after_pod_update(self, pod: Pod, old: Pod | None, new: Pod
                                        ) -> QueueingHint:
        if old is None or pod.uid != new.uid:
            return QueueingHint.SKIP
        if infer_for_pod_scheduling(old, self._version) == infer_for_pod_scheduling(
                new, self._version):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node
                                         ) -> QueueingHint:
        if old is not None and old.status.declared_features == new.status.declared_features:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
