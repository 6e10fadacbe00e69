"""cluster-autoscaler in ``kubesched sweep``'s runs: the research layer's sweep cannot import
the autoscaler (it sits above), so ``cli`` hands it these two."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.autoscaler.options import options_from
from kubesched.autoscaler.simulated import attach
from kubesched.backends.sim.cluster import SimCluster


def check_options(values: dict[str, Any]) -> object:
    """A sweep file's autoscaler options (flag → value), checked as ``simulate``'s flags."""
    return options_from(values)


def attach_for_run(sim: SimCluster, values: dict[str, Any], seed: int
                   ) -> Callable[[float], tuple[float, float]] | None:
    """cluster-autoscaler with ``values`` as ``sim``'s periodic controller when its scenario
    has NodeGroups; then what gives the run's node-hours and cost at its end."""
    if not sim.scenario.objects.get("NodeGroup"):
        return None
    ca = attach(sim, options_from(values), seed)

    def figures(end: float) -> tuple[float, float]:
        done = ca.summary(end)
        return done.node_hours, done.cost

    return figures
