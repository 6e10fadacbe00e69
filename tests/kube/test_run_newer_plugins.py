"""``kubesched run`` with what the newer plugins read, against the API server double: gangs
(scheduler-plugins' PodGroup CRD, upstream's Workload API), DRA (classes, slices, claims;
the claim status written at PreBind), an HTTP extender, and an out-of-tree plugin."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kube_double import ApiServerDouble, node, pod
from kube_helpers import make_runner, wait_until

from kubesched.config import load_config

COSCHEDULING_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "kubesched",
        "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}],
                                  "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 5}}],
    }],
}


def member(name: str, group: str, cpu: str) -> dict[str, Any]:
    p = pod(name, cpu=cpu)
    p["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    return p


def pod_group(name: str, min_member: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minMember": min_member}}


def bound_of(double: ApiServerDouble, prefix: str) -> list[str]:
    return sorted(k for k in double.bound_pods() if k.startswith(f"default/{prefix}"))


def test_coscheduling_gang_binds_all_or_nothing(double: ApiServerDouble, kubeconfig: str,
                                                runners: list) -> None:
    for i in range(2):
        double.create(node(f"n{i}", cpu="2"))
    double.create(member("trainer-0", "trainer", "1"))
    double.create(member("trainer-1", "trainer", "1"))
    r = make_runner(kubeconfig, runners, config=load_config(COSCHEDULING_CONFIG))
    # no PodGroup yet, then one whose quorum is not there: nobody binds
    time.sleep(0.8)
    assert bound_of(double, "trainer") == []
    double.create(pod_group("trainer", 3))  # the PodGroup Add event brings them back
    wait_until(lambda: len(r.sched.handle.objects["PodGroup"]) == 1, what="PodGroup seen")
    time.sleep(0.8)
    assert bound_of(double, "trainer") == []
    double.create(member("trainer-2", "trainer", "1"))  # the quorum arrives: all three bind
    wait_until(lambda: len(bound_of(double, "trainer")) == 3, what="the gang bound")

    # 1 cpu left: a gang of three 500m members cannot fit, so none of it binds, and what its
    # first members reserved is released for the pod after it
    double.create(pod_group("big", 3))
    for i in range(3):
        double.create(member(f"big-{i}", "big", "500m"))
    wait_until(lambda: any(e["regarding"]["name"].startswith("big-")
                           for e in double.events("FailedScheduling")), what="the gang refused")
    double.create(pod("plain", cpu="1"))
    wait_until(lambda: "default/plain" in double.bound_pods(), timeout=15,
               what="the plain pod bound in the room the gang released")
    time.sleep(0.3)
    assert bound_of(double, "big") == []
    notes = {e["note"] for e in double.events("FailedScheduling")
             if e["regarding"]["name"].startswith("big-")}
    assert any("PodGroup default/big" in n for n in notes), notes


def test_both_pod_group_kinds_and_workloads_are_watched(double: ApiServerDouble,
                                                        kubeconfig: str, runners: list) -> None:
    from kubesched.api.gangs import api_group

    double.create(pod_group("job", 2))
    double.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                   "metadata": {"name": "job", "namespace": "default"},
                   "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    double.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                   "metadata": {"name": "job", "namespace": "default"},
                   "spec": {"podGroupTemplates": [
                       {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}})
    r = make_runner(kubeconfig, runners)
    objs = r.sched.handle.objects
    wait_until(lambda: len(objs["PodGroup"]) == 2 and len(objs["Workload"]) == 1,
               what="gang objects seen")
    assert sorted(api_group(o) for o in objs["PodGroup"]) == [
        "scheduling.k8s.io", "scheduling.x-k8s.io"]
    # one of two same-named objects deleted: the other stays
    double.delete("PodGroup", "job")  # scheduler-plugins' (the double's PodGroup by kind)
    wait_until(lambda: [api_group(o) for o in objs["PodGroup"]] == ["scheduling.k8s.io"],
               what="the deletion of one kind")
    # DeviceTaintRule is not served by the double: the informer counts as synced, empty
    inf = next(i for i in r.informers if i.spec.kind == "DeviceTaintRule")
    assert inf.synced.is_set() and inf.absent


DRA_OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
     "metadata": {"name": "gpu.example.com"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
     "metadata": {"name": "n1-gpus"},
     "spec": {"driver": "gpu.example.com", "nodeName": "n1",
              "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0"}]}},
]


def claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


def claiming_pod(name: str, claim_name: str) -> dict[str, Any]:
    p = pod(name)
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim_name}]
    return p


def test_pod_with_a_claim_gets_it_allocated_and_is_bound(double: ApiServerDouble,
                                                         kubeconfig: str,
                                                         runners: list) -> None:
    double.create(node("n0"))
    double.create(node("n1"))
    for obj in DRA_OBJECTS:
        double.create(obj)
    double.create(claim("c1"))
    double.create(claiming_pod("gpu-1", "c1"))
    r = make_runner(kubeconfig, runners)
    wait_until(lambda: double.bound_pods().get("default/gpu-1") == "n1", what="gpu-1 bound")
    stored = double.get("ResourceClaim", "c1")
    results = stored["status"]["allocation"]["devices"]["results"]
    assert [(x["driver"], x["pool"], x["device"]) for x in results] == [
        ("gpu.example.com", "n1", "gpu-0")]
    uid = double.get("Pod", "gpu-1")["metadata"]["uid"]
    assert [c["uid"] for c in stored["status"]["reservedFor"]] == [uid]
    # PreBind's Update before the status: the claim is protected while allocated
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    # the only device is taken: a second claim cannot be allocated, whenever the informer
    # reports the first one's status (the assume cache holds the allocation meanwhile)
    double.create(claim("c2"))
    double.create(claiming_pod("gpu-2", "c2"))
    wait_until(lambda: any(e["regarding"]["name"] == "gpu-2"
                           for e in double.events("FailedScheduling")), what="gpu-2 refused")
    assert "default/gpu-2" not in double.bound_pods()
    note = next(e["note"] for e in double.events("FailedScheduling")
                if e["regarding"]["name"] == "gpu-2")
    assert "cannot allocate all claims" in note, note
    assert "allocation" not in (double.get("ResourceClaim", "c2").get("status") or {})
    # a second device appears (a ResourceSlice update): the pod is brought back and bound
    s = double.get("ResourceSlice", "n1-gpus")
    s["spec"]["devices"].append({"name": "gpu-1"})
    s["spec"]["pool"]["generation"] = 2
    double.update(s)
    wait_until(lambda: double.bound_pods().get("default/gpu-2") == "n1", what="gpu-2 bound")
    devs = {double.get("ResourceClaim", c)["status"]["allocation"]["devices"]["results"][0][
        "device"] for c in ("c1", "c2")}
    assert devs == {"gpu-0", "gpu-1"}
    wait_until(lambda: not r._assumed_claims, what="the informer caught up with the writes")


def test_deleting_a_claim_takes_its_delete_protection_off_first(double: ApiServerDouble,
                                                               kubeconfig: str) -> None:
    # upstream's deleteClaim (Unreserve of an extended-resource claim PreBind created): an
    # Update without the scheduler's finalizer, then Delete; other finalizers stay
    from kubesched.api.dra.types import DELETE_PROTECTION_FINALIZER, parse_resource_claim

    c = claim("c1")
    c["metadata"]["finalizers"] = ["example.com/keep", DELETE_PROTECTION_FINALIZER]
    double.create(c)
    r = make_runner(kubeconfig, [], start=False)  # only its backend: nothing to stop
    r.backend.delete_resource_claim(parse_resource_claim(double.get("ResourceClaim", "c1")))
    seen = [(etype, obj["metadata"].get("finalizers")) for _, etype, obj, _ in
            double.history[("resource.k8s.io", "v1", "resourceclaims")]]
    assert seen == [("ADDED", ["example.com/keep", DELETE_PROTECTION_FINALIZER]),
                    ("MODIFIED", ["example.com/keep"]), ("DELETED", ["example.com/keep"])]
    r.backend.delete_resource_claim(parse_resource_claim(c))  # gone already: no error


def test_extended_resource_backed_by_a_device_class(double: ApiServerDouble,
                                                   kubeconfig: str, runners: list) -> None:
    # DRAExtendedResource (1.37): PreBind creates the pod's claim, allocates it, and patches
    # the pod's status.extendedResourceClaimStatus; the claim is read back from the cache
    # right after its creation (before the informer reports it)
    double.create(node("n1"))
    cls = {**DRA_OBJECTS[0], "spec": {**DRA_OBJECTS[0]["spec"],
                                      "extendedResourceName": "example.com/gpu"}}
    double.create(cls)
    double.create(DRA_OBJECTS[1])
    p = pod("ext-1")
    p["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "1"},
                                               "limits": {"example.com/gpu": "1"}}
    double.create(p)
    make_runner(kubeconfig, runners)
    wait_until(lambda: double.bound_pods().get("default/ext-1") == "n1", what="ext-1 bound")
    status = double.get("Pod", "ext-1")["status"]["extendedResourceClaimStatus"]
    name = status["resourceClaimName"]
    assert name.startswith("ext-1-extended-resources-")
    assert status["requestMappings"] == [{"containerName": "c",
                                          "resourceName": "example.com/gpu",
                                          "requestName": "container-0-request-0"}]
    stored = double.get("ResourceClaim", name)
    assert stored["metadata"]["annotations"] == {
        "resource.kubernetes.io/extended-resource-claim": "true"}
    assert [(x["request"], x["device"]) for x in
            stored["status"]["allocation"]["devices"]["results"]] == [
        ("container-0-request-0", "gpu-0")]


def test_assume_cache_keeps_the_written_claim_over_older_informer_copies() -> None:
    """The informer's copy older than the status the scheduler wrote does not undo the
    allocation; a newer one replaces it."""
    import dataclasses

    from kubesched.api.dra.store import dra_index
    from kubesched.api.dra.types import parse_resource_claim
    from kubesched.backends.kube.commands import default_run_config
    from kubesched.backends.kube.resources import watched
    from kubesched.backends.kube.runner import KubeRunner, RunOptions

    r = KubeRunner(RunOptions(config=default_run_config(), address="", leader_elect=False,
                              install_signals=False), client=_NoClient())  # type: ignore[arg-type]
    spec = next(s for s in watched("1.37") if s.kind == "ResourceClaim")
    raw = claim("c1")
    raw["metadata"].update(uid="u1", resourceVersion="5")
    v5 = parse_resource_claim(raw)
    r.on_add(spec, v5)
    written = dataclasses.replace(v5, reserved_for=())
    written.metadata = dataclasses.replace(v5.metadata, resource_version="7")
    r._assume_claim(written)
    objects = r.sched.handle.objects
    assert dra_index(objects).claim("default", "c1") is written
    v6 = dataclasses.replace(v5)
    v6.metadata = dataclasses.replace(v5.metadata, resource_version="6")
    r.on_update(spec, v5, v6)  # older than the write: ignored
    assert dra_index(objects).claim("default", "c1") is written
    v8 = dataclasses.replace(v5)
    v8.metadata = dataclasses.replace(v5.metadata, resource_version="8")
    r.on_update(spec, v6, v8)
    assert dra_index(objects).claim("default", "c1") is v8
    assert not r._assumed_claims
    r.executor.shutdown(wait=False)
    r.writer.close(0.1)


class _NoClient:
    """A runner built without talking to anything (handlers called directly)."""

    description = "none"

    class limiter:
        qps = 0.0
        burst = 0

    def with_own_limiter(self) -> _NoClient:
        return self


# ---------------------------------------------------------------- extender, --plugin


def _fake_extender() -> Any:
    """tests/extender's FakeExtender (a real HTTP extender on loopback), loaded by path: every
    test folder's conftest has the same module name."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "extender" / "conftest.py"
    spec = importlib.util.spec_from_file_location("extender_fixtures", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.FakeExtender()


def test_http_extender_filter_decides_the_binding(double: ApiServerDouble, kubeconfig: str,
                                                  runners: list) -> None:
    ext = _fake_extender()
    ext.verbs["filter"] = lambda args: (200, {
        "NodeNames": [n for n in args["NodeNames"] if n == "n2"],
        "FailedNodes": {n: "not n2" for n in args["NodeNames"] if n != "n2"}})
    try:
        config = load_config({
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "kubesched"}],
            "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter",
                           "nodeCacheCapable": True, "weight": 1}]})
        for i in range(4):
            double.create(node(f"n{i}"))
        for i in range(3):
            double.create(pod(f"web-{i}"))
        make_runner(kubeconfig, runners, config=config)
        wait_until(lambda: len(bound_of(double, "web")) == 3, what="pods bound")
        assert set(double.bound_pods().values()) == {"n2"}
        assert len(ext.calls("filter")) >= 3
    finally:
        ext.close()


PLUGIN_FILE = '''
from kubesched.framework import FilterPlugin, unschedulable


class OnlyLabelled(FilterPlugin):
    """Filter: only nodes labelled kubesched.io/plugin-test=yes."""

    name = "OnlyLabelled"

    def filter(self, state, pod, node_info):
        labels = node_info.node.metadata.labels
        if labels.get("kubesched.io/plugin-test") == "yes":
            return None
        return unschedulable("node is not labelled for the plugin test")
'''


def test_out_of_tree_plugin_file_decides_the_binding(double: ApiServerDouble,
                                                     kubeconfig: str, runners: list,
                                                     tmp_path: Path) -> None:
    from kubesched.plugins.loading import out_of_tree_plugins

    path = tmp_path / "only_labelled.py"
    path.write_text(PLUGIN_FILE)
    # as run_command does with --plugin FILE.py:CLASS
    plugins = out_of_tree_plugins([f"{path}:OnlyLabelled"], use_entry_points=False)
    config = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "kubesched",
                      "plugins": {"filter": {"enabled": [{"name": "OnlyLabelled"}]}}}]})
    config.out_of_tree = plugins
    for i in range(3):
        n = node(f"n{i}")
        if i == 1:
            n["metadata"]["labels"] = {"kubesched.io/plugin-test": "yes"}
        double.create(n)
    for i in range(3):
        double.create(pod(f"p-{i}"))
    make_runner(kubeconfig, runners, config=config)
    wait_until(lambda: len(bound_of(double, "p-")) == 3, what="pods bound")
    assert set(double.bound_pods().values()) == {"n1"}


def test_snapshot_writes_dra_and_gang_objects_that_simulate_reads(
        double: ApiServerDouble, kubeconfig: str, tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from kubesched.cli import main

    double.create(node("n0"))
    double.create(node("n1"))
    for obj in DRA_OBJECTS:
        double.create(obj)
    double.create(claim("c1"))
    p = claiming_pod("gpu-1", "c1")
    p["spec"]["schedulerName"] = "default-scheduler"
    double.create(p)
    double.create(pod_group("trainer", 2))
    double.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": "one-gpu", "namespace": "default"},
                   "spec": {"spec": {"devices": {"requests": [
                       {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}})
    out = tmp_path / "snap.yaml"
    res = CliRunner().invoke(main, ["snapshot", "--kubeconfig", kubeconfig, "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    for kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                 "PodGroup"):
        assert f"kind: {kind}\n" in text, kind
    assert "scheduling.x-k8s.io/v1alpha1" in text
    res = CliRunner().invoke(main, ["simulate", str(out), "--check", "--placements", "-"])
    assert res.exit_code == 0, res.output
    placed = {json.loads(x)["pod"]: json.loads(x)["node"] for x in res.output.splitlines()
              if x.startswith("{")}
    assert placed == {"default/gpu-1": "n1"}


STORAGE_OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
     "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
     "metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
     "metadata": {"name": "cap-n1", "namespace": "kube-system"}, "storageClassName": "fast",
     "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "n1"}}, "capacity": "10Gi"},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
     "metadata": {"name": "data", "namespace": "default"},
     "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
              "resources": {"requests": {"storage": "5Gi"}}}},
]


def test_storage_capacity_objects_are_watched_and_snapshotted(
        double: ApiServerDouble, kubeconfig: str, runners: list, tmp_path: Path) -> None:
    """CSIDriver and CSIStorageCapacity reach the scheduler's informers: only n1 has storage
    for the claim, so run selects it (the volume's selected-node annotation); snapshot
    writes both kinds and simulate reads them back to the same decision."""
    import json

    from click.testing import CliRunner

    from kubesched.cli import main

    for name in ("n0", "n1", "n2"):
        double.create(node(name))
    for obj in STORAGE_OBJECTS:
        double.create(obj)
    out = tmp_path / "snap.yaml"
    # "probe" is the default scheduler's (no one schedules it here): explain reads it
    for name, scheduler in (("probe", "default-scheduler"), ("user", "kubesched")):
        p = pod(name, scheduler=scheduler)
        p["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
        double.create(p)
    res = CliRunner().invoke(main, ["snapshot", "--kubeconfig", kubeconfig, "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "kind: CSIDriver\n" in text and "kind: CSIStorageCapacity\n" in text
    res = CliRunner().invoke(main, ["explain", str(out), "--pod", "default/probe", "-o", "json"])
    assert res.exit_code == 0, res.output
    verdicts = {n["node"]: n for n in json.loads(res.stdout)["nodes"]}
    assert verdicts["n1"]["feasible"] is True
    for name in ("n0", "n2"):
        assert verdicts[name]["reasons"] == ["node(s) did not have enough free storage"]
    make_runner(kubeconfig, runners)
    wait_until(lambda: (double.get("PersistentVolumeClaim", "data") or {}).get(
        "metadata", {}).get("annotations", {}).get("volume.kubernetes.io/selected-node") == "n1",
        what="the claim's selected node")
