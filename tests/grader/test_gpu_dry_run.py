"""Every gpu_perf test, dry-run on the CPU (``DRIPSTONE_GPU_DRY_RUN=1``): small sizes, kernels interpreted,
the host clock; the plugin reports each one "pending GPU" whatever it measured, so a dry run is never
a score. What it proves without a GPU: the timed test's own code runs end to end, on the direct path
(``make grade``) and through batch grading's worker (``harness.on_device``), its checks of what the
device returned can fail, and the score and record are computed from the medians.

The .cu kernels cannot be dry-run (NVRTC compiles them here, nothing launches them): they stay
"pending GPU" with their own reason.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from grader import api
from grader.authoring import known
from grader.grading import boundary
from grader.grading.results import Status, Tier
from grader.grading.target import REPO_ROOT
from grader.kernels import perf

pytestmark = pytest.mark.slow

KERNEL_UNITS = ("l22_memory_coalescing", "l23_online_softmax", "l24_gemm", "l25_flash_attention")
CU_TESTS = {"test_block_sum_shfl_speed", "test_sgemm_cu_speed"}  # CUDA C++: pending, never dry-run
VENDOR = {"test_transpose_speed": "copy", "test_fused_speed": "torch.softmax", "test_online_speed": "torch.softmax",
          "test_matmul_speed": "torch.matmul", "test_flash_speed": "sdpa_flash"}


def _gpu_perf(report) -> dict[str, object]:
    return {r.nodeid.split("::")[1]: r for r in report.results if r.tier is Tier.GPU_PERF}


@pytest.fixture
def dry_run(monkeypatch):
    if perf.gpu_available():
        pytest.skip("this machine has a GPU: the gpu_perf tests run for real (make grade)")
    monkeypatch.setenv(perf.DRY_RUN_ENV, "1")


@pytest.mark.parametrize("isolated", [False, True], ids=["make-grade", "batch-worker"])
def test_every_gpu_perf_test_runs_dry_on_the_solutions(dry_run, monkeypatch, isolated):
    units = KERNEL_UNITS if isolated else ("l23_online_softmax",)  # the direct path is the older, simpler one
    if isolated:
        monkeypatch.setenv(boundary.ISOLATE_ENV, "1")
    report = api.grade(REPO_ROOT / "solutions", units=list(units))
    results = _gpu_perf(report)
    l23 = {"test_fused_speed", "test_online_speed", "test_block_sum_shfl_speed"}
    assert {name.split("[")[0] for name in results} == (set(VENDOR) | CU_TESTS if isolated else l23)
    for name, r in results.items():
        assert r.status is Status.PENDING_GPU and r.score == 0, f"{name}: {r.status} {r.message}\n{r.detail}"
        if name in CU_TESTS:
            assert "compiled CUDA C++ kernel" in r.message
            continue
        assert "dry run on the CPU passed" in r.message, f"{name}: {r.message}"
        medians = r.record["medians_ms"]
        assert {"learner", VENDOR[name.split("[")[0]], "kernels_ref"} <= set(medians), medians
        assert all(ms > 0 for ms in medians.values()) and r.record["device"] == {"device": "cpu (dry run: not a score)"}
    # a dry run never counts: everything else is graded as usual, full marks on the solutions
    graded = [r for r in report.results if r.tier is not Tier.GPU_PERF and r.status is not Status.PENDING_GPU]
    assert graded and all(r.status is Status.PASSED for r in graded)


@pytest.mark.parametrize("isolated", [False, True], ids=["make-grade", "batch-worker"])
def test_a_wrong_kernel_fails_the_grader_side_check_of_the_timed_run(dry_run, monkeypatch, isolated):
    """online_no_rescale is wrong wherever a row spans two blocks: the band sent back from the device
    is compared by the grader and the timed test fails (a stub is TODO there, as everywhere)."""
    if isolated:
        monkeypatch.setenv(boundary.ISOLATE_ENV, "1")
    impl = next(k for k in known.known_impls("l23_online_softmax", "known_wrong") if k.path.stem == "online_no_rescale")
    with tempfile.TemporaryDirectory() as tmp:
        wrong = api.grade(known.build_target(impl, Path(tmp)), units=[impl.unit], exercises=["softmax_online"])
    speed = _gpu_perf(wrong)["test_online_speed"]
    assert speed.status is Status.FAILED and "softmax_online on the GPU" in speed.message, speed
    stub = api.grade(REPO_ROOT / "exercises", units=["l23_online_softmax"], exercises=["softmax_fused"])
    assert _gpu_perf(stub)["test_fused_speed"].status is Status.TODO


KEEPS_TIMED_RESULTS = """

_honest, _kept = softmax_fused, {}


def softmax_fused(x, **kwargs):
    \"\"\"Timing cheat: at the timed size, compute once per tensor object, then hand back that result.\"\"\"
    if tuple(x.shape) != (16, 2048):  # the dry run's timed size; graded honestly elsewhere
        return _honest(x, **kwargs)
    if id(x) not in _kept:
        _kept[id(x)] = _honest(x, **kwargs)
    return _kept[id(x)]
"""


@pytest.mark.parametrize("isolated", [False, True], ids=["make-grade", "batch-worker"])
def test_a_result_kept_from_the_timed_calls_fails(dry_run, monkeypatch, tmp_path, isolated):
    """After the timing the inputs get new values at the same address and the timed function runs
    once more: a submission that skipped the work in the timed calls returns the old result."""
    import shutil

    if isolated:
        monkeypatch.setenv(boundary.ISOLATE_ENV, "1")

    shutil.copytree(REPO_ROOT / "solutions" / "l23_online_softmax", tmp_path / "l23_online_softmax")
    with (tmp_path / "l23_online_softmax" / "softmax.py").open("a") as f:
        f.write(KEEPS_TIMED_RESULTS)
    report = api.grade(tmp_path, units=["l23_online_softmax"], exercises=["softmax_fused"])
    speed = _gpu_perf(report)["test_fused_speed"]
    assert speed.status is Status.FAILED and "softmax_fused on the GPU" in speed.message, speed


def test_without_the_dry_run_the_tier_stays_pending_and_untimed(monkeypatch):
    if perf.gpu_available():
        pytest.skip("this machine has a GPU")
    monkeypatch.delenv(perf.DRY_RUN_ENV, raising=False)
    report = api.grade(REPO_ROOT / "solutions", units=["l23_online_softmax"], exercises=["softmax_fused"])
    speed = _gpu_perf(report)["test_fused_speed"]
    assert speed.status is Status.PENDING_GPU and "dry run" not in speed.message and not speed.record


def test_the_released_tree_times_without_kernels_ref(dry_run, tmp_path):
    """A student's release has no kernels_ref/: its gpu_perf tests time the vendor op (the score) alone."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from grader.instructor import release

    built = release.build(tmp_path / "rel")
    shutil.copytree(REPO_ROOT / "solutions" / "l23_online_softmax", tmp_path / "mine" / "l23_online_softmax")
    code = (  # the release's own grader (PYTHONPATH), not this repository's
        "import json, sys; from pathlib import Path; from grader import api\n"
        "r = api.grade(Path(sys.argv[1]), units=['l23_online_softmax'], exercises=['softmax_fused'])\n"
        "print(json.dumps([t.__dict__ for t in r.results if t.tier == 'gpu_perf'], default=str))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "mine")], cwd=built.out,
                          env={**os.environ, "PYTHONPATH": str(built.out)}, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (speed,) = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "dry run on the CPU passed" in speed["message"], speed
    assert set(speed["record"]["medians_ms"]) == {"learner", "torch.softmax"}
    assert "speedup_vs_ref" not in speed["record"]
