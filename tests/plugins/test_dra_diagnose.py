"""``explain``'s detail behind DynamicResources' "cannot allocate all claims": per claim and
request, the devices the node reaches narrowed down to too few — in the JSON ``detail``
and the table."""

from __future__ import annotations

from typing import Any

from kubesched.api.scenario import load_scenario_text
from kubesched.cli import explain_rows
from kubesched.config import default_config
from kubesched.explain import explain

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
"""
NODE = """
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
"""
SLICE = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: %d}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}}
  - {name: gpu-1, attributes: {model: {string: a100}}}
  - {name: gpu-2, attributes: {model: {string: h100}}}
"""
OTHER = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: other, namespace: default}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]
"""
POD = """
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: x%s}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]
"""
A100 = "[{cel: {expression: 'device.attributes[\"gpu.example.com\"].model == \"a100\"'}}]"


def claim(requests: str, constraints: str = "") -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: gpu-claim, namespace: default}}
spec:
  devices:
    requests: {requests}{constraints}
"""


def run(*docs: str) -> dict[str, Any]:
    return explain(load_scenario_text("".join(docs)), default_config(), "default/p")


def detail(out: dict[str, Any]) -> list[str]:
    (row,) = out["nodes"]
    assert row["plugin"] == "DynamicResources"
    assert row["reasons"] == ["cannot allocate all claims"]  # upstream's verdict stays
    return list(row["detail"])


def test_selectors_and_other_claims_narrow_the_devices() -> None:
    out = run(CLASS, NODE, SLICE % 1, OTHER, POD % "", claim(
        "[{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2, "
        f"selectors: {A100}}}}}]"))
    want = ("claim default/gpu-claim, request gpu: needs 2 devices of class gpu.example.com; "
            "3 devices on the node, 3 of class gpu.example.com, 2 matching the request's "
            "selectors, 1 free (1 allocated to other claims)")
    assert detail(out) == [want]
    # the table shows it under the verdict
    (row,) = explain_rows(out, None)
    assert row[2] == "DynamicResources: cannot allocate all claims\n  " + want


def test_no_devices_on_the_node() -> None:
    out = run(CLASS, NODE, POD % "", claim(
        "[{name: gpu, exactly: {deviceClassName: gpu.example.com}}]"))
    assert detail(out) == [
        "claim default/gpu-claim, request gpu: needs 1 device of class gpu.example.com; "
        "0 devices on the node, 0 of class gpu.example.com, 0 free"]


def test_requests_that_fit_alone_but_not_together() -> None:
    # each request alone finds a device, but matchAttribute wants one model for both and
    # only the h100 and one a100 are free
    out = run(CLASS, NODE, SLICE % 1, OTHER, POD % "", claim(
        "[{name: a, exactly: {deviceClassName: gpu.example.com}}, "
        "{name: b, exactly: {deviceClassName: gpu.example.com, count: 2}}]",
        "\n    constraints: [{matchAttribute: gpu.example.com/model}]"))
    assert detail(out)[-1] == (
        "every request alone has enough free devices; together they cannot be satisfied "
        "(constraints, or requests competing for the same devices)")


def test_prioritized_list_lists_every_alternative() -> None:
    out = run(CLASS, NODE, SLICE % 1, OTHER, POD % "", claim(
        "[{name: gpu, firstAvailable: [{name: big, deviceClassName: gpu.example.com, "
        "count: 3}, {name: a100s, deviceClassName: gpu.example.com, count: 2, "
        f"selectors: {A100}}}]}}]"))
    assert detail(out) == [
        "claim default/gpu-claim, request gpu/big: needs 3 devices of class "
        "gpu.example.com; 3 devices on the node, 3 of class gpu.example.com, 2 free "
        "(1 allocated to other claims)",
        "claim default/gpu-claim, request gpu/a100s: needs 2 devices of class "
        "gpu.example.com; 3 devices on the node, 3 of class gpu.example.com, 2 matching the "
        "request's selectors, 1 free (1 allocated to other claims)"]


def test_incomplete_pool_is_noted() -> None:
    out = run(CLASS, NODE, SLICE % 2, POD % "", claim(
        "[{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 4}}]"))
    assert detail(out)[-1] == ("pool gpu.example.com/n1 is incomplete (not all of its 2 "
                               "slices are published)")


def test_extended_resource_claim() -> None:
    cls = CLASS.replace("spec:\n", "spec:\n  extendedResourceName: example.com/gpu\n")
    pod = (POD % ", resources: {requests: {example.com/gpu: '3'}, "
           "limits: {example.com/gpu: '3'}}").replace(
        "\n  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]", "")
    out = run(cls, NODE, SLICE % 1, OTHER, pod)
    assert detail(out) == [
        "the pod's extended-resource claim, request container-0-request-0: needs 3 devices "
        "of class gpu.example.com; 3 devices on the node, 3 of class gpu.example.com, "
        "2 free (1 allocated to other claims)"]
