"""Round 3's class corpora graded in batch, beside honest students: a cheat earns in batch what it earns alone.

grader/THREAT_MODEL.md cites, in each round-3 class's Tests cell, the known-wrong files that attack it (a `.cu`
host-code tamper, a numba host read, atomics, huge default blocks, ranks talking outside the wire, hidden optimizer
state, writes into arguments). The unit self-test grades each of them as `make grade` does
(tests/grader/test_course.py); tests/grader/test_batch_cheats.py grades only the L23 cheat corpus in batch. Here
every class's files are graded in one batch, each built by the self-test's own builder
(grader/authoring/known.py::build_target: the unit's solution with the file appended, a `.cu` replacing one), so
what a file attacks is its own ``REJECTED_BY``. A student holds the k-th file of each unit (units are graded apart,
so one student carries a cheat of each unit: a few sandbox starts for the whole corpus, not one per file); an honest
student holds the solutions of every unit involved. The batch grades the exercises the files attack, nothing else.

Asserted: on every test of the exercises a file attacks, the batch gives exactly the score `make grade` gives the same
file (graded here by the self-test's runner, grader/authoring/corpus.py, at the same ``--max-examples``), and that
grading loses points on each tier the file declares; the honest student scores exactly what `make grade` gives the
solutions. A cheat that scores in batch what it does not alone is a hole in the batch; one that keeps points alone
is a hole in the tests (the self-test names it too).

Slow (110 s wall on this two-core machine when quiet, both cores busy); needs bwrap and root, as test_batch_cheats
does, else it skips saying why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.authoring import corpus, known
from grader.authoring.known import KnownImpl
from grader.core.results import GradeReport, Status
from grader.core.target import REPO_ROOT
from grader.instructor import batch, sandbox
from grader.judge import plugin

THREAT_MODEL = REPO_ROOT / "grader" / "THREAT_MODEL.md"
ROUND = "R3."
CORPUS_FILE = re.compile(r"`(tests/[a-z0-9_]+/known_wrong/[A-Za-z0-9_]+\.(?:py|cu|cpp))`")
MAX_EXAMPLES = 5  # as test_batch_cheats: the classes are caught by boundaries and measurements, not by the 50th example
LIMITS = sandbox.Limits(wall_s=900, call_timeout_s=30, max_examples=MAX_EXAMPLES)
HONEST = "honest_solutions"

pytestmark = pytest.mark.slow


def class_corpora(text: str | None = None) -> dict[str, list[Path]]:
    """Each round-3 class's known-wrong files, as its Tests cell in THREAT_MODEL.md cites them (classes whose
    corpus is tests/grader/cheats/, graded by test_batch_cheats, cite none)."""
    text = THREAT_MODEL.read_text() if text is None else text
    out: dict[str, list[Path]] = {}
    for section in re.split(r"^### ", text, flags=re.M)[1:]:
        name = section.split()[0]
        tests = next((line for line in section.splitlines() if line.startswith("| Tests |")), "")
        files = list(dict.fromkeys(CORPUS_FILE.findall(tests)))
        if name.startswith(ROUND) and files:
            out[name] = [REPO_ROOT / f for f in files]
    return out


CLASSES = class_corpora()
IMPLS = sorted({p: known.read(p) for files in CLASSES.values() for p in files}.values(), key=lambda k: k.name)
UNITS = tuple(sorted({k.unit for k in IMPLS}))
EXERCISES = tuple(sorted({e for k in IMPLS for e in k.exercises}))


def students(impls: list[KnownImpl]) -> dict[str, list[KnownImpl]]:
    """``mix_<k>``: the k-th file of each unit (sorted by name), one unit folder per file."""
    by_unit: dict[str, list[KnownImpl]] = {}
    for impl in impls:
        by_unit.setdefault(impl.unit, []).append(impl)
    most = max(len(v) for v in by_unit.values())
    return {f"mix_{k:02d}": [v[k] for v in by_unit.values() if k < len(v)] for k in range(most)}


STUDENTS = students(IMPLS)
STUDENT_OF = {impl.name: name for name, impls in STUDENTS.items() for impl in impls}


def scores(report: GradeReport, unit: str, exercises: tuple[str, ...]) -> dict[str, float]:
    """Score by the name results.json gives a test, for ``unit``'s ``exercises``, tests pending a GPU left out."""
    return {f"{r.unit} · {r.exercise} · {r.tier} · {r.name}": r.score for r in report.results
            if r.unit == unit and r.exercise in exercises and r.status is not Status.PENDING_GPU}


def batch_scores(out: Path, student: str, unit: str, exercises: tuple[str, ...]) -> dict[str, float]:
    tests = json.loads((out / student / "results.json").read_text())["tests"]  # pending GPU: not in Gradescope's
    return {t["name"]: t["score"] for t in tests
            if t["extra_data"]["unit"] == unit and t["extra_data"]["exercise"] in exercises}


def unit_exercises(unit: str) -> tuple[str, ...]:
    return tuple(sorted({e for k in IMPLS if k.unit == unit for e in k.exercises}))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, bwrap_runtime):
    """The batch (every class file and the honest student, two at a time) and, beside it, `make grade` of the same
    files and of the solutions by the self-test's runner, both at MAX_EXAMPLES."""
    root = tmp_path_factory.mktemp("classes")
    subs, out = root / "submissions", root / "out"
    subs.mkdir()
    for name, impls in STUDENTS.items():
        for impl in impls:
            known.build_target(impl, subs / name)
    for unit in UNITS:
        shutil.copytree(REPO_ROOT / "solutions" / unit, subs / HONEST / unit,
                        ignore=shutil.ignore_patterns("__pycache__"))
    alone = [corpus.Grading.of_known(k) for k in IMPLS]
    alone += [corpus.Grading.of_folder(REPO_ROOT / "solutions", u, unit_exercises(u)) for u in UNITS]
    os.environ[plugin.MAX_EXAMPLES_ENV] = str(MAX_EXAMPLES)  # the runners' (the sandbox sets its own from LIMITS)
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            make_grade = pool.submit(corpus.grade, alone)
            report = batch.run_batch(batch.BatchOptions(subs, out, jobs=2, units=UNITS, exercises=EXERCISES,
                                                        limits=LIMITS))
            run = make_grade.result()
    finally:
        del os.environ[plugin.MAX_EXAMPLES_ENV]
    return {"out": out, "report": report, "alone": run}


def test_every_round_3_class_with_a_known_wrong_corpus_has_three_files_or_more():
    """R3.3 and R3.9 live in tests/grader/cheats/ (test_batch_cheats); every other attack class has a corpus here."""
    assert {"R3.1", "R3.2", "R3.4", "R3.5", "R3.6", "R3.7", "R3.8"} <= set(CLASSES), sorted(CLASSES)
    small = {c: [p.name for p in files] for c, files in CLASSES.items() if len(files) < 3}
    assert not small, f"classes with fewer than three variants: {small}"
    assert all(p.exists() for files in CLASSES.values() for p in files)


def test_the_corpora_are_read_from_each_class_tests_cell():
    text = ("### R3.1 A\n\n| Tests | `tests/grader/test_x.py::t`; `tests/l24_gemm/known_wrong/a.cu`, "
            "`tests/l24_gemm/known_wrong/a.cu`, `tests/l09_collectives/known_wrong/b_c.py` |\n"
            "| Limits | `tests/l20_fault_diagnosis/known_wrong/not_a_test.py` |\n"
            "### R3.3 B\n\n| Tests | `tests/grader/cheats/c.py` |\n### R2.1 C\n\n| Tests | "
            "`tests/l22_memory_coalescing/known_wrong/d.py` |\n")
    assert class_corpora(text) == {"R3.1": [REPO_ROOT / "tests/l24_gemm/known_wrong/a.cu",
                                            REPO_ROOT / "tests/l09_collectives/known_wrong/b_c.py"]}


def test_every_student_is_graded_once_in_one_batch(graded):
    out = graded["out"]
    names = [json.loads(line)["student"] for line in (out / "done.jsonl").read_text().splitlines()]
    assert sorted(names) == sorted([*STUDENTS, HONEST])
    assert not graded["report"].skipped


@pytest.mark.parametrize("impl", IMPLS, ids=lambda k: k.name)
def test_class_cheat_scores_in_batch_what_it_scores_alone(graded, impl: KnownImpl):
    """On every test of the exercises it attacks, exactly `make grade`'s score; each declared tier loses points."""
    alone = scores(graded["alone"].report(impl.name), impl.unit, impl.exercises)
    honest = scores(graded["alone"].report(corpus.Grading.of_folder(
        REPO_ROOT / "solutions", impl.unit, unit_exercises(impl.unit)).key), impl.unit, impl.exercises)
    assert alone, f"{impl.name}: `make grade` reported no test of {impl.exercises}"
    for exercise, tiers in impl.rejected_by.items():
        for tier in tiers:
            mine = [n for n in alone if n.split(" · ")[1:3] == [exercise, tier]]
            assert mine and sum(alone[n] for n in mine) < sum(honest[n] for n in mine), (
                f"{impl.name} ({impl.doc}) keeps every {exercise} {tier} point in `make grade` at --max-examples "
                f"{MAX_EXAMPLES}: {[(n, alone[n]) for n in mine]}")
    got = batch_scores(graded["out"], STUDENT_OF[impl.name], impl.unit, impl.exercises)
    differ = {n: {"batch": got.get(n), "make grade": alone.get(n)} for n in sorted(alone.keys() | got.keys())
              if got.get(n) != alone.get(n)}
    assert not differ, f"{impl.name} ({impl.doc}), student {STUDENT_OF[impl.name]}: batch differs from make grade: " \
                       f"{differ}"


@pytest.mark.parametrize("unit", UNITS)
def test_honest_student_scores_exactly_what_make_grade_gives_the_solutions(graded, unit):
    exercises = unit_exercises(unit)
    alone = scores(graded["alone"].report(corpus.Grading.of_folder(REPO_ROOT / "solutions", unit, exercises).key),
                   unit, exercises)
    got = batch_scores(graded["out"], HONEST, unit, exercises)
    assert alone and got == alone, {n: (got.get(n), alone.get(n)) for n in alone.keys() | got.keys()
                                    if got.get(n) != alone.get(n)}
