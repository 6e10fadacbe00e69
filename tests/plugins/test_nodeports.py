"""NodePorts: upstream v1.35 ``node_ports_test.go`` tables (TestNodePorts,
TestPreFilterDisabled, Test_isSchedulableAfterPodDeleted, host ports of a pod) and batch /
per-node agreement against a literal port of ``HostPortInfo.CheckConflict``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.api.types import Container, ContainerPort, Node, ObjectMeta, Pod, PodSpec, PodStatus
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import NodeInfo, pod_host_ports
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodeports import ERR_REASON, NodePorts, fits_ports
from kubesched.testing import snapshot_from_nodes

_uid = iter(range(10**9))


def new_pod(host: str, *host_port_infos: str, init_ports: tuple[str, ...] = (),
            init_restart: str | None = "Always") -> Pod:
    """upstream ``newPod(host, "PROTO/IP/PORT"...)``: one container with those host ports."""

    def ports(infos: tuple[str, ...]) -> list[ContainerPort]:
        out = []
        for info in infos:
            proto, ip, port = info.split("/")
            out.append(ContainerPort(container_port=0, host_port=int(port), protocol=proto,
                                     host_ip=ip))
        return out

    init = []
    if init_ports:
        init = [Container(name="init", ports=ports(init_ports), restart_policy=init_restart)]
    uid = f"pod-{next(_uid)}"
    return Pod(metadata=ObjectMeta(name=uid, namespace="default", uid=uid),
               spec=PodSpec(node_name=host, containers=[Container(name="c",
                                                                   ports=ports(host_port_infos))],
                            init_containers=init))


def node_info(*pods: Pod) -> NodeInfo:
    ni = NodeInfo(Node(metadata=ObjectMeta(name="m1")))
    for p in pods:
        ni.add_pod(p)
    return ni


def unschedulable() -> Status:
    return Status(Code.UNSCHEDULABLE, (ERR_REASON,))


CASES = [
    ("other port", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "UDP/127.0.0.1/9090")],
     None),
    ("same udp port", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "UDP/127.0.0.1/8080")],
     unschedulable()),
    ("same tcp port", new_pod("m1", "TCP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.1/8080")],
     unschedulable()),
    ("different host ip", new_pod("m1", "TCP/127.0.0.1/8080"),
     [new_pod("m1", "TCP/127.0.0.2/8080")], None),
    ("different protocol", new_pod("m1", "UDP/127.0.0.1/8080"),
     [new_pod("m1", "TCP/127.0.0.1/8080")], None),
    ("second udp port conflict", new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     [new_pod("m1", "UDP/127.0.0.1/8080")], unschedulable()),
    ("first tcp port conflict", new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     [new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")], unschedulable()),
    ("first tcp port conflict due to 0.0.0.0 hostIP", new_pod("m1", "TCP/0.0.0.0/8001"),
     [new_pod("m1", "TCP/127.0.0.1/8001")], unschedulable()),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP",
     new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     [new_pod("m1", "TCP/127.0.0.1/8001")], unschedulable()),
    ("second tcp port conflict to 0.0.0.0 hostIP", new_pod("m1", "TCP/127.0.0.1/8001"),
     [new_pod("m1", "TCP/0.0.0.0/8001")], unschedulable()),
    ("second different protocol", new_pod("m1", "UDP/127.0.0.1/8001"),
     [new_pod("m1", "TCP/0.0.0.0/8001")], None),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", new_pod("m1", "UDP/127.0.0.1/8001"),
     [new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")], unschedulable()),
    # beyond upstream's table
    ("empty hostIP and protocol default to 0.0.0.0 and TCP", new_pod("m1", "//8001"),
     [new_pod("m1", "TCP/127.0.0.1/8001")], unschedulable()),
    ("sidecar (restartable init container) ports count", new_pod("m1", "TCP/0.0.0.0/9000"),
     [new_pod("m1", init_ports=("TCP/0.0.0.0/9000",))], unschedulable()),
    ("ordinary init container ports do not count", new_pod("m1", "TCP/0.0.0.0/9000"),
     [new_pod("m1", init_ports=("TCP/0.0.0.0/9000",), init_restart=None)], None),
    ("wanted sidecar port conflicts",
     new_pod("m1", init_ports=("SCTP/10.0.0.1/7000",)), [new_pod("m1", "SCTP/0.0.0.0/7000")],
     unschedulable()),
]


def _ok(st: Status | None) -> Status:
    return Status() if st is None else Status(st.code, st.reasons)


@pytest.mark.parametrize(("name", "pod", "existing", "want"), CASES, ids=[c[0] for c in CASES])
def test_node_ports(name: str, pod: Pod, existing: list[Pod], want: Status | None) -> None:
    p = NodePorts(None, Handle())
    state = CycleState()
    ni = node_info(*existing)
    snap = snapshot_from_nodes([ni.node], existing)
    res, st = p.pre_filter(state, pod, snap)
    assert res is None and st is None
    assert _ok(p.filter(state, pod, ni)) == _ok(want)
    batch = p.filter_batch(state, pod, snap, np.array([0]))
    assert _ok(batch.status_at(0, "")) == _ok(want)


def test_skip_filter_without_host_ports() -> None:
    p = NodePorts(None, Handle())
    _, st = p.pre_filter(CycleState(), Pod(metadata=ObjectMeta(name="p"), spec=PodSpec()),
                         Snapshot())
    assert st is not None and st.code == Code.SKIP
    # container ports without a host port are not host ports
    pod = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(containers=[
        Container(name="c", ports=[ContainerPort(container_port=80)])]))
    _, st = p.pre_filter(CycleState(), pod, Snapshot())
    assert st is not None and st.code == Code.SKIP


def test_pre_filter_disabled() -> None:
    p = NodePorts(None, Handle())
    pod = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec())
    st = p.filter(CycleState(), pod, NodeInfo(Node(metadata=ObjectMeta(name="n"))))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'reading "PreFilterNodePorts" from cycleState: not found'
    snap = snapshot_from_nodes([Node(metadata=ObjectMeta(name="n"))], [])
    batch = p.filter_batch(CycleState(), pod, snap, np.array([0]))
    assert batch.status_at(0, "").code == Code.ERROR


def test_host_ports_of_pod() -> None:
    """upstream TestGetContainerPorts, as v1.35's GetHostPorts: ports with a host port, of the
    containers and of restartable init containers, hostIP / protocol defaulted."""
    pod = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(
        init_containers=[
            Container(name="sidecar", restart_policy="Always", ports=[
                ContainerPort(container_port=9000, host_port=9000)]),
            Container(name="init", ports=[ContainerPort(container_port=9001, host_port=9001)]),
        ],
        containers=[
            Container(name="a", ports=[
                ContainerPort(container_port=8001, host_port=8001, protocol="TCP"),
                ContainerPort(container_port=8002, host_port=8002, protocol="UDP",
                              host_ip="10.0.0.1")]),
            Container(name="b", ports=[ContainerPort(container_port=8005)]),
        ]))
    assert pod_host_ports(pod) == [("0.0.0.0", "TCP", 9000), ("0.0.0.0", "TCP", 8001),
                                   ("10.0.0.1", "UDP", 8002)]


def test_events_to_register() -> None:
    evs = NodePorts(None, Handle()).events_to_register()
    assert [(e.event.resource, e.event.action, e.hint is not None) for e in evs] == [
        (Resource.POD, ActionType.DELETE, True), (Resource.NODE, ActionType.ADD, False)]


POD_WITH_HOST_PORT = new_pod("", "TCP//8080")


def _pod_on(node_name: str, *ports: str, nominated: str = "") -> Pod:
    p = new_pod(node_name, *ports)
    p.status = PodStatus(nominated_node_name=nominated)
    return p


@pytest.mark.parametrize(("name", "old", "want"), [
    ("skip-queue-on-unscheduled", _pod_on(""), QueueingHint.SKIP),
    ("skip-queue-on-non-hostport", _pod_on("fake-node"), QueueingHint.SKIP),
    ("skip-queue-on-unrelated-hostport", _pod_on("fake-node", "TCP//8081"), QueueingHint.SKIP),
    ("queue-on-released-hostport", _pod_on("fake-node", "TCP//8080"), QueueingHint.QUEUE),
    ("queue-on-released-hostport-of-nominated-pod", _pod_on("", "TCP//8080", nominated="n"),
     QueueingHint.QUEUE),
    ("skip-unscheduled-pod-with-the-port", _pod_on("", "TCP//8080"), QueueingHint.SKIP),
])
def test_is_schedulable_after_pod_deleted(name: str, old: Pod, want: QueueingHint) -> None:
    assert NodePorts(None, Handle()).is_schedulable_after_pod_deleted(
        POD_WITH_HOST_PORT, old, None) == want


def test_is_schedulable_after_pod_deleted_wrong_object() -> None:
    with pytest.raises(TypeError):
        NodePorts(None, Handle()).is_schedulable_after_pod_deleted(POD_WITH_HOST_PORT,
                                                               "not-a-pod", None)


# ---------------------------------------------------------------- reference and property test


def check_conflict(used: set[tuple[str, str, int]], ip: str, protocol: str, port: int) -> bool:
    """A literal port of upstream ``HostPortInfo.CheckConflict`` over (ip, protocol, port)."""
    if port <= 0:
        return False
    ip = ip or "0.0.0.0"
    protocol = protocol or "TCP"
    by_ip: dict[str, set[tuple[str, int]]] = {}
    for uip, uproto, uport in used:
        by_ip.setdefault(uip, set()).add((uproto, uport))
    if ip == "0.0.0.0":
        return any((protocol, port) in m for m in by_ip.values())
    return any((protocol, port) in by_ip.get(key, set()) for key in ("0.0.0.0", ip))


def ref_fits(pod: Pod, ni: NodeInfo) -> bool:
    used = set(ni.used_ports)
    return not any(check_conflict(used, ip, proto, port) for ip, proto, port in
                   pod_host_ports(pod))


IPS = ("", "0.0.0.0", "127.0.0.1", "10.0.0.1")
PROTOS = ("", "TCP", "UDP", "SCTP")


def _rand_ports(rng: random.Random, k: int) -> tuple[str, ...]:
    return tuple(f"{rng.choice(PROTOS)}/{rng.choice(IPS)}/{rng.choice((0, 80, 443, 8080))}"
                 for _ in range(k))


@pytest.mark.parametrize("seed", range(4))
def test_batch_and_per_node_agree_with_check_conflict(seed: int) -> None:
    rng = random.Random(seed)
    conflicts = total = 0
    for _ in range(60):
        n = rng.randrange(1, 12)
        nodes = [Node(metadata=ObjectMeta(name=f"n{i}")) for i in range(n)]
        pods = [new_pod(f"n{rng.randrange(n)}", *_rand_ports(rng, rng.randrange(3)))
                for _ in range(rng.randrange(3 * n))]
        snap = snapshot_from_nodes(nodes, pods)
        p = NodePorts(None, Handle())
        for _ in range(5):
            pod = new_pod("", *_rand_ports(rng, rng.randrange(1, 4)))
            state = CycleState()
            _, st = p.pre_filter(state, pod, snap)
            if st is not None:
                assert st.is_skip() and not pod_host_ports(pod)
                continue
            idx = np.array(rng.sample(range(n), rng.randrange(1, n + 1)), dtype=np.int64)
            batch = p.filter_batch(state, pod, snap, idx)
            for k, i in enumerate(idx.tolist()):
                ni = snap.node_infos[i]
                want = None if ref_fits(pod, ni) else unschedulable()
                assert _ok(p.filter(state, pod, ni)) == _ok(want)
                assert _ok(batch.status_at(k, "")) == _ok(want)
                assert fits_ports(pod_host_ports(pod), ni.used_ports) == (want is None)
                conflicts += want is not None
                total += 1
    assert 0 < conflicts < total


# ---------------------------------------------------------------- golden explain results

from test_nodeaffinity import (  # noqa: E402
    GOLDEN_CASES,
    GOLDEN_IDS,
    golden_filter_expectations,
    golden_setup,
)


@pytest.mark.parametrize("path", GOLDEN_CASES, ids=GOLDEN_IDS)
def test_golden_node_ports_verdicts(path) -> None:
    """Upstream's verdicts (../shared/golden): nodes NodePorts rejected are rejected with
    upstream's reason; feasible nodes and nodes rejected by a later plugin pass."""
    g = golden_setup(path, NodePorts.name)
    if not g.filter_on:
        pytest.skip("NodePorts disabled")
    p = NodePorts(g.args, Handle())
    state = CycleState()
    _, st = p.pre_filter(state, g.target, g.snap)
    skipped = st is not None and st.is_skip()
    expect = golden_filter_expectations(g, p.name)
    if skipped:
        assert all(reason is None for reason in expect.values())
        pytest.skip("no host ports")
    rows = np.array([g.snap.table.index[n] for n in expect], dtype=np.int64)
    batch = p.filter_batch(state, g.target, g.snap, rows)
    for k, (name, reason) in enumerate(expect.items()):
        ours = p.filter(state, g.target, g.snap.get(name))
        if reason is None:
            assert ours is None and batch.codes[k] == 0, name
        else:
            assert ours is not None and ours.code == Code.UNSCHEDULABLE, name
            assert ours.message() == reason == batch.status_at(k, "").message()
