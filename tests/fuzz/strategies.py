"""Hypothesis strategies for kubesched's inputs: quantities, Kubernetes objects (as the dicts
a YAML file decodes to), KubeSchedulerConfigurations, whole scenarios, and mutations of them.

The object strategies aim at objects the API server accepts (so that the simulator, not only
the loader, gets exercised), drawn from small pools of names, label values and topology keys
so that selectors, affinities, spreads and tolerations actually match each other. Broken
input comes from ``invalid_quantities`` and ``mutated``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import yaml
from hypothesis import strategies as st

Doc = dict[str, Any]

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
GPU = "example.com/gpu"
TOPOLOGY_KEYS = (ZONE, HOSTNAME, REGION, "rack")
APPS = ("a", "b", "c")
NAMESPACES = ("default", "team1", "team2")
TAINT_KEYS = ("dedicated", "gpu", "node.kubernetes.io/unschedulable")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
PROFILE_NAMES = ("default-scheduler", "second")

try:
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # PyYAML without libyaml
    _Dumper = yaml.SafeDumper


def to_yaml(docs: list[Any]) -> str:
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False)


# ------------------------------------------------------------------ quantities

DECIMAL_SUFFIXES = ("", "n", "u", "m", "k", "M", "G", "T", "P", "E")
BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


@st.composite
def quantities(draw: st.DrawFn, *, tiny: bool = True, huge: bool = True) -> str | int | float:
    """Any quantity the API server's grammar accepts (every suffix and exponent, signs
    excluded: the fields kubesched reads refuse negatives), as a string or a bare number."""
    # mostly everyday magnitudes; the huge ones (up to 10^20) in one draw of four
    whole = draw(st.integers(0, 10**20) if huge and draw(st.integers(0, 3)) == 0
                 else st.integers(0, 4096))
    frac = draw(st.one_of(st.just(""), st.from_regex(r"[0-9]{1,4}", fullmatch=True)))
    number = f"{whole}.{frac}" if frac and draw(st.booleans()) else str(whole)
    if not huge:
        whole %= 4096
        number = str(whole)
    kind = draw(st.sampled_from(("dec", "bin", "exp", "bare")))
    if kind == "dec":
        suffixes = DECIMAL_SUFFIXES if tiny and huge else ("", "k", "M", "G")
        text = number + draw(st.sampled_from(suffixes))
    elif kind == "bin":
        text = number + draw(st.sampled_from(BINARY_SUFFIXES if huge else ("Ki", "Mi", "Gi")))
    elif kind == "exp":
        lo = -30 if tiny else 0
        exp = draw(st.integers(lo, 40 if huge and draw(st.booleans()) else 3))
        sign = "+" if exp >= 0 and draw(st.booleans()) else ""
        text = f"{number}{draw(st.sampled_from('eE'))}{sign}{exp}"
    else:
        return draw(st.one_of(st.just(whole), st.floats(0, 1e19 if whole > 4096 else 4096,
                                                        allow_nan=False)))
    if draw(st.integers(0, 9)) == 0:  # Quantity.UnmarshalJSON trims whitespace
        text = f" {text} "
    return text


def invalid_quantities() -> st.SearchStrategy[Any]:
    """Values that are not quantities, or quantities no field accepts."""
    return st.one_of(
        st.text(max_size=12),
        st.sampled_from(["", "-1", "1.2.3", "1Qi", "Gi", ".", "e", "1e", "1e+", "1ee3",
                         "1e1001", "1e-1001", "--1", "+", "0x10", "1_000", "∞", "NaN",
                         "inf", "1 Gi", "1Gi ", "1KiB", "1mi", "-0.5"]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(2**70), 2**70),
        st.booleans(), st.none(), st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )


# ------------------------------------------------------------------ small pieces

names = st.from_regex(r"[a-z]([a-z0-9-]{0,6}[a-z0-9])?", fullmatch=True)


def _labels(draw: st.DrawFn, app: bool) -> dict[str, str]:
    labels: dict[str, str] = {}
    if app:
        labels["app"] = draw(st.sampled_from(APPS))
    if draw(st.booleans()):
        labels["rev"] = draw(st.sampled_from(("1", "2")))
    if draw(st.integers(0, 4)) == 0:
        labels["tier"] = draw(st.sampled_from(("web", "db", "")))
    return labels


@st.composite
def label_selectors(draw: st.DrawFn) -> Doc:
    sel: Doc = {}
    if draw(st.booleans()):
        sel["matchLabels"] = {"app": draw(st.sampled_from(APPS))}
    if draw(st.integers(0, 2)) == 0:
        op = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")))
        expr: Doc = {"key": draw(st.sampled_from(("app", "rev", "tier"))), "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = draw(st.lists(st.sampled_from(("a", "b", "1", "web")),
                                           min_size=1, max_size=2))
        sel["matchExpressions"] = [expr]
    return sel


@st.composite
def node_selector_terms(draw: st.DrawFn) -> Doc:
    op = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")))
    if op in ("Gt", "Lt"):
        expr: Doc = {"key": "cores", "operator": op, "values": [str(draw(st.integers(0, 8)))]}
    else:
        key = draw(st.sampled_from((ZONE, "disk", HOSTNAME)))
        expr = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            pool = {ZONE: ("z0", "z1", "z2"), "disk": ("ssd", "hdd"),
                    HOSTNAME: ("n0", "n1", "n2")}[key]
            expr["values"] = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2,
                                           unique=True))
    term: Doc = {"matchExpressions": [expr]}
    if draw(st.integers(0, 5)) == 0:
        term["matchFields"] = [{"key": "metadata.name", "operator": "In",
                                "values": [f"n{draw(st.integers(0, 3))}"]}]
    return term


@st.composite
def pod_affinity_terms(draw: st.DrawFn) -> Doc:
    term: Doc = {"topologyKey": draw(st.sampled_from(TOPOLOGY_KEYS)),
                 "labelSelector": draw(label_selectors())}
    ns = draw(st.integers(0, 3))
    if ns == 1:
        term["namespaces"] = draw(st.lists(st.sampled_from(NAMESPACES), max_size=2,
                                           unique=True))
    elif ns == 2:
        term["namespaceSelector"] = draw(st.sampled_from(({}, {"matchLabels": {"team": "x"}})))
    return term


@st.composite
def affinities(draw: st.DrawFn) -> Doc:
    aff: Doc = {}
    if draw(st.booleans()):
        na: Doc = {}
        if draw(st.booleans()):
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": draw(st.lists(node_selector_terms(), min_size=1,
                                                   max_size=2))}
        if draw(st.booleans()):
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(1, 100)), "preference": draw(node_selector_terms())}
                for _ in range(draw(st.integers(1, 2)))]
        aff["nodeAffinity"] = na
    for kind in ("podAffinity", "podAntiAffinity"):
        if draw(st.integers(0, 2)) == 0:
            pa: Doc = {}
            if draw(st.booleans()):
                pa["requiredDuringSchedulingIgnoredDuringExecution"] = draw(
                    st.lists(pod_affinity_terms(), min_size=1, max_size=2))
            if draw(st.booleans()):
                pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": draw(st.integers(1, 100)),
                     "podAffinityTerm": draw(pod_affinity_terms())}]
            aff[kind] = pa
    return aff


@st.composite
def spread_constraints(draw: st.DrawFn) -> list[Doc]:
    keys = draw(st.lists(st.tuples(st.sampled_from(TOPOLOGY_KEYS),
                                   st.sampled_from(("DoNotSchedule", "ScheduleAnyway"))),
                         min_size=1, max_size=3, unique=True))
    out = []
    for key, action in keys:
        c: Doc = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": key,
                  "whenUnsatisfiable": action,
                  "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}}}
        if action == "DoNotSchedule" and draw(st.integers(0, 3)) == 0:
            c["minDomains"] = draw(st.integers(1, 4))
        for f in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if draw(st.integers(0, 3)) == 0:
                c[f] = draw(st.sampled_from(("Honor", "Ignore")))
        if draw(st.integers(0, 3)) == 0:
            c["matchLabelKeys"] = ["rev"]
        out.append(c)
    return out


@st.composite
def tolerations(draw: st.DrawFn) -> Doc:
    op = draw(st.sampled_from(("Equal", "Exists")))
    t: Doc = {"operator": op}
    if op == "Equal" or draw(st.booleans()):
        t["key"] = draw(st.sampled_from(TAINT_KEYS))
    if op == "Equal":
        t["value"] = draw(st.sampled_from(("x", "y", "")))
    if draw(st.booleans()):
        t["effect"] = draw(st.sampled_from(EFFECTS))
        if t["effect"] == "NoExecute" and draw(st.booleans()):
            t["tolerationSeconds"] = draw(st.integers(0, 60))
    return t


# ------------------------------------------------------------------ Nodes and Pods


@st.composite
def resource_list(draw: st.DrawFn, *, node: bool) -> Doc:
    """A node's capacity (node=True) or a container's requests: mostly everyday sizes,
    sometimes any quantity at all."""
    wild = draw(st.integers(0, 19 if node else 9)) == 0
    if node:
        res: Doc = {
            "cpu": draw(quantities()) if wild else str(draw(st.sampled_from((4, 8, 2, 1)))),
            "memory": draw(quantities()) if wild else draw(st.sampled_from(("16Gi", "4Gi",
                                                                           "2Gi"))),
            "pods": str(draw(st.sampled_from((110, 110, 110, 5, 2, 0)))) if not wild else
            str(draw(st.integers(0, 1000))),
        }
        if draw(st.integers(0, 5)):
            res["ephemeral-storage"] = draw(st.sampled_from(("100Gi", "10Gi")))
        if draw(st.booleans()):
            res[GPU] = str(draw(st.integers(0, 4)))
        return res
    res = {}
    if draw(st.integers(0, 5)):
        res["cpu"] = draw(quantities(huge=False)) if wild else draw(
            st.sampled_from(("100m", "0", "10m", "500m", "1", "1.5", "3")))
    if draw(st.integers(0, 5)):
        res["memory"] = draw(quantities(huge=False, tiny=False)) if wild else draw(
            st.sampled_from(("0", "64Mi", "256Mi", "1Gi", "3Gi", "1e9")))
    if draw(st.integers(0, 5)) == 0:
        res["ephemeral-storage"] = draw(st.sampled_from(("1Gi", "20Gi")))
    return res


@st.composite
def nodes(draw: st.DrawFn, i: int) -> Doc:
    name = f"n{i}"
    labels: Doc = {HOSTNAME: name}
    if draw(st.integers(0, 9)):
        labels[ZONE] = f"z{draw(st.integers(0, 2))}"
    if draw(st.booleans()):
        labels[REGION] = f"r{draw(st.integers(0, 1))}"
    if draw(st.booleans()):
        labels["rack"] = f"k{draw(st.integers(0, 3))}"
    labels["disk"] = draw(st.sampled_from(("ssd", "hdd")))
    if draw(st.booleans()):
        labels["cores"] = str(draw(st.integers(0, 8)))
    spec: Doc = {}
    taints = draw(st.lists(st.tuples(st.sampled_from(TAINT_KEYS), st.sampled_from(EFFECTS),
                                     st.sampled_from(("x", "y", ""))),
                           max_size=2, unique_by=lambda t: (t[0], t[1])))
    if draw(st.integers(0, 2)):
        taints = []
    if taints:
        spec["taints"] = [{"key": k, "effect": e, **({"value": v} if v else {})}
                          for k, e, v in taints]
    if draw(st.integers(0, 11)) == 0:
        spec["unschedulable"] = True
    status: Doc = {"capacity": draw(resource_list(node=True))}
    if draw(st.integers(0, 5)) == 0:
        # allocatable below capacity (system reserved), or a resource only allocatable names
        status["allocatable"] = {"cpu": draw(st.sampled_from(("500m", "900m", "3")))}
    if draw(st.integers(0, 4)) == 0:
        status["images"] = [{"names": ["nginx:1"], "sizeBytes": 500 * 2**20}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": spec, "status": status}


@st.composite
def containers(draw: st.DrawFn, name: str, *, sidecar: bool = False) -> Doc:
    c: Doc = {"name": name, "image": draw(st.sampled_from(("nginx:1", "busybox")))}
    requests = draw(resource_list(node=False))
    limits: Doc = {}
    if draw(st.integers(0, 3)) == 0:
        # limits at or above the requests (only limits: requests default to them)
        for r, q in requests.items():
            if draw(st.booleans()):
                limits[r] = q
        if draw(st.integers(0, 3)) == 0:
            limits["memory"] = "8Gi"
            requests.pop("memory", None) if draw(st.booleans()) else None
            if "memory" in requests and requests["memory"] not in ("0", "64Mi", "256Mi",
                                                                   "1Gi", "3Gi", "1e9"):
                requests.pop("memory")
    if draw(st.integers(0, 5)) == 0:
        # extended resources are not overcommitted: the API server wants limit = request
        n = str(draw(st.integers(1, 2)))
        requests[GPU] = n
        limits[GPU] = n
    res: Doc = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if draw(st.integers(0, 5)) == 0:
        port: Doc = {"containerPort": 80, "hostPort": draw(st.sampled_from((80, 81, 8080)))}
        if draw(st.booleans()):
            port["protocol"] = draw(st.sampled_from(("TCP", "UDP")))
        if draw(st.integers(0, 3)) == 0:
            port["hostIP"] = draw(st.sampled_from(("10.0.0.1", "0.0.0.0")))
        c["ports"] = [port]
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


@dataclass
class PodInfo:
    timed: bool = False  # an arrival or a duration moves the virtual clock


@st.composite
def pods(draw: st.DrawFn, j: int, n_nodes: int, classes: list[str],
         info: PodInfo | None = None) -> Doc:
    labels = _labels(draw, app=draw(st.integers(0, 5)) > 0)
    ns = draw(st.sampled_from(NAMESPACES))
    meta: Doc = {"name": f"p{j}", "namespace": ns, "labels": labels}
    ann: Doc = {}
    if draw(st.integers(0, 3)) == 0:
        ann["kubesched.io/arrival"] = draw(st.sampled_from(("0", "1", "2.5", "30", "400")))
    if draw(st.integers(0, 3)) == 0:
        ann["kubesched.io/duration"] = draw(st.sampled_from(("0", "1", "5", "60.5", "900")))
    if ann:
        meta["annotations"] = ann
        if info is not None:
            info.timed = True
    spec: Doc = {"containers": [draw(containers(f"c{k}"))
                                for k in range(draw(st.integers(1, 2)))]}
    if draw(st.integers(0, 4)) == 0:
        spec["initContainers"] = [draw(containers("init0")),
                                  draw(containers("side0", sidecar=True))][
            : draw(st.integers(1, 2))]
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = draw(st.sampled_from(({"disk": "ssd"}, {ZONE: "z1"},
                                                     {"missing": "x"})))
    if draw(st.integers(0, 2)) == 0:
        spec["affinity"] = draw(affinities())
    if draw(st.integers(0, 3)) == 0:
        spec["topologySpreadConstraints"] = draw(spread_constraints())
    if draw(st.integers(0, 2)) == 0:
        spec["tolerations"] = draw(st.lists(tolerations(), min_size=1, max_size=2))
    prio = draw(st.integers(0, 11))
    if prio in (1, 4, 5):
        spec["priority"] = draw(st.sampled_from((0, 10, 1000, -5, 2**31 - 1)))
    elif prio == 2 and classes:
        spec["priorityClassName"] = draw(st.sampled_from(classes))
    elif prio == 3 and draw(st.booleans()):
        spec["priorityClassName"] = draw(st.sampled_from(("system-node-critical", "nope")))
    if draw(st.integers(0, 5)) == 0:
        spec["preemptionPolicy"] = draw(st.sampled_from(("Never", "PreemptLowerPriority")))
    if draw(st.integers(0, 7)) == 0:
        spec["schedulingGates"] = [{"name": "example.com/wait"}]
    if draw(st.integers(0, 2)) == 0:
        spec["terminationGracePeriodSeconds"] = draw(st.sampled_from((0, 1, 30)))
    if draw(st.integers(0, 7)) == 0:
        spec["schedulerName"] = draw(st.sampled_from((*PROFILE_NAMES, "other")))
    if draw(st.integers(0, 9)) == 0:
        spec["overhead"] = {"cpu": "10m"}
    if ns == "default" and draw(st.integers(0, 3)) == 0:
        spec["volumes"] = [{"name": f"v{k}", "persistentVolumeClaim": {"claimName": c}}
                           for k, c in enumerate(draw(st.lists(st.sampled_from(CLAIMS),
                                                               min_size=1, max_size=2,
                                                               unique=True)))]
    if draw(st.integers(0, 15)) == 0:
        spec["hostNetwork"] = True
        for c in (*spec["containers"], *spec.get("initContainers", ())):
            for port in c.get("ports", ()):
                port["hostPort"] = port["containerPort"]
    if draw(st.integers(0, 9)) == 0:
        spec["resources"] = {"requests": {"cpu": "200m"}, "limits": {"cpu": "2"}}
    doc: Doc = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    running = draw(st.integers(0, 4))
    if running == 0 and n_nodes:
        # a running pod (maybe over its node's room, as a kubelet-admitted pod may be)
        spec["nodeName"] = f"n{draw(st.integers(0, n_nodes))}"  # n{n_nodes}: missing node
        if draw(st.integers(0, 5)) == 0:
            doc["status"] = {"phase": draw(st.sampled_from(("Succeeded", "Failed",
                                                            "Running")))}
        elif draw(st.booleans()):
            doc["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}
    elif running == 1 and n_nodes and draw(st.booleans()):
        doc["status"] = {"nominatedNodeName": f"n{draw(st.integers(0, n_nodes - 1))}"}
    return doc


@st.composite
def priority_classes(draw: st.DrawFn, name: str, default: bool) -> Doc:
    pc: Doc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": name},
               "value": draw(st.sampled_from((-10, 0, 100, 1000, 10**9)))}
    if default:
        pc["globalDefault"] = True
    if draw(st.integers(0, 3)) == 0:
        pc["preemptionPolicy"] = draw(st.sampled_from(("Never", "PreemptLowerPriority")))
    return pc


@st.composite
def pdbs(draw: st.DrawFn, i: int) -> Doc:
    spec: Doc = {"selector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}}}
    which = draw(st.sampled_from(("min", "max", "none")))
    value = draw(st.one_of(st.integers(0, 3), st.sampled_from(("50%", "0%", "100%"))))
    if which == "min":
        spec["minAvailable"] = value
    elif which == "max":
        spec["maxUnavailable"] = value
    doc: Doc = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb{i}", "namespace": draw(st.sampled_from(NAMESPACES))},
                "spec": spec}
    if draw(st.booleans()):
        doc["status"] = {"disruptionsAllowed": draw(st.integers(0, 2)),
                         "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    return doc


# ------------------------------------------------------------------ storage

CLAIMS = ("c0", "c1", "c2")


@st.composite
def storage(draw: st.DrawFn, n_nodes: int) -> list[Doc]:
    """StorageClasses (WaitForFirstConsumer or Immediate, provisioned or not), local
    PersistentVolumes pinned to a node, and claims in ``default``: unbound, or bound to a
    volume (both sides, as a cluster at rest has them)."""
    docs: list[Doc] = []
    for name, provisioner in (("fast", "example.com/csi"),
                              ("local", "kubernetes.io/no-provisioner")):
        docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                     "metadata": {"name": name}, "provisioner": provisioner,
                     "volumeBindingMode": draw(st.sampled_from(("WaitForFirstConsumer",
                                                                "Immediate")))})
    for i in range(draw(st.integers(0, 3))):
        pv: Doc = {"apiVersion": "v1", "kind": "PersistentVolume",
                   "metadata": {"name": f"pv{i}"},
                   "spec": {"capacity": {"storage": draw(st.sampled_from(("1Gi", "10Gi")))},
                            "accessModes": [draw(st.sampled_from(("ReadWriteOnce",
                                                                  "ReadWriteOncePod",
                                                                  "ReadOnlyMany")))],
                            "storageClassName": "local", "local": {"path": f"/d{i}"}}}
        if n_nodes:
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{
                "matchExpressions": [{"key": HOSTNAME, "operator": "In",
                                      "values": [f"n{draw(st.integers(0, n_nodes - 1))}"]}]}]}}
        docs.append(pv)
    pvs = [d for d in docs if d["kind"] == "PersistentVolume"]
    for name in CLAIMS:
        if not draw(st.booleans()):
            continue
        pvc: Doc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                             "storageClassName": draw(st.sampled_from(("local", "fast"))),
                             "resources": {"requests": {"storage": "1Gi"}}}}
        free = [pv for pv in pvs if "claimRef" not in pv["spec"]]
        if free and draw(st.booleans()):
            pv = draw(st.sampled_from(free))
            pv["spec"]["claimRef"] = {"namespace": "default", "name": name}
            pv["status"] = {"phase": "Bound"}
            pvc["spec"]["storageClassName"] = "local"
            pvc["spec"]["volumeName"] = pv["metadata"]["name"]
            pvc["status"] = {"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
                             "capacity": pv["spec"]["capacity"]}
        docs.append(pvc)
    return docs


# ------------------------------------------------------------------ configurations

EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                    "score", "reserve", "permit", "preBind", "bind", "postBind", "multiPoint")
PLUGINS = ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality",
           "TaintToleration", "NodeAffinity", "NodePorts", "NodeName", "NodeUnschedulable",
           "PodTopologySpread", "InterPodAffinity", "DefaultPreemption", "VolumeBinding",
           "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits", "DefaultBinder",
           "PrioritySort", "SchedulingGates", "DynamicResources", "*", "NoSuchPlugin")
SCORE_PLUGINS = ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality",
                 "TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity")
# the plugins implementing each point, so that most enabled lists are valid
POINT_PLUGINS: dict[str, tuple[str, ...]] = {
    "preEnqueue": ("SchedulingGates",),
    "queueSort": ("PrioritySort",),
    "preFilter": ("NodeResourcesFit", "NodeAffinity", "NodePorts", "PodTopologySpread",
                  "InterPodAffinity", "VolumeBinding"),
    "filter": ("NodeResourcesFit", "TaintToleration", "NodeAffinity", "NodePorts", "NodeName",
               "NodeUnschedulable", "PodTopologySpread", "InterPodAffinity"),
    "postFilter": ("DefaultPreemption",),
    "preScore": ("NodeResourcesFit", "TaintToleration", "NodeAffinity", "PodTopologySpread",
                 "InterPodAffinity"),
    "reserve": ("VolumeBinding",),
    "preBind": ("VolumeBinding",),
    "bind": ("DefaultBinder",),
    "score": SCORE_PLUGINS,
}

@st.composite
def plugin_args(draw: st.DrawFn) -> Doc:
    name = draw(st.sampled_from(("NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                 "PodTopologySpread", "InterPodAffinity", "DefaultPreemption",
                                 "NodeAffinity")))
    args: Doc
    if name == "NodeResourcesFit":
        typ = draw(st.sampled_from(("LeastAllocated", "MostAllocated",
                                    "RequestedToCapacityRatio")))
        strat: Doc = {"type": typ, "resources": [
            {"name": r, "weight": draw(st.integers(0, 100))}
            for r in draw(st.lists(st.sampled_from(("cpu", "memory", GPU)), min_size=1,
                                   max_size=3, unique=True))]}
        if typ == "RequestedToCapacityRatio":
            utils = sorted(draw(st.lists(st.integers(0, 100), min_size=1, max_size=3,
                                         unique=True)))
            strat["requestedToCapacityRatio"] = {"shape": [
                {"utilization": u, "score": draw(st.integers(0, 10))} for u in utils]}
        args = {"scoringStrategy": strat}
        if draw(st.booleans()):
            args["ignoredResources"] = [GPU]
    elif name == "NodeResourcesBalancedAllocation":
        args = {"resources": [{"name": "cpu", "weight": 1},
                              {"name": draw(st.sampled_from(("memory", GPU))), "weight": 1}]}
    elif name == "PodTopologySpread":
        if draw(st.booleans()):
            args = {"defaultingType": "System"}
        else:
            args = {"defaultingType": "List", "defaultConstraints": [
                {"maxSkew": draw(st.integers(1, 3)), "topologyKey": ZONE,
                 "whenUnsatisfiable": draw(st.sampled_from(("DoNotSchedule",
                                                            "ScheduleAnyway")))}]}
    elif name == "InterPodAffinity":
        args = {"hardPodAffinityWeight": draw(st.integers(0, 100))}
        if draw(st.booleans()):
            args["ignorePreferredTermsOfExistingPods"] = True
    elif name == "DefaultPreemption":
        args = {"minCandidateNodesPercentage": draw(st.integers(0, 100)),
                "minCandidateNodesAbsolute": draw(st.integers(1, 200))}
    else:
        args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [draw(node_selector_terms())]}}}
    return {"name": name, "args": args}


@st.composite
def profiles(draw: st.DrawFn, name: str) -> Doc:
    prof: Doc = {"schedulerName": name}
    plugins: Doc = {}
    for point in draw(st.lists(st.sampled_from(EXTENSION_POINTS), max_size=3, unique=True)):
        ps: Doc = {}
        if draw(st.booleans()):
            ps["disabled"] = [{"name": n} for n in draw(
                st.lists(st.sampled_from(PLUGINS), min_size=1, max_size=2, unique=True))]
        if draw(st.booleans()):
            ps["enabled"] = [
                {"name": n, **({"weight": draw(st.integers(0, 100))}
                               if point in ("score", "multiPoint") and draw(st.booleans())
                               else {})}
                for n in draw(st.lists(st.sampled_from(
                    POINT_PLUGINS.get(point, PLUGINS) if draw(st.integers(0, 5)) else PLUGINS),
                    min_size=1, max_size=2, unique=True))]
        plugins[point] = ps
    if plugins:
        prof["plugins"] = plugins
    if draw(st.booleans()):
        prof["pluginConfig"] = draw(st.lists(plugin_args(), max_size=2,
                                             unique_by=lambda a: a["name"]))
    if draw(st.integers(0, 3)) == 0:
        prof["percentageOfNodesToScore"] = draw(st.integers(0, 100))
    return prof


@st.composite
def configs(draw: st.DrawFn) -> Doc:
    cfg: Doc = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration"}
    n = draw(st.integers(0, 2))
    if n:
        cfg["profiles"] = [draw(profiles(PROFILE_NAMES[i])) for i in range(n)]
    if draw(st.booleans()):
        cfg["percentageOfNodesToScore"] = draw(st.integers(0, 100))
    if draw(st.integers(0, 5)) == 0:
        cfg["podInitialBackoffSeconds"] = draw(st.integers(1, 3))
        cfg["podMaxBackoffSeconds"] = draw(st.integers(3, 20))
    return cfg


# ------------------------------------------------------------------ scenarios


@dataclass
class ScenarioDraw:
    docs: list[Doc] = field(default_factory=list)
    timed: bool = False  # arrivals or durations: virtual time may run on

    def text(self) -> str:
        return to_yaml(self.docs)

    def pending_keys(self) -> list[str]:
        return [f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in self.docs
                if d["kind"] == "Pod" and not d["spec"].get("nodeName")]


@st.composite
def faults(draw: st.DrawFn, i: int, node_names: list[str], pod_keys: list[str]) -> Doc:
    """A ``kind: Fault`` of the scenario (docs/faults.md), naming its own nodes and pods."""
    actions = ["BindError", "BindConflict"]
    if node_names:
        actions += ["DeleteNode", "NodeNotReady", "NodeReady"]
    if pod_keys:
        actions.append("DeletePod")
    action = draw(st.sampled_from(actions))
    spec: Doc = {"at": draw(st.sampled_from((0, 0.5, 1, 5, 30, 400))), "action": action}
    node = st.sampled_from(node_names) if node_names else st.nothing()
    pod = st.sampled_from(pod_keys) if pod_keys else st.nothing()
    if action in ("DeleteNode", "NodeNotReady", "NodeReady"):
        spec["node"] = draw(node)
    elif action == "DeletePod":
        spec["pod"] = draw(pod)
        if draw(st.booleans()):
            spec["duringBinding"] = True
    else:  # a binding fault: of a pod, to a node, or both
        which = draw(st.sampled_from(("pod", "node", "both")))
        if which in ("pod", "both") and pod_keys:
            spec["pod"] = draw(pod)
        if (which in ("node", "both") or "pod" not in spec) and node_names:
            spec["node"] = draw(node)
        if "pod" not in spec and "node" not in spec:
            return {"apiVersion": "kubesched.io/v1alpha1", "kind": "Fault",
                    "metadata": {"name": f"f{i}"}, "spec": {"action": "NodeReady"}} \
                if node_names else draw(faults(i, node_names, pod_keys))
        spec["count"] = draw(st.integers(1, 3))
        if action == "BindConflict" and node_names and draw(st.booleans()):
            spec["boundTo"] = draw(node)
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "Fault",
            "metadata": {"name": f"f{i}"}, "spec": spec}


@st.composite
def scenarios(draw: st.DrawFn, *, with_config: bool = True,
              max_nodes: int = 8, max_pods: int = 30) -> ScenarioDraw:
    out = ScenarioDraw()
    out.docs.append({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": "team1", "labels": {"team": "x"}}})
    n_nodes = draw(st.integers(0, max_nodes))
    out.docs += [draw(nodes(i)) for i in range(n_nodes)]
    classes = [f"pc{i}" for i in range(draw(st.integers(0, 3)))]
    default = draw(st.integers(-1, len(classes) - 1)) if classes else -1
    out.docs += [draw(priority_classes(c, i == default)) for i, c in enumerate(classes)]
    info = PodInfo()
    out.docs += [draw(pods(j, n_nodes, classes, info))
                 for j in range(draw(st.integers(0, max_pods)))]
    out.timed = info.timed
    out.docs += [draw(pdbs(i)) for i in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        out.docs += draw(storage(n_nodes))
    if draw(st.integers(0, 2)) == 0:  # node changes, deletions and binding failures
        node_names = [d["metadata"]["name"] for d in out.docs if d["kind"] == "Node"]
        pod_keys = [f"{d['metadata']['namespace']}/{d['metadata']['name']}"
                    for d in out.docs if d["kind"] == "Pod"]
        out.docs += [draw(faults(i, node_names, pod_keys))
                     for i in range(draw(st.integers(1, 3)))]
        out.timed = True  # a fault's time moves the virtual clock
    if with_config and draw(st.integers(0, 2)) == 0:
        out.docs.append(draw(configs()))
    return out


# ------------------------------------------------------------------ mutations

GARBAGE: tuple[Any, ...] = ("", "x", -1, 0, 2**64, 1.5, -0.0, float("inf"), True, None, [],
                            {}, [1, "a"], {"k": 1}, "1Gi", "  ", "Ω", "a" * 300, "-",
                            "kubernetes.io/x", "1e999")


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        obj = obj[p]
    return obj


@dataclass
class Mutation:
    doc: Any
    what: str
    unknown_field: bool = False  # a field the schema does not know was added


def _swap_type(v: Any) -> Any:
    if isinstance(v, dict):
        return list(v.values())
    if isinstance(v, list):
        return {str(i): x for i, x in enumerate(v)}
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return [v]
    return "null"


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Mutation:
    """``doc`` with one random change: a field deleted, a value's type swapped, a garbage
    value, an unknown field added (at a mapping that is not a free-form map), a key renamed
    by a typo, or a key that is not a string."""
    doc = copy.deepcopy(doc)
    paths = _paths(doc)
    path = draw(st.sampled_from(paths))
    op = draw(st.sampled_from(("delete", "swap", "garbage", "unknown", "typo", "key")))
    target = _get(doc, path)
    if op == "unknown" and isinstance(target, dict) and path[-1:] not in (
            ("labels",), ("annotations",), ("nodeSelector",), ("matchLabels",),
            ("capacity",), ("allocatable",), ("requests",), ("limits",), ("overhead",),
            ("args",)) and not (len(path) >= 2 and path[-2] == "pluginConfig"):
        name = draw(st.sampled_from(("nodeSelecter", "extraField", "Spec", "x-y")))
        if name not in target:
            target[name] = draw(st.sampled_from(GARBAGE[:6]))
            return Mutation(doc, f"unknown {name} at {path}", unknown_field=True)
    if not path:
        return Mutation(draw(st.sampled_from(GARBAGE)), "whole document replaced")
    parent, key = _get(doc, path[:-1]), path[-1]
    if op == "delete":
        del parent[key]
        return Mutation(doc, f"deleted {path}")
    if op == "swap":
        parent[key] = _swap_type(target)
        return Mutation(doc, f"type swapped at {path}")
    if op == "key" and isinstance(parent, dict):  # YAML allows any key; JSON only strings
        parent[draw(st.sampled_from((1, True, None, 1.5, -0.0, 10**20)))] = parent.pop(key)
        return Mutation(doc, f"non-string key at {path}")
    if op == "typo" and isinstance(key, str) and key:
        parent[key[:-1] + key[-1].swapcase()] = parent.pop(key)
        return Mutation(doc, f"renamed {path}")
    parent[key] = draw(st.one_of(st.sampled_from(GARBAGE), invalid_quantities()))
    return Mutation(doc, f"garbage at {path}")
