"""A dump's now (api/dumptime.py): the newest of the timestamps that say what had happened
when the dump was taken."""

from __future__ import annotations

from datetime import UTC, datetime

from kubesched.api.dumptime import newest_timestamp, virtual_time
from kubesched.api.scenario import load_scenario_text


def _t(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_each_timestamp_that_counts() -> None:
    base = {"kind": "ConfigMap", "metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}}
    assert newest_timestamp(base) == _t("2026-01-01T00:00:00")
    for doc, newest in (
        ({"metadata": {"managedFields": [{"time": "2026-01-01T00:00:05Z"}]}}, "00:00:05"),
        ({"status": {"startTime": "2026-01-01T00:00:06Z"}}, "00:00:06"),
        ({"status": {"conditions": [{"lastHeartbeatTime": "2026-01-01T00:00:07Z",
                                     "lastTransitionTime": "2026-01-01T00:00:02Z"}]}},
         "00:00:07"),
        ({"status": {"conditions": [{"lastProbeTime": "2026-01-01T00:00:08Z"},
                                    {"lastUpdateTime": "2026-01-01T00:00:09Z"}]}}, "00:00:09"),
        ({"spec": {"taints": [{"key": "k", "effect": "NoExecute",
                               "timeAdded": "2026-01-01T00:00:10Z"}]}}, "00:00:10"),
        # a deletion: the time it was asked for, the deletionTimestamp less the grace
        ({"metadata": {"deletionTimestamp": "2026-01-01T00:01:00Z",
                       "deletionGracePeriodSeconds": 45}}, "00:00:15"),
    ):
        merged = {**base, **doc, "metadata": {**base["metadata"], **doc.get("metadata", {})}}
        assert newest_timestamp(merged) == _t(f"2026-01-01T{newest}"), doc


def test_a_pod_deleted_without_its_grace_period_field_counts_its_termination_grace() -> None:
    pod = {"kind": "Pod", "metadata": {"deletionTimestamp": "2026-01-01T00:01:00Z"},
           "spec": {"terminationGracePeriodSeconds": 50}}
    assert newest_timestamp(pod) == _t("2026-01-01T00:00:10")
    del pod["spec"]
    assert newest_timestamp(pod) == _t("2026-01-01T00:00:30")  # the default 30 s


def test_a_scenario_without_timestamps_has_no_now() -> None:
    sc = load_scenario_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    assert sc.dump_time is None
    assert virtual_time(_t("2026-01-01T00:00:00"), None) == 0.0
