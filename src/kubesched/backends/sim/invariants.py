"""The simulator's invariant checker (``kubesched simulate --check``).

At every binding the simulator is asked to apply, before it is applied, the checker decides
from the simulator's own objects — its pods, the sets of pods bound to each node, the Node
objects — whether the binding keeps what upstream's Filter plugins promise: the node has room
(allocatable of every requested resource, pod count), no host port conflicts, the pod's
nodeSelector and required node affinity match, its tolerations cover the node's NoSchedule /
NoExecute taints and ``spec.unschedulable``, required pod (anti-)affinity holds both ways, and
DoNotSchedule topology spread constraints hold; that no pod is bound twice; and for pods
with ResourceClaims, that each claim is allocated, reserved for the pod and allocated where
the node is, and that no device is allocated to two claims (admin access aside) anywhere.

It deliberately shares nothing with the scheduler beyond the api layer's selector and
toleration *matching*: no Cache, NodeInfo, Snapshot or plugin code, and its own counting and
skew arithmetic, so that a bug in the scheduler's bookkeeping cannot hide itself. It checks
the real bound state: nominated pods, which the scheduler may count as well, are not there.

Not checked: a profile's default topology spread constraints (a scheduler setting, not part
of the pod) and the volume plugins' rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from kubesched.api.selectors import (
    Selector,
    SelectorError,
    compile_node_selector,
    label_selector_as_selector,
    selector_from_set,
)
from kubesched.api.types import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Namespace,
    Node,
    Pod,
    PodAffinityTerm,
    Taint,
)
from kubesched.backends.sim.ports import JudgedCluster
from kubesched.config.plugin_args import NodeResourcesFitArgs

# Names of the rules a violation reports.
DOUBLE_BINDING = "double-binding"
UNSCHEDULABLE = "node-unschedulable"
TAINTS = "taints"
NODE_SELECTOR = "node-selector"
NODE_AFFINITY = "node-affinity"
HOST_PORTS = "host-ports"
POD_COUNT = "pod-count"
RESOURCES = "resources"
TOPOLOGY_SPREAD = "topology-spread"
POD_AFFINITY = "pod-affinity"
POD_ANTI_AFFINITY = "pod-anti-affinity"
EXISTING_ANTI_AFFINITY = "existing-pod-anti-affinity"
DRA_CLAIMS = "dra-claims"
DRA_DEVICES = "dra-devices"

_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_WILDCARD_IP = "0.0.0.0"
_MAX_INT32 = 2**31 - 1


class InvariantViolation(Exception):
    """A binding the scheduler must never have asked for. The message names pod, node and
    rule: ``invariant violated: pod NS/NAME on node N: DETAIL``."""

    def __init__(self, pod: str, node: str, rule: str, detail: str) -> None:
        super().__init__(f"invariant violated: pod {pod} on node {node}: {detail}")
        self.pod = pod
        self.node = node
        self.rule = rule
        self.detail = detail


class _Failed(Exception):
    """Internal: one rule failed (rule, detail)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(detail)
        self.rule = rule
        self.detail = detail


def _fmt(resource: str, value: int) -> str:
    return f"{value}m" if resource == CPU else str(value)


# ---------------------------------------------------------------- pod affinity terms


@dataclass(frozen=True, slots=True)
class _Term:
    """A required pod (anti-)affinity term of ``owner``, as the API defines it: the owner's
    namespace when neither namespaces nor namespaceSelector is set."""

    topology_key: str
    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector | None  # None: the term names no namespaceSelector

    def matches(self, pod: Pod, namespaces: Mapping[str, Namespace]) -> bool:
        if not self._namespace_selected(pod.namespace, namespaces):
            return False
        return self.selector.matches(pod.labels)

    def _namespace_selected(self, ns: str, namespaces: Mapping[str, Namespace]) -> bool:
        if ns in self.namespaces:
            return True
        sel = self.namespace_selector
        if sel is None:
            return False
        if sel.empty():  # {} selects every namespace, known or not
            return True
        obj = namespaces.get(ns)
        return obj is not None and sel.matches(obj.metadata.labels)


def _terms(owner: Pod, terms: Iterable[PodAffinityTerm]) -> list[_Term]:
    out = []
    for t in terms:
        if not t.namespaces and t.namespace_selector is None:
            names = frozenset((owner.namespace,))
        else:
            names = frozenset(t.namespaces)
        ns_sel = (label_selector_as_selector(t.namespace_selector)
                  if t.namespace_selector is not None else None)
        out.append(_Term(t.topology_key, label_selector_as_selector(t.label_selector), names,
                         ns_sel))
    return out


def _required(pod: Pod, anti: bool) -> tuple[PodAffinityTerm, ...]:
    aff = pod.spec.affinity
    if aff is None:
        return ()
    pa = aff.pod_anti_affinity if anti else aff.pod_affinity
    return pa.required if pa is not None else ()


# ---------------------------------------------------------------- the checker


class InvariantChecker:
    """Checks each binding of ``sim`` against the simulator's state just before it."""

    def __init__(self, sim: JudgedCluster) -> None:
        self.sim = sim
        self._bound_once: dict[str, str] = {}  # uid -> node of every binding applied
        # uids of bound pods with required anti-affinity, in binding order (a dict: the
        # first violation reported must not depend on string hashing); stale entries are
        # dropped lazily
        self._anti: dict[str, None] | None = None

    # -------------------------------------------------------------- entry points

    def check(self, pod: Pod, node_name: str) -> InvariantViolation | None:
        """The violation binding ``pod`` (the simulator's stored object when it has one)
        to ``node_name`` would be, or None."""
        try:
            self._check(pod, node_name)
        except _Failed as f:
            return InvariantViolation(pod.key, node_name, f.rule, f.detail)
        return None

    def bound(self, pod: Pod, node_name: str) -> None:
        """The binding was applied."""
        self._bound_once[pod.uid] = node_name
        if self._anti is not None and _required(pod, anti=True):
            self._anti[pod.uid] = None

    # -------------------------------------------------------------- the rules

    def _check(self, pod: Pod, node_name: str) -> None:
        before = self._bound_once.get(pod.uid)
        if before is not None:
            raise _Failed(DOUBLE_BINDING, f"bound twice (already bound to node {before})")
        current = self.sim.pods.get(pod.uid)
        if current is not None and current.spec.node_name:
            raise _Failed(DOUBLE_BINDING,
                          f"already bound (to node {current.spec.node_name})")
        node = self.sim.nodes.get(node_name)
        if node is None:  # the simulator refuses it: no placement to judge
            return
        on_node = self._pods_on(node_name)
        self._node_taints(pod, node)
        self._node_selection(pod, node)
        self._host_ports(pod, on_node)
        self._room(pod, node, on_node, self._ignored(pod))
        self._topology_spread(pod, node)
        self._pod_affinity(pod, node)
        self._dra(pod, node)

    def _dra(self, pod: Pod, node: Node) -> None:
        if not pod.spec.pod_resource_claims:
            return
        claims = {f"{c.metadata.namespace}/{c.metadata.name}": c
                  for c in self.sim.objects.get("ResourceClaim", ())}
        for pc in pod.spec.pod_resource_claims:
            name = pc.resource_claim_name or pod.status.resource_claim_statuses.get(pc.name)
            if not name:
                continue
            claim = claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                raise _Failed(DRA_CLAIMS, f"claim {name} does not exist")
            if claim.allocation is None:
                raise _Failed(DRA_CLAIMS, f"claim {name} is not allocated")
            if not any(r.uid == pod.uid for r in claim.reserved_for):
                raise _Failed(DRA_CLAIMS, f"claim {name} is not reserved for the pod")
            sel = claim.allocation.node_selector
            if sel is not None and not compile_node_selector(tuple(sel)).matches(node):
                raise _Failed(DRA_CLAIMS, f"claim {name} is allocated on other nodes")
        holders: dict[tuple[str, str, str], str] = {}
        # devices allowing multiple allocations: their shares' claims and consumption
        shares: dict[tuple[str, str, str], tuple[str, dict[str, Fraction]]] = {}
        for key in sorted(claims):  # sorted: the pair reported must not depend on hashing
            alloc = claims[key].allocation
            if alloc is None:
                continue
            for r in alloc.results:
                if r.admin_access:
                    continue
                dev = (r.driver, r.pool, r.device)
                other = holders.get(dev) or (shares[dev][0] if dev in shares and
                                             r.share_id is None else None)
                if other is not None and other != key:
                    raise _Failed(DRA_DEVICES, f"device {'/'.join(dev)} is allocated to "
                                               f"claims {other} and {key}")
                if r.share_id is None:
                    holders[dev] = key
                    continue
                used = shares.setdefault(dev, (key, {}))[1]
                for name, q in r.consumed_capacity.items():
                    used[name] = used.get(name, Fraction(0)) + q
        if shares:
            self._shared_capacity(shares)

    def _shared_capacity(self, shares: dict[tuple[str, str, str],
                                            tuple[str, dict[str, Fraction]]]) -> None:
        """The shares of a device consume no more of a capacity than the device has."""
        for s in self.sim.objects.get("ResourceSlice", ()):
            for d in s.devices:
                found = shares.get((s.driver, s.pool, d.name))
                if found is None:
                    continue
                for name, used in sorted(found[1].items()):
                    have = d.capacity.get(name)
                    if have is not None and used > have:
                        raise _Failed(DRA_DEVICES, f"device {s.driver}/{s.pool}/{d.name}: its "
                                                   f"shares consume {used} of {name}, more "
                                                   f"than its {have}")

    def _pods_on(self, node_name: str) -> list[Pod]:
        pods = self.sim.pods
        # sorted: the pod a violation names must not depend on string hashing
        return sorted((pods[u] for u in self.sim.pods_on_node(node_name)),
                      key=lambda p: p.key)

    def _node_taints(self, pod: Pod, node: Node) -> None:
        tolerations = pod.spec.tolerations
        if node.spec.unschedulable and not any(
                t.tolerates(_UNSCHEDULABLE_TAINT) for t in tolerations):
            raise _Failed(UNSCHEDULABLE, "node is unschedulable and the pod does not tolerate "
                                         "node.kubernetes.io/unschedulable:NoSchedule")
        for taint in node.spec.taints:
            if taint.effect in _BLOCKING_EFFECTS and not any(
                    t.tolerates(taint) for t in tolerations):
                raise _Failed(TAINTS, f"untolerated taint {taint.key}={taint.value}:"
                                      f"{taint.effect}")

    def _node_selection(self, pod: Pod, node: Node) -> None:
        rule = _unselected(pod, node)
        if rule == NODE_SELECTOR:
            raise _Failed(rule, "nodeSelector does not match the node's labels")
        if rule == NODE_AFFINITY:
            raise _Failed(rule, "required node affinity does not match the node")

    @staticmethod
    def _host_ports(pod: Pod, on_node: list[Pod]) -> None:
        wanted = _host_ports(pod)
        if not wanted:
            return
        for other in on_node:
            for ip, proto, port in _host_ports(other):
                for wip, wproto, wport in wanted:
                    if wport != port or wproto != proto:
                        continue
                    if wip == ip or _WILDCARD_IP in (wip, ip):
                        raise _Failed(HOST_PORTS, f"host port {wip}:{wport}/{wproto} conflicts "
                                                  f"with {ip}:{port}/{proto} of pod {other.key}")

    def _ignored(self, pod: Pod) -> tuple[frozenset[str], frozenset[str]]:
        """The resources (and resource groups) NodeResourcesFit does not check for the pod's
        profile: a scheduler extender managing them with ``ignoredByScheduler`` decides."""
        prof = self.sim.config.profile(pod.spec.scheduler_name)
        args = prof.plugin_config.get("NodeResourcesFit") if prof is not None else None
        if not isinstance(args, NodeResourcesFitArgs):  # the profile has no Fit
            return frozenset(), frozenset()
        return frozenset(args.ignored_resources), frozenset(args.ignored_resource_groups)

    @staticmethod
    def _room(pod: Pod, node: Node, on_node: list[Pod],
              ignored: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
              ) -> None:
        alloc = node.status.allocatable
        n = len(on_node) + 1
        if n > alloc.get(PODS, 0):
            raise _Failed(POD_COUNT, f"too many pods ({n} of {alloc.get(PODS, 0)})")
        # Only what the pod asks for: a node already over on a resource at load (or a pod
        # asking none of it) is no decision of the scheduler's, and upstream's Fit agrees.
        first = (CPU, MEMORY, EPHEMERAL_STORAGE)
        names = [r for r in first if pod.requests.get(r, 0) > 0]
        # extended resources DRA devices serve (DRAExtendedResource): rule dra-devices
        status = pod.status.extended_resource_claim_status
        dra = {m.resource_name for m in status.request_mappings} if status else set()
        names += sorted(r for r, v in pod.requests.items()
                        if v > 0 and r not in first and r != PODS and r not in ignored[0]
                        and r.split("/", 1)[0] not in ignored[1] and r not in dra)
        for r in names:
            total = pod.requests[r] + sum(p.requests.get(r, 0) for p in on_node)
            if total > alloc.get(r, 0):
                raise _Failed(RESOURCES, f"insufficient {r} (requested {_fmt(r, total)} of "
                                         f"{_fmt(r, alloc.get(r, 0))})")

    # -------------------------------------------------------------- topology spread

    def _topology_spread(self, pod: Pod, node: Node) -> None:
        constraints = [c for c in pod.spec.topology_spread_constraints
                       if c.when_unsatisfiable == "DoNotSchedule"]
        if not constraints:
            return
        keys = [c.topology_key for c in constraints]
        for key in keys:
            if key not in node.labels:
                raise _Failed(TOPOLOGY_SPREAD, f"node has no label {key} (a topology spread "
                                               "constraint's topologyKey)")
        # nodes without every key are no domain of any constraint
        nodes = [n for n in self.sim.nodes.values() if all(k in n.labels for k in keys)]
        for c in constraints:
            try:
                selector = label_selector_as_selector(c.label_selector)
            except SelectorError as e:
                raise _Failed(TOPOLOGY_SPREAD, f"invalid topology spread labelSelector: {e}"
                              ) from e
            match = {k: pod.labels[k] for k in c.match_label_keys if k in pod.labels}
            if match and not selector.nothing:
                selector = Selector((*selector.requirements,
                                     *selector_from_set(match).requirements))
            counts: dict[str, int] = {}
            for n in nodes:
                if not self._eligible(pod, n, c.node_affinity_policy or "Honor",
                                      c.node_taints_policy or "Ignore"):
                    continue
                v = n.labels[c.topology_key]
                counts[v] = counts.get(v, 0) + self._spread_matches(pod, n.name, selector)
            min_domains = c.min_domains if c.min_domains is not None else 1
            # an empty domain is a domain: the global minimum can be 0; with fewer eligible
            # domains than minDomains it is 0 by definition
            global_min = min(counts.values()) if counts else _MAX_INT32
            if len(counts) < min_domains:
                global_min = 0
            value = node.labels[c.topology_key]
            here = counts.get(value, 0)
            own = 1 if selector.matches(pod.labels) else 0
            skew = here + own - global_min
            if skew > c.max_skew:
                raise _Failed(TOPOLOGY_SPREAD,
                              f"topology spread on {c.topology_key}: skew {skew} > maxSkew "
                              f"{c.max_skew} in {c.topology_key}={value} ({here} matching "
                              f"pods there, global minimum {global_min})")

    @staticmethod
    def _eligible(pod: Pod, node: Node, affinity_policy: str, taints_policy: str) -> bool:
        if affinity_policy == "Honor" and _unselected(pod, node) is not None:
            return False
        if taints_policy == "Honor":
            for taint in node.spec.taints:
                if taint.effect in _BLOCKING_EFFECTS and not any(
                        t.tolerates(taint) for t in pod.spec.tolerations):
                    return False
        return True

    def _spread_matches(self, pod: Pod, node_name: str, selector: Selector) -> int:
        # an empty selector ({}) counts no pod, though it matches the incoming one
        if selector.nothing or selector.empty():
            return 0
        ns = pod.namespace
        return sum(1 for p in self._pods_on(node_name)
                   if p.metadata.deletion_timestamp is None and p.namespace == ns
                   and selector.matches(p.labels))

    # -------------------------------------------------------------- pod (anti-)affinity

    def _bound_pods(self) -> Iterable[tuple[Pod, Node]]:
        nodes = self.sim.nodes
        for name, node in nodes.items():
            for p in self._pods_on(name):
                yield p, node

    def _pod_affinity(self, pod: Pod, node: Node) -> None:
        namespaces = self.sim.namespaces
        try:
            affinity = _terms(pod, _required(pod, anti=False))
            anti = _terms(pod, _required(pod, anti=True))
        except SelectorError as e:
            raise _Failed(POD_AFFINITY, f"invalid pod affinity terms: {e}") from e
        if affinity:
            self._affinity(pod, node, affinity, namespaces)
        if anti:
            for t in anti:
                value = node.labels.get(t.topology_key)
                if value is None:
                    continue
                for other, where in self._bound_pods():
                    if where.labels.get(t.topology_key) == value and t.matches(other, namespaces):
                        raise _Failed(POD_ANTI_AFFINITY,
                                      f"required pod anti-affinity: pod {other.key} on node "
                                      f"{where.name} matches in {t.topology_key}={value}")
        for other, where in self._with_anti_affinity():
            try:
                terms = _terms(other, _required(other, anti=True))
            except SelectorError:  # upstream keeps no terms for such a pod either
                continue
            for t in terms:
                value = where.labels.get(t.topology_key)
                if value is not None and node.labels.get(t.topology_key) == value \
                        and t.matches(pod, namespaces):
                    raise _Failed(EXISTING_ANTI_AFFINITY,
                                  f"required anti-affinity of pod {other.key} on node "
                                  f"{where.name} matches it in {t.topology_key}={value}")

    def _affinity(self, pod: Pod, node: Node, terms: list[_Term],
                  namespaces: Mapping[str, Namespace]) -> None:
        for t in terms:
            if t.topology_key not in node.labels:
                raise _Failed(POD_AFFINITY, f"required pod affinity: node has no label "
                                            f"{t.topology_key}")
        # (topologyKey, value) -> pods matching every term, as the scheduler counts them
        counts: dict[tuple[str, str], int] = {}
        for other, where in self._bound_pods():
            if all(t.matches(other, namespaces) for t in terms):
                for t in terms:
                    v = where.labels.get(t.topology_key)
                    if v is not None:
                        counts[(t.topology_key, v)] = counts.get((t.topology_key, v), 0) + 1
        missing = [t for t in terms
                   if counts.get((t.topology_key, node.labels[t.topology_key]), 0) <= 0]
        if not missing:
            return
        # the first pod of a group with affinity to itself may go anywhere with the keys,
        # as long as no pod anywhere matches yet
        if not counts and all(t.matches(pod, namespaces) for t in terms):
            return
        t = missing[0]
        raise _Failed(POD_AFFINITY, f"required pod affinity: no matching pod in "
                                    f"{t.topology_key}={node.labels[t.topology_key]}")

    def _with_anti_affinity(self) -> Iterable[tuple[Pod, Node]]:
        """Bound pods with required anti-affinity terms, and their nodes."""
        pods, nodes = self.sim.pods, self.sim.nodes
        if self._anti is None:
            self._anti = {u: None for u, p in pods.items()
                          if p.spec.node_name and _required(p, anti=True)}
        stale = []
        out = []
        for uid in self._anti:
            p = pods.get(uid)
            node = nodes.get(p.spec.node_name) if p is not None else None
            if p is None or node is None:
                stale.append(uid)
            else:
                out.append((p, node))
        for uid in stale:
            del self._anti[uid]
        return out


def _unselected(pod: Pod, node: Node) -> str | None:
    """The rule (nodeSelector, then required node affinity) by which ``node`` is not one the
    pod selects; None when it is."""
    if pod.spec.node_selector and not selector_from_set(pod.spec.node_selector).matches(
            node.labels):
        return NODE_SELECTOR
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    if na is not None and na.required is not None and \
            not compile_node_selector(na.required).matches(node):
        return NODE_AFFINITY
    return None


def _host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) the pod holds on its node: regular containers and
    sidecars (restartable init containers); unset IP is every IP, unset protocol TCP."""
    out = []
    containers = [*(c for c in pod.spec.init_containers if c.restart_policy == "Always"),
                  *pod.spec.containers]
    for c in containers:
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or _WILDCARD_IP, p.protocol or "TCP", p.host_port))
    return out
