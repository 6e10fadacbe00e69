"""NodeResourcesFit PreFilter / Filter and queueing hints, ported from upstream (v1.35)
fit_test.go: TestEnoughRequests (all cases without DRA), TestNotEnoughRequests,
TestStorageRequests, TestRestartableInitContainers (sidecars enabled), TestEventsToRegister,
Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange."""

from __future__ import annotations

import pytest
from _plugtest_util import make_node, make_pod, run_filter, snapshot

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code
from kubesched.plugins.noderesources import Fit

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
OK = Code.SUCCESS


def res(cpu=0, mem=0, eph=0, **scalars):
    """``framework.Resource{MilliCPU, Memory, EphemeralStorage, ScalarResources}`` as one
    container's requests (explicit zeros, and ``pods: 0``, as upstream's newResourcePod)."""
    out = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}
    out.update({k: str(v) for k, v in scalars.items()})
    return out


def rp(*usage, init=None, overhead=None, pod_level=None, node=""):
    """newResourcePod(usage...) [+ newResourceInitPod / overhead / pod-level resources]."""
    return make_pod(reqs=list(usage) or None, init_reqs=init, overhead=overhead,
                    pod_level_requests=pod_level, node=node)


def ins(r):
    return f"Insufficient {r}"


def node(alloc=None):
    # makeAllocatableResources(10, 20, 32, 5, 20, 5)
    cap = alloc or {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5",
                    "ephemeral-storage": "20", HUGE_A: "5"}
    return make_node("node", capacity=cap, add_pods=False)


def r(cpu=0, mem=0, eph=0, scalars=None):
    out = res(cpu, mem, eph)
    out.update({k: str(v) for k, v in (scalars or {}).items()})
    return out


# (name, pod, existing pod usage on the node, args, expected code, reasons)
ENOUGH = [
    ("no resources requested always fits", rp(), r(10, 20), None, OK, ()),
    ("too many resources fails", rp(r(1, 1)), r(10, 20), None, U, (ins("cpu"), ins("memory"))),
    ("too many resources fails due to init container cpu",
     rp(r(1, 1), init=[r(3, 1)]), r(8, 19), None, U, (ins("cpu"),)),
    ("too many resources fails due to highest init container cpu",
     rp(r(1, 1), init=[r(3, 1), r(2, 1)]), r(8, 19), None, U, (ins("cpu"),)),
    ("too many resources fails due to init container memory",
     rp(r(1, 1), init=[r(1, 3)]), r(9, 19), None, U, (ins("memory"),)),
    ("too many resources fails due to highest init container memory",
     rp(r(1, 1), init=[r(1, 3), r(1, 2)]), r(9, 19), None, U, (ins("memory"),)),
    ("init container fits because it's the max, not sum, of containers and init containers",
     rp(r(1, 1), init=[r(1, 1)]), r(9, 19), None, OK, ()),
    ("multiple init containers fit because it's the max, not sum, of containers and init "
     "containers", rp(r(1, 1), init=[r(1, 1), r(1, 1)]), r(9, 19), None, OK, ()),
    ("both resources fit", rp(r(1, 1)), r(5, 5), None, OK, ()),
    ("one resource memory fits", rp(r(2, 1)), r(9, 5), None, U, (ins("cpu"),)),
    ("one resource cpu fits", rp(r(1, 2)), r(5, 19), None, U, (ins("memory"),)),
    ("equal edge case", rp(r(5, 1)), r(5, 19), None, OK, ()),
    ("equal edge case for init container", rp(r(4, 1), init=[r(5, 1)]), r(5, 19), None, OK, ()),
    ("extended resource fits", rp(r(scalars={EXT_A: 1})), r(), None, OK, ()),
    ("extended resource fits for init container",
     rp(r(), init=[r(scalars={EXT_A: 1})]), r(), None, OK, ()),
    ("extended resource capacity enforced", rp(r(1, 1, scalars={EXT_A: 10})),
     r(scalars={EXT_A: 0}), None, UU, (ins(EXT_A),)),
    ("extended resource capacity enforced for init container",
     rp(r(), init=[r(1, 1, scalars={EXT_A: 10})]), r(scalars={EXT_A: 0}), None, UU,
     (ins(EXT_A),)),
    ("extended resource allocatable enforced", rp(r(1, 1, scalars={EXT_A: 1})),
     r(scalars={EXT_A: 5}), None, U, (ins(EXT_A),)),
    ("extended resource allocatable enforced for init container",
     rp(r(), init=[r(1, 1, scalars={EXT_A: 1})]), r(scalars={EXT_A: 5}), None, U,
     (ins(EXT_A),)),
    ("extended resource allocatable enforced for multiple containers",
     rp(r(1, 1, scalars={EXT_A: 3}), r(1, 1, scalars={EXT_A: 3})), r(scalars={EXT_A: 2}),
     None, UU, (ins(EXT_A),)),
    ("extended resource allocatable admits multiple init containers",
     rp(r(), init=[r(1, 1, scalars={EXT_A: 3}), r(1, 1, scalars={EXT_A: 3})]),
     r(scalars={EXT_A: 2}), None, OK, ()),
    ("extended resource allocatable enforced for multiple init containers",
     rp(r(), init=[r(1, 1, scalars={EXT_A: 6}), r(1, 1, scalars={EXT_A: 3})]),
     r(scalars={EXT_A: 2}), None, UU, (ins(EXT_A),)),
    ("extended resource allocatable enforced for unknown resource",
     rp(r(1, 1, scalars={EXT_B: 1})), r(), None, UU, (ins(EXT_B),)),
    ("extended resource allocatable enforced for unknown resource for init container",
     rp(r(), init=[r(1, 1, scalars={EXT_B: 1})]), r(), None, UU, (ins(EXT_B),)),
    ("kubernetes.io resource capacity enforced", rp(r(1, 1, scalars={K8S_A: 10})), r(), None,
     UU, (ins(K8S_A),)),
    ("kubernetes.io resource capacity enforced for init container",
     rp(r(), init=[r(1, 1, scalars={K8S_B: 10})]), r(), None, UU, (ins(K8S_B),)),
    ("hugepages resource capacity enforced", rp(r(1, 1, scalars={HUGE_A: 10})),
     r(scalars={HUGE_A: 0}), None, UU, (ins(HUGE_A),)),
    ("hugepages resource capacity enforced for init container",
     rp(r(), init=[r(1, 1, scalars={HUGE_A: 10})]), r(scalars={HUGE_A: 0}), None, UU,
     (ins(HUGE_A),)),
    ("hugepages resource allocatable enforced for multiple containers",
     rp(r(1, 1, scalars={HUGE_A: 3}), r(1, 1, scalars={HUGE_A: 3})), r(scalars={HUGE_A: 2}),
     None, UU, (ins(HUGE_A),)),
    ("skip checking ignored extended resource", rp(r(1, 1, scalars={EXT_B: 1})), r(),
     {"ignoredResources": [EXT_B]}, OK, ()),
    ("resources + pod overhead fits", rp(r(1, 1), overhead={"cpu": "3m", "memory": "13"}),
     r(5, 5), None, OK, ()),
    ("requests + overhead does not fit for memory",
     rp(r(1, 1), overhead={"cpu": "1m", "memory": "15"}), r(5, 5), None, U, (ins("memory"),)),
    ("skip checking ignored extended resource via resource groups",
     rp(r(1, 1, scalars={EXT_B: 1, K8S_A: 1})), r(),
     {"ignoredResourceGroups": ["example.com"]}, UU, (ins(K8S_A),)),
    ("skip checking extended resource request with quantity zero via resource groups",
     rp(r(1, 1, scalars={EXT_A: 0})), r(scalars={EXT_A: 6}), None, OK, ()),
    ("skip checking resource request with quantity zero",
     rp(r(scalars={EXT_A: 1})), r(20, 30, scalars={EXT_A: 1}), None, OK, ()),
    ("both pod-level and container-level resources fit",
     rp(r(1, 1), pod_level={"cpu": "1m", "memory": "2"}), r(5, 5), None, OK, ()),
    ("pod-level cpu resource not fit",
     rp(r(1, 1), pod_level={"cpu": "7m", "memory": "2"}), r(5, 5), None, U, (ins("cpu"),)),
    ("pod-level memory resource not fit",
     rp(r(1, 1), pod_level={"cpu": "3m", "memory": "2"}), r(5, 19), None, U,
     (ins("memory"),)),
    ("pod-level hugepages resource fit",
     rp(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), None, None, OK, ()),
    ("both pod-level and container-level hugepages resource fit",
     rp(r(1, 1, scalars={HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
     None, None, OK, ()),
    ("pod-level hugepages resource not fit",
     rp(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}), None, None, UU,
     (ins(HUGE_A),)),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     rp(r(1, 1), init=[r(1, 1)], pod_level={"cpu": "3m", "memory": "2"}), r(5, 19), None, U,
     (ins("memory"),)),
    ("extended resource backed by DRA not enabled",
     rp(r(1, 1, scalars={"extended.resource.dra.io/something": 1})), r(), None, UU,
     (ins("extended.resource.dra.io/something"),)),
]


def _check(pod, nd, existing, args, code, reasons):
    pods = [] if existing is None else [make_pod(reqs=[existing], node="node")]
    (st,) = run_filter(Fit(args, Handle()), pod, snapshot([nd], pods))
    assert st.code == code
    assert st.reasons == reasons


@pytest.mark.parametrize("case", ENOUGH, ids=[c[0] for c in ENOUGH])
def test_enough_requests(case) -> None:
    _name, pod, existing, args, code, reasons = case
    _check(pod, node(), existing, args, code, reasons)


NOT_ENOUGH = [
    ("even without specified resources, predicate fails when there's no space for additional "
     "pod", rp(), r(10, 20)),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     rp(r(1, 1)), r(5, 5)),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     rp(r(5, 1)), r(5, 19)),
    ("even for equal edge case, predicate fails when there's no space for additional pod due "
     "to init container", rp(r(5, 1), init=[r(5, 1)]), r(5, 19)),
]


@pytest.mark.parametrize("case", NOT_ENOUGH, ids=[c[0] for c in NOT_ENOUGH])
def test_not_enough_requests(case) -> None:
    _name, pod, existing = case
    nd = node({"cpu": "10m", "memory": "20", "pods": "1"})
    _check(pod, nd, existing, None, U, ("Too many pods",))


def test_too_many_pods_comes_first_and_is_never_unresolvable() -> None:
    nd = node({"cpu": "10m", "memory": "20", "pods": "1"})
    _check(rp(r(11, 1)), nd, r(0, 0), None, UU, ("Too many pods", ins("cpu")))
    _check(rp(r(6, 1)), nd, r(5, 0), None, U, ("Too many pods", ins("cpu")))


STORAGE = [
    ("empty storage requested, and pod fits", rp(r(1, 1)), r(2, 10), OK, ()),
    ("storage ephemeral local storage request exceeds allocatable", rp(r(eph=25)), r(2, 2),
     UU, (ins("ephemeral-storage"),)),
    ("ephemeral local storage is sufficient", rp(r(eph=5)), r(2, 2, eph=10), OK, ()),
    ("pod fits", rp(r(eph=10)), r(2, 2), OK, ()),
]


@pytest.mark.parametrize("case", STORAGE, ids=[c[0] for c in STORAGE])
def test_storage_requests(case) -> None:
    _name, pod, existing, code, reasons = case
    _check(pod, node(), existing, None, code, reasons)


def test_restartable_init_containers() -> None:
    nd = node({"cpu": "2m", "memory": "0", "pods": "1"})
    ok = make_pod(reqs=[{"cpu": "1m"}], sidecar_reqs=[{"cpu": "1m"}])
    _check(ok, nd, None, None, OK, ())
    too_big = make_pod(reqs=[{"cpu": "1m"}], sidecar_reqs=[{"cpu": "2m"}])
    _check(too_big, nd, None, None, UU, (ins("cpu"),))
    _check(make_pod(reqs=[None], sidecar_reqs=[None]), nd, None, None, OK, ())


def test_multiple_scalar_reasons_are_sorted_and_grouped() -> None:
    nd = node({"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "example.com/zzz": "1"})
    pod = rp(r(11, 30, scalars={"example.com/zzz": 2, EXT_A: 4}))
    _check(pod, nd, r(0, 0, scalars={EXT_A: 2}), None, UU,
           (ins("cpu"), ins("memory"), ins(EXT_A), ins("example.com/zzz")))


def test_filter_without_pre_filter_is_an_error() -> None:
    snap = snapshot([node()])
    st = Fit(None, Handle()).filter(CycleState(), rp(), snap.node_infos[0])
    assert st is not None and st.code == Code.ERROR


# ---------------------------------------------------------------- queueing hints


def test_events_to_register() -> None:
    evs = Fit(None, Handle()).events_to_register()
    got = [(e.event.resource, e.event.action) for e in evs]
    assert got == [
        (Resource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        (Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        # DRAExtendedResource (on in 1.37): a class may come to map the pod's resource
        (Resource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
    ]
    assert all(e.hint is not None for e in evs)


Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


def cpu_pod(name, cpu, node="", pod_level=False, uid=None):
    if pod_level:
        return make_pod(name, pod_level_requests={"cpu": cpu}, node=node, uid=uid or name)
    return make_pod(name, reqs=[{"cpu": cpu}], node=node, uid=uid or name)


POD_HINTS = [
    ("queue-on-other-pod-deleted", cpu_pod("pod1", "1"), cpu_pod("pod2", "1", "fake"), None, Q),
    ("skip-queue-on-unscheduled-pod-deleted", make_pod("pod1"), make_pod("pod2"), None, S),
    ("queue-on-nominated-pod-deleted", make_pod("pod1"), make_pod("pod2", nominated="n1"),
     None, Q),
    ("skip-queue-on-other-unscheduled-pod", cpu_pod("pod1", "1"), cpu_pod("pod2", "2"),
     cpu_pod("pod2", "1"), S),
    ("skip-queue-on-other-pod-unrelated-resource-scaled-down", cpu_pod("pod1", "1"),
     make_pod("pod2", reqs=[{"memory": "2"}], node="fake", uid="pod2"),
     make_pod("pod2", reqs=[{"memory": "1"}], node="fake", uid="pod2"), S),
    ("skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
     cpu_pod("pod1", "1", pod_level=True),
     make_pod("pod2", pod_level_requests={"memory": "2"}, node="fake", uid="pod2"),
     make_pod("pod2", pod_level_requests={"memory": "1"}, node="fake", uid="pod2"), S),
    ("queue-on-other-pod-some-resource-scale-down", cpu_pod("pod1", "1"),
     cpu_pod("pod2", "2", "fake"), cpu_pod("pod2", "1", "fake"), Q),
    ("queue-on-other-pod-some-pod-level-resource-scale-down",
     cpu_pod("pod1", "1", pod_level=True), cpu_pod("pod2", "2", "fake", pod_level=True),
     cpu_pod("pod2", "1", "fake", pod_level=True), Q),
    ("queue-on-target-pod-some-resource-scale-down", cpu_pod("pod1", "1"),
     cpu_pod("pod1", "2"), cpu_pod("pod1", "1"), Q),
]


@pytest.mark.parametrize("case", POD_HINTS, ids=[c[0] for c in POD_HINTS])
def test_is_schedulable_after_pod_change(case) -> None:
    _name, pod, old, new, want = case
    assert Fit(None, Handle()).is_schedulable_after_pod_event(pod, old, new) == want


def cap_node(**cap):
    return make_node("n", capacity={k.replace("__", "/"): v for k, v in cap.items()})


EA = EXT_A.replace("/", "__")
EB = EXT_B.replace("/", "__")
MEM2_A1 = rp(r(mem=2, scalars={EXT_A: 1}))
NODE_HINTS = [
    ("skip-queue-on-node-add-without-sufficient-resources", rp(r(mem=2)), None,
     cap_node(memory="1"), S),
    ("skip-queue-on-node-add-without-required-resource-type", rp(r(scalars={EXT_A: 1})), None,
     cap_node(**{EB: "1"}), S),
    ("queue-on-node-add-with-sufficient-resources", MEM2_A1, None,
     cap_node(memory="4", **{EA: "2"}), Q),
    ("skip-queue-on-node-unrelated-changes", MEM2_A1, cap_node(memory="2", **{EA: "2"}),
     cap_node(memory="2", **{EA: "1", EB: "2"}), S),
    ("queue-on-pod-requested-resources-increase", MEM2_A1, cap_node(memory="2", **{EA: "1"}),
     cap_node(memory="2", **{EA: "2"}), Q),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", MEM2_A1,
     cap_node(memory="4", **{EA: "2"}), cap_node(memory="1", **{EA: "2"}), S),
    ("queue-on-node-changes-from-unsuitable-to-suitable", MEM2_A1,
     cap_node(memory="1", **{EA: "2"}), cap_node(memory="4", **{EA: "2"}), Q),
]


@pytest.mark.parametrize("case", NODE_HINTS, ids=[c[0] for c in NODE_HINTS])
def test_is_schedulable_after_node_change(case) -> None:
    _name, pod, old, new, want = case
    assert Fit(None, Handle()).is_schedulable_after_node_change(pod, old, new) == want


def test_node_info_fields_used_by_filter() -> None:
    # the per-node form reads NodeInfo directly: an empty NodeInfo of a node fits nothing
    # when the node allows no pods
    ni = NodeInfo(make_node("n", capacity={"cpu": "1"}, add_pods=False))
    state = CycleState()
    plugin = Fit(None, Handle())
    plugin.pre_filter(state, rp(), None)  # type: ignore[arg-type]
    st = plugin.filter(state, rp(), ni)
    assert st is not None and st.reasons == ("Too many pods",) and st.code == U


def test_more_checks_than_a_bit_mask_holds() -> None:
    # 70 extended resources: the batch form's reasons without the int64 bit mask, still
    # from the node table alone (the preemption dry run changes the table's columns)
    names = [f"example.com/r{i:02d}" for i in range(70)]
    nodes = [make_node("full", capacity={n: 1 for n in names}),
             make_node("half", capacity={n: 2 if i % 2 else 0 for i, n in enumerate(names)}),
             make_node("roomy", capacity={n: 3 for n in names})]
    used = rp(r(scalars={n: 1 for n in names}), node="full")
    statuses = run_filter(Fit(None, Handle()), rp(r(scalars={n: 1 for n in names})),
                          snapshot(nodes, [used]))
    assert [s.code for s in statuses] == [U, UU, OK]
    assert statuses[0].reasons == tuple(f"Insufficient {n}" for n in names)
    assert statuses[1].reasons == tuple(f"Insufficient {n}" for n in names[::2])
