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
from kubesched.config.features import FeatureGates
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


def _slice(*devices: str) -> str:
    body = "\n".join(f"  - {d}" for d in devices)
    return f"""apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: d
  nodeName: n1
  pool: {{name: p, resourceSliceCount: 1}}
  devices:
{body}"""


POLICY = ("{{name: a, allowMultipleAllocations: true, "
          "capacity: {{bw: {{value: 10, requestPolicy: {}}}}}}}")


# validation.go's validateDevice for consumable capacity (KEP-5075) and binding conditions
# (KEP-5007), with its messages
@pytest.mark.parametrize(("device", "field", "message"), [
    ("{name: a, capacity: {bw: {value: 10, requestPolicy: {default: 1}}}}",
     "spec.devices[0].capacity[bw].requestPolicy", "allowMultipleAllocations must be true"),
    (POLICY.format("{default: 1, validValues: [1], validRange: {min: 1}}"),
     "spec.devices[0].capacity[bw].requestPolicy", "exactly one policy can be specified"),
    (POLICY.format("{validValues: [1, 2]}"),
     "spec.devices[0].capacity[bw].requestPolicy.default", "required when validValues"),
    (POLICY.format("{default: 1, validValues: [2, 1]}"),
     "spec.devices[0].capacity[bw].requestPolicy.validValues[1]", "sorted in ascending order"),
    (POLICY.format("{default: 1, validValues: [1, 20]}"),
     "spec.devices[0].capacity[bw].requestPolicy.validValues[1]",
     "option is larger than capacity value"),
    (POLICY.format("{default: 3, validValues: [1, 2]}"),
     "spec.devices[0].capacity[bw].requestPolicy.validValues",
     "default value is not valid according to the requestPolicy"),
    (POLICY.format("{default: 2, validRange: {max: 4}}"),
     "spec.devices[0].capacity[bw].requestPolicy.validRange.min", "Required value"),
    (POLICY.format("{default: 1, validRange: {min: 2}}"),
     "spec.devices[0].capacity[bw].requestPolicy.validRange.min", "default is less than min"),
    (POLICY.format("{default: 3, validRange: {min: 2, step: 2}}"),
     "spec.devices[0].capacity[bw].requestPolicy.validRange.step",
     "value is not a multiple of a given step"),
    (POLICY.format("{default: 2, validRange: {min: 2, step: 9}}"),
     "spec.devices[0].capacity[bw].requestPolicy.validRange.step",
     "one step 11 is larger than capacity value"),
    ("{name: a, bindingConditions: [ready]}", "spec.devices[0].bindingFailureConditions",
     "bindingFailureConditions are required to use bindingConditions"),
    ("{name: a, bindingFailureConditions: [failed]}", "spec.devices[0].bindingConditions",
     "bindingConditions are required to use bindingFailureConditions"),
    ("{name: a, bindingConditions: [ready], bindingFailureConditions: [ready]}",
     "spec.devices[0].bindingFailureConditions[0]", "must not overlap with bindingConditions"),
    ("{name: a, bindingConditions: [ready, ready], bindingFailureConditions: [failed]}",
     "spec.devices[0].bindingConditions[1]", "Duplicate value"),
    ("{name: a, bindingConditions: [a, b, c, d, e], bindingFailureConditions: [f]}",
     "spec.devices[0].bindingConditions", "must have at most 4 items"),
])
def test_device_refusals(device: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as ei:
        load_scenario_text(_slice(device))
    assert ei.value.field == field, str(ei.value)
    assert message in str(ei.value)


def test_valid_device_policies_accepted() -> None:
    sc = load_scenario_text(_slice(
        POLICY.format("{default: 2, validRange: {min: 2, step: 2, max: 10}}"),
        "{name: b, bindingConditions: [ready], bindingFailureConditions: [failed], "
        "bindsToNode: true}"))
    a, b = sc.objects["ResourceSlice"][0].devices
    assert a.allow_multiple_allocations
    rng = a.capacity_policies["bw"].valid_range
    assert rng is not None and (rng.min, rng.step, rng.max) == (2, 2, 10)
    assert (b.binding_conditions, b.binding_failure_conditions, b.binds_to_node) == (
        ("ready",), ("failed",), True)


def test_slice_with_devices_and_counters_refused() -> None:
    doc = _slice("{name: a}") + "\n  sharedCounters: [{name: c, counters: {x: {value: 1}}}]"
    with pytest.raises(InputError, match="only one of `sharedCounters` or `devices`"):
        load_scenario_text(doc)


def test_disabled_fields_dropped_per_release() -> None:
    """The 1.35 API server (DRAConsumableCapacity and DRADeviceBindingConditions alpha,
    off) drops their fields from new slices and claims, with a warning; 1.37's keeps them."""
    doc = _slice(POLICY.format("{default: 2, validRange: {min: 2}}"),
                 "{name: b, bindingConditions: [ready], bindingFailureConditions: [failed], "
                 "bindsToNode: true}")
    old = load_scenario_text(doc, release="1.35", gates=FeatureGates("1.35").enabled)
    a, b = old.objects["ResourceSlice"][0].devices
    assert not a.allow_multiple_allocations and not a.capacity_policies
    assert (b.binding_conditions, b.binds_to_node) == ((), False)
    assert any("spec.devices[0].allowMultipleAllocations" in w and "bindsToNode" in w
               for w in old.warnings)
    new = load_scenario_text(doc, gates=FeatureGates("1.37").enabled)
    a, b = new.objects["ResourceSlice"][0].devices
    assert a.allow_multiple_allocations and b.binds_to_node and not new.warnings


def test_distinct_attribute_dropped_then_refused_in_1_35() -> None:
    # dropped by the strategy, the constraint is then empty, which validation refuses
    claim = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: x, capacity: {requests: {bw: 1}}}}]
    constraints: [{distinctAttribute: d/numa}]"""
    with pytest.raises(InputError) as ei:
        load_scenario_text(claim, release="1.35", gates=FeatureGates("1.35").enabled)
    assert ei.value.field == "spec.devices.constraints[0]"
    sc = load_scenario_text(claim)  # 1.37: kept
    (c,) = sc.objects["ResourceClaim"]
    assert c.spec.constraints[0].distinct_attribute == "d/numa"
    assert c.spec.requests[0].exactly is not None
    assert c.spec.requests[0].exactly.capacity_requests == {"bw": 1}


def test_claim_status_round_trip() -> None:
    """The status the kube backend writes (encode_claim_status) reads back the same: the
    shares, consumed capacity, binding conditions, allocation time and device statuses."""
    from kubesched.api.dra.types import parse_resource_claim
    from kubesched.api.encode import encode_claim_status
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": "c", "namespace": "default"},
           "spec": {"devices": {"requests": [{"name": "r", "exactly": {
               "deviceClassName": "x"}}]}},
           "status": {
               "allocation": {
                   "allocationTimestamp": "2026-01-02T03:04:05Z",
                   "devices": {"results": [{
                       "request": "r", "driver": "d", "pool": "p", "device": "nic",
                       "shareID": "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
                       "consumedCapacity": {"bw": "1536Mi", "x": "500m"},
                       "bindingConditions": ["ready"],
                       "bindingFailureConditions": ["failed"]}]}},
               "devices": [{"driver": "d", "pool": "p", "device": "nic",
                            "shareID": "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
                            "conditions": [{"type": "ready", "status": "True",
                                            "reason": "Attached", "message": "ok"}]}]}}
    claim = parse_resource_claim(doc)
    again = parse_resource_claim({**doc, "status": encode_claim_status(claim)})
    assert again.allocation == claim.allocation and again.devices == claim.devices
    (r,) = claim.allocation.results if claim.allocation else ()
    assert r.consumed_capacity == {"bw": Fraction(1536 * 2**20), "x": Fraction(1, 2)}
    assert claim.devices[0].conditions[0].reason == "Attached"


def test_allow_multiple_allocations_unknown_to_cel_in_1_35() -> None:
    cls = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}]"""
    with pytest.raises(InputError) as ei:
        load_scenario_text(cls, release="1.35", gates=FeatureGates("1.35").enabled)
    assert ei.value.field == "spec.selectors[0].cel.expression"
    assert "undefined field 'allowMultipleAllocations'" in str(ei.value)
    load_scenario_text(cls, gates=FeatureGates("1.37").enabled)  # known from 1.36


# ---------------------------------------------------------------- list-type attributes
# (DRAListTypeAttributes, KEP-5491: alpha in 1.36 and 1.37, unknown to 1.35)

LISTS_ON = FeatureGates("1.37", (("DRAListTypeAttributes", True),)).enabled

LISTED = device_input("gpu.example.com",
                      {"numa": (0, 1), "links": ("nv0", "nv1"), "healthy": (True,),
                       "fw": (Semver("1.0.0"), Semver("2.1.0+build")), "model": "a100",
                       "many": tuple(range(60))},
                      {})


@pytest.mark.parametrize(("expr", "want"), [
    ('device.attributes["gpu.example.com"].numa.includes(1)', True),
    ('device.attributes["gpu.example.com"].numa.includes(2)', False),
    ('device.attributes["gpu.example.com"].numa.includes(1.0)', True),  # CEL: 1 == 1.0
    ('device.attributes["gpu.example.com"].healthy.includes(true)', True),
    ('device.attributes["gpu.example.com"].numa.includes(true)', False),  # true != 1
    ('device.attributes["gpu.example.com"].links.includes("nv1")', True),
    ('device.attributes["gpu.example.com"].fw.includes(semver("2.1.0"))', True),
    ('device.attributes["gpu.example.com"].model.includes("a100")', True),  # a scalar
    ('device.attributes["gpu.example.com"].model.includes("h100")', False),
    ('device.attributes["gpu.example.com"].many.includes(47)', True),  # found in time
    ('"nv0" in device.attributes["gpu.example.com"].links', True),
    ('device.attributes["gpu.example.com"].numa.all(n, n < 2)', True),
    ('device.attributes["gpu.example.com"].fw.exists(v, v.isGreaterThan(semver("2.0.0")))',
     True),
    ('device.attributes["gpu.example.com"].links.size() == 2', True),
])
def test_list_attributes_in_selectors(expr: str, want: bool) -> None:
    compiled = compile_selector(expr)
    assert not isinstance(compiled, CelCompileError), compiled
    assert compiled.device_matches(LISTED) is want


@pytest.mark.parametrize(("expr", "error"), [
    # upstream bounds includes' cost: a list longer than a device may hold is an error
    ('device.attributes["gpu.example.com"].many.includes(59)',
     "'includes' function cannot be applied to lists longer than 48 values"),
    ('device.attributes["gpu.example.com"].numa',
     "CEL result of type list could not be converted to bool"),
])
def test_list_attributes_runtime_errors(expr: str, error: str) -> None:
    compiled = compile_selector(expr)
    assert not isinstance(compiled, CelCompileError), compiled
    with pytest.raises(CelRuntimeError, match=error):
        compiled.device_matches(LISTED)


def test_list_attributes_read() -> None:
    sc = load_scenario_text(_slice(
        "{name: a, attributes: {numa: {ints: [0, 1]}, ok: {bools: [true]}, "
        "links: {strings: [x, y]}, fw: {versions: [1.0.0]}, model: {string: a100}}}"),
        gates=LISTS_ON)
    (dev,) = sc.objects["ResourceSlice"][0].devices
    assert dev.attributes == {"numa": (0, 1), "ok": (True,), "links": ("x", "y"),
                              "fw": (Semver("1.0.0"),), "model": "a100"}
    assert not sc.warnings


# validation.go's validateDevice / validateDeviceAttribute, with its messages
@pytest.mark.parametrize(("device", "field", "message"), [
    ("{name: a, attributes: {numa: {ints: []}}}", "spec.devices[0].attributes[numa].ints",
     "must not be empty if specified"),
    ("{name: a, attributes: {numa: {}}}", "spec.devices[0].attributes[numa]",
     "exactly one value must be specified"),
    ("{name: a, attributes: {m: {string: x, strings: [y]}}}", "spec.devices[0].attributes[m]",
     "exactly one value must be specified"),
    ("{name: a, attributes: {m: {ints: [1], bools: [true]}}}", "spec.devices[0].attributes[m]",
     "exactly one value must be specified"),
    ("{name: a, attributes: {m: {strings: [x, " + "y" * 65 + "]}}}",
     "spec.devices[0].attributes[m].strings[1]", "Too long: may not be more than 64 bytes"),
    ("{name: a, attributes: {m: {string: " + "y" * 65 + "}}}",
     "spec.devices[0].attributes[m].string", "Too long: may not be more than 64 bytes"),
    ("{name: a, attributes: {fw: {versions: [1.0.0, '1.0']}}}",
     "spec.devices[0].attributes[fw].versions[1]", "compatible with semver.org spec 2.0.0"),
    ("{name: a, attributes: {a: {ints: [" + ", ".join(map(str, range(40))) + "]}, "
     "b: {strings: [" + ", ".join(f"s{i}" for i in range(8)) + "]}, c: {int: 1}}}",
     "spec.devices[0]", "the total number of attribute values must not exceed 48"),
    ("{name: a, attributes: {" + ", ".join(f"a{i}: {{int: {i}}}" for i in range(30)) + "}, "
     "capacity: {x: {value: 1}, y: {value: 1}, z: {value: 1}}}",
     "spec.devices[0]", "the total number of attributes and capacities must not exceed 32"),
])
def test_list_attribute_refusals(device: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as ei:
        load_scenario_text(_slice(device), gates=LISTS_ON)
    assert ei.value.field == field, str(ei.value)
    assert message in str(ei.value)


def test_list_attributes_at_the_limit_accepted() -> None:
    # 47 list items and one scalar: 48 values
    sc = load_scenario_text(_slice(
        "{name: a, attributes: {a: {ints: [" + ", ".join(map(str, range(47))) + "]}, "
        "c: {int: 1}}}"), gates=LISTS_ON)
    assert len(sc.objects["ResourceSlice"][0].devices[0].attributes["a"]) == 47


MIXED = "{name: a, attributes: {model: {string: x, strings: [y]}, numa: {int: 1}}}"


@pytest.mark.parametrize("release", ["1.36", "1.37"])
def test_list_attributes_dropped_with_the_gate_off(release: str) -> None:
    """Gate off (alpha, the default): the strategy drops the lists with a warning, and an
    attribute left without a value is then refused."""
    gates = FeatureGates(release).enabled
    sc = load_scenario_text(_slice(MIXED), release=release, gates=gates)
    assert sc.objects["ResourceSlice"][0].devices[0].attributes == {"model": "x", "numa": 1}
    assert any("spec.devices[0].attributes[model].strings dropped" in w for w in sc.warnings)
    with pytest.raises(InputError) as ei:
        load_scenario_text(_slice("{name: a, attributes: {numa: {ints: [0, 1]}}}"),
                           release=release, gates=gates)
    assert ei.value.field == "spec.devices[0].attributes[numa]"
    assert "exactly one value must be specified" in str(ei.value)


def test_list_attributes_unknown_to_1_35() -> None:
    # not a field of 1.35's API: the unknown-field warning (strict decoding: an error), no
    # disabled-gate warning
    sc = load_scenario_text(_slice(MIXED), release="1.35", gates=FeatureGates("1.35").enabled)
    assert sc.objects["ResourceSlice"][0].devices[0].attributes == {"model": "x", "numa": 1}
    assert len(sc.warnings) == 1 and 'unknown field "spec.devices[0].attributes[model].' \
        'strings"' in sc.warnings[0]
    with pytest.raises(InputError, match="strict decoding error"):
        load_scenario_text(_slice(MIXED), release="1.35", strict=True,
                           gates=FeatureGates("1.35").enabled)


def test_includes_unknown_to_new_expressions_with_the_gate_off() -> None:
    cls = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.attributes["d"].numa.includes(0)'}}]"""
    with pytest.raises(InputError) as ei:
        load_scenario_text(cls, gates=FeatureGates("1.37").enabled)
    assert ei.value.field == "spec.selectors[0].cel.expression"
    assert "undeclared reference to 'includes'" in str(ei.value)
    load_scenario_text(cls, gates=LISTS_ON)
