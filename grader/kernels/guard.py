"""Kernel exercises must launch a kernel: refuse torch compute ops inside the learner's function.

One ``TorchFunctionMode`` for every unit. Inside a kernel exercise's function the learner may
allocate outputs and take views (``torch.empty_like``, ``x.view``, ``x.stride()``...), and Triton
may do what it likes while it runs a launch; anything else raises :class:`TorchComputeRefused`,
which names the call and says what to do instead: computing on tensor data (``torch.softmax``,
``x.exp()``, ``a @ b``...), a "view" that copied (``x.t().contiguous()``, ``x[idx]``), and reading
values on the host (``float(x[i])``, ``print(x)``, ``x == y``, ``x.data_ptr()``,
``x.untyped_storage()``), which would let host code compute and a copy kernel launder the result.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from grader.kernels import traffic

try:
    import triton
except ImportError:  # ledger-only installs: nothing compiled can ask
    triton = None


class TorchComputeRefused(AssertionError):
    """The learner's kernel function computed with torch instead of launching a kernel."""


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
        if traffic.in_kernel_launch() or leaf in ALLOWED:
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
_PASS_THROUGH = (str(Path(torch.__file__).resolve().parent), str(Path(__file__).resolve()))


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
    """Inside this block torch compute ops raise TorchComputeRefused."""
    with _RefuseTorchCompute(exercise):
        yield
