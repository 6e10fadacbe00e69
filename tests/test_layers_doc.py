"""``.importlinter`` (what ``lint-imports`` enforces) and docs/architecture.md ("Typing and
layers", what a reader is told) name the same layers, in the same order."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def contract_layers() -> list[list[str]]:
    ini = configparser.ConfigParser()
    ini.read(ROOT / ".importlinter")
    lines = ini["importlinter:contract:layers"]["layers"].strip().splitlines()
    return [sorted(m.strip() for m in line.split("|")) for line in lines]


def documented_layers() -> list[list[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    part = text.split("## Typing and layers", 1)[1].split("\n## ", 1)[0]
    # "9. `framework`, with …": the names before the first word that is not one
    found = re.findall(r"^\d+\. ((?:`[\w.]+`(?: \| )?)+)", part, re.M)
    return [sorted(re.findall(r"`([\w.]+)`", names)) for names in found]


def test_the_documented_layers_are_the_enforced_ones() -> None:
    assert documented_layers() == contract_layers()
    assert ["framework"] in contract_layers()


def test_the_core_dependencies_contract_forbids_the_optional_libraries() -> None:
    ini = configparser.ConfigParser()
    ini.read(ROOT / ".importlinter")
    forbidden = ini["importlinter:contract:core-deps"]["forbidden_modules"].split()
    for lib in ("kubernetes", "prometheus_client", "plotly", "matplotlib", "pyarrow", "ray"):
        assert lib in forbidden
