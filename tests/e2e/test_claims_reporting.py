"""What a run reports of pods it does not schedule, from a dump of a cluster where another
scheduler (volcano) works beside kube-scheduler: pods no profile serves have their line and
their count, a preempted pod is reported as preempted (not pending), and a pod bound after
failing has no message left."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli import main

DUMP = Path(__file__).resolve().parent.parent / "dumps" / "claims-other-schedulers.yaml"


def test_placements_name_the_scheduler_and_the_preemptor() -> None:
    res = CliRunner().invoke(main, ["simulate", str(DUMP), "--check", "--placements", "-"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert lines == [
        {"pod": "data/web-typo", "node": None, "time": 0.0, "attempts": 0,
         "message": 'no profile serves schedulerName "default-schedular" '
                    "(profiles: default-scheduler)"},
        {"pod": "data/spark-etl-driver", "node": None, "time": 0.0, "attempts": 0,
         "message": 'no profile serves schedulerName "volcano" (profiles: default-scheduler)'},
        {"pod": "data/report-5f8b", "node": None, "time": 5.0, "attempts": 1,
         "message": "preempted by data/ingest-7d9c", "evicted_from": "worker-1"},
        # its first attempt failed (FitError, then preemption); bound once report-5f8b's
        # grace period of 30 s was over: no message left
        {"pod": "data/ingest-7d9c", "node": "worker-1", "time": 35.0, "attempts": 2,
         "message": None},
    ]


def test_summary_counts_them_apart_and_explain_answers() -> None:
    res = CliRunner().invoke(main, ["simulate", str(DUMP), "--explain", "data/spark-etl-driver",
                                    "--explain", "data/report-5f8b"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.stdout.split())  # rich wraps lines
    assert ("1 of 4 pods scheduled, 0 pending, 1 preempted and 2 for other schedulers" in out)
    assert 'no profile serves schedulerName "volcano" (profiles: default-scheduler): ' \
           "data/spark-etl-driver" in out
    assert "Pending pods by reason" not in out
    assert ('data/spark-etl-driver: not explained: no profile serves schedulerName "volcano" '
            "(profiles: default-scheduler)") in out
    assert "data/report-5f8b: not explained: preempted by data/ingest-7d9c" in out


def test_explain_says_no_profile_serves_it() -> None:
    res = CliRunner().invoke(main, ["explain", str(DUMP), "--pod", "data/web-typo"])
    assert res.exit_code == 2
    assert ('no profile serves schedulerName "default-schedular" (profiles: default-scheduler)'
            in res.output)
    assert "Traceback" not in res.output


def test_explain_says_when_other_pending_pods_come_first() -> None:
    res = CliRunner().invoke(main, ["explain", str(DUMP), "--pod", "data/ingest-7d9c"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.stdout.split())
    assert ("note: 1 other pending pod(s) would be scheduled before data/ingest-7d9c "
            "(data/report-5f8b); this judges the scenario as loaded") in out
    assert "--explain data/ingest-7d9c" in out
    # the first in the queue: nothing to say (pods of other schedulers do not count)
    res = CliRunner().invoke(main, ["explain", str(DUMP), "--pod", "data/report-5f8b",
                                    "-o", "json"])
    assert res.exit_code == 0 and "note:" not in res.output
    json.loads(res.stdout)


def test_utilisation_lists_every_resource_most_allocated_first(tmp_path: Path) -> None:
    # the volcano pod's GPU request counted as if served: a GPU allocated on worker-1
    text = DUMP.read_text().replace("schedulerName: volcano", "schedulerName: default-scheduler")
    dump = tmp_path / "dump.yaml"
    dump.write_text(text)
    res = CliRunner().invoke(main, ["simulate", str(dump)], terminal_width=200)
    assert res.exit_code == 0, res.output
    header = next(x for x in res.stdout.splitlines() if "node" in x and "pods" in x)
    columns = [c.strip() for c in header.strip("┃ ").split("┃")]
    # cpu 75 %, nvidia.com/gpu 50 %, memory 38 %, ephemeral-storage 0 %
    assert columns == ["node", "pods", "cpu", "nvidia.com/gpu", "memory", "ephemeral-storage"]
