"""PyYAML's safe construction, the common cases of a cluster dump done in one pass.

libyaml parses and composes in C, but PyYAML's constructor is Python that goes through a
generator, a memo and a tag lookup per node, and its resolver tries the implicit tags'
regular expressions on every plain scalar: most of a large scenario's load (issue 22). A
document made only of string-keyed mappings, sequences and the standard scalar tags is built
here directly, each plain scalar's tag resolved once per distinct text; any other document
(merge keys, non-string keys, unknown tags, recursive anchors) goes through PyYAML's own
constructor untouched, so what it makes and every error it raises stay PyYAML's.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

STR = "tag:yaml.org,2002:str"
MAP = "tag:yaml.org,2002:map"
SEQ = "tag:yaml.org,2002:seq"
#: scalar tags built by the safe constructor's own functions (which take the node only)
SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}"
                        for t in ("null", "bool", "int", "float", "timestamp", "binary"))
#: distinct plain scalars whose tags are remembered per load (bounds the memory it takes)
RESOLVED_MAX = 200_000

_BUSY = object()


class _Fallback(Exception):
    """The document needs PyYAML's own constructor."""


class FastConstruct:
    """Mixed into a loader class ahead of PyYAML's (C)SafeLoader."""

    yaml_constructors: dict[Any, Any]
    yaml_path_resolvers: dict[Any, Any]
    DEFAULT_SCALAR_TAG: str
    DEFAULT_SEQUENCE_TAG: str
    DEFAULT_MAPPING_TAG: str
    _resolved: dict[str, str]

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if self.yaml_path_resolvers:  # (none in the safe loader; kept correct if added)
            return super().resolve(kind, value, implicit)  # type: ignore[misc, no-any-return]
        if kind is ScalarNode:
            if not implicit[0]:
                return self.DEFAULT_SCALAR_TAG
            try:
                cache = self._resolved
            except AttributeError:
                cache = self._resolved = {}
            tag = cache.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)  # type: ignore[misc]
                if len(cache) < RESOLVED_MAX:
                    cache[value] = tag
            return tag
        if kind is SequenceNode:
            return self.DEFAULT_SEQUENCE_TAG
        return self.DEFAULT_MAPPING_TAG

    def construct_document(self, node: Node) -> Any:
        memo: dict[Node, Any] = {}
        try:
            return self._build(node, memo)
        except (_Fallback, RecursionError):
            pass
        return super().construct_document(node)  # type: ignore[misc]

    def _build(self, node: Node, memo: dict[Node, Any]) -> Any:
        tag = node.tag
        cls = type(node)
        if cls is ScalarNode:
            if tag == STR:
                return node.value
            if tag in SCALAR_TAGS:
                return self.yaml_constructors[tag](self, node)
            raise _Fallback
        got = memo.get(node)
        if got is not None:
            if got is _BUSY:  # a recursive anchor
                raise _Fallback
            return got
        build = self._build
        if cls is MappingNode and tag == MAP:
            memo[node] = _BUSY
            out: dict[str, Any] = {}
            for k, v in node.value:
                if type(k) is not ScalarNode or k.tag != STR:
                    raise _Fallback
                out[k.value] = build(v, memo)
            memo[node] = out
            return out
        if cls is SequenceNode and tag == SEQ:
            memo[node] = _BUSY
            items = [build(v, memo) for v in node.value]
            memo[node] = items
            return items
        raise _Fallback
