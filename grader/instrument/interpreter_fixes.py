"""bfloat16 in the pinned Triton interpreter: make it compute what the GPU computes.

Grading a kernel on the CPU is only fair if the interpreter gets the kernel's numbers right. The
pinned release (triton 3.7.1) keeps bf16 data as raw uint16 bit patterns, and only its bf16 <-> fp32
casts know it. Everything else treats the bits as integers (measured on 3.7.1):

* ``tl.dot`` of bf16 tiles multiplies the integers: a bf16 matmul is off by ~1e15;
* bf16 ``+ - * /``, ``exp`` and friends, comparisons, ``tl.maximum``, ``tl.sum`` and ``tl.max``
  compute on the bit patterns (1.5 + 2.0 gives NaN; -2.0 > 0.5 is True);
* fp32 -> bf16 rounds toward zero (the GPU rounds to nearest even), and bf16 <-> fp16/int casts
  convert the integers;
* a bf16 tensor times a Python float (``q * sm_scale``) raises AttributeError: no ``get_bf16``.

The fix routes every such operation through fp32: bf16 operands are widened exactly (a bf16 is the
top half of an fp32), the operation runs in fp32, and a bf16 result is rounded to nearest even,
as a GPU does for one bf16 operation. fp16, fp32 and integer operations are not touched.
:func:`install` checks that every method it wraps exists; tests/grader/test_interpreter_fixes.py
holds each case above against torch, so a triton upgrade that changes them is noticed.

One fix is for speed only: at every launch and at every call of a ``@triton.jit`` helper from a kernel
(``tl.max``'s combine function in each program instance), the interpreter lists every member of ``tl``,
``tl.tensor``, ``tl.math`` and ``tl.core`` with ``inspect.getmembers`` to find the builtins it redirects:
about a third of a small kernel's launch. The builtins' names are listed once per package instead; each
is still looked up and redirected as before.

Another is for speed only too: every int32 ``+``, ``-`` and ``*`` in a kernel (offset arithmetic) runs
Triton's overflow check, which widens both operands to int64, recomputes the operation, compares it with
the int32 range and hands the result to ``device_assert``, which the interpreter skips unless
``debug`` is on (it never is: ``InterpreterOptions()``), so the check's work is thrown away: ~40 % of
L23's kernel time. The interpreter's semantic object skips the check while ``debug`` is off; with
``debug`` on it runs as before.

And one for the learner's feedback: the interpreter's ``tl.static_assert`` is a bare ``assert cond, msg``, so a
failure read as the message alone, without the kernel's line (a compiled kernel's CompilationError names it).
Here the AssertionError names the learner's file and line and shows the call.
"""

from __future__ import annotations

import inspect
import linecache
import sys
from pathlib import Path

import numpy as np
import torch

_installed = False
_COMPARISONS = frozenset([np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal])
_BUILDER_HOOKS = ("binary_op", "unary_op", "create_fma", "create_rsqrt", "create_dot", "cast_impl",
                  "create_fp_to_fp")


def bf16_bits_to_fp32(bits: np.ndarray) -> np.ndarray:
    """Raw bf16 bit patterns (uint16) → the same values as fp32 (exact)."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def fp32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """fp32 values → bf16 bit patterns, rounded to nearest even (torch's conversion, NaN kept)."""
    t = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(torch.bfloat16)
    return t.view(torch.int16).numpy().view(np.uint16)


def _wrap_builder(builder_cls, handle_cls, tl, rtne) -> None:
    bf16, fp32 = tl.bfloat16, tl.float32
    orig = {name: getattr(builder_cls, name) for name in _BUILDER_HOOKS}

    def is_bf16(h) -> bool:
        return h.dtype.scalar == bf16

    def widen(h):
        return handle_cls(bf16_bits_to_fp32(h.data), fp32) if is_bf16(h) else h

    def narrow(h):
        return handle_cls(fp32_to_bf16_bits(np.asarray(h.data, dtype=np.float32)), bf16)

    def binary_op(self, lhs, rhs, op):
        if not (is_bf16(lhs) or is_bf16(rhs)):
            return orig["binary_op"](self, lhs, rhs, op)
        out = orig["binary_op"](self, widen(lhs), widen(rhs), op)
        return out if op in _COMPARISONS else narrow(out)

    def unary_op(self, arg, op):
        return narrow(orig["unary_op"](self, widen(arg), op)) if is_bf16(arg) else orig["unary_op"](self, arg, op)

    def create_fma(self, x, y, z):
        if not any(map(is_bf16, (x, y, z))):
            return orig["create_fma"](self, x, y, z)
        return narrow(orig["create_fma"](self, widen(x), widen(y), widen(z)))

    def create_rsqrt(self, arg):
        return narrow(orig["create_rsqrt"](self, widen(arg))) if is_bf16(arg) else orig["create_rsqrt"](self, arg)

    def create_dot(self, a, b, d, *args, **kwargs):
        out = orig["create_dot"](self, widen(a), widen(b), widen(d), *args, **kwargs)
        return narrow(out) if is_bf16(d) else out

    def cast_impl(self, src, dst_type):
        src_bf16, dst_bf16 = is_bf16(src), dst_type.scalar == bf16
        if src_bf16 == dst_bf16:
            return orig["cast_impl"](self, src, dst_type)
        if dst_bf16:  # anything → fp32 (the interpreter's own cast), then round to nearest even
            return narrow(orig["cast_impl"](self, src, fp32) if src.dtype.scalar != fp32 else src)
        return orig["cast_impl"](self, widen(src), dst_type)  # bf16 → fp32 exactly, then on

    def create_fp_to_fp(self, src, dst_type, rounding_mode):
        if dst_type.scalar == bf16 and rounding_mode == rtne:
            return cast_impl(self, src, dst_type)
        if is_bf16(src):
            return orig["create_fp_to_fp"](self, widen(src), dst_type, rounding_mode)
        return orig["create_fp_to_fp"](self, src, dst_type, rounding_mode)

    def get_bf16(self, value):  # missing in 3.7.1: `x_bf16 * 0.5` raised AttributeError
        return narrow(handle_cls(np.array([value], dtype=np.float32), fp32))

    builder_cls.get_bf16 = get_bf16
    for name, fn in dict(binary_op=binary_op, unary_op=unary_op, create_fma=create_fma, create_rsqrt=create_rsqrt,
                         create_dot=create_dot, cast_impl=cast_impl, create_fp_to_fp=create_fp_to_fp).items():
        setattr(builder_cls, name, fn)


def _wrap_reductions(reduce_cls, tl) -> None:
    """tl.sum / tl.max / tl.min / argmax of bf16: reduce the fp32 values, round the result once."""
    orig_sum, orig_min_max = reduce_cls.sum, reduce_cls.min_max

    def as_fp32(t):
        return tl.core.tensor(type(t.handle)(bf16_bits_to_fp32(t.handle.data), tl.float32),
                              t.type.with_element_ty(tl.float32) if t.type.is_block() else tl.float32)

    def to_bf16(t):
        return tl.core.tensor(type(t.handle)(fp32_to_bf16_bits(t.handle.data), tl.bfloat16),
                              t.type.with_element_ty(tl.bfloat16) if t.type.is_block() else tl.bfloat16)

    def is_bf16(t) -> bool:
        return t.dtype == tl.bfloat16

    def sum_(self, input):
        return to_bf16(orig_sum(self, as_fp32(input))) if is_bf16(input) else orig_sum(self, input)

    def min_max(self, input, val_reduce_op, idx_reduce_op=None):
        val = input[0] if isinstance(input, tuple) else input
        if not is_bf16(val):
            return orig_min_max(self, input, val_reduce_op, idx_reduce_op)
        out = orig_min_max(self, as_fp32(val), val_reduce_op, idx_reduce_op)
        if val_reduce_op is None:
            return out
        return (to_bf16(out[0]), out[1]) if isinstance(out, tuple) else to_bf16(out)

    reduce_cls.sum, reduce_cls.min_max = sum_, min_max


def _list_builtins_once(interpreter, tl) -> None:
    """``interpreter._patch_builtin`` with the names of each package's builtins listed once (see the module
    docstring); the standard packages are listed here, before any launch, while nothing is redirected."""
    names: dict[int, tuple[str, ...]] = {}

    def builtin_names(pkg) -> tuple[str, ...]:
        if id(pkg) not in names:
            names[id(pkg)] = tuple(n for n, m in inspect.getmembers(pkg) if tl.core.is_builtin(m))
        return names[id(pkg)]

    def patch_builtin(pkg, builder, scope) -> None:
        for name in builtin_names(pkg):
            member = getattr(pkg, name, None)
            if tl.core.is_builtin(member):  # already redirected (a helper called inside a launch): left as it is
                interpreter._patch_attr(pkg, name, member, builder, scope)

    for pkg in (tl, tl.core, tl.tensor, tl.math, tl.core.tensor_descriptor_base):
        builtin_names(pkg)
    interpreter._patch_builtin = patch_builtin


def _skip_discarded_overflow_checks(interpreter) -> None:
    """On the interpreter's semantic object only (compiled kernels are untouched): the int32 overflow check runs
    only where its ``device_assert`` would (see the module docstring)."""
    semantic, builder = interpreter.interpreter_semantic, interpreter.interpreter_builder
    check = type(semantic).binary_op_sanitize_overflow_impl

    def sanitize_overflow_impl(lhs, rhs, binary_op) -> None:
        if builder.options.debug:
            check(semantic, lhs, rhs, binary_op)

    semantic.binary_op_sanitize_overflow_impl = sanitize_overflow_impl


def _static_assert_with_line(interpreter) -> None:
    """``tl.static_assert`` in interpreted kernels: its AssertionError says where (see the module docstring)."""
    patch_core = interpreter._patch_lang_core

    def static_assert(cond, msg="", _semantic=None) -> None:
        if cond:
            return
        caller = sys._getframe(1)
        from grader.core import target

        where = f"{target.display_path(Path(caller.f_code.co_filename))}:{caller.f_lineno}"
        code = linecache.getline(caller.f_code.co_filename, caller.f_lineno).strip()
        text = str(getattr(msg, "value", msg) or "")
        raise AssertionError(f"tl.static_assert failed at {where}" + (f" (`{code}`)" if code else "")
                             + (f": {text}" if text else ""))

    def patch_lang_core(lang, scope) -> None:
        patch_core(lang, scope)
        scope.set_attr(lang, "static_assert", static_assert)  # undone first: the scope restores in reverse

    interpreter._patch_lang_core = patch_lang_core


def install() -> None:
    """Patch the interpreter once per process (idempotent)."""
    global _installed
    if _installed:
        return
    import triton
    import triton.language as tl
    from triton.runtime import interpreter

    missing = [h for h in _BUILDER_HOOKS if not hasattr(interpreter.InterpreterBuilder, h)]
    missing += [h for h in ("sum", "min_max") if not hasattr(interpreter.ReduceOps, h)]
    missing += [h for h in ("_patch_builtin", "_patch_attr", "_patch_lang_core", "interpreter_semantic",
                            "interpreter_builder")
                if not hasattr(interpreter, h)]
    missing += [h for h in ("binary_op_sanitize_overflow_impl", "device_assert")
                if not hasattr(getattr(interpreter, "interpreter_semantic", None), h)]
    if missing:
        raise RuntimeError(f"triton {triton.__version__}'s interpreter lacks {missing}: re-check "
                           "grader/instrument/interpreter_fixes.py against the pinned triton (requirements.txt)")
    _wrap_builder(interpreter.InterpreterBuilder, interpreter.TensorHandle, tl, interpreter._ir.ROUNDING_MODE.RTNE)
    _wrap_reductions(interpreter.ReduceOps, tl)
    _list_builtins_once(interpreter, tl)
    _skip_discarded_overflow_checks(interpreter)
    _static_assert_with_line(interpreter)
    _installed = True
