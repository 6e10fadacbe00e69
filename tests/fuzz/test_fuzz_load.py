"""Loading never ends in a traceback: any input either loads or raises InputError naming
the field (issue 14 item 5, properties a and c)."""

from __future__ import annotations

import contextlib
from fractions import Fraction
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzz.strategies import (
    ScenarioDraw,
    invalid_quantities,
    mutated,
    nodes,
    quantities,
    scenarios,
    to_yaml,
)
from kubesched.api.quantity import parse_quantity
from kubesched.api.scenario import load_scenario_text
from kubesched.config import load_config
from kubesched.errors import InputError

# InputErrors about a document or the scenario as a whole, which have no one field to name
WHOLE_OBJECT = ("is not a Kubernetes object", "malformed YAML", "duplicate ",
                "more than one PriorityClass has globalDefault", "more than one "
                "KubeSchedulerConfiguration")


def load(text: str, *, strict: bool = False) -> Any:
    """Load as the CLI does (scenario, then its configuration); InputError or the result."""
    try:
        sc = load_scenario_text(text, "fuzz.yaml", strict=strict)
        if sc.config is not None:
            load_config(sc.config, "fuzz.yaml")
    except InputError as err:
        assert str(err).count("\n") == 0, str(err)
        if not any(w in err.message for w in WHOLE_OBJECT):
            assert err.field, f"no field named: {err}"
        return err
    return sc


@given(quantities())
def test_valid_quantities_parse(q: str | int | float) -> None:
    value = parse_quantity(q.strip() if isinstance(q, str) else q)
    assert isinstance(value, Fraction) and value >= 0


@given(invalid_quantities())
def test_invalid_quantities_raise_value_error_only(q: Any) -> None:
    with contextlib.suppress(ValueError):
        parse_quantity(q)


@given(st.data(), st.one_of(quantities(), invalid_quantities()),
       st.sampled_from(("cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu",
                        "hugepages-2Mi")),
       st.sampled_from(("capacity", "allocatable")))
def test_any_node_quantity_loads_or_is_bad_input(data: st.DataObject, q: Any, resource: str,
                                                  where: str) -> None:
    node = data.draw(nodes(0))
    node["status"].setdefault(where, {})[resource] = q
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {resource: q},
                                                                "limits": {resource: q}}}]}}
    load(to_yaml([node]))
    load(to_yaml([pod]))
    load(to_yaml([node, pod]))


@given(scenarios())
def test_generated_scenarios_load_or_are_bad_input(draw: ScenarioDraw) -> None:
    load(draw.text())


@given(st.data(), scenarios(max_nodes=3, max_pods=4))
def test_mutated_objects_load_or_are_bad_input(data: st.DataObject, draw: ScenarioDraw) -> None:
    docs = list(draw.docs)
    i = data.draw(st.integers(0, len(docs) - 1))
    m = data.draw(mutated(docs[i]))
    docs[i] = m.doc
    text = to_yaml(docs)
    load(text)
    strict = load(text, strict=True)
    if m.unknown_field:
        assert isinstance(strict, InputError), f"strict accepted {m.what}"


@given(st.one_of(st.text(max_size=200),
                 st.binary(max_size=100).map(lambda b: b.decode("latin-1")),
                 st.lists(st.sampled_from(["apiVersion: v1\n", "kind: Pod\n", "kind: Node\n",
                                           "metadata: {name: x}\n", "---\n", "items: [\n",
                                           "spec: {containers: [{name: c}]}\n", "- 1\n",
                                           "kind: List\n", "a: &x [*x]\n", "? [a]\n: 1\n",
                                           "!!python/object:os.system x\n", "1: 2\n",
                                           "metadata: {name: x, labels: {1: 2}}\n"]),
                          max_size=8).map("".join)))
def test_any_text_loads_or_is_bad_input(text: str) -> None:
    load(text)
