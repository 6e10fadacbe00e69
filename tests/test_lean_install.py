"""``pip install .`` is the core: simulate, explain, capacity, compare and sweep (without
plots) run with none of the extras' libraries importable, and try to import none of them; a
command or option that needs an extra exits 2 naming it, before any work. The libraries are
made unimportable in a subprocess (and in sweep's workers) by a ``sitecustomize`` on
PYTHONPATH that records every attempt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kubesched

# the libraries each extra installs (pyproject.toml), as imported; urllib3 comes with
# kubernetes
EXTRAS = {
    "kube": ("kubernetes", "prometheus_client", "urllib3"),
    "report": ("plotly",),
    "research": ("matplotlib", "pyarrow"),
    "ray": ("ray",),
}
ALL = tuple(m for mods in EXTRAS.values() for m in mods)

SITECUSTOMIZE = '''
import os
import sys

_BLOCKED = set(os.environ["KUBESCHED_TEST_BLOCKED"].split(","))
_TRIED = os.environ["KUBESCHED_TEST_TRIED"]


class _Blocker:
    """Not installed, as far as this process can tell."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            with open(_TRIED, "a") as f:
                f.write(name + "\\n")
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
'''

# runs each command line of argv[1] (JSON) as `kubesched ...` would; prints, as its last
# line, each one's exit status and stderr
DRIVER = '''
import contextlib, io, json, sys
from kubesched.cli import main
out = []
for args in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as e:
            code = e.code or 0
    out.append({"code": code, "stderr": err.getvalue()})
print(json.dumps(out))
'''


def kubesched_without(blocked: tuple[str, ...], commands: list[list[str]], cwd: Path
                      ) -> tuple[list[dict[str, object]], list[str]]:
    """The ``kubesched`` command lines run one after another in one process with
    ``blocked`` unimportable: their exit statuses and stderr, and the imports of the
    blocked libraries tried."""
    site = cwd / "_site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    tried = site / "tried.txt"
    tried.unlink(missing_ok=True)
    src = str(Path(kubesched.__file__).resolve().parent.parent)
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(site), src,
                                          *filter(None, [os.environ.get("PYTHONPATH")])]),
           "KUBESCHED_TEST_BLOCKED": ",".join(blocked), "KUBESCHED_TEST_TRIED": str(tried)}
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(commands)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.splitlines()[-1])
    return results, tried.read_text().split() if tried.exists() else []


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the files ``kubesched examples`` writes."""
    where = tmp_path_factory.mktemp("lean")
    (result,), _ = kubesched_without((), [["examples", "."]], where)
    assert result["code"] == 0
    return where


def test_the_blocker_blocks(examples: Path) -> None:
    """(so that the tests below can fail) the report needs plotly: blocked, it is tried"""
    (result,), tried = kubesched_without(("plotly",), [["simulate", "--report", "r.html"]],
                                         examples)
    assert result["code"] == 2 and tried == ["plotly"]


def test_the_core_commands_need_no_extra(examples: Path) -> None:
    commands = [
        ["simulate"],
        ["simulate", "cluster.yaml", "workload.yaml", "--placements", "p.jsonl",
         "--metrics", "m.csv", "--state-out", "s.yaml", "--quiet"],
        ["explain", "cluster.yaml", "--pod", "default/web-1", "-o", "json"],
        ["capacity", "cluster.yaml", "workload.yaml", "--pod", "pod.yaml"],
        ["compare", "cluster.yaml", "workload.yaml", "--config", "least-allocated.yaml",
         "--config", "most-allocated.yaml"],
        ["sweep", "sweep.yaml", "--results", "sweep.csv", "--seeds", "1", "--jobs", "2",
         "--quiet"],
    ]
    results, tried = kubesched_without(ALL, commands, examples)
    for args, result in zip(commands, results, strict=True):
        assert result["code"] == 0, (args, result["stderr"])
    assert tried == []
    assert (examples / "p.jsonl").read_text().count("\n") > 1
    assert len((examples / "sweep.csv").read_text().splitlines()) == 1 + 3


# with every extra's libraries missing, each names its own
NEEDS = [
    ("kube", "kubernetes", ["run", "--kubeconfig", "nowhere"], None),
    ("kube", "kubernetes", ["snapshot", "--out", "snap.yaml"], "snap.yaml"),
    ("report", "plotly", ["simulate", "--report", "report.html"], "report.html"),
    ("research", "matplotlib",
     ["sweep", "sweep.yaml", "--results", "s-plot.csv", "--plot", "p.png"], "s-plot.csv"),
    ("research", "pyarrow", ["sweep", "sweep.yaml", "--results", "s.parquet"], "s.parquet"),
    ("ray", "ray", ["sweep", "sweep.yaml", "--results", "s-ray.csv", "--ray", "local"],
     "s-ray.csv"),
]


def test_a_missing_extra_is_named(examples: Path) -> None:
    results, _ = kubesched_without(ALL, [args for _, _, args, _ in NEEDS], examples)
    for (extra, library, args, not_written), result in zip(NEEDS, results, strict=True):
        assert result["code"] == 2, (args, result["stderr"])
        line, = str(result["stderr"]).splitlines()
        assert line.startswith("error: ") and line.endswith(
            f" needs {library}, which is not installed: pip install 'kubesched[{extra}]'"), line
        if not_written is not None:
            assert not (examples / not_written).exists(), args
