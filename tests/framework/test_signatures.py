"""Pod signatures (OpportunisticBatching): upstream's TestPodAffinitySignature, and what makes
a pod unsignable (PodTopologySpread's default constraints, DRAExtendedResource for the
resource plugins, a plugin without ``sign_pod``)."""

from __future__ import annotations

import pytest

from kubesched.api.scenario import load_scenario_text
from kubesched.config.features import FeatureGates
from kubesched.framework import signers
from kubesched.framework.handle import Handle
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.podtopologyspread import PodTopologySpread


def pod(extra: str = "", labels: str = "{foo: bar}") -> object:
    text = (f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, labels: {labels}}}\n"
            f"spec:\n  containers: [{{name: c, image: x}}]\n{extra}")
    return load_scenario_text(text).pods[0]


@pytest.mark.parametrize("args, extra, want", [
    ({}, "", ((signers.LABELS, (("foo", "bar"),)),)),  # no affinity, default settings
    ({"ignorePreferredTermsOfExistingPods": True}, "", ()),  # no affinity, ignore set
    ({}, "  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "[{topologyKey: zone, labelSelector: {}}]}}\n", None),  # affinity set
])
def test_pod_affinity_signature(args, extra, want):
    pl = InterPodAffinity(args, Handle())
    assert pl.sign_pod(pod(extra)) == want


def test_topology_spread_signs_only_without_constraints():
    system = PodTopologySpread({"defaultingType": "System"}, Handle())
    empty = PodTopologySpread({"defaultingType": "List", "defaultConstraints": []}, Handle())
    assert system.sign_pod(pod()) is None  # default constraints: not signable
    assert empty.sign_pod(pod()) == ()
    spread = ("  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
              "whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]\n")
    assert empty.sign_pod(pod(spread)) is None


@pytest.mark.parametrize("version, signable", [("1.35", True), ("1.36", False),
                                               ("1.37", False)])
def test_resources_unsignable_with_dra_extended_resource(version, signable):
    fit = Fit({}, Handle(features=FeatureGates(version)))
    assert (fit.sign_pod(pod()) is not None) == signable


@pytest.mark.parametrize("version, enabled", [("1.35", True), ("1.37", False)])
def test_profile_signs_nothing_when_a_plugin_signs_no_pod(version, enabled):
    """NodeResourcesFit signs no pod under DRAExtendedResource (1.36 on): the framework
    learns it once and signs no pod of the profile, as asking every plugin would."""
    from kubesched.config import load_config
    from kubesched.framework.runtime import Framework
    from kubesched.plugins.registry import in_tree_registry

    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler",
                                     "pluginConfig": [{"name": "PodTopologySpread", "args": {
                                         "defaultingType": "List", "defaultConstraints": []}}]}]},
                      features=FeatureGates(version))
    fwk = Framework(cfg.profiles[0], in_tree_registry(), Handle(features=cfg.features), 0)
    assert fwk.signatures_enabled() == enabled
    assert (fwk.sign_pod(pod()) is not None) == enabled
