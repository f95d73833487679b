"""What a learner's call is given: copies of the caller's arguments, compared with them afterwards.

A grading test keeps its own objects: the learner's function gets deep copies of every argument (tensors with their
storage layout: strides, offset and the storage shared between arguments), so nothing it writes, keeps or returns
aliases an object the test may read later to build its expected value. An exercise that computes in place declares
which positional tensor arguments it writes (``learner(..., writes={"param": 0})``); only those are written back,
after the call, into the caller's tensors. A write into any other argument is refused by :func:`check_untouched`,
with a message that names the argument: a function's caller expects its data as it left it.

Batch grading crosses a process boundary as well (:mod:`grader.instrument.worker`: arguments pickled, tensors
through a shared arena the judge compares); this module is what ``make grade`` and the worker both apply, so the two
give the same verdict.
"""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Callable, Collection, Mapping
from typing import Any

from grader._lazy import torch
from grader.i18n import _


def _tensor_type() -> type | None:
    """torch.Tensor where torch is loaded (else no argument is a tensor: a ledger unit never imports torch)."""
    loaded = sys.modules.get("torch")
    return getattr(loaded, "Tensor", None)


def copies(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Deep copies of ``args`` and ``kwargs`` (one memo: an object passed twice is one copy); a tensor keeps its
    strides and storage offset. A value that cannot be copied (a generator) is refused: batch grading could not
    send it to the learner's process either."""
    memo: dict[int, Any] = {}
    storages: dict[tuple[str, int], Any] = {}
    tensor = _tensor_type()

    def one(value: Any) -> Any:
        if tensor is not None:
            _seed_tensors(value, tensor, memo, storages, depth=0)
        try:
            return copy.deepcopy(value, memo)
        except Exception as exc:
            raise RuntimeError(
                f"grader bug: a test passes a learner function an argument that cannot be copied "
                f"({type(value).__name__}: {type(exc).__name__}: {exc}); pass data (tensors, arrays, lists, numbers)"
            ) from None

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _seed_tensors(value: Any, tensor: type, memo: dict[int, Any], storages: dict[tuple[str, int], Any],
                  depth: int) -> None:
    """Put a layout-keeping copy of every tensor in ``value`` (through lists, tuples, dicts) into deepcopy's memo:
    torch's own deepcopy refuses non-leaf tensors and does not share one storage copy between two arguments."""
    kind = type(value)
    if kind in _ATOMS or depth > 50 or id(value) in memo:
        return
    if isinstance(value, tensor):
        memo[id(value)] = tensor_copy(value, storages)
    elif kind is list or kind is tuple:
        for v in value:
            _seed_tensors(v, tensor, memo, storages, depth + 1)
    elif kind is dict:
        for v in value.values():
            _seed_tensors(v, tensor, memo, storages, depth + 1)


_ATOMS = (int, float, bool, str, bytes, complex, type(None))


def tensor_copy(t: torch.Tensor, storages: dict[tuple[str, int], Any] | None = None) -> torch.Tensor:
    """A copy of ``t`` with its dtype, device, shape, strides and storage offset (the whole storage is copied, once
    per storage in ``storages``); ``requires_grad`` and ``nn.Parameter`` kept; detached from any graph."""
    if t.layout != torch.strided or t.is_quantized or t.device.type == "meta":
        out = t.detach().clone()
    else:
        storage = t.untyped_storage()
        key = (str(t.device), storage.data_ptr())
        if storages is None or key not in storages:
            cloned = storage.clone()
            if storages is not None:
                storages[key] = cloned
        else:
            cloned = storages[key]
        out = torch.empty(0, dtype=t.dtype, device=t.device)
        out.set_(cloned, t.storage_offset(), t.shape, t.stride())
    if isinstance(t, torch.nn.Parameter):
        return torch.nn.Parameter(out, requires_grad=t.requires_grad)
    return out.requires_grad_(t.requires_grad)


def written_back(name: str, written: Mapping[int, str], args: tuple[Any, ...], given: tuple[Any, ...]) -> None:
    """Copy what the call wrote into the declared tensor arguments (position -> parameter name) back into the
    caller's tensors."""
    for i, param in written.items():
        if i >= len(args):
            continue
        mine, theirs = args[i], given[i]
        if not isinstance(mine, torch.Tensor):
            raise RuntimeError(f"grader bug: {name} declares argument #{i} ({param}) written, but the test passes "
                               f"{type(mine).__name__}; writes= names tensor arguments only")
        if not isinstance(theirs, torch.Tensor) or theirs.shape != mine.shape or theirs.dtype != mine.dtype:
            raise AssertionError(_(
                "{name} replaced or reshaped its argument `{param}`: update it in place, keeping its shape and dtype "
                "(`{param}.mul_(…)`, `{param}[...] = …`), do not rebind or resize it").format(name=name, param=param))
        with torch.no_grad():
            mine.copy_(theirs)


def check_untouched(name: str, args: tuple[Any, ...], given: tuple[Any, ...], kwargs: Mapping[str, Any],
                    given_kwargs: Mapping[str, Any], *, written: Collection[int] = (),
                    names: Callable[[int], str | None] = lambda i: None) -> None:
    """AssertionError, naming the argument, where the call changed data it was given that it does not write by
    contract (``written``: positions). Data: tensors, NumPy arrays, lists, tuples, dicts, sets, bytearrays and
    numbers; the copies of other objects are not compared (what the call did to them stays with it)."""
    for i, (mine, theirs) in enumerate(zip(args, given, strict=True)):
        if i not in written and not same_data(mine, theirs):
            raise _modified(name, f"#{i}", names(i))
    for k, mine in kwargs.items():
        if not same_data(mine, given_kwargs[k]):
            raise _modified(name, f"`{k}`", None)


def _modified(name: str, which: str, param: str | None) -> AssertionError:
    shown = f"{which} (`{param}`)" if param and which.startswith("#") else which
    return AssertionError(_(
        "{name} modified its argument {which}: leave the caller's data as it was given (the caller may use it "
        "again) and compute into a new tensor, array or list (`x = x.clone()`, `xs = list(xs)` first if you need "
        "scratch space)").format(name=name, which=shown))


def same_data(a: Any, b: Any, depth: int = 0) -> bool:
    """``b`` (what the call was given, after it) holds the values of ``a`` (the caller's); NaNs equal, objects that
    are not data count as the same."""
    kind = type(a)
    if kind is float:
        return type(b) is float and (a == b or (math.isnan(a) and math.isnan(b)))
    if kind in _ATOMS:
        return type(b) is kind and a == b
    if depth > 50:
        return True
    tensor = _tensor_type()
    if tensor is not None and isinstance(a, tensor):
        return (isinstance(b, tensor) and a.dtype == b.dtype and a.shape == b.shape
                and a.device == b.device and _same_tensor(a, b))
    np = sys.modules.get("numpy")
    if np is not None and isinstance(a, np.ndarray):
        if not (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        try:
            return bool(np.array_equal(a, b))
        except Exception:
            return True
    if type(a) in (list, tuple):
        return type(b) is type(a) and len(a) == len(b) and all(
            same_data(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return type(b) is dict and list(a) == list(b) and all(same_data(a[k], b[k], depth + 1) for k in a)
    if type(a) in (set, frozenset, bytearray):
        return type(b) is type(a) and a == b
    return True


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.detach(), b.detach()
    if a.layout != torch.strided or b.layout != torch.strided:
        a, b = a.to_dense(), b.to_dense()
    return torch.equal(a, b) or (
        (a.is_floating_point() or a.is_complex()) and torch.equal(a.isnan(), b.isnan())
        and torch.equal(a.nan_to_num(), b.nan_to_num()))
