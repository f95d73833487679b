"""L31 · A mixture-of-experts layer as data: top-k routing, expert capacity and drops, combine, all-to-all bytes.

A router scores each token against E experts; the token goes to its k best experts with gates that
are a softmax over those k scores only. Each expert takes at most C = ceil(cf·k·T/E) assignments
(GShard, DeepSpeed top-2): first choices are served before second choices, in token order, and an
assignment past the capacity is dropped (the residual connection carries the token unchanged). The
experts live on ranks, E/N each: every kept assignment whose expert sits on another rank crosses the
network twice, once to the expert (dispatch) and once back (combine).

Conventions: counts and bytes are exact ints; the capacity is exact on the decimal capacity factor
(``Fraction(str(cf))``); gates are floats; invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int


def _rows(name: str, value: object, width: int | None = None) -> list[list]:
    """``value`` as a non-empty list of equal-length non-empty rows, or ValueError naming ``name``."""
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty list of rows, got {value!r}")
    rows = []
    for t, row in enumerate(value):
        if not isinstance(row, Sequence) or isinstance(row, str) or not row:
            raise ValueError(f"{name}[{t}] must be a non-empty list, got {row!r}")
        rows.append(list(row))
    want = width if width is not None else len(rows[0])
    bad = [t for t, row in enumerate(rows) if len(row) != want]
    if bad:
        raise ValueError(f"{name}[{bad[0]}] has {len(rows[bad[0]])} entries, expected {want} like the others")
    return rows


def _real(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x!r}")
    return float(x)


def _check_experts(experts: object, n_experts: int) -> list[list[int]]:
    rows = _rows("experts", experts)
    for t, row in enumerate(rows):
        for e in row:
            check_int(f"experts[{t}]", e)
            if e >= n_experts:
                raise ValueError(f"experts[{t}] names expert {e}, but there are only {n_experts} (0..{n_experts - 1})")
        if len(set(row)) != len(row):
            raise ValueError(f"experts[{t}] = {row}: a token picks k distinct experts")
    return rows


# ---------------------------------------------------------------------------------------------
# 1. Routing
# ---------------------------------------------------------------------------------------------


def topk_route(logits: Sequence[Sequence[float]], k: int) -> tuple[list[list[int]], list[list[float]]]:
    """Per token, the ``k`` experts with the largest logits and their gates.

    Experts come in descending logit order, a tie going to the lower expert index; the gates are a
    softmax over the k selected logits only (they sum to 1), as in the course's lab 4.1.
    Worked: logits [1.0, 3.0, 3.0, 0.0], k=2 → experts [1, 2], gates [0.5, 0.5].
    ValueError naming ``k`` when k < 1 or k > E, ``logits`` for ragged or non-finite rows.
    """
    rows = _rows("logits", logits)
    rows = [[_real(f"logits[{t}]", x) for x in row] for t, row in enumerate(rows)]
    k = check_int("k", k, 1)
    if k > len(rows[0]):
        raise ValueError(f"k = {k} is more than the {len(rows[0])} experts")
    # TODO: per token, sort the experts by (−logit, index), keep k, softmax their logits (minus the max).
    raise NotImplementedError('TODO: per token, sort the experts by (−logit, index), keep k, softmax their logits (minus the max).')


# ---------------------------------------------------------------------------------------------
# 2. Capacity
# ---------------------------------------------------------------------------------------------


def expert_capacity(n_tokens: int, n_experts: int, k: int, capacity_factor: float) -> int:
    """Assignments one expert may take: ceil(cf·k·T/E), exact on the decimal ``capacity_factor``.

    Worked: (50, 2, 2, 1.1) → 55 (in floats 1.1·2·50/2 = 55.00000000000001, whose ceil is 56);
    (6, 4, 2, 1.0) → 3. ValueError naming ``capacity_factor`` when it is not a number > 0, ``k`` when
    k > n_experts.
    """
    t, e, k = check_int("n_tokens", n_tokens, 1), check_int("n_experts", n_experts, 1), check_int("k", k, 1)
    if k > e:
        raise ValueError(f"k = {k} is more than n_experts = {e}")
    cf = _real("capacity_factor", capacity_factor)
    if cf <= 0:
        raise ValueError(f"capacity_factor must be > 0, got {capacity_factor!r}")
    # TODO: the ceiling of cf·k·T/E on the decimal value of cf (no float product before the ceiling).
    raise NotImplementedError('TODO: the ceiling of cf·k·T/E on the decimal value of cf (no float product before the ceiling).')


def apply_capacity(experts: Sequence[Sequence[int]], n_experts: int, capacity_factor: float) -> dict:
    """Which assignments each expert keeps when it takes at most C = expert_capacity(T, E, k, cf).

    Priority: every token's first choice in token order, then every second choice, and so on. Returns
    {"capacity": C, "kept": [per token, per choice: bool], "tokens_per_expert": [assignments kept per
    expert], "dropped": assignments dropped, "dropped_tokens": [tokens with no choice kept, ascending]}.
    Worked (lab 4.1's routes [3,2], [3,2], [3,0] ×4, E=4): cf 1.0 → C 3, [3, 0, 2, 3], 4 dropped,
    token 5 fully dropped; cf 0.5 → C 2, 6 dropped, tokens 4 and 5.
    ValueError naming ``experts`` for an expert out of range, ragged rows or a repeated expert in a row.
    """
    e = check_int("n_experts", n_experts, 1)
    rows = _check_experts(experts, e)
    k = len(rows[0])
    capacity = expert_capacity(len(rows), e, k, capacity_factor)
    # TODO: walk choice by choice (all first choices, then all second ...), token by token within a choice.
    raise NotImplementedError('TODO: walk choice by choice (all first choices, then all second ...), token by token within a choice.')


# ---------------------------------------------------------------------------------------------
# 3. Combine and the all-to-all
# ---------------------------------------------------------------------------------------------


def moe_combine(x: Sequence[Sequence[float]], experts: Sequence[Sequence[int]], gates: Sequence[Sequence[float]],
                kept: Sequence[Sequence[bool]], expert_scale: Sequence[float]) -> list[list[float]]:
    """The MoE layer's output per token: Σ over kept choices of gate · expert(x).

    Expert e is the lab's stand-in FFN: it multiplies x by ``expert_scale[e]``. A dropped choice adds
    nothing (the residual connection outside this function carries x), and the kept gates are NOT
    renormalised. Worked (lab 4.1, rank 0 token 0, experts [3, 2], gates 0.7857, 0.2143, scales 1..4):
    [3.142, 5.224, 6.474, 1.931].
    ValueError naming ``x``, ``experts``, ``gates``, ``kept`` or ``expert_scale`` for shapes that disagree.
    """
    xs = _rows("x", x)
    xs = [[_real(f"x[{t}]", v) for v in row] for t, row in enumerate(xs)]
    scale = [_real("expert_scale", s) for s in expert_scale] if isinstance(expert_scale, Sequence) else None
    if not scale:
        raise ValueError(f"expert_scale must be a non-empty list of numbers, one per expert, got {expert_scale!r}")
    rows = _check_experts(experts, len(scale))
    k = len(rows[0])
    g = [[_real(f"gates[{t}]", v) for v in row] for t, row in enumerate(_rows("gates", gates, k))]
    keep = _rows("kept", kept, k)
    for name, table in (("experts", rows), ("gates", g), ("kept", keep)):
        if len(table) != len(xs):
            raise ValueError(f"{name} has {len(table)} rows for {len(xs)} tokens of x")
    # TODO: per token, add gate · scale · x for each kept choice, in choice order; dropped choices add nothing.
    raise NotImplementedError('TODO: per token, add gate · scale · x for each kept choice, in choice order; dropped choices add nothing.')


def all_to_all_bytes(token_rank: Sequence[int], experts: Sequence[Sequence[int]], kept: Sequence[Sequence[bool]],
                     experts_per_rank: int, n_ranks: int, hidden: int, elem_bytes: int) -> dict:
    """Bytes the MoE layer's two all-to-alls move between ranks, in one forward pass.

    Expert e lives on rank e // experts_per_rank. Returns {"dispatch": [src][dst] bytes, "combine":
    [src][dst] bytes, "sent": [bytes each rank sends in both]}: dispatch[src][dst] adds hidden·elem_bytes
    for each kept assignment of a token on ``src`` to an expert on ``dst`` ≠ src; combine is its
    transpose (the result goes back); an assignment whose expert is on the token's own rank, or that was
    dropped, moves nothing. Worked (lab 4.1, 2 ranks, h=4, bf16): dispatch [[0, 40], [24, 0]], sent
    [64, 64]. ValueError naming the argument that is out of range or disagrees in length.
    """
    epr, n = check_int("experts_per_rank", experts_per_rank, 1), check_int("n_ranks", n_ranks, 1)
    h, eb = check_int("hidden", hidden, 1), check_int("elem_bytes", elem_bytes, 1)
    rows = _check_experts(experts, epr * n)
    keep = _rows("kept", kept, len(rows[0]))
    if not isinstance(token_rank, Sequence) or len(token_rank) != len(rows) or len(keep) != len(rows):
        raise ValueError(f"token_rank and kept must have one entry per token ({len(rows)}), got {token_rank!r}")
    for r in token_rank:
        check_int("token_rank", r)
        if r >= n:
            raise ValueError(f"token_rank holds rank {r}, but n_ranks = {n}")
    # TODO: count hidden·elem_bytes per kept remote assignment into dispatch[src][dst]; combine is the transpose.
    raise NotImplementedError('TODO: count hidden·elem_bytes per kept remote assignment into dispatch[src][dst]; combine is the transpose.')
