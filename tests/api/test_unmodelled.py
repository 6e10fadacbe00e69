"""The load warnings for what a scenario holds that kubesched does not model
(api/unmodelled.py): when each one is said, and when not."""

from __future__ import annotations

from kubesched.api.scenario import load_scenario_text

NODE = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '2', memory: 4Gi, pods: '2'}}
"""


def _pod(name: str, cpu: str, *, ns: str = "default", node: str | None = "n1",
         extra: str = "") -> str:
    bound = f"nodeName: {node}, " if node else ""
    requests = f"{{requests: {{cpu: '{cpu}'}}}}"
    return (f"---\napiVersion: v1\nkind: Pod\n"
            f"metadata: {{name: {name}, namespace: {ns}{extra}}}\n"
            f"spec: {{{bound}containers: [{{name: c, resources: {requests}}}]}}\n")


def _warnings(text: str) -> list[str]:
    return load_scenario_text(text).warnings


def test_overcommitted_counts_bound_pods_not_finished_ones() -> None:
    assert _warnings(NODE + _pod("a", "1") + _pod("b", "1")) == []
    finished = _pod("c", "1").replace("spec:", "status: {phase: Succeeded}\nspec:")
    assert _warnings(NODE + _pod("a", "1") + _pod("b", "1") + finished) == []
    # terminating pods still hold what they request; pending ones hold nothing
    terminating = _pod("c", "500m", extra=", deletionTimestamp: '2026-01-01T00:00:30Z'")
    assert _warnings(NODE + _pod("a", "1") + _pod("b", "1") + terminating
                     + _pod("p", "4", node=None)) == [
        "Node n1: already overcommitted at load (cpu 2500m requested of 2000m allocatable; "
        "pods 3 requested of 2 allocatable): its pods keep running; no pod needing more of "
        "that fits there"]


def test_made_namespaces_are_named_only_when_a_namespace_selector_reads_labels() -> None:
    plain = NODE + _pod("a", "1", ns="team-a")
    assert _warnings(plain) == []
    sel = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: s, namespace: kube-system}\n"
           "spec:\n  containers: [{name: c}]\n  affinity:\n    podAffinity:\n"
           "      preferredDuringSchedulingIgnoredDuringExecution:\n"
           "      - weight: 1\n        podAffinityTerm:\n"
           "          labelSelector: {matchLabels: {app: x}}\n"
           "          namespaceSelector: {matchLabels: {team: a}}\n"
           "          topologyKey: kubernetes.io/hostname\n")
    assert _warnings(plain + sel) == [
        "Namespace team-a: not in the scenario; made with only its kubernetes.io/metadata.name "
        "label, all the pods' namespaceSelectors see of it"]
    # an empty selector selects every namespace: labels do not matter
    assert _warnings(plain + sel.replace("{matchLabels: {team: a}}", "{}")) == []


def test_skipped_kinds_are_one_line_per_kind_and_file() -> None:
    events = "".join(f"---\napiVersion: v1\nkind: Event\nmetadata: {{name: e{i}, namespace: "
                     f"default}}\n" for i in range(7))
    cm = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n"
    sc = load_scenario_text(events + cm + NODE + events.replace("name: e", "name: f"), "d.yaml")
    assert sc.warnings == [
        "d.yaml: skipping 14 Event objects (default/e0, default/e1, default/e2, default/e3, "
        "default/e4 and 9 more): kind not supported",
        "d.yaml: skipping ConfigMap default/c: kind not supported"]
