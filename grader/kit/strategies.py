"""Hypothesis strategies shared by kernel units: shapes with tails, dtypes, and hostile values.

A drawn case is a small frozen description (shape, dtype, value kind, seed), not a tensor, so a
failure prints a readable shrunk input (``LogitCase(n_rows=1, n_cols=129, dtype='float16',
kind='large', seed=0)``) and the tensor is rebuilt from it deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# What breaks softmax-like kernels: big logits (overflow without max subtraction), rows far below
# zero (underflow to 0/0), -inf entries (masked scores), ties of the maximum.
KINDS = ("normal", "large", "negative", "neg_inf", "ties")
# Widths around powers of two, and 1.
EDGE_COLS = (1, 2, 3, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1000)


@dataclass(frozen=True)
class LogitCase:
    """A 2-D input: ``n_rows × n_cols`` values of one ``kind`` in ``dtype``, from ``seed``."""

    n_rows: int
    n_cols: int
    dtype: str
    kind: str
    seed: int

    def tensor(self) -> torch.Tensor:
        return logits(self.n_rows, self.n_cols, DTYPES[self.dtype], self.kind, self.seed)


def logits(n_rows: int, n_cols: int, dtype: torch.dtype, kind: str, seed: int) -> torch.Tensor:
    """Deterministic hostile logits; every row keeps at least one finite value."""
    g = torch.Generator().manual_seed(seed)
    shape = (n_rows, n_cols)
    if kind == "normal":
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 3
    elif kind == "large":  # ±1e4: e^x overflows every float type
        x = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * 1e4
        x[:, 0] = 1e4
    elif kind == "negative":  # e^x underflows to 0 for every entry
        x = -1e4 + torch.randn(shape, generator=g, dtype=torch.float64) * 10
    elif kind == "neg_inf":
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 3
        x[torch.rand(shape, generator=g) < 0.4] = -torch.inf
        keep = torch.randint(0, n_cols, (n_rows,), generator=g)
        x[torch.arange(n_rows), keep] = torch.randn(n_rows, generator=g, dtype=torch.float64)
    elif kind == "ties":
        x = torch.randint(0, 3, shape, generator=g).to(torch.float64)
    else:
        raise ValueError(f"unknown kind {kind!r}; one of {KINDS}")
    return x.to(dtype)


@st.composite
def logit_cases(
    draw: st.DrawFn,
    *,
    max_rows: int = 4,
    max_cols: int = 1100,
    dtypes: tuple[str, ...] = tuple(DTYPES),
    kinds: tuple[str, ...] = KINDS,
) -> LogitCase:
    """Shapes with tails (edge widths or any width up to max_cols), dtypes and value kinds."""
    edges = [c for c in EDGE_COLS if c <= max_cols]
    n_cols = draw(st.one_of(st.sampled_from(edges), st.integers(1, max_cols)))
    return LogitCase(
        n_rows=draw(st.integers(1, max_rows)),
        n_cols=n_cols,
        dtype=draw(st.sampled_from(dtypes)),
        kind=draw(st.sampled_from(kinds)),
        seed=draw(st.integers(0, 2**16)),
    )
