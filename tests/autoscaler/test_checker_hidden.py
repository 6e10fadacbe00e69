"""The PredicateChecker's nodes removed ``later`` (scale-down's simulation: the node emptied,
kept in the snapshot until a question could tell it is there) answer as nodes removed for
real. Worked by hand: zones a, b, c; one web pod in a and one in b; c's only node empty."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.parse import parse_node, parse_pod
from kubesched.autoscaler.checker import PredicateChecker
from kubesched.config import default_config


def _node(name: str, zone: str, cpu: str = "4") -> Any:
    return parse_node({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name,
                                    "labels": {"topology.kubernetes.io/zone": zone,
                                               "kubernetes.io/hostname": name}},
                       "status": {"capacity": {"cpu": cpu, "memory": "16Gi",
                                               "pods": "110"}}})


def _pod(name: str, cpu: str, node_name: str | None = None, spread: bool = False) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if spread:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}]
    return parse_pod({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "default", "uid": name,
                                   "labels": {"app": "web"}},
                      "spec": spec})


# nodes with no room, in zones a and b: with them a question names more nodes than the
# checker tries one by one, and the batch Filter answers it
FULL = [f"{z}-full{i}" for z in "ab" for i in range(3)]


def _checker(remove_c: str) -> tuple[PredicateChecker, dict[str, Any]]:
    """``remove_c``: "no", "now" or "later" (how node c1 is taken out)."""
    checker = PredicateChecker(default_config(), {}, {})
    nodes = {n.name: n for n in (_node("a1", "a"), _node("b1", "b"), _node("c1", "c"),
                                 *(_node(f, f[0], "0") for f in FULL))}
    for n in nodes.values():
        checker.add_node(n)
    checker.add_pod(_pod("w-a", "3", "a1"))
    checker.add_pod(_pod("w-b", "1", "b1"))
    if remove_c != "no":
        checker.remove_node(nodes["c1"], later=remove_c == "later")
    return checker, nodes


def test_a_plain_pod_is_not_placed_on_a_node_removed_later() -> None:
    for how in ("now", "later"):
        checker, _ = _checker(how)
        # fits c1 (4 cpu free) and b1 (3 free) only: with c1 gone, b1
        assert checker.fits_any(_pod("p", "2"), ["c1", "a1", "b1"]) == "b1", how
        assert checker.fits_any(_pod("big", "4"), ["c1", "a1", "b1"]) is None, how


@pytest.mark.parametrize("full", [[], FULL], ids=["one-by-one", "batch"])
def test_a_spread_pod_sees_the_zone_of_a_node_removed_later_gone(full: list[str]) -> None:
    # With c1 there, zone c holds 0 web pods: a and b (1 each) are at skew 1 already, so
    # only c is allowed. With c1 gone the minimum is 1 and any zone is allowed.
    checker, _ = _checker("no")
    assert checker.fits_any(_pod("s", "1", spread=True), [*full, "a1", "b1", "c1"]) == "c1"
    assert checker.fits_any(_pod("s", "1", spread=True), [*full, "a1", "b1"]) is None
    for how in ("now", "later"):
        checker, _ = _checker(how)
        assert checker.fits_any(_pod("s", "1", spread=True),
                                [*full, "a1", "b1", "c1"]) == "a1", how


def test_a_node_removed_later_comes_back_with_its_zone() -> None:
    checker, nodes = _checker("later")
    checker.add_node(nodes["c1"])
    assert checker.fits_any(_pod("s", "1", spread=True), ["a1", "b1", "c1"]) == "c1"
    # and one removed later, then for real, is gone
    checker.remove_node(nodes["c1"], later=True)
    checker.remove_node(nodes["c1"])
    assert "c1" not in checker.sched.cache.nodes
    assert checker.fits_any(_pod("s", "1", spread=True), ["a1", "b1"]) == "a1"
