"""The device and its clocks: where gpu_perf tests run, whether a GPU is here, the dry run, interleaved timing.

Instruments of the gpu_perf tier (scoring is the judge's: grader/judge/perf.py). All candidates are timed
interleaved in one process (round-robin, the order rotated each round) so clock and thermal drift hit them alike:
warm-up, an L2 flush before every timed call, CUDA events, the median; the record keeps the GPU's name, clocks and
driver. Without a GPU a gpu_perf test is "pending GPU": neither 0 nor a pass.

The timing runs where the learner's code runs (:func:`grader.instrument.worker.on_device`): in ``make grade``
that is the grading process; in batch grading it is the test's worker, forked from a judge that never initialized
CUDA, and only the medians and a band of the outputs come back. ``device="cpu"`` times with the host clock instead:
the engine's dry runs of every gpu_perf test on a machine without a GPU (tests/grader/test_gpu_dry_run.py), never a
score. :func:`gpu_mode` says whether kernels load compiled for the GPU in this process or interpreted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any, Protocol

import pytest

from grader._lazy import torch
from grader.core import target
from grader.instrument import loader

PENDING_GPU = "pending GPU"


class Timer(Protocol):
    """Times one call in milliseconds (CUDA events on a GPU; a fake in the engine's tests)."""

    def __call__(self, fn: Callable[[], object]) -> float: ...


@dataclass(frozen=True)
class PerfResult:
    """Medians in ms per candidate and the ratios the score is computed from."""

    medians_ms: dict[str, float]
    device: dict[str, str] = field(default_factory=dict)

    def speedup(self, candidate: str, over: str) -> float:
        """How many times faster ``candidate`` ran than ``over`` (>1: faster)."""
        return self.medians_ms[over] / self.medians_ms[candidate]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def bench_interleaved(
    candidates: dict[str, Callable[[], object]],
    *,
    timer: Timer,
    flush: Callable[[], None] = lambda: None,
    prepare: Callable[[], None] = lambda: None,
    warmup: int = 5,
    reps: int = 30,
) -> dict[str, float]:
    """Median time of each candidate, timed round-robin with a rotating order; ``prepare`` (new input values) and
    ``flush`` run before every timed call, untimed."""
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    samples: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(reps):
        order = names[rep % len(names):] + names[: rep % len(names)]
        for name in order:
            prepare()
            flush()
            samples[name].append(timer(candidates[name]))
    return {n: statistics.median(s) for n, s in samples.items()}


def cuda_event_timer(fn: Callable[[], object]) -> float:
    """Time one call on the current CUDA stream with events (ms)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def l2_flusher(n_bytes: int = 256 << 20) -> Callable[[], None]:
    """Overwrite a buffer larger than L2 (H100/H200: 50/60 MB) so no candidate reads a warm cache."""
    buf = torch.empty(n_bytes // 4, dtype=torch.int32, device="cuda")
    return lambda: buf.zero_()


def device_record() -> dict[str, str]:
    """GPU name, SM clocks and driver, as nvidia-smi reports them (recorded with every result)."""
    props = torch.cuda.get_device_properties(0)
    record = {"gpu": props.name, "cuda_runtime": str(torch.version.cuda), "torch": torch.__version__}
    query = "driver_version,clocks.sm,clocks.max.sm,clocks.mem"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.splitlines()[0]
        record.update(zip(query.split(","), (v.strip() for v in out.split(",")), strict=False))
    except (OSError, subprocess.SubprocessError, IndexError):
        record["driver_version"] = "unknown (nvidia-smi unavailable)"
    return record


def host_timer(fn: Callable[[], object]) -> float:
    """Time one call with the host clock (ms): the CPU dry runs of the gpu_perf tests."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


NVML_CHECK_ENV = "PYTORCH_NVML_BASED_CUDA_CHECK"


def gpu_available() -> bool:
    """A CUDA device is usable. In batch grading's judge this asks NVML (the env var below, set by the
    sandbox), so the judge never initializes CUDA and the workers it forks can."""
    return torch.cuda.is_available()


def reference(module: str):  # a module or None
    """``kernels_ref/<module>.py`` compiled for the GPU (interpreted in the dry run), or None where the
    tree has none (a student's release, batch grading's snapshot): timed for the record, never scored."""
    if not (target.REPO_ROOT / "kernels_ref" / f"{module}.py").is_file():
        return None
    return loader.load_reference(module, interpret=not kernels_compiled())


DRY_RUN_ENV = "DRIPSTONE_GPU_DRY_RUN"


def dry_run() -> bool:
    """The engine's dry run: gpu_perf tests run on the CPU at small sizes, never scored (the plugin
    reports them "pending GPU" whatever they measure); a failure is a bug of the test or the engine."""
    return os.environ.get(DRY_RUN_ENV) == "1"


def device() -> str:
    """Where gpu_perf tests put their tensors: "cuda", or "cpu" in the dry run."""
    return "cpu" if dry_run() else "cuda"


def size(on_gpu: int, dry: int) -> int:
    """A gpu_perf test's size: ``on_gpu`` when timed, ``dry`` in the CPU dry run (the interpreter is slow)."""
    return dry if dry_run() else on_gpu


def require_gpu() -> None:
    """Skip as "pending GPU" (not 0, not a pass) where no CUDA device is present."""
    if dry_run():
        return
    if not gpu_available():
        pytest.skip(f"{PENDING_GPU}: this tier times kernels on a CUDA device; run `make grade` "
                    "on a machine with a GPU or in the docker image")


def rounds(device: str, *, reps: int = 30, warmup: int = 5) -> tuple[int, int]:
    """(warmup, reps) of a timing on ``device``: the dry run on the CPU times a few calls only."""
    return (min(warmup, 1), min(reps, 3)) if device == "cpu" else (warmup, reps)


def compare(
    candidates: dict[str, Callable[[], object]], *, reps: int = 30, warmup: int = 5, device: str = "cuda",
    prepare: Callable[[], None] = lambda: None,
) -> PerfResult:
    """Time candidates interleaved on the GPU with an L2 flush before each call (host clock on "cpu")."""
    warmup, reps = rounds(device, reps=reps, warmup=warmup)
    if device == "cpu":
        medians = bench_interleaved(candidates, timer=host_timer, prepare=prepare, warmup=warmup, reps=reps)
        return PerfResult(medians, {"device": "cpu (dry run: not a score)"})
    medians = bench_interleaved(
        candidates, timer=cuda_event_timer, flush=l2_flusher(), prepare=prepare, warmup=warmup, reps=reps
    )
    return PerfResult(medians, device_record())


def checked_call(warmup: int, reps: int) -> int:
    """Which of the learner's calls (0-based, warm-up calls first) :func:`time_learner` keeps to be checked: a timed
    one drawn from the operating system's randomness, so nothing in the learner's process can predict it."""
    return warmup + secrets.randbelow(reps)


def _kept(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple | list):
        return type(value)(_kept(v) for v in value)
    return value


def time_learner(
    fn,  # a grader.judge.harness.LearnerFunction (duck-typed: .timed()) (kernel=True)
    call: Callable[[Callable[..., Any]], Any],
    inputs: Sequence[torch.Tensor],
    *,
    baselines: dict[str, Callable[[], object]],
    kernels_ref: tuple[str, Callable[[ModuleType], object]] | None,
    device: str,
    generator: torch.Generator,
) -> tuple[Any, PerfResult]:
    """The gpu_perf protocol of every Triton unit, run where the learner's code runs (an on_device check).

    ``call(f)`` calls ``f`` with the test's inputs (``lambda f: f(x, block_n=64)``). First one call of
    ``fn`` through every graded check (the guards, inputs untouched, not an input); then ``fn.timed()``
    (torch compute still refused, no per-call copies) against the ``baselines`` and, where the tree has
    it, ``kernels_ref = (module, how to call it)``. Before every timed call the ``inputs`` get new values from
    ``generator`` at the same addresses, and the output of ONE timed call, drawn at random (:func:`checked_call`),
    is kept with the input values it ran on; after the timing the inputs hold those values again and that output
    is returned for the grader to check. A result kept across calls, or work skipped on calls the learner's code
    counts, fails there: any timed call may be the checked one.
    """
    call(fn)
    timed = fn.timed()
    warmup, reps = rounds(device)
    check = checked_call(warmup, reps)
    calls, kept = [0], {}

    def learner() -> Any:
        out = call(timed)
        if calls[0] == check:
            kept["out"], kept["inputs"] = _kept(out), [t.detach().clone() for t in inputs]
        calls[0] += 1
        return out

    def new_values() -> None:
        for t in inputs:
            t.normal_(generator=generator)

    candidates = {"learner": learner, **baselines}
    ref = reference(kernels_ref[0]) if kernels_ref else None
    if ref is not None:
        candidates["kernels_ref"] = lambda: kernels_ref[1](ref)
    result = compare(candidates, device=device, prepare=new_values, warmup=warmup, reps=reps)
    for t, values in zip(inputs, kept["inputs"], strict=True):
        t.copy_(values)
    return kept["out"], result


@dataclass
class _KernelMode:
    """How kernels load in this process; changed only by :func:`gpu_mode`, read by :func:`kernels_compiled`."""

    compiled: bool = False  # compiled for the GPU; False: Triton's interpreter on the CPU


_MODE = _KernelMode()


@contextlib.contextmanager
def gpu_mode(on: bool) -> Iterator[None]:
    """Within the block, learner kernels and kernels_ref load compiled for the GPU (``on``) or interpreted.

    The plugin runs gpu_perf tests under ``gpu_mode(True)`` and every other tier under ``gpu_mode(False)``;
    :func:`on_device` checks run under ``gpu_mode(not dry_run)``. The previous mode comes back on exit.
    """
    previous = _MODE.compiled
    _MODE.compiled = on
    try:
        yield
    finally:
        _MODE.compiled = previous


def kernels_compiled() -> bool:
    """Whether kernels load compiled for the GPU here (inside ``gpu_mode(True)``), not interpreted."""
    return _MODE.compiled
