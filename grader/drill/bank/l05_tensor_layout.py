"""L05 · Tensor layout: contiguity after transpose and permute."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T

FN = ("l05_tensor_layout", "layout", "is_contiguous")
ANSWERS = ["contiguous", "not contiguous"]


def _perm(rng: random.Random) -> Params:
    shape = [rng.choice([1, 2, 4]), rng.choice([1, 8, 32]), rng.choice([16, 128]), rng.choice([64, 128])]
    strides, acc = [0] * 4, 1
    for i in range(3, -1, -1):
        strides[i], acc = acc, acc * shape[i]
    order = rng.choice([(0, 1, 2, 3), (0, 2, 1, 3), (1, 0, 2, 3), (0, 1, 3, 2), (0, 3, 1, 2)])
    new_shape, new_strides = [shape[i] for i in order], [strides[i] for i in order]
    return {
        "shape": shape,
        "order": list(order),
        "new_shape": new_shape,
        "new_strides": new_strides,
        "sh": tuple(shape),
        "od": tuple(order),
    }


def _steps(p: Params) -> list[Step]:
    return [
        Step(
            "=",
            f"permuted sizes {tuple(p['new_shape'])}, strides {tuple(p['new_strides'])}: walking from the "
            "last dim, each stride must equal the product of the sizes to its right (size-1 dims skipped)",
            1,
        )
    ]


TEMPLATES = [
    T(
        "l05.permute_contiguous",
        FN,
        "memory",
        2,
        5,
        "x = torch.empty{sh} (contiguous); y = x.permute{od}. Is y contiguous?",
        _perm,
        lambda p, fn: ANSWERS[0] if fn(p["new_shape"], p["new_strides"]) else ANSWERS[1],
        _steps,
        kind="choice",
        options=lambda p: list(ANSWERS),
        source="Tensor.is_contiguous(): size-1 dims are ignored",
    ),
]

VIEW = ["a view works", "needs a copy (reshape copies, view raises)"]


def _view(rng: random.Random) -> Params:
    b, s, h, d = rng.choice([2, 4]), rng.choice([128, 2048]), rng.choice([8, 32]), rng.choice([64, 128])
    transposed = rng.choice([True, False])
    shape = [b, h, s, d] if transposed else [b, s, h, d]
    strides = [s * h * d, d, h * d, 1] if transposed else [s * h * d, h * d, d, 1]
    target = rng.choice([[b, h * s * d], [b * h, s, d], [b, s, h * d]])
    return {
        "shape": shape,
        "strides": strides,
        "target": target,
        "tr": transposed,
        "b": b,
        "s": s,
        "h": h,
        "d": d,
        "sh": tuple(shape),
        "tg": tuple(target),
    }


TEMPLATES += [
    T(
        "l05.view_or_copy",
        ("l05_tensor_layout", "layout", "view_strides"),
        "memory",
        3,
        5,
        lambda p: (
            f"x has shape ({p['b']}, {p['s']}, {p['h']}, {p['d']}) and is contiguous"
            f"{'; y = x.transpose(1, 2)' if p['tr'] else '; y = x'}, so y has shape {p['sh']} and strides "
            f"{tuple(p['strides'])}. Can y.view{p['tg']} be done without a copy?"
        ),
        _view,
        lambda p, fn: VIEW[0] if fn(p["shape"], p["strides"], p["target"]) is not None else VIEW[1],
        lambda p: [Step("=", "a view needs each new dim to cover evenly spaced elements of the old ones", 1)],
        kind="choice",
        options=lambda p: list(VIEW),
        source="PyTorch's computeStride (view semantics)",
    ),
]
