"""KubeSchedulerConfigurations, generated and mutated: they load or raise InputError naming
the field, and never end in a traceback (issue 14 item 5)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzz.strategies import configs, mutated, to_yaml
from kubesched.config import load_config
from kubesched.config.load import parse_yaml_documents
from kubesched.errors import InputError


def _load(doc: Any) -> None:
    try:
        load_config(doc, "config.yaml")
    except InputError as err:
        assert "\n" not in str(err), str(err)
        assert err.field or "mapping" in err.message, str(err)


@given(configs())
def test_generated_configurations_load_or_name_the_field(doc: dict[str, Any]) -> None:
    _load(doc)


@given(st.data(), configs())
def test_mutated_configurations_load_or_name_the_field(data: st.DataObject,
                                                       doc: dict[str, Any]) -> None:
    m = data.draw(mutated(doc))
    _load(m.doc)
    if m.unknown_field:  # the configuration is always decoded strictly, as upstream's
        try:
            load_config(m.doc, "config.yaml")
        except InputError:
            return
        raise AssertionError(f"accepted {m.what}")


@given(st.data(), configs())
def test_configurations_through_yaml(data: st.DataObject, doc: dict[str, Any]) -> None:
    text = to_yaml([doc])
    if data.draw(st.booleans()):  # a duplicate key, as a careless edit leaves it
        text += "kind: KubeSchedulerConfiguration\n"
    try:
        for d in parse_yaml_documents(text, "config.yaml"):
            _load(d)
    except InputError as err:
        assert "\n" not in str(err)
