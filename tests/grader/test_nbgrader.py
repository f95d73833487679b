"""nbgrader end to end: nbgrader's own CLI on a course we generate, two students, scores checked.

``generate_assignment`` → two submissions (alice: the solutions; bob: classic bugs, one exercise
left as the stub, and three tries at replacing the score function inside the grading kernel) →
``autograde`` → ``generate_feedback`` → ``export``, then ``grader batch --nbgrader COURSE --assignment A``
on the same submissions (grader/NBGRADER.md's command sequence). nbgrader's gradebook database and its
CSV export must hold, per student and exercise, exactly the score our engine gives the same code, partial
credit included; the released notebooks must hold no solution.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader import api
from grader.authoring import known
from grader.core.results import Status
from grader.core.stubs import COMMENT, make_stub
from grader.core.target import REPO_ROOT
from grader.instructor import nbgrader_course
from grader.instructor.nbgrader_course import CPU_TIERS

gradebook_api = pytest.importorskip("nbgrader.api", reason="nbgrader: pip install -r requirements-instructor.txt")

pytestmark = pytest.mark.slow

UNITS = ("l23_online_softmax", "l27_memory_ledger")  # a kernel unit and a ledger unit
ASSIGNMENT = "dripstone"
STUDENTS = ("alice", "bob")
# bob's code: the solution with known-wrong overrides appended (a bug that costs one tier of an
# exercise, a bug that costs some tests of a tier) and one exercise left as nbgrader's stub.
BOB_BUGS = {
    "l23_online_softmax": ("fused_reads_twice", "ledger_no_validation"),
    "l27_memory_ledger": ("kv_factor_counted_twice",),
}
# bob also tries to raise his scores inside the grading kernel: with a code cell of his own in L23,
# and with an L27 answer cell stripped of its %%writefile line (so it would run in the kernel).
TAMPER = "import grader.instructor.nbgrader_course as _g\n\n_g.score_exercise = lambda *a, **k: k['points']\n"
BOB_APPENDS = {
    "l23_online_softmax": {
        "softmax.py": "\n\ndef merge_online_states(a, b):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    },
    "l27_memory_ledger": {"ledger.py": "\n\n" + TAMPER},
}
BOB_HEADERLESS = {("l27_memory_ledger", "ledger.py")}
BOB_ADDED_CELL = {"l23_online_softmax": TAMPER}
# ... and hands in a `grader` package beside his notebooks, for the kernel to import instead of ours
# (the kernel's working directory: IPython puts it after PYTHONPATH, the config keeps it off sys.path).
BOB_FILES = {
    "grader/__init__.py": "",
    "grader/instructor/__init__.py": "",
    "grader/instructor/nbgrader_course.py": "def score_exercise(*a, points, **k):\n    return points\n",
}

Scores = dict[tuple[str, str], float]  # (unit, exercise) -> points


@dataclass(frozen=True)
class Flow:
    """What one run of the whole nbgrader workflow left behind."""

    course: Path
    points: Scores  # the autograder cells' points, from the generated course
    expected: dict[str, Scores]  # per student: what api.grade gives the same code
    timings: dict[str, float]
    batch_out: Path  # `grader batch --nbgrader COURSE --assignment A` on the same submissions
    batch: subprocess.CompletedProcess[str]


def student_code(student: str, unit: str) -> dict[str, str]:
    """File name -> text of each module of the unit, as the student wrote it."""
    code = {p.name: p.read_text() for p in sorted((REPO_ROOT / "solutions" / unit).iterdir()) if p.suffix in COMMENT}
    if student == "alice":
        return code
    for impl in known.known_impls(unit, "known_wrong"):
        if impl.path.stem in BOB_BUGS[unit]:
            code[f"{impl.module}.py"] += "\n\n" + impl.path.read_text()
    for name, text in BOB_APPENDS[unit].items():
        code[name] += text
    return code


def engine_scores(student: str, root: Path) -> Scores:
    """Grade the student's code with the engine directly: per exercise, the CPU tiers' score."""
    for unit in UNITS:
        for name, text in student_code(student, unit).items():
            (root / unit).mkdir(parents=True, exist_ok=True)
            (root / unit / name).write_text(text)
    report = api.grade(root, units=UNITS)
    out: Scores = {}
    for r in report.results:
        if r.tier in CPU_TIERS and r.status is not Status.PENDING_GPU:  # what this machine can grade
            out[(r.unit, r.exercise)] = out.get((r.unit, r.exercise), 0.0) + r.score
    return out


def answer_source(student: str, unit: str, name: str, text: str) -> str:
    return text if student == "bob" and (unit, name) in BOB_HEADERLESS else f"%%writefile {unit}/{name}\n{text}"


def submit(course: Path, student: str) -> None:
    """The released notebooks with the student's code in the answer cells, under submitted/."""
    dest = course / "submitted" / student / ASSIGNMENT
    dest.mkdir(parents=True)
    for unit in UNITS:
        nb = json.loads((course / "release" / ASSIGNMENT / f"{unit}.ipynb").read_text())
        code = student_code(student, unit)
        for cell in nb["cells"]:
            for name, text in code.items():
                if cell["metadata"]["nbgrader"]["grade_id"] == f"module-{name.replace('.', '-')}":
                    cell["source"] = answer_source(student, unit, name, text)
        if student == "bob" and unit in BOB_ADDED_CELL:
            added = {"cell_type": "code", "id": "bob-added", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": BOB_ADDED_CELL[unit]}  # fmt: skip
            first_grading = next(i for i, c in enumerate(nb["cells"]) if c["metadata"]["nbgrader"].get("grade"))
            nb["cells"].insert(first_grading, added)
        (dest / f"{unit}.ipynb").write_text(json.dumps(nb))
    for name, text in BOB_FILES.items() if student == "bob" else ():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text)


def nbgrader(course: Path, *args: str) -> float:
    """Run one nbgrader command in the course folder; its wall time in seconds."""
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(course / ".jupyter"),  # no user-level nbgrader config
        "PATH": os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", ""))),  # its `alembic`
    }
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return round(time.perf_counter() - start, 1)


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> Flow:
    tmp = tmp_path_factory.mktemp("nbgrader")
    course, timings = tmp / "course", {}
    start = time.perf_counter()
    made = nbgrader_course.write_course(course, units=UNITS, assignment=ASSIGNMENT)
    timings["nbgrader-course"] = round(time.perf_counter() - start, 1)
    timings["generate_assignment"] = nbgrader(course, "generate_assignment", ASSIGNMENT)
    for student in STUDENTS:
        submit(course, student)
    with ThreadPoolExecutor(max_workers=1) as pool:  # the engine's own grades, beside nbgrader's
        futures = {s: pool.submit(engine_scores, s, tmp / "engine" / s) for s in STUDENTS}
        timings["autograde"] = nbgrader(course, "autograde", ASSIGNMENT)
        expected = {s: f.result() for s, f in futures.items()}
    timings["generate_feedback"] = nbgrader(course, "generate_feedback", ASSIGNMENT)
    timings["export"] = nbgrader(course, "export")
    start = time.perf_counter()
    batch = subprocess.run([sys.executable, "-m", "grader", "batch", "--nbgrader", str(course), "--assignment",
                            ASSIGNMENT, "--out", str(tmp / "batch"), "--jobs", "2", *(f"-u{u}" for u in UNITS)],
                           cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True,
                           text=True, timeout=1800)
    timings["batch --nbgrader"] = round(time.perf_counter() - start, 1)
    print(f"\nnbgrader flow timings (s): {timings}")
    return Flow(course, {(e.unit, e.name): e.points for e in made.exercises}, expected, timings, tmp / "batch", batch)


def solution_lines(unit: str) -> list[str]:
    """Lines only the solution regions of the unit's Python modules hold (not the stub around them)."""
    lines = []
    for path in (REPO_ROOT / "solutions" / unit).glob("*.py"):
        text, stub = path.read_text(), make_stub(path.read_text())
        for region in text.split("### BEGIN SOLUTION")[1:]:
            body = region.split("### END SOLUTION")[0].splitlines()
            lines += [ln.strip() for ln in body if len(ln.strip()) > 20 and ln.strip() not in stub]
    return lines


def test_release_holds_no_solution(flow: Flow):
    for unit in UNITS:
        release = json.loads((flow.course / "release" / ASSIGNMENT / f"{unit}.ipynb").read_text())
        answers = "\n".join("".join(c["source"]) for c in release["cells"] if c["metadata"]["nbgrader"]["solution"])
        assert "raise NotImplementedError()" in answers and "BEGIN SOLUTION" not in answers
        leaked = [ln for ln in solution_lines(unit) if ln in answers]
        for path in (REPO_ROOT / "solutions" / unit).glob("*.cu"):  # nbgrader's stub is Python: ours stays
            assert make_stub(path.read_text(), suffix=".cu") in answers, f"{path.name}: the stub is not released"
        assert solution_lines(unit) and not leaked, f"{unit}: the release shows solution lines {leaked[:3]}"


def test_alice_full_and_bob_partial_by_the_engine(flow: Flow):
    """The scenario is meaningful: full marks, a partial exercise and a zero exercise."""
    assert flow.expected["alice"] == flow.points
    bob = flow.expected["bob"]
    assert any(0 < bob[k] < flow.points[k] for k in bob), f"no partial credit in {bob}"
    assert any(bob[k] == 0 for k in bob) and sum(bob.values()) > 0, bob


def test_gradebook_holds_the_engine_scores(flow: Flow):
    with gradebook_api.Gradebook(f"sqlite:///{flow.course / 'gradebook.db'}") as gb:
        for student in STUDENTS:
            got = {(u, e): gb.find_grade(e, u, ASSIGNMENT, student).score for u, e in flow.points}
            assert got == pytest.approx(flow.expected[student]), student
            assert gb.find_submission(ASSIGNMENT, student).score == pytest.approx(sum(got.values()))
        cells = {(u, e): gb.find_grade_cell(e, u, ASSIGNMENT).max_score for u, e in flow.points}
        assert cells == flow.points


def test_csv_export_holds_the_engine_scores(flow: Flow):
    with (flow.course / "grades.csv").open(newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(STUDENTS)
    for student, row in rows.items():
        want = flow.expected[student]
        assert {k: float(row[f"{k[0]}/{k[1]}"]) for k in want} == pytest.approx(want)
        assert float(row["score"]) == pytest.approx(sum(want.values()))
        assert float(row["max_score"]) == pytest.approx(sum(flow.points.values()))


def test_csv_exercise_columns_follow_the_notebooks(flow: Flow):
    with (flow.course / "grades.csv").open(newline="") as f:
        header = next(csv.reader(f))
    exercise_columns = [c for c in header if "/" in c]
    assert exercise_columns == [f"{u}/{e}" for u, e in flow.points], "one column per exercise, in notebook order"


def test_feedback_is_generated_for_each_student(flow: Flow):
    for student in STUDENTS:
        for unit in UNITS:
            html = flow.course / "feedback" / student / ASSIGNMENT / f"{unit}.html"
            assert html.is_file() and f"{unit} · " in html.read_text(), f"no feedback at {html}"


def test_batch_reads_the_course_and_agrees_with_the_engine(flow: Flow):
    """`batch --nbgrader` takes each answer cell at the path the course gives it (bob's headerless cell
    included), leaves his added cell and handed-in files out, and grades each student in the sandbox."""
    assert flow.batch.returncode == 0, flow.batch.stdout[-3000:] + flow.batch.stderr[-3000:]
    done = [json.loads(line) for line in (flow.batch_out / "done.jsonl").read_text().splitlines()]
    assert sorted(d["student"] for d in done) == sorted(STUDENTS)
    for d in done:
        want = flow.expected[d["student"]]
        got = {u: d["units"][u] for u in UNITS}
        assert got == pytest.approx({u: sum(v for (unit, _), v in want.items() if unit == u) for u in UNITS})


def test_folder_submissions_become_the_courses_notebooks_and_read_back_the_same(flow: Flow, tmp_path):
    """Issue 31: folder submissions into nbgrader needed glue nobody shipped. `grader nbgrader-submit` writes the
    released notebooks with carol's files in their answer cells (a file she did not hand in keeps the stub), and
    what batch reads back from them is her files; nothing already submitted is overwritten."""
    import shutil

    from grader.instructor import nbgrader_submissions

    course = tmp_path / "course"
    shutil.copytree(flow.course, course, ignore=shutil.ignore_patterns("submitted", "autograded", "feedback"))
    folder = tmp_path / "folders"
    mine = {}
    for unit in UNITS:
        code = student_code("alice", unit)
        first = sorted(code)[0]  # carol hands in one module per unit; the others keep the released stub
        (folder / "carol" / unit).mkdir(parents=True)
        (folder / "carol" / unit / first).write_text(code[first] + "\n# carol\n")
        mine[f"{unit}/{first}"] = code[first] + "\n# carol\n"
    proc = subprocess.run([sys.executable, "-m", "grader", "nbgrader-submit", str(folder), "--course", str(course),
                           "--assignment", ASSIGNMENT], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 0 and "nbgrader autograde" in proc.stdout, proc.stdout + proc.stderr
    assert sorted(p.name for p in (course / "submitted" / "carol" / ASSIGNMENT).iterdir()) == \
        sorted(f"{u}.ipynb" for u in UNITS)
    back = nbgrader_submissions.extract(course, ASSIGNMENT, tmp_path / "back")
    for rel, text in mine.items():
        assert (back / "carol" / rel).read_text() == text, rel
    for unit in UNITS:
        for path in (back / "carol" / unit).iterdir():
            if f"{unit}/{path.name}" not in mine:
                assert "# carol" not in path.read_text() and "### BEGIN SOLUTION" not in path.read_text()
    with pytest.raises(nbgrader_submissions.CourseError, match="exists"):
        nbgrader_submissions.to_notebooks(folder, course, ASSIGNMENT)
