"""DRA objects: the CEL environment of selectors, loading resource.k8s.io objects, the
API server's refusals, and claims generated from templates."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.api.dra.cel import (
    CelCompileError,
    CelRuntimeError,
    Semver,
    compile_selector,
    device_input,
)
from kubesched.api.dra.types import ResourceClaim, generated_claim_name
from kubesched.api.scenario import load_scenario_text
from kubesched.errors import InputError

GPU = device_input("gpu.example.com",
                   {"model": "a100", "other.io/numa": 3, "driverVersion": Semver("1.2.3"),
                    "healthy": True},
                   {"memory": Fraction(80 * 2**30)})


@pytest.mark.parametrize(("expr", "want"), [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model == "a100"', True),
    ('device.attributes["other.io"].numa == 3', True),
    ('device.attributes["gpu.example.com"].healthy', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))', False),
    ('quantity("1Gi") == quantity("1024Mi")', True),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.2.3").major() == 1 && isSemver("1.0") == false', True),
    ('has(device.attributes["unknown.io"].x)', False),  # unknown domain: an empty map
    ('has(device.attributes["gpu.example.com"].model)', True),
    ('cel.bind(g, device.attributes["gpu.example.com"], g.model.startsWith("a1"))', True),
    ('"A100".lowerAscii() == device.attributes["gpu.example.com"].model', True),
    ('device.attributes["gpu.example.com"].model.matches("^a[0-9]+$")', True),
])
def test_selector_environment(expr: str, want: bool) -> None:
    compiled = compile_selector(expr)
    assert not isinstance(compiled, CelCompileError), compiled
    assert compiled.device_matches(GPU) is want


@pytest.mark.parametrize(("expr", "detail"), [
    ("device.driver ==", "compilation failed: ERROR: <input>:1:"),
    ("1 + 1", "must evaluate to bool or the unknown type, not int"),
    ('"a".nosuch()', "undeclared reference to 'nosuch'"),
])
def test_compile_errors(expr: str, detail: str) -> None:
    compiled = compile_selector(expr)
    assert isinstance(compiled, CelCompileError)
    assert detail in compiled.detail


def test_runtime_errors() -> None:
    compiled = compile_selector('device.attributes["gpu.example.com"].nope == 1')
    assert not isinstance(compiled, CelCompileError)
    with pytest.raises(CelRuntimeError, match="nope"):
        compiled.device_matches(GPU)


SCENARIO = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: a100}, driverVersion: {version: 1.2.3}}
    capacity: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: n1-nic}
spec:
  driver: nic.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: nic-0
    basic: {attributes: {speed: {int: 100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.example.com
      count: 1
---
apiVersion: v1
kind: Pod
metadata: {name: train, uid: uid-train}
spec:
  containers: [{name: c, image: x}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
  - {name: shared, resourceClaimName: shared}
"""


def test_load_dra_objects() -> None:
    sc = load_scenario_text(SCENARIO)
    (cls,) = sc.objects["DeviceClass"]
    assert cls.selectors == ('device.driver == "gpu.example.com"',)
    gpu, nic = sc.objects["ResourceSlice"]
    assert gpu.devices[0].attributes == {"model": "a100", "driverVersion": Semver("1.2.3")}
    assert gpu.devices[0].capacity == {"memory": Fraction(80 * 2**30)}
    assert nic.devices[0].attributes == {"speed": 100}  # v1beta1's basic, unwrapped
    shared = next(c for c in sc.objects["ResourceClaim"] if c.name == "shared")
    req = shared.spec.requests[0]
    assert req.exactly is not None and req.exactly.device_class_name == "gpu.example.com"
    (pod,) = sc.pods
    assert [c.resource_claim_template_name for c in pod.spec.pod_resource_claims] == [
        "one-gpu", ""]
    # the resourceclaim controller's claim, owned by the pod and recorded in its status
    name = pod.status.resource_claim_statuses["gpu"]
    assert name == generated_claim_name("train", "gpu") and name.startswith("train-gpu-")
    generated: ResourceClaim = next(c for c in sc.objects["ResourceClaim"] if c.name == name)
    assert generated.metadata.owner_references[0].uid == "uid-train"
    assert generated.spec.requests[0].name == "gpu"


@pytest.mark.parametrize(("doc", "message"), [
    ("""apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: bad}
spec:
  selectors: [{cel: {expression: 'device.driver =='}}]""",
     "spec.selectors[0].cel.expression: Invalid value"),
    ("""apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dup}
spec:
  driver: d
  nodeName: n1
  pool: {name: p, resourceSliceCount: 1}
  devices: [{name: a}, {name: a}]""", "spec.devices[1].name: Duplicate value"),
    ("""apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: t}
spec:
  deviceSelector: {driver: d}
  taint: {key: k, effect: NoSchedule}""", "apiVersion"),
    # resource.CELSelectorExpressionMaxLength: 10 KiB, checked before compiling
    ("""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: long, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: c
        selectors: [{cel: {expression: '%s'}}]""" % ("true && " * 1280 + "true"),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression: Too long: may not be "
     "more than 10240 bytes"),
])
def test_api_server_refusals(doc: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_scenario_text(doc, release="1.35")
