"""The oracle's cases (``bank_oracle.py`` banks kube-scheduler's verdicts on them,
``test_oracle_bank.py`` replays them): the golden generators' scenarios in ``../shared/golden``
and DRA scenarios made here, each found again from what the bank stores (a name and a
SHA-256, never the text)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for _p in (str(HERE), str(HERE.parent)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from kube_oracle import load_objects  # noqa: E402

BANK = HERE / "oracle"
SCHEDULER = "kube-scheduler v1.36.2"
FAMILIES = ("explain", "explain-config", "explain-spread", "explain-volumes", "sequence",
            "dra")
GOLDEN_FAMILIES = {
    "explain": ("explain", "case-*.yaml"),
    "explain-config": ("explain-config", "case-*.yaml"),
    "explain-spread": ("explain-spread", "case-*.yaml"),
    "explain-volumes": ("explain-volumes", "case-*.yaml"),
    "sequence": ("sequence", "seq-*.yaml"),
}
DRA_SEEDS = range(60)


class ScenarioChanged(RuntimeError):
    pass


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digest(objects: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(objects, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------- DRA cases

DRIVER = "gpu.example.com"


def dra_scenario(seed: int) -> list[dict[str, Any]]:
    """Nodes of unequal sizes (so scores rarely tie), node-local pools of 0 to 3 devices of
    two models, one or two DeviceClasses, and 4 to 10 pending pods, most with a
    ResourceClaim of their own (one or two devices, maybe of one model), some without."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    n_nodes = rng.randint(2, 6)
    classes = ["gpu"] + (["gpu-a"] if rng.random() < 0.5 else [])
    for c in classes:
        expr = f'device.driver == "{DRIVER}"'
        if c == "gpu-a":
            expr += f' && device.attributes["{DRIVER}"].model == "a"'
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                     "metadata": {"name": c},
                     "spec": {"selectors": [{"cel": {"expression": expr}}]}})
    for i in range(n_nodes):
        name = f"node-{i}"
        cpu = rng.choice([2000, 3000, 4000, 6000, 8000, 12000, 16000]) + 100 * i
        mem = rng.choice([4096, 8192, 16384, 32768]) + 64 * i
        res = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": "110"}
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                     "spec": {}, "status": {"capacity": res, "allocatable": res}})
        n_dev = rng.choice([0, 1, 1, 2, 2, 3])
        if n_dev:
            docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                         "metadata": {"name": f"{name}-{DRIVER}"},
                         "spec": {"driver": DRIVER, "nodeName": name,
                                  "pool": {"name": name, "generation": 1,
                                           "resourceSliceCount": 1},
                                  "devices": [{"name": f"gpu-{d}", "attributes": {
                                      "model": {"string": rng.choice(["a", "b"])}}}
                                      for d in range(n_dev)]}})
    for j in range(rng.randint(4, 10)):
        name = f"p{j:02d}"
        cpu = rng.choice([100, 250, 500, 1000, 1500, 2500])
        mem = rng.choice([128, 256, 512, 1024, 2048])
        spec: dict[str, Any] = {
            "schedulerName": "default-scheduler",
            "containers": [{"name": "c", "image": "registry.example/app:1",
                            "resources": {"requests": {"cpu": f"{cpu}m",
                                                       "memory": f"{mem}Mi"}}}]}
        if rng.random() < 0.8:
            request: dict[str, Any] = {"deviceClassName": rng.choice(classes),
                                       "allocationMode": "ExactCount",
                                       "count": rng.choice([1, 1, 1, 2])}
            if rng.random() < 0.25:
                request["selectors"] = [{"cel": {"expression":
                                                 f'device.attributes["{DRIVER}"].model == '
                                                 f'"{rng.choice(["a", "b"])}"'}}]
            docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": f"{name}-gpu", "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpu",
                                                            "exactly": request}]}}})
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
            spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    return docs


def cases(family: str) -> list[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    """(name, objects, what the bank stores to find the scenario again)."""
    if family == "dra":
        out = []
        for seed in DRA_SEEDS:
            objs = dra_scenario(seed)
            out.append((f"dra-{seed}", objs, {"dra_seed": seed, "sha256": digest(objs)}))
        return out
    from shared_files import golden_cases

    folder, pattern = GOLDEN_FAMILIES[family]
    out = []
    for p in golden_cases(folder, pattern=pattern):
        objs, repaired = accepted(load_objects(p))
        ref = {"golden": f"{folder}/{p.name}", "sha256": sha256(p)}
        out.append((p.stem, objs, {**ref, "repaired": True} if repaired else ref))
    return out


def accepted(objects: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The scenario as an API server accepts it, and whether that changed it: the golden
    generators' harness ran without one and sometimes gave a pod two topology spread
    constraints on the same topologyKey and whenUnsatisfiable, which the server refuses;
    the second of such a pair is dropped."""
    out, changed = [], False
    for obj in objects:
        spread = (obj.get("spec") or {}).get("topologySpreadConstraints") \
            if obj.get("kind") == "Pod" else None
        if spread:
            seen, kept = set(), []
            for c in spread:
                key = (c.get("topologyKey"), c.get("whenUnsatisfiable"))
                if key not in seen:
                    seen.add(key)
                    kept.append(c)
            if len(kept) != len(spread):
                obj = {**obj, "spec": {**obj["spec"], "topologySpreadConstraints": kept}}
                changed = True
        out.append(obj)
    return out, changed


def banked_scenario(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A banked case's scenario, found again (None: ../shared is absent outside CI);
    ``ScenarioChanged`` when it is no longer the one kube-scheduler decided."""
    if "dra_seed" in case:
        objs = dra_scenario(case["dra_seed"])
        if digest(objs) != case["sha256"]:
            raise ScenarioChanged(f"{case['case']}: dra_scenario({case['dra_seed']}) no "
                                  "longer makes the banked scenario; re-bank the dra family")
        return objs
    from shared_files import shared_path

    path = shared_path("golden", case["golden"])
    if path is None:
        return None
    if sha256(path) != case["sha256"]:
        raise ScenarioChanged(f"{path} changed since it was banked; re-bank its family")
    objs, repaired = accepted(load_objects(path))
    assert repaired == case.get("repaired", False), case["case"]
    return objs


