"""The gpu_perf tier's scoring: a timed speed ratio becomes a share of the points, with what it was based on.

What is timed and how is the device's (grader/instrument/device.py: interleaved medians, an L2 flush, CUDA events,
the dry run); this module turns a :class:`PerfResult` into points. The score comes from the ratio of medians, never
from an absolute time. The device's names are re-exported here for the tests' ``perf`` protocol
(``perf.time_learner``, ``perf.size``, ``perf.device``, ``perf.require_gpu``).
"""

from __future__ import annotations

from collections.abc import Callable

from grader.instrument.device import (  # noqa: F401  (the tests' perf protocol, one name space)
    DRY_RUN_ENV,
    PENDING_GPU,
    PerfResult,
    compare,
    device,
    dry_run,
    gpu_available,
    reference,
    require_gpu,
    size,
    time_learner,
)


def score_fraction(speedup_vs_vendor: float, *, full_at: float) -> float:
    """Share of the points: linear in the speed ratio, full at ``full_at`` × the vendor's speed."""
    if speedup_vs_vendor <= 0 or full_at <= 0:
        raise ValueError("speed ratios must be positive")
    return max(0.0, min(1.0, speedup_vs_vendor / full_at))


def speedups_vs_ref(result: PerfResult, candidate: str = "learner") -> dict[str, float]:
    """``{"speedup_vs_ref": x}`` where kernels_ref was timed, else nothing (for the award's record)."""
    if "kernels_ref" not in result.medians_ms:
        return {}
    return {"speedup_vs_ref": result.speedup(candidate, over="kernels_ref")}


def award_speedup(
    award: Callable[..., None],
    result: PerfResult | dict,
    *,
    over: str,
    full_at: float,
    label: str | None = None,
    **record: object,
) -> float:
    """Score a gpu_perf test from the learner's speed ratio over ``over`` and record what it was based on.

    ``award`` is the plugin's fixture; ``result`` a :class:`PerfResult` or its ``as_dict()`` (what an
    ``on_device`` check sends back). Full marks at ``full_at`` (a fraction of the baseline's speed),
    partial below (:func:`score_fraction`). The record names the ratio (``label``, by default
    ``speedup_vs_<over>``), the ratio to kernels_ref where it was timed, the medians, the GPU and any
    extra ``record`` fields (``tflops=...``).
    """
    result = result if isinstance(result, PerfResult) else PerfResult(**result)
    ratio = result.speedup("learner", over=over)
    award(score_fraction(ratio, full_at=full_at), **record, **{label or f"speedup_vs_{over}": ratio},
          **speedups_vs_ref(result), **result.as_dict())
    return ratio
