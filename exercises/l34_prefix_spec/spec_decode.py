"""L34 · Speculative decoding: the rejection-sampling step that keeps the target's distribution exactly.

Lecture 34 (06_LLM推理系统与性能工程/34_vLLM系统架构剖析与高阶加速技术.md) §5.2, §5.4, lab 6.2 and
interview question 1; Leviathan et al. 2023 (arXiv:2211.17192), algorithm 1 and theorem 3.5.

A small draft model proposes x with probability q(x); the target model, which scores the γ drafted
tokens in one pass, accepts x with probability min(1, p(x)/q(x)); on a rejection it samples from the
residual (p − q)₊ normalised. Then P(output = x) = min(p, q)(x) + (1 − β)·residual(x) = p(x), where
β = Σ min(p, q) is the acceptance probability: the draft changes the speed, never the distribution.

Conventions: a distribution is a sequence of non-negative numbers summing to 1 (exactly for Fractions
and ints, within 1e-9 for floats); uniforms u are floats in [0, 1); sampling from weights w with a
uniform u is the inverse CDF: the smallest j with w_0 + … + w_j > u · Σw (``inverse_cdf``, given).
With Fractions in, exact Fractions come out. Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from numbers import Real

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

Number = Fraction | float | int


def check_distribution(name: str, dist: object, length: int | None = None) -> list:
    """``dist`` as a list of non-negative reals summing to 1, or ValueError naming ``name``."""
    if isinstance(dist, str | bytes) or not isinstance(dist, Sequence) or not dist:
        raise ValueError(f"{name} must be a non-empty sequence of probabilities, got {dist!r}")
    out = list(dist)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must hold finite probabilities >= 0, got {v!r}")
    if length is not None and len(out) != length:
        raise ValueError(f"{name} has {len(out)} entries, expected {length} (one per vocabulary token)")
    total = sum(out)
    exact = all(isinstance(v, Fraction | int) for v in out)
    if (total != 1) if exact else abs(total - 1) > 1e-9:
        raise ValueError(f"{name} must sum to 1, sums to {total}")
    return out


def check_uniform(name: str, u: object) -> float:
    """``u`` as a float in [0, 1), or ValueError naming ``name``."""
    if isinstance(u, bool) or not isinstance(u, Real) or not 0 <= u < 1:
        raise ValueError(f"{name} must be a uniform draw in [0, 1), got {u!r}")
    return u


def inverse_cdf(weights: Sequence[Number], u: float) -> int:
    """The smallest j with weights[0] + … + weights[j] > u · Σ weights (u in [0, 1), Σ weights > 0)."""
    total = sum(weights)
    threshold = Fraction(u) * total if isinstance(total, Fraction | int) else u * total
    running: Number = 0
    for j, w in enumerate(weights):
        running += w
        if running > threshold:
            return j
    raise ValueError(f"inverse_cdf: weights {list(weights)!r} have no mass above u = {u!r}")


def _pair(p: object, q: object) -> tuple[list, list]:
    pp = check_distribution("p", p)
    return pp, check_distribution("q", q, len(pp))


def accept_probability(p: Sequence[Number], q: Sequence[Number]) -> Number:
    """β = Σ_x min(p(x), q(x)): the probability that a drafted token is accepted.

    Worked: p = (1/2, 1/4, 1/8, 1/8), q = (1/4, 1/2, 1/8, 1/8) → 3/4. Not Σ q·(p/q) = Σ p = 1: the
    acceptance of x is min(1, p/q), capped at 1.
    """
    pp, qq = _pair(p, q)
    # TODO: sum the overlap of the two distributions.
    raise NotImplementedError('TODO: sum the overlap of the two distributions.')


def residual_distribution(p: Sequence[Number], q: Sequence[Number]) -> list:
    """(p − q)₊ normalised: max(0, p(x) − q(x)) / Σ_y max(0, p(y) − q(y)).

    Worked: the p, q above → [1, 0, 0, 0]. ValueError (naming ``q``) when p == q: nothing is ever
    rejected, there is no residual.
    """
    pp, qq = _pair(p, q)
    # TODO: the positive part of p − q, divided by its sum (refuse an empty residual).
    raise NotImplementedError('TODO: the positive part of p − q, divided by its sum (refuse an empty residual).')


def verify_step(p: Sequence[Number], q: Sequence[Number], draft_token: int, u: float,
                u_resample: float) -> tuple[bool, int]:
    """One verification: (True, draft_token) if accepted, else (False, a token from the residual).

    Accept iff u · q[x] < p[x] (that is u < min(1, p[x]/q[x]), without dividing); otherwise the
    token is inverse_cdf((p − q)₊, u_resample). Worked, p and q above: verify_step(p, q, 1, 0.49, 0)
    → (True, 1) since 0.49 · 1/2 < 1/4; u = 0.5 → (False, 0). Compare exactly: the comparison is on
    the uniform's exact value (Fraction(u)) when p and q are Fractions. ValueError: q[draft_token] = 0
    (the draft could not have proposed it; names ``draft_token``), u or u_resample outside [0, 1).
    """
    pp, qq = _pair(p, q)
    x = check_int("draft_token", draft_token)
    if x >= len(pp) or qq[x] == 0:
        raise ValueError(f"draft_token {x} has probability 0 under q (or is outside the vocabulary): "
                         "the draft cannot have proposed it")
    uu, ur = check_uniform("u", u), check_uniform("u_resample", u_resample)
    # TODO: accept on u·q[x] < p[x]; otherwise sample the positive part of p − q with u_resample.
    raise NotImplementedError('TODO: accept on u·q[x] < p[x]; otherwise sample the positive part of p − q with u_resample.')


def speculative_round(target: Sequence[Sequence[Number]], draft: Sequence[Sequence[Number]],
                      draft_tokens: Sequence[int], u: Sequence[float], u_resample: Sequence[float]) -> list[int]:
    """The tokens one speculative round emits: accepted drafts, then one token from the target.

    γ = len(draft_tokens); target holds γ + 1 distributions (the target's pass scores every drafted
    position and the one after), draft, u hold γ, u_resample γ + 1. Verify positions 0 … γ−1 in order
    with verify_step; at the first rejection emit the resampled token and stop; if all γ are
    accepted, emit a bonus token inverse_cdf(target[γ], u_resample[γ]). A round emits 1 … γ + 1
    tokens. ValueError naming the argument whose length is wrong.
    """
    gamma = len(draft_tokens)
    for name, seq, n in (("target", target, gamma + 1), ("draft", draft, gamma), ("u", u, gamma),
                         ("u_resample", u_resample, gamma + 1)):
        if isinstance(seq, str | bytes) or not isinstance(seq, Sequence) or len(seq) != n:
            raise ValueError(f"{name} must hold {n} entries for {gamma} drafted tokens, got {seq!r}")
    # TODO: verify in order, stop at the first rejection; the bonus token when every draft is accepted.
    raise NotImplementedError('TODO: verify in order, stop at the first rejection; the bonus token when every draft is accepted.')


def output_distribution(p: Sequence[Number], q: Sequence[Number]) -> list:
    """P(a verification emits x) = min(p, q)(x) + (1 − β) · residual(x): the theorem as code.

    β = accept_probability(p, q), residual = residual_distribution(p, q) (no residual term when
    β = 1). With Fractions this equals p exactly, for every q: that is the proof that speculative
    decoding samples from the target.
    """
    pp, qq = _pair(p, q)
    # TODO: the accepted mass plus the rejected mass spread over the residual.
    raise NotImplementedError('TODO: the accepted mass plus the rejected mass spread over the residual.')


def _check_alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be an acceptance rate in [0, 1], got {alpha!r}")
    return alpha


def expected_tokens_per_round(alpha: float, gamma: int) -> float:
    """E[tokens a round emits] = 1 + α + … + α^γ = (1 − α^{γ+1}) / (1 − α); γ + 1 at α = 1.

    Each drafted token is accepted with probability α independently, until the first rejection; the
    round always adds one token of the target's (the resampled or the bonus one). Worked: α 0.84,
    γ 4 → 3.6362; α 0.42 → 1.7016.
    """
    a = _check_alpha(alpha)
    g = check_int("gamma", gamma)
    # TODO: the geometric sum (mind α = 1).
    raise NotImplementedError('TODO: the geometric sum (mind α = 1).')


def spec_speedup(alpha: float, gamma: int, t_draft_s: float, t_target_s: float) -> dict[str, float]:
    """Time per output token with speculation, and the speed-up over one target step per token.

    {"tokens_per_round": E, "round_s": γ · t_draft + t_target, "tpot_s": round_s / E,
     "speedup": t_target / tpot_s}. Worked (course lab 6.2, γ 4, 1.8 ms draft, 24 ms target):
    α 0.84 → 3.6362 tokens, 31.2 ms, 8.580 ms, 2.797×; α 0.42 → 1.7016, 31.2 ms, 18.336 ms, 1.309×.
    """
    e = expected_tokens_per_round(alpha, gamma)
    for name, t in (("t_draft_s", t_draft_s), ("t_target_s", t_target_s)):
        if isinstance(t, bool) or not isinstance(t, Real) or not math.isfinite(t) or t < 0:
            raise ValueError(f"{name} must be a time in seconds >= 0, got {t!r}")
    if t_target_s == 0:
        raise ValueError("t_target_s must be > 0: the target's pass takes time")
    # TODO: one round = γ draft steps and one target pass; it emits E tokens on average.
    raise NotImplementedError('TODO: one round = γ draft steps and one target pass; it emits E tokens on average.')
