"""The gpu_perf tier: time the learner's kernel against the vendor op and ``kernels_ref`` on a GPU.

All candidates are timed interleaved in one process (round-robin, the order rotated each round) so
clock and thermal drift hit them alike: warm-up, an L2 flush before every timed call, CUDA events,
the median. The score comes from the ratio of medians, never from an absolute time; the record keeps
the GPU's name, clocks and driver. Without a GPU the test is "pending GPU": neither 0 nor a pass.
"""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Protocol

import pytest

from grader._lazy import torch

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


def score_fraction(speedup_vs_vendor: float, *, full_at: float) -> float:
    """Share of the points: linear in the speed ratio, full at ``full_at`` × the vendor's speed."""
    if speedup_vs_vendor <= 0 or full_at <= 0:
        raise ValueError("speed ratios must be positive")
    return max(0.0, min(1.0, speedup_vs_vendor / full_at))


def bench_interleaved(
    candidates: dict[str, Callable[[], object]],
    *,
    timer: Timer,
    flush: Callable[[], None] = lambda: None,
    warmup: int = 5,
    reps: int = 30,
) -> dict[str, float]:
    """Median time of each candidate, timed round-robin with a rotating order."""
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    samples: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(reps):
        order = names[rep % len(names):] + names[: rep % len(names)]
        for name in order:
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


def gpu_available() -> bool:
    return torch.cuda.is_available()


def require_gpu() -> None:
    """Skip as "pending GPU" (not 0, not a pass) where no CUDA device is present."""
    if not gpu_available():
        pytest.skip(f"{PENDING_GPU}: this tier times kernels on a CUDA device; run `make grade` "
                    "on a machine with a GPU or in the docker image")


def compare(
    candidates: dict[str, Callable[[], object]], *, reps: int = 30, warmup: int = 5
) -> PerfResult:
    """Time candidates interleaved on the GPU with an L2 flush before each call."""
    medians = bench_interleaved(
        candidates, timer=cuda_event_timer, flush=l2_flusher(), warmup=warmup, reps=reps
    )
    return PerfResult(medians, device_record())

