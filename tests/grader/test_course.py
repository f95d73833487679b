"""The course proves itself: solutions at full marks, stubs at 0, known-wrong rejected, known-right accepted.

Every grading a session's tests ask for (solutions/, exercises/ and known implementations of the units
they name) is done once, up front, by grader.authoring.corpus: one child process per chunk of a unit's
targets grades them one after another in-process, two processes at a time (the machines have two cores);
a runner that crashes or hangs costs only the time to grade what it had left one process each, as
`make grade` does. The terminal summary lists the CPU seconds each unit's gradings cost.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from grader import api
from grader.authoring import corpus, known
from grader.authoring.known import KnownImpl
from grader.core.results import GradeReport, Status, TestResult, Tier
from grader.core.target import REPO_ROOT
from grader.tools.bench_course import cost_table

UNITS = api.all_units()
WRONG = [k for u in UNITS for k in known.known_impls(u, "known_wrong")]
RIGHT = [k for u in UNITS for k in known.known_impls(u, "known_right")]
CPU_TIERS = (Tier.CORRECTNESS, Tier.EFFICIENCY)

pytestmark = pytest.mark.slow  # `make test` runs this file in one pytest-xdist worker (--dist loadfile)


def _gradings_for(item: pytest.Item) -> list[corpus.Grading]:
    """What one of this module's tests reads: a known implementation's report, or a unit's folder reports."""
    params = item.callspec.params if hasattr(item, "callspec") else {}
    if isinstance(params.get("impl"), KnownImpl):
        return [corpus.Grading.of_known(params["impl"])]
    unit = params.get("unit")
    if unit not in UNITS:
        return []
    name = getattr(item, "originalname", item.name)
    folder = "exercises" if name == test_stubs_score_zero_without_crashing.__name__ else "solutions"
    wrong = name == test_every_test_rejects_some_known_wrong.__name__
    return [corpus.Grading.of_folder(REPO_ROOT / folder, unit),
            *(corpus.Grading.of_known(k) for k in WRONG if wrong and k.unit == unit)]


COST_TITLE = "course self-test: CPU seconds per unit (python -m grader.tools.bench_course)"
COST_OUTPUT = "dripstone_course_cost"  # under pytest-xdist the worker hands the table to the controller (conftest.py)


class _CostSummary:
    """Prints the CPU seconds each unit's gradings cost at the end of the session."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminalreporter.section(COST_TITLE)
        for line in self.lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def course(request: pytest.FixtureRequest) -> corpus.CorpusRun:
    """Every grading this session's tests read, graded once (the corpus runner, two processes at a time)."""
    mine = [i for i in request.session.items if getattr(getattr(i, "module", None), "__name__", "") == __name__]
    wanted = {g.key: g for item in mine for g in _gradings_for(item)}
    run = corpus.grade(list(wanted.values()))
    lines = cost_table(list(run.costs.values()))
    if hasattr(request.config, "workeroutput"):  # a pytest-xdist worker: the controller prints what it gets
        request.config.workeroutput[COST_OUTPUT] = [COST_TITLE, *lines]
    else:
        request.config.pluginmanager.register(_CostSummary(lines), "dripstone-course-cost")
    return run


def unit_report(course: corpus.CorpusRun, folder: str, unit: str) -> GradeReport:
    return course.report(corpus.Grading.of_folder(REPO_ROOT / folder, unit).key)


def _table(results: Iterable[TestResult]) -> str:
    return "\n".join(f"  {r.exercise}/{r.tier}/{r.name}: {r.status} {r.score:g}/{r.points:g} {r.message[:160]}"
                     for r in results)


@pytest.mark.parametrize("unit", UNITS)
def test_solutions_score_full_marks(unit, course):
    report = unit_report(course, "solutions", unit)
    lost = [r for r in report.results if r.status not in (Status.PASSED, Status.PENDING_GPU)]
    assert not lost, f"solutions/{unit} loses points:\n{_table(lost)}"
    assert report.score == report.max_score > 0


@pytest.mark.parametrize("unit", UNITS)
def test_stubs_score_zero_without_crashing(unit, course):
    report = unit_report(course, "exercises", unit)
    # A bad-argument test whose checks the stub already provides passes, and is gated to 0 by the exercise's
    # TODO (validation points count only once the values are right): 0 points, not TODO, is right for it.
    gated = [r for r in report.results if r.validation and r.score == 0 and "gated_by" in r.record]
    wrong = [r for r in report.results
             if (r.status not in (Status.TODO, Status.PENDING_GPU) and r not in gated) or r.score]
    assert not wrong, f"exercises/{unit}: every test should be TODO at 0 points:\n{_table(wrong)}"
    assert all(r.message.startswith("TODO") for r in report.results if r.status is Status.TODO)


@pytest.mark.parametrize("impl", WRONG, ids=lambda k: k.name)
def test_known_wrong_is_rejected(impl: KnownImpl, course):
    """Declared tiers lose points; the exercise's other tiers keep full marks."""
    report = course.report(impl.name)
    for exercise in impl.exercises:
        for tier in CPU_TIERS:
            rs = [r for r in report.results if r.exercise == exercise and r.tier is tier]
            lost = [r for r in rs if r.score < r.max_score and "gated_by" not in r.record]
            if tier.value in impl.rejected_by[exercise]:
                assert rs and lost, f"{impl.name} ({impl.doc}) passes every {exercise} {tier} test:\n{_table(rs)}"
            else:  # a tier not scored while correctness fails (failures.gate) passed its own checks: not lost
                assert not lost, f"{impl.name} should keep full {exercise} {tier} marks:\n{_table(lost)}"


@pytest.mark.parametrize("impl", RIGHT, ids=lambda k: k.name)
def test_known_right_scores_full_marks(impl: KnownImpl, course):
    report = course.report(impl.name)
    lost = [r for r in report.results if r.tier in CPU_TIERS and r.score < r.max_score]
    assert report.results and not lost, f"{impl.name} ({impl.doc}) is correct but loses points:\n{_table(lost)}"


@pytest.mark.parametrize("unit", UNITS)
def test_every_test_rejects_some_known_wrong(unit, course):
    """A test that no known-wrong implementation fails asserts nothing we know of."""
    tests = {r.nodeid for r in unit_report(course, "solutions", unit).results
             if r.tier in CPU_TIERS and r.status is not Status.PENDING_GPU}  # CUDA C++ runs only on a GPU
    rejecting = {r.nodeid for k in WRONG if k.unit == unit
                 for r in course.report(k.name).results if r.score < r.max_score and "gated_by" not in r.record}
    idle = sorted(tests - rejecting)
    assert not idle, f"{unit}: these tests reject no known-wrong implementation; add one:\n  " + "\n  ".join(idle)


def _equivalence_sample() -> list[KnownImpl]:
    """Known-wrong files graded both ways: the first unit's first, the first and last of the unit with the most
    test files (its targets are graded on some of its files only)."""
    files = {u: len(list((REPO_ROOT / "tests" / u).glob("test_*.py"))) for u in UNITS}
    widest = [k for k in WRONG if k.unit == max(UNITS, key=files.get)]
    return [*(k for k in WRONG[:1] if k.unit != widest[0].unit), widest[0], widest[-1]]


@pytest.mark.parametrize("impl", _equivalence_sample(), ids=lambda k: f"{k.name}-as-api-grade")
def test_runner_grades_as_api_grade(impl: KnownImpl, course):
    """The in-process runner gives every test the status and score `make grade` (api.grade) gives it."""
    with tempfile.TemporaryDirectory(prefix="dripstone-known-") as tmp:
        alone = api.grade(known.build_target(impl, Path(tmp)), units=[impl.unit], exercises=impl.exercises)
    runner = course.report(impl.name)
    want = {r.nodeid: (r.status, r.score) for r in alone.results}
    got = {r.nodeid: (r.status, r.score) for r in runner.results}
    differ = [f"  {n}: api.grade {want.get(n)}, runner {got.get(n)}" for n in sorted(want.keys() | got.keys())
              if want.get(n) != got.get(n)]
    assert not differ, (f"{impl.name}: the corpus runner (grader/authoring/corpus.py) grades differently from "
                        "api.grade; something of an earlier target leaks into the next:\n" + "\n".join(differ))


def test_runners_graded_everything_in_process(course):
    """Nothing fell back to one process per target (a slow path meant for crashes and hangs)."""
    again = {u: c for u, c in course.costs.items() if c.regraded}
    assert not again, "the corpus runner left these to api.grade: " + "; ".join(
        f"{u}: {c.regraded}\n{c.runner_log}" for u, c in again.items())


def test_every_unit_has_known_wrong_implementations():
    missing = [u for u in UNITS if not known.known_impls(u, "known_wrong")]
    assert not missing, f"units without tests/<unit>/known_wrong/: {missing}"


def test_grading_test_files_have_unique_names():
    """Units are graded together in one pytest run: two tests/<unit>/test_x.py would collide on import."""
    names = [p.name for p in (REPO_ROOT / "tests").glob("[lc][0-9]*/test_*.py")]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"rename these grading test files to include the unit's topic: {dupes}"
