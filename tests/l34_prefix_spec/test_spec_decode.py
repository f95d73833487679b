"""L34 · speculative decoding: acceptance, residual, verify step and round, exact output law, speed-up."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st
from l34_reference import overlap, residual, spec_round, verify

from grader.kit import assert_number, assert_rejects_all, grade, learner, where_learner_runs

UNIT = "l34_prefix_spec"
accept_probability = learner(UNIT, "spec_decode", "accept_probability")
residual_distribution = learner(UNIT, "spec_decode", "residual_distribution")
verify_step = learner(UNIT, "spec_decode", "verify_step")
speculative_round = learner(UNIT, "spec_decode", "speculative_round")
output_distribution = learner(UNIT, "spec_decode", "output_distribution")
expected_tokens_per_round = learner(UNIT, "spec_decode", "expected_tokens_per_round")
spec_speedup = learner(UNIT, "spec_decode", "spec_speedup")

F = Fraction
P = [F(1, 2), F(1, 4), F(1, 8), F(1, 8)]  # the contract's worked pair
Q = [F(1, 4), F(1, 2), F(1, 8), F(1, 8)]


@st.composite
def distributions(draw, n: int, zeros: bool = True) -> list[Fraction]:
    """A rational distribution over n tokens (weights 0..12, at least one > 0)."""
    w = draw(st.lists(st.integers(0 if zeros else 1, 12), min_size=n, max_size=n).filter(any))
    return [F(x, sum(w)) for x in w]


@st.composite
def pairs(draw) -> tuple[list[Fraction], list[Fraction]]:
    n = draw(st.integers(1, 6))
    return draw(distributions(n)), draw(distributions(n))


def same_exactly(got: object, want: list[Fraction], call: str, why: str) -> None:
    assert isinstance(got, list | tuple) and len(got) == len(want), f"{call} = {got!r}, expected a list like {want}"
    assert all(isinstance(g, Fraction | int) and not isinstance(g, bool) for g in got), (
        f"{call} = {got!r}: with Fractions in, return exact Fractions (no float conversion)")
    assert list(got) == want, f"{call} = {[str(g) for g in got]}, expected {[str(w) for w in want]} ({why})"


def show(dist: list) -> str:
    return "[" + ", ".join(str(x) for x in dist) + "]"


# ---- accept_probability, residual_distribution ---------------------------------------------------------


@grade(accept_probability, "correctness", points=2,
       hint="A token is accepted with probability min(1, p/q) once the draft proposes it with probability q.")
@settings(max_examples=25)
@given(pq=pairs())
def test_accept_probability(pq):
    got = accept_probability(P, Q)
    assert got == F(3, 4), f"accept_probability({show(P)}, {show(Q)}) = {got!r}, expected 3/4 = Σ min(p, q)"
    p, q = pq
    call = f"accept_probability({show(p)}, {show(q)})"
    got = accept_probability(p, q)
    assert isinstance(got, Fraction | int) and got == overlap(p, q), (
        f"{call} = {got!r}, expected {overlap(p, q)} exactly (Σ_x q(x) · min(1, p(x)/q(x)) = Σ_x min(p(x), q(x)))")
    assert_number(accept_probability([0.5, 0.5], [0.9, 0.1]), 0.6, "accept_probability([0.5, 0.5], [0.9, 0.1])",
                  rel=1e-12)


@grade(residual_distribution, "correctness", points=2,
       hint="After a rejection, which tokens did the draft under-propose, and does what you return sum to 1?")
@settings(max_examples=25)
@given(pq=pairs())
def test_residual_distribution(pq):
    same_exactly(residual_distribution(P, Q), [F(1), F(0), F(0), F(0)], f"residual_distribution({show(P)}, {show(Q)})",
                 "only token 0 has p > q")
    p, q = pq
    if p == q:
        return
    same_exactly(residual_distribution(p, q), residual(p, q), f"residual_distribution({show(p)}, {show(q)})",
                 "max(0, p − q), divided by its sum")


@grade(residual_distribution, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_residual_rejects():
    assert_rejects_all(residual_distribution, [((P, P), None), (([F(1, 2), F(1, 3)], Q[:2]), "p"),
                                               ((P, Q[:3]), "q"), (([-0.5, 1.5], [0.5, 0.5]), "p")])
    assert_rejects_all(accept_probability, [((P, [F(1, 2), F(1, 4), F(1, 4), F(1, 4)]), "q")])


# ---- verify_step ------------------------------------------------------------------------------------


@grade(verify_step, "correctness", points=3,
       hint="Accept when u < min(1, p/q). On a rejection, do you sample from p, or from what p has beyond q?")
def test_verify_step_worked():
    """u 0.49 · q[1] = 0.245 < p[1] = 1/4 accepts; u = 0.5 gives exactly 1/4: rejected, resampled to token 0."""
    for args, want in [((P, Q, 1, 0.49, 0.0), (True, 1)), ((P, Q, 1, 0.5, 0.0), (False, 0)),
                       ((P, Q, 1, 0.5, 0.999), (False, 0)), ((P, Q, 0, 0.999, 0.5), (True, 0)),
                       ((P, Q, 2, 0.0, 0.3), (True, 2)), ((Q, P, 0, 0.0, 0.3), (True, 0)),
                       ((Q, P, 0, 0.5, 0.0), (False, 1)), (([F(1, 2), F(1, 2), F(0)], [F(1, 3), F(1, 3), F(1, 3)],
                                                            2, 0.0, 0.5), (False, 1))]:
        got = verify_step(*args)
        call = f"verify_step({show(args[0])}, {show(args[1])}, {', '.join(map(repr, args[2:]))})"
        assert isinstance(got, tuple | list) and len(got) == 2, f"{call} = {got!r}, expected (accepted, token)"
        assert (bool(got[0]), got[1]) == want, (
            f"{call} = {got!r}, expected {want}: accept iff u · q[x] < p[x]; else the smallest j with "
            "cumsum((p − q)₊)[j] > u_resample · Σ(p − q)₊")


@st.composite
def verify_cases(draw) -> tuple:
    """(p, q, draft_token, u, u_resample); half the time u sits exactly on the edge u · q[x] = p[x]."""
    p, q = draw(pairs())
    x = draw(st.sampled_from([i for i, v in enumerate(q) if v > 0]), label="draft_token")
    u, ur = draw(st.floats(0, 1, exclude_max=True)), draw(st.floats(0, 1, exclude_max=True))
    edge = p[x] / q[x]
    if draw(st.booleans()) and edge < 1 and float(edge) == edge:
        u = float(edge)
    return p, q, x, u, ur


SKEW_P, SKEW_Q = [F(1, 10), F(3, 10), F(6, 10)], [F(1, 2), F(1, 4), F(1, 4)]


@grade(verify_step, "correctness", points=3, hint="Compare u · q[x] < p[x] on exact values: no rounding at the edge.")
@settings(max_examples=30)
@given(case=verify_cases())
@example(case=(SKEW_P, SKEW_Q, 0, 0.15, 0.5))  # 0.15 · 1/2 < 1/10: accepted, although u > p[x]
@example(case=(SKEW_P, SKEW_Q, 0, 0.5, 0.05))  # rejected: the residual (0, 1/8, 7/8) gives token 1, p gives 0
@example(case=(P, Q, 1, 0.5, 0.0))  # u · q[x] = p[x] exactly: rejected
def test_verify_step_exact(case):
    p, q, x, u, ur = case
    want = verify(p, q, x, u, ur)
    got = verify_step(p, q, x, u, ur)
    call = f"verify_step({show(p)}, {show(q)}, {x}, {u!r}, {ur!r})"
    assert isinstance(got, tuple | list) and len(got) == 2, f"{call} = {got!r}, expected (accepted, token)"
    assert (bool(got[0]), got[1]) == want, f"{call} = {tuple(got)!r}, expected {want}"


def sample_verify(p: list[float], q: list[float], draws: int, seed: int) -> list[int]:
    """Histogram of ``draws`` verification outputs, drafts x ~ q: run where the learner's code runs."""
    fn = verify_step.resolve()
    rng = random.Random(seed)
    tokens, cum = range(len(q)), list(itertools.accumulate(q))
    counts = [0] * len(p)
    for x in rng.choices(tokens, cum_weights=cum, k=draws):
        counts[fn(p, q, x, rng.random(), rng.random())[1]] += 1
    return counts


CHI2_3DOF_999 = 16.266  # the χ² quantile at 0.999 for 3 degrees of freedom: a correct sampler fails 1 seed in 1,000


@grade(verify_step, "correctness", points=2,
       hint="Over many seeded rounds, does each token come out as often as the target says?")
def test_verify_step_samples_the_target():
    """4 × 10⁴ seeded steps, p = (1/2, 1/4, 1/8, 1/8), drafts from q = (0.1, 0.2, 0.3, 0.4): χ² against p below
    16.27, the 0.999 quantile for 3 degrees of freedom (false-alarm rate 10⁻³ for a correct sampler and a random
    seed; the seed is fixed, so a given submission passes or fails every time)."""
    p, q, n = [0.5, 0.25, 0.125, 0.125], [0.1, 0.2, 0.3, 0.4], 40_000
    counts = where_learner_runs(sample_verify, p, q, n, 2026)
    chi2 = sum((c - n * w) ** 2 / (n * w) for c, w in zip(counts, p, strict=True))
    assert chi2 < CHI2_3DOF_999, (
        f"{n:,} seeded verify_step calls with drafts x ~ q = {q} emitted {counts}, expected about "
        f"{[round(n * w) for w in p]} (the target p = {p}): χ² = {chi2:.1f} > {CHI2_3DOF_999} (a correct sampler "
        "exceeds it once in 1,000 seeds). Accept iff u · q[x] < p[x]; on rejection sample from (p − q)₊, not from p")


@grade(verify_step, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_verify_step_rejects():
    z = [F(1, 2), F(1, 2), F(0), F(0)]
    assert_rejects_all(verify_step, [((P, z, 2, 0.1, 0.1), "draft_token"), ((P, Q, 1, 1.0, 0.1), "u"),
                                     ((P, Q, 1, -0.1, 0.1), "u"), ((P, Q, 1, 0.1, 1.0), "u_resample"),
                                     (([F(1, 2), F(1, 4), F(1, 8), F(1, 4)], Q, 1, 0.1, 0.1), "p"),
                                     ((P, Q, 4, 0.1, 0.1), "draft_token")])


# ---- speculative_round ------------------------------------------------------------------------------


@grade(speculative_round, "correctness", points=2,
       hint="When every draft is accepted, the target's pass has already scored one more position: use it.")
def test_speculative_round_worked():
    """γ 2 on the worked pair: all accepted → 3 tokens (bonus from target[2]); first rejected → 1 token."""
    tgt, dft = [P, P, Q], [Q, Q]
    for args, want in [((tgt, dft, [1, 2], [0.1, 0.2], [0.9, 0.9, 0.6]), [1, 2, 1]),
                       ((tgt, dft, [1, 2], [0.6, 0.2], [0.9, 0.9, 0.6]), [0]),
                       ((tgt, dft, [0, 3], [0.9, 0.99], [0.9, 0.9, 0.1]), [0, 3, 0]),
                       ((tgt, dft, [2, 1], [0.0, 0.5], [0.2, 0.7, 0.1]), [2, 0]),
                       (([Q], [], [], [], [0.5]), [1])]:
        got = speculative_round(*args)
        assert list(got) == want, (
            f"speculative_round(target={[show(t) for t in args[0]]}, draft={[show(d) for d in args[1]]}, "
            f"draft_tokens={args[2]}, u={args[3]}, u_resample={args[4]}) = {got!r}, expected {want}: stop at the "
            "first rejection (emit its resampled token); all accepted → add inverse_cdf(target[γ], u_resample[γ])")


@st.composite
def round_cases(draw) -> tuple:
    """(target, draft, draft_tokens, u, u_resample) for γ in 0..4 over 2..5 tokens."""
    gamma, n = draw(st.integers(0, 4), label="γ"), draw(st.integers(2, 5), label="vocabulary")
    tgt = [draw(distributions(n), label=f"target[{i}]") for i in range(gamma + 1)]
    dft = [draw(distributions(n), label=f"draft[{i}]") for i in range(gamma)]
    xs = [draw(st.sampled_from([j for j, v in enumerate(d) if v > 0]), label="x") for d in dft]
    us = [draw(st.floats(0, 1, exclude_max=True), label="u") for _ in range(gamma)]
    urs = [draw(st.floats(0, 1, exclude_max=True), label="u_resample") for _ in range(gamma + 1)]
    return tgt, dft, xs, us, urs


@grade(speculative_round, "correctness", points=2, hint="Which u_resample does the bonus token use?")
@settings(max_examples=25)
@given(case=round_cases())
@example(case=([P, P, Q], [Q, Q], [1, 2], [0.6, 0.2], [0.9, 0.9, 0.6]))  # rejected at once: one token
@example(case=([P, P, Q], [Q, Q], [1, 2], [0.3, 0.2], [0.9, 0.9, 0.6]))  # 0.3 · 1/2 < 1/4: accepted, then bonus
def test_speculative_round_matches_reference(case):
    tgt, dft, xs, us, urs = case
    got = speculative_round(tgt, dft, xs, us, urs)
    want = spec_round(tgt, dft, xs, us, urs)
    assert list(got) == want, (f"speculative_round(target={[show(t) for t in tgt]}, draft={[show(d) for d in dft]}, "
                               f"draft_tokens={xs}, u={us}, u_resample={urs}) = {got}, expected {want}")


@grade(speculative_round, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_speculative_round_rejects():
    assert_rejects_all(speculative_round, [(([P, P], [Q], [1], [0.1], [0.1]), "u_resample"),
                                           (([P], [Q], [1], [0.1], [0.1, 0.2]), "target"),
                                           (([P, P], [Q], [1], [], [0.1, 0.2]), "u")])


# ---- output_distribution -------------------------------------------------------------------------


@grade(output_distribution, "correctness", points=3,
       hint="min(p, q) is what gets accepted; how much mass is rejected, and where does it go?")
@settings(max_examples=30)
@given(pq=pairs())
def test_output_distribution_is_the_target(pq):
    """The theorem: min(p, q) + (1 − β) · residual == p exactly, for every draft q (β = 1 when q == p)."""
    same_exactly(output_distribution(P, Q), P, f"output_distribution({show(P)}, {show(Q)})", "the target p itself")
    p, q = pq
    same_exactly(output_distribution(p, q), p, f"output_distribution({show(p)}, {show(q)})",
                 "min(p, q) + (1 − Σ min(p, q)) · (p − q)₊ / Σ(p − q)₊ = p")
    same_exactly(output_distribution(p, p), p, f"output_distribution({show(p)}, {show(p)})", "q = p: all accepted")


# ---- expected_tokens_per_round, spec_speedup ----------------------------------------------------------


def tokens_exact(alpha: float, gamma: int) -> float:
    return float(sum(F(alpha) ** k for k in range(gamma + 1)))


@grade(expected_tokens_per_round, "correctness", points=2,
       hint="A round with every draft accepted emits γ + 1 tokens; one that rejects the first still emits one.")
@settings(max_examples=30)
@given(alpha=st.one_of(st.floats(0, 0.999), st.sampled_from([0.0, 0.5, 0.84, 0.42, 1.0])), gamma=st.integers(0, 12))
def test_expected_tokens_per_round(alpha, gamma):
    """α 0.84, γ 4 → 3.6362 (course lab 6.2); 0.42 → 1.7016; α = 1 → γ + 1; α = 0 → 1."""
    for a, want in [(0.84, 3.6362), (0.42, 1.7016)]:
        got = expected_tokens_per_round(a, 4)
        assert_number(got, tokens_exact(a, 4), f"expected_tokens_per_round({a}, 4)", rel=1e-12)
        assert abs(got - want) < 5e-5, f"expected_tokens_per_round({a}, 4) = {got}, the course prints {want}"
    assert_number(expected_tokens_per_round(1.0, 4), 5.0, "expected_tokens_per_round(1.0, 4): every draft accepted",
                  rel=1e-12)
    assert_number(expected_tokens_per_round(alpha, gamma), tokens_exact(alpha, gamma),
                  f"expected_tokens_per_round({alpha!r}, {gamma})", rel=1e-9)


@grade(spec_speedup, "correctness", points=2,
       hint="One round costs γ draft steps and one target pass, and emits E tokens on average.")
@settings(max_examples=30)
@given(alpha=st.floats(0, 1), gamma=st.integers(0, 8), td=st.floats(0, 0.01), tt=st.floats(0.001, 0.1))
def test_spec_speedup(alpha, gamma, td, tt):
    """γ 4, 1.8 ms draft, 24 ms target: α 0.84 → 31.2 ms, 8.580 ms, 2.797×; α 0.42 → 18.336 ms, 1.309×."""
    for a, tpot, speed in [(0.84, 0.008580, 2.797), (0.42, 0.018336, 1.309), (1.0, 0.00624, 3.846)]:
        got = spec_speedup(a, 4, 0.0018, 0.024)
        call = f"spec_speedup({a}, 4, 0.0018, 0.024)"
        assert isinstance(got, dict), f"{call} = {got!r}, expected a dict"
        assert_number(got.get("round_s"), 4 * 0.0018 + 0.024, f"{call}['round_s']", rel=1e-12)
        assert abs(got.get("tpot_s", 0) - tpot) < 5e-7, f"{call}['tpot_s'] = {got.get('tpot_s')}, expected {tpot}"
        assert abs(got.get("speedup", 0) - speed) < 5e-4, f"{call}['speedup'] = {got.get('speedup')}, expected {speed}×"
    e = tokens_exact(alpha, gamma)
    round_s = gamma * td + tt
    want = {"tokens_per_round": e, "round_s": round_s, "tpot_s": round_s / e, "speedup": tt * e / round_s}
    got = spec_speedup(alpha, gamma, td, tt)
    for key, value in want.items():
        assert_number(got.get(key), value, f"spec_speedup({alpha!r}, {gamma}, {td!r}, {tt!r})[{key!r}]", rel=1e-9)


@grade(spec_speedup, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_spec_speedup_rejects():
    assert_rejects_all(spec_speedup, [((1.2, 4, 0.0018, 0.024), "alpha"), ((0.8, -1, 0.0018, 0.024), "gamma"),
                                      ((0.8, 4, -0.1, 0.024), "t_draft_s"), ((0.8, 4, 0.0018, 0.0), "t_target_s")])
    assert_rejects_all(expected_tokens_per_round, [((-0.1, 4), "alpha"), ((0.5, 2.0), "gamma")])
