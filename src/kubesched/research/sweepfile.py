"""The sweep file (``kubesched sweep SWEEP.yaml``): which runs make the grid.

Two kinds of grid, together or alone (docs/research.md, "Sweeps"):

- ``traces`` × ``policies``: openb GPU traces replayed under the FGD paper's policies;
- ``scenarios`` × ``configs``: ordinary scenario files under KubeSchedulerConfigurations;

each × ``seeds`` × ``kubernetesVersions``; traces also × ``ratio`` (the arrival levels) ×
``tiebreak``. Everything is checked here, before anything runs:
a bad field is an ``InputError`` naming the sweep file and the field path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kubesched.config.features import parse_version
from kubesched.config.types import API_VERSION
from kubesched.config.types import KIND as CONFIG_KIND
from kubesched.errors import InputError
from kubesched.research.openb import OpenbSpec
from kubesched.research.policies import POLICIES
from kubesched.research.tracefmt import ORDERS

KIND = "Sweep"
KEYS = ("kind", "name", "traces", "policies", "nodes", "ratio", "order", "tiebreak",
        "scenarios", "configs", "autoscalers", "plugins", "seeds", "kubernetesVersion",
        "kubernetesVersions", "paper")
TRACE_KEYS = ("name", "pods", "nodes", "ratio", "order")
DEFAULT_NODES = "gpu_node"  # prepare_input.sh copies only this node list beside each trace
DEFAULT_RATIO = 1.3  # the paper's experiments: requests reach 130 % of GPU capacity
DEFAULT_FIRST_SEED = 42  # the paper's seeds are 42–51
# How ties between top-scoring nodes are broken: ``simulator`` as the FGD authors' simulator
# breaks them (one random node order per run: research.policies.NodeOrder), ``uniform``
# as kube-scheduler does (uniformly among the tied nodes, per cycle). Traces default to the
# simulator's; scenarios always decide as kube-scheduler does.
TIEBREAKS = ("simulator", "uniform")
SCENARIO_TIEBREAK = "uniform"


@dataclass(frozen=True)
class Trace:
    name: str
    spec: OpenbSpec  # data folder, pod and node lists, order, ratio (its seed is the run's)
    # the arrival levels the grid replays (``spec.ratio`` is the first)
    ratios: tuple[float, ...] = ()

    def at(self, ratio: float) -> OpenbSpec:
        return replace(self.spec, ratio=ratio)


@dataclass(frozen=True)
class ScenarioFiles:
    name: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class Config:
    """A configuration of a generic sweep: a file, a document written in the sweep file,
    or neither (the scenario's own configuration, else upstream's default)."""

    name: str
    file: str | None = None
    doc: dict[str, Any] | None = None
    source: str = ""  # where ``doc`` was written, for messages


@dataclass(frozen=True)
class Autoscaler:
    """cluster-autoscaler's options for the scenarios with NodeGroups (flag names, as
    ``simulate`` takes them); ``name`` is the results' ``autoscaler`` column."""

    name: str
    options: tuple[tuple[str, Any], ...] = ()


# Checks one autoscaler's options (flag → value), raising InputError naming the flag as its
# field; the layer that holds the autoscaler gives it (research cannot import it).
CheckAutoscaler = Callable[[dict[str, Any]], object]


@dataclass
class Sweep:
    path: str
    name: str
    traces: list[Trace] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)
    scenarios: list[ScenarioFiles] = field(default_factory=list)
    configs: list[Config] = field(default_factory=list)
    # none named: cluster-autoscaler's defaults where a scenario has NodeGroups
    autoscalers: list[Autoscaler] = field(default_factory=list)
    plugins: list[str] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)  # none named: the command's release
    tiebreaks: list[str] = field(default_factory=lambda: [TIEBREAKS[0]])
    # published numbers to draw beside the runs': trace → arrival level (None: every
    # level) → policy → unallocated GPU %
    paper: dict[str, dict[float | None, dict[str, float]]] = field(default_factory=dict)

    def paper_value(self, trace: str, ratio: float | None, policy: str) -> float | None:
        levels = self.paper.get(trace, {})
        return levels.get(ratio, levels.get(None, {})).get(policy)

    def with_seed_count(self, count: int) -> None:
        """``--seeds N``: N seeds from the file's first one on."""
        first = self.seeds[0] if self.seeds else DEFAULT_FIRST_SEED
        self.seeds = list(range(first, first + count))


class _Fields:
    """Reads one sweep file's fields; every error names the file and the field path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, message: str, fld: str, value: object = None) -> InputError:
        return InputError(message, file=self.path, field=fld, value=value)

    def mapping(self, value: object, fld: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail("must be a mapping", fld, value)
        for k in value:
            if k not in keys:
                where = f"{fld}.{k}" if fld else str(k)
                raise self.fail(f"unknown field (known: {', '.join(keys)})", where)
        return value

    def items(self, value: object, fld: str) -> list[Any]:
        if not isinstance(value, list) or not value:
            raise self.fail("must be a non-empty list", fld, value)
        return value

    def text(self, value: object, fld: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail("must be a non-empty string", fld, value)
        return value

    def number(self, value: object, fld: str) -> float:
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value < 0):
            raise self.fail("must be a number ≥ 0", fld, value)
        return float(value)

    def ratios(self, value: object, fld: str) -> tuple[float, ...]:
        """One arrival level or a list of them: each a positive number, none twice."""
        items = self.items(value, fld) if isinstance(value, list) else [value]
        out: list[float] = []
        for i, v in enumerate(items):
            where = f"{fld}[{i}]" if isinstance(value, list) else fld
            if (isinstance(v, bool) or not isinstance(v, int | float)
                    or not math.isfinite(v) or v <= 0):
                raise self.fail("must be a positive number (the arrived requests as a share "
                                "of the cluster's GPUs, e.g. 1.3)", where, v)
            if float(v) in out:
                raise self.fail("arrival level named twice", where, v)
            out.append(float(v))
        return tuple(out)

    def integer(self, value: object, fld: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(f"must be an integer ≥ {minimum}", fld, value)
        return value

    def order(self, value: object, fld: str) -> str:
        if value not in ORDERS:
            raise self.fail(f"must be one of {', '.join(ORDERS)}", fld, value)
        return str(value)

    def unique(self, names: list[str], fld: str) -> None:
        seen: set[str] = set()
        for i, n in enumerate(names):
            if n in seen:
                raise self.fail("name used twice (rows would share a scenario name)",
                                f"{fld}[{i}].name", n)
            seen.add(n)


def load_sweep(path: str, data: Path, check_autoscaler: CheckAutoscaler | None = None
               ) -> Sweep:
    """The sweep file at ``path``, trace files looked up under ``data``, scenario and config
    files relative to the sweep file. Checks the fields and that every file named exists
    (``check_inputs`` then reads them); ``check_autoscaler`` checks ``autoscalers``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read sweep file: {getattr(e, 'strerror', None) or e}",
                         file=path) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise InputError(f"not YAML: {getattr(e, 'problem', None) or e}", file=where) from None
    f = _Fields(path)
    doc = f.mapping(doc, "", KEYS)
    if doc.get("kind", KIND) != KIND:
        raise f.fail(f"must be {KIND}", "kind", doc.get("kind"))
    base = Path(path).parent
    sweep = Sweep(path, str(doc.get("name") or Path(path).stem))

    defaults = {"nodes": f.text(doc.get("nodes", DEFAULT_NODES), "nodes"),
                "ratio": f.ratios(doc.get("ratio", DEFAULT_RATIO), "ratio"),
                "order": f.order(doc.get("order", "paper"), "order")}
    if "traces" in doc:
        for i, item in enumerate(f.items(doc["traces"], "traces")):
            sweep.traces.append(_trace(f, item, f"traces[{i}]", data, defaults))
        f.unique([t.name for t in sweep.traces], "traces")
        sweep.policies = list(POLICIES)
    if "tiebreak" in doc:
        if "traces" not in doc:
            raise f.fail("tiebreak is for traces (scenarios decide as kube-scheduler does)",
                         "tiebreak")
        raw = doc["tiebreak"]
        items = f.items(raw, "tiebreak") if isinstance(raw, list) else [raw]
        sweep.tiebreaks = []
        for i, t in enumerate(items):
            where = f"tiebreak[{i}]" if isinstance(raw, list) else "tiebreak"
            if t not in TIEBREAKS:
                raise f.fail(f"must be one of {', '.join(TIEBREAKS)}", where, t)
            if t in sweep.tiebreaks:
                raise f.fail("tie-break named twice", where, t)
            sweep.tiebreaks.append(str(t))
    if "policies" in doc:
        if "traces" not in doc:
            raise f.fail("policies are for traces: name the traces too", "policies")
        sweep.policies = []
        for i, p in enumerate(f.items(doc["policies"], "policies")):
            if p not in POLICIES:
                raise f.fail(f"unknown policy (one of {', '.join(POLICIES)})",
                             f"policies[{i}]", p)
            if p in sweep.policies:
                raise f.fail("policy named twice", f"policies[{i}]", p)
            sweep.policies.append(p)

    if "scenarios" in doc:
        for i, item in enumerate(f.items(doc["scenarios"], "scenarios")):
            sweep.scenarios.append(_scenario(f, item, f"scenarios[{i}]", base))
        f.unique([s.name for s in sweep.scenarios], "scenarios")
        sweep.configs = [Config("default")]
    if "configs" in doc:
        if "scenarios" not in doc:
            raise f.fail("configs are for scenarios: name the scenarios too", "configs")
        sweep.configs = [_config(f, item, f"configs[{i}]", base)
                         for i, item in enumerate(f.items(doc["configs"], "configs"))]
        f.unique([c.name for c in sweep.configs], "configs")
    if "autoscalers" in doc:
        if "scenarios" not in doc:
            raise f.fail("autoscalers are for scenarios (with NodeGroups)", "autoscalers")
        sweep.autoscalers = [_autoscaler(f, item, f"autoscalers[{i}]", check_autoscaler)
                             for i, item in enumerate(f.items(doc["autoscalers"],
                                                              "autoscalers"))]
        f.unique([a.name for a in sweep.autoscalers], "autoscalers")
    for i, spec in enumerate(f.items(doc["plugins"], "plugins") if "plugins" in doc else []):
        spec = f.text(spec, f"plugins[{i}]")
        target, _, cls = spec.rpartition(":")
        if target.endswith(".py"):
            target = str((base / target).resolve())
            if not Path(target).is_file():
                raise f.fail("no such file", f"plugins[{i}]", spec)
        sweep.plugins.append(f"{target}:{cls}")
    if not sweep.traces and not sweep.scenarios:
        raise f.fail("nothing to run: give traces (with policies) or scenarios "
                     "(with configs)", "traces")
    overlap = {t.name for t in sweep.traces} & {s.name for s in sweep.scenarios}
    if overlap:
        raise f.fail("a trace and a scenario share a name", "scenarios", sorted(overlap)[0])

    sweep.seeds = _seeds(f, doc.get("seeds", 1))
    if "kubernetesVersion" in doc and "kubernetesVersions" in doc:
        raise f.fail("give kubernetesVersion or kubernetesVersions, not both",
                     "kubernetesVersion")
    versions = ([(doc["kubernetesVersion"], "kubernetesVersion")] if "kubernetesVersion" in doc
                else [(v, f"kubernetesVersions[{i}]") for i, v in
                      enumerate(f.items(doc["kubernetesVersions"], "kubernetesVersions"))]
                if "kubernetesVersions" in doc else [])
    for v, fld in versions:
        try:
            version = parse_version(str(v))
        except InputError as e:
            raise f.fail(e.message.removeprefix(f"--kubernetes-version {v}: "), fld,
                         v) from None
        if version in sweep.versions:
            raise f.fail("version named twice", fld, v)
        sweep.versions.append(version)
    sweep.paper = _paper(f, doc.get("paper", {}))
    return sweep


def _trace(f: _Fields, item: object, fld: str, data: Path, defaults: dict[str, Any]) -> Trace:
    raw = {"pods": item} if isinstance(item, str) else f.mapping(item, fld, TRACE_KEYS)
    pods = f.text(raw.get("pods"), f"{fld}.pods")
    ratios = (f.ratios(raw["ratio"], f"{fld}.ratio") if "ratio" in raw
              else defaults["ratio"])
    spec = OpenbSpec(data, pods=pods,
                     nodes=f.text(raw.get("nodes", defaults["nodes"]), f"{fld}.nodes"),
                     order=f.order(raw.get("order", defaults["order"]), f"{fld}.order"),
                     ratio=ratios[0])
    for key, file in (("pods", spec.pod_file), ("nodes", spec.node_file)):
        if not file.is_file():
            raise f.fail(f"no such trace file {file} (trace files are looked up under "
                         "--data)", f"{fld}.{key}", raw.get(key, defaults.get(key)))
    name = raw.get("name") or Path(pods).stem.removeprefix("openb_pod_list_")
    return Trace(f.text(name, f"{fld}.name"), spec, ratios)


def _scenario(f: _Fields, item: object, fld: str, base: Path) -> ScenarioFiles:
    raw = {"files": [item]} if isinstance(item, str) else f.mapping(item, fld,
                                                                    ("name", "files"))
    files = []
    for i, name in enumerate(f.items(raw.get("files"), f"{fld}.files")):
        p = base / f.text(name, f"{fld}.files[{i}]")
        if not p.exists():
            raise f.fail(f"no such scenario file or directory {p}", f"{fld}.files[{i}]", name)
        files.append(str(p))
    default_name = Path(files[0]).stem if len(files) == 1 else None
    name = raw.get("name") or default_name
    if name is None:
        raise f.fail("a scenario of several files needs a name", f"{fld}.name")
    return ScenarioFiles(f.text(name, f"{fld}.name"), tuple(files))


def _config(f: _Fields, item: object, fld: str, base: Path) -> Config:
    raw = ({"file": item} if isinstance(item, str)
           else f.mapping(item, fld, ("name", "file", "config")))
    if "file" in raw and "config" in raw:
        raise f.fail("give file or config, not both", f"{fld}.config")
    if raw.get("file") is not None:
        p = base / f.text(raw["file"], f"{fld}.file")
        if not p.is_file():
            raise f.fail(f"no such configuration file {p}", f"{fld}.file", raw["file"])
        name = raw.get("name") or p.stem
        return Config(f.text(name, f"{fld}.name"), file=str(p))
    if "config" in raw:
        if "name" not in raw:
            raise f.fail("a configuration written here needs a name", f"{fld}.name")
        doc = raw["config"]
        if not isinstance(doc, dict):
            raise f.fail("must be a KubeSchedulerConfiguration (a mapping)", f"{fld}.config",
                         doc)
        # the two fields every KubeSchedulerConfiguration repeats may be left out here
        doc = {"apiVersion": API_VERSION, "kind": CONFIG_KIND, **doc}
        return Config(f.text(raw["name"], f"{fld}.name"), doc=doc,
                      source=f"{f.path} {fld}.config")
    if "name" not in raw:
        raise f.fail("needs a name, a file or a config", fld)
    return Config(f.text(raw["name"], f"{fld}.name"))


def _autoscaler(f: _Fields, item: object, fld: str, check: CheckAutoscaler | None
                ) -> Autoscaler:
    """``{name: N, <flag>: value, …}`` (``expander: least-waste``, ``scan-interval: 30s``)."""
    if not isinstance(item, dict):
        raise f.fail("must be a mapping: a name and cluster-autoscaler's options", fld, item)
    if "name" not in item:
        raise f.fail("needs a name (the results' autoscaler column)", f"{fld}.name")
    name = f.text(item["name"], f"{fld}.name")
    options = {str(k): v for k, v in item.items() if k != "name"}
    if check is None:
        raise f.fail("this kubesched has no autoscaler", fld)
    try:
        check(options)
    except InputError as e:
        raise f.fail(e.message, f"{fld}.{e.field}", e.value) from None
    return Autoscaler(name, tuple(sorted(options.items())))


def _seeds(f: _Fields, value: object) -> list[int]:
    """``N`` (N seeds from 42), ``{first: S, count: N}``, or a list of seeds."""
    if isinstance(value, dict):
        raw = f.mapping(value, "seeds", ("first", "count"))
        first = f.integer(raw.get("first", DEFAULT_FIRST_SEED), "seeds.first", 0)
        count = f.integer(raw.get("count", 1), "seeds.count", 1)
        return list(range(first, first + count))
    if isinstance(value, list):
        seeds = [f.integer(s, f"seeds[{i}]", 0) for i, s in enumerate(f.items(value, "seeds"))]
        if len(set(seeds)) != len(seeds):
            raise f.fail("a seed is named twice", "seeds", value)
        return seeds
    count = f.integer(value, "seeds", 1)
    return list(range(DEFAULT_FIRST_SEED, DEFAULT_FIRST_SEED + count))


def _paper(f: _Fields, value: object) -> dict[str, dict[float | None, dict[str, float]]]:
    """``trace: {policy: %}`` (the same numbers at every arrival level), or
    ``trace: {level: {policy: %}}`` (per arrival level, e.g. ``1.3: {FGD: 4.609}``)."""
    if not isinstance(value, dict):
        raise f.fail("must map trace names to {policy: unallocated GPU %}", "paper", value)
    out: dict[str, dict[float | None, dict[str, float]]] = {}
    for trace, row in value.items():
        where = f"paper.{trace}"
        if not isinstance(row, dict):
            raise f.fail("must map policies (or arrival levels) to numbers", where, row)
        if not any(isinstance(v, dict) for v in row.values()):
            out[str(trace)] = {None: _paper_row(f, row, where)}
            continue
        levels: dict[float | None, dict[str, float]] = {}
        for level, policies in row.items():
            (ratio,) = f.ratios(level, f"{where}.{level}")
            if not isinstance(policies, dict):
                raise f.fail("must map policies to numbers", f"{where}.{level}", policies)
            levels[ratio] = _paper_row(f, policies, f"{where}.{level}")
        out[str(trace)] = levels
    return out


def _paper_row(f: _Fields, row: dict[Any, Any], where: str) -> dict[str, float]:
    return {str(p): f.number(v, f"{where}.{p}") for p, v in row.items()}
