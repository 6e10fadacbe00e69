"""How a victim is preempted (upstream ``Executor.PreemptPod``), ported from upstream's
TestPreemptPod (v1.36: kubernetes#135502, #135719): a victim in PreBind has its binding
cycle cancelled and one waiting at Permit is preempted in memory — neither through the
API server —, any other is patched (DisruptionTarget) and deleted. v1.35 rejects a waiting
victim and deletes one in PreBind."""

from __future__ import annotations

import pytest
from _preempt_util import build, make_node, make_pod

from kubesched.config.features import FeatureGates
from kubesched.framework.extender import Victims
from kubesched.framework.status import Code
from kubesched.preemption.evaluator import Candidate

HIGH, MID = 1000, 100


def env(version: str):
    e = build(["TrueFilter"], [make_node("fake-node")], [])
    e.handle.features = FeatureGates(version)
    return e


def actions(e) -> list[str]:
    return ["patch"] * len(e.backend.patched) + ["delete"] * len(e.backend.deleted)


@pytest.mark.parametrize("version", ["1.36", "1.37"])
@pytest.mark.parametrize("where, expect_cancel, expected_actions", [
    ("prebind", True, []),   # victim is in preBind, context should be cancelled
    ("waiting", False, []),  # victim is in waiting pods, it should be rejected (no API calls)
    ("", False, ["patch", "delete"]),  # neither: the pod is deleted
])
def test_preempt_pod(version, where, expect_cancel, expected_actions) -> None:
    e = env(version)
    preemptor = make_pod("p", uid="p", priority=HIGH)
    victim = make_pod("v", uid="v", priority=MID)
    entry = e.handle.pods_in_pre_bind.add(victim.uid) if where == "prebind" else None
    wp = (e.handle.waiting_pods.add(victim, "fake-node", {"waitingPermitPlugin": 10.0}, 0.0,
                                    lambda _wp: None) if where == "waiting" else None)
    st = e.evaluator.prepare_candidate(Candidate("fake-node", Victims([victim])), preemptor)
    assert st.is_success()
    if entry is not None:
        assert entry.cancelled.is_set() == expect_cancel
        assert entry.cause == "preempted by DefaultPreemption"
    assert actions(e) == expected_actions
    (event,) = e.backend.events
    suffix = " (in kube-scheduler memory)." if where else ""
    assert event == ("v", "Preempted", f"Preempted by pod p on node fake-node{suffix}")
    if wp is not None:  # preempted: an Error (backoffQ), not a rejection
        assert wp.status is not None and wp.status.code == Code.ERROR
        assert (wp.status.message(), wp.status.plugin) == ("preempted", "DefaultPreemption")


def test_v1_35_rejects_a_waiting_victim_and_deletes_one_in_prebind() -> None:
    e = env("1.35")
    preemptor = make_pod("p", uid="p", priority=HIGH)
    waiting = make_pod("w", uid="w", priority=MID)
    in_pre_bind = make_pod("b", uid="b", priority=MID)
    entry = e.handle.pods_in_pre_bind.add(in_pre_bind.uid)
    wp = e.handle.waiting_pods.add(waiting, "fake-node", {"x": 10.0}, 0.0, lambda _wp: None)
    st = e.evaluator.prepare_candidate(
        Candidate("fake-node", Victims([waiting, in_pre_bind])), preemptor)
    assert st.is_success()
    assert wp.status is not None and wp.status.code == Code.UNSCHEDULABLE
    assert not entry.cancelled.is_set()
    assert e.backend.deleted == ["b"]
    assert [m for _n, _r, m in e.backend.events] == [
        "Preempted by pod p on node fake-node"] * 2


def test_a_victim_past_prebind_is_deleted() -> None:
    """CancelPod fails once PreBind is over (MarkPrebound): the API deletion follows."""
    e = env("1.37")
    entry = e.handle.pods_in_pre_bind.add("v")
    assert entry.mark_prebound()
    st = e.evaluator.prepare_candidate(
        Candidate("fake-node", Victims([make_pod("v", uid="v", priority=MID)])),
        make_pod("p", uid="p", priority=HIGH))
    assert st.is_success()
    assert actions(e) == ["patch", "delete"] and not entry.cancelled.is_set()


def test_pods_in_pre_bind_map() -> None:
    """Ported from upstream's pods_in_prebind_map_test.go."""
    from kubesched.framework.waiting import PodsInPreBind

    m = PodsInPreBind()
    m.add("uid")
    m.remove("uid")
    assert m.get("uid") is None
    pod = m.add("uid")
    assert pod.cancel_pod("test cancel") and pod.cancelled.is_set()
    assert pod.cancel_pod("test cancel")  # a second cancel also returns true
    assert not pod.mark_prebound()  # MarkPrebound fails on a cancelled pod
    pod = m.add("uid")
    assert pod.mark_prebound() and pod.finished
    assert not pod.cancel_pod("test cancel") and not pod.cancelled.is_set()
