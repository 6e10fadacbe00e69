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
