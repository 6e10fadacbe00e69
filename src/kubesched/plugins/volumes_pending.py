"""The four volume plugins of the default profile, until volume scheduling lands.

For a pod without PersistentVolumeClaims (and without inline disks that can conflict) each of
them returns Skip at PreFilter, exactly as upstream's do, so such pods are scheduled exactly
as upstream schedules them. A pod that does use such volumes is not guessed at: it stays
pending with a clear reason (as DESIGN.md asks for DRA). See docs/differences.md.
"""

from __future__ import annotations

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import FilterPlugin, PreFilterPlugin, PreFilterResult
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status, skip, unresolvable

# Inline volume sources VolumeRestrictions checks for disk conflicts.
_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def _uses_claims(pod: Pod) -> bool:
    return any(v.pvc_claim_name for v in pod.spec.volumes) or any(
        v.source and "ephemeral" in v.source for v in pod.spec.volumes)


def _uses_conflicting_disks(pod: Pod) -> bool:
    return any(v.source and any(k in v.source for k in _CONFLICT_SOURCES)
               for v in pod.spec.volumes)


class _PendingVolumePlugin(PreFilterPlugin, FilterPlugin):
    def _needs_volumes(self, pod: Pod) -> bool:
        return _uses_claims(pod)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not self._needs_volumes(pod):
            return None, skip()
        return None, unresolvable(
            f"kubesched does not implement {self.name} yet: pods with volumes of this kind "
            "are not scheduled")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Reached only for pods PreFilter skipped (no such volumes): nothing to check.
        return None


class VolumeRestrictions(_PendingVolumePlugin):
    name = "VolumeRestrictions"

    def _needs_volumes(self, pod: Pod) -> bool:
        return _uses_claims(pod) or _uses_conflicting_disks(pod)


class NodeVolumeLimits(_PendingVolumePlugin):
    name = "NodeVolumeLimits"


class VolumeBinding(_PendingVolumePlugin):
    name = "VolumeBinding"


class VolumeZone(_PendingVolumePlugin):
    name = "VolumeZone"
