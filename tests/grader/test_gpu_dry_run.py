"""Every gpu_perf test, dry-run on the CPU (``DRIPSTONE_GPU_DRY_RUN=1``): small sizes, kernels interpreted,
the host clock; the plugin reports each one "pending GPU" whatever it measured, so a dry run is never
a score. What it proves without a GPU: the timed test's own code runs end to end, on the direct path
(``make grade``) and through batch grading's worker (``worker.on_device``), its checks of what the
device returned can fail, and the score and record are computed from the medians.

Nothing here lists units or tests: the kernel units are the units with gpu_perf tests in the plugin's
manifest (``python -m grader units --tier gpu_perf``), and the baseline a Triton gpu_perf test scores
against is the ``vendor`` of the kernels_ref declaration of its exercise (kernels_ref/*.py,
``REFERENCE``). The .cu kernels cannot be dry-run (NVRTC compiles them here, nothing launches them):
they stay "pending GPU" with their own reason, and .ci/gpu-check grades them on a GPU.
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader import api
from grader.authoring import known
from grader.core.results import Status, Tier
from grader.core.target import REPO_ROOT
from grader.instrument import worker
from grader.judge import perf
from grader.tools import bench

pytestmark = pytest.mark.slow

CUDA_PENDING = "compiled CUDA C++ kernel"  # grader.instrument.cuda's "pending GPU" reason: a .cu exercise


@functools.cache
def gpu_perf_tests() -> dict[str, dict[str, object]]:
    """nodeid -> manifest entry of every gpu_perf test of the course."""
    return {str(t["nodeid"]): t for t in api.manifest() if t["tier"] == Tier.GPU_PERF.value}


@functools.cache
def timed_references() -> dict[tuple[str, str], bench.Reference]:
    """(unit, exercise) -> the kernels_ref declaration its gpu_perf tests time (the Triton exercises)."""
    return {(ref.unit, ex): ref for ref in bench.declarations().values() for ex in ref.exercises}


def kernel_units() -> list[str]:
    """The units with gpu_perf tests, in course order."""
    found = {str(t["unit"]) for t in gpu_perf_tests().values()}
    return [u for u in api.all_units() if u in found]


def busiest_unit() -> str:
    """The kernel unit with the most gpu_perf exercises (L23: Triton and CUDA C++ ones)."""
    exercises = {u: {t["exercise"] for t in gpu_perf_tests().values() if t["unit"] == u} for u in kernel_units()}
    return max(exercises, key=lambda u: len(exercises[u]))


def _gpu_perf(report) -> dict[str, object]:
    return {r.nodeid.split("::")[1]: r for r in report.results if r.tier is Tier.GPU_PERF}


@pytest.fixture
def dry_run(monkeypatch):
    if perf.gpu_available():
        pytest.skip("this machine has a GPU: the gpu_perf tests run for real (make grade)")
    monkeypatch.setenv(perf.DRY_RUN_ENV, "1")


def assert_dry_run_result(r) -> None:
    """A Triton gpu_perf test timed its learner, its declared vendor op and kernels_ref; a .cu one is pending."""
    assert r.status is Status.PENDING_GPU and r.score == 0, f"{r.nodeid}: {r.status} {r.message}\n{r.detail}"
    ref = timed_references().get((r.unit, r.exercise))
    if ref is None:
        assert CUDA_PENDING in r.message, (
            f"{r.nodeid}: exercise {r.exercise} is named by no kernels_ref declaration and is not a CUDA C++ kernel "
            f"(message: {r.message}): add {r.exercise!r} to the exercises of the REFERENCE of the kernels_ref module "
            f"its test times (kernels_ref/*.py, unit {r.unit})"
        )
        return
    assert "dry run on the CPU passed" in r.message, f"{r.nodeid}: {r.message}"
    medians = r.record["medians_ms"]
    assert {"learner", ref.vendor, "kernels_ref"} <= set(medians), (
        f"{r.nodeid}: timed {sorted(medians)}, expected the learner, {ref.vendor!r} (the vendor of the "
        f"REFERENCE naming {r.exercise}) and kernels_ref: fix the test's baselines or the declaration's vendor"
    )
    assert all(ms > 0 for ms in medians.values()) and r.record["device"] == {"device": "cpu (dry run: not a score)"}


@pytest.mark.parametrize("isolated", [False, True], ids=["make-grade", "batch-worker"])
def test_every_gpu_perf_test_runs_dry_on_the_solutions(dry_run, monkeypatch, isolated):
    units = kernel_units() if isolated else [busiest_unit()]  # the direct path is the older, simpler one
    if isolated:
        monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    # only the exercises with gpu_perf tests (their correctness runs first: the tier is gated on it); the course
    # self-test grades the rest
    timed_exercises = sorted({str(t["exercise"]) for t in gpu_perf_tests().values() if t["unit"] in units})
    report = api.grade(REPO_ROOT / "solutions", units=units, exercises=timed_exercises)
    results = {r.nodeid: r for r in report.results if r.tier is Tier.GPU_PERF}
    expected = {n for n, t in gpu_perf_tests().items() if t["unit"] in units}
    assert set(results) == expected, f"graded {sorted(results)}, the manifest has {sorted(expected)}"
    for r in results.values():
        assert_dry_run_result(r)
    if isolated:  # every declaration is the reference of tests that ran
        timed = {(r.unit, r.exercise) for r in results.values()}
        assert set(timed_references()) <= timed, f"declared but not timed: {set(timed_references()) - timed}"
    # a dry run never counts: everything else is graded as usual, full marks on the solutions
    graded = [r for r in report.results if r.tier is not Tier.GPU_PERF and r.status is not Status.PENDING_GPU]
    assert graded and all(r.status is Status.PASSED for r in graded)


def gpu_check_plan(out: Path) -> dict[str, list[str]]:
    """.ci/gpu-check's steps as it would run them (GPU_CHECK_PLAN=1): step name -> its command's words."""
    env = {**os.environ, "GPU_CHECK_PLAN": "1", "OUT": str(out), "PY": sys.executable}
    proc = subprocess.run(["bash", str(REPO_ROOT / ".ci" / "gpu-check")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f".ci/gpu-check with GPU_CHECK_PLAN=1 exited {proc.returncode}:\n{proc.stdout}"
    steps = [line.split(": plan: ", 1) for line in proc.stdout.splitlines() if ": plan: " in line]
    return {name: shlex.split(command) for name, command in steps}


def _values(words: list[str], flag: str) -> list[str]:
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == flag]


def test_every_gpu_perf_test_is_dry_run_here_or_graded_by_the_gpu_check(tmp_path):
    """The dry run above covers the declared (Triton) exercises of every kernel unit; .ci/gpu-check must grade
    every kernel unit on solutions/ (the .cu tests run nowhere else) and batch both kinds in the GPU worker."""
    plan = gpu_check_plan(tmp_path)
    on_gpu = set(_values(plan.get("solutions", []), "-u"))
    left = [n for n, t in gpu_perf_tests().items() if t["unit"] not in on_gpu
            and (t["unit"], t["exercise"]) not in timed_references()]
    assert not left, f"gpu_perf tests neither dry-run nor graded by .ci/gpu-check: {left}"
    missing = sorted(set(kernel_units()) - on_gpu)
    assert not missing, (f".ci/gpu-check grades {sorted(on_gpu)} on the GPU, not the kernel units {missing}: "
                         "its solutions step must take every unit of `python -m grader units --tier gpu_perf`")
    batch = plan.get("batch", [])
    (unit,) = _values(batch, "-u")
    exercises = _values(batch, "-e")
    kinds = {(unit, e) in timed_references() for e in exercises}
    assert unit in kernel_units() and kinds == {True, False}, (
        f".ci/gpu-check's batch step grades {unit} {exercises}: it must take a kernel unit's gpu_perf exercises, "
        "a Triton one (declared in kernels_ref) and a CUDA C++ one, so both GPU paths of the sandbox worker run"
    )


@pytest.mark.parametrize("isolated", [False, True], ids=["make-grade", "batch-worker"])
def test_a_wrong_kernel_fails_the_grader_side_check_of_the_timed_run(dry_run, monkeypatch, isolated):
    """online_no_rescale is wrong wherever a row spans two blocks: the band sent back from the device
    is compared by the grader and the timed test fails (a stub is TODO there, as everywhere)."""
    if isolated:
        monkeypatch.setenv(worker.ISOLATE_ENV, "1")
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
    """Before every timed call the inputs get new values at the same address, and a timed call drawn at random is
    the checked one: a submission that skipped the work in the timed calls returns an old result."""
    import shutil

    if isolated:
        monkeypatch.setenv(worker.ISOLATE_ENV, "1")

    shutil.copytree(REPO_ROOT / "solutions" / "l23_online_softmax", tmp_path / "l23_online_softmax")
    with (tmp_path / "l23_online_softmax" / "softmax.py").open("a") as f:
        f.write(KEEPS_TIMED_RESULTS)
    report = api.grade(tmp_path, units=["l23_online_softmax"], exercises=["softmax_fused"])
    speed = _gpu_perf(report)["test_fused_speed"]
    assert speed.status is Status.FAILED and "softmax_fused on the GPU" in speed.message, speed


class _Timed:
    """A learner function as time_learner sees it: called once checked, then ``timed()`` for the timing."""

    def __init__(self, honest_calls: set[int] | None) -> None:
        self.honest_calls, self.calls, self.kept = honest_calls, 0, None

    def __call__(self, x):
        return x * 2

    def timed(self):
        return self.call_counted

    def call_counted(self, x):
        """Honest on the calls in ``honest_calls`` (all when None), else the first result handed back."""
        self.calls += 1
        if self.honest_calls is None or self.calls in self.honest_calls or self.kept is None:
            self.kept = x * 2
        return self.kept


@pytest.mark.parametrize("drawn", [1, 2, 3])
def test_a_function_that_counts_its_calls_cannot_tell_the_checked_one(monkeypatch, drawn):
    """Every timed call gets new input values and any one of them may be the checked call (drawn from the OS's
    randomness, here each in turn): working only on the calls a learner expects to be checked is caught whenever
    the draw falls elsewhere, and honest work passes every draw."""
    import torch

    from grader.instrument import device

    monkeypatch.setattr(device, "checked_call", lambda warmup, reps: drawn)
    for honest_calls, caught in ((None, False), ({1, 4}, drawn != 3), ({1}, True)):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(64, generator=g)
        fn = _Timed(honest_calls)  # the dry run: 1 warm-up call, then 3 timed ones (calls 2-4)
        y, result = device.time_learner(fn, lambda f, x=x: f(x), [x], baselines={"copy": lambda x=x: x.clone()},
                                        kernels_ref=None, device="cpu", generator=g)
        assert fn.calls == 4 and set(result.medians_ms) == {"learner", "copy"}
        assert torch.equal(y, x * 2) is not caught, (honest_calls, drawn)


def test_the_checked_call_is_a_timed_one_drawn_at_random():
    from grader.instrument import device

    drawn = {device.checked_call(5, 30) for _ in range(400)}
    assert drawn <= set(range(5, 35)) and len(drawn) > 20, sorted(drawn)


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


def test_units_lists_the_units_of_a_tier_and_their_exercises(monkeypatch, capsys):
    """`python -m grader units --tier gpu_perf [--exercises]`, what .ci/gpu-check reads (the manifest faked here)."""
    from grader import cli

    found = {"l22_memory_coalescing": ["transpose"], "l23_online_softmax": ["softmax_fused", "block_sum_shfl"]}
    monkeypatch.setattr(api, "tier_exercises", lambda tier: found if tier == "gpu_perf" else {})
    assert cli.main(["units", "--tier", "gpu_perf"]) == 0
    assert capsys.readouterr().out.split() == list(found)
    assert cli.main(["units", "--tier", "gpu_perf", "--exercises"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "l22_memory_coalescing: transpose", "l23_online_softmax: softmax_fused block_sum_shfl"]
    with pytest.raises(SystemExit):
        cli.main(["units", "--tier", "speed"])
