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

from grader import api, boundary, known, perf
from grader.results import Status, Tier
from grader.target import REPO_ROOT

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


def test_without_the_dry_run_the_tier_stays_pending_and_untimed(monkeypatch):
    if perf.gpu_available():
        pytest.skip("this machine has a GPU")
    monkeypatch.delenv(perf.DRY_RUN_ENV, raising=False)
    report = api.grade(REPO_ROOT / "solutions", units=["l23_online_softmax"], exercises=["softmax_fused"])
    speed = _gpu_perf(report)["test_fused_speed"]
    assert speed.status is Status.PENDING_GPU and "dry run" not in speed.message and not speed.record
