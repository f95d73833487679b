"""The course proves itself: solutions at full marks, stubs at 0, known-wrong rejected, known-right accepted.

Each grading run is a child pytest process (as `make grade` runs it); the runs of a unit share a
session cache and run two at a time (the machines have two cores).
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader import api
from grader.authoring import known
from grader.authoring.known import KnownImpl
from grader.grading.results import GradeReport, Status, TestResult, Tier
from grader.grading.target import REPO_ROOT

UNITS = api.all_units()
WRONG = [k for u in UNITS for k in known.known_impls(u, "known_wrong")]
RIGHT = [k for u in UNITS for k in known.known_impls(u, "known_right")]
CPU_TIERS = (Tier.CORRECTNESS, Tier.EFFICIENCY)

pytestmark = pytest.mark.slow


def _grade_known(impl: KnownImpl) -> GradeReport:
    with tempfile.TemporaryDirectory(prefix="dripstone-known-") as tmp:
        return api.grade(known.build_target(impl, Path(tmp)), units=[impl.unit], exercises=impl.exercises)


@functools.cache
def unit_reports(unit: str) -> dict[str, GradeReport]:
    """Grade every known implementation of a unit once, two at a time (the machines have 2 cores)."""
    impls = [k for k in WRONG + RIGHT if k.unit == unit]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip((k.name for k in impls), pool.map(_grade_known, impls), strict=True))


@functools.cache
def _graded(folder: str, units: tuple[str, ...]) -> GradeReport:
    """solutions/ or exercises/ graded on the selected units in one run (one interpreter start, not one per unit)."""
    return api.grade(REPO_ROOT / folder, units=units)


@pytest.fixture(scope="session")
def selected_units(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The units this session's tests ask about (all of them under `make test`)."""
    asked = {item.callspec.params.get("unit") for item in request.session.items if hasattr(item, "callspec")}
    return tuple(u for u in UNITS if u in asked)


def graded(folder: str, unit: str, selected: tuple[str, ...]) -> GradeReport:
    report = _graded(folder, selected or (unit,))
    return GradeReport(report.target, tuple(r for r in report.results if r.unit == unit))


def _table(results: Iterable[TestResult]) -> str:
    return "\n".join(f"  {r.exercise}/{r.tier}/{r.name}: {r.status} {r.score:g}/{r.points:g} {r.message[:160]}"
                     for r in results)


@pytest.mark.parametrize("unit", UNITS)
def test_solutions_score_full_marks(unit, selected_units):
    report = graded("solutions", unit, selected_units)
    lost = [r for r in report.results if r.status not in (Status.PASSED, Status.PENDING_GPU)]
    assert not lost, f"solutions/{unit} loses points:\n{_table(lost)}"
    assert report.score == report.max_score > 0


@pytest.mark.parametrize("unit", UNITS)
def test_stubs_score_zero_without_crashing(unit, selected_units):
    report = graded("exercises", unit, selected_units)
    wrong = [r for r in report.results if r.status not in (Status.TODO, Status.PENDING_GPU) or r.score]
    assert not wrong, f"exercises/{unit}: every test should be TODO at 0 points:\n{_table(wrong)}"
    assert all(r.message.startswith("TODO") for r in report.results if r.status is Status.TODO)


@pytest.mark.parametrize("impl", WRONG, ids=lambda k: k.name)
def test_known_wrong_is_rejected(impl: KnownImpl):
    """Declared tiers lose points; the exercise's other tiers keep full marks."""
    report = unit_reports(impl.unit)[impl.name]
    for exercise in impl.exercises:
        for tier in CPU_TIERS:
            rs = [r for r in report.results if r.exercise == exercise and r.tier is tier]
            lost = [r for r in rs if r.score < r.max_score]
            if tier.value in impl.rejected_by[exercise]:
                assert rs and lost, f"{impl.name} ({impl.doc}) passes every {exercise} {tier} test:\n{_table(rs)}"
            else:
                assert not lost, f"{impl.name} should keep full {exercise} {tier} marks:\n{_table(lost)}"


@pytest.mark.parametrize("impl", RIGHT, ids=lambda k: k.name)
def test_known_right_scores_full_marks(impl: KnownImpl):
    report = unit_reports(impl.unit)[impl.name]
    lost = [r for r in report.results if r.tier in CPU_TIERS and r.score < r.max_score]
    assert report.results and not lost, f"{impl.name} ({impl.doc}) is correct but loses points:\n{_table(lost)}"


@pytest.mark.parametrize("unit", UNITS)
def test_every_test_rejects_some_known_wrong(unit, selected_units):
    """A test that no known-wrong implementation fails asserts nothing we know of."""
    tests = {r.nodeid for r in graded("solutions", unit, selected_units).results
             if r.tier in CPU_TIERS and r.status is not Status.PENDING_GPU}  # CUDA C++ runs only on a GPU
    rejecting = {r.nodeid for k in WRONG if k.unit == unit
                 for r in unit_reports(unit)[k.name].results if r.score < r.max_score}
    idle = sorted(tests - rejecting)
    assert not idle, f"{unit}: these tests reject no known-wrong implementation; add one:\n  " + "\n  ".join(idle)


def test_every_unit_has_known_wrong_implementations():
    missing = [u for u in UNITS if not known.known_impls(u, "known_wrong")]
    assert not missing, f"units without tests/<unit>/known_wrong/: {missing}"


def test_grading_test_files_have_unique_names():
    """Units are graded together in one pytest run: two tests/<unit>/test_x.py would collide on import."""
    names = [p.name for p in (REPO_ROOT / "tests").glob("[lc][0-9]*/test_*.py")]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"rename these grading test files to include the unit's topic: {dupes}"
