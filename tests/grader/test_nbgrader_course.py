"""The nbgrader course's parts without nbgrader: notebooks, an autograder cell's score, stderr, cache.

tests/grader/test_nbgrader.py runs the whole workflow with nbgrader's own CLI (slow).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

from grader import api
from grader.core import timeout as call_limit
from grader.core.results import GradeReport, Status, TestResult, Tier
from grader.core.stubs import make_stub
from grader.instructor import nbgrader_course
from grader.instructor.nbgrader_course import Exercise, exercise_score, score_exercise, unit_notebook

UNIT = "l23_online_softmax"


def result(exercise: str, tier: Tier, points: float, status: Status, score: float | None = None) -> TestResult:
    score = points if score is None and status is Status.PASSED else (score or 0.0)
    return TestResult(nodeid=f"tests/{UNIT}/t.py::test_{exercise}_{tier}_{points}", unit=UNIT, exercise=exercise,
                      tier=tier, points=points, status=status, score=score)  # fmt: skip


REPORT = GradeReport(
    target="t",
    results=(
        result("f", Tier.CORRECTNESS, 4, Status.PASSED),
        result("f", Tier.CORRECTNESS, 2, Status.FAILED),
        result("f", Tier.EFFICIENCY, 3, Status.PASSED),
        result("f", Tier.GPU_PERF, 3, Status.PENDING_GPU),
        result("g", Tier.CORRECTNESS, 2, Status.TODO),
        result("h", Tier.CORRECTNESS, 3, Status.PENDING_GPU),
        result("h", Tier.EFFICIENCY, 1, Status.PASSED),
        result("e", Tier.CORRECTNESS, 1, Status.ERROR),
    ),
)
CPU = nbgrader_course.CPU_TIERS


def test_score_is_partial_credit_over_the_graded_tiers():
    assert exercise_score(REPORT, "f", 9, CPU) == 7  # 4 + 3 of 9; gpu_perf is not a graded tier here
    assert exercise_score(REPORT, "f", 6, (Tier.CORRECTNESS,)) == 4
    assert exercise_score(REPORT, "g", 2, CPU) == 0


def test_points_that_cannot_be_graded_here_stop_the_cell():
    with pytest.raises(api.GraderError, match="1 of its tests need a GPU"):
        exercise_score(REPORT, "h", 4, CPU)  # a course built on a GPU machine, autograded without one
    assert exercise_score(REPORT, "h", 1, CPU) == 1  # built and autograded without a GPU
    with pytest.raises(api.GraderError, match="rebuild it"):
        exercise_score(REPORT, "f", 10, CPU)  # the tests' points changed since the course was built
    with pytest.raises(api.GraderError, match="could not run"):
        exercise_score(REPORT, "e", 1, CPU)


def test_notebook_cells_carry_nbgrader_metadata():
    exercises = [Exercise(UNIT, "softmax_fused", 13.0), Exercise(UNIT, "merge_online_states", 6.0)]
    nb = unit_notebook(UNIT, exercises)
    meta = [c["metadata"]["nbgrader"] for c in nb["cells"]]
    ids = [m["grade_id"] for m in meta]
    assert len(ids) == len(set(ids)) and nb["metadata"]["kernelspec"]["name"] == "python3"
    graded = [(m["grade_id"], m["points"]) for m in meta if m["grade"]]
    assert graded == [("softmax_fused", 13.0), ("merge_online_states", 6.0)]
    assert all(m["locked"] and not m["solution"] for m in meta if m["grade"])
    answers = {c["source"].splitlines()[0]: c["source"] for c in nb["cells"] if c["metadata"]["nbgrader"]["solution"]}
    assert f"%%writefile {UNIT}/softmax.py" in answers
    assert "### BEGIN SOLUTION" in answers[f"%%writefile {UNIT}/softmax.py"]  # nbgrader clears it
    cu = (nbgrader_course.SOLUTIONS / UNIT / "cuda_reduce.cu").read_text()
    assert make_stub(cu, suffix=".cu") in answers[f"%%writefile {UNIT}/cuda_reduce.cu"]  # never the solution
    grading = [c["source"] for c in nb["cells"] if c["metadata"]["nbgrader"]["grade"]]
    assert "score_exercise('l23_online_softmax', 'softmax_fused', points=13.0" in grading[0]


@pytest.mark.slow  # importing jsonschema's format checkers costs seconds
def test_notebook_is_valid_nbformat():
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.reads(json.dumps(unit_notebook(UNIT, [Exercise(UNIT, "f", 1.0)])), as_version=4))


def test_cell_writes_nothing_to_stderr_and_grades_each_code_version_once(tmp_path, monkeypatch, capsys):
    calls: list[Path] = []

    def fake_grade(target: Path, *, units, call_timeout, timeout):
        # issue 31: the cells called the engine without the per-call limit (an endless loop ran to nbgrader's cell
        # timeout, once per cell); the whole run ends before the cell's own timeout
        assert call_timeout == call_limit.DEFAULT_S and 0 < timeout < nbgrader_course.CELL_TIMEOUT_S
        calls.append(target)
        print("torch warning", file=sys.stderr)
        warnings.warn("a triton deprecation", DeprecationWarning, stacklevel=1)
        return REPORT

    monkeypatch.setattr(nbgrader_course.api, "grade", fake_grade)
    monkeypatch.setattr(nbgrader_course, "_REPORTS", {})
    (tmp_path / UNIT).mkdir()
    (tmp_path / UNIT / "softmax.py").write_text("v1")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert score_exercise(UNIT, "f", points=9, target=tmp_path) == 7
        assert score_exercise(UNIT, "g", points=2, target=tmp_path) == 0
        (tmp_path / UNIT / "softmax.py").write_text("v2")
        score_exercise(UNIT, "f", points=9, target=tmp_path)
    out = capsys.readouterr()
    assert out.err == "" and "torch warning" in out.out and "a triton deprecation" in out.out
    assert len(calls) == 2, "the unit is graded once per version of its code"
    assert "l23_online_softmax · f: 7 / 9" in out.out and "failed  0/2  correctness" in out.out


def test_generate_assignment_clears_python_regions_and_keeps_the_cuda_stub():
    preprocessors = pytest.importorskip("nbgrader.preprocessors")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.from_dict(unit_notebook(UNIT, [Exercise(UNIT, "f", 1.0)]))
    nb, _ = preprocessors.ClearSolutions().preprocess(nb, {})
    answers = {c.source.splitlines()[0]: c.source for c in nb.cells if c.metadata.nbgrader["solution"]}
    assert "BEGIN SOLUTION" not in "".join(answers.values())
    assert "    # YOUR CODE HERE\n    raise NotImplementedError()" in answers[f"%%writefile {UNIT}/softmax.py"]
    cu = make_stub((nbgrader_course.SOLUTIONS / UNIT / "cuda_reduce.cu").read_text(), suffix=".cu")
    assert answers[f"%%writefile {UNIT}/cuda_reduce.cu"].startswith(f"%%writefile {UNIT}/cuda_reduce.cu\n{cu}#if 0")


def test_autograde_runs_only_the_course_cells():
    sanitize = pytest.importorskip("grader.instructor.nbgrader_sanitize")
    nbformat = pytest.importorskip("nbformat")
    header = f"%%writefile {UNIT}/softmax.py"
    source = {"grade-f": (True, "score_exercise(...)"), "module-softmax-py": (False, header + "\ncode")}
    cells = [nbformat.v4.new_code_cell(src, metadata={"nbgrader": {"grade_id": gid}} if gid else {})
             for gid, src in [("grade-f", "score_exercise(...)"), ("module-softmax-py", "def f(): ...\nTAMPER"),
                              ("module-softmax-py", "%%writefile x.py\ndef f(): ..."), (None, "TAMPER")]]  # fmt: skip
    pp = sanitize.RunOnlyCourseCells()
    for cell in cells:
        pp._sanitize(cell, source)
    assert [c.cell_type for c in cells] == ["code", "code", "code", "raw"]
    assert cells[1].source == f"{header}\ndef f(): ...\nTAMPER"  # saved as the module, not run
    assert cells[2].source == f"{header}\ndef f(): ..."  # written where the course says, nowhere else
    assert cells[3].source == "TAMPER" and "outputs" not in cells[3]


def test_a_unit_the_engine_could_not_grade_is_tried_once_per_code_version(tmp_path, monkeypatch, capsys):
    """A run the engine stopped (past its time) fails each cell with the reason, without grading again per cell."""
    calls: list[Path] = []

    def stopped(target: Path, *, units, call_timeout, timeout):
        calls.append(target)
        raise api.GraderError("grading ran past 840 s and was stopped")

    monkeypatch.setattr(nbgrader_course.api, "grade", stopped)
    monkeypatch.setattr(nbgrader_course, "_REPORTS", {})
    (tmp_path / UNIT).mkdir()
    (tmp_path / UNIT / "softmax.py").write_text("v1")
    for exercise in ("f", "g"):
        with pytest.raises(api.GraderError, match="ran past"):
            score_exercise(UNIT, exercise, points=9, target=tmp_path)
    assert len(calls) == 1
