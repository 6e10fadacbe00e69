"""cluster-autoscaler's scale-up step (core/scaleup/orchestrator): for each node group, the
pending pods its template node can host, the binpacking estimate for them within the group's
room, one option per group that helps; and the pods no group's template can host."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kubesched.api.nodegroups import NodeGroup
from kubesched.api.types import Node, Pod
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.autoscaler.estimator import equivalence_groups, estimate, order_groups
from kubesched.autoscaler.expanders import Option

# --max-nodes-per-scaleup: the estimator adds at most this many nodes to one option
# (estimator/threshold_based_limiter.go with the static threshold main.go builds from it)
MAX_NODES_PER_SCALE_UP = 1000


@dataclass
class ScaleUpOptions:
    options: list[Option]  # in node-group order
    cannot_help: list[Pod]  # pods no group's template node can host (in pending order)


def scale_up_options(pending: list[Pod], groups: list[NodeGroup], sizes: Mapping[str, int],
                     new_checker: Callable[[], PredicateChecker], *,
                     max_nodes_per_scale_up: int = MAX_NODES_PER_SCALE_UP) -> ScaleUpOptions:
    """``sizes``: each group's current size. A group at its ``maxSize`` gives no option; its
    template still counts for ``cannot_help``. An option's estimate stops at the group's
    room or ``max_nodes_per_scale_up`` nodes (0: no such limit), whichever is less."""
    eq = equivalence_groups(pending)
    hostable: set[int] = set()
    options: list[Option] = []
    # one snapshot for the template checks, holding one template node at a time
    checker = new_checker()
    # and one for the estimates, emptied for each
    estimates: list[PredicateChecker] = []

    def estimate_checker() -> PredicateChecker:
        if not estimates:
            estimates.append(new_checker())
        else:
            estimates[0].clear()
        return estimates[0]

    for group in groups:
        checker.add_node(group.template)
        fitting = [g for g in eq if checker.fits(g.exemplar, group.template.name)]
        checker.remove_node(group.template)
        hostable.update(id(g) for g in fitting)
        room = group.max_size - sizes.get(group.name, 0)
        if room <= 0 or not fitting:
            continue

        def new_node(i: int, group: NodeGroup = group) -> Node:
            return group.node(f"{group.name}-estimate-{i}")

        limit = min(room, max_nodes_per_scale_up) if max_nodes_per_scale_up > 0 else room
        est = estimate(order_groups(fitting, group.template), new_node, limit,
                       estimate_checker)
        if est.node_count > 0:
            options.append(Option(group, est.node_count, est.pods))
    cannot = [p for g in eq if id(g) not in hostable for p in g.pods]
    order = {id(p): i for i, p in enumerate(pending)}
    cannot.sort(key=lambda p: order[id(p)])
    return ScaleUpOptions(options, cannot)
