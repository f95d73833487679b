"""Compare a learner's tensor with the reference and say exactly how they differ.

The grader's own comparison, written here rather than borrowed from ``torch.testing``, so the
message is an instruction (shape, dtype, first mismatching indices, max error against tolerance) and
so that a submission cannot change the verdict by patching a library function.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


class ValuesDiffer(AssertionError):
    """``assert_close`` failed; ``failure_kind`` says how, for the plugin's hint: ``"nan"`` (NaN or inf where the
    reference differs), ``"values"`` (finite values out of tolerance) or ``"type"`` (not a tensor, wrong shape or
    dtype)."""

    def __init__(self, message: str, kind: str, table: str = ""):
        super().__init__(message)
        self.failure_kind = kind
        self.table = table  # the first mismatching elements, expected and actual side by side


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
        raise ValuesDiffer(f"{what}: expected a torch.Tensor, got {type(actual).__name__}", "type")
    if actual.shape != expected.shape:
        raise ValuesDiffer(f"{what}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}", "type")
    if actual.dtype != dtype:
        raise ValuesDiffer(f"{what}: dtype {actual.dtype}, expected {dtype} (return the input's dtype)", "type")
    tol = tol or TOLERANCES[dtype]
    a = actual.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    err = (a - e).abs()
    bad = ~(err <= tol.atol + tol.rtol * e.abs())  # NaN compares False, so NaN is bad
    bad &= ~(torch.isinf(e) & (a == e))
    if not bad.any():
        return
    nonfinite = bad & ~torch.isfinite(a)  # NaN or inf where the reference has something else
    finite_bad = bad & ~nonfinite
    parts = []
    if nonfinite.any():
        parts.append(_first(f"{int(nonfinite.sum())} of {a.numel()} elements are NaN or inf", nonfinite, a, e))
    if finite_bad.any():
        max_err = float(err[finite_bad].max())
        parts.append(_first(f"{int(finite_bad.sum())} of {a.numel()} elements differ", finite_bad, a, e)
                     + f"; max abs error {max_err:.3g} vs tolerance atol={tol.atol:g} + rtol={tol.rtol:g}·|expected| "
                       f"({str(dtype).removeprefix('torch.')})")
    raise ValuesDiffer(f"{what}: " + "; ".join(parts), "nan" if nonfinite.any() else "values", side_by_side(a, e, bad))


def side_by_side(a: torch.Tensor, e: torch.Tensor, bad: torch.Tensor, rows: int = 8) -> str:
    """The first ``rows`` mismatching elements: index, expected, actual, |difference|, one per line."""
    flat = bad.flatten().nonzero().flatten()[:rows].tolist()
    lines = [f"{'index':>16}  {'expected':>14}  {'actual':>14}  {'|difference|':>12}"]
    for i in flat:
        x, y = e.flatten()[i].item(), a.flatten()[i].item()
        lines.append(f"{_fmt_index(i, a.shape):>16}  {x:>14.6g}  {y:>14.6g}  {abs(y - x):>12.3g}")
    more = int(bad.sum()) - len(flat)
    if more:
        lines.append(f"{'':>16}  ... and {more:,} more")
    return "\n".join(lines)


def _first(head: str, mask: torch.Tensor, a: torch.Tensor, e: torch.Tensor) -> str:
    """``head; first at [i, j]: got x, expected y`` for the first True element of ``mask``."""
    first = int(mask.flatten().nonzero()[0])
    return (f"{head}; first at {_fmt_index(first, a.shape)}: got {a.flatten()[first].item():.6g}, "
            f"expected {e.flatten()[first].item():.6g}")
