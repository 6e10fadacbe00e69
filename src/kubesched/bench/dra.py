"""The DRA ops of scheduler_perf's DRA workloads (``dra/performance-config.yaml`` and
scheduler_perf's ``dra.go``), done on the simulator's objects.

- ``createResourceDriver``: a ResourceSlice for every node matching ``scheduler-perf-dra-*``;
  ``createAny``: the DeviceClass, the ResourceClaimTemplates, the ResourceClaims.
- ``allocResourceClaims``: each claim of the namespace in turn (the API server's list
  order: by name) is allocated on the first node, in a shuffled order of all nodes, where
  the structured allocator finds devices for it; the allocation is stored at once (no
  pod reserves it). Upstream shuffles with an unseeded generator; the generator here is
  seeded, so runs replay.
- The resourceclaim controller's part for pods created by the benchmark: a pod's claim from
  a template is created (owned by the pod) and named in its ``resourceClaimStatuses``
  before the pod reaches the scheduler, as ``create_template_claims`` does for a scenario.
"""

from __future__ import annotations

import fnmatch
import random
from typing import Any

from kubesched.api.dra.store import dra_index, replace_claim, with_status
from kubesched.api.dra.types import (
    DRA_PARSERS,
    ResourceClaim,
    ResourceClaimTemplate,
    claim_for_pod_from_template,
)
from kubesched.api.types import Node, Pod
from kubesched.bench.workloads import (
    DRA_NODE_PREFIX,
    DraOp,
    device_class,
    resource_claim,
    resource_claim_template,
    resource_slice,
)
from kubesched.plugins.dynamicresources.cache import IndexedAllocator, slice_index
from kubesched.plugins.dynamicresources.structured import Features

ALLOC_SEED = 0


def dra_objects(op: DraOp, nodes: list[Node]) -> dict[str, list[Any]]:
    """The objects of the workload's createResourceDriver and createAny ops."""
    driver_nodes = [n.name for n in nodes if fnmatch.fnmatchcase(n.name, DRA_NODE_PREFIX + "*")]
    docs = [device_class()]
    docs += [resource_slice(name, op.max_claims_per_node) for name in driver_nodes]
    docs += [resource_claim_template(ns) for ns in op.claim_templates]
    docs += [resource_claim(i, ns) for ns, count in op.claims for i in range(count)]
    out: dict[str, list[Any]] = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(DRA_PARSERS[d["kind"]](d))
    return out


def allocate_claims(objects: dict[str, list[Any]], nodes: list[Node], namespace: str,
                    features: Features, seed: int = ALLOC_SEED) -> int:
    """``allocResourceClaims`` over ``objects``; returns how many claims it allocated.
    Raises RuntimeError when a claim fits no node (upstream: the test fails)."""
    rng = random.Random(seed)
    order = list(nodes)
    claims = sorted((c for c in objects.get("ResourceClaim", ())
                     if c.namespace == namespace and c.allocation is None),
                    key=lambda c: c.name)
    done = 0
    for claim in claims:
        idx = dra_index(objects)
        allocator = IndexedAllocator(features, idx.allocated_state(features.consumable_capacity),
                                     idx.classes, slice_index(idx.slices), idx.taint_rules)
        rng.shuffle(order)
        for node in order:
            result = allocator.allocate(node, [claim])
            if result is not None:
                replace_claim(objects, with_status(claim, allocation=result[0]))
                done += 1
                break
        else:
            raise RuntimeError(f"Could not allocate claim {claim.key}")
    return done


def claims_for_pods(pods: list[Pod], objects: dict[str, list[Any]]) -> list[ResourceClaim]:
    """The resourceclaim controller for new pods: the claims their templates make (not
    stored; the pods' ``resourceClaimStatuses`` are filled in)."""
    templates = {(t.metadata.namespace, t.metadata.name): t
                 for t in objects.get("ResourceClaimTemplate", ())
                 if isinstance(t, ResourceClaimTemplate)}
    out = []
    for pod in pods:
        for pc in pod.spec.pod_resource_claims:
            template = templates.get((pod.namespace, pc.resource_claim_template_name))
            if template is None:
                continue
            claim = claim_for_pod_from_template(template, pod.name, pod.namespace, pod.uid,
                                                pc.name)
            pod.status.resource_claim_statuses[pc.name] = claim.name
            out.append(claim)
    return out
