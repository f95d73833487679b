"""``make bench``: the reference kernels against the hardware and the vendor, side by side, in one run.

On one GPU, in one process, every row is timed interleaved with its baseline (warm-up, L2 flush,
CUDA events, median: :func:`grader.kernels.perf.bench_interleaved`) and reported as a ratio, never as an
absolute time alone:

* softmax (kernels_ref/softmax.py), transpose (kernels_ref/transpose.py, and the CUDA C++
  kernels_ref/transpose.cu) as a fraction of the measured device-to-device copy bandwidth (bytes
  read + written per second); goal ≥ 0.85;
* matmul (kernels_ref/matmul.py) against ``torch.matmul`` (cuBLAS) at 4096³ bf16; goal ≥ 0.9×;
* attention forward (kernels_ref/attention.py) against SDPA's flash backend at n = 4096, d = 128;
  goal ≥ 0.8×.

Each reference is first checked against torch on the same inputs, so a fast wrong kernel is
reported as wrong, not fast. A reference file that is missing prints "missing". Without a GPU the
command says so and exits 0: there is nothing to measure on a CPU.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from grader.grading import target
from grader.kernels import perf

COPY_GOAL, MATMUL_GOAL, ATTENTION_GOAL = 0.85, 0.9, 0.8
ATTENTION_NAMES = ("flash_attention_fwd", "attention", "flash_attention")


@dataclass(frozen=True)
class Row:
    """One line of the table: a reference kernel's ratio to its baseline, and the goal."""

    name: str
    shape: str
    ratio: float | None  # None: not measured (missing, wrong, or failed), see note
    goal: float
    baseline: str
    note: str = ""

    def line(self) -> str:
        if self.ratio is None:
            return (
                f"  {self.name:<10} {self.shape:<26} {'-':>7}   goal {self.goal:.2f}× {self.baseline:<18} {self.note}"
            )
        verdict = "ok" if self.ratio >= self.goal else "BELOW GOAL"
        return (
            f"  {self.name:<10} {self.shape:<26} {self.ratio:>6.2f}×   goal {self.goal:.2f}× {self.baseline:<18} "
            f"{verdict}  {self.note}"
        )


def _reference(module: str, names: tuple[str, ...]) -> Callable | None:
    """The first of ``names`` in kernels_ref/<module>.py compiled for the GPU, or None if the file is absent."""
    if not (target.REPO_ROOT / "kernels_ref" / f"{module}.py").is_file():
        return None
    mod = target.load_reference(module, interpret=False)
    return next((getattr(mod, n) for n in names if callable(getattr(mod, n, None))), None)


def _time(candidates: dict[str, Callable[[], object]]) -> dict[str, float]:
    return perf.bench_interleaved(candidates, timer=perf.cuda_event_timer, flush=perf.l2_flusher(), reps=30)


def _checked(got, want, *, rtol: float, atol: float) -> str:
    """'' if ``got`` matches ``want``, else a short note (the row is then not timed)."""
    import torch

    got = got[0] if isinstance(got, tuple) else got
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return f"wrong output ({type(got).__name__} {getattr(got, 'shape', '')})"
    err = (got.double() - want.double()).abs()
    bad = err > atol + rtol * want.double().abs()
    return f"WRONG: {int(bad.sum())} elements off (max error {float(err.max()):.3g})" if bool(bad.any()) else ""


def bandwidth_rows() -> list[Row]:
    """softmax and transpose as fractions of the copy bandwidth, on the same bytes."""
    import torch

    rows = []
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    for name, module, fn_name, want_fn in (
        ("softmax", "softmax", "softmax", lambda t: torch.softmax(t, dim=-1)),
        ("transpose", "transpose", "transpose", lambda t: t.t().contiguous()),
    ):
        fn = _reference(module, (fn_name,))
        shape = "8192×8192 fp32"
        if fn is None:
            rows.append(Row(name, shape, None, COPY_GOAL, "vs D2D copy", f"missing: kernels_ref/{module}.py"))
            continue
        note = _checked(fn(x), want_fn(x), rtol=1e-5, atol=1e-6)
        if note:
            rows.append(Row(name, shape, None, COPY_GOAL, "vs D2D copy", note))
            continue
        ms = _time({"ref": lambda fn=fn: fn(x), "copy": lambda: out.copy_(x)})
        gbs = 2 * x.numel() * x.element_size() / (ms["copy"] * 1e-3) / 1e9
        rows.append(
            Row(
                name,
                shape,
                ms["copy"] / ms["ref"],
                COPY_GOAL,
                "vs D2D copy",
                f"copy {gbs:,.0f} GB/s; ref {ms['ref']:.3f} ms",
            )
        )
    return rows


def cuda_transpose_row() -> Row:
    """kernels_ref/transpose.cu (CUDA C++, NVRTC) as a fraction of the copy bandwidth."""
    import torch

    from grader.kernels import cuda

    shape, path = "8192×8192 fp32", target.REPO_ROOT / "kernels_ref" / "transpose.cu"
    if not path.is_file():
        return Row("transpose.cu", shape, None, COPY_GOAL, "vs D2D copy", "missing: kernels_ref/transpose.cu")
    kernel = cuda.compile_cu(path.read_text(), "kernels_ref/transpose.cu", arch=cuda.device_arch())
    x = torch.randn(8192, 8192, device="cuda")
    y, out = torch.empty_like(x), torch.empty_like(x)
    run = lambda: cuda.launch(kernel, "transpose_f32", (256, 256), (32, 8), [x, y, 8192, 8192])
    run()
    torch.cuda.synchronize()
    note = _checked(y, x.t().contiguous(), rtol=0, atol=0)
    if note:
        return Row("transpose.cu", shape, None, COPY_GOAL, "vs D2D copy", note)
    ms = _time({"ref": run, "copy": lambda: out.copy_(x)})
    return Row("transpose.cu", shape, ms["copy"] / ms["ref"], COPY_GOAL, "vs D2D copy", f"ref {ms['ref']:.3f} ms")


def matmul_row() -> Row:
    import torch

    shape = "4096³ bf16"
    fn = _reference("matmul", ("matmul",))
    if fn is None:
        return Row("matmul", shape, None, MATMUL_GOAL, "vs torch.matmul", "missing: kernels_ref/matmul.py")
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    note = _checked(fn(a, b), a.float() @ b.float(), rtol=2e-2, atol=0.5)
    if note:
        return Row("matmul", shape, None, MATMUL_GOAL, "vs torch.matmul", note)
    ms = _time({"ref": lambda: fn(a, b), "torch": lambda: torch.matmul(a, b)})
    tflops = 2 * 4096**3 / (ms["ref"] * 1e-3) / 1e12
    return Row("matmul", shape, ms["torch"] / ms["ref"], MATMUL_GOAL, "vs torch.matmul", f"ref {tflops:,.0f} TFLOP/s")


def attention_row() -> Row:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    shape = "4×32×4096×128 bf16"
    fn = _reference("attention", ATTENTION_NAMES)
    if fn is None:
        return Row("attention", shape, None, ATTENTION_GOAL, "vs SDPA flash", "missing: kernels_ref/attention.py")
    q, k, v = (torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))

    def sdpa():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v)

    note = _checked(fn(q, k, v), sdpa(), rtol=2e-2, atol=2e-2)
    if note:
        return Row("attention", shape, None, ATTENTION_GOAL, "vs SDPA flash", note)
    ms = _time({"ref": lambda: fn(q, k, v), "sdpa": sdpa})
    tflops = 4 * 4 * 32 * 4096**2 * 128 / (ms["ref"] * 1e-3) / 1e12
    return Row(
        "attention", shape, ms["sdpa"] / ms["ref"], ATTENTION_GOAL, "vs SDPA flash", f"ref {tflops:,.0f} TFLOP/s"
    )


def _guarded(make: Callable[[], Row | list[Row]], name: str) -> list[Row]:
    """A row that raised is reported with its error; the other rows still run."""
    try:
        made = make()
    except Exception as exc:  # noqa: BLE001 - one broken reference must not hide the others
        return [Row(name, "", None, 0.0, "", f"ERROR {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")]
    return made if isinstance(made, list) else [made]


def main() -> int:
    """Print the table (or say there is no GPU); 0 whenever it ran."""
    os.environ["TRITON_INTERPRET"] = "0"  # compiled kernels (kernels_ref is loaded with interpret=False too)
    if not perf.gpu_available():
        print(
            "make bench: no CUDA GPU on this machine (torch.cuda.is_available() is False); nothing measured. "
            "Run it on a GPU machine or in the docker image."
        )
        return 0
    record = perf.device_record()
    print(
        f"Dripstone reference kernels on {record.get('gpu')} (driver {record.get('driver_version')}, "
        f"SM clock {record.get('clocks.sm', '?')}, torch {record.get('torch')}, CUDA {record.get('cuda_runtime')})"
    )
    rows = _guarded(bandwidth_rows, "bandwidth") + _guarded(cuda_transpose_row, "transpose.cu")
    rows += _guarded(matmul_row, "matmul") + _guarded(attention_row, "attention")
    print("  kernel     shape                       ratio   goal   baseline")
    for row in rows:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
