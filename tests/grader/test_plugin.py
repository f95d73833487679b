"""The plugin end to end (pytester): markers required, outcomes classified, results recorded."""

from __future__ import annotations

import json

import pytest

UNIT_TESTS = '''
import pytest
from grader.grading.harness import learner

f = learner("l99_demo", "mod", "f")

@pytest.mark.correctness
@pytest.mark.exercise("f")
@pytest.mark.points(2)
@pytest.mark.hint("Is it doubled?")
def test_doubles():
    assert f(2) == 4, f"f(2) = {f(2)}, expected 4"

@pytest.mark.efficiency
@pytest.mark.exercise("g")
@pytest.mark.points(1)
def test_g():
    assert learner("l99_demo", "mod", "g")() == 1

@pytest.mark.gpu_perf
@pytest.mark.exercise("f")
@pytest.mark.points(3)
def test_speed(award):
    award(0.5, speedup=0.45)

@pytest.mark.correctness
@pytest.mark.exercise("f")
@pytest.mark.points(4)
def test_partial(award):
    award(0.25, reason="a quarter")

from hypothesis import given, strategies as st

@pytest.mark.correctness
@pytest.mark.exercise("f")
@pytest.mark.points(1)
@given(x=st.integers(0, 1000))
def test_property(x):
    assert f(x) == 2 * x, f"f({x}) = {f(x)}"
'''


@pytest.fixture
def course(pytester):
    """A tiny course: tests/l99_demo with three graded tests, and a target folder per scenario."""
    pytester.makepyfile(**{"tests/l99_demo/test_demo": UNIT_TESTS})

    def run(source: str | None, *extra: str):
        target = pytester.path / "target"
        (target / "l99_demo").mkdir(parents=True, exist_ok=True)
        if source is not None:
            (target / "l99_demo" / "mod.py").write_text(source)
        report = pytester.path / "results.jsonl"
        result = pytester.runpytest("-p", "grader.grading.plugin", "--target", str(target),
                                    "--dripstone-report", str(report), "tests", *extra)
        rows = [json.loads(line) for line in report.read_text().splitlines()]
        return result, {r["nodeid"].rsplit("::", 1)[1]: r for r in rows}

    return run


def test_right_wrong_todo_and_pending(course):
    result, rows = course("def f(x):\n    return 2 * x + 1\ndef g():\n    raise NotImplementedError('TODO: g')\n")
    assert rows["test_doubles"]["status"] == "failed" and rows["test_doubles"]["score"] == 0
    assert rows["test_doubles"]["message"] == "f(2) = 5, expected 4"
    assert rows["test_doubles"]["hint"] == "Is it doubled?"
    assert rows["test_g"]["status"] == "todo" and rows["test_g"]["message"].startswith("TODO: g (")
    assert rows["test_speed"]["status"] == "pending_gpu"  # no CUDA here: pending, not 0 and not a pass
    assert rows["test_speed"]["message"].startswith("pending GPU")
    assert {r["unit"] for r in rows.values()} == {"l99_demo"}
    assert (rows["test_doubles"]["tier"], rows["test_g"]["tier"]) == ("correctness", "efficiency")
    assert rows["test_partial"]["score"] == 1.0 and rows["test_partial"]["record"] == {"reason": "a quarter"}
    prop = rows["test_property"]
    assert prop["message"] == "f(0) = 1", "hypothesis shrinks to the smallest failing input"
    assert "test_property(" in prop["detail"] and "x=0" in prop["detail"] and "@reproduce_failure" in prop["detail"]
    assert "replay: make grade L=99 E=f" in prop["detail"]


def test_full_marks_and_exercise_filter(course):
    _, rows = course("def f(x):\n    return 2 * x\ndef g():\n    return 1\n")
    assert (rows["test_doubles"]["score"], rows["test_g"]["score"]) == (2, 1)
    _, only_g = course(None, "--exercise", "g")
    assert list(only_g) == ["test_g"]


def test_missing_module_fails_only_what_needs_it(course):
    _, rows = course("def f(x):\n    return 2 * x\n")
    assert rows["test_doubles"]["status"] == "passed"
    assert rows["test_g"]["status"] == "failed" and "has no `g`" in rows["test_g"]["message"]


def test_unmarked_grading_test_is_a_usage_error(pytester):
    pytester.makepyfile(**{"tests/l98_bad/test_bad": "def test_x():\n    pass\n"})
    result = pytester.runpytest("-p", "grader.grading.plugin", "tests")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*grading test tests/l98_bad/test_bad.py::test_x: needs exactly one tier*"])
