"""Metrics under upstream's names, recorded from outside the core: on the simulator too,
without changing a single decision."""

from __future__ import annotations

from importlib import resources

from kubesched.api.scenario import load_scenario
from kubesched.backends.sim.cluster import SimCluster
from kubesched.metrics import SchedulerMetrics


def _example() -> str:
    return str(resources.files("kubesched") / "examples" / "quickstart.yaml")


def _sample(metrics: SchedulerMetrics, name: str, labels: dict[str, str] | None = None
            ) -> float | None:
    return metrics.registry.get_sample_value(name, labels or {})


def test_simulator_with_metrics_makes_the_same_decisions() -> None:
    plain = SimCluster(load_scenario([_example()]), seed=3, check=True).run()
    sim = SimCluster(load_scenario([_example()]), seed=3, check=True)
    m = SchedulerMetrics(plugin_sample_every=1)
    m.instrument(sim.scheduler)
    result = sim.run()
    assert [r.as_json() for r in result.records] == [r.as_json() for r in plain.records]

    scheduled = sum(1 for r in result.records if r.node is not None)
    profile = "default-scheduler"
    assert _sample(m, "scheduler_schedule_attempts_total",
                   {"result": "scheduled", "profile": profile}) == scheduled
    attempts = sum(r.attempts for r in result.records)
    total = sum(_sample(m, "scheduler_schedule_attempts_total",
                        {"result": res, "profile": profile}) or 0
                for res in ("scheduled", "unschedulable", "error"))
    assert total == attempts
    assert _sample(m, "scheduler_scheduling_attempt_duration_seconds_count",
                   {"result": "scheduled", "profile": profile}) == scheduled
    assert (_sample(m, "scheduler_scheduling_algorithm_duration_seconds_count") or 0) >= attempts
    assert _sample(m, "scheduler_pod_scheduling_attempts_count") == scheduled
    assert _sample(m, "scheduler_framework_extension_point_duration_seconds_count",
                   {"extension_point": "Bind", "status": "Success",
                    "profile": profile}) == scheduled
    # every cycle sampled here: per-plugin durations, upstream's label set
    assert _sample(m, "scheduler_plugin_execution_duration_seconds_count",
                   {"plugin": "DefaultBinder", "extension_point": "Bind",
                    "status": "Success"}) == scheduled
    text = m.render()[0].decode()
    assert 'scheduler_pending_pods{queue="active"} 0.0' in text
    assert "scheduler_scheduler_cache_size" in text
    assert "_created" not in text


def test_plugin_metrics_are_sampled() -> None:
    sim = SimCluster(load_scenario([_example()]), seed=3, check=True)
    m = SchedulerMetrics()  # one cycle in ten, as upstream
    m.instrument(sim.scheduler)
    result = sim.run()
    binds = _sample(m, "scheduler_plugin_execution_duration_seconds_count",
                    {"plugin": "DefaultBinder", "extension_point": "Bind",
                     "status": "Success"}) or 0
    scheduled = sum(1 for r in result.records if r.node is not None)
    assert binds <= scheduled // 10 + 1
