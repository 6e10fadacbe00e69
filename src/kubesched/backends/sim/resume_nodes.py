"""``--state-out`` and resume for a periodic controller's nodes still to join (``NodeAdded``:
an autoscaler's scale-up waiting out its provisioning delay). Kept apart from ``resume``,
which registers the codecs of the simulator's own events; this one registers itself when
imported (``SimCluster.checkpoint`` and ``load`` import it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.api.nodegroups import GROUP_LABEL
from kubesched.backends.sim.resume import EventCodec, Restoring, register_event
from kubesched.backends.sim.timeline import Event, NodeAdded

if TYPE_CHECKING:
    from kubesched.backends.sim.cluster import SimCluster


def _encode(ev: NodeAdded, sim: SimCluster) -> dict[str, Any]:
    return {"node": ev.node.name, "group": ev.node.metadata.labels.get(GROUP_LABEL, "")}


def _decode(e: dict[str, Any], at: float, r: Restoring) -> Event:
    name, group = e.get("node"), e.get("group")
    if not isinstance(name, str) or not name:
        raise r.error("must name the node to join", "node", name)
    groups = {g.name: g for g in r.sim.scenario.objects.get("NodeGroup", ())}
    g = groups.get(group) if isinstance(group, str) else None
    if g is None:
        raise r.error("names no NodeGroup of the state", "group", group)
    return NodeAdded(g.node(name))


register_event(NodeAdded, EventCodec("NodeAdded", _encode, _decode))
