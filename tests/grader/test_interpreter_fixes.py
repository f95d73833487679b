"""grader.instrument.interpreter_fixes: bf16 kernels under the pinned interpreter give what torch (and a GPU)
compute."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from grader.instrument import interpreter_fixes

interpreter_fixes.install()
N = 64


@triton.jit
def _bf16_ops(x_ptr, y_ptr, out_ptr, red_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x, y = tl.load(x_ptr + i), tl.load(y_ptr + i)
    tl.store(out_ptr + i, x + y)
    tl.store(out_ptr + N + i, x * y)
    tl.store(out_ptr + 2 * N + i, x - y)
    tl.store(out_ptr + 3 * N + i, tl.maximum(x, y))
    tl.store(out_ptr + 4 * N + i, tl.where(x > y, x, y))
    tl.store(out_ptr + 5 * N + i, x * 0.1)  # needs get_bf16; Triton rounds 0.1 to bf16 first
    tl.store(out_ptr + 6 * N + i, (x.to(tl.float32) / 3.0).to(tl.bfloat16))  # fp32 -> bf16 rounds to nearest even
    tl.store(out_ptr + 7 * N + i, x.to(tl.float16).to(tl.bfloat16))
    tl.store(red_ptr, tl.sum(x, 0))
    tl.store(red_ptr + 1, tl.max(x, 0))
    tl.store(red_ptr + 2, tl.min(x, 0))


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr):
    r = tl.arange(0, M)
    a = tl.load(a_ptr + r[:, None] * M + r[None, :])
    b = tl.load(b_ptr + r[:, None] * M + r[None, :])
    tl.store(c_ptr + r[:, None] * M + r[None, :], tl.dot(a, b))


def test_bf16_elementwise_casts_and_reductions_match_torch():
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(N, generator=g) * 3).bfloat16()
    y = (torch.randn(N, generator=g) * 3).bfloat16()
    out, red = torch.empty(8 * N, dtype=torch.bfloat16), torch.empty(3, dtype=torch.bfloat16)
    _bf16_ops[(1,)](x, y, out, red, N=N)
    tenth = torch.tensor(0.1).bfloat16()
    want = torch.stack([x + y, x * y, x - y, torch.maximum(x, y), torch.where(x > y, x, y), x * tenth,
                        (x.float() / 3).bfloat16(), x.half().bfloat16()])
    names = ["add", "mul", "sub", "maximum", "where(>)", "times a float", "fp32->bf16 cast", "fp16->bf16 cast"]
    for name, got, exp in zip(names, out.view(8, N), want, strict=True):
        assert torch.equal(got, exp), f"bf16 {name}: {got[:4]} vs torch {exp[:4]}"
    assert torch.equal(red[1:], torch.stack([x.max(), x.min()])), f"bf16 max/min: {red[1:]}"
    assert abs(red[0].float() - x.float().sum()) <= 2 ** -7 * x.float().abs().sum(), f"bf16 sum: {red[0]}"


def test_bf16_dot_accumulates_the_values_not_the_bits():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(16, 16, generator=g).bfloat16(), torch.randn(16, 16, generator=g).bfloat16()
    c = torch.empty(16, 16, dtype=torch.float32)
    _dot[(1,)](a, b, c, M=16)
    exact = a.double() @ b.double()
    assert (c.double() - exact).abs().max() < 1e-4, f"bf16 tl.dot: max error {(c.double() - exact).abs().max()}"


def test_fp16_is_left_alone():
    x = torch.tensor([1.5, -2.0, 65504.0, 2.0**-24] * 16, dtype=torch.float16)
    out, red = torch.empty(8 * N, dtype=torch.float16), torch.empty(3, dtype=torch.float16)
    y = torch.ones(N, dtype=torch.float16)
    _bf16_ops[(1,)](x, y, out, red, N=N)
    assert torch.equal(out[:N], x + y) and torch.equal(out[N : 2 * N], x * y)


@triton.jit
def _helper_max(x):  # a jit helper called from a kernel: the interpreter redirects tl's builtins again here
    return tl.max(x, 0)


@triton.jit
def _row_max(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    tl.store(out_ptr + row, _helper_max(tl.load(x_ptr + row * N + tl.arange(0, N))))


def test_builtins_listed_once_are_triton_s_own_and_restored_after_each_launch():
    """The speed fix lists each package's builtins once: the same names the interpreter's own listing finds,
    redirected during a launch (nested helpers included) and put back after it."""
    import inspect

    from triton.runtime import interpreter

    pkgs = (tl, tl.core, tl.tensor, tl.math, tl.core.tensor_descriptor_base)
    before = {id(p): {n: m for n, m in inspect.getmembers(p) if tl.core.is_builtin(m)} for p in pkgs}
    assert all(before.values()) and "load" in before[id(tl)] and "exp" in before[id(tl.math)]
    seen = {}
    redirect = interpreter._patch_attr

    def spy(obj, name, member, builder, scope):
        seen.setdefault(id(obj), set()).add(name)
        return redirect(obj, name, member, builder, scope)

    interpreter._patch_attr = spy
    try:
        x = torch.randn(3, N)
        out = torch.empty(3)
        _row_max[(3,)](x, out, N=N)
    finally:
        interpreter._patch_attr = redirect
    assert torch.equal(out, x.max(dim=1).values)
    for p in pkgs:
        if id(p) in seen:
            assert seen[id(p)] == set(before[id(p)]), p
        assert {n: m for n, m in inspect.getmembers(p) if tl.core.is_builtin(m)} == before[id(p)], p
    assert id(tl) in seen and id(tl.tensor) in seen


@triton.jit
def _scale_int32(x_ptr, out_ptr, k, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, tl.load(x_ptr + i) * k)


def test_int32_overflow_check_runs_only_where_its_assert_would():
    """Skipping the check changes nothing observable: with debug off (the interpreter's only setting) int32
    products wrap, as the check's discarded assert let them before and as a GPU does; with debug on the check
    still raises."""
    import dataclasses

    from triton.runtime import interpreter

    x = torch.tensor([1, 2, 3, 2**20] * (N // 4), dtype=torch.int32)
    out = torch.empty_like(x)
    semantic, builder = interpreter.interpreter_semantic, interpreter.interpreter_builder
    asserts = []
    original_assert = semantic.device_assert
    semantic.device_assert = lambda *a, **k: asserts.append(a) or original_assert(*a, **k)
    try:
        _scale_int32[(1,)](x, out, 2**12, N=N)
    finally:
        del semantic.device_assert
    assert not asserts, f"the overflow check ran {len(asserts)} time(s) with debug off: its assert is skipped anyway"
    assert torch.equal(out, (x.long() * 2**12).to(torch.int32)), "int32 products must wrap as on the GPU"
    assert out[3] == 0, "2**20 * 2**12 wraps to 0 in int32"
    options = builder.options
    assert not options.debug, "the interpreter's options changed: re-check _skip_discarded_overflow_checks"
    builder.options = dataclasses.replace(options, debug=True)
    try:
        raised = None
        try:
            _scale_int32[(1,)](x, out, 2**12, N=N)
        except Exception as exc:  # the interpreter wraps the kernel's AssertionError
            raised = exc
        assert raised is not None and "overflow detected" in repr(raised), f"debug on, no overflow error: {raised!r}"
        _scale_int32[(1,)](x, out, 2, N=N)  # no overflow: no error with the check on
        assert torch.equal(out, x * 2)
    finally:
        builder.options = options
