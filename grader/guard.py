"""Kernel exercises must launch a kernel: refuse torch compute ops inside the learner's function.

One ``TorchFunctionMode`` for every unit. Inside a kernel exercise's function the learner may
allocate outputs and take views (``torch.empty_like``, ``x.view``, ``x.stride()``...), and Triton
may do what it likes while it runs a launch; anything else that computes on tensor data
(``torch.softmax``, ``x.exp()``, ``x.max()``, ``a @ b``...) raises :class:`TorchComputeRefused`,
which names the call and says what to do instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from grader import traffic


class TorchComputeRefused(AssertionError):
    """The learner's kernel function computed with torch instead of launching a kernel."""


# Allocation, metadata, views and layout: no arithmetic on the data.
ALLOWED = frozenset(
    [
        *("empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like"),
        *("new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided"),
        *("size", "stride", "dim", "ndim", "shape", "numel", "nelement", "element_size", "dtype", "device"),
        *("is_cuda", "is_cpu", "layout", "data_ptr", "storage_offset", "untyped_storage", "is_contiguous"),
        *("is_floating_point", "is_complex", "requires_grad", "get_device", "names", "detach"),
        *("__len__", "__get__", "__hash__", "__format__", "__repr__", "__bool__", "__index__", "__int__"),
        *("__float__", "__eq__", "__ne__", "__setstate__", "__reduce_ex__", "__deepcopy__", "__iter__"),
        *("__contains__", "__getitem__"),
        *("view", "view_as", "reshape", "reshape_as", "contiguous", "as_strided", "unsqueeze", "squeeze"),
        *("flatten", "unflatten", "expand", "expand_as", "permute", "transpose", "t", "narrow", "select"),
        *("unbind", "split", "chunk"),
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
        if traffic.in_kernel_launch() or _leaf(func) in ALLOWED:
            return func(*args, **kwargs)
        raise TorchComputeRefused(
            f"{self.exercise} called `{_short(func)}`: a kernel exercise must compute in its Triton "
            "kernel; outside it only allocate outputs (torch.empty_like) and take views"
        )


@contextlib.contextmanager
def refuse_torch_compute(exercise: str) -> Iterator[None]:
    """Inside this block torch compute ops raise TorchComputeRefused."""
    with _RefuseTorchCompute(exercise):
        yield


def is_enabled() -> bool:
    """True where torch function modes work (always with the pinned torch)."""
    return hasattr(torch.overrides, "TorchFunctionMode")
