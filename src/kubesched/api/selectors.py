"""Label and node selector matching: the one place for selector logic.

Upstream spreads this over apimachinery ``labels`` (``Requirement``, ``Selector``,
``SelectorFromSet``), ``metav1.LabelSelectorAsSelector`` and component-helpers
``scheduling/corev1/nodeaffinity`` (``NodeSelector``, ``LazyErrorNodeSelector``,
``PreferredSchedulingTerms``, ``RequiredNodeAffinity``). The semantics here are theirs:

* A requirement: ``In`` (label present, value listed), ``NotIn`` (absent, or value not listed),
  ``Exists``, ``DoesNotExist``, ``Gt`` / ``Lt`` (label present and its value, parsed as a Go
  int64, compares; an unparsable value never matches).
* A selector ANDs its requirements. ``LabelSelector``: ``None`` matches nothing, an empty one
  matches everything. A pod's ``nodeSelector`` map: every key present with that value.
* Node selector terms are ORed; a term ANDs its matchExpressions and its matchFields (only
  ``metadata.name`` exists as a node field); an empty term matches nothing; a term that does not
  parse (bad key, value, operator or value count) matches nothing, and its errors are reported
  only when no term matched (``LazyErrorNodeSelector``).

Every compiled object matches one object (``matches(labels)`` / ``matches(node)``) and, in the
batch form, the rows ``idx`` of a columnar store (``matches_columns`` / ``match_table``): a
label column is an object array of each row's value for one key (``None`` where absent), as
``NodeTable.label_column`` returns. The table keeps its columns factorized (distinct values →
codes, ``NodeTable.label_factors``) and a requirement is evaluated once per distinct value, so
the per-row work is one numpy gather.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from kubesched.api.types import (
    LabelSelector,
    Node,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from kubesched.api.validation import (
    label_value_errors,
    qualified_name_errors,
)

# a label key -> its column, factorized (``NodeTable.label_factors``) or not
LabelColumn = Callable[[str], "FactorizedColumn | np.ndarray"]


class NodeTable(Protocol):
    """What the batch matchers read of ``framework.node_table.NodeTable`` (declared here so
    the object model does not import the framework above it)."""

    index: dict[str, int]  # node name -> row

    def label_column(self, key: str) -> np.ndarray: ...

    def label_factors(self, key: str) -> FactorizedColumn: ...

OBJECT_NAME_FIELD = "metadata.name"  # metav1.ObjectNameField

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"

NODE_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
LABEL_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
FIELD_SELECTOR_OPERATORS = (IN, NOT_IN)


class SelectorError(ValueError):
    """A selector that does not parse (upstream's selector parse / validation errors).
    ``errors`` are the individual field errors; the message aggregates them as Go does."""

    def __init__(self, errors: list[str] | str) -> None:
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        super().__init__(_aggregate(self.errors))


# ---------------------------------------------------------------- validation (apimachinery)

_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
def parse_int64(text: str) -> int | None:
    """Go ``strconv.ParseInt(text, 10, 64)``; None where Go returns an error."""
    if not _INT64_RE.fullmatch(text):
        return None
    n = int(text)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def _go_quote(v: Any) -> str:
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[]string{" + ", ".join(_go_quote(x) for x in v) + "}"
    return str(v)


def _invalid(path: str, value: Any, detail: str) -> str:
    """field.Invalid(path, value, detail).Error()."""
    return f"{path}: Invalid value: {_go_quote(value)}: {detail}"


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


def _aggregate(errs: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error()."""
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


# ---------------------------------------------------------------- requirements and selectors


@dataclass(frozen=True, slots=True)
class Requirement:
    """One parsed requirement (``labels.Requirement``). ``op`` is In, NotIn, Exists,
    DoesNotExist, Gt or Lt (Equals / NotEquals are In / NotIn with one value); ``bound`` is the
    parsed Gt / Lt operand."""

    key: str
    op: str
    values: frozenset[str] = frozenset()
    bound: int = 0

    def matches_value(self, value: str | None) -> bool:
        """Does a label value (None: label absent) satisfy the requirement?"""
        op = self.op
        if op == IN:
            return value is not None and value in self.values
        if op == NOT_IN:
            return value is None or value not in self.values
        if op == EXISTS:
            return value is not None
        if op == DOES_NOT_EXIST:
            return value is None
        if value is None:
            return False
        n = parse_int64(value)
        if n is None:
            return False
        return n > self.bound if op == GT else n < self.bound

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.matches_value(labels.get(self.key))

    def matches_column(self, column: FactorizedColumn | np.ndarray,
                       idx: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask over ``column[idx]`` (all rows when ``idx`` is None)."""
        if not isinstance(column, FactorizedColumn):
            column = FactorizedColumn(column)
        codes = column.codes
        lut = column.lut(self)
        mask: np.ndarray = lut[codes] if idx is None else lut[codes[idx]]
        return mask


def new_requirement(key: str, op: str, values: Iterable[str], path: str = "") -> Requirement:
    """``labels.NewRequirement``: validates key, operator, value count and values."""
    vals = list(values)
    errs: list[str] = []
    kerrs = qualified_name_errors(key)
    if kerrs:
        errs.append(_invalid(_join(path, "key"), key, "; ".join(kerrs)))
    vpath = _join(path, "values")
    bound = 0
    if op in (IN, NOT_IN):
        if not vals:
            errs.append(_invalid(vpath, vals, "for 'in', 'notin' operators, values set can't "
                                              "be empty"))
    elif op in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(_invalid(vpath, vals, "values set must be empty for exists and does "
                                              "not exist"))
    elif op in (GT, LT):
        if len(vals) != 1:
            errs.append(_invalid(vpath, vals, "for 'Gt', 'Lt' operators, exactly one value is "
                                              "required"))
        for i, v in enumerate(vals):
            n = parse_int64(v)
            if n is None:
                errs.append(_invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value "
                                                         "must be an integer"))
            elif i == 0:
                bound = n
    else:
        errs.append(f"{_join(path, 'operator')}: Unsupported value: {_go_quote(op)}")
    for i, v in enumerate(vals):
        verrs = label_value_errors(v)
        if verrs:
            errs.append(_invalid(f"{vpath}[{i}][{key}]", v, "; ".join(verrs)))
    if errs:
        raise SelectorError(errs)
    return Requirement(key, op, frozenset(vals), bound)


class Selector:
    """Requirements ANDed (``labels.Selector``); ``nothing`` is ``labels.Nothing()``."""

    __slots__ = ("nothing", "requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), nothing: bool = False) -> None:
        self.requirements: tuple[Requirement, ...] = tuple(requirements)
        self.nothing = nothing

    def empty(self) -> bool:
        """Matches everything (``labels.Everything()``)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches_value(labels.get(r.key)) for r in self.requirements)

    def matches_columns(self, label_column: LabelColumn, idx: np.ndarray) -> np.ndarray:
        """Mask over the rows ``idx``; ``label_column(key)`` gives the full column of a key."""
        n = len(idx)
        if self.nothing:
            return np.zeros(n, dtype=bool)
        out = np.ones(n, dtype=bool)
        for r in self.requirements:
            out &= r.matches_column(label_column(r.key), idx)
        return out

    def __repr__(self) -> str:
        return "Selector(nothing)" if self.nothing else f"Selector({list(self.requirements)!r})"


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


@lru_cache(maxsize=4096)
def label_selector_as_selector(sel: LabelSelector | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: None → nothing, empty → everything; raises
    SelectorError for an invalid selector."""
    if sel is None:
        return NOTHING
    if not sel.match_labels and not sel.match_expressions:
        return EVERYTHING
    reqs = [new_requirement(k, IN, (v,)) for k, v in sel.match_labels]
    for e in sel.match_expressions:
        if e.operator not in LABEL_SELECTOR_OPERATORS:
            raise SelectorError(f"{_go_quote(e.operator)} is not a valid label selector operator")
        reqs.append(new_requirement(e.key, e.operator, e.values))
    return Selector(reqs)


def label_selector_matches(sel: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Does a metav1.LabelSelector select these labels? Raises SelectorError if invalid."""
    return label_selector_as_selector(sel).matches(labels)


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """``labels.SelectorFromSet``: every key present with exactly that value (no validation;
    an empty map matches everything)."""
    return _selector_from_items(tuple(sorted(labels.items())))


@lru_cache(maxsize=4096)
def _selector_from_items(items: tuple[tuple[str, str], ...]) -> Selector:
    if not items:
        return EVERYTHING
    return Selector(Requirement(k, IN, frozenset((v,))) for k, v in items)


# ---------------------------------------------------------------- node selectors


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One matchFields requirement (``fields.OneTermEqualSelector`` / ``NotEqual``)."""

    key: str
    op: str  # In or NotIn
    value: str

    def matches_fields(self, fields: Mapping[str, str]) -> bool:
        got = fields.get(self.key, "")
        return got == self.value if self.op == IN else got != self.value


def _node_fields(node: Node | None) -> dict[str, str]:
    """``extractNodeFields``: only metadata.name, and only when set."""
    if node is None or not node.metadata.name:
        return {}
    return {OBJECT_NAME_FIELD: node.metadata.name}


class CompiledTerm:
    """One parsed NodeSelectorTerm (``nodeSelectorTerm``)."""

    __slots__ = ("errors", "fields", "labels")

    def __init__(self, labels: Selector | None, fields: tuple[FieldRequirement, ...] | None,
                 errors: tuple[str, ...] = ()) -> None:
        self.labels = labels
        self.fields = fields
        self.errors = errors

    def matches(self, node: Node | None) -> bool:
        """Match ignoring errors: a term with parse errors never matches."""
        if self.errors or node is None:
            return False
        if self.labels is not None and not self.labels.matches(node.metadata.labels):
            return False
        if self.fields is not None:
            fields = _node_fields(node)
            if fields and not all(f.matches_fields(fields) for f in self.fields):
                return False
        return True

    def match_table(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        n = len(idx)
        if self.errors:
            return np.zeros(n, dtype=bool)
        out = (self.labels.matches_columns(table.label_factors, idx) if self.labels is not None
               else np.ones(n, dtype=bool))
        if self.fields is not None and out.any():
            out &= _fields_mask(self.fields, table, idx)
        return out


def _fields_mask(fields: tuple[FieldRequirement, ...], table: NodeTable,
                 idx: np.ndarray) -> np.ndarray:
    ok = np.ones(len(idx), dtype=bool)
    for f in fields:
        if f.key == OBJECT_NAME_FIELD:
            row = table.index.get(f.value, -1)
            ok &= (idx == row) if f.op == IN else (idx != row)
        else:  # fields.Set.Get of an absent field is ""
            hit = f.value == ""
            if hit != (f.op == IN):
                ok[:] = False
    unnamed = table.index.get("")
    if unnamed is not None:  # a node without a name has no fields: matchFields is skipped
        ok |= idx == unnamed
    return ok


def _compile_term(term: NodeSelectorTerm, path: str) -> CompiledTerm:
    """``newNodeSelectorTerm``: collect parse errors instead of raising."""
    errs: list[str] = []
    labels: Selector | None = None
    fields: tuple[FieldRequirement, ...] | None = None
    if term.match_expressions:
        p = _join(path, "matchExpressions")
        reqs = []
        for i, e in enumerate(term.match_expressions):
            ep = f"{p}[{i}]"
            if e.operator not in NODE_SELECTOR_OPERATORS:
                errs.append(f"{ep}.operator: Unsupported value: {_go_quote(e.operator)}: "
                            "supported values: " + ", ".join(
                                _go_quote(o) for o in NODE_SELECTOR_OPERATORS))
                continue
            try:
                reqs.append(new_requirement(e.key, e.operator, e.values, ep))
            except SelectorError as err:
                errs.extend(err.errors)
        labels = Selector(reqs)
    if term.match_fields:
        p = _join(path, "matchFields")
        frs = []
        for i, e in enumerate(term.match_fields):
            ep = f"{p}[{i}]"
            if e.operator in FIELD_SELECTOR_OPERATORS:
                if len(e.values) != 1:
                    errs.append(_invalid(f"{ep}.values", list(e.values), "must have one element"))
                else:
                    frs.append(FieldRequirement(e.key, e.operator, e.values[0]))
            else:
                errs.append(f"{ep}.operator: Unsupported value: {_go_quote(e.operator)}: "
                            "supported values: " + ", ".join(
                                _go_quote(o) for o in FIELD_SELECTOR_OPERATORS))
        fields = tuple(frs)
    if errs:
        return CompiledTerm(None, None, tuple(errs))
    return CompiledTerm(labels, fields)


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class CompiledNodeSelector:
    """A parsed v1.NodeSelector: terms ORed (``LazyErrorNodeSelector``)."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[CompiledTerm, ...]) -> None:
        self.terms = terms

    @property
    def errors(self) -> list[str]:
        return [e for t in self.terms for e in t.errors]

    def match(self, node: Node | None) -> tuple[bool, str | None]:
        """(matched, parse errors): errors are reported only when no term matched."""
        if node is None:
            return False, None
        errs: list[str] = []
        for t in self.terms:
            if t.errors:
                errs.extend(t.errors)
                continue
            if t.matches(node):
                return True, None
        return False, (_aggregate(errs) if errs else None)

    def matches(self, node: Node | None) -> bool:
        return any(t.matches(node) for t in self.terms)

    def match_table(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        out = np.zeros(len(idx), dtype=bool)
        for t in self.terms:
            if t.errors:
                continue
            todo = ~out
            if not todo.any():
                break
            out[todo] = t.match_table(table, idx[todo])
        return out


@lru_cache(maxsize=4096)
def compile_node_selector(terms: tuple[NodeSelectorTerm, ...]) -> CompiledNodeSelector:
    """``NewLazyErrorNodeSelector``: empty terms are dropped (they match nothing), terms that do
    not parse are kept with their errors (they match nothing either)."""
    return CompiledNodeSelector(tuple(
        _compile_term(t, f"nodeSelectorTerms[{i}]") for i, t in enumerate(terms)
        if not _is_empty_term(t)))


def new_node_selector(terms: tuple[NodeSelectorTerm, ...]) -> CompiledNodeSelector:
    """``NewNodeSelector``: like compile_node_selector but raises on any parse error."""
    ns = compile_node_selector(terms)
    errs = ns.errors
    if errs:
        raise SelectorError(errs)
    return ns


def node_matches_terms(node: Node | None, terms: tuple[NodeSelectorTerm, ...]) -> bool:
    """Does the node match any of the node selector terms (parse errors: no match)?"""
    return compile_node_selector(tuple(terms)).matches(node)


class PreferredTerms:
    """Parsed preferred scheduling terms (``PreferredSchedulingTerms``)."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[tuple[CompiledTerm, int], ...]) -> None:
        self.terms = terms

    def score(self, node: Node | None) -> int:
        """Σ weight of the terms the node matches."""
        return sum(w for t, w in self.terms if t.matches(node))

    def score_table(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        out = np.zeros(len(idx), dtype=np.int64)
        for t, w in self.terms:
            out += t.match_table(table, idx).astype(np.int64) * w
        return out


@lru_cache(maxsize=4096)
def compile_preferred_terms(terms: tuple[PreferredSchedulingTerm, ...]) -> PreferredTerms:
    """``NewPreferredSchedulingTerms``: terms with weight 0 or an empty preference are dropped;
    raises SelectorError if any other term does not parse."""
    errs: list[str] = []
    parsed = []
    for i, t in enumerate(terms):
        if t.weight == 0 or _is_empty_term(t.preference):
            continue
        ct = _compile_term(t.preference, f"[{i}]")
        if ct.errors:
            errs.extend(ct.errors)
        else:
            parsed.append((ct, t.weight))
    if errs:
        raise SelectorError(errs)
    return PreferredTerms(tuple(parsed))


class RequiredNodeAffinity:
    """A pod's ``nodeSelector`` AND its required node affinity (``RequiredNodeAffinity``)."""

    __slots__ = ("label_selector", "node_selector")

    def __init__(self, label_selector: Selector | None,
                 node_selector: CompiledNodeSelector | None) -> None:
        self.label_selector = label_selector
        self.node_selector = node_selector

    def match(self, node: Node | None) -> tuple[bool, str | None]:
        """(matched, node-affinity parse errors when nothing matched)."""
        if self.label_selector is not None:
            labels = node.metadata.labels if node is not None else {}
            if not self.label_selector.matches(labels):
                return False, None
        if self.node_selector is not None:
            return self.node_selector.match(node)
        return True, None

    def matches(self, node: Node | None) -> bool:
        return self.match(node)[0]

    def match_table(self, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        out = (self.label_selector.matches_columns(table.label_factors, idx)
               if self.label_selector is not None else np.ones(len(idx), dtype=bool))
        if self.node_selector is not None and out.any():
            out[out] = self.node_selector.match_table(table, idx[out])
        return out


def get_required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """``GetRequiredNodeAffinity(pod)``, shared among pods of one shape."""
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    required = na.required if na is not None else None
    return _required_node_affinity(tuple(sorted(pod.spec.node_selector.items())), required)


@lru_cache(maxsize=4096)
def _required_node_affinity(node_selector: tuple[tuple[str, str], ...],
                            required: tuple[NodeSelectorTerm, ...] | None
                            ) -> RequiredNodeAffinity:
    sel = _selector_from_items(node_selector) if node_selector else None
    ns = compile_node_selector(required) if required is not None else None
    return RequiredNodeAffinity(sel, ns)


def pod_matches_node_selector_and_affinity(pod: Pod, node: Node | None) -> bool:
    """Does the node satisfy the pod's nodeSelector and required node affinity (parse errors
    ignored, as the NodeAffinity filter and PodTopologySpread's Honor policy do)?"""
    return get_required_node_affinity(pod).matches(node)


# ---------------------------------------------------------------- column factorization


class LabelValues(list[str]):
    """The distinct values of a factorized column in code order, with ``code``: value ->
    code (the inverse)."""

    __slots__ = ("code",)

    def __init__(self, code: dict[str, int]) -> None:
        super().__init__(code)
        self.code = code


class FactorizedColumn:
    """An object column factorized: ``codes[i]`` indexes ``values``, -1 where the value is
    None; ``luts`` keeps each requirement's verdict per distinct value. Whoever owns the
    column keeps this beside it (``NodeTable.label_factors``), for as long as the column."""

    __slots__ = ("codes", "luts", "values")

    def __init__(self, column: np.ndarray) -> None:
        index: dict[str, int] = {}
        setdefault = index.setdefault
        self.codes = np.fromiter((-1 if v is None else setdefault(v, len(index))
                                  for v in column), dtype=np.int32, count=len(column))
        self.values = LabelValues(index)
        self.luts: dict[Requirement, np.ndarray] = {}

    def lut(self, req: Requirement) -> np.ndarray:
        """``lut[codes]`` is the requirement's verdict per row; the last entry of ``lut`` is
        the verdict for an absent label (code -1)."""
        luts = self.luts
        lut = luts.get(req)
        if lut is None:
            lut = np.fromiter((req.matches_value(v) for v in (*self.values, None)), dtype=bool,
                              count=len(self.values) + 1)
            if len(luts) >= _MAX_LUTS:
                luts.clear()
            luts[req] = lut
        return lut


_MAX_LUTS = 512


def factorize_column(column: np.ndarray) -> tuple[np.ndarray, LabelValues]:
    """(codes, distinct values) of an object column: ``codes[i]`` indexes the distinct values,
    -1 where the value is None (not kept: ``NodeTable.label_factors`` keeps a table's)."""
    f = FactorizedColumn(column)
    return f.codes, f.values
