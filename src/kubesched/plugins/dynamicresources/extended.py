"""Extended resources backed by a DeviceClass (DRAExtendedResource, KEP-5004).

A pod asking for an extended resource in ``resources.requests`` gets it from a DRA driver
when a DeviceClass maps the name — its ``spec.extendedResourceName``, or the implicit
``deviceclass.resource.kubernetes.io/<class>`` every class has — and the node does not
advertise the resource in its allocatable (a device plugin's node keeps serving it).
NodeResourcesFit then leaves the resource to DynamicResources, which allocates devices
through one special claim per pod: in memory (named ``<extended-resources>``) until PreBind
creates it, owned by the pod and annotated ``resource.kubernetes.io/extended-resource-claim:
"true"``, and records which container's resource each request serves in the pod's
``status.extendedResourceClaimStatus``.

Upstream: ``dynamicresources/extendeddynamicresources.go`` (stored version 16913111, the
newest read: long-lived and short-lived containers' requests), ``extended/cache.go`` and
``deviceclassresolver_test.go`` (the implicit name is always mapped), ``noderesources/fit.go``
(``shouldDelegateResourceToDRA``), ``schedutil.IsDRAExtendedResourceName``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from functools import lru_cache

from kubesched.api.dra.types import (
    EXACT_COUNT,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from kubesched.api.types import (
    Container,
    ObjectMeta,
    OwnerReference,
    Pod,
)
from kubesched.api.types import ContainerExtendedResourceRequest as RequestMapping
from kubesched.framework.table_cache import IdentityMemo
from kubesched.plugins.helper import is_extended_resource_name

#: resourceapi.ResourceDeviceClassPrefix: every class's implicit extended resource name
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
#: resourceapi.ExtendedResourceClaimAnnotation
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: specialClaimInMemName: deliberately not a valid object name, so it never collides
SPECIAL_CLAIM_NAME = "<extended-resources>"


@lru_cache(maxsize=4096)
def is_dra_extended_resource_name(name: str) -> bool:
    """``schedutil.IsDRAExtendedResourceName``: an extended resource name, or an implicit
    one (``deviceclass.resource.kubernetes.io/…`` counts as native by its domain, so the
    plain extended-name test would miss it)."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


# by the classes it was built from (the DRA index makes a new dict when a class changes)
_MAPPINGS: IdentityMemo[dict[str, str]] = IdentityMemo(4)


def class_mapping_of(classes: Mapping[str, DeviceClass]) -> dict[str, str]:
    """``device_class_mapping`` of the listers' classes, built once per state of them: the
    DRA index makes a new dict whenever a DeviceClass comes, goes or changes, and both
    NodeResourcesFit and DynamicResources ask for every pod with extended resources."""
    mapping = _MAPPINGS.get(classes)
    if mapping is None:
        mapping = _MAPPINGS.put(classes, device_class_mapping(classes.values()))
    return mapping


def device_class_mapping(classes: Iterable[DeviceClass]) -> dict[str, str]:
    """The DeviceClassResolver: extended resource name → class name, for every class's
    implicit name and its ``extendedResourceName``. Upstream's cache keeps whichever class
    its informer reported last for a name two classes claim; here the newest class (by
    creationTimestamp, then name) wins, so a scenario decides the same on every run."""
    out: dict[str, str] = {}
    ordered = sorted(classes, key=lambda c: (c.metadata.creation_timestamp or 0.0, c.name))
    for c in ordered:
        out[DEVICE_CLASS_PREFIX + c.name] = c.name
    for c in ordered:  # an explicit name outranks another class's implicit one
        if c.extended_resource_name:
            out[c.extended_resource_name] = c.name
    return out


def dra_backed_requests(pod: Pod, mapping: Mapping[str, str]) -> dict[str, int]:
    """The pod's requests (PodRequests, as NodeResourcesFit computes them) for extended
    resources some DeviceClass maps, by name; empty when there are none."""
    return {name: q for name, q in pod.requests.items()
            if q and name in mapping and is_dra_extended_resource_name(name)}


def find_extended_resource_claim(pod: Pod, claims: Iterable[ResourceClaim]
                                 ) -> ResourceClaim | None:
    """findExtendedResourceClaim: the annotated claim the pod controls, made by an earlier
    cycle's PreBind."""
    for c in claims:
        if c.metadata.annotations.get(EXTENDED_CLAIM_ANNOTATION) != "true":
            continue
        if any(r.name == pod.name and r.controller and r.uid == pod.uid
               for r in c.metadata.owner_references):
            return c
    return None


def special_claim(pod: Pod) -> ResourceClaim:
    """The in-memory claim of a cycle: no requests yet (Filter makes one per node). Its uid
    is only a key for the in-flight allocations (upstream: a random UUID)."""
    meta = ObjectMeta(
        name=SPECIAL_CLAIM_NAME, namespace=pod.namespace,
        uid=f"{pod.uid}/{SPECIAL_CLAIM_NAME}",
        annotations={EXTENDED_CLAIM_ANNOTATION: "true"},
        owner_references=[OwnerReference(kind="Pod", name=pod.name, uid=pod.uid,
                                         controller=True)])
    return ResourceClaim(metadata=meta)


def is_special(claim: ResourceClaim) -> bool:
    return claim.name == SPECIAL_CLAIM_NAME


def created_claim_name(pod: Pod) -> str:
    """The name the API server's GenerateName ``<pod>-extended-resources-`` yields: five
    characters of its alphabet, derived from the pod (upstream: random) so runs replay; the
    base is cut as the API server cuts it (63 − 5 characters)."""
    base = f"{pod.name}-extended-resources-"[:58]
    digest = hashlib.sha256(f"{pod.namespace}/{pod.name}/{pod.uid}".encode()).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return base + "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: Iterable[DeviceRequest | None]
                       ) -> tuple[DeviceRequest | None, list[RequestMapping]]:
    """createResourceRequestAndMappings: one container's request for ``resource`` (None
    when ``reusable`` requests of later long-lived containers already cover it)."""
    q = container.requests.get(resource, 0)
    if not q:
        return None, []
    mappings = []
    covered = 0
    for r in reusable:
        if r is None or r.exactly is None:
            continue
        covered += r.exactly.count
        mappings.append(RequestMapping(container.name, resource, r.name))
        if covered >= q:
            return None, mappings
    # the resource's index among the container's requests sorted by name (Go map order
    # is random, so upstream sorts)
    ridx = sorted(container.requests).index(resource)
    name = f"container-{index}-request-{ridx}"
    request = DeviceRequest(name, DeviceSubRequest(name=name, device_class_name=class_name,
                                                   allocation_mode=EXACT_COUNT,
                                                   count=q - covered))
    mappings.append(RequestMapping(container.name, resource, name))
    return request, mappings


def _count(request: DeviceRequest) -> int:
    return request.exactly.count if request.exactly is not None else 0


def requests_and_mappings(pod: Pod, resources: Iterable[str], mapping: Mapping[str, str]
                          ) -> tuple[tuple[DeviceRequest, ...], tuple[RequestMapping, ...]]:
    """createRequestsAndMappings: the special claim's requests for ``resources`` (those a
    node leaves to DRA) and which container's resource each serves.

    Containers are numbered init containers first. Long-lived ones (regular containers and
    sidecars) each get their own request; a plain init container runs alone, before the
    later long-lived ones, so it reuses their devices and asks only for the rest, and the
    init containers' requests of one resource collapse into the largest.
    """
    spec = pod.spec
    containers = [*spec.init_containers, *spec.containers]
    n_init = len(spec.init_containers)
    short = [i for i, c in enumerate(containers)
             if i < n_init and c.restart_policy != "Always"]
    long_ = [i for i in range(len(containers)) if i not in short]
    requests: list[DeviceRequest] = []
    out: list[RequestMapping] = []
    for resource in sorted(resources):
        class_name = mapping.get(resource)
        if class_name is None:
            continue
        by_container: list[DeviceRequest | None] = [None] * len(containers)
        long_maps: list[RequestMapping] = []
        for i in long_:
            req, maps = _container_request(i, containers[i], resource, class_name, ())
            by_container[i] = req
            long_maps.extend(maps)
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_maps: list[RequestMapping] = []
        for i in short:
            req, maps = _container_request(i, containers[i], resource, class_name,
                                           by_container[i:])
            if req is not None:
                short_names.add(req.name)
                if largest is None or _count(largest) < _count(req):
                    largest = req
            short_maps.extend(maps)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            short_maps = [RequestMapping(m.container_name, m.resource_name, largest.name)
                          if m.request_name in short_names else m for m in short_maps]
        if largest is not None:
            requests.append(largest)
        requests.extend(r for r in by_container if r is not None)
        out.extend(long_maps)
        out.extend(short_maps)
    requests.sort(key=lambda r: r.name)
    return tuple(requests), tuple(out)


def node_claim(claim: ResourceClaim, requests: tuple[DeviceRequest, ...]) -> ResourceClaim:
    """The special claim as one node needs it (Filter's per-node copy)."""
    return ResourceClaim(metadata=claim.metadata, spec=DeviceClaim(requests=requests))
