"""The self-test's corpus runner (grader/authoring/corpus.py): chunks; a crash or a hang costs time, never a verdict."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from grader import api
from grader.authoring import corpus
from grader.core.results import Status
from grader.core.target import REPO_ROOT

UNIT = "l10_three_ledgers"  # a ledger unit: no torch, quick to grade
MODULE = "ledgers"


def _with_module_code(tmp_path: Path, name: str, code: str) -> Path:
    """solutions/ of UNIT with ``code`` run when the module is imported."""
    dest = tmp_path / name
    shutil.copytree(REPO_ROOT / "solutions" / UNIT, dest / UNIT, ignore=shutil.ignore_patterns("__pycache__"))
    module = dest / UNIT / f"{MODULE}.py"
    module.write_text(module.read_text() + "\n" + code + "\n")
    return dest


def test_plan_splits_units_into_near_equal_chunks_biggest_first():
    gradings = [corpus.Grading(f"a/{i}", "a") for i in range(11)] + [corpus.Grading(f"b/{i}", "b") for i in range(3)]
    jobs = corpus.plan(gradings, chunk=5)
    assert [(j[0].unit, len(j)) for j in jobs] == [("a", 4), ("a", 4), ("a", 3), ("b", 3)], jobs
    assert [g.key for j in jobs[:3] for g in j] == [f"a/{i}" for i in range(11)], "a unit's targets keep their order"


def test_pack_fills_runners_with_whole_chunks_biggest_first():
    chunks = [[corpus.Grading(f"{u}/{i}", u) for i in range(n)] for u, n in (("a", 9), ("b", 6), ("c", 4), ("d", 2))]
    jobs = corpus.pack(chunks, cap=10)
    assert [[g.unit for g in j] for j in jobs] == [["b"] * 6 + ["c"] * 4, ["a"] * 9, ["d"] * 2], jobs
    assert corpus.pack(chunks, cap=100) == [[g for c in chunks for g in c]]  # every chunk in one runner, in order
    assert sorted(g.key for j in corpus.pack(chunks, cap=3) for g in j) == sorted(g.key for c in chunks for g in c)


def test_one_runner_grades_several_units_and_each_unit_gets_its_cost():
    """Small units share a runner (its start paid once); each keeps its own verdicts and its own CPU seconds."""
    units = ("l10_three_ledgers", "l12_roofline")
    gradings = [corpus.Grading.of_folder(REPO_ROOT / "solutions", u) for u in units]
    run = corpus.grade(gradings, workers=1)
    for g in gradings:
        report = run.report(g.key)
        assert report.score == report.max_score > 0, g.key
        cost = run.costs[g.unit]
        assert cost.runners == 1 and cost.gradings == 1 and cost.cpu_s > 0 and not cost.regraded, cost
        assert run.target_cpu_s[g.key] <= cost.cpu_s


def test_grading_keys_must_be_unique():
    with pytest.raises(ValueError, match="repeated"):
        corpus.grade([corpus.Grading("x", UNIT), corpus.Grading("x", UNIT)])


@pytest.mark.slow
def test_a_crashing_target_is_graded_alone_and_the_rest_keep_their_verdicts(tmp_path):
    """A segfault kills the runner: the crashing target and those after it are graded one process each."""
    crash = corpus.Grading.of_folder(_with_module_code(tmp_path, "crash", "import os, signal\n"
                                                       "os.kill(os.getpid(), signal.SIGSEGV)"), UNIT)
    solutions = corpus.Grading.of_folder(REPO_ROOT / "solutions", UNIT)
    run = corpus.grade([crash, solutions], workers=1)
    assert run.costs[UNIT].regraded == [crash.key, solutions.key], run.costs[UNIT]
    with pytest.raises(api.GraderError, match="pytest exited with -11"):
        run.report(crash.key)
    report = run.report(solutions.key)
    assert report.score == report.max_score > 0, "solutions graded after a crash keep full marks"
    assert "runner exit -11" in run.costs[UNIT].runner_log


@pytest.mark.slow
def test_a_hanging_target_is_stopped(tmp_path):
    """A runner that finishes nothing for stall_s is killed; api.grade, stopped after its timeout, says so."""
    hang = corpus.Grading.of_folder(_with_module_code(tmp_path, "hang", "import time\ntime.sleep(3600)"), UNIT)
    start = time.monotonic()
    run = corpus.grade([hang], stall_s=2, alone_timeout_s=2)
    assert time.monotonic() - start < 120, "the hang was stopped (2 s without progress, then 2 s alone)"
    assert run.costs[UNIT].regraded == [hang.key]
    with pytest.raises(api.GraderError, match="ran past 2 s"):
        run.report(hang.key)


@pytest.mark.slow
def test_runner_grades_in_order_without_leaking_a_target_into_the_next(tmp_path):
    """The same module, wrong then right then wrong: each graded as its own code (modules are dropped between)."""
    wrong = _with_module_code(tmp_path, "wrong", "def training_flops(*args, **kwargs):\n    return -1")
    gradings = [corpus.Grading(f"{i}", UNIT, ("training_flops",), folder=f)
                for i, f in enumerate([wrong, REPO_ROOT / "solutions", wrong])]
    run = corpus.grade(gradings, workers=1)
    assert not run.costs[UNIT].regraded, run.costs[UNIT].runner_log
    statuses = [{r.status for r in run.report(g.key).results} for g in gradings]
    assert statuses == [{Status.FAILED}, {Status.PASSED}, {Status.FAILED}], statuses
