"""grader/tools/bench.py (`make bench`): says so and exits 0 without a GPU; its rows, built from the kernels_ref
declarations, report ratios against goals."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from grader.core.target import REPO_ROOT
from grader.judge import perf
from grader.tools import bench


@pytest.mark.skipif(perf.gpu_available(), reason="this machine has a GPU: make bench measures instead")
def test_bench_without_a_gpu_says_so_and_exits_0():
    proc = subprocess.run([sys.executable, "-m", "grader.tools.bench"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "no CUDA GPU" in proc.stdout and "nothing measured" in proc.stdout


def test_rows_show_ratio_goal_and_what_is_missing():
    assert "0.92×" in bench.Row("softmax", "8192×8192 fp32", 0.92, 0.85, "vs D2D copy").line()
    assert "ok" in bench.Row("softmax", "s", 0.92, 0.85, "vs D2D copy").line()
    assert "BELOW GOAL" in bench.Row("matmul", "4096³ bf16", 0.5, 0.9, "vs torch.matmul").line()
    missing = bench.Row("attention", "", None, 0.0, "", "missing: kernels_ref/attention.py has no REFERENCE").line()
    assert "missing: kernels_ref/attention.py" in missing and "ok" not in missing


def test_output_check():
    import torch

    want = torch.ones(3, 4)
    assert bench._checked(want.clone(), want, rtol=1e-5, atol=0) == ""
    assert bench._checked((want.clone(), None), want, rtol=1e-5, atol=0) == ""  # (o, lse) tuples: o is checked
    assert bench._checked(want * 2, want, rtol=1e-5, atol=0).startswith("WRONG: 12 elements")
    assert bench._checked(want[:2], want, rtol=1e-5, atol=0).startswith("wrong output")


def test_every_declared_row_runs_dry_on_the_cpu(monkeypatch):
    """The rows come from the kernels_ref declarations alone: each one is checked and timed (host clock,
    interpreted, small sizes) through the code make bench runs on a GPU; the .cu rows wait for one."""
    monkeypatch.setenv(perf.DRY_RUN_ENV, "1")
    declared = {c.name: c for ref in bench.declarations().values() for c in ref.bench}
    rows = {row.name: row for row in bench.rows("cpu")}
    assert set(rows) == set(declared), f"bench.rows() gave {sorted(rows)}, the declarations {sorted(declared)}"
    for name, row in rows.items():
        if declared[name].source:
            assert row.ratio is None and perf.PENDING_GPU in row.note, row
            continue
        assert row.ratio is not None and row.ratio > 0 and row.baseline.startswith("vs "), row
        assert ("TFLOP/s" if declared[name].flops else "GB/s") in row.note, row


def test_a_wrong_or_broken_reference_is_reported_not_timed():
    import torch

    inputs = lambda device: (torch.ones(4, 4, device=device),)
    wrong = bench.BenchCase("wrong", inputs, lambda x: 2 * x, oracle=lambda x: x.clone(), baseline="copy", goal=0.85)
    row = bench.measure(wrong, "cpu")
    assert row.ratio is None and row.note.startswith("WRONG: 16 elements") and row.shape == "4×4 fp32", row
    broken = bench.BenchCase("broken", inputs, lambda x: 1 / 0, oracle=lambda x: x, baseline="copy", goal=0.85)
    (row,) = [bench._guarded(lambda: bench.measure(broken, "cpu"), "broken")]
    assert row.ratio is None and row.note.startswith("ERROR ZeroDivisionError"), row
    with pytest.raises(ValueError, match="not one of"):
        bench.BenchCase("x", inputs, abs, oracle=abs, baseline="cuBLAS", goal=0.9)


def test_a_kernels_ref_module_without_a_declaration_is_a_missing_row(monkeypatch, tmp_path):
    (tmp_path / "kernels_ref").mkdir()
    (tmp_path / "kernels_ref" / "scan.py").write_text("def scan(x):\n    return x\n")
    monkeypatch.setattr(bench.target, "REPO_ROOT", tmp_path)
    (row,) = bench.rows("cpu")
    assert row.name == "scan" and row.ratio is None and "missing: kernels_ref/scan.py has no REFERENCE" in row.note
    with pytest.raises(LookupError, match=r"REFERENCE = dict\(unit="):
        bench.declarations()
    no_rows = "REFERENCE = dict(unit='l99_x', exercises=('scan',), vendor='v')\n"
    (tmp_path / "kernels_ref" / "scan.py").write_text(no_rows)
    monkeypatch.setattr(bench.loader, "_CACHE", {})
    with pytest.raises(LookupError, match="scan.py's REFERENCE: .*bench must be a non-empty tuple"):
        bench.declarations()


def test_bench_batch_prints_rates_overhead_and_who_fell_short(monkeypatch, capsys):
    """grader/tools/bench_batch.py with the grading faked: the arithmetic and the full-marks check."""
    from grader import api
    from grader.core.results import GradeReport, Status, TestResult, Tier
    from grader.instructor import batch, sandbox
    from grader.tools import bench_batch

    clock = iter(range(0, 10_000, 30))  # each timed phase lasts 30 "seconds"
    monkeypatch.setattr(bench_batch.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Runtime(REPO_ROOT, sandbox.Isolation.BWRAP))
    result = TestResult("t", "l23_online_softmax", "softmax_fused", Tier.CORRECTNESS, 2.0, Status.PASSED, 2.0)
    monkeypatch.setattr(api, "grade", lambda target, units: GradeReport(str(target), (result,)))

    def run_batch(options, *_, **__):  # batch_ray.run_batch passes its runner
        students = sorted(p.name for p in options.submissions.iterdir())
        short = {students[0]} if options.jobs == 2 else set()
        return batch.BatchReport(options.out, tuple(
            batch.Graded(s, 1.0 if s in short else 2.0, 2.0, {}) for s in students), 0, "bwrap", ("l23",))

    monkeypatch.setattr(batch, "run_batch", run_batch)
    # nbgrader's side faked too (a real autograde is minutes of CPU; tests/grader/test_nbgrader.py runs nbgrader)
    monkeypatch.setattr(bench_batch, "nbgrader_autograde", lambda root, unit, n, problems: 45.0)
    assert bench_batch.main(["--students", "3", "--jobs", "2", "--no-ray"]) == 1
    out = capsys.readouterr().out
    assert "nbgrader autograde" in out and "4.00" in out, "3 students in 45 s: 4 students/min"
    assert "batch vs nbgrader autograde: batch --jobs 1 1.50x, batch --jobs 2 1.50x" in out
    assert "alone (no sandbox)" in out and "batch --jobs 1" in out and "batch --jobs 2" in out
    assert "6.00" in out, "3 students in 30 s: 6 students/min"
    assert "+0.00 s (1.00x)" in out
    assert "NOT FULL MARKS: batch --jobs 2: student_000 scored 1.0/2.0" in out

    # --rounds 2: every mode twice, the second round in the reverse order, each row the sum of both
    order = []
    monkeypatch.setattr(api, "grade",
                        lambda target, units: order.append("alone") or GradeReport(str(target), (result,)))
    monkeypatch.setattr(bench_batch, "nbgrader_autograde", lambda root, unit, n, problems: order.append("nb") or 45.0)
    monkeypatch.setattr(batch, "run_batch", lambda options: order.append(f"jobs{options.jobs}") or run_batch(options))
    assert bench_batch.main(["--students", "3", "--jobs", "2", "--rounds", "2", "--no-ray"]) == 1
    out = capsys.readouterr().out
    assert [m for m, _ in itertools.groupby(order)] == [
        "alone", "nb", "jobs1", "jobs2", "jobs1", "nb", "alone"], order  # jobs2 twice in a row
    assert "3 copies of solutions/l23_online_softmax, 2 round(s)" in out
    assert "batch vs nbgrader autograde: batch --jobs 1 1.50x, batch --jobs 2 1.50x" in out, "90 s against 60 s"


def test_bench_batch_prints_the_ray_row_beside_the_local_ones(monkeypatch, capsys):
    """Issue 31: students/min for nbgrader, --jobs 1, --jobs 2 and Ray side by side in one run (the cluster and
    the grading faked here; tests/grader/test_batch_ray.py runs a real cluster)."""
    import importlib.util

    from grader import api
    from grader.core.results import GradeReport, Status, TestResult, Tier
    from grader.instructor import batch, sandbox
    from grader.tools import bench_batch

    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (requirements-instructor.txt)")
    clock = iter(range(0, 10_000, 30))
    monkeypatch.setattr(bench_batch.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Runtime(REPO_ROOT, sandbox.Isolation.BWRAP))
    result = TestResult("t", "l23_online_softmax", "softmax_fused", Tier.CORRECTNESS, 2.0, Status.PASSED, 2.0)
    monkeypatch.setattr(api, "grade", lambda target, units: GradeReport(str(target), (result,)))
    backends = []

    def run_batch(options, *_, **__):  # batch_ray.run_batch passes its runner
        backends.append(options.backend)
        students = sorted(p.name for p in options.submissions.iterdir())
        return batch.BatchReport(options.out, tuple(batch.Graded(s, 2.0, 2.0, {}) for s in students), 0, "bwrap",
                                 ("l23",))

    monkeypatch.setattr(batch, "run_batch", run_batch)
    monkeypatch.setattr(bench_batch, "nbgrader_autograde", lambda root, unit, n, problems: 45.0)
    monkeypatch.setattr(bench_batch, "_ray_cluster",
                        lambda stack, nodes, jobs: ("127.0.0.1:6379", "batch ray 2 node(s)x1cpu", "ray: faked"))
    assert bench_batch.main(["--students", "3", "--jobs", "2", "--ray-nodes", "2"]) == 0
    out = capsys.readouterr().out
    assert batch.Backend.RAY in backends
    for row in ("nbgrader autograde", "batch --jobs 1", "batch --jobs 2", "batch ray 2 node(s)x1cpu"):
        assert row in out, row
    assert "batch ray 2 node(s)x1cpu vs batch --jobs 2" in out
