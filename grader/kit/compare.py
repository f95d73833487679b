"""Compare a learner's tensor with the reference and say exactly how they differ.

The grader's own comparison, written here rather than borrowed from ``torch.testing``, so the
message is an instruction (shape, dtype, first mismatching indices, max error against tolerance) and
so that a submission cannot change the verdict by patching a library function.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tolerance:
    """|actual - expected| <= atol + rtol * |expected|, elementwise."""

    atol: float
    rtol: float


# Outputs are rounded to their dtype once, so the floor is the dtype's half-ulp (eps/2) at |y|;
# rtol allows that rounding plus a few ulps of fp32 accumulation, with a margin of about 4x.
# A result computed in a lower precision than asked (fp32 input done in fp16) fails these.
TOLERANCES: dict[torch.dtype, Tolerance] = {
    torch.float64: Tolerance(atol=1e-12, rtol=1e-10),
    torch.float32: Tolerance(atol=1e-7, rtol=1e-5),  # eps 1.2e-7; exp/sum error over 16K terms
    torch.float16: Tolerance(atol=1e-5, rtol=2e-3),  # eps/2 = 4.9e-4; atol covers subnormals
    torch.bfloat16: Tolerance(atol=1e-6, rtol=8e-3),  # eps/2 = 3.9e-3
}


def _fmt_index(flat: int, shape: torch.Size) -> str:
    idx = []
    for size in reversed(shape):
        idx.append(flat % size)
        flat //= size
    return "[" + ", ".join(map(str, reversed(idx))) + "]"


def describe(t: torch.Tensor) -> str:
    """``3×1000 float16``."""
    return f"{'×'.join(map(str, t.shape)) or 'scalar'} {str(t.dtype).removeprefix('torch.')}"


def assert_close(
    actual: object,
    expected: torch.Tensor,
    *,
    what: str,
    dtype: torch.dtype | None = None,
    tol: Tolerance | None = None,
) -> None:
    """Assert ``actual`` has expected's shape, the given dtype, and is within that dtype's tolerance.

    ``expected`` may be computed in a higher precision (fp64) than ``dtype``, the dtype the learner
    must return: the comparison is made in fp64 with ``dtype``'s tolerance.
    """
    dtype = dtype or expected.dtype
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{what}: expected a torch.Tensor, got {type(actual).__name__}")
    if actual.shape != expected.shape:
        raise AssertionError(
            f"{what}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
        )
    if actual.dtype != dtype:
        raise AssertionError(f"{what}: dtype {actual.dtype}, expected {dtype} (return the input's dtype)")
    tol = tol or TOLERANCES[dtype]
    a = actual.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    err = (a - e).abs()
    bad = ~(err <= tol.atol + tol.rtol * e.abs())  # NaN compares False, so NaN is bad
    bad &= ~(torch.isinf(e) & (a == e))
    n_bad = int(bad.sum())
    if n_bad == 0:
        return
    first = int(bad.flatten().nonzero()[0])
    at = _fmt_index(first, a.shape)
    finite = err[~torch.isnan(err)]
    max_err = float(finite.max()) if finite.numel() else float("nan")
    raise AssertionError(
        f"{what}: {n_bad} of {a.numel()} elements differ; first at {at}: got "
        f"{a.flatten()[first].item():.6g}, expected {e.flatten()[first].item():.6g}; max abs error "
        f"{max_err:.3g} vs tolerance atol={tol.atol:g} + rtol={tol.rtol:g}·|expected| "
        f"({str(dtype).removeprefix('torch.')})"
    )
