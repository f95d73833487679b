"""``make bench``: the reference kernels against the hardware and the vendor, side by side, in one run.

Every row comes from a declaration: each ``kernels_ref/<module>.py`` ends with ``REFERENCE = dict(...)``
(plain data: the audit refuses kernel code that imports the grader), read as a :class:`Reference`:
the unit and the exercises whose gpu_perf tests it is the reference of, the baseline those tests
score against (``vendor``), and its rows here (``bench``: :class:`BenchCase` fields, how to build the
inputs, how to call the reference, what it must return, the baseline and the goal). A new reference
kernel is a new row, with nothing to add to this file; a kernels_ref module without a declaration is
printed as "missing" (and fails tests/grader/test_kernels_ref.py).

On one GPU, in one process, every row is timed interleaved with its baseline (warm-up, L2 flush,
CUDA events, median: :func:`grader.instrument.device.compare`) and reported as a ratio, never as an
absolute time alone. The baselines (:data:`BASELINES`): ``copy``, a device-to-device copy of the first
input (the ratio is the fraction of the copy bandwidth), ``torch.matmul`` (cuBLAS) and ``sdpa_flash``
(SDPA's flash backend). Each reference is first checked against its oracle on the same inputs, so
a fast wrong kernel is reported as wrong, not fast.

Without a GPU the command says so and exits 0: there is nothing to measure on a CPU. The engine's
dry run (``DRIPSTONE_GPU_DRY_RUN=1``, tests/grader/test_bench.py) runs every row on the CPU at the
declarations' small sizes, interpreted and timed with the host clock: never a measurement.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from grader.core import target
from grader.instrument import device as dev
from grader.instrument import loader
from grader.judge import perf

DECLARATION = "REFERENCE"
DECLARATION_HELP = (
    "end it with `REFERENCE = dict(unit=..., exercises=(...), vendor=..., bench=(dict(name=..., inputs=..., run=..., "
    "oracle=..., baseline=..., goal=...),))`: the unit and exercises whose gpu_perf tests time it, the baseline key "
    "those tests score against, and its make bench rows (fields of grader.tools.bench.Reference and BenchCase; "
    "kernels_ref/softmax.py is an example)"
)


@dataclass(frozen=True)
class BenchCase:
    """One row of ``make bench``: a reference kernel on fixed inputs, checked, then timed against a baseline.

    ``inputs(device)`` builds the tensors (on "cpu", the dry run, small ones: the kernels are interpreted);
    ``run(*inputs)`` calls the reference; ``oracle(*inputs)`` is what it must return (for a tuple such
    as ``(o, lse)`` the first element is checked) within ``rtol``/``atol``; ``baseline`` is a key of
    :data:`BASELINES`; ``goal`` the ratio to it asked for; ``flops(*inputs)`` the floating-point
    operations of one call (compute-bound rows report TFLOP/s). ``source``: a ``.cu`` file of
    kernels_ref the row launches, timed on a GPU only; then ``run(launch, *inputs)`` gets
    ``launch(kernel, grid, block, args)``, which runs a kernel of that file compiled with NVRTC.
    """

    name: str
    inputs: Callable[[str], tuple]
    run: Callable[..., object]
    oracle: Callable[..., object]
    baseline: str
    goal: float
    rtol: float = 0.0
    atol: float = 0.0
    flops: Callable[..., float] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.baseline not in BASELINES:
            raise ValueError(f"BenchCase {self.name!r}: baseline {self.baseline!r} is not one of {sorted(BASELINES)}; "
                             "use one of them or add the new one to grader.tools.bench.BASELINES")
        if not self.goal > 0:
            raise ValueError(f"BenchCase {self.name!r}: goal must be a ratio > 0, got {self.goal!r}")


@dataclass(frozen=True)
class Reference:
    """What a kernels_ref module is the reference of: its ``REFERENCE`` dict, read by make bench and the tests.

    ``unit`` and ``exercises``: the gpu_perf tests that time this module as ``kernels_ref`` (the dry
    run, tests/grader/test_gpu_dry_run.py, expects exactly those tests to time it); ``vendor``: the key
    of the baseline those tests score against (``baselines=`` of :func:`grader.instrument.device.time_learner`);
    ``bench``: its rows in ``make bench``.
    """

    unit: str
    exercises: tuple[str, ...]
    vendor: str
    bench: tuple[BenchCase, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.exercises, tuple) or not self.exercises:
            raise ValueError(f"Reference of {self.unit}: exercises must be a non-empty tuple of exercise names")
        if not self.bench or not all(isinstance(c, BenchCase) for c in self.bench):
            raise ValueError(f"Reference of {self.unit}: bench must be a non-empty tuple of BenchCase")


def modules() -> list[str]:
    """The kernels_ref/*.py modules (each must declare a :class:`Reference`)."""
    return sorted(p.stem for p in (target.REPO_ROOT / "kernels_ref").glob("*.py"))


def declaration(module: str, *, interpret: bool = True) -> Reference:
    """``kernels_ref/<module>.py``'s ``REFERENCE``; LookupError saying what to add where it has none."""
    found = getattr(loader.load_reference(module, interpret=interpret), DECLARATION, None)
    if not isinstance(found, dict):
        raise LookupError(f"kernels_ref/{module}.py has no {DECLARATION} dict (found {type(found).__name__}): "
                          f"{DECLARATION_HELP}")
    try:
        return Reference(**{**found, "bench": tuple(BenchCase(**case) for case in found.get("bench", ()))})
    except (TypeError, ValueError) as exc:
        raise LookupError(f"kernels_ref/{module}.py's {DECLARATION}: {exc}; {DECLARATION_HELP}") from None


def declarations(*, interpret: bool = True) -> dict[str, Reference]:
    """``{module: Reference}`` of every kernels_ref module; LookupError naming the first without one."""
    return {m: declaration(m, interpret=interpret) for m in modules()}


# ---- the table ---------------------------------------------------------------------------------------


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
                f"  {self.name:<12} {self.shape:<24} {'-':>7}   goal {self.goal:.2f}× {self.baseline:<18} {self.note}"
            )
        verdict = "ok" if self.ratio >= self.goal else "BELOW GOAL"
        return (
            f"  {self.name:<12} {self.shape:<24} {self.ratio:>6.2f}×   goal {self.goal:.2f}× {self.baseline:<18} "
            f"{verdict}  {self.note}"
        )


def _copy(x, *_):  # tensors in, a call out
    out = x.new_empty(x.shape)
    return lambda: out.copy_(x)


def _matmul(a, b):
    import torch

    return lambda: torch.matmul(a, b)


def _sdpa_flash(q, k, v):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = SDPBackend.FLASH_ATTENTION if q.is_cuda else SDPBackend.MATH  # the CPU dry run has no flash

    def sdpa():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v)

    return sdpa


# baseline key -> (how the table names it, how to build its call from a row's inputs)
BASELINES: dict[str, tuple[str, Callable[..., Callable[[], object]]]] = {
    "copy": ("vs D2D copy", _copy),
    "torch.matmul": ("vs torch.matmul", _matmul),
    "sdpa_flash": ("vs SDPA flash", _sdpa_flash),
}

DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def describe(inputs: tuple) -> str:
    """``8192×8192 fp32``: the first input's shape and dtype."""
    x = inputs[0]
    return "×".join(map(str, x.shape)) + " " + DTYPES.get(str(x.dtype).removeprefix("torch."), str(x.dtype))


def _checked(got, want, *, rtol: float, atol: float) -> str:  # tensors or (o, lse) tuples
    """'' if ``got`` matches ``want``, else a short note (the row is then not timed)."""
    import torch

    got = got[0] if isinstance(got, tuple) else got
    want = want[0] if isinstance(want, tuple) else want
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return f"wrong output ({type(got).__name__} {getattr(got, 'shape', '')})"
    err = (got.double() - want.double()).abs()
    bad = err > atol + rtol * want.double().abs()
    return f"WRONG: {int(bad.sum())} elements off (max error {float(err.max()):.3g})" if bool(bad.any()) else ""


def _rate(case: BenchCase, inputs: tuple, ms: dict[str, float]) -> str:
    if case.flops is not None:
        return f"ref {case.flops(*inputs) / (ms['ref'] * 1e-3) / 1e12:,.1f} TFLOP/s"
    moved = 2 * inputs[0].numel() * inputs[0].element_size()  # read once, written once
    return f"ref {moved / (ms['ref'] * 1e-3) / 1e9:,.0f} GB/s ({ms['ref']:.3f} ms)"


def _cu_runner(case: BenchCase) -> Callable[..., object]:
    """``case.run`` with a ``launch`` bound to kernels_ref/<source> compiled for this GPU."""
    from grader.instrument import cuda

    path = target.REPO_ROOT / "kernels_ref" / case.source
    compiled = cuda.compile_cu(path.read_text(), f"kernels_ref/{case.source}", arch=cuda.device_arch())
    return functools.partial(case.run, functools.partial(cuda.launch, compiled))


def measure(case: BenchCase, device: str) -> Row:
    """Check ``case``'s reference against its oracle, then time it against its baseline on ``device``."""
    label, make_baseline = BASELINES[case.baseline]
    inputs = case.inputs(device)
    shape = describe(inputs)
    if case.source and device != "cuda":
        return Row(case.name, shape, None, case.goal, label, f"{perf.PENDING_GPU}: kernels_ref/{case.source} "
                   "launches on a GPU only")
    run = _cu_runner(case) if case.source else case.run
    note = _checked(run(*inputs), case.oracle(*inputs), rtol=case.rtol, atol=case.atol)
    if note:
        return Row(case.name, shape, None, case.goal, label, note)
    ms = perf.compare({"ref": lambda: run(*inputs), "baseline": make_baseline(*inputs)}, device=device).medians_ms
    return Row(case.name, shape, ms["baseline"] / ms["ref"], case.goal, label, _rate(case, inputs, ms))


def _guarded(make: Callable[[], Row], name: str) -> Row:
    """A row that raised is reported with its error; the other rows still run."""
    try:
        return make()
    except Exception as exc:  # one broken reference must not hide the others
        first = (str(exc) or repr(exc)).splitlines()[0][:160]
        return Row(name, "", None, 0.0, "", f"ERROR {type(exc).__name__}: {first}")


def rows(device: str) -> list[Row]:
    """One row per declared BenchCase of every kernels_ref module, in module order ("missing" where undeclared)."""
    out = []
    for module in modules():
        try:
            ref = declaration(module, interpret=device != "cuda")
        except (LookupError, target.SubmissionError) as exc:
            out.append(Row(module, "", None, 0.0, "", f"missing: {str(exc)[:160]}"))
            continue
        out += [_guarded(lambda case=case: measure(case, device), case.name) for case in ref.bench]
    return out


def main() -> int:
    """Print the table (or say there is no GPU); 0 whenever it ran."""
    if perf.dry_run():
        device = "cpu"
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the kernels run interpreted
        print("Dripstone reference kernels: dry run on the CPU (interpreted, host clock): not a measurement")
    elif not perf.gpu_available():
        print(
            "make bench: no CUDA GPU on this machine (torch.cuda.is_available() is False); nothing measured. "
            "Run it on a GPU machine or in the docker image."
        )
        return 0
    else:
        device = "cuda"
        os.environ["TRITON_INTERPRET"] = "0"  # compiled kernels (kernels_ref is loaded with interpret=False too)
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False  # the oracles' fp32 matmuls in full precision
        record = dev.device_record()
        print(
            f"Dripstone reference kernels on {record.get('gpu')} (driver {record.get('driver_version')}, "
            f"SM clock {record.get('clocks.sm', '?')}, torch {record.get('torch')}, CUDA {record.get('cuda_runtime')})"
        )
    table = rows(device)
    if not table:
        print("  no kernels_ref/*.py in this tree (a learner's release has none): nothing to compare")
        return 0
    print("  kernel       shape                      ratio   goal   baseline")
    for row in table:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
