"""What the scheduler core asks of a cluster backend (the simulator or a real API server):
the core's port, beside the framework that uses it. Every capability a plugin uses is
declared here and called directly; the backends (``backends.sim``, ``backends.kube``)
implement all of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from kubesched.api.dra.types import ResourceClaim
from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import ExtendedResourceClaimStatus, Pod, PodCondition


class BindError(Exception):
    """The backend refused or failed a binding; ``conflict`` when the pod is already bound."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


class Backend(Protocol):
    def bind(self, pod: Pod, node_name: str) -> None:
        """Bind ``pod`` to ``node_name``; raise BindError (or any exception) on failure."""

    def extender_bind(self, pod: Pod, node_name: str, bind: Callable[[], None]) -> None:
        """A bind extender binds ``pod``: ``bind()`` calls it (raising on failure). The
        extender writes the Binding to the API server itself; a backend whose API server
        is simulated applies it, one that must change nothing (dry run) skips the call."""

    def update_pod_status(self, pod: Pod, condition: PodCondition | None,
                          nominated_node_name: str | None) -> None:
        """Set the PodScheduled condition and/or status.nominatedNodeName
        (None: leave it; "": clear it)."""

    def record_event(self, pod: Pod, event_type: str, reason: str, message: str) -> None:
        """An Event about ``pod`` (``Normal``/``Warning``, e.g. ``Scheduled``)."""

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Delete a pod (preemption victims)."""

    # VolumeBinding's PreBind makes upstream's API calls through these; the cluster's PV
    # controller (and external provisioner) then completes the binding: the claim gets
    # spec.volumeName, the bind-completed annotation and phase Bound.
    @property
    def wait_for_volume_binding(self) -> bool:
        """Whether PreBind waits for that controller. True: it polls the claims after its
        updates, as upstream, until they are bound or ``bindTimeoutSeconds`` have passed on
        the handle's clock. False: it checks them once, and a claim not bound yet fails the
        attempt — right for the simulator, whose controllers complete a binding within the
        update calls; ``kubesched run`` does the same today and retries the pod instead
        (docs/kube.md)."""

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """``PersistentVolumes().Update``: store ``pv`` (a volume pre-bound to its claim
        through spec.claimRef); returns the stored object; raises on a conflict."""

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim
                                       ) -> PersistentVolumeClaim:
        """``PersistentVolumeClaims(ns).Update``: store ``pvc`` (a claim annotated with the
        node selected for dynamic provisioning); returns the stored object."""

    # DynamicResources' PreBind and PostFilter write claims' status through this.
    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """``ResourceClaims(ns).UpdateStatus``: store ``claim``'s status (allocation,
        reservedFor) on the claim of the same name and uid; returns the stored object;
        raises when the claim is gone or was replaced."""

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """``ResourceClaims(ns).Update``: store ``claim``'s metadata (PreBind adds the
        delete-protection finalizer this way before it writes an allocation) on the claim
        of the same name and uid, its status untouched; returns the stored object; raises
        when the claim is gone or was replaced."""

    # ... and, for extended resources backed by DRA (DRAExtendedResource), create and
    # delete the pod's special claim and record it in the pod's status.
    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """``ResourceClaims(ns).Create``: store a new claim (its spec and metadata; no
        status); returns the stored object."""

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        """``ResourceClaims(ns).Delete`` (its finalizer removed first); a claim already gone
        is not an error."""

    def update_pod_extended_resource_claim_status(
            self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        """Patch ``status.extendedResourceClaimStatus`` of ``pod``."""


class FailureReports(Protocol):
    """A Backend's optional form for many failures at once (replayed failures sharing a
    step), looked up by name: for each ``(pod, condition, nomination, message)`` in turn, the
    FailedScheduling Warning event with ``message`` and ``update_pod_status(pod, condition,
    nomination)``. The scheduler calls the per-pod methods when it is missing."""

    def failed_scheduling(self, failures: Sequence[tuple[Pod, PodCondition, str | None, str]]
                          ) -> None: ...
