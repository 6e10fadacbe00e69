"""numFeasibleNodesToFind (upstream TestNumFeasibleNodesToFind)."""

import pytest

from kubesched.scheduler import num_feasible_nodes_to_find


@pytest.mark.parametrize(("pct", "nodes", "want"), [
    (0, 10, 10),
    (40, 10, 10),
    (0, 1000, 420),
    (40, 1000, 400),
    (0, 6000, 300),
    (40, 6000, 2400),
    (0, 5000, 500),
    (100, 5000, 5000),
    (1, 5000, 100),  # never fewer than 100
])
def test_num_feasible_nodes_to_find(pct, nodes, want):
    assert num_feasible_nodes_to_find(pct, nodes) == want
