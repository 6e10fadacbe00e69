"""Workload controllers in scenarios: Deployment → ReplicaSet → pods, ReplicaSet,
ReplicationController, StatefulSet (OrderedReady, Parallel), DaemonSet, Job. Exact
placements, the labels and ownerReferences the pods carry, names per seed, and a cluster at
rest left as it is. The invariant checker is on in every run; every pod is accounted for."""

from __future__ import annotations

import re
from typing import Any

import pytest
from tests.e2e.test_faults import assert_accounted, node, pod

from kubesched.api.scenario import load_scenario_text
from kubesched.api.types import NodeSelectorRequirement, Toleration
from kubesched.api.workloads import POD_TEMPLATE_HASH, safe_encode, template_hash
from kubesched.backends.sim.cluster import SimCluster
from kubesched.errors import InputError

GEN = "[bcdfghjklmnpqrstvwxz2456789]"


def deployment(name: str = "web", replicas: int = 3, cpu: str = "1", extra: str = "",
               annotations: str = "{}") -> str:
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}, annotations: {annotations}}}
    spec:
{extra}      containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: '{cpu}'}}}}}}]
"""


def workload(kind: str, name: str, spec: str, template_spec: str = "",
             api: str = "apps/v1", cpu: str = "1", annotations: str = "{}") -> str:
    return f"""---
apiVersion: {api}
kind: {kind}
metadata: {{name: {name}}}
spec:
{spec}  template:
    metadata: {{labels: {{app: {name}}}, annotations: {annotations}}}
    spec:
{template_spec}      containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]
"""


def run(text: str, seed: int = 0) -> tuple[SimCluster, list[dict[str, Any]]]:
    sim = SimCluster(load_scenario_text(text, "w.yaml", strict=True), seed=seed, check=True)
    result = sim.run()
    assert_accounted(sim)
    return sim, [r.as_json() for r in result.records]


# ---------------------------------------------------------------- Deployment, ReplicaSet


def test_deployment_makes_a_replica_set_and_its_pods():
    text = node("n1", cpu="2") + node("n2", cpu="2") + deployment(replicas=3)
    sim, lines = run(text)
    (rs,) = sim.scenario.objects["ReplicaSet"]
    h = rs.metadata.labels[POD_TEMPLATE_HASH]
    assert rs.metadata.name == f"web-{h}" and re.fullmatch(f"{GEN}{{1,10}}", h)
    assert rs.raw["spec"]["selector"] == {"matchLabels": {"app": "web", POD_TEMPLATE_HASH: h}}
    assert [(r.kind, r.name, r.controller) for r in rs.metadata.owner_references] == [
        ("Deployment", "web", True)]
    assert len(lines) == 3
    for line in lines:
        assert re.fullmatch(f"default/web-{h}-{GEN}{{5}}", line["pod"])
        assert line["node"] in ("n1", "n2") and line["message"] is None
    for p in sim.created:
        assert p.labels == {"app": "web", POD_TEMPLATE_HASH: h}
        (ref,) = p.metadata.owner_references
        assert (ref.kind, ref.name, ref.controller) == ("ReplicaSet", rs.metadata.name, True)
    # deterministic per seed
    assert [ln["pod"] for ln in run(text)[1]] == [ln["pod"] for ln in lines]
    assert [ln["pod"] for ln in run(text, seed=7)[1]] != [ln["pod"] for ln in lines]


def test_template_hash_form_and_stability():
    t = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    h = template_hash(t)
    assert h == template_hash({"spec": t["spec"], "metadata": {"labels": {
        "app": "web", POD_TEMPLATE_HASH: "zzz"}}})  # the hash label itself is left out
    assert h != template_hash(t, collision_count=1)
    assert safe_encode("0123") == "4567"  # byte % 27 into the alphabet


def test_deployment_with_its_replica_set_at_rest_changes_nothing():
    text = node("n1", cpu="4") + deployment(replicas=2)
    sim, _ = run(text)
    (rs,) = sim.scenario.objects["ReplicaSet"]
    h = rs.metadata.labels[POD_TEMPLATE_HASH]
    owner = (f"[{{apiVersion: apps/v1, kind: ReplicaSet, name: web-{h}, controller: true}}]")
    rs_doc = (f"---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web-{h}, "
              f"ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, "
              f"uid: default/web, controller: true}}]}}\nspec:\n  replicas: 2\n"
              f"  selector: {{matchLabels: {{app: web, {POD_TEMPLATE_HASH}: {h}}}}}\n"
              "  template:\n    metadata: {labels: {app: web, pod-template-hash: " + h
              + "}, annotations: {}}\n    spec:\n      containers: [{name: c, image: nginx, "
              "resources: {requests: {cpu: '1'}}}]\n")
    labels = f"{{app: web, {POD_TEMPLATE_HASH}: {h}}}"
    at_rest = (text + rs_doc + pod("a", node_name="n1", owner=owner, labels=labels)
               + pod("b", node_name="n1", owner=owner, labels=labels))
    sim2, lines2 = run(at_rest)
    assert lines2 == [] and sim2.created == []
    assert len(sim2.scenario.objects["ReplicaSet"]) == 1


def test_replica_set_adopts_orphans_and_scales_down_extras():
    rs = workload("ReplicaSet", "web", "  replicas: 2\n  selector: {matchLabels: {app: web}}\n")
    text = (node("n1", cpu="8") + rs + pod("a", node_name="n1", labels="{app: web}")
            + pod("b", labels="{app: web}") + pod("c", labels="{app: web}")
            + pod("other", labels="{app: db}"))
    sim, lines = run(text)
    # a (running) and b adopted; c, the newest pending one, deleted before it is scheduled
    assert [ln["pod"] for ln in lines] == ["default/b", "default/other"]
    assert sim.api.gone == {"default/c": "evicted: deleted by its controller"}
    a = sim.pods["default/a"]
    assert [(r.kind, r.name, r.controller) for r in a.metadata.owner_references] == [
        ("ReplicaSet", "web", True)]
    assert sim.pods["default/other"].metadata.owner_references == []
    assert sim.created == []


def test_replication_controller_selector_from_template():
    rc = workload("ReplicationController", "old", "  replicas: 2\n", api="v1", cpu="100m")
    _sim, lines = run(node("n1") + rc)
    assert len(lines) == 2 and all(ln["node"] == "n1" for ln in lines)
    assert all(re.fullmatch(f"default/old-{GEN}{{5}}", ln["pod"]) for ln in lines)


def test_replaced_pod_comes_from_the_template_when_a_node_goes():
    rs = workload("ReplicaSet", "web", "  replicas: 2\n  selector: {matchLabels: {app: web}}\n")
    fault = ("---\napiVersion: kubesched.io/v1alpha1\nkind: Fault\nmetadata: {name: f}\n"
             "spec: {at: 5, action: DeleteNode, node: n1}\n")
    _sim, lines = run(node("n1", cpu="1") + node("n2", cpu="4") + rs + fault)
    first = {ln["pod"]: ln for ln in lines[:2]}
    on_n1 = [k for k, v in first.items() if v.get("evicted_from") == "n1"]
    assert len(on_n1) == 1 and len(lines) == 3
    assert lines[2]["node"] == "n2" and lines[2]["time"] == 5.0


# ---------------------------------------------------------------- StatefulSet


def sts(policy: str = "OrderedReady", replicas: int = 3, cpu: str = "1") -> str:
    return workload("StatefulSet", "db", f"  replicas: {replicas}\n  serviceName: db\n"
                    f"  podManagementPolicy: {policy}\n  selector: {{matchLabels: {{app: db}}}}\n",
                    cpu=cpu)


def test_stateful_set_ordered_ready_waits_for_each_pod_to_be_bound():
    sim, lines = run(node("n1", cpu="2") + sts())
    # db-0 and db-1 fit; db-2 is created once db-1 is bound, and stays pending
    assert [(ln["pod"], ln["node"]) for ln in lines] == [
        ("default/db-0", "n1"), ("default/db-1", "n1"), ("default/db-2", None)]
    p0 = sim.pod_by_key("default/db-0")
    assert p0 is not None
    assert p0.labels["statefulset.kubernetes.io/pod-name"] == "db-0"
    assert p0.labels["apps.kubernetes.io/pod-index"] == "0"
    assert p0.labels["controller-revision-hash"].startswith("db-")


def test_stateful_set_ordered_ready_stops_at_a_pending_pod():
    # db-0 does not fit: db-1 and db-2 are never created
    _sim, lines = run(node("n1", cpu="1") + sts(cpu="2"))
    assert [(ln["pod"], ln["node"]) for ln in lines] == [("default/db-0", None)]


def test_stateful_set_parallel_creates_all_at_once():
    _sim, lines = run(node("n1", cpu="1") + sts("Parallel", cpu="2"))
    assert [(ln["pod"], ln["node"]) for ln in lines] == [
        ("default/db-0", None), ("default/db-1", None), ("default/db-2", None)]


# ---------------------------------------------------------------- DaemonSet


def test_daemon_set_one_pod_per_node_it_targets():
    tainted = ("---\napiVersion: v1\nkind: Node\nmetadata: {name: t1, labels: {disk: ssd}}\n"
               "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n"
               "status: {capacity: {cpu: '2', memory: 4Gi, pods: '110'}}\n")
    cordoned = ("---\napiVersion: v1\nkind: Node\nmetadata: {name: c1, labels: {disk: ssd}}\n"
                "spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, "
                "effect: NoSchedule}]}\n"
                "status: {capacity: {cpu: '2', memory: 4Gi, pods: '110'}}\n")
    ssd = ("---\napiVersion: v1\nkind: Node\nmetadata: {name: s1, labels: {disk: ssd}}\n"
           "status: {capacity: {cpu: '2', memory: 4Gi, pods: '110'}}\n")
    ds = workload("DaemonSet", "agent", "  selector: {matchLabels: {app: agent}}\n",
                  "      nodeSelector: {disk: ssd}\n", cpu="100m")
    sim, lines = run(node("plain") + tainted + cordoned + ssd + ds)
    # plain: no disk=ssd; t1: an untolerated NoSchedule taint; c1 (cordoned) and s1: yes
    placed = sorted((ln["node"], ln["message"]) for ln in lines)
    assert placed == [("c1", None), ("s1", None)]
    p = next(p for p in sim.created if p.spec.node_selector)
    terms = p.spec.affinity.node_affinity.required
    assert len(terms) == 1 and terms[0].match_expressions == ()
    (req,) = terms[0].match_fields
    assert req.key == "metadata.name" and req.operator == "In"
    assert isinstance(req, NodeSelectorRequirement) and req.values[0] in ("c1", "s1")
    assert p.spec.tolerations == (
        Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
        Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"),
        Toleration("node.kubernetes.io/disk-pressure", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/pid-pressure", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"))
    assert "controller-revision-hash" in p.labels
    assert p.labels["pod-template-generation"] == "1"


def test_daemon_set_pod_waits_when_its_node_is_full():
    ds = workload("DaemonSet", "agent", "  selector: {matchLabels: {app: agent}}\n", cpu="2")
    _sim, lines = run(node("n1", cpu="1") + node("n2", cpu="4") + ds)
    got = sorted((ln["node"] or "-", (ln["message"] or "")[:40]) for ln in lines)
    assert got == [("-", "0/2 nodes are available: 1 Insufficient "), ("n2", "")]


# ---------------------------------------------------------------- Job


def test_job_runs_completions_in_waves_on_the_virtual_clock():
    job = workload("Job", "batch", "  parallelism: 2\n  completions: 5\n",
                   "      restartPolicy: Never\n", api="batch/v1", cpu="1",
                   annotations="{kubesched.io/duration: '10'}")
    sim, lines = run(node("n1", cpu="4") + job)
    assert [ln["time"] for ln in lines] == [0.0, 0.0, 10.0, 10.0, 20.0]
    assert all(ln["node"] == "n1" for ln in lines)
    assert len(sim.finished) == 5 and sim.clock.now() == 30.0
    p = sim.created[0]
    assert p.labels["batch.kubernetes.io/job-name"] == "batch"
    assert p.labels["job-name"] == "batch"
    assert p.labels["controller-uid"] == p.labels["batch.kubernetes.io/controller-uid"]


def test_indexed_job_names_its_pods_by_index():
    job = workload("Job", "ix", "  parallelism: 3\n  completions: 3\n"
                   "  completionMode: Indexed\n", "      restartPolicy: Never\n",
                   api="batch/v1", cpu="100m")
    sim, lines = run(node("n1") + job)
    for i, ln in enumerate(lines):
        assert re.fullmatch(f"default/ix-{i}-{GEN}{{5}}", ln["pod"])
    assert [p.metadata.annotations["batch.kubernetes.io/job-completion-index"]
            for p in sim.created] == ["0", "1", "2"]


def test_job_without_completions_stops_after_the_first_success():
    job = workload("Job", "q", "  parallelism: 2\n", "      restartPolicy: OnFailure\n",
                   api="batch/v1", cpu="1", annotations="{kubesched.io/duration: '5'}")
    sim, lines = run(node("n1", cpu="4") + job)
    assert [ln["time"] for ln in lines] == [0.0, 0.0] and len(sim.finished) == 2


def test_succeeded_pods_count_for_a_job():
    job = workload("Job", "j", "  completions: 2\n", "      restartPolicy: Never\n",
                   api="batch/v1", cpu="1")
    owner = "[{apiVersion: batch/v1, kind: Job, name: j, controller: true}]"
    done = pod("j-done", node_name="n1", owner=owner).replace(
        "  containers:", "  restartPolicy: Never\n  containers:") + "status: {phase: Succeeded}\n"
    sim, lines = run(node("n1") + job + done)
    assert len(lines) == 1 and len(sim.created) == 1


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(("doc", "field", "words"), [
    (deployment(replicas=-1), "spec.replicas", "greater than or equal to 0"),
    (deployment().replace("matchLabels: {app: web}", "matchLabels: {app: api}"),
     "spec.template.metadata.labels", "`selector` does not match template `labels`"),
    (workload("Job", "j", "", api="batch/v1"), "spec.template.spec.restartPolicy",
     "Required value"),
    (workload("Job", "j", "  completionMode: Indexed\n", "      restartPolicy: Never\n",
              api="batch/v1"), "spec.completions", "Required value"),
    (workload("DaemonSet", "d", "  selector: {matchLabels: {app: d}}\n",
              "      restartPolicy: Never\n"), "spec.template.spec.restartPolicy",
     "Unsupported value"),
    (workload("StatefulSet", "s", "  replicas: 1\n  serviceName: s\n"
              "  selector: {matchLabels: {app: s}}\n  podManagementPolicy: Random\n"),
     "spec.podManagementPolicy", "Unsupported value"),
])
def test_objects_the_api_server_refuses_are_bad_input(doc: str, field: str,
                                                      words: str) -> None:
    with pytest.raises(InputError) as e:
        load_scenario_text(doc, "w.yaml")
    assert e.value.field == field and words in str(e.value), str(e.value)
    assert "w.yaml" in str(e.value)
