"""L05 · contiguity, view strides (computeStride), view-op chains and shared memory, against torch itself."""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_rejects, assert_rejects_all, grade, learner

UNIT = "l05_tensor_layout"
is_contiguous = learner(UNIT, "layout", "is_contiguous")
view_strides = learner(UNIT, "layout", "view_strides")
apply_ops = learner(UNIT, "layout", "apply_ops")
memory_relation = learner(UNIT, "layout", "memory_relation")

MHA = ((2, 32, 2048, 128), (8_388_608, 128, 4096, 1))  # (2, 2048, 4096) → view(2, 2048, 32, 128) → transpose(1, 2)


def check(got: object, want: object, call: str, why: str) -> None:
    """Exact equality (a tuple is not a list; True is not 1) with an instruction."""
    same = type(got) is type(want) and got == want
    assert same, f"{call} = {got!r}, expected {want!r}: {why}"


def meta(shape, strides=None, offset=0) -> torch.Tensor:
    """A metadata-only tensor (no memory) with the given layout: torch's own answers, for free."""
    shape = tuple(shape)
    strides = tuple(strides) if strides is not None else torch.empty(shape, device="meta").stride()
    span = 1 + offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) if 0 not in shape else 1
    return torch.empty(span, device="meta").as_strided(shape, strides, offset)


# ---- strategies: layouts that torch can produce -------------------------------------------------


@st.composite
def layouts(draw, max_dims: int = 4):
    """A tensor made by random transposes, narrows, steps and expands of a contiguous one (sizes 0..4)."""
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=max_dims))
    t = meta(shape)
    for _ in range(draw(st.integers(0, 3))):
        if t.dim() == 0:
            break
        kind = draw(st.sampled_from(["transpose", "narrow", "step", "expand"]))
        d = draw(st.integers(0, t.dim() - 1))
        if kind == "transpose":
            t = t.transpose(d, draw(st.integers(0, t.dim() - 1)))
        elif kind == "narrow":
            start = draw(st.integers(0, t.shape[d]))
            t = t.narrow(d, start, draw(st.integers(0, t.shape[d] - start)))
        elif kind == "step":
            step = draw(st.integers(2, 3))
            shape, strides = list(t.shape), list(t.stride())
            shape[d], strides[d] = -(-shape[d] // step), strides[d] * step  # t[..., ::step, ...]
            t = t.as_strided(shape, strides, t.storage_offset())
        elif t.shape[d] == 1:
            t = t.expand(*t.shape[:d], draw(st.integers(0, 3)), *t.shape[d + 1:])
    return t


@st.composite
def view_cases(draw):
    """(tensor, new_shape): new_shape holds the same number of elements, often with size-1 dims and one -1."""
    t = draw(layouts())
    n, dims = t.numel(), []
    for _ in range(draw(st.integers(0, 4))):
        left = n // math.prod(dims) if n and dims else n
        divisors = [k for k in range(1, left + 1) if left % k == 0] if left else [0, 1, 2]
        dims.append(draw(st.sampled_from(divisors)))
    if math.prod(dims) != n:
        dims.append(n // math.prod(dims) if math.prod(dims) else 0)
    if math.prod(dims) != n:
        dims = [n]
    dims = draw(st.permutations(dims))
    if draw(st.booleans()):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    if dims and n and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return t, tuple(dims)


def torch_view(t: torch.Tensor, new_shape) -> tuple[int, ...] | None:
    try:
        return tuple(t.view(new_shape).stride())
    except RuntimeError:
        return None


# ---- is_contiguous ------------------------------------------------------------------------------


@grade(is_contiguous, "correctness", points=2,
       hint="Does the stride of a dim of size 1 ever move you to another element?")
def test_is_contiguous_worked_examples():
    """The lecture's table, the attention tensor, size-1 dims with any stride, empty tensors."""
    cases = [
        ((1, 3), (99, 1), True, "a size-1 dim may carry any stride"),
        ((2, 3), (3, 1), True, "row-major"),
        ((3, 2), (1, 3), False, "x.t(): the strides are reversed"),
        ((2, 2), (3, 2), False, "x[:, ::2] leaves holes"),
        ((5, 2, 3), (0, 3, 1), False, "expand gives a stride-0 dim of size 5"),
        ((1, 2, 3), (6, 3, 1), True, "x.unsqueeze(0)"),
        ((2, 2048, 32, 128), (8_388_608, 4096, 128, 1), True, "the attention view before the transpose"),
        (*MHA, False, "the attention tensor after transpose(1, 2)"),
        ((3, 0), (1, 3), True, "a tensor with no elements is contiguous"),
        ((2, 0, 3), (7, 5, 2), True, "a tensor with no elements is contiguous, whatever its strides"),
        ((), (), True, "a 0-dim tensor"),
        ((4, 1, 1), (1, 1, 1), True, "only the size-4 dim is checked: its stride must be 1"),
    ]
    for shape, strides, want, why in cases:
        check(is_contiguous(shape, strides), want, f"is_contiguous({shape}, {strides})", why)


@grade(is_contiguous, "correctness", points=3,
       hint="Scan from the last dim: which stride does a contiguous tensor have there, and how does it grow?")
@settings(max_examples=80)
@given(t=layouts())
def test_is_contiguous_matches_torch(t):
    """Random transposed, narrowed, strided and expanded tensors: the same answer as Tensor.is_contiguous()."""
    shape, strides = tuple(t.shape), t.stride()
    check(is_contiguous(shape, strides), t.is_contiguous(), f"is_contiguous({shape}, {strides})",
          "torch.Tensor.is_contiguous() on this layout says so")


@grade(is_contiguous, "correctness", points=1, validation=True,
       hint="Did you call _check_layout before using shape and strides?")
def test_is_contiguous_rejects_bad_layouts():
    assert_rejects_all(is_contiguous, [
        (((2, 3), (3,)), "strides"),
        (((2, -3), (3, 1)), "shape[1]"),
        (((2.0, 3), (3, 1)), "shape[0]"),
        (((2, 3), (-3, 1)), "strides[0]"),
        (((2, 3), (3, True)), "strides[1]"),
    ])


# ---- view_strides -------------------------------------------------------------------------------


@grade(view_strides, "correctness", points=3,
       hint="After transpose(1, 2), are seq and head_dim still evenly spaced together? Are 2 and 64 inside head_dim?")
def test_view_strides_worked_examples():
    """The attention tensor: merging seq with head_dim is refused, splitting head_dim is a legal view."""
    cases = [
        (*MHA, (2, 32, 262144), None, "seq (stride 4096) and head_dim (stride 1) cannot merge: transpose().view()"),
        (*MHA, (2, 32, 2048, 2, 64), (8_388_608, 128, 4096, 64, 1),
         "head_dim alone is contiguous, so it splits though the tensor is not contiguous"),
        (*MHA, (64, 2048, 128), None, "batch (stride 8388608) and heads (32 × 128 = 4096) are not evenly spaced"),
        ((3, 2), (1, 3), (6,), None, "x.t().view(-1) for x of shape (2, 3): the lecture's crash"),
        ((2, 3), (3, 1), (3, 2), (2, 1), "a contiguous tensor views as any shape"),
        ((2, 3), (3, 1), (1, 6), (6, 1), "a leading size-1 dim takes the stride the walk is at"),
        ((2, 3), (3, 1), (-1, 2), (2, 1), "-1 is inferred: 3"),
        ((4, 2), (8, 1), (2, 2, 2), (16, 8, 1), "the rows of x[:, :2] keep their stride 8"),
        ((), (), (1, 1), (1, 1), "a 0-dim tensor views with strides 1"),
        ((0, 3), (5, 1), (0, 3), (5, 1), "an empty tensor with an unchanged shape keeps its strides"),
        ((0, 3), (5, 1), (3, 0, 2), (2, 2, 1), "an empty tensor takes contiguous strides (size 0 counts as 1)"),
    ]
    for shape, strides, new, want, why in cases:
        check(view_strides(shape, strides, new), want, f"view_strides({shape}, {strides}, {new})", why)


@grade(view_strides, "correctness", points=4,
       hint="Group old dims into chunks that are evenly spaced; can a new dim straddle two chunks?")
@settings(max_examples=120)
@given(case=view_cases())
def test_view_strides_matches_torch(case):
    """Random layouts and shapes: the strides of t.view(new_shape), or None exactly when torch raises."""
    t, new = case
    shape, strides = tuple(t.shape), t.stride()
    want = torch_view(t, new)
    check(view_strides(shape, strides, new), want, f"view_strides({shape}, {strides}, {new})",
          "torch.Tensor.view gives these strides" if want is not None else "torch.Tensor.view raises: it needs a copy")


@grade(view_strides, "correctness", points=1, validation=True,
       hint="Which new shapes make no sense whatever the strides are?")
def test_view_strides_rejects_bad_shapes():
    assert_rejects_all(view_strides, [
        (((2, 3), (3, 1), (-1, -1)), "new_shape"),
        (((2, 3), (3, 1), (4, 2)), "new_shape"),
        (((2, 3), (3, 1), (-2, -3)), "new_shape"),
        (((0, 3), (3, 1), (-1, 0)), "new_shape"),
        (((2, 3), (3, 1, 1), (6,)), "strides"),
        (((2, -3), (3, 1), (6,)), "shape[1]"),
    ])


# ---- apply_ops ----------------------------------------------------------------------------------


@grade(apply_ops, "correctness", points=2,
       hint="x[1:] of a 4×4 matrix starts at which element of the storage?")
def test_apply_ops_worked_examples():
    cases = [
        ((2, 2048, 4096), (8_388_608, 4096, 1), 0, [("view", (2, 2048, 32, 128)), ("transpose", 1, 2)],
         (MHA[0], MHA[1], 0), "the attention reshape: view then transpose(1, 2)"),
        ((4, 4), (4, 1), 0, [("narrow", 0, 1, 3)], ((3, 4), (4, 1), 4), "x[1:] starts at element 4"),
        ((3, 1), (1, 1), 0, [("expand", (2, 3, 4))], ((2, 3, 4), (0, 1, 0), 0),
         "a new leading dim and a grown size-1 dim both get stride 0"),
        ((3, 1), (1, 1), 0, [("expand", (1, 3, 4))], ((1, 3, 4), (3, 1, 0), 0),
         "a new leading dim of size 1 steps over the dim to its right, as in torch"),
        ((3, 4), (4, 1), 0, [("narrow", 0, 1, 2), ("narrow", 1, 1, 2)], ((2, 2), (4, 1), 5), "x[1:, 1:3] (§3.3)"),
        ((3, 4), (4, 1), 2, [("select", -1, -1)], ((3,), (4,), 5), "x[..., -1] on a storage offset of 2"),
        ((2, 3, 4), (12, 4, 1), 0, [("permute", (2, 0, 1)), ("view", (4, 6))], ((4, 6), (1, 4), 0),
         "permute then view: dims 0 and 1 are still evenly spaced together"),
    ]
    for shape, strides, offset, ops, want, why in cases:
        check(apply_ops(shape, strides, offset, ops), want, f"apply_ops({shape}, {strides}, {offset}, {ops})", why)


@st.composite
def op_chains(draw):
    """(start tensor, ops): a chain of 1..4 valid ops, with negative dims and indices."""
    t = draw(layouts(max_dims=3))
    offset = draw(st.integers(0, 5))
    t = meta(t.shape, t.stride(), offset)
    start, ops = t, []
    for _ in range(draw(st.integers(1, 4))):
        n = t.dim()
        choices = ["expand", "view"] + (["transpose", "permute", "narrow", "select"] if n else [])
        kind = draw(st.sampled_from(choices))
        dim = draw(st.integers(-n, n - 1)) if n else 0
        if kind == "transpose":
            op = ("transpose", dim, draw(st.integers(-n, n - 1)))
        elif kind == "permute":
            op = ("permute", tuple(draw(st.permutations(range(n)))))
        elif kind == "narrow":
            size = t.shape[dim]
            begin = draw(st.integers(-size, size))
            op = ("narrow", dim, begin, draw(st.integers(0, size - (begin + size if begin < 0 else begin))))
        elif kind == "select":
            if t.shape[dim] == 0:
                continue
            op = ("select", dim, draw(st.integers(-t.shape[dim], t.shape[dim] - 1)))
        elif kind == "expand":
            grown = [draw(st.integers(0, 3)) if s == 1 else draw(st.sampled_from([s, -1])) for s in t.shape]
            op = ("expand", tuple(draw(st.lists(st.integers(0, 3), max_size=1)) + grown))
        else:
            op = ("view", _shape_for(draw, t.numel()))
            if torch_view(t, op[1]) is None:
                continue
        t = getattr(t, op[0])(*op[1:]) if op[0] not in ("permute", "expand", "view") else getattr(t, op[0])(op[1])
        ops.append(op)
    return start, ops, t


def _shape_for(draw, n: int) -> tuple[int, ...]:
    """A shape of n elements: random divisors, the remainder last, perhaps one -1 (n > 0 only)."""
    dims: list[int] = []
    for _ in range(draw(st.integers(0, 3))):
        left = n // math.prod(dims) if n else 0
        dims.append(draw(st.sampled_from([k for k in range(1, left + 1) if left % k == 0] if n else [0, 1, 2])))
    if math.prod(dims) != n:
        dims.append(n // math.prod(dims) if n else 0)
    if n and dims and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


@grade(apply_ops, "correctness", points=4,
       hint="Which ops move the storage offset, and by how much? Which give a stride of 0?")
@settings(max_examples=100)
@given(case=op_chains())
def test_apply_ops_matches_torch_meta(case):
    """Random chains, negative dims and indices included: the same shape, strides and offset as torch."""
    start, ops, t = case
    args = (tuple(start.shape), start.stride(), start.storage_offset(), ops)
    want = (tuple(t.shape), t.stride(), t.storage_offset())
    check(apply_ops(*args), want, f"apply_ops{args}",
          "the same ops on a torch tensor of this layout (device='meta') give this (shape, strides, storage_offset)")


@grade(apply_ops, "correctness", points=1, validation=True,
       hint="Does your error say which op of the list was wrong?")
def test_apply_ops_rejects_bad_ops():
    shape, strides = (2, 3), (3, 1)
    assert_rejects_all(apply_ops, [
        ((shape, strides, 0, [("transpose", 0, 1), ("flip", 0)]), "ops[1]"),
        ((shape, strides, 0, [("transpose", 0, 2)]), "ops[0]"),
        ((shape, strides, 0, [("narrow", 1, 2, 2)]), "ops[0]"),
        ((shape, strides, 0, [("select", 0, 2)]), "ops[0]"),
        ((shape, strides, 0, [("expand", (4, 3))]), "ops[0]"),
        ((shape, strides, 0, [("expand", (-1, 2, 3))]), "ops[0]"),
        ((shape, strides, 0, [("permute", (0, 0))]), "ops[0]"),
        ((shape, strides, 0, [("transpose", 0, 1), ("view", (6,))]), "ops[1]"),
        ((shape, strides, 0, [("transpose", 0)]), "ops[0]"),
        ((shape, strides, -1, []), "storage_offset"),
        ((shape, (3,), 0, []), "strides"),
    ])


# ---- memory_relation ----------------------------------------------------------------------------


def byte_set(t: torch.Tensor) -> np.ndarray:
    """Every byte address the tensor's elements cover (the oracle: brute force, in NumPy)."""
    if t.numel() == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.zeros(1, dtype=np.int64)
    for n, s in zip(t.shape, t.stride(), strict=True):
        offsets = (offsets[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).ravel()
    es = t.element_size()
    return (t.data_ptr() + offsets[:, None] * es + np.arange(es, dtype=np.int64)[None, :]).ravel()


def true_relation(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return "distinct_storage"
    return "overlap" if np.intersect1d(byte_set(a), byte_set(b)).size else "shared_no_overlap"


def relation_check(a, b, call: str) -> None:
    check(memory_relation(a, b), true_relation(a, b), call, "counting the bytes each tensor covers says so")


@grade(memory_relation, "correctness", points=2,
       hint="x and x[1:] have different data_ptr(): can writing one still change the other?")
def test_memory_relation_worked_examples():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    cases = [
        (x, x[1:], "overlap", "x[1:] starts 16 bytes later but lies inside x"),
        (x[:, 0], x[:, 1], "shared_no_overlap", "two columns interleave: same range of addresses, no common byte"),
        (x, x.t().contiguous(), "distinct_storage", ".contiguous() of a transpose is a copy"),
        (x[0], x.t()[0], "overlap", "both hold element 0"),
        (x[0], x[2], "shared_no_overlap", "two different rows"),
        (x, x.clone(), "distinct_storage", "clone copies"),
        (x.view(torch.uint8)[0, 3:4], x[0, 0], "overlap", "the 4th byte of element 0 is element 0's byte"),
        (x.view(torch.uint8)[0, 4:8], x[0, 0], "shared_no_overlap", "bytes 4..7 belong to element 1"),
        (x[:0], x, "shared_no_overlap", "an empty tensor covers no byte"),
    ]
    for a, b, want, why in cases:
        check(memory_relation(a, b), want, "memory_relation(a, b)", why)
    arr = np.arange(6, dtype=np.int64)
    t = torch.from_numpy(arr)
    check(memory_relation(t[::2], torch.from_numpy(arr)[1::2]), "shared_no_overlap",
          "memory_relation(torch.from_numpy(arr)[::2], torch.from_numpy(arr)[1::2])",
          "from_numpy shares NumPy's buffer: even and odd elements never meet")
    check(memory_relation(t, torch.from_numpy(arr)[-1]), "overlap", "memory_relation(torch.from_numpy(arr),"
          " torch.from_numpy(arr)[-1])", "two tensors made from one NumPy array share its buffer")


@st.composite
def view_pairs(draw):
    """Two tensors derived from one 6×8 base by random views (or copies), in several dtypes."""
    dtype = draw(st.sampled_from([torch.float32, torch.float16, torch.int64, torch.uint8]))
    base = torch.zeros(6, 8, dtype=dtype)

    def derive():
        t = base
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["t", "row", "col", "narrow", "step", "expand", "bytes", "copy", "flat"]))
            if kind == "t" and t.dim() == 2:
                t = t.t()
            elif kind in ("row", "col") and t.dim() == 2 and t.shape[0 if kind == "row" else 1]:
                d = 0 if kind == "row" else 1
                t = t.select(d, draw(st.integers(0, t.shape[d] - 1)))
            elif kind == "narrow" and t.dim() >= 1:
                d = draw(st.integers(0, t.dim() - 1))
                begin = draw(st.integers(0, t.shape[d]))
                t = t.narrow(d, begin, draw(st.integers(0, t.shape[d] - begin)))
            elif kind == "step" and t.dim() >= 1:
                t = t[draw(st.integers(0, 1))::draw(st.integers(2, 3))]
            elif kind == "expand" and t.dim() == 1:
                t = t.unsqueeze(0).expand(draw(st.integers(1, 3)), -1)
            elif kind == "bytes" and t.is_contiguous() and t.numel():
                t = t.view(torch.uint8)
            elif kind == "copy":
                t = t.contiguous() if draw(st.booleans()) else t.clone()
            elif kind == "flat" and t.is_contiguous():
                t = t.view(-1)
        return t

    return derive(), derive()


@grade(memory_relation, "correctness", points=3,
       hint="List the byte ranges each tensor covers; where do two ranges meet?")
@settings(max_examples=80)
@given(pair=view_pairs())
def test_memory_relation_matches_byte_sets(pair):
    a, b = pair
    call = (f"memory_relation(a, b) with a: shape {tuple(a.shape)} strides {a.stride()} offset {a.storage_offset()}"
            f" {a.dtype}, b: shape {tuple(b.shape)} strides {b.stride()} offset {b.storage_offset()} {b.dtype}")
    relation_check(a, b, call)


@grade(memory_relation, "correctness", points=1, validation=True,
       hint="What should happen when a is a NumPy array or a list?")
def test_memory_relation_rejects_non_tensors():
    x = torch.zeros(3)
    assert_rejects(memory_relation, ([0.0, 0.0, 0.0], x), "a")
    assert_rejects(memory_relation, (x, np.zeros(3)), "b")
