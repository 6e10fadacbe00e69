"""The scheduler extender interface (upstream ``framework.Extender``) as the core sees it.

The core never talks HTTP: it calls objects of this Protocol, which ``kubesched.extender``
implements over upstream's wire protocol and which tests may replace. A failed call raises
``ExtenderError`` carrying upstream's error text, which becomes the pod's message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubesched.api.types import Pod
from kubesched.framework.node_info import NodeInfo

# extenderv1.MaxExtenderPriority; extender scores are scaled by MaxNodeScore / this (= 10).
MAX_EXTENDER_PRIORITY = 10
# framework.ExtenderName: what a pod's unschedulable plugins hold when an extender rejected
# nodes, so that any cluster event requeues it (extenders register no events).
EXTENDER_NAME = "Extender"


class ExtenderError(Exception):
    """An extender call failed (transport, non-200, undecodable answer, its ``Error``)."""


@dataclass(slots=True)
class Victims:
    """extenderv1.Victims: pods to evict on one node, most important first."""

    pods: list[Pod]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class FilterResult:
    """An extender's verdict on the nodes it was given: the names that pass (in the order
    it answered), and the failure messages of the others."""

    passed: list[str]
    failed: dict[str, str] = field(default_factory=dict)
    failed_and_unresolvable: dict[str, str] = field(default_factory=dict)


class Extender(Protocol):
    @property
    def name(self) -> str:
        """The urlPrefix (upstream names an extender by it)."""
        ...

    @property
    def weight(self) -> int: ...

    def is_ignorable(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def is_filter(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_binder(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterResult: ...

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[list[tuple[str, int]], int]:
        """(host, score) pairs as answered, and the weight to apply."""
        ...

    def bind(self, pod: Pod, node: str) -> None: ...

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                           node_infos: Mapping[str, NodeInfo]) -> dict[str, Victims]: ...
