"""The gpu_perf machinery with a fake clock (no GPU here): interleaving, medians, score from ratios."""

from __future__ import annotations

import pytest

from grader.instrument import device
from grader.judge import perf


def test_candidates_are_interleaved_with_a_rotating_order_and_flushed_before_each_call():
    calls: list[str] = []
    cost = {"learner": 2.0, "vendor": 1.0, "ref": 1.5}

    def make(name):
        return lambda: calls.append(name)

    def timer(fn):
        fn()
        return cost[calls[-1]]

    flushes = []
    medians = device.bench_interleaved({n: make(n) for n in cost}, timer=timer, flush=lambda: flushes.append(1),
                                     warmup=1, reps=3)
    assert medians == cost
    assert calls[3:] == ["learner", "vendor", "ref", "vendor", "ref", "learner", "ref", "learner", "vendor"]
    assert len(flushes) == 9


def test_speedups_and_score_fraction():
    result = perf.PerfResult({"learner": 2.0, "torch": 1.0}, {"gpu": "H200"})
    assert result.speedup("learner", over="torch") == 0.5
    assert perf.score_fraction(0.45, full_at=0.9) == pytest.approx(0.5)
    assert perf.score_fraction(1.3, full_at=0.9) == 1.0
    with pytest.raises(ValueError):
        perf.score_fraction(0.0, full_at=0.9)


def test_without_cuda_the_tier_is_pending():
    if perf.gpu_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(pytest.skip.Exception, match="^pending GPU"):
        perf.require_gpu()
