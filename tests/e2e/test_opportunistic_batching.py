"""OpportunisticBatching (gate on by default since v1.35): ported from upstream's
integration test ``test/integration/scheduler/batch`` TestBatchScenarios (pods one after
another with preferred node affinity, one pod per node: the next pod of the same signature
is placed on the hint, the best node left from the previous cycle, without scoring), plus a
workload where the hint changes placements: with percentageOfNodesToScore below 100 the
hinted nodes are the previous cycle's, where a fresh cycle would scan on from
nextStartNodeIndex.

Signatures need a profile whose PreFilter/Filter/PreScore/Score plugins can all sign the
pod: upstream's test clears PodTopologySpread's system default constraints (with them no pod
is signable), as the config here does. NodeResourcesFit and BalancedAllocation sign no pod
while DRAExtendedResource is on (v1.35's code; that gate is on from 1.36), so the placements
are checked as v1.35 decides, and 1.37 is shown never to batch."""

from __future__ import annotations

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import load_config
from kubesched.config.features import FeatureGates, parse_feature_gates
from kubesched.framework import FilterPlugin
from kubesched.framework.batch import OpportunisticBatch

PTS_LIST = {"name": "PodTopologySpread",
            "args": {"defaultingType": "List", "defaultConstraints": []}}


class NoSign(FilterPlugin):
    """A Filter plugin without ``sign_pod``: its profile has no signatures."""

    name = "nosign"

    def filter(self, state, pod, node_info):
        return None


class EmptySign(FilterPlugin):
    """A Filter plugin that cannot sign any pod."""

    name = "emptysign"

    def filter(self, state, pod, node_info):
        return None

    def sign_pod(self, pod):
        return None


def config(pct: int | None = None) -> dict:
    def profile(name: str, extra: str = "") -> dict:
        p: dict = {"schedulerName": name, "pluginConfig": [PTS_LIST]}
        if extra:
            p["plugins"] = {"filter": {"enabled": [{"name": extra}]}}
        return p

    doc: dict = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                 "kind": "KubeSchedulerConfiguration",
                 "profiles": [profile("default-scheduler"), profile("mysched"),
                              profile("nosign", "nosign"), profile("emptysign", "emptysign")]}
    if pct is not None:
        doc["percentageOfNodesToScore"] = pct
    return doc


def node(name: str, max_pods: int, labels: dict[str, str] | None = None) -> str:
    lab = ", ".join(f"{k}: '{v}'" for k, v in (labels or {}).items())
    return (f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{lab}}}}}\n"
            f"status: {{capacity: {{cpu: '100', memory: 4Gi, pods: '{max_pods}'}}}}\n")


def pod(name: str, i: int, *, affinity: list[str] = (), selector: dict[str, str] | None = None,
        scheduler: str = "") -> str:
    spec = ["  containers: [{name: c, image: pause, resources: {requests: "
            "{cpu: '10', memory: 4Mi}}}]"]
    if scheduler:
        spec.append(f"  schedulerName: {scheduler}")
    if selector:
        spec.append("  nodeSelector: {" + ", ".join(f"{k}: '{v}'" for k, v in selector.items())
                    + "}")
    if affinity:
        terms = ", ".join(
            f"{{weight: {len(affinity) - k}, preference: {{matchFields: [{{key: metadata.name, "
            f"operator: In, values: [{n}]}}]}}}}" for k, n in enumerate(affinity))
        spec.append(f"  affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuring"
                    f"Execution: [{terms}]}}}}")
    # one after another, as the upstream test creates each pod once the previous is bound
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: "
            f"{{kubesched.io/arrival: '{i * 0.01}'}}}}\nspec:\n" + "\n".join(spec) + "\n")


def run(text: str, version: str = "1.35", gates: str = "", pct: int | None = None,
        monkeypatch=None) -> tuple[dict[str, str | None], list[bool], SimCluster]:
    features = parse_feature_gates([gates] if gates else [], version) if gates \
        else FeatureGates(version)
    cfg = load_config(config(pct), features=features)
    cfg.out_of_tree = {"nosign": NoSign, "emptysign": EmptySign}
    batched: list[bool] = []
    original = OpportunisticBatch.store_schedule_results

    def spy(self, signature, hinted, chosen, *rest):
        batched.append(bool(hinted) and hinted == chosen)
        return original(self, signature, hinted, chosen, *rest)

    monkeypatch.setattr(OpportunisticBatch, "store_schedule_results", spy)
    sim = SimCluster(load_scenario_text(text, release=version), cfg, check=True)
    recs = {r.key.split("/")[1]: r.node for r in sim.run().records}
    return recs, batched, sim


SCENARIOS = [
    ("one pod one node", [("1ppn-batchn1", 1, None)],
     [("1ppn-batchp1", {}, "1ppn-batchn1", False)]),
    ("distinct pods on distinct nodes",
     [("dpdn-batchn3", 10, {"forpod": "3"}), ("dpdn-batchn2", 10, {"forpod": "2"}),
      ("dpdn-batchn1", 10, {"forpod": "1"})],
     [("dpdn-batchp1", {"selector": {"forpod": "1"}}, "dpdn-batchn1", False),
      ("dpdn-batchp2", {"selector": {"forpod": "2"}}, "dpdn-batchn2", False),
      ("dpdn-batchp3", {"selector": {"forpod": "3"}}, "dpdn-batchn3", False)]),
    ("three pod batch", [("tpb-batchn3", 1, None), ("tpb-batchn2", 1, None),
                         ("tpb-batchn1", 1, None)],
     [(f"tpb-batchp{i}", {"affinity": ["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"]},
       f"tpb-batchn{i}", i > 1) for i in (1, 2, 3)]),
    ("two consecutive batches", [(f"tcb-batchn{i}", 1, None) for i in (4, 3, 2, 1)],
     [("tcb-batchp1", {"affinity": ["tcb-batchn1", "tcb-batchn2"]}, "tcb-batchn1", False),
      ("tcb-batchp2", {"affinity": ["tcb-batchn1", "tcb-batchn2"]}, "tcb-batchn2", True),
      ("tcb-batchp3", {"affinity": ["tcb-batchn4", "tcb-batchn3"]}, "tcb-batchn4", False),
      ("tcb-batchp4", {"affinity": ["tcb-batchn4", "tcb-batchn3"]}, "tcb-batchn3", True)]),
    ("multiple pods per node means no batching",
     [(f"mppn-batchn{i}", 2, None) for i in (4, 3, 2, 1)],
     [("mppn-batchp1", {"affinity": ["mppn-batchn1", "mppn-batchn2"]}, "mppn-batchn1", False),
      ("mppn-batchp2", {"affinity": ["mppn-batchn1", "mppn-batchn2"]}, "mppn-batchn1", False),
      ("mppn-batchp3", {"affinity": ["mppn-batchn4", "mppn-batchn3"]}, "mppn-batchn4", False),
      ("mppn-batchp4", {"affinity": ["mppn-batchn4", "mppn-batchn3"]}, "mppn-batchn4",
       False)]),
    ("no batching between schedulers", [(f"bts--batchn{i}", 1, None) for i in (3, 2, 1)],
     [("bts--batchp1", {"affinity": ["bts--batchn1", "bts--batchn2", "bts--batchn3"]},
       "bts--batchn1", False),
      ("bts--batchp2", {"affinity": ["bts--batchn1", "bts--batchn2", "bts--batchn3"],
                        "scheduler": "mysched"}, "bts--batchn2", False)]),
    ("no batching missing sign", [(f"nsg-batchn{i}", 1, None) for i in (3, 2, 1)],
     [(f"nsg-batchp{i}", {"affinity": ["nsg-batchn1", "nsg-batchn2", "nsg-batchn3"],
                          "scheduler": "nosign"}, f"nsg-batchn{i}", False) for i in (1, 2)]),
    ("no batching empty sign", [(f"esg-batchn{i}", 1, None) for i in (3, 2, 1)],
     [(f"esg-batchp{i}", {"affinity": ["esg-batchn1", "esg-batchn2", "esg-batchn3"],
                          "scheduler": "emptysign"}, f"esg-batchn{i}", False) for i in (1, 2)]),
]


@pytest.mark.parametrize("name, nodes, pods", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_batch_scenarios(name, nodes, pods, monkeypatch):
    text = "".join(node(n, m, lab) for n, m, lab in nodes) + "".join(
        pod(p, i, **kw) for i, (p, kw, _want, _b) in enumerate(pods))
    placed, batched, _sim = run(text, monkeypatch=monkeypatch)
    assert [placed[p] for p, _kw, _w, _b in pods] == [w for _p, _kw, w, _b in pods]
    assert batched == [b for _p, _kw, _w, b in pods]


def test_1_37_never_batches_with_node_resources_fit(monkeypatch):
    """DRAExtendedResource is locked on in 1.37: NodeResourcesFit signs no pod."""
    text = "".join(node(f"tpb-batchn{i}", 1) for i in (3, 2, 1)) + "".join(
        pod(f"tpb-batchp{i}", i, affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"])
        for i in (1, 2, 3))
    placed, batched, _sim = run(text, version="1.37", monkeypatch=monkeypatch)
    assert [placed[f"tpb-batchp{i}"] for i in (1, 2, 3)] == [f"tpb-batchn{i}" for i in (1, 2, 3)]
    assert batched == [False] * 3


IDENTICAL = 300  # identical empty nodes, one pod each; adaptive percentage: 144 of them


def _identical(n_pods: int) -> str:
    return "".join(node(f"n{i:03d}", 1) for i in range(IDENTICAL)) + "".join(
        pod(f"p{i:02d}", i) for i in range(n_pods))


def test_the_hint_keeps_pods_on_the_previous_cycles_nodes(monkeypatch):
    """percentageOfNodesToScore adaptive (300 nodes: 48 % -> 144 nodes found): the first
    pod's cycle evaluates nodes 0..143 and picks one (all tie); every next pod is hinted the
    best node left from the cycle before, so the 40 pods stay on nodes 0..143 and 39 are
    batched. A fresh cycle would scan on from nextStartNodeIndex (144, then 288, ...)."""
    placed, batched, sim = run(_identical(40), monkeypatch=monkeypatch)
    order = sim.scheduler.snapshot.table.names
    first_window = set(order[:144])
    assert all(placed[f"p{i:02d}"] in first_window for i in range(40))
    assert len({placed[f"p{i:02d}"] for i in range(40)}) == 40
    assert batched == [False] + [True] * 39
    assert sim.scheduler.next_start_node_index == 144  # a hinted cycle scans nothing


def test_without_the_gate_the_scan_moves_on(monkeypatch):
    placed, batched, sim = run(_identical(3), gates="OpportunisticBatching=false",
                               monkeypatch=monkeypatch)
    order = sim.scheduler.snapshot.table.names
    assert placed["p00"] in set(order[:144])
    assert placed["p01"] in set(order[144:288])
    assert batched == []  # nothing stored with the gate off
