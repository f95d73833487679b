"""L05 · Tensor layout: contiguity after transpose and permute."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_, _

FN = ("l05_tensor_layout", "layout", "is_contiguous")
ANSWERS = [N_("contiguous"), N_("not contiguous")]


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
            N_(
                "permuted sizes {tuple_new_shape}, strides {tuple_new_strides}: walking from the last "
                "dim, each stride must equal the product of the sizes to its right (size-1 dims "
                "skipped)"
            ),
            1,
            args={"tuple_new_shape": tuple(p["new_shape"]), "tuple_new_strides": tuple(p["new_strides"])},
        )
    ]


TEMPLATES = [
    T(
        "l05.permute_contiguous",
        FN,
        "memory",
        2,
        5,
        N_("x = torch.empty{sh} (contiguous); y = x.permute{od}. Is y contiguous?"),
        _perm,
        lambda p, fn: ANSWERS[0] if fn(p["new_shape"], p["new_strides"]) else ANSWERS[1],
        _steps,
        kind="choice",
        options=lambda p: list(ANSWERS),
        source=N_("Tensor.is_contiguous(): size-1 dims are ignored"),
    ),
]

VIEW = [N_("a view works"), N_("needs a copy (reshape copies, view raises)")]


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
        lambda p: _(
            "x has shape ({b}, {s}, {h}, {d}) and is "
            "contiguous{expr}, so y has shape {sh} and strides "
            "{tuple_strides}. Can y.view{tg} be done without a copy?"
        ).format(
            b=p["b"],
            s=p["s"],
            h=p["h"],
            d=p["d"],
            expr=_("; y = x.transpose(1, 2)") if p["tr"] else _("; y = x"),
            sh=tuple(p["sh"]),
            tuple_strides=tuple(p["strides"]),
            tg=tuple(p["tg"]),
        ),
        _view,
        lambda p, fn: VIEW[0] if fn(p["shape"], p["strides"], p["target"]) is not None else VIEW[1],
        lambda p: [Step("=", N_("a view needs each new dim to cover evenly spaced elements of the old ones"), 1)],
        kind="choice",
        options=lambda p: list(VIEW),
        source=N_("PyTorch's computeStride (view semantics)"),
    ),
]
