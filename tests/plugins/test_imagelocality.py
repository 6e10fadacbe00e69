"""ImageLocality: upstream v1.35 ``image_locality_test.go`` tables (TestImageLocalityPriority,
TestNormalizedImageName), image volumes by release (1.36 kubernetes#130231, 1.37
kubernetes#138951) and batch / per-node agreement."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from kubesched.api.types import (
    Container,
    ContainerImage,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
    Volume,
)
from kubesched.config.features import FeatureGates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import ImageStateSummary
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.imagelocality import (
    MB,
    ImageLocality,
    calculate_priority,
    normalized_image_name,
    scaled_image_score,
)
from kubesched.testing import snapshot_from_nodes


def spec(*images: str, init: tuple[str, ...] = (), volumes: tuple[str, ...] = ()) -> PodSpec:
    return PodSpec(containers=[Container(name=f"c{i}", image=im) for i, im in enumerate(images)],
                   init_containers=[Container(name=f"i{i}", image=im)
                                    for i, im in enumerate(init)],
                   volumes=[Volume(name=f"v{i}", source={"image": {"reference": ref}},
                                   image_reference=ref) for i, ref in enumerate(volumes)])


def pod(s: PodSpec) -> Pod:
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="p"), spec=s)


def images(*entries: tuple[tuple[str, ...], int]) -> NodeStatus:
    return NodeStatus(images=tuple(ContainerImage(names=names, size_bytes=size)
                                   for names, size in entries))


def image_node(name: str, status: NodeStatus) -> Node:
    return Node(metadata=ObjectMeta(name=name), status=status)


TEST_40_250 = spec("gcr.io/40", "gcr.io/250")
TEST_40_300 = spec("gcr.io/40", "gcr.io/300")
TEST_MIN_MAX = spec("gcr.io/10", "gcr.io/4000")
TEST_300_600_900 = spec("gcr.io/300", "gcr.io/600", "gcr.io/900")
TEST_30_40 = spec("gcr.io/30", "gcr.io/40")
TEST_30_INIT_300 = spec("gcr.io/30", init=("gcr.io/300",))

NODE_40_300_2000 = images(
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40 * MB),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300 * MB),
    (("gcr.io/2000:latest",), 2000 * MB))
NODE_250_10 = images((("gcr.io/250:latest",), 250 * MB),
                     (("gcr.io/10:latest", "gcr.io/10:v1"), 10 * MB))
NODE_600_40_900 = images((("gcr.io/600:latest",), 600 * MB), (("gcr.io/40:latest",), 40 * MB),
                         (("gcr.io/900:latest",), 900 * MB))
NODE_300_600_900 = images((("gcr.io/300:latest",), 300 * MB), (("gcr.io/600:latest",), 600 * MB),
                          (("gcr.io/900:latest",), 900 * MB))
NODE_4000_30 = images((("gcr.io/4000:latest",), 4000 * MB), (("gcr.io/30:latest",), 30 * MB))
NODE_20_30_40 = images((("gcr.io/20:latest",), 20 * MB), (("gcr.io/30:latest",), 30 * MB),
                       (("gcr.io/40:latest",), 40 * MB))
NODE_NO_IMAGES = NodeStatus()

CASES = [
    ("two images spread on two nodes, prefer the larger image one", TEST_40_250,
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [0, 5]),
    ("two images on one node, prefer this node", TEST_40_300,
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [7, 0]),
    ("if exceed limit, use limit", TEST_MIN_MAX,
     [("node1", NODE_4000_30), ("node2", NODE_250_10)], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)", TEST_MIN_MAX,
     [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NODE_NO_IMAGES)], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred", TEST_300_600_900,
     [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NODE_NO_IMAGES)],
     [32, 36, 0]),
    ("pod with multiple small images", TEST_30_40,
     [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], [1, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     TEST_30_INIT_300, [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], [6, 0]),
]


@pytest.mark.parametrize(("name", "s", "nodes", "want"), CASES, ids=[c[0] for c in CASES])
def test_image_locality_priority(name: str, s: PodSpec, nodes: list, want: list[int]) -> None:
    snap = snapshot_from_nodes([image_node(n, st) for n, st in nodes], [])
    p = ImageLocality(None, Handle(snapshot=snap, features=FeatureGates("1.35")))
    state = CycleState()
    the_pod = pod(s)
    by_name = {ni.name: ni for ni in snap.node_infos}
    got = [p.score(state, the_pod, by_name[n]) for n, _ in nodes]
    assert got == want
    rows = np.array([snap.table.index[n] for n, _ in nodes])
    batch = p.score_batch(state, the_pod, snap, rows)
    assert batch.dtype == np.int64 and batch.tolist() == want
    assert not hasattr(p, "normalize_score")  # ImageLocality has no NormalizeScore


# Image volumes, per release. Two nodes: gcr.io/40 (40 MiB) and gcr.io/300 (300 MiB) on
# node1 only, so each counts size/2. 1.35 ignores the volume (sum 20 MiB < 23 MiB → 0);
# 1.36 adds it to the sum only (100·(170−23)/(1000−23) = 15); 1.37 also to the image count
# (100·147/1977 = 7, the score of the same two images as containers, "two images on one
# node" above). A volume not on any node adds nothing in 1.36 and lowers the score in 1.37
# (100·127/977 = 12 → 100·127/1977 = 6).
VOLUME_CASES = [
    ("image volume present on the node", spec("gcr.io/40", volumes=("gcr.io/300",)),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
     {"1.35": [0, 0], "1.36": [15, 0], "1.37": [7, 0]}),
    ("image volume absent everywhere", spec("gcr.io/300", volumes=("reg.io/none:v1",)),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
     {"1.35": [12, 0], "1.36": [12, 0], "1.37": [6, 0]}),
    ("image volume only, normalized with :latest", spec("gcr.io/none", volumes=("gcr.io/250",)),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
     {"1.35": [0, 0], "1.36": [0, 10], "1.37": [0, 5]}),
]


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize(("name", "s", "nodes", "want"), VOLUME_CASES,
                         ids=[c[0] for c in VOLUME_CASES])
def test_image_volumes_by_release(name: str, s: PodSpec, nodes: list, want: dict,
                                  version: str) -> None:
    snap = snapshot_from_nodes([image_node(n, st) for n, st in nodes], [])
    p = ImageLocality(None, Handle(snapshot=snap, features=FeatureGates(version)))
    the_pod = pod(s)
    by_name = {ni.name: ni for ni in snap.node_infos}
    got = [p.score(CycleState(), the_pod, by_name[n]) for n, _ in nodes]
    assert got == want[version]
    rows = np.array([snap.table.index[n] for n, _ in nodes])
    assert p.score_batch(CycleState(), the_pod, snap, rows).tolist() == want[version]


def test_image_volume_reference_is_parsed() -> None:
    from kubesched.api.parse import parse_volume

    v = parse_volume({"name": "v", "image": {"reference": "reg.io/m:v1",
                                             "pullPolicy": "IfNotPresent"}}, "spec.volumes[0]")
    assert v.image_reference == "reg.io/m:v1" and v.source is not None
    assert parse_volume({"name": "e", "emptyDir": {}}, "p").image_reference is None


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(("name", "inp", "out"), [
    ("add :latest postfix 1", "root", "root:latest"),
    ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("keep it as is 1", "root:tag", "root:tag"),
    ("keep it as is 2", "root@" + _fake_digest("root"), "root@" + _fake_digest("root")),
])
def test_normalized_image_name(name: str, inp: str, out: str) -> None:
    assert normalized_image_name(inp) == out


def test_total_num_nodes_is_every_node_of_the_snapshot() -> None:
    # 2 of 4 nodes hold a 600 MiB image: 600*2/4 = 300 MiB → 100*(300-23)/(1000-23) = 28;
    # scoring only one candidate does not change the spread.
    big = images((("img:latest",), 600 * MB))
    nodes = [image_node("a", big), image_node("b", big), image_node("c", NodeStatus()),
             image_node("d", NodeStatus())]
    snap = snapshot_from_nodes(nodes, [])
    p = ImageLocality(None, Handle(snapshot=snap))
    the_pod = pod(spec("img"))
    assert p.score_batch(CycleState(), the_pod, snap, np.array([snap.table.index["a"]])) \
        .tolist() == [28]
    assert p.score(CycleState(), the_pod, snap.get("b")) == 28
    assert p.score(CycleState(), the_pod, snap.get("c")) == 0


def test_scaled_score_uses_float64_and_truncates() -> None:
    # Go: int64(float64(size) * (float64(numNodes) / float64(total))); exact integer
    # arithmetic would give 267406371953 here.
    assert scaled_image_score(ImageStateSummary(382009102790, 7), 10) == 267406371952
    assert scaled_image_score(ImageStateSummary(859696775432, 3), 11) == 234462756935
    size = 1000 * MB + 1  # on 1 of 3 nodes
    st = images((("x:latest",), size))
    nodes = [image_node("a", st), image_node("b", NodeStatus()), image_node("c", NodeStatus())]
    snap = snapshot_from_nodes(nodes, [])
    p = ImageLocality(None, Handle(snapshot=snap))
    want = 100 * (int(float(size) / 3) - 23 * MB) // (1000 * MB - 23 * MB)
    assert p.score(CycleState(), pod(spec("x")), snap.get("a")) == want == 31


def test_calculate_priority_edges() -> None:
    assert calculate_priority(0, 0) == 0  # no containers: upstream's 0 / negative == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(10**15, 1) == 100
    assert calculate_priority(500 * MB, 1) == 100 * (477 * MB) // (977 * MB)


@pytest.mark.parametrize("seed", range(4))
def test_batch_and_per_node_forms_agree(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"reg.io/app{i}" for i in range(6)]
    nonzero = total = 0
    for _ in range(50):
        n = rng.randrange(1, 15)
        nodes = []
        for i in range(n):
            held = rng.sample(names, rng.randrange(len(names) + 1))
            st = images(*[((f"{im}:latest", f"{im}:v{i % 2}"),
                           rng.choice((5, 30, 250, 900, 3000)) * MB) for im in held])
            nodes.append(image_node(f"n{i}", st))
        snap = snapshot_from_nodes(nodes, [])
        version = rng.choice(["1.35", "1.36", "1.37"])
        p = ImageLocality(None, Handle(snapshot=snap, features=FeatureGates(version)))
        for _ in range(5):
            s = spec(*rng.choices([*names, "other"], k=rng.randrange(0, 4)),
                     init=tuple(rng.choices(names, k=rng.randrange(0, 2))),
                     volumes=tuple(rng.choices([*names, "other"], k=rng.randrange(0, 3))))
            the_pod = pod(s)
            idx = np.array(rng.sample(range(n), rng.randrange(1, n + 1)), dtype=np.int64)
            want = [p.score(CycleState(), the_pod, snap.node_infos[i]) for i in idx.tolist()]
            assert p.score_batch(CycleState(), the_pod, snap, idx).tolist() == want
            assert all(0 <= w <= 100 for w in want)
            nonzero += sum(w > 0 for w in want)
            total += len(want)
    assert 0 < nonzero < total


def test_batch_follows_node_changes() -> None:
    """The batch form's image index must follow node updates, additions and removals
    (a few changed rows are scored directly, many trigger a rebuild)."""
    from kubesched.cache.cache import Cache

    rng = random.Random(7)
    names = [f"reg.io/app{i}" for i in range(5)]

    def random_status() -> NodeStatus:
        held = rng.sample(names, rng.randrange(len(names) + 1))
        return images(*[((f"{im}:latest",), rng.choice((30, 250, 900)) * MB) for im in held])

    cache = Cache()
    current = {}
    for i in range(40):
        current[f"n{i}"] = image_node(f"n{i}", random_status())
        cache.add_node(current[f"n{i}"])
    snap = Snapshot()
    p = ImageLocality(None, Handle(snapshot=snap))
    next_id = 40
    for _step in range(80):
        op = rng.random()
        if op < 0.5:  # a few nodes change their images
            for name in rng.sample(sorted(current), rng.randrange(1, 3)):
                new = image_node(name, random_status())
                cache.update_node(current[name], new)
                current[name] = new
        elif op < 0.7:  # many change
            for name in rng.sample(sorted(current), len(current) // 2):
                new = image_node(name, random_status())
                cache.update_node(current[name], new)
                current[name] = new
        elif op < 0.85:
            name = f"n{next_id}"
            next_id += 1
            current[name] = image_node(name, random_status())
            cache.add_node(current[name])
        elif len(current) > 2:
            name = rng.choice(sorted(current))
            cache.remove_node(current.pop(name))
        cache.update_snapshot(snap)
        n = snap.num_nodes
        for _ in range(3):
            the_pod = pod(spec(*rng.choices(names, k=rng.randrange(1, 4))))
            idx = np.array(rng.sample(range(n), rng.randrange(1, n + 1)), dtype=np.int64)
            want = [p.score(CycleState(), the_pod, snap.node_infos[i]) for i in idx.tolist()]
            assert p.score_batch(CycleState(), the_pod, snap, idx).tolist() == want


# ---------------------------------------------------------------- golden explain results

from test_nodeaffinity import GOLDEN_CASES, GOLDEN_IDS, golden_setup  # noqa: E402


@pytest.mark.parametrize("path", GOLDEN_CASES, ids=GOLDEN_IDS)
def test_golden_image_locality_scores(path) -> None:
    """Upstream's weighted ImageLocality scores of the feasible nodes (../shared/golden)."""
    g = golden_setup(path, ImageLocality.name)
    scores = g.want.get("scores", {})
    if not g.score_weight or not scores:
        pytest.skip("nothing scored by ImageLocality")
    p = ImageLocality(g.args, Handle(snapshot=g.snap))
    names = [ni.name for ni in g.snap.node_infos if ni.name in scores]
    ups = {n: scores[n]["plugins"].get(p.name) for n in names}
    rows = np.array([g.snap.table.index[n] for n in names], dtype=np.int64)
    batch = p.score_batch(CycleState(), g.target, g.snap, rows)
    assert {n: int(v) * g.score_weight for n, v in zip(names, batch, strict=True)} == ups
    per_node = [p.score(CycleState(), g.target, g.snap.get(n)) for n in names]
    assert per_node == batch.tolist()
