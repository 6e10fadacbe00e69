"""Whole random scenarios through load → SimCluster(check=True).run() and explain: the run
ends (before the safety bound on virtual time when nothing timed extends it), breaks no
invariant, and accounts for every pod (issue 14 item 5, property b); every Filter verdict kept
per node is the one the filters give (``Framework.filter_batch_kept``)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from fuzz.strategies import ScenarioDraw, configs, mutated, scenarios
from kept_filter import checking_kept_verdicts
from kubesched.api.scenario import Scenario, load_scenario_text
from kubesched.backends.sim import invariants as inv
from kubesched.backends.sim.cluster import SimCluster
from kubesched.backends.sim.invariants import InvariantViolation
from kubesched.config import SchedulerConfiguration, default_config, load_config
from kubesched.config.plugin_args import args_to_dict
from kubesched.errors import InputError
from kubesched.explain import explain

# a safety bound on virtual time: a run that reaches it while nothing timed is left is a hang
UNTIL = 10.0**7


def _load(draw: ScenarioDraw) -> tuple[Scenario, SchedulerConfiguration] | None:
    try:
        sc = load_scenario_text(draw.text(), "fuzz.yaml")
        config = load_config(sc.config, "fuzz.yaml") if sc.config else default_config()
    except InputError:
        return None  # test_fuzz_load's business; here only what loads is simulated
    return sc, config


# the Filter plugin that enforces each rule of the invariant checker
RULE_PLUGIN = {
    inv.UNSCHEDULABLE: "NodeUnschedulable", inv.TAINTS: "TaintToleration",
    inv.NODE_SELECTOR: "NodeAffinity", inv.NODE_AFFINITY: "NodeAffinity",
    inv.HOST_PORTS: "NodePorts", inv.RESOURCES: "NodeResourcesFit",
    inv.POD_COUNT: "NodeResourcesFit", inv.TOPOLOGY_SPREAD: "PodTopologySpread",
    inv.POD_AFFINITY: "InterPodAffinity", inv.POD_ANTI_AFFINITY: "InterPodAffinity",
    inv.EXISTING_ANTI_AFFINITY: "InterPodAffinity",
}


def _allowed_by_config(sim: SimCluster, config: SchedulerConfiguration,
                       v: InvariantViolation) -> bool:
    """Whether the configuration itself lets the pod break the rule: the profile runs
    without the Filter plugin that enforces it, or NodeResourcesFit ignores the resource
    (``ignoredResources``, ``ignoredResourceGroups``: left to extenders upstream)."""
    plugin = RULE_PLUGIN.get(v.rule)
    pod = next((p for p in sim.pods.values() if p.key == v.pod), None)
    if plugin is None or pod is None:
        return False
    fwk = sim.scheduler.profiles[pod.spec.scheduler_name]
    if plugin not in fwk.filter_names:
        return True
    if v.rule != inv.RESOURCES:
        return False
    resource = v.detail.split()[1]
    profile = next(p for p in config.profiles if p.scheduler_name == fwk.profile_name)
    fit = profile.plugin_config.get("NodeResourcesFit")
    args = args_to_dict(fit) if fit is not None else {}
    return (resource in args.get("ignoredResources", ())
            or resource.split("/")[0] in args.get("ignoredResourceGroups", ()))


def _simulate(sc: Scenario, config: SchedulerConfiguration, seed: int, timed: bool) -> None:
    try:
        sim = SimCluster(sc, config, seed=seed, check=True)
    except InputError as err:  # the profiles' plugins checked against the registry
        assert err.field, str(err)
        return
    sim.until = UNTIL
    try:
        with checking_kept_verdicts():  # verdicts kept per node are the filters' own
            result = sim.run()  # any other exception fails the property
    except InvariantViolation as v:
        assert _allowed_by_config(sim, config, v), str(v)
        return
    if not timed:
        assert result.virtual_seconds < UNTIL, "the run went on to the safety bound"
    profiles = {p.scheduler_name for p in config.profiles}
    expected = Counter(p.key for p in sc.pods
                       if not p.spec.node_name and p.spec.scheduler_name in profiles)
    got = Counter(r.key for r in result.records)
    assert got == expected, "a pending pod was lost or recorded twice"
    for rec in result.records:
        if rec.node is None:
            assert rec.message or rec.gates, f"{rec.key} pending without a reason"
    # the API server's view: each pod on one node at most, and that node the record's
    holders = Counter(uid for uids in sim.api._on_node.values() for uid in uids)
    assert not [uid for uid, n in holders.items() if n > 1], "a pod on two nodes"
    for uid, rec in sim.records.items():
        pod = sim.pods.get(uid)
        if pod is not None and pod.spec.node_name:
            assert rec.node == pod.spec.node_name, f"{rec.key}: record and binding disagree"


@given(scenarios(), st.integers(0, 3))
def test_scenarios_simulate_to_the_end_without_violation(draw: ScenarioDraw,
                                                         seed: int) -> None:
    loaded = _load(draw)
    if loaded is not None:
        _simulate(*loaded, seed, draw.timed)


@given(scenarios(with_config=False, max_nodes=6, max_pods=20), configs())
def test_random_configurations_simulate_to_the_end(draw: ScenarioDraw, cfg: dict) -> None:
    try:
        config = load_config(cfg, "config.yaml")
    except InputError as err:
        assert err.field or "profile" in err.message, str(err)
        return
    loaded = _load(draw)
    if loaded is not None:
        _simulate(loaded[0], config, 0, draw.timed)


@given(st.data(), scenarios(max_nodes=6, max_pods=15))
def test_explain_answers_for_any_pending_pod(data: st.DataObject, draw: ScenarioDraw) -> None:
    loaded = _load(draw)
    keys = draw.pending_keys()
    if loaded is None or not keys:
        return
    sc, config = loaded
    key = data.draw(st.sampled_from(keys))
    try:
        out = explain(sc, config, key)
    except InputError as err:
        # the profiles' plugins checked against the registry; or a gated pod, one refused by
        # admission, or a schedulerName no profile serves
        if err.obj == "KubeSchedulerConfiguration" and err.field:
            return
        assert ("gated" in err.message or "can never be scheduled" in err.message
                or "schedulerName" in err.message), str(err)
        return
    assert sorted(row["node"] for row in out["nodes"]) == sorted(n.name for n in sc.nodes)
    feasible = {row["node"] for row in out["nodes"] if row["feasible"]}
    assert set(out["selected"]) <= feasible
    assert (out["message"] is None) == bool(feasible)
    assert bool(out["selected"]) == bool(feasible)


@given(st.data(), scenarios(max_nodes=5, max_pods=12))
def test_mutated_scenarios_that_load_simulate_to_the_end(data: st.DataObject,
                                                         draw: ScenarioDraw) -> None:
    # what a mutation leaves loadable is an odd but valid object: the simulator must cope
    docs = list(draw.docs)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(docs) - 1))
        docs[i] = data.draw(mutated(docs[i])).doc
    mutant = ScenarioDraw(docs, timed=True)  # a mutation may make up an arrival or duration
    loaded = _load(mutant)
    if loaded is not None:
        _simulate(*loaded, 0, mutant.timed)
