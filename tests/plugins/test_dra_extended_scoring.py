"""NodeResourcesFit scoring an extended resource backed by a DeviceClass (DRAExtendedResource):
upstream's ``noderesources/resource_allocation_test.go`` TestCalculateResourceAllocatableRequest
(stored version with DRA, 9 cases: all ported), and the score itself in both forms."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.scenario import Scenario, load_scenario_text
from kubesched.api.types import Pod
from kubesched.config.features import FeatureGates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import NodeInfo
from kubesched.plugins.dynamicresources.extended import DEVICE_CLASS_PREFIX
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.dra_extended import dra_score_state
from kubesched.plugins.noderesources.fit import Fit
from kubesched.testing import snapshot_from_nodes

NODE = "resource-node"
DRIVER = "test-driver"
CLASS_NAME = "my-resource-class"
EXPLICIT = "example.com/gpu"
IMPLICIT = DEVICE_CLASS_PREFIX + CLASS_NAME


def node(capacity: str = "", labels: str = "") -> str:
    extra = f", {EXPLICIT}: '{capacity}'" if capacity else ""
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {NODE}, labels: {{{labels}}}}}\n"
            f"status: {{allocatable: {{cpu: '8', memory: 8Gi, pods: '110'{extra}}}}}")


def device_class(explicit: bool = True, selector: str = "") -> str:
    spec = [f"extendedResourceName: {EXPLICIT}"] if explicit else []
    if selector:
        spec.append(f"selectors: [{{cel: {{expression: '{selector}'}}}}]")
    return (f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {{name: {CLASS_NAME}}}\n"
            f"spec: {{{', '.join(spec)}}}")


def slice_(*devices: str) -> str:
    devs = ", ".join(f"{{name: {d}}}" for d in devices)
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
            f"spec: {{driver: {DRIVER}, nodeName: {NODE}, pool: {{name: {NODE}, generation: 1, "
            f"resourceSliceCount: 1}}, devices: [{devs}]}}")


def allocated(name: str, device: str, share: str = "", pool: str = NODE) -> str:
    """A claim of the class holding ``device`` (shared with a shareID when ``share``)."""
    sid = f", shareID: {share}" if share else ""
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
            f"metadata: {{name: {name}, namespace: default, uid: {name}}}\n"
            f"spec: {{devices: {{requests: [{{name: req-1, exactly: {{deviceClassName: "
            f"{CLASS_NAME}}}}}]}}}}\n"
            "status:\n  allocation:\n    devices:\n"
            f"      results: [{{request: req-1, driver: {DRIVER}, pool: {pool}, "
            f"device: {device}{sid}}}]\n")


# the per-device-node-selection case's class and slice (upstream's "realistic GPU selection")
GPU_SELECTOR = ('device.driver == "test-driver" && device.capacity["test-driver"].memory'
                '.compareTo(quantity("8Gi")) >= 0 && '
                'device.attributes["test-driver"].model.startsWith("SOME-")')
PER_DEVICE_SLICE = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: per-device-slice}}
spec:
  driver: {DRIVER}
  pool: {{name: per-device-pool, resourceSliceCount: 1}}
  perDeviceNodeSelection: true
  devices:
  - {{name: device-1, nodeName: {NODE}, attributes: {{model: {{string: SOME-XYZ}}}},
     capacity: {{memory: {{value: 16Gi}}}}}}
  - {{name: device-2, nodeName: other-node, attributes: {{model: {{string: SOME-ZYX}}}},
     capacity: {{memory: {{value: 12Gi}}}}}}
  - name: device-3
    nodeSelector: {{nodeSelectorTerms: [{{matchExpressions: [{{key: zone, operator: In,
                                                               values: [us-east-1a]}}]}}]}}
    attributes: {{model: {{string: SOME-XZY}}}}
    capacity: {{memory: {{value: 24Gi}}}}
"""


@pytest.mark.parametrize(("enabled", "nd", "resource", "objects", "want"), [
    (False, node("4"), EXPLICIT, [], (4, 1)),
    (True, node("4"), EXPLICIT, [], (4, 1)),
    (True, node(), EXPLICIT, [device_class(), slice_("device-1")], (1, 1)),
    (True, node(), IMPLICIT, [device_class(explicit=False), slice_("device-1")], (1, 1)),
    (True, node(), EXPLICIT, [device_class()], (0, 0)),
    (True, node(), EXPLICIT, [device_class(), slice_("device-1", "device-2"),
                              allocated("test-claim", "device-1")], (2, 2)),
    (True, node(), EXPLICIT, [device_class(), slice_("device-1", "device-2"),
                              allocated("test-claim", "device-1", "share-123")], (2, 2)),
    (True, node(), EXPLICIT, [device_class(), slice_("device-1", "device-2", "device-3"),
                              allocated("test-claim-1", "device-1"),
                              allocated("test-claim-2", "device-2", "share-456")], (3, 3)),
    (True, node(labels="zone: us-east-1a"), EXPLICIT,
     [device_class(selector=GPU_SELECTOR), PER_DEVICE_SLICE,
      allocated("test-claim", "device-1", pool="per-device-pool")], (2, 2)),
], ids=["device-plugin-resource-feature-disabled", "device-plugin-resource-feature-enabled",
        "DRA-backed-resource-explicit", "DRA-backed-resource-implicit",
        "DRA-backed-resource-no-slices", "DRA-backed-resource-with-allocated-device",
        "DRA-backed-resource-with-shared-device-allocation",
        "DRA-backed-resource-multiple-devices-mixed-allocation",
        "DRA-backed-resource-with-per-device-node-selection"])
def test_calculate_resource_allocatable_request(enabled: bool, nd: str, resource: str,
                                                objects: list[str],
                                                want: tuple[int, int]) -> None:
    sc = load_scenario_text("\n---\n".join([nd, *objects]))
    fit = Fit({"scoringStrategy": {"type": "LeastAllocated",
                                   "resources": [{"name": resource, "weight": 1}]}}, Handle())
    dra = dra_score_state(sc.objects, None, [resource]) if enabled else None
    requested, allocatable = fit.scorer.node_values(NodeInfo(sc.nodes[0]), (1,), dra)
    assert (allocatable[0], requested[0]) == want


# ---------------------------------------------------------------- the score, both forms


def cluster(cpu: str = "") -> tuple[Scenario, Pod]:
    """Nodes ``four`` (4 devices of the class, one held), ``two`` (2 free), ``plugin`` (a
    device plugin's 8) and ``bare`` (neither); a pod asking one (and ``cpu``)."""
    nodes = []
    for name, extra in (("four", ""), ("two", ""), ("plugin", f", {EXPLICIT}: '8'"),
                        ("bare", "")):
        nodes.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
                     f"status: {{allocatable: {{cpu: '8', memory: 8Gi, pods: '110'{extra}}}}}")
    slices = [slice_("d1", "d2", "d3", "d4").replace(NODE, "four").replace("name: s}",
                                                                             "name: s4}"),
              slice_("d1", "d2").replace(NODE, "two").replace("name: s}", "name: s2}")]
    held = allocated("held", "d1", pool="four")
    req = f"{EXPLICIT}: '1'" + (f", cpu: '{cpu}'" if cpu else "")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
           f"spec: {{containers: [{{name: c, resources: {{requests: {{{req}}}, "
           f"limits: {{{req}}}}}}}]}}")
    sc = load_scenario_text("\n---\n".join([*nodes, device_class(), *slices, held, pod]))
    return sc, next(x for x in sc.pods if not x.spec.node_name)


def test_balanced_allocation_counts_dra_backed_devices() -> None:
    """BalancedAllocation (1.37: the change in balance) over cpu and the DRA-backed resource,
    pod asking 1 cpu of 8 and one device: ``two`` 1 of 2 devices (fractions 0.125, 0.5:
    81 with the pod, 100 without: 50 + (50 + 81 - 100) // 2 = 65); ``four`` 2 of 4 with the
    pod, 1 of 4 without (81, 87: 72); ``plugin`` 1 of 8 (100, 100: 75); ``bare`` leaves
    the resource out (75). The table form agrees."""
    sc, p = cluster(cpu="1")
    ba = BalancedAllocation({"resources": [{"name": "cpu", "weight": 1},
                                           {"name": EXPLICIT, "weight": 1}]},
                            Handle(objects=sc.objects, features=FeatureGates("1.37")))
    state = CycleState()
    assert ba.pre_score(state, p, []) is None  # type: ignore[arg-type]
    per_node = {n.name: ba.score(state, p, NodeInfo(n)) for n in sc.nodes}
    assert per_node == {"four": 72, "two": 65, "plugin": 75, "bare": 75}
    snap = snapshot_from_nodes(sc.nodes, [])
    batch = ba.score_batch(state, p, snap, np.arange(snap.num_nodes))
    assert dict(zip(snap.table.names, batch.tolist(), strict=True)) == per_node


def test_least_allocated_scores_dra_backed_devices() -> None:
    """LeastAllocated over the DRA-backed resource: a node with 4 devices, 1 held, scores
    (4 - 2) * 100 / 4 = 50 for a pod asking 1; one with 2 free of 2 scores 50 too after
    (2 - 1) * 100 / 2; a device plugin's 8 of 8 free scores (8 - 1) * 100 / 8 = 87; a node
    with neither leaves the resource out (0). The table form agrees."""
    sc, p = cluster()
    fit = Fit({"scoringStrategy": {"type": "LeastAllocated",
                                   "resources": [{"name": EXPLICIT, "weight": 1}]}},
              Handle(objects=sc.objects, features=FeatureGates("1.37")))
    state = CycleState()
    assert fit.pre_score(state, p, []) is None  # type: ignore[arg-type]
    per_node = {n.name: fit.score(state, p, NodeInfo(n)) for n in sc.nodes}
    assert per_node == {"four": 50, "two": 50, "plugin": 87, "bare": 0}
    snap = snapshot_from_nodes(sc.nodes, [])
    batch = fit.score_batch(state, p, snap, np.arange(snap.num_nodes))
    assert dict(zip(snap.table.names, batch.tolist(), strict=True)) == per_node
    # with the gate off (1.35) the devices are not counted
    off = Fit(fit.args, Handle(objects=sc.objects, features=FeatureGates("1.35")))
    state = CycleState()
    off.pre_score(state, p, [])  # type: ignore[arg-type]
    assert {n.name: off.score(state, p, NodeInfo(n)) for n in sc.nodes}["four"] == 0
