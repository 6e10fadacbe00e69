"""NodePorts (upstream ``plugins/nodeports/node_ports.go``, v1.35).

PreFilter collects the pod's host ports (``util.GetHostPorts``: container ports with a host
port, and those of restartable init containers) and Skips when there are none. Filter rejects
a node where one of them conflicts with a port in use (``HostPortInfo.CheckConflict``):
hostIP defaults to 0.0.0.0 and protocol to TCP; a wanted 0.0.0.0 port conflicts with the same
(protocol, port) on any IP, a wanted specific IP with the same IP or with 0.0.0.0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.interface import (
    BatchStatus,
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
)
from kubesched.framework.node_info import WILDCARD_IP, NodeInfo, pod_host_ports
from kubesched.framework.signers import SignFragments
from kubesched.framework.status import Code, Status, error, skip, unschedulable

if TYPE_CHECKING:
    from kubesched.framework.snapshot import Snapshot

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort), sanitized


class PortQuery:
    """The wanted host ports of a pod, compiled for conflict checks against a node's used
    ports: a used port conflicts when its (protocol, port) is wanted on 0.0.0.0, or when it is
    exactly a wanted (ip, protocol, port) or that (protocol, port) on 0.0.0.0."""

    __slots__ = ("any_ip", "exact", "ports")

    def __init__(self, ports: Iterable[HostPort]) -> None:
        self.ports: tuple[HostPort, ...] = tuple(ports)
        self.any_ip: set[tuple[str, int]] = set()
        self.exact: set[HostPort] = set()
        for ip, proto, port in self.ports:
            if port <= 0:
                continue
            if ip == WILDCARD_IP:
                self.any_ip.add((proto, port))
            else:
                self.exact.add((ip, proto, port))
                self.exact.add((WILDCARD_IP, proto, port))

    def clone(self) -> PortQuery:  # not affected by adding / removing pods
        return self

    def fits(self, used: Mapping[HostPort, Any]) -> bool:
        """No wanted port conflicts with ``used`` (keys (ip, protocol, port))."""
        if not used:
            return True
        if not self.exact.isdisjoint(used):
            return False
        any_ip = self.any_ip
        if any_ip:
            for _ip, proto, port in used:
                if (proto, port) in any_ip:
                    return False
        return True


def fits_ports(wanted: Iterable[HostPort], used: Mapping[HostPort, Any]) -> bool:
    """``fitsPorts``: no wanted host port conflicts with a port in use."""
    return PortQuery(wanted).fits(used)


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME
    filter_row_local = True  # the ports in use on the node

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        return ((signers.HOST_PORTS, signers.host_ports(pod)),)

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pod updates are ignored: container ports are immutable. With queueing hints on
        # (v1.35 default) Node events are Add only, without a hint (always Queue).
        return [
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD)),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(old, Pod):
            raise TypeError(f"expected a Pod, got {type(old).__name__}")
        if not old.spec.node_name and not old.status.nominated_node_name:
            return QueueingHint.SKIP  # an unscheduled pod frees nothing
        ports = pod_host_ports(old)
        if not ports:
            return QueueingHint.SKIP
        in_use = dict.fromkeys(ports, 1)
        if fits_ports(pod_host_ports(pod), in_use):
            return QueueingHint.SKIP  # no port in common
        return QueueingHint.QUEUE

    # ------------------------------------------------------------------ PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status | None]:
        ports = pod_host_ports(pod)
        if not ports:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, PortQuery(ports))
        return None, None

    @staticmethod
    def _wanted(state: CycleState) -> PortQuery | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        return s if isinstance(s, PortQuery) else None

    @staticmethod
    def _state_error() -> Status:
        return error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = self._wanted(state)
        if wanted is None:
            return self._state_error()
        if not wanted.fits(node_info.used_ports):
            return unschedulable(ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     idx: np.ndarray) -> BatchStatus:
        wanted = self._wanted(state)
        if wanted is None:
            st = self._state_error()
            return BatchStatus.from_mask(np.ones(len(idx), dtype=bool), Code.ERROR, st.reasons)
        infos = snapshot.node_infos
        fits = wanted.fits
        fail = np.fromiter((not fits(infos[i].used_ports) for i in idx.tolist()), dtype=bool,
                           count=len(idx))
        return BatchStatus.from_mask(fail, Code.UNSCHEDULABLE, (ERR_REASON,))
