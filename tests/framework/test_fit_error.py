"""FitError.Error() as upstream words it (pkg/scheduler/framework/types_test.go TestFitError_Error
and the reference's examples)."""

import numpy as np

from kubesched.framework.status import Code, Status
from kubesched.framework.types import AtRows, Diagnosis, NodeToStatus, fit_error_message


def _diag(statuses: dict[str, Status], **kw) -> Diagnosis:
    d = Diagnosis(**kw)
    for n, s in statuses.items():
        d.node_to_status.set(n, s)
    return d


def test_prefilter_message_wins():
    d = _diag({}, pre_filter_msg="Node(s) failed PreFilter plugin FalsePreFilter")
    d.node_to_status.absent = Status(
        Code.UNSCHEDULABLE, ("Node(s) failed PreFilter plugin FalsePreFilter",))
    assert fit_error_message(3, d) == (
        "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.")


def test_reasons_counted_and_sorted_as_strings():
    d = _diag({
        "n1": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        "n2": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                     ("node(s) had untolerated taint {dedicated: gpu}",)),
        "n3": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
    })
    assert fit_error_message(3, d) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, "
        "2 Insufficient cpu.")


def test_string_sort_puts_10_before_2():
    statuses = {f"a{i}": Status(Code.UNSCHEDULABLE, ("x",)) for i in range(10)}
    statuses |= {f"b{i}": Status(Code.UNSCHEDULABLE, ("y",)) for i in range(2)}
    assert fit_error_message(12, _diag(statuses)) == "0/12 nodes are available: 10 x, 2 y."


def test_several_reasons_of_one_node_each_counted():
    d = _diag({"n1": Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"))})
    assert fit_error_message(1, d) == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.")


def test_absent_nodes_share_the_absent_status():
    d = _diag({"n1": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))})
    d.node_to_status.absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))
    assert fit_error_message(4, d) == (
        "0/4 nodes are available: 1 Insufficient cpu, "
        "3 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_post_filter_message_appended_without_period():
    d = _diag({n: Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)) for n in ("a", "b", "c")},
              post_filter_msg="preemption: 0/3 nodes are available: 3 No preemption victims "
                              "found for incoming pod.")
    assert fit_error_message(3, d) == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.")


def test_no_reasons_no_list():
    assert fit_error_message(0, Diagnosis()) == "0/0 nodes are available:"


def test_statuses_recorded_in_bulk_read_as_set_one_by_one():
    # add_same over a view of table rows (AtRows) stands for set(name, status) per name:
    # same message, same per-node statuses, codes by row
    names = ["n0", "n1", "n2", "n3", "n4"]
    rows = np.array([3, 1, 4])
    st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found",))
    bulk, one_by_one = NodeToStatus({"n0": Status(Code.UNSCHEDULABLE, ("x",))}), NodeToStatus()
    bulk.add_same(AtRows(names, rows), st, rows)
    one_by_one.set("n0", Status(Code.UNSCHEDULABLE, ("x",)))
    for r in rows.tolist():
        one_by_one.set(names[r], st)
    assert list(AtRows(names, rows)) == ["n3", "n1", "n4"] == AtRows(names, rows)[0:3]
    assert fit_error_message(6, Diagnosis(node_to_status=bulk)) == fit_error_message(
        6, Diagnosis(node_to_status=one_by_one))
    index = {n: i for i, n in enumerate(names)}
    assert bulk.codes_by_row(index, 5).tolist() == one_by_one.codes_by_row(index, 5).tolist()
    assert len(bulk) == 4
    assert bulk.statuses == one_by_one.statuses
