"""The time series of a run (``simulate --report`` / ``--metrics``), sampled as it goes.

A sample is cheap (a few numpy sums over the snapshot's node table), and samples are few:
one every ``stride`` ticks (a tick is a scheduling step or a move of the virtual clock);
when ``2 × max_points`` samples are held, every other one is dropped and the stride doubles.
So a run of any length keeps between ``max_points`` and ``2 × max_points`` samples, spread
evenly over its ticks, at a cost logarithmic in its length; the last sample is the end state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.backends.sim.ports import SampledRun

#: resources always reported, in this order; extended resources follow, sorted by name
BASE_RESOURCES = ("cpu", "memory", "pods")


@dataclass(slots=True)
class Sample:
    time: float  # virtual seconds
    attempts: int  # scheduling attempts so far
    running: int  # pods bound to nodes (the scheduler's view: assumed pods count)
    pending: int  # pods waiting to be scheduled: queued, unschedulable, gated, at Permit
    # resource -> (requested, allocatable), summed over the nodes
    resources: dict[str, tuple[int, int]]


class Series:
    def __init__(self, sim: SampledRun, max_points: int = 1000) -> None:
        self.sim = sim
        self.max_points = max_points
        self.samples: list[Sample] = []
        self.stride = 1
        self._ticks = 0

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks % self.stride == 0:
            self.sample()

    def quiet_ticks(self) -> int:
        """How many ticks may come before one takes a sample."""
        return self.stride - 1 - self._ticks % self.stride

    def skip(self, n: int) -> None:
        """``n`` ticks, none of which takes a sample (at most ``quiet_ticks``)."""
        if n > self.quiet_ticks():
            raise ValueError(f"{n} ticks would take a sample")
        self._ticks += n

    def sample(self) -> None:
        sim = self.sim
        sched = sim.scheduler
        # what the next cycle starts with (only the nodes changed since the last one are
        # refreshed; the cycle then finds nothing left to do): the table counts the pod
        # just bound
        sched.cache.update_snapshot(sched.snapshot)
        table = sched.snapshot.table
        req = table.requested.sum(axis=1) if table.size else np.zeros(len(table.resources))
        alloc = table.alloc.sum(axis=1) if table.size else np.zeros(len(table.resources))
        res = {name: (int(req[i]), int(alloc[i])) for i, name in enumerate(table.resources)}
        running = int(table.pod_count.sum())
        res["pods"] = (running, int(table.allowed_pods.sum()))
        pending = len(sched.queue) + len(sched.waiting)
        s = Sample(sim.clock.now(), sim.attempts, running, pending, res)
        if self.samples and self.samples[-1].time == s.time \
                and self.samples[-1].attempts == s.attempts:
            self.samples[-1] = s  # nothing moved since: one sample is enough
        else:
            self.samples.append(s)
        if len(self.samples) >= 2 * self.max_points:
            last = self.samples[-1]
            self.samples = self.samples[::2]
            if self.samples[-1] is not last:
                self.samples.append(last)
            self.stride *= 2

    def finish(self) -> None:
        """The end state, as the last sample."""
        self.sample()

    def resources(self) -> list[str]:
        """cpu, memory, pods, then every other resource some node has or some pod asks
        for, by name."""
        seen = {r for s in self.samples for r, v in s.resources.items() if any(v)}
        return list(BASE_RESOURCES) + sorted(seen - set(BASE_RESOURCES))

    def columns(self) -> list[str]:
        cols = ["time", "attempts", "running", "pending"]
        for r in self.resources():
            cols += [f"{r}_requested", f"{r}_allocatable"]
        return cols

    def rows(self) -> list[list[float | int]]:
        names = self.resources()
        out: list[list[float | int]] = []
        for s in self.samples:
            row: list[float | int] = [s.time, s.attempts, s.running, s.pending]
            for r in names:
                row += list(s.resources.get(r, (0, 0)))
            out.append(row)
        return out

    def csv(self) -> str:
        lines = [",".join(self.columns())]
        lines += [",".join(str(round(v, 6)) if isinstance(v, float) else str(v) for v in row)
                  for row in self.rows()]
        return "\n".join(lines) + "\n"
