"""The throughput sampler (scheduler_perf's throughputCollector) and the percentile math."""

from __future__ import annotations

import pytest

from kubesched.bench.runner import ThroughputCollector, Ticker, percentile


def test_percentile_is_sorted_at_ceil_n_p_over_100_minus_1():
    vals = [float(v) for v in range(1, 11)]
    assert percentile(vals, 50) == 5.0
    assert percentile(vals, 90) == 9.0
    assert percentile(vals, 95) == 10.0
    assert percentile(vals, 99) == 10.0
    assert percentile([7.0], 50) == 7.0
    assert percentile([7.0], 99) == 7.0
    assert percentile([], 50) == 0.0
    three = [1.0, 2.0, 3.0]
    assert [percentile(three, p) for p in (1, 33, 34, 50, 67, 100)] == [
        1.0, 1.0, 2.0, 2.0, 3.0, 3.0]


def test_first_sample_with_pods_is_only_the_baseline():
    c = ThroughputCollector()
    assert c.tick(1.0, 0) is None  # nothing scheduled yet: not even a baseline
    assert c.tick(2.0, 300) is None  # baseline
    assert c.tick(3.0, 800) == pytest.approx(500.0)
    assert c.tick(4.0, 1000) == pytest.approx(200.0)
    assert c.samples == pytest.approx([500.0, 200.0])


def test_intervals_without_progress_are_skipped_then_repeated():
    c = ThroughputCollector()
    c.tick(1.0, 10)
    assert c.tick(2.0, 10) is None
    assert c.tick(3.0, 10) is None
    # 30 pods over the 3 s since the baseline, recorded once per interval covered
    assert c.tick(4.0, 40) == pytest.approx(10.0)
    assert c.samples == pytest.approx([10.0, 10.0, 10.0])


def test_rate_uses_the_actual_elapsed_time():
    c = ThroughputCollector()
    c.tick(1.0, 1)
    assert c.tick(2.5, 301) == pytest.approx(200.0)


def test_summary():
    c = ThroughputCollector()
    assert c.summary() is None
    c.tick(0.0, 1)
    for t, n in ((1.0, 101), (2.0, 301), (3.0, 601), (4.0, 1001)):
        c.tick(t, n)
    s = c.summary()
    assert s is not None
    assert s["Average"] == pytest.approx(250.0)  # mean of the samples 100, 200, 300, 400
    assert (s["Perc50"], s["Perc90"], s["Perc99"]) == (200.0, 400.0, 400.0)


def test_ticker_drops_missed_ticks():
    t = Ticker(10.0, 1.0)
    assert not t.due(10.5)
    assert t.due(11.0)
    assert not t.due(11.2)
    assert t.due(14.7)  # late: one tick, the missed ones dropped
    assert t.next == pytest.approx(15.0)
    assert not t.due(14.9)
    assert t.due(15.0)
