"""L05 · Tensor layout: storage, offset, sizes and strides; which views are free and which need a copy.

Lecture 05 (01_性能工程与系统前置/05_PyTorch底层系统机制_Tensor内存布局_Stride与Contiguous.md) describes a
tensor as a window on a flat buffer: element ``[i0, i1, ...]`` of a tensor lives at storage index

    storage_offset + i0·stride[0] + i1·stride[1] + ...

``transpose``, ``permute``, ``narrow``, ``select`` and ``expand`` only rewrite (shape, strides, offset);
no byte moves. ``view`` succeeds exactly when the new shape can be expressed with new strides over
the same elements in the same order; otherwise ``reshape`` silently copies (what ``.contiguous()``
does), which is the hidden cost behind the lecture's attention incident.

Conventions: shapes, strides and offsets are in elements (not bytes), exact ints, strides >= 0 (torch
has no negative strides). Invalid arguments raise ValueError naming the argument (``strides[2]``,
``new_shape``, ``ops[1]``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from itertools import product

import torch

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

OPS = ("transpose", "permute", "narrow", "select", "expand", "view")


# ---------------------------------------------------------------------------------------------
# Given: argument checks (call them at the start of your solution)
# ---------------------------------------------------------------------------------------------


def _check_dims(name: str, values: object) -> tuple[int, ...]:
    """A sequence of exact ints >= 0 (sizes or strides), or ValueError naming ``name[i]``."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a sequence of ints, got {values!r}")
    return tuple(check_int(f"{name}[{i}]", v) for i, v in enumerate(values))


def _check_layout(shape: object, strides: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) as tuples of ints >= 0 of the same length, or ValueError naming the culprit."""
    sizes = _check_dims("shape", shape)
    steps = _check_dims("strides", strides)
    if len(steps) != len(sizes):
        raise ValueError(f"strides has {len(steps)} entries but shape has {len(sizes)}: one stride per dim")
    return sizes, steps


def _infer_shape(new_shape: object, numel: int) -> tuple[int, ...]:
    """``new_shape`` with its one ``-1`` inferred so that it holds ``numel`` elements (torch's infer_size)."""
    if isinstance(new_shape, str | bytes) or not isinstance(new_shape, Sequence):
        raise ValueError(f"new_shape must be a sequence of ints, got {new_shape!r}")
    if any(isinstance(s, bool) or not isinstance(s, int) or s < -1 for s in new_shape):
        raise ValueError(f"new_shape must hold ints >= 0 and at most one -1, got {tuple(new_shape)}")
    if list(new_shape).count(-1) > 1:
        raise ValueError(f"new_shape has more than one -1: only one dimension can be inferred, got {tuple(new_shape)}")
    known = math.prod(s for s in new_shape if s != -1)
    if -1 in new_shape:
        if known == 0 or numel % known:
            raise ValueError(f"new_shape {tuple(new_shape)}: no size for -1 gives {numel} elements")
        return tuple(numel // known if s == -1 else s for s in new_shape)
    if known != numel:
        raise ValueError(f"new_shape {tuple(new_shape)} holds {known} elements, the tensor has {numel}")
    return tuple(new_shape)


def _wrap(dim: object, ndim: int) -> int:
    """A dim index in [-ndim, ndim) as an index in [0, ndim); anything else raises ValueError."""
    if isinstance(dim, bool) or not isinstance(dim, int) or not -ndim <= dim < ndim:
        raise ValueError(f"dim {dim!r} is out of range for a {ndim}-dim tensor")
    return dim % ndim


# ---------------------------------------------------------------------------------------------
# 1. is_contiguous
# ---------------------------------------------------------------------------------------------


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether a tensor of ``shape`` and ``strides`` is C-contiguous, as ``Tensor.is_contiguous()`` says.

    A tensor with no elements is contiguous. Otherwise walk the dims from the last one with an
    expected stride of 1: a dim of size 1 is skipped (its stride never moves anything, so it may be
    anything), any other dim must have exactly the expected stride, which is then multiplied by its
    size. ``is_contiguous((1, 3), (99, 1))`` → True; ``((3, 2), (1, 3))`` (a transposed 2×3) → False;
    ``((2, 3), (0, 1))`` (an expanded row) → False.

    Errors: ``len(strides) != len(shape)`` → ValueError naming ``strides``; a negative or non-int size
    → ``shape[i]``; a negative or non-int stride → ``strides[i]``.
    """
    # TODO: validate with _check_layout, then scan from the last dim keeping the expected stride.
    raise NotImplementedError('TODO: validate with _check_layout, then scan from the last dim keeping the expected stride.')


# ---------------------------------------------------------------------------------------------
# 2. view_strides: PyTorch's computeStride
# ---------------------------------------------------------------------------------------------


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """The strides ``t.view(new_shape)`` would have for a tensor ``t`` of ``shape``/``strides``; None if torch refuses.

    ``new_shape`` may hold one ``-1``, inferred from the element count. Special cases: a 0-dim input
    gives all strides 1; a tensor with no elements keeps its strides if the shape is unchanged, else
    gets the contiguous strides of the new shape (a size 0 counts as 1 in that recurrence).

    General case: split the old dims into maximal chunks whose elements are evenly spaced (dim i−1
    continues the chunk of dims i.. when its size is 1 or its stride equals the chunk's element count
    times the chunk's innermost stride). Then walk the new dims from the right, giving each the
    stride ``(elements placed so far in this chunk) · (the chunk's innermost stride)``, until they
    hold exactly the chunk's element count; new dims of size 1 are absorbed on the way. If a chunk
    cannot be matched exactly, the view needs a copy: return None.

    MHA example: (2, 32, 2048, 128) with strides (8388608, 128, 4096, 1) (after ``transpose(1, 2)``):
    ``new_shape (2, 32, 262144)`` → None (seq and head_dim are not evenly spaced together: the
    ``transpose().view()`` error); ``(2, 32, 2048, 2, 64)`` → (8388608, 128, 4096, 64, 1).

    Errors: those of :func:`is_contiguous` for shape/strides; two ``-1``, a size < −1 or an element
    count that does not match → ValueError naming ``new_shape``.
    """
    # TODO: validate (_check_layout, _infer_shape), handle 0-dim and empty tensors, then match chunks.
    raise NotImplementedError('TODO: validate (_check_layout, _infer_shape), handle 0-dim and empty tensors, then match chunks.')


# ---------------------------------------------------------------------------------------------
# 3. apply_ops: a chain of view operations on the metadata only
# ---------------------------------------------------------------------------------------------


def apply_ops(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, ops: Sequence[tuple]
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) after applying ``ops`` in order, as torch's view ops would.

    Operations (dims may be negative: they count from the end):

    * ``("transpose", d0, d1)``: swap two dims (sizes and strides);
    * ``("permute", dims)``: reorder all dims, ``dims`` a permutation of them;
    * ``("narrow", dim, start, length)``: keep ``length`` entries from ``start`` (a negative start
      counts from the end): offset += start·stride[dim];
    * ``("select", dim, index)``: index one entry and drop the dim: offset += index·stride[dim]
      (a negative index wraps);
    * ``("expand", sizes)``: broadcast to ``sizes`` (aligned on the right): ``-1`` keeps a dim, a size-1
      dim may grow and gets stride 0, a new leading dim gets stride 0; growing a dim whose size is not 1
      is an error, and so is ``-1`` for a new leading dim. Like torch, a new leading dim of size 1
      (nothing grows) gets the stride that steps over the whole dim to its right, size × stride
      (0 when it is the last dim): its stride never matters, but the tests compare it;
    * ``("view", new_shape)``: the strides of :func:`view_strides`; a view that needs a copy is an error.

    ``apply_ops((4, 4), (4, 1), 0, [("narrow", 0, 1, 3)])`` → ((3, 4), (4, 1), 4) (``x[1:]``);
    ``apply_ops((3, 1), (1, 1), 0, [("expand", (2, 3, 4))])`` → ((2, 3, 4), (0, 1, 0), 0).

    Errors: shape/strides as in :func:`is_contiguous`; a negative or non-int ``storage_offset`` →
    ValueError naming ``storage_offset``; an unknown op, wrong arguments, a dim or index out of range,
    an impossible expand or view → ValueError naming ``ops[i]`` (i the op's position).
    """
    # TODO: validate, then apply each op to lists of sizes and strides and the offset (wrap errors as ops[i]).
    raise NotImplementedError('TODO: validate, then apply each op to lists of sizes and strides and the offset (wrap errors as ops[i]).')




# ---------------------------------------------------------------------------------------------
# 4. memory_relation: do two tensors share bytes?
# ---------------------------------------------------------------------------------------------


def memory_relation(a: torch.Tensor, b: torch.Tensor) -> str:
    """How two tensors relate in memory: "distinct_storage", "overlap" or "shared_no_overlap".

    "distinct_storage" when their storages start at different addresses
    (``a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()``). Otherwise each tensor
    covers the bytes ``[data_ptr + k·element_size, + element_size)`` for every element offset
    ``k = Σ i_d·stride_d`` reachable from its sizes and strides (``data_ptr()`` already includes the
    storage offset): "overlap" if some byte is covered by both, else "shared_no_overlap". A tensor
    with no elements covers nothing.

    ``memory_relation(x, x[1:])`` → "overlap" although ``x.data_ptr() != x[1:].data_ptr()``;
    ``memory_relation(x[:, 0], x[:, 1])`` → "shared_no_overlap" (interleaved columns);
    ``memory_relation(x, x.t().contiguous())`` → "distinct_storage" (a copy);
    ``memory_relation(x[0], x.t()[0])`` → "overlap" (both hold element 0).

    Errors: an argument that is not a ``torch.Tensor`` → ValueError naming ``a`` or ``b``.
    """
    # TODO: validate, compare the storages, then test whether the two sets of byte ranges intersect.
    raise NotImplementedError('TODO: validate, compare the storages, then test whether the two sets of byte ranges intersect.')
