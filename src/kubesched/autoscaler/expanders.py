"""cluster-autoscaler's expanders: which scale-up option to take.

Each narrows the options to its best ones; ``random`` (the fallback of every other, as in
cluster-autoscaler) then picks one of those with the run's seeded generator, so a plan
repeats. See docs/autoscaling.md for ``price``, which has no cloud pricing model here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.api.nodegroups import NodeGroup
from kubesched.api.types import Pod
from kubesched.autoscaler.estimator import container_requests

EXPANDERS = ("least-waste", "most-pods", "priority", "price", "random")
DEFAULT_EXPANDER = "random"  # cluster-autoscaler's --expander default


@dataclass
class Option:
    group: NodeGroup
    node_count: int
    pods: list[Pod]


def _best(options: list[Option], key: Callable[[Option], float]) -> list[Option]:
    """The options with the lowest ``key`` (all of them when they tie)."""
    low = min(key(o) for o in options)
    return [o for o in options if key(o) == low]


def _waste(o: Option) -> float:
    """expander/waste: the fractions of the new nodes' cpu and memory (capacity) the
    option's pods leave unrequested, added."""
    cpu = mem = 0
    for pod in o.pods:
        c, m = container_requests(pod)
        cpu += c
        mem += m
    cap = o.group.template.status.capacity
    out = 0.0
    for have, used in ((cap.get("cpu", 0) * o.node_count, cpu),
                       (cap.get("memory", 0) * o.node_count, mem)):
        # (cluster-autoscaler divides by zero here: NaN, which never compares least)
        out += (have - used) / have if have else float("inf")
    return out


def _price(o: Option) -> float:
    """The option's node-hours' price per pod it helps."""
    return o.group.price * o.node_count / len(o.pods)


_NARROW: dict[str, Callable[[list[Option]], list[Option]]] = {
    "least-waste": lambda opts: _best(opts, _waste),
    "most-pods": lambda opts: _best(opts, lambda o: -len(o.pods)),
    "priority": lambda opts: _best(opts, lambda o: -o.group.priority),
    "price": lambda opts: _best(opts, _price),
    "random": lambda opts: opts,
}


def best_option(name: str, options: list[Option], rng: random.Random) -> Option | None:
    """Expander ``name``'s choice among ``options`` (in node-group order), or None."""
    if not options:
        return None
    chosen = _NARROW[name](options)
    return chosen[0] if len(chosen) == 1 else chosen[rng.randrange(len(chosen))]
