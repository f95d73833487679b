"""The plugin end to end (pytester): markers required, outcomes classified, results recorded."""

from __future__ import annotations

import json

import pytest

# pytester's in-process runs put sys.modules back as they found it: a C extension first imported inside one
# run (torch, by the gpu_perf test's GPU check) would be imported a second time by the next run and crash
# the process. Imported here, it stays loaded across runs.
import torch  # noqa: F401

from grader.core import results

UNIT_TESTS = '''
from grader.kit import grade, learner

f = learner("l99_demo", "mod", "f")
g = learner("l99_demo", "mod", "g")

@grade(f, "correctness", points=2, hint="Is it doubled?")
def test_doubles():
    assert f(2) == 4, f"f(2) = {f(2)}, expected 4"

@grade(g, "efficiency", points=1)
def test_g():
    assert g() == 1

@grade(f, "gpu_perf", points=3)
def test_speed(award):
    award(0.5, speedup=0.45)

@grade(f, "correctness", points=4)
def test_partial(award):
    award(0.25, reason="a quarter")

from hypothesis import given, strategies as st

@grade(f, "correctness", points=1)
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
        result = pytester.runpytest("-p", "grader.judge.plugin", "--target", str(target),
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
    assert "test_property(" in prop["detail"] and "x=0" in prop["detail"]
    assert "reproduce_failure" not in prop["detail"], "the learner has no test function to decorate"
    assert "replay: make run L=l99 E=f CASE=3" in prop["detail"]


def test_full_marks_and_exercise_filter(course):
    _, rows = course("def f(x):\n    return 2 * x\ndef g():\n    return 1\n")
    assert (rows["test_doubles"]["score"], rows["test_g"]["score"]) == (2, 1)
    _, only_g = course(None, "--exercise", "g")
    assert list(only_g) == ["test_g"]


def test_missing_module_fails_only_what_needs_it(course):
    _, rows = course("def f(x):\n    return 2 * x\n")
    assert rows["test_doubles"]["status"] == "passed"
    assert rows["test_g"]["status"] == "failed" and "has no `g`" in rows["test_g"]["message"]


def test_what_the_learner_fills_is_capped_in_the_results(course):
    """Hostile round 3, class 9: an exception text of megabytes per test made a 66 MB results file."""
    huge = "def f(x):\n    print('p' * 3_000_000)\n    raise ValueError('v' * 5_000_000)\ndef g():\n    return 1\n"
    _, rows = course(huge)
    for name in ("test_doubles", "test_property"):
        row = rows[name]
        assert row["status"] == "failed" and row["message"].startswith("ValueError")
        for field, cap in results.TEXT_CAPS.items():
            assert len(row[field]) <= cap, f"{name}: {field} has {len(row[field]):,} characters"
        assert "more characters cut" in row["message"]
    assert rows["test_g"]["status"] == "passed", "the rest is graded"
    assert results.cap_text("short", 10) == "short" and len(results.cap_text("x" * 50, 40)) == 40


REFUSE_TESTS = '''
from grader.kit import assert_rejects, grade, learner

f = learner("l96_refuse", "mod", "f")

@grade(f, "correctness", points=3, validation=True)
def test_refuses_negative():
    assert_rejects(f, (-1,), "x")

@grade(f, "correctness", points=2)
def test_doubles():
    assert f(2) == 4, f"f(2) = {f(2)}, expected 4"

@grade(f, "efficiency", points=1)
def test_cheap():
    assert f(1) == 2
'''
ONLY_REFUSES = "def f(x):\n    raise ValueError(f'x must be >= 0, got {x}')\n"
RIGHT = "def f(x):\n    if x < 0:\n        raise ValueError(f'x must be >= 0, got {x}')\n    return 2 * x\n"


@pytest.fixture
def refuse(pytester):
    """tests/l96_refuse: a validation test declared first, a values test, an efficiency test; graded on ``source``."""
    pytester.makepyfile(**{"tests/l96_refuse/test_refuse": REFUSE_TESTS})

    def run(source: str, *extra: str):
        target = pytester.path / f"target{len(list(pytester.path.glob('target*')))}"  # a fresh one: modules are cached
        (target / "l96_refuse").mkdir(parents=True)
        (target / "l96_refuse" / "mod.py").write_text(source)
        report, manifest = target / "results.jsonl", target / "manifest.json"
        pytester.runpytest("-p", "grader.judge.plugin", "--target", str(target),
                           "--dripstone-report", str(report), "--dripstone-manifest", str(manifest), "tests", *extra)
        rows = [json.loads(line) for line in report.read_text().splitlines()]
        return {r["nodeid"].rsplit("::", 1)[1]: r for r in rows}, json.loads(manifest.read_text())

    return run


def test_validation_points_need_right_values(refuse):
    """A function that only raises ValueError passes the bad-argument test: 0 points while its values are wrong."""
    rows, manifest = refuse(ONLY_REFUSES)
    assert list(rows) == ["test_doubles", "test_refuses_negative", "test_cheap"], "validation runs last of correctness"
    assert [(e["nodeid"].rsplit("::", 1)[1], e["validation"], e["case"]) for e in manifest] == [
        ("test_doubles", False, 1), ("test_refuses_negative", True, 2), ("test_cheap", False, 3)]
    refused = rows["test_refuses_negative"]
    assert (refused["status"], refused["score"], refused["kind"], refused["validation"]) == ("failed", 0, "gated", True)
    assert refused["message"] == ("not scored while `f` fails its correctness tests (first: test_doubles); "
                                  "this validation test itself passed")
    assert refused["record"]["gated_by"].endswith("::test_doubles")
    assert rows["test_cheap"]["score"] == 0 and rows["test_doubles"]["validation"] is False
    rows, _ = refuse(RIGHT)
    assert {n: r["score"] for n, r in rows.items()} == {"test_doubles": 2, "test_refuses_negative": 3, "test_cheap": 1}


def test_a_validation_failure_is_its_own(refuse):
    """Right values that accept a bad argument lose the validation points only (efficiency is gated, as before)."""
    rows, _ = refuse("def f(x):\n    return 2 * x\n")
    assert rows["test_doubles"]["score"] == 2
    refused = rows["test_refuses_negative"]
    assert refused["status"] == "failed" and refused["kind"] != "gated" and "should raise ValueError" in \
        refused["message"]
    assert rows["test_cheap"]["kind"] == "gated", "efficiency waits for every correctness test, validation included"


def test_unmarked_grading_test_is_a_usage_error(pytester):
    pytester.makepyfile(**{"tests/l98_bad/test_bad": "def test_x():\n    pass\n"})
    result = pytester.runpytest("-p", "grader.judge.plugin", "tests")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*grading test tests/l98_bad/test_bad.py::test_x: *@grade(*"])


def test_exercise_of_another_unit_is_a_usage_error(pytester):
    """The unit comes from the declaration and must be the folder's: a copied test cannot grade the wrong unit."""
    src = "from grader.kit import grade, learner\nf = learner('l97_other', 'mod', 'f')\n\n" \
          "@grade(f, 'correctness', points=1)\ndef test_x():\n    pass\n"
    pytester.makepyfile(**{"tests/l98_bad/test_bad": src})
    result = pytester.runpytest("-p", "grader.judge.plugin", "tests")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*grades l97_other's `f` but lives in tests/l98_bad/*"])


@pytest.mark.parametrize("tier, points, error", [
    ("speed", 1, "tier 'speed' is not one of"),
    ("correctness", 0, "points must be a number > 0"),
    ("correctness", True, "points must be a number > 0"),
])
def test_grade_refuses_bad_declarations(tier, points, error):
    from grader.kit import grade, learner

    with pytest.raises(ValueError, match=error):
        grade(learner("l99_demo", "mod", "f"), tier, points=points)
    with pytest.raises(TypeError, match="declared exercise"):
        grade("f", "correctness", points=1)
    with pytest.raises(ValueError, match="validation=True is for correctness tests, not efficiency"):
        grade(learner("l99_demo", "mod", "f"), "efficiency", points=1, validation=True)


def test_max_examples_caps_every_property_test(course, monkeypatch, tmp_path):
    """$DRIPSTONE_MAX_EXAMPLES (batch --max-examples): a property test draws at most that many examples."""
    calls = tmp_path / "calls"
    source = (f"def f(x):\n    with open({str(calls)!r}, 'a') as out:\n        out.write('.')\n    return 2 * x\n"
              "def g():\n    return 1\n")
    course(source, "-k", "test_property")
    uncapped = len(calls.read_text())
    calls.unlink()
    monkeypatch.setenv("DRIPSTONE_MAX_EXAMPLES", "3")
    _, rows = course(source, "-k", "test_property")
    assert rows["test_property"]["status"] == "passed"
    assert uncapped > 10 and len(calls.read_text()) <= 3 * 2, f"{uncapped} calls uncapped, {calls.read_text()}"


def test_replay_lines_name_a_folder_the_reader_has(monkeypatch, tmp_path):
    """Issue 31: batch grading's replay lines showed the sandbox's copy of the submission (no path a student or an
    instructor has); a student replays in their own clone, on exercises/."""
    from grader.core import target
    from grader.instrument import worker
    from grader.judge import plugin

    monkeypatch.setattr(target, "target_root", lambda: tmp_path / "student-7")
    assert plugin.replay_command("l23_online_softmax", "softmax_fused", 2) == (
        f'make run L=l23 E=softmax_fused CASE=2 ARGS="--target {target.display_path(tmp_path / "student-7")}"')
    monkeypatch.setattr(worker, "enabled", lambda: True)
    assert plugin.replay_command("l23_online_softmax", "softmax_fused", 2) == "make run L=l23 E=softmax_fused CASE=2"


def test_a_frame_without_a_line_number_is_named_without_none(monkeypatch, tmp_path):
    """Issue 35: a time-out message said `paged.py:None` (a frame the interpreter knows no line of)."""
    import traceback

    from grader.core import target
    from grader.judge import plugin

    monkeypatch.setattr(target, "target_root", lambda: tmp_path)
    frame = traceback.FrameSummary(str(tmp_path / "paged.py"), None, "step")
    monkeypatch.setattr(traceback, "extract_tb", lambda tb: [frame])
    assert plugin._learner_frame(ValueError()) == f" ({target.display_path(tmp_path / 'paged.py')})"
    frame.lineno = 7
    assert plugin._learner_frame(ValueError()).endswith("paged.py:7)")


def test_a_file_that_does_not_load_shows_its_line_and_no_last_call(course):
    """Issue 35: a syntax error showed a "last call" of code that never ran (and a replay command)."""
    _, rows = course("def f(x):\n    return 2 *\n")
    row = rows["test_doubles"]
    assert row["status"] == "failed" and "syntax error" in row["message"] and "line 2" in row["message"]
    assert "last call of your code" not in row["detail"] and "replay:" not in row["detail"]
