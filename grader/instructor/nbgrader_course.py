"""An nbgrader course built from ``solutions/``, and the grading cells' link back to the engine.

``python -m grader nbgrader-course DIR`` writes a course nbgrader's own commands run on unchanged::

    DIR/nbgrader_config.py                      course id, kernel, timeouts, where the engine lives
    DIR/source/<assignment>/<unit>.ipynb        one notebook per unit

A unit's notebook holds, in order: the unit's README; a read-only setup cell; one answer cell per
module, ``%%writefile <unit>/<module>.py`` followed by the solution, whose regions between nbgrader's
own ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers ``generate_assignment`` clears; and one
locked autograder cell per exercise, worth the points of that exercise's tests in the graded tiers
that this machine can run (build the course on the kind of machine that will autograde it).

An autograder cell calls :func:`score_exercise`, which grades the unit's saved modules with the
engine (one child pytest process per unit and code version, cached) and prints what each test found.
The cell's value is the exercise's score: nbgrader records a graded cell whose result is a number
between 0 and its points as partial credit. Nothing it does may reach stderr, since nbgrader zeroes a
cell that writes there.

The course's config also loads two nbgrader plugins of ours: the CSV export with a column per
exercise (grader/instructor/nbgrader_export.py) and an autograde step that lets the grading kernel run only the
course's own cells (grader/instructor/nbgrader_sanitize.py).

This module imports neither nbgrader nor torch: kernels import it in every autograder cell.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader import api
from grader.core import stubs
from grader.core import timeout as call_limit
from grader.core.results import GradeReport, Status, Tier
from grader.core.target import REPO_ROOT, tree_digest

SOLUTIONS = REPO_ROOT / "solutions"
CPU_TIERS = (Tier.CORRECTNESS, Tier.EFFICIENCY)
NBGRADER_SCHEMA = 3
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
CELL_TIMEOUT_S = 900  # the first autograder cell of a notebook grades the whole unit
# The engine's own limit on that run, inside the cell's: a hang is stopped by the engine (its test fails, the rest
# is graded: each learner call has the per-call limit of make grade), never by nbgrader's cell timeout.
UNIT_TIMEOUT_S = CELL_TIMEOUT_S - 60


@dataclass(frozen=True)
class Exercise:
    """One autograder cell: an exercise of a unit and its points in the graded tiers."""

    unit: str
    name: str
    points: float


@dataclass(frozen=True)
class Course:
    """What :func:`write_course` wrote."""

    root: Path
    assignment: str
    notebooks: tuple[Path, ...]
    exercises: tuple[Exercise, ...]


# ---------------------------------------------------------------------------------------------
# Points: what the engine grades on this machine, proven on the solutions
# ---------------------------------------------------------------------------------------------


def exercise_points(unit: str, tiers: Sequence[Tier] = CPU_TIERS) -> list[Exercise]:
    """The unit's exercises, in test order, each worth its gradable tests' points in ``tiers``.

    The solutions are graded here: tests that wait for a GPU this machine lacks are left out (build
    the course on the kind of machine that will autograde it), and a solution that loses points
    stops the build, since a course whose reference scores less than full marks is broken.
    """
    report = api.grade(SOLUTIONS, units=[unit])
    lost = [f"{r.exercise} {r.name}: {r.status}" for r in report.results
            if r.tier in tiers and r.status not in (Status.PASSED, Status.PENDING_GPU)]  # fmt: skip
    if lost:
        raise api.GraderError(f"solutions/{unit} loses points on this machine: " + "; ".join(lost))
    points: dict[str, float] = {}
    for r in report.results:
        if r.tier in tiers:
            points[r.exercise] = points.get(r.exercise, 0.0) + r.max_score
    return [Exercise(unit, name, pts) for name, pts in points.items() if pts > 0]


# ---------------------------------------------------------------------------------------------
# Notebooks (nbformat 4 JSON, written with the json module: no nbgrader needed to build a course)
# ---------------------------------------------------------------------------------------------


def _cell(kind: str, source: str, grade_id: str, *, solution: bool = False, points: float | None = None) -> dict:
    meta = {
        "grade": points is not None,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": NBGRADER_SCHEMA,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    cell: dict = {"cell_type": kind, "id": grade_id, "metadata": {"nbgrader": meta}, "source": source}
    if kind == "code":
        cell |= {"execution_count": None, "outputs": []}
    return cell


def _intro(unit: str, modules: list[str]) -> str:
    readme = SOLUTIONS / unit / "README.md"
    text = readme.read_text() if readme.is_file() else f"# {unit}\n"
    return text.rstrip() + (
        "\n\n## How this notebook is graded\n\n"
        f"Write your code in the cells that start with `%%writefile` ({', '.join(modules)}): running such a cell "
        "saves it as a module; it does not run it. Each autograder cell below grades one exercise with the "
        "Dripstone engine on the saved modules and prints what each test found; its value is your score for "
        "that exercise (partial credit per test). Run the code cells again after every edit, then the "
        "autograder cells.\n"
    )


def _setup_source(unit: str) -> str:
    return (
        f"# Setup (read-only): the %%writefile cells below save your modules into ./{unit}/\n"
        f"import os\n\nos.makedirs({unit!r}, exist_ok=True)\n"
    )


def _grading_source(ex: Exercise, tiers: Sequence[Tier]) -> str:
    tier_names = tuple(str(t) for t in tiers)
    return (
        f"# Autograder (read-only): {ex.unit} · {ex.name}, {' + '.join(tier_names)} tiers, {ex.points:g} points.\n"
        "# Run the %%writefile cells first: this cell grades the saved modules; its value is your score.\n"
        "from grader.instructor.nbgrader_course import score_exercise\n\n"
        f"score_exercise({ex.unit!r}, {ex.name!r}, points={ex.points!r}, tiers={tier_names!r})"
    )


# nbgrader replaces a whole solution cell that has no solution region by its (Python) stub; this
# empty region, which the C preprocessor skips, is what it replaces in a C/C++/CUDA cell instead.
CPP_REGION = "#if 0  // nbgrader's solution markers: generate_assignment rewrites these lines only\n{}\n{}\n#endif\n"


def _answer_text(path: Path) -> str:
    """A module as its answer cell holds it in the source notebook.

    Python keeps its solution regions: nbgrader's markers are ours, generate_assignment clears them.
    nbgrader's stub is Python, so other languages (CUDA C++) hold the stub ``grader stubs`` writes.
    """
    text = path.read_text()
    if path.suffix == ".py":
        return text
    return stubs.make_stub(text, suffix=path.suffix, name=str(path)) + CPP_REGION.format(stubs.BEGIN, stubs.END)


def unit_notebook(unit: str, exercises: Sequence[Exercise], tiers: Sequence[Tier] = CPU_TIERS) -> dict:
    """The source notebook of one unit (solutions included; ``generate_assignment`` clears them)."""
    modules = sorted(p for p in (SOLUTIONS / unit).iterdir() if p.suffix in stubs.COMMENT)
    if not modules:
        raise api.GraderError(f"solutions/{unit} has no module to put in a notebook")
    cells = [
        _cell("markdown", _intro(unit, [m.name for m in modules]), "dripstone-intro"),
        _cell("code", _setup_source(unit), "dripstone-setup"),
    ]
    cells += [
        _cell(
            "code",
            f"%%writefile {unit}/{m.name}\n{_answer_text(m)}",
            f"module-{m.name.replace('.', '-')}",
            solution=True,
        )
        for m in modules
    ]
    cells.append(_cell("markdown", "## Autograder\n", "dripstone-autograder"))
    cells += [_cell("code", _grading_source(ex, tiers), ex.name, points=ex.points) for ex in exercises]
    return {
        "cells": cells,
        "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


NBGRADER_CONFIG = '''\
"""nbgrader configuration of a Dripstone course (written by `python -m grader nbgrader-course`)."""

import os
import sys

c = get_config()  # noqa: F821 - nbgrader defines it

DRIPSTONE_ROOT = {root!r}  # the repository whose engine grades the notebooks
sys.path.insert(0, DRIPSTONE_ROOT)  # for the export plugin below
# Kernels nbgrader starts inherit this: the autograder cells import the engine from there.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (DRIPSTONE_ROOT, os.environ.get("PYTHONPATH")) if p)
# ... and nothing from their working directory, the submission's folder (IPython would put it after
# the standard library and PYTHONPATH; this keeps it off the import path altogether).
os.environ["PYTHONSAFEPATH"] = "1"

c.CourseDirectory.course_id = {course_id!r}
c.ExecutePreprocessor.kernel_name = "python3"  # the notebooks' kernel: the Python nbgrader runs in
c.ExecutePreprocessor.timeout = {timeout}  # seconds per cell: the first autograder cell grades the unit
# `nbgrader export`: nbgrader's CSV columns, then one column of points per exercise.
c.ExportApp.plugin_class = "grader.instructor.nbgrader_export.ExerciseCsvExportPlugin"
# `nbgrader autograde`: only the course's own cells run in the grading kernel (added cells do not).
from nbgrader.converters import Autograde  # noqa: E402

SANITIZE = Autograde.class_traits()["sanitize_preprocessors"].default()
c.Autograde.sanitize_preprocessors = [*SANITIZE, "grader.instructor.nbgrader_sanitize.RunOnlyCourseCells"]
'''


def write_course(
    root: Path,
    *,
    units: Sequence[str] = (),
    assignment: str = "dripstone",
    course_id: str = "dripstone",
    tiers: Sequence[Tier] = CPU_TIERS,
) -> Course:
    """Write ``nbgrader_config.py`` and ``source/<assignment>/<unit>.ipynb`` for each unit."""
    root = Path(root).resolve()
    source = root / "source" / assignment
    source.mkdir(parents=True, exist_ok=True)
    config = NBGRADER_CONFIG.format(root=str(REPO_ROOT), course_id=course_id, timeout=CELL_TIMEOUT_S)
    (root / "nbgrader_config.py").write_text(config)
    notebooks, exercises = [], []
    for unit in api.resolve_units(units):
        unit_exercises = exercise_points(unit, tiers)
        path = source / f"{unit}.ipynb"
        path.write_text(json.dumps(unit_notebook(unit, unit_exercises, tiers), indent=1, ensure_ascii=False) + "\n")
        notebooks.append(path)
        exercises += unit_exercises
    return Course(root, assignment, tuple(notebooks), tuple(exercises))


# ---------------------------------------------------------------------------------------------
# Inside the notebook: an autograder cell's score
# ---------------------------------------------------------------------------------------------

_REPORTS: dict[tuple[str, str], GradeReport | api.GraderError] = {}


PYCACHE = re.compile(r"(^|/)__pycache__/")


def _code_digest(folder: Path) -> str:
    """A digest of every file under ``folder``: grade again when the learner's code changed."""
    return tree_digest(folder, PYCACHE)


def unit_report(unit: str, target: Path) -> GradeReport:
    """The engine's report on ``target/<unit>``, graded once per version of the code."""
    key = (unit, _code_digest(target / unit))
    if key not in _REPORTS:
        try:  # every path that runs learner code has the per-call limit; the whole run ends before the cell's
            _REPORTS[key] = api.grade(target, units=[unit], call_timeout=call_limit.DEFAULT_S,
                                      timeout=UNIT_TIMEOUT_S)
        except api.GraderError as exc:  # once per version of the code, not once per cell
            _REPORTS[key] = exc
    found = _REPORTS[key]
    if isinstance(found, api.GraderError):
        raise found
    return found


def _warning_to_stdout(message, category, filename, lineno, file=None, line=None) -> None:
    print(warnings.formatwarning(message, category, filename, lineno, line), end="")


@contextlib.contextmanager
def _stderr_to_stdout() -> Iterator[None]:
    """nbgrader zeroes a cell that writes to stderr: send warnings and stray writes to stdout."""
    with contextlib.redirect_stderr(sys.stdout), warnings.catch_warnings():
        warnings.showwarning = _warning_to_stdout
        yield


def _print_results(report: GradeReport, exercise: str, tiers: Sequence[Tier]) -> None:
    for r in (r for r in report.results if r.exercise == exercise and r.tier in tiers):
        print(f"{r.status.value:>8}  {r.score:g}/{r.points:g}  {r.tier}  {r.name}")
        for line in (r.message, r.hint and f"Hint: {r.hint}"):
            if line:
                print(f"          {line.splitlines()[0][:300]}")


def exercise_score(report: GradeReport, exercise: str, points: float, tiers: Sequence[Tier]) -> float:
    """The exercise's score in ``tiers``; GraderError when it cannot be decided on this machine."""
    rs = [r for r in report.results if r.exercise == exercise and r.tier in tiers]
    errors = [f"{r.name}: {r.message}" for r in rs if r.status is Status.ERROR]
    if errors:
        raise api.GraderError(f"{exercise}: the grader could not run " + "; ".join(errors))
    graded = [r for r in rs if r.status is not Status.PENDING_GPU]
    total = sum(r.points for r in graded)
    if abs(total - points) > 1e-9:
        pending = sum(r.status is Status.PENDING_GPU for r in rs)
        why = f"{pending} of its tests need a GPU" if pending else "the tests or this machine differ from the course's"
        raise api.GraderError(
            f"{exercise}: {total:g} points can be graded here, the notebook gives {points:g} ({why}): autograde "
            "on the kind of machine that built the course, or rebuild it (python -m grader nbgrader-course)"
        )
    return round(sum(r.score for r in graded), 6)


def score_exercise(
    unit: str, exercise: str, *, points: float, tiers: Sequence[str] = tuple(CPU_TIERS), target: Path | None = None
) -> float:
    """Grade one exercise of the modules saved beside the notebook; print the tests, return the score."""
    chosen = tuple(Tier(t) for t in tiers)
    with _stderr_to_stdout():
        report = unit_report(unit, Path(target or Path.cwd()).resolve())
        _print_results(report, exercise, chosen)
        score = exercise_score(report, exercise, points, chosen)
    print(f"{unit} · {exercise}: {score:g} / {points:g}")
    return score
