"""What a learner reads after a mistake (issue "learners first", defects 3 and 5 to 9): a progress line, the
next exercise last, a hint for the kind of failure, the input shown, no false full marks, their prints."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from grader import api
from grader.authoring import known
from grader.core import failures, stubs
from grader.core.results import GradeReport, Status, TestResult, Tier
from grader.core.target import REPO_ROOT
from grader.kit import assert_rejects
from grader.learner import scoreboard

# ---- 3: progress while grading, `next:` last, FAIL before TODO, a syntax error named ----------------------------


def _r(unit: str, exercise: str, status: Status, message: str = "", tier: Tier = Tier.CORRECTNESS) -> TestResult:
    score = 1.0 if status is Status.PASSED else 0.0
    return TestResult(nodeid=f"tests/{unit}/test_x.py::test_{exercise}_{tier}", unit=unit, exercise=exercise,
                      tier=tier, points=1.0, status=status, score=score, message=message,
                      detail="x" * 50 if status is Status.FAILED else "")


SYNTAX = "exercises/l02_ai_math/ai_math.py line 40: syntax error: invalid syntax; fix it and grade again"
COURSE = GradeReport("exercises", (
    _r("l02_ai_math", "contiguous_strides", Status.PASSED),
    _r("l02_ai_math", "gemm_ledger", Status.TODO, "TODO: validate"),
    _r("l02_ai_math", "to_bytes", Status.FAILED, SYNTAX),
    _r("l12_roofline", "ridge_point", Status.FAILED, "ridge_point(1, 2) = 3, expected 0.5"),
))


def test_next_is_the_last_line_and_names_a_failure_before_a_todo():
    out = io.StringIO()
    scoreboard.render(COURSE, Console(file=out, width=160))
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert lines[-1].strip().startswith("next: l02_ai_math · to_bytes (FAIL)"), lines[-3:]
    assert "ai_math.py line 40: syntax error" in lines[-1], "a file that does not import: its line"
    assert scoreboard.next_exercise(COURSE.results[:2]).exercise == "gemm_ledger"  # no failure: the TODO


@pytest.mark.slow
def test_grading_reports_progress_as_each_test_ends():
    seen: list[api.Progress] = []
    report = api.grade(REPO_ROOT / "solutions", units=["12"], exercises=["ridge_point", "attainable_flops"],
                       progress=seen.append)
    assert seen, "no progress was reported while grading"
    done = [p.done for p in seen]
    assert done == sorted(done) and done[-1] == seen[-1].total == len(report.results)
    assert seen[-1].last is not None and seen[-1].last.unit == "l12_roofline"


# ---- 5: the hint matches how the test failed; assert_close reports NaN --------------------------------------------


def test_assert_close_reports_nan_with_its_count_and_first_index():
    torch = pytest.importorskip("torch")
    from grader.kit.compare import assert_close

    expected = torch.ones(2, 4)
    actual = expected.clone()
    actual[1, 2] = float("nan")
    with pytest.raises(AssertionError) as err:
        assert_close(actual, expected, what="f(x)")
    text = str(err.value)
    assert "1 of 8 elements are NaN or inf; first at [1, 2]: got nan, expected 1" in text
    assert "max abs error 0" not in text
    assert err.value.failure_kind == "nan" and "[1, 2]" in err.value.table


@pytest.mark.parametrize("exc, tier, kind", [
    (AssertionError("f(x: 2×3 float32): 6 of 6 elements are NaN or inf; first at [0, 0]"), "correctness", "nan"),
    (AssertionError("f(x): 3 of 8 elements differ; first at [0, 1]"), "efficiency", "values"),
    (AssertionError("f(x): loaded 2,000 B = 2.00× x, the ledger allows 1×"), "efficiency", "traffic"),
    (AssertionError("to_bytes(1, 'GB') = 1.0: return an exact int of bytes, not float"), "correctness", "type"),
    (AssertionError("ridge_point(1, 2) = 3, expected 0.5"), "correctness", "values"),
    (KeyError("gb"), "correctness", "exception"),
    # issue 35: a .cu race and a bad shuffle mask got the same hint, an efficiency row said "Wrong values" for a
    # missing barrier, and a deadlock was told "the line named above" (it names none)
    (AssertionError("reduce<<<grid 2, block 64>>> on the CPU executor: race on shared memory: thread 3 writes a word "
                    "at cuda_reduce.cu:41 that thread 9 reads at cuda_reduce.cu:44"), "efficiency", "race"),
    (AssertionError("reduce<<<grid 2, block 64>>> on the CPU executor: race: the result depends on the order in "
                    "which the threads run"), "correctness", "race"),
    (AssertionError("k<<<grid 1, block 32>>> on the CPU executor: divergence at k.cu:12: __syncthreads reached by "
                    "16 of 32 threads"), "correctness", "divergence"),
    (AssertionError("k<<<grid 1, block 32>>> on the CPU executor: warp primitive misuse at k.cu:20: lane 5 is not "
                    "in the mask"), "correctness", "warp_mask"),
    (AssertionError("k<<<grid 1, block 32>>> on the CPU executor: out-of-bounds access at k.cu:9: read"),
     "correctness", "out_of_bounds"),
])
def test_failures_are_classified(exc, tier, kind):
    assert failures.classify(exc, tier, learner_raised=True) is failures.FailureKind(kind)


def test_out_of_bounds_is_its_own_kind_and_the_own_hint_only_for_its_kind():
    from grader.instrument.traffic import KernelMemoryError

    oob = failures.classify(KernelMemoryError("k line 3: store out of bounds of `y`"), "efficiency",
                            learner_raised=True)
    assert oob is failures.FailureKind.OUT_OF_BOUNDS
    own = "Once a row is in registers, why load it again?"
    assert failures.hint_for(oob, "efficiency", own) != own
    assert failures.hint_for(failures.FailureKind.TRAFFIC, "efficiency", own) == own
    assert failures.hint_for(failures.FailureKind.NAN, "correctness", "Is your mask right?").startswith("NaN or inf")


DEMO_TESTS = '''
import torch
from grader.kit import assert_close, grade, learner

f = learner("l99_demo", "mod", "f")
g = learner("l99_demo", "mod", "g")

@grade(f, "correctness", points=2, hint="Own values hint?")
def test_f_values():
    assert_close(f(torch.ones(3)), torch.ones(3), what="f(x)")

@grade(f, "efficiency", points=3, hint="Why load it again?")
def test_f_traffic():
    y = f(torch.zeros(3))   # right on these inputs
    assert y.shape == (3,)

@grade(g, "correctness", points=1, hint="Units are case-sensitive?")
def test_g():
    assert g("gb") == 1
'''

DEMO_CODE = '''
import torch
def f(x):
    print("debug: x.sum() =", float(x.sum()))
    return torch.exp(x * 1000.0) / torch.exp(x * 1000.0).sum()
def g(unit):
    return {"GB": 1}[unit]
'''


@pytest.fixture
def demo(pytester, monkeypatch):
    """tests/l99_demo graded on one target in a child process (the learner's code prints and returns NaN)."""
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    pytester.makepyfile(**{"tests/l99_demo/test_demo": DEMO_TESTS})
    (pytester.path / "target" / "l99_demo").mkdir(parents=True)
    (pytester.path / "target" / "l99_demo" / "mod.py").write_text(DEMO_CODE)

    def run(*extra: str):
        report = pytester.path / "results.jsonl"
        result = pytester.runpytest_subprocess("-p", "grader.judge.plugin", "--target",
                                               str(pytester.path / "target"), "--dripstone-report", str(report),
                                               "tests", *extra)
        rows = [json.loads(x) for x in report.read_text().splitlines()] if report.exists() else []
        return result, {r["nodeid"].rsplit("::", 1)[1]: r for r in rows}

    return run


def test_hints_follow_the_failure_and_efficiency_needs_right_values(demo):
    _, rows = demo()
    values, traffic, g = rows["test_f_values"], rows["test_f_traffic"], rows["test_g"]
    assert values["kind"] == "nan" and values["hint"].startswith("NaN or inf"), values
    assert "Own values hint" not in values["hint"]
    assert traffic["score"] == 0 and traffic["kind"] == "gated", "no efficiency point while f's values are wrong"
    assert "test_f_values" in traffic["message"] and traffic["record"]["gated_by"].endswith("test_f_values")
    assert g["kind"] == "exception" and g["message"].startswith("KeyError: 'gb' (")
    assert "case-sensitive" not in g["hint"]


def test_a_failing_tests_prints_and_inputs_are_shown(demo):
    _, rows = demo()
    values = rows["test_f_values"]
    assert "debug: x.sum() = 3.0" in values["output"]
    assert "last call of your code: f(tensor([1., 1., 1.]))" in values["detail"]
    assert "replay: make run L=l99 E=f CASE=1" in values["detail"]
    assert "reproduce_failure" not in values["detail"]
    out = io.StringIO()
    scoreboard.render(GradeReport("t", (TestResult.from_dict(values),)), Console(file=out, width=200))
    assert "your prints:" in out.getvalue() and "debug: x.sum() = 3.0" in out.getvalue()


# ---- 6: an unknown exercise names the exercises; a wrong exception names the call ------------------------------


def test_an_unknown_exercise_lists_the_exercises_and_the_closest_name(demo):
    result, rows = demo("--exercise", "gg")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not rows
    err = result.stderr.str()
    assert "no exercise 'gg' in the units graded: did you mean 'g'?" in err and "l99_demo: f, g" in err


@pytest.mark.slow
def test_make_grade_with_a_typo_in_e_says_which_exercises_exist():
    with pytest.raises(api.GraderError, match=r"did you mean 'ridge_point'\?.*l12_roofline: ridge_point"):
        api.grade(REPO_ROOT / "solutions", units=["12"], exercises=["ridge_pont"])


def test_a_key_error_instead_of_value_error_names_the_call_and_the_contract():
    def to_bytes(amount, unit):
        return amount * {"GB": 10**9}[unit]

    with pytest.raises(AssertionError, match=r"to_bytes\(1, 'gb'\) raised KeyError\('gb'\).*raise ValueError "
                                             r"naming `unit`"):
        assert_rejects(to_bytes, (1, "gb"), "unit")


def test_the_to_bytes_hint_does_not_suggest_accepting_lower_case():
    text = (REPO_ROOT / "tests/l02_ai_math/test_ai_math.py").read_text()
    assert "Units are case-sensitive" not in text
    assert "'gb' is not a unit" in text


# ---- 7: no false full marks -------------------------------------------------------------------------------------


def test_gate_takes_efficiency_points_while_correctness_fails():
    wrong = _r("l23_online_softmax", "softmax_fused", Status.FAILED, "NaN")
    fast = _r("l23_online_softmax", "softmax_fused", Status.PASSED, tier=Tier.EFFICIENCY)
    other = _r("l23_online_softmax", "softmax_online", Status.PASSED, tier=Tier.EFFICIENCY)
    gated = failures.gate_all([wrong, fast, other])
    assert (gated[1].score, gated[1].status, gated[1].kind) == (0.0, Status.FAILED, "gated")
    assert gated[2] == other, "another exercise keeps its points"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["to_bytes_float", "to_bytes_float_rounded"])
def test_float_to_bytes_loses_points(tmp_path, name):
    impl = next(k for k in known.known_impls("l02_ai_math", "known_wrong") if k.path.stem == name)
    report = api.grade(known.build_target(impl, tmp_path), units=["02"], exercises=["to_bytes"])
    lost = [r for r in report.results if r.score < r.points]
    assert lost, f"{name} ({impl.doc}) keeps full marks"


# ---- 8 and 9: debugging is documented; make works in a unit's folder; lectures are links -------------------------

KERNEL_UNITS = ("l22_memory_coalescing", "l23_online_softmax", "l24_gemm", "l25_flash_attention")


def test_readmes_say_how_to_debug():
    readme = (REPO_ROOT / "README.md").read_text()
    for needle in ("TRITON_INTERPRET=1", "ARGS=-v", "make run", "make watch", "make hint", "make progress",
                   "make report"):
        assert needle in readme, f"README.md does not mention {needle}"
    for unit in KERNEL_UNITS:
        assert "TRITON_INTERPRET=1" in (REPO_ROOT / "exercises" / unit / "README.md").read_text(), unit


def test_every_unit_readme_links_its_lecture():
    for readme in sorted((REPO_ROOT / "solutions").glob("*/README.md")):
        assert re.search(r"\]\(https://github\.com/lilinji/ai-infra-odyssey/blob/HEAD/0\d_", readme.read_text()), (
            f"{readme.relative_to(REPO_ROOT)}: link the lecture's text in the public course repo")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_in_a_unit_folder_forwards_to_the_course_makefile():
    folder = REPO_ROOT / "exercises" / "l12_roofline"
    proc = subprocess.run(["make", "-n", "-C", str(folder), "E=ridge_point"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "grade --target exercises --unit l12_roofline --exercise ridge_point" in proc.stdout
    for unit in (REPO_ROOT / "solutions").iterdir():
        if unit.is_dir():  # generated by `stubs` from one template, never a copy kept per unit
            assert (REPO_ROOT / "exercises" / unit.name / "Makefile").read_text() == stubs.UNIT_MAKEFILE, unit.name
            assert not (unit / "Makefile").exists(), f"solutions/{unit.name}/Makefile: `stubs` writes it"


def test_make_help_lists_the_learner_commands():
    text = Path(REPO_ROOT / "Makefile").read_text()
    for target in ("watch:", "run:", "hint:", "progress:", "report:"):
        assert f"\n{target}" in text


def test_a_deadlock_gets_the_deadlock_hint_and_each_cuda_fault_its_own():
    from grader.instrument.ranks import RankFailure

    stuck = RankFailure("ring_all_reduce on 3 ranks: deadlock: every rank waits in send", kind="deadlock")
    kind = failures.classify(stuck, "correctness", learner_raised=True)
    assert kind is failures.FailureKind.DEADLOCK
    assert "line named above" not in failures.hint_for(kind, "correctness", "")
    hints = {failures.hint_for(k, "correctness", "own") for k in (failures.FailureKind.RACE,
             failures.FailureKind.DIVERGENCE, failures.FailureKind.WARP_MASK, failures.FailureKind.VALUES)}
    assert len(hints) == 4, "a race, a divergent barrier, a bad mask and wrong values each get their own hint"


# ---- a call shown as the learner wrote it: `.append_slot(1)`, never a tuple's `(1,)` ------------------------------

ONE_ARG_WRONG = [
    # (unit, module, exercise, an override wrong on a one-argument call, what the failure should show)
    ("l33_paged_kv", "paged", "BlockManager",
     "_good_append = BlockManager.append_slot\n"
     "def _append(self, seq_id):\n    out = _good_append(self, seq_id)\n    return out[0] + 1, out[1]\n"
     "BlockManager.append_slot = _append\n",
     "after .allocate(0, 37) .fork(0, 1): .append_slot(1) returned"),
    ("l43_npu_dpu", "npu", "device_string",
     "_good_device_string = device_string\n"
     "def device_string(*args, **kwargs):\n"
     "    return 'cpu' if len(args) == 1 and args[0] != 'cpu' else _good_device_string(*args, **kwargs)\n",
     "device_string('cuda') = 'cpu', expected 'cuda:0'"),
]


@pytest.mark.parametrize(("unit", "module", "exercise", "override", "shown"), ONE_ARG_WRONG, ids=lambda v: str(v)[:12])
def test_a_one_argument_call_is_shown_without_a_tuples_comma(tmp_path, unit, module, exercise, override, shown):
    target = tmp_path / "target"
    shutil.copytree(REPO_ROOT / "solutions" / unit, target / unit, ignore=shutil.ignore_patterns("__pycache__"))
    path = target / unit / f"{module}.py"
    path.write_text(path.read_text() + "\n\n" + override)
    report = api.grade(target, units=[unit], exercises=[exercise])
    messages = [r.message for r in report.results if r.status is Status.FAILED and "not scored" not in r.message]
    assert messages and any(shown in m for m in messages), messages
    assert not any(re.search(r"[\w.]\([^()]*,\)", m) for m in messages), messages
