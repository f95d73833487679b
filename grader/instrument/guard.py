"""Kernel exercises must launch a kernel: refuse torch compute ops inside the learner's function.

One ``TorchFunctionMode`` for every unit. Inside a kernel exercise's function the learner may
allocate outputs and take views (``torch.empty_like``, ``x.view``, ``x.stride()``...), and Triton
may do what it likes while it runs a launch; anything else raises :class:`TorchComputeRefused`,
which names the call and says what to do instead: computing on tensor data (``torch.softmax``,
``x.exp()``, ``a @ b``...), a "view" that copied (``x.t().contiguous()``, ``x[idx]``), and reading
values on the host (``float(x[i])``, ``print(x)``, ``x == y``, ``x.data_ptr()``,
``x.untyped_storage()``), which would let host code compute and a copy kernel launder the result.

While the interpreter runs a launch, torch calls pass only when Triton's or the grader's own code
makes them (copying the arguments to the host and back): a grid function, a host helper or a
kernel body that calls torch is refused like any other learner code. Under the interpreter a
``@triton.jit`` body is Python, so two more doors are shut while a learner call runs (the static
audit, :mod:`grader.judge.audit`, refuses the same things in the source): a launch takes only
tensors, numbers, strings, dtypes and tuples of them as arguments (a module, a function or any
other host object passed in would run host code inside the kernel), and a tile's backing NumPy
array (``TensorHandle.data``) may be read only by the interpreter and the grader's hooks.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from grader.instrument import traffic

# torch names a function from a table it builds on first use (~25 ms) and caches: built here, at import, so that
# batch grading's workers, forked from a judge that imported this module, inherit it instead of building it per test.
resolve_name(torch.add)

try:
    import triton
except ImportError:  # ledger-only installs: nothing compiled can ask
    triton = None


class TorchComputeRefused(AssertionError):
    """The learner's kernel function computed with torch instead of launching a kernel."""


_active: list[str] = []  # the exercises whose learner call is running (innermost last)


# Allocation, metadata, views and layout: no arithmetic on the data, and no reading it on the host.
ALLOWED = frozenset(
    [
        *("empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like"),
        *("new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided"),
        *("size", "stride", "dim", "ndim", "shape", "numel", "nelement", "element_size", "dtype", "device"),
        *("is_cuda", "is_cpu", "layout", "storage_offset", "is_contiguous"),
        *("is_floating_point", "is_complex", "requires_grad", "get_device", "names"),
        *("__len__", "__get__", "__hash__", "__iter__"),
    ]
)
# Views: allowed while they return a view of their input. One that copies (``x.t().contiguous()``,
# ``reshape`` of a transposed tensor, ``x[idx]`` with a tensor index) moves data on the host: refused.
VIEWS = frozenset(
    [
        *("view", "view_as", "reshape", "reshape_as", "contiguous", "as_strided", "unsqueeze", "squeeze"),
        *("flatten", "unflatten", "expand", "expand_as", "permute", "transpose", "t", "narrow", "select"),
        *("unbind", "split", "chunk", "__getitem__", "detach"),
    ]
)
# Reading values on the host (printing, comparing, converting to Python numbers, raw memory).
HOST_READS = frozenset(
    [
        *("__repr__", "__format__", "__float__", "__int__", "__index__", "__bool__", "__eq__", "__ne__"),
        *("__contains__", "item", "tolist", "numpy", "__array__", "__dlpack__", "data_ptr", "untyped_storage"),
        *("__deepcopy__", "__reduce_ex__", "__setstate__"),
    ]
)


def _short(func) -> str:
    name = resolve_name(func) or getattr(func, "__name__", repr(func))
    return name.removeprefix("torch.Tensor.").removeprefix("torch._C._TensorBase.")


def _leaf(func) -> str:
    return _short(func).rsplit(".", 1)[-1]


class _RefuseTorchCompute(TorchFunctionMode):
    def __init__(self, exercise: str) -> None:
        super().__init__()
        self.exercise = exercise

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        leaf = _leaf(func)
        if leaf in ALLOWED or (traffic.in_kernel_launch() and _called_by_machinery()):
            return func(*args, **kwargs)
        if leaf in VIEWS:
            out = func(*args, **kwargs)
            if _copied(args[0] if args else None, out):
                raise TorchComputeRefused(
                    f"{self.exercise} called `{_short(func)}`, which copied the data on the host here (the "
                    "layout changed): move the elements in your Triton kernel; outside it only take views"
                )
            return out
        if leaf in HOST_READS:
            if _called_by_triton():  # compiled Triton's launcher reads data_ptr() outside interpreted launches
                return func(*args, **kwargs)
            raise TorchComputeRefused(
                f"{self.exercise} called `{_short(func)}`, which reads tensor values on the host (printing, "
                "comparing or converting them): a kernel exercise reads its inputs in the kernel; outside it "
                "use shapes, strides and dtypes (print x.shape, not x)"
            )
        raise TorchComputeRefused(
            f"{self.exercise} called `{_short(func)}`: a kernel exercise must compute in its Triton "
            "kernel; outside it only allocate outputs (torch.empty_like) and take views"
        )


_TRITON_DIR = Path(triton.__file__).resolve().parent if triton is not None else None
_GRADER_DIR = Path(__file__).resolve().parent.parent
_PASS_THROUGH = (str(Path(torch.__file__).resolve().parent), str(Path(__file__).resolve()))


def _called_by_machinery(depth: int = 2) -> bool:
    """Whether the code that asked (past torch's frames) is Triton's or the grader's, not the learner's."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(_PASS_THROUGH):
        frame = frame.f_back
    return frame is not None and _trusted_file(frame.f_code.co_filename)


@functools.cache
def _trusted_file(filename: str) -> bool:
    return (_TRITON_DIR is not None and _in_folder(filename, _TRITON_DIR)) or _in_folder(filename, _GRADER_DIR)


def _called_by_triton() -> bool:
    """Whether the code that asked is Triton's (its file lies in the triton package), past torch's frames.

    Files, not ``__name__``: a submission can rename its module, not move its code into triton's folder.
    """
    if _TRITON_DIR is None:
        return False
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PASS_THROUGH):
        frame = frame.f_back
    return frame is not None and _in_folder(frame.f_code.co_filename, _TRITON_DIR)


@functools.cache
def _in_folder(filename: str, folder: Path) -> bool:
    """Resolved once per file: a compiled launch asks for every tensor argument (timed gpu_perf calls)."""
    return Path(filename).resolve().is_relative_to(folder)


def _copied(base, out) -> bool:
    """Whether a view function returned something that does not share ``base``'s memory."""
    if not isinstance(base, torch.Tensor) or base.numel() == 0:
        return False
    outs = out if isinstance(out, tuple | list) else (out,)
    ptr = base.untyped_storage().data_ptr()
    return any(isinstance(o, torch.Tensor) and o.numel() and o.untyped_storage().data_ptr() != ptr for o in outs)


@contextlib.contextmanager
def refuse_torch_compute(exercise: str) -> Iterator[None]:
    """Inside this block torch compute ops raise TorchComputeRefused, and interpreted launches take only
    plain arguments and keep their tiles' backing arrays to themselves."""
    _install_interpreter_checks()
    _active.append(exercise)
    try:
        with _RefuseTorchCompute(exercise):
            yield
    finally:
        _active.pop()


PLAIN_ARGS = (torch.Tensor, int, float, bool, str, type(None), torch.dtype)


def _plain(arg) -> bool:
    """A launch argument that cannot run host code: tensors, numbers, strings, dtypes, tuples of them."""
    if isinstance(arg, tuple | list):
        return all(_plain(a) for a in arg)
    if isinstance(arg, PLAIN_ARGS):
        return True
    kind = type(arg)
    if kind.__module__ == "numpy" and kind.__name__ != "ndarray":  # np.float32(1.0), np.dtype
        return not callable(arg)
    if kind.__module__.startswith("triton."):  # tl.constexpr(...), tl.float16, a TensorDescriptor
        inner = getattr(arg, "value", None) if kind.__name__ == "constexpr" else None
        return (inner is None or _plain(inner)) and not callable(arg) and kind.__name__ != "JITFunction"
    return False


def _check_launch(kernel: str, args: tuple, kwargs: dict) -> None:
    for i, arg in enumerate([*args, *kwargs.values()]):
        if not _plain(arg):
            name = list(kwargs)[i - len(args)] if i >= len(args) else f"#{i}"
            raise TorchComputeRefused(
                f"{_active[-1]} passed {type(arg).__name__} `{getattr(arg, '__name__', '')}` as argument {name} of "
                f"kernel {kernel}: a launch takes tensors, numbers, strings and dtypes only (a host object inside "
                "a kernel would run host code); compute in the kernel with tl.*"
            )


def _read_backing_array(handle):
    if _active and not _trusted_file(sys._getframe(1).f_code.co_filename):
        raise TorchComputeRefused(
            f"{_active[-1]} read a tile's backing array (`.handle.data`) from "
            f"{Path(sys._getframe(1).f_code.co_filename).name} line {sys._getframe(1).f_lineno}: that is the "
            "interpreter's own NumPy array; compute with tl.* in the kernel"
        )
    return handle.__dict__["data"]


def _write_backing_array(handle, value) -> None:
    handle.__dict__["data"] = value


_installed: list[bool] = []


def _install_interpreter_checks() -> None:
    """Once per process: GridExecutor checks its arguments, TensorHandle.data checks who reads it."""
    if _installed:
        return
    _installed.append(True)
    try:
        from triton.runtime import interpreter
    except ImportError:  # ledger-only installs: no interpreter to guard
        return
    interpreter.TensorHandle.data = property(_read_backing_array, _write_backing_array)
    call = interpreter.GridExecutor.__call__

    def checked_call(self, *args, **kwargs):
        if _active:
            _check_launch(getattr(self.fn, "__name__", "?"), args, kwargs)
        return call(self, *args, **kwargs)

    interpreter.GridExecutor.__call__ = checked_call
