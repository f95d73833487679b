"""The test kit: everything a unit's grading tests import, from one place (``from grader.kit import ...``).

Declaring what a test grades
    learner(unit, module, name, *, kernel=False, audited=False)  a learner function, loaded at call time
    cuda_kernel(unit, module, name)     a CUDA C++ kernel exercise of ``<module>.cu`` (compiled, not called)
    grade(exercise, tier, *, points, hint, validation=False)  the one marker of a grading test: tier, points,
                                        hint; the exercise and its unit come from the declaration above;
                                        validation=True for a bad-argument test (assert_rejects): it scores
                                        only while the exercise's other correctness tests pass

Exact ledgers (pure Python: a ledger unit never imports torch)
    assert_exact(got, want, what, *, why="", unit="")  an int (not a bool, not a float) equal to want
    assert_parts(got, want, what, *, total=None)       a dict of named exact parts, then its total
    assert_number(got, want, what, *, rel=1e-9, abs_tol=0.0)  a real number (not a bool) within rel (or abs_tol)
    assert_rejects(fn, args, name, kwargs=None)        ValueError whose message names the argument (name=None: any)
    assert_rejects_all(fn, table)                      the same for each (args, name) row of a table
    human_bytes(n)                                     "1,120,000,000,000 B (1120 GB = 1043 GiB)"

Tensors and kernels (import torch on first use)
    assert_close(actual, expected, *, dtype, what)     per-dtype tolerances, first mismatching index
    describe(t), Tolerance, TOLERANCES
    count_traffic()                                    bytes loaded and stored, launches, bounds-checked
    TiledLedger.of(formula, dims, blocks, ...), assert_tiled_loads(t, ledger, what)  a tiled kernel's loads
                                        between the masked and the padded ledger (tails padded: a note)
    logits, logit_cases, LogitCase                     hypothesis strategies with tails and hostile values

The gpu_perf tier
    on_device(check, ...), where_learner_runs(check, ...), learner_value(unit, module, name)
    perf                                               the protocol: perf.time_learner, perf.size, perf.device
    award_speedup(award, result, *, over, full_at, label=None, **record)  score a timed ratio, record its basis

Several processes on gloo (import torch on first use; grader/instrument/ranks.py)
    run_ranks(check, world_size, *args, timeout_s=20.0, refuse=(), **kwargs)  check(rank, world_size, ...) on
                                        forked gloo ranks: .results[rank], .comm[rank]; a dict of checks: RankRuns
    fresh_ranks_ahead()                 at collection, in a module that calls run_ranks(..., fresh=True): the clean
                                        process the fresh ranks fork from is forked before any learner code runs
    RankFailure, RankRun, RankRuns      deadlock / exception / crash / timeout per rank; the outcomes
    uncounted()                         inside a rank: the grader's own torch.distributed calls, not logged
    comm_log()                          inside a rank: the (call, nbytes) this check made so far
    rank_seed()                         inside a rank: this check's secret seed on this rank (no other rank has it);
                                        build each rank's own inputs from it, the expected values from run.seeds
    COLLECTIVES                         every collective's name (refuse=COLLECTIVES: point-to-point only)
    cuda                                               CUDA exercises: run_sim_kernel, compile_learner, launch
    cpp_function(unit, module, name)                   a C++ extension function of ``<module>.cpp`` (pybind11):
                                        ``.run(check, *args)`` compiles it (cached) and calls it in a forked child
    SubmissionError                                    a submission that breaks the contract (not a wrong value)
"""

from __future__ import annotations

import importlib
from typing import Any

from grader.judge.harness import LearnerFunction, learner, learner_value, on_device, where_learner_runs
from grader.judge.marks import CudaKernel, cuda_kernel, grade
from grader.kit.checks import (
    assert_exact,
    assert_number,
    assert_parts,
    assert_rejects,
    assert_rejects_all,
    human_bytes,
)
from grader.kit.traffic_ledger import TiledLedger, TrafficMismatch, assert_tiled_loads

# Names that need torch, imported when a test first asks for them.
_LAZY = {
    "assert_close": "grader.kit.compare",
    "describe": "grader.kit.compare",
    "Tolerance": "grader.kit.compare",
    "TOLERANCES": "grader.kit.compare",
    "count_traffic": "grader.instrument.traffic",
    "logits": "grader.kit.strategies",
    "logit_cases": "grader.kit.strategies",
    "LogitCase": "grader.kit.strategies",
    "award_speedup": "grader.judge.perf",
    "SubmissionError": "grader.core.target",
    "run_ranks": "grader.judge.wire",
    "fresh_ranks_ahead": "grader.judge.wire",
    "RankFailure": "grader.instrument.ranks",
    "RankRun": "grader.instrument.ranks",
    "RankRuns": "grader.judge.wire",
    "uncounted": "grader.instrument.ranks",
    "comm_log": "grader.instrument.ranks",
    "rank_seed": "grader.instrument.ranks",
    "COLLECTIVES": "grader.instrument.ranks",
    "cpp_function": "grader.instrument.cpp_ext",
}
_LAZY_MODULES = {"perf": "grader.judge.perf", "cuda": "grader.instrument.cuda"}

__all__ = [
    "CudaKernel",
    "LearnerFunction",
    "TiledLedger",
    "TrafficMismatch",
    "assert_exact",
    "assert_number",
    "assert_parts",
    "assert_rejects",
    "assert_rejects_all",
    "assert_tiled_loads",
    "cuda_kernel",
    "grade",
    "human_bytes",
    "learner",
    "learner_value",
    "on_device",
    "cuda",
    "perf",
    "where_learner_runs",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    """``perf``, ``cuda`` and the torch-backed helpers, imported on first use (PEP 562)."""
    if name in _LAZY_MODULES:
        return importlib.import_module(_LAZY_MODULES[name])
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'grader.kit' has no attribute {name!r}")
