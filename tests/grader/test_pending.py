"""What waits for a GPU is said plainly: a CUDA C++ kernel's efficiency is pending while its values are, the
scoreboard lists each pending exercise and tier with its points and why, and doctor says which tests."""

from __future__ import annotations

import io

from rich.console import Console

from grader.core import failures
from grader.core.results import GradeReport, Status, TestResult, Tier
from grader.learner import scoreboard
from grader.tools import doctor
from grader.tools.doctor import Machine

CU_PENDING = "pending GPU: this test runs the compiled CUDA C++ kernel on a GPU; its NVRTC checks ran here"


def _r(name: str, status: Status, score: float, tier: Tier, exercise: str = "block_sum_shfl", **kw) -> TestResult:
    return TestResult(nodeid=f"tests/l23_x/test_cu.py::{name}", unit="l23_x", exercise=exercise, tier=tier,
                      points=3, status=status, score=score, **kw)


def test_cu_efficiency_pass_is_pending_while_its_values_are():
    """The defect: a wrong warp reduction showed `efficiency PASS, 3/3` while its correctness was pending."""
    values = _r("test_values", Status.PENDING_GPU, 0, Tier.CORRECTNESS, message=CU_PENDING)
    compiled = _r("test_shuffles", Status.PASSED, 3, Tier.EFFICIENCY)
    got = failures.gate([values], compiled)
    assert got.status is Status.PENDING_GPU and got.score == 0, got
    assert "values are checked on a GPU" in got.message and got.record["pending_with"] == values.nodeid


def test_cu_efficiency_failure_still_fails_and_other_exercises_are_untouched():
    values = _r("test_values", Status.PENDING_GPU, 0, Tier.CORRECTNESS, message=CU_PENDING)
    spills = _r("test_no_spills", Status.FAILED, 0, Tier.EFFICIENCY, message="12 bytes of spills")
    assert failures.gate([values], spills) is spills  # a failed compile check is the learner's to fix now
    triton = _r("test_traffic", Status.PASSED, 3, Tier.EFFICIENCY, exercise="softmax_fused")
    assert failures.gate([values], triton) is triton
    checked = _r("test_values", Status.PASSED, 3, Tier.CORRECTNESS)  # on a GPU: the values ran
    assert failures.gate([checked], _r("test_shuffles", Status.PASSED, 3, Tier.EFFICIENCY)).status is Status.PASSED


def test_scoreboard_lists_each_pending_exercise_and_why():
    report = GradeReport("exercises", (
        _r("test_values[1]", Status.PENDING_GPU, 0, Tier.CORRECTNESS, message=CU_PENDING),
        _r("test_values[2]", Status.PENDING_GPU, 0, Tier.CORRECTNESS, message=CU_PENDING),
        _r("test_speed", Status.PENDING_GPU, 0, Tier.GPU_PERF, exercise="softmax_fused",
           message="pending GPU: this tier times kernels on a CUDA device; run make grade on a GPU"),
    ))
    lines = scoreboard.pending_lines(report.pending_gpu)
    assert lines == [
        "l23_x · block_sum_shfl · correctness: 2 test(s), 6 points (this test runs the compiled CUDA C++ kernel "
        "on a GPU)",
        "l23_x · softmax_fused · gpu_perf: 1 test(s), 3 points (this tier times kernels on a CUDA device)",
    ]
    out = io.StringIO()
    scoreboard.render(report, Console(file=out, width=200))
    assert "block_sum_shfl · correctness: 2 test(s)" in out.getvalue()


def test_doctor_says_cuda_cpp_values_wait_for_a_gpu():
    laptop = Machine(python=(3, 11, 7), executable=".venv/bin/python", installed={"torch": "2.13.0+cpu",
                     "triton": "3.7.1"}, torch_version="2.13.0+cpu", c_compiler=True, python_headers=True,
                     tools=frozenset(doctor.TOOLS), euid=1000)
    detail = {c.name: c for c in doctor.check_tiers(laptop)}["tier correctness"].detail
    assert "CUDA C++ (.cu) kernels" in detail and "pending GPU" in detail, detail


def test_a_stub_row_reads_todo_when_its_bad_argument_checks_are_gated():
    """A stub whose provided validation passes its bad-argument test (gated to 0) is TODO, not FAIL."""
    todo = _r("test_values", Status.TODO, 0, Tier.CORRECTNESS, exercise="amdahl", message="TODO: write amdahl")
    gated = failures.gate([todo], _r("test_rejects", Status.PASSED, 3, Tier.CORRECTNESS, exercise="amdahl",
                                     validation=True))
    assert gated.status is Status.FAILED and gated.score == 0  # not scored: its exercise is still TODO
    report = GradeReport("exercises", (todo, gated))
    out = io.StringIO()
    scoreboard.render(report, Console(file=out, width=200))
    row = next(line for line in out.getvalue().splitlines() if line.strip().startswith("amdahl"))
    assert "TODO" in row and "FAIL" not in row, row
    assert scoreboard.next_exercise(report.results) is todo
