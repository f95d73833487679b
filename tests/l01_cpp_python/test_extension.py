"""L01 · the C++ extension (ext.cpp, pybind11): scale_inplace writes into the caller's tensor, sum_nogil lets
Python threads run.

Each call goes through ``cpp_function(...).run(check, ...)``: ext.cpp is compiled once per source (cached), and
``check`` (below, trusted) runs in a forked child with the compiled function. It builds its inputs from a seed and
returns plain data; the comparisons happen here. A crash or a hang fails one test; a compile error fails the C++
tests only.
"""

from __future__ import annotations

import math
import sys
import threading
import time

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from grader.kit import assert_rejects, cpp_function, grade

UNIT = "l01_cpp_python"
scale_inplace = cpp_function(UNIT, "ext", "scale_inplace")
sum_nogil = cpp_function(UNIT, "ext", "sum_nogil")
SCALES = (2.5, -0.75, 3.0)  # exact in float32: x * a rounds the same in float and in double


def values(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, generator=g) * 100).to(torch.float32)


def bad_input(kind: str) -> torch.Tensor:
    """What scale_inplace and sum_nogil must refuse, each of them naming ``x``."""
    return {
        "transposed": torch.arange(12.0).view(3, 4).t(),  # a view of the same storage, not contiguous
        "strided": torch.arange(16.0)[::2],
        "float64": torch.arange(8.0, dtype=torch.float64),
        "int32": torch.arange(8, dtype=torch.int32),
        "meta": torch.empty(8, device="meta"),  # not on the CPU: its data_ptr() is 0
    }[kind]


class NewStorage(TorchFunctionMode):
    """Records every torch call during the block whose tensor (or array) result is not in ``x``'s storage."""

    def __init__(self, x: torch.Tensor) -> None:
        super().__init__()
        self.start, self.nbytes = x.untyped_storage().data_ptr(), x.untyped_storage().nbytes()
        self.made: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for r in out if isinstance(out, tuple | list) else (out,):
            if isinstance(r, torch.Tensor) and r.numel() and r.untyped_storage().data_ptr() != self.start:
                self.made.append(f"{getattr(func, '__name__', func)} (a new {r.dtype} tensor of {r.numel()})")
            if isinstance(r, np.ndarray) and r.size and not self.start <= r.ctypes.data < self.start + self.nbytes:
                self.made.append(f"{getattr(func, '__name__', func)} (a NumPy copy)")
        return out


# ---- checks: run in the child beside the compiled extension; plain data back ------------------------------------


def check_scale(f, n: int, seed: int, a: float, offset: int) -> dict:
    base = values(n + offset, seed)
    x = base[offset:]  # a view that starts `offset` elements into its storage: still contiguous
    ptr = x.untyped_storage().data_ptr()
    f(x, a)
    return {"base": base.tolist(), "same_storage": x.untyped_storage().data_ptr() == ptr}


def check_zero_copy(f, n: int, seed: int, a: float) -> dict:
    x = values(n, seed)
    ptr, before = x.untyped_storage().data_ptr(), x.clone()
    with NewStorage(x) as mode:
        f(x, a)
    return {"same_storage": x.untyped_storage().data_ptr() == ptr, "made": mode.made,
            "changed": int((x != before).sum()), "scaled": bool(torch.equal(x, before * a))}


def check_bad_scale(f, kind: str) -> dict:
    x = bad_input(kind)
    before = x.clone() if x.device.type == "cpu" else None
    f(x, 2.0)  # expected to raise ValueError
    return {"returned": True, "caller_changed": before is not None and not torch.equal(before, x)}


def check_sum(f, n: int, seed: int, ones: bool) -> float:
    x = torch.ones(n) if ones else values(n, seed)
    return float(f(x))


def check_bad_sum(f, kind: str) -> float:
    return float(f(bad_input(kind)))


def check_gil(f, n: int, calls: int) -> list[int]:
    """A Python thread counts while sum_nogil runs: how far it got during each call (0: the GIL was held).

    The switch interval is set very long, so the main thread never hands the GIL over by force: the counter
    moves during a call only if the call releases the GIL itself. The counter gives it back at every step
    (``time.sleep(0)``), so the call takes it back at once when it ends."""
    x = torch.ones(n)
    count, stop, started = [0], [False], threading.Event()

    def spin() -> None:
        started.set()
        while not stop[0]:
            count[0] += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    started.wait()
    progress: list[int] = []
    try:
        for _ in range(calls):
            before = count[0]
            f(x)
            progress.append(count[0] - before)
            if progress[-1] > 0:
                break
    finally:
        stop[0] = True
        sys.setswitchinterval(old)
    thread.join()
    return progress


# ---- scale_inplace ---------------------------------------------------------------------------------------------


@grade(scale_inplace, "correctness", points=1,
       hint="Whose memory does your loop write: the caller's tensor, through data_ptr(), or a copy of it?")
@pytest.mark.parametrize(("n", "a", "offset"), [(1, 2.5, 0), (1000, -0.75, 0), (4097, 3.0, 0), (100, 2.5, 3)])
def test_scale_inplace_values(n, a, offset):
    """x *= a in the caller's tensor; a view that starts inside its storage (offset) scales only its own part."""
    got = scale_inplace.run(check_scale, n, n, a, offset)
    base = values(n + offset, n)
    want = torch.cat([base[:offset], base[offset:] * a])
    assert got["same_storage"], f"scale_inplace(x: {n} float32) replaced x's storage: write into x's own buffer"
    diff = torch.nonzero(torch.tensor(got["base"], dtype=torch.float32) != want).flatten().tolist()
    assert not diff, (
        f"scale_inplace(x: {n} float32, a={a}) with x = base[{offset}:]: base[{diff[0]}] = {got['base'][diff[0]]!r}, "
        f"expected {want[diff[0]].item()!r} ({len(diff)} element(s) wrong; the caller's tensor must hold x * a, "
        f"and base[:{offset}] must stay as it was: x.data_ptr() already includes the storage offset)")


@grade(scale_inplace, "correctness", points=4,
       hint="Does any call in your function (contiguous(), to(), clone(), copy_) give back a tensor of its own?")
def test_scale_inplace_zero_copy():
    """The caller's storage changes in place, and no call during scale_inplace makes another tensor's storage."""
    n, a = 3000, 2.5
    got = scale_inplace.run(check_zero_copy, n, 7, a)
    assert got["same_storage"] and got["changed"] > 0 and got["scaled"], (
        f"scale_inplace(x: {n} float32, {a}): the caller's tensor changed in {got['changed']} of {n} elements "
        f"(all expected: x * a), its storage {'kept' if got['same_storage'] else 'replaced'}: write through x's "
        "own data pointer")
    assert not got["made"], (
        f"scale_inplace(x: {n} float32, {a}) made new storage during the call: {', '.join(got['made'][:3])}. "
        "Zero copy: no new tensor, no copy written back; write through x's data pointer")


@grade(scale_inplace, "correctness", points=1, validation=True,
       hint="Which three properties of a tensor must hold before its raw pointer can be read as float*?")
@pytest.mark.parametrize("kind", ["transposed", "float64", "meta"])
def test_scale_inplace_refuses(kind):
    """A non-contiguous, non-float32 or non-CPU x: ValueError naming x (not a silent copy, not a crash)."""
    assert_rejects(lambda which: scale_inplace.run(check_bad_scale, which), (kind,), "x")


# ---- sum_nogil -------------------------------------------------------------------------------------------------


@grade(sum_nogil, "correctness", points=1,
       hint="What is 16777216.0f + 1.0f in float32? Which type should hold the running total?")
@pytest.mark.parametrize(("n", "ones"), [(257, False), (1000, False), (4097, False), (2**24 + 1000, True)])
def test_sum_nogil_values(n, ones):
    """The sum of x, accumulated in double: within (n + 1) * 2^-53 * sum|x| of the exact sum."""
    got = sum_nogil.run(check_sum, n, n, ones)
    x = torch.ones(n) if ones else values(n, n)
    exact = math.fsum(x.double().tolist())
    tol = (n + 1) * 2.0**-53 * float(x.double().abs().sum())
    assert isinstance(got, float) and abs(got - exact) <= tol, (
        f"sum_nogil(x: {n} float32{', all ones' if ones else ''}) = {got!r}, expected {exact!r} (±{tol:.3g}): "
        "a float32 accumulator stops growing at 2^24 = 16,777,216; accumulate in double")


@grade(sum_nogil, "correctness", points=1, validation=True,
       hint="Does sum_nogil check x the way scale_inplace does, before releasing the GIL?")
@pytest.mark.parametrize("kind", ["strided", "meta"])
def test_sum_nogil_refuses(kind):
    """A non-contiguous, non-float32 or non-CPU x: ValueError naming x."""
    assert_rejects(lambda which: sum_nogil.run(check_bad_sum, which), (kind,), "x")


@grade(sum_nogil, "efficiency", points=4,
       hint="While your loop runs, can another Python thread run? What does py::gil_scoped_release do?")
def test_sum_nogil_releases_the_gil():
    """A Python thread makes progress during the call (its iteration count), in at least one of up to 10 calls."""
    n = 2**23
    progress = sum_nogil.run(check_gil, n, 10)
    assert any(p > 0 for p in progress), (
        f"a Python thread made no progress during {len(progress)} calls of sum_nogil(x: {n:,} float32) "
        f"(its iterations per call: {progress}): the GIL stayed held for the whole loop. Read x's pointer and size "
        "first, then run the loop inside a py::gil_scoped_release scope")
