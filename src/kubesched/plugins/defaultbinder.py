"""DefaultBinder (upstream ``defaultbinder/default_binder.go``): binds through the backend
(the Binding subresource on a real cluster, a virtual-time event in the simulator)."""

from __future__ import annotations

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BindPlugin
from kubesched.framework.status import Code, Status

NAME = "DefaultBinder"


class DefaultBinder(BindPlugin):
    name = NAME

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        backend = self.handle.backend
        if backend is None:
            return Status(Code.ERROR, ("no cluster backend to bind pods with",))
        try:
            backend.bind(pod, node_name)
        except Exception as e:  # any failure is an Error status, as fwk.AsStatus(err)
            return Status(Code.ERROR, (str(e),))
        return None
