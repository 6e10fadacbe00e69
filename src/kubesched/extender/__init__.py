"""Scheduler extenders over HTTP (upstream's ``HTTPExtender``), built from the
KubeSchedulerConfiguration's ``extenders``. The core calls them through
``kubesched.framework.extender.Extender`` only."""

from __future__ import annotations

from kubesched.config import SchedulerConfiguration
from kubesched.extender.http import HTTPExtender
from kubesched.framework.extender import Extender

__all__ = ["HTTPExtender", "build_extenders"]


def build_extenders(config: SchedulerConfiguration) -> list[Extender]:
    """buildExtenders: one HTTPExtender per entry, the ignorable ones moved to the tail
    (upstream's order, which decides who filters first and who binds)."""
    exts: list[Extender] = [HTTPExtender(e) for e in config.extenders]
    return [e for e in exts if not e.is_ignorable()] + [e for e in exts if e.is_ignorable()]
