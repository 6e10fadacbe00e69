"""NodeTree's membership: a node added twice is listed once, also after its zone's list was
replaced (a resumed run lays the tree out again) or emptied and re-created."""

from tests.cache.test_cache import node

from kubesched.cache.node_tree import NodeTree


def test_a_node_added_twice_is_listed_once():
    t = NodeTree()
    for n in [node("a1", "a"), node("b1", "b"), node("a1", "a"), node("a2", "a")]:
        t.add(n)
    assert t.list() == ["a1", "b1", "a2"]
    assert t.num_nodes == 3


def test_membership_follows_a_replaced_zone_list():
    t = NodeTree()
    t.add(node("a1", "a"))
    t.add(node("a2", "a"))
    key = next(iter(t.zones))
    t.zones = {key: ["a2"]}  # as the resume code lays the tree out
    t.num_nodes = 1
    t.add(node("a1", "a"))
    t.add(node("a2", "a"))
    assert t.list() == ["a2", "a1"]
    assert t.num_nodes == 2


def test_removed_then_added_again():
    t = NodeTree()
    t.add(node("a1", "a"))
    t.remove(node("a1", "a"))
    assert t.zones == {}
    t.add(node("a1", "a"))
    t.add(node("a1", "a"))
    assert t.list() == ["a1"]
    assert t.num_nodes == 1
