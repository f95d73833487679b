"""C1 · The DDP α-β step-time model, a non-negative least-squares fit of it, weak-scaling efficiency and its
prediction, all graded on given timings (a real measurement on shared CPUs is too noisy to grade)."""

from __future__ import annotations

import math

from hypothesis import assume, given
from hypothesis import strategies as st

from grader.kit import assert_number, assert_rejects_all, grade, learner

UNIT = "c1_scaling_study"
ddp_step_seconds = learner(UNIT, "scaling", "ddp_step_seconds")
fit_ddp_alpha_beta = learner(UNIT, "scaling", "fit_ddp_alpha_beta")
scaling_efficiency = learner(UNIT, "scaling", "scaling_efficiency")
predicted_efficiency = learner(UNIT, "scaling", "predicted_efficiency")

MLP_GRAD_BYTES = 6_340_648  # the 512-1024-1024-10 fp32 MLP: 1,585,162 parameters × 4 B
EXACT_P = [1, 2, 4]
EXACT_T = [0.040, 0.046740648, 0.050710972]  # t_c 40 ms, α 200 µs, β 1 GB/s
NOISY_P, NOISY_T = [1, 1, 2, 3, 4], [0.040, 0.042, 0.047, 0.049, 0.051]
KEYS = ("t_compute_s", "alpha_s", "beta_bytes_per_s", "rmse_s")


def model(p: int, t_c: float, g: int, alpha: float, beta: float) -> float:
    return t_c + 2 * (p - 1) * alpha + 2 * (p - 1) / p * g / beta


def nnls_oracle(sizes: list[int], times: list[float], g: int) -> tuple[float, float, float]:
    """Brute force over the four active sets of a two-variable non-negative least squares: the feasible one
    with the smallest squared error (this is what the contract's "unconstrained, else the better clipped
    one-variable fit" amounts to)."""
    t_c = sum(t for p, t in zip(sizes, times, strict=True) if p == 1) / sizes.count(1)
    rows = [(2.0 * (p - 1), 2.0 * (p - 1) / p * g / 1e9, t - t_c) for p, t in zip(sizes, times, strict=True) if p > 1]
    saa = sum(a * a for a, _, _ in rows)
    sbb = sum(b * b for _, b, _ in rows)
    sab = sum(a * b for a, b, _ in rows)
    say = sum(a * y for a, _, y in rows)
    sby = sum(b * y for _, b, y in rows)
    det = saa * sbb - sab * sab
    candidates = [((sbb * say - sab * sby) / det, (saa * sby - sab * say) / det), (say / saa, 0.0), (0.0, sby / sbb),
                  (0.0, 0.0)]
    feasible = [(a, b) for a, b in candidates if a >= 0 and b >= 0]
    a, b = min(feasible, key=lambda x: sum((y - x[0] * u - x[1] * v) ** 2 for u, v, y in rows))
    return t_c, a, b / 1e9


def check_fit(got: object, call: str) -> None:
    assert isinstance(got, dict) and set(KEYS) <= set(got), f"{call} = {got!r}: expected a dict with keys {KEYS}"


# ---- ddp_step_seconds --------------------------------------------------------------------------------------


@grade(ddp_step_seconds, "correctness", points=2,
       hint="How many messages does a ring all-reduce send in a row, and what share of the bytes does each rank send?")
def test_step_worked_numbers():
    """t_c 40 ms, α 200 µs, β 1 GB/s, 6,340,648 B: P=2 → 46.740648 ms, P=4 → 50.710972 ms, P=1 → 40 ms."""
    for p, want in zip(EXACT_P, EXACT_T, strict=True):
        call = f"ddp_step_seconds({p}, 0.040, {MLP_GRAD_BYTES:_}, 2e-4, 1e9)"
        assert_number(ddp_step_seconds(p, 0.040, MLP_GRAD_BYTES, 2e-4, 1e9), want, call, rel=1e-9)
    assert_number(ddp_step_seconds(64, 0.040, MLP_GRAD_BYTES, 2e-4, 1e9), 0.040 + 126 * 2e-4 + 126 / 64 * 6.340648e-3,
                  "ddp_step_seconds(64, ...): 2(P−1) = 126 latencies (the course's 126α)", rel=1e-9)
    assert_number(ddp_step_seconds(8, 0.5, 10**9, 0.0, math.inf), 0.5,
                  "ddp_step_seconds(8, 0.5, 1e9 B, α=0, β=inf): no communication cost", rel=1e-12)


@grade(ddp_step_seconds, "correctness", points=1, hint="T(P) = t_c + 2(P−1)·α + 2(P−1)/P·bytes/β.")
@given(p=st.integers(1, 1024), t_c=st.floats(0, 10), g=st.integers(0, 10**11), alpha=st.floats(0, 1e-2),
       beta=st.floats(1e6, 1e13))
def test_step_closed_form(p, t_c, g, alpha, beta):
    assert_number(ddp_step_seconds(p, t_c, g, alpha, beta), model(p, t_c, g, alpha, beta),
                  f"ddp_step_seconds({p}, {t_c!r}, {g}, {alpha!r}, {beta!r})", rel=1e-12, abs_tol=1e-300)


@grade(ddp_step_seconds, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_step_rejects_bad_arguments():
    assert_rejects_all(ddp_step_seconds, [
        ((0, 0.04, 100, 1e-4, 1e9), "world_size"),
        ((2.0, 0.04, 100, 1e-4, 1e9), "world_size"),
        ((2, -0.04, 100, 1e-4, 1e9), "t_compute_s"),
        ((2, 0.04, 100.0, 1e-4, 1e9), "grad_bytes"),
        ((2, 0.04, 100, -1e-4, 1e9), "alpha_s"),
        ((2, 0.04, 100, 1e-4, 0.0), "bytes_per_s"),
        ((2, 0.04, 100, 1e-4, float("nan")), "bytes_per_s"),
    ])


# ---- fit_ddp_alpha_beta ------------------------------------------------------------------------------------


@grade(fit_ddp_alpha_beta, "correctness", points=3,
       hint="Subtract the P = 1 compute time first; then two unknowns, α and 1/β, and one equation per P > 1 run.")
def test_fit_worked_numbers():
    """Exact timings give back α 200 µs, β 1 GB/s; the noisy [1, 1, 2, 3, 4] × [40, 42, 47, 49, 51] ms give t_c
    41 ms, α 383.459 µs, β 1.2549 GB/s, rmse 0.651 ms (over all five runs)."""
    call = f"fit_ddp_alpha_beta({EXACT_P}, {EXACT_T}, {MLP_GRAD_BYTES:_})"
    got = fit_ddp_alpha_beta(EXACT_P, EXACT_T, MLP_GRAD_BYTES)
    check_fit(got, call)
    assert_number(got["t_compute_s"], 0.040, f"{call}['t_compute_s']", rel=1e-9)
    assert_number(got["alpha_s"], 2e-4, f"{call}['alpha_s']", rel=1e-9)
    assert_number(got["beta_bytes_per_s"], 1e9, f"{call}['beta_bytes_per_s']", rel=1e-9)
    assert_number(got["rmse_s"], 0.0, f"{call}['rmse_s']", abs_tol=1e-12)
    call = f"fit_ddp_alpha_beta({NOISY_P}, {NOISY_T}, {MLP_GRAD_BYTES:_})"
    got = fit_ddp_alpha_beta(NOISY_P, NOISY_T, MLP_GRAD_BYTES)
    check_fit(got, call)
    t_c, a, inv = nnls_oracle(NOISY_P, NOISY_T, MLP_GRAD_BYTES)
    assert_number(got["t_compute_s"], t_c, f"{call}['t_compute_s'] (the mean of the P = 1 runs)", rel=1e-9)
    assert_number(got["alpha_s"], a, f"{call}['alpha_s']", rel=1e-9)
    assert_number(got["beta_bytes_per_s"], 1 / inv, f"{call}['beta_bytes_per_s']", rel=1e-9)
    fitted = [model(p, t_c, MLP_GRAD_BYTES, a, 1 / inv) for p in NOISY_P]
    rmse = math.sqrt(sum((f - t) ** 2 for f, t in zip(fitted, NOISY_T, strict=True)) / len(NOISY_T))
    assert_number(got["rmse_s"], rmse, f"{call}['rmse_s'] (root mean square over every run, P = 1 included)",
                  rel=1e-9)
    assert abs(got["alpha_s"] - 383.459e-6) < 1e-9 and abs(got["rmse_s"] - 0.651e-3) < 1e-6


@grade(fit_ddp_alpha_beta, "correctness", points=2,
       hint="A least-squares latency can come out negative on noisy data: is that a physical answer? Which "
            "one-variable fit is better then?")
def test_fit_clips_at_zero():
    """[40, 41, 44] ms at P = 1, 2, 4: the unconstrained 1/β is negative, so 1/β = 0 (β = inf) and α = 650 µs."""
    call = f"fit_ddp_alpha_beta([1, 2, 4], [0.040, 0.041, 0.044], {MLP_GRAD_BYTES:_})"
    got = fit_ddp_alpha_beta([1, 2, 4], [0.040, 0.041, 0.044], MLP_GRAD_BYTES)
    check_fit(got, call)
    assert got["beta_bytes_per_s"] == math.inf, (f"{call}['beta_bytes_per_s'] = {got['beta_bytes_per_s']!r}: the "
                                                 "unconstrained 1/β is negative; clipped to 0, β is math.inf")
    assert_number(got["alpha_s"], 650e-6, f"{call}['alpha_s'] (the latency-only fit)", rel=1e-9)
    call = f"fit_ddp_alpha_beta([1, 2, 4, 8], [0.040, 0.052, 0.051, 0.053], {MLP_GRAD_BYTES:_})"
    got = fit_ddp_alpha_beta([1, 2, 4, 8], [0.040, 0.052, 0.051, 0.053], MLP_GRAD_BYTES)
    t_c, a, inv = nnls_oracle([1, 2, 4, 8], [0.040, 0.052, 0.051, 0.053], MLP_GRAD_BYTES)
    assert_number(got["alpha_s"], a, f"{call}['alpha_s'] (a negative latency is clipped to 0)", abs_tol=1e-15)
    assert_number(got["beta_bytes_per_s"], 1 / inv, f"{call}['beta_bytes_per_s'] (the bandwidth-only fit)", rel=1e-9)


@grade(fit_ddp_alpha_beta, "correctness", points=2,
       hint="Timings made by the model itself must be fitted back to the α and β that made them.")
@given(t_c=st.floats(1e-4, 1.0), alpha=st.floats(1e-7, 1e-2), beta=st.floats(1e7, 1e12),
       g=st.integers(10**5, 10**10), sizes=st.lists(st.integers(2, 16), min_size=2, max_size=6, unique=True),
       ones=st.integers(1, 3))
def test_fit_recovers_the_model(t_c, alpha, beta, g, sizes, ones):
    assume(2 * alpha >= 1e-4 * t_c and g / beta >= 1e-4 * t_c)  # both terms above the float noise of t_c
    world = [1] * ones + sizes
    times = [model(p, t_c, g, alpha, beta) for p in world]
    call = f"fit_ddp_alpha_beta({world}, {times}, {g})"
    got = fit_ddp_alpha_beta(world, times, g)
    check_fit(got, call)
    assert_number(got["t_compute_s"], t_c, f"{call}['t_compute_s']", rel=1e-9)
    assert_number(got["alpha_s"], alpha, f"{call}['alpha_s']", rel=1e-5)
    assert_number(1 / got["beta_bytes_per_s"], 1 / beta, f"1 / {call}['beta_bytes_per_s']", rel=1e-5)
    assert 0 <= got["rmse_s"] < 1e-9 * max(times), f"{call}['rmse_s'] = {got['rmse_s']!r}: exact timings fit to ~0"


@grade(fit_ddp_alpha_beta, "correctness", points=2,
       hint="Whatever the noise, α ≥ 0 and 1/β ≥ 0, and no feasible pair may fit better than yours.")
@given(base=st.floats(0.01, 0.1), noise=st.lists(st.floats(-0.3, 0.3), min_size=5, max_size=5))
def test_fit_never_negative_and_optimal(base, noise):
    world = [1, 1, 2, 4, 8]
    times = [base * (1 + 0.2 * math.log2(p) + n) for p, n in zip(world, noise, strict=True)]
    call = f"fit_ddp_alpha_beta({world}, {times}, {MLP_GRAD_BYTES:_})"
    got = fit_ddp_alpha_beta(world, times, MLP_GRAD_BYTES)
    check_fit(got, call)
    assert got["alpha_s"] >= 0 and got["beta_bytes_per_s"] > 0, f"{call} = {got}: α and β must be non-negative"
    t_c, a, inv = nnls_oracle(world, times, MLP_GRAD_BYTES)
    assert_number(got["alpha_s"], a, f"{call}['alpha_s']", rel=1e-7, abs_tol=1e-12)
    got_inv = 1 / got["beta_bytes_per_s"]
    assert abs(got_inv - inv) <= 1e-7 * inv + 1e-21, f"{call}: 1/β = {got_inv!r}, expected {inv!r}"
    assert got["rmse_s"] >= 0, f"{call}['rmse_s'] = {got['rmse_s']} < 0"


@grade(fit_ddp_alpha_beta, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_fit_rejects_bad_arguments():
    g = MLP_GRAD_BYTES
    assert_rejects_all(fit_ddp_alpha_beta, [
        (([2, 4, 8], [0.05, 0.06, 0.07], g), "world_sizes"),
        (([1, 2, 2], [0.04, 0.05, 0.05], g), "world_sizes"),
        (([1, 2, 4], [0.04, 0.05], g), "world_sizes"),
        (([1, 2, 4], [0.04, 0.0, 0.05], g), "step_times_s[1]"),
        (([1, 2, 4], [0.04, 0.05, -1.0], g), "step_times_s[2]"),
        (([1, 2, 4], EXACT_T, 0), "grad_bytes"),
    ])


# ---- scaling_efficiency and predicted_efficiency -----------------------------------------------------------


@grade(scaling_efficiency, "correctness", points=2,
       hint="Weak scaling keeps the per-rank batch: what step time would perfect scaling give at P = 4?")
def test_efficiency_worked_numbers():
    """Exact timings → {2: 0.855786, 4: 0.788784}; repeated runs are averaged per world size."""
    got = scaling_efficiency(EXACT_P, EXACT_T)
    call = f"scaling_efficiency({EXACT_P}, {EXACT_T})"
    assert isinstance(got, dict) and sorted(got) == [2, 4], f"{call} = {got!r}: expected keys 2 and 4 (each P > 1)"
    assert_number(got[2], 0.040 / 0.046740648, f"{call}[2]", rel=1e-12)
    assert_number(got[4], 0.040 / 0.050710972, f"{call}[4]", rel=1e-12)
    assert round(got[2], 6) == 0.855786 and round(got[4], 6) == 0.788784
    got = scaling_efficiency([4, 1, 2, 1, 4], [0.06, 0.04, 0.05, 0.042, 0.066])
    call = "scaling_efficiency([4, 1, 2, 1, 4], [0.06, 0.04, 0.05, 0.042, 0.066])"
    assert sorted(got) == [2, 4], f"{call} = {got!r}: expected keys 2 and 4"
    assert_number(got[2], 0.041 / 0.05, f"{call}[2] (mean T(1) / mean T(2))", rel=1e-12)
    assert_number(got[4], 0.041 / 0.063, f"{call}[4] (mean T(1) / mean T(4))", rel=1e-12)


@grade(scaling_efficiency, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_efficiency_rejects_bad_arguments():
    assert_rejects_all(scaling_efficiency, [
        (([2, 4], [0.05, 0.06]), "world_sizes"),
        (([1, 2], [0.04]), "world_sizes"),
        (([1, 2], [0.04, 0.0]), "step_times_s[1]"),
    ])


@grade(predicted_efficiency, "correctness", points=2,
       hint="The fitted model gives the step time at any P; the ideal step is the compute time alone.")
def test_predicted_efficiency_worked_numbers():
    """t_c 40 ms, α 200 µs, β 1 GB/s: P = 8 → 0.742168, 16 → 0.690981, 64 → 0.514912; P = 1 → 1."""
    fit = {"t_compute_s": 0.040, "alpha_s": 2e-4, "beta_bytes_per_s": 1e9, "rmse_s": 0.0}
    for p, printed in ((8, 0.742168), (16, 0.690981), (64, 0.514912), (1, 1.0)):
        call = f"predicted_efficiency(<t_c 40 ms, α 200 µs, β 1 GB/s>, {p}, {MLP_GRAD_BYTES:_})"
        got = predicted_efficiency(fit, p, MLP_GRAD_BYTES)
        assert_number(got, 0.040 / model(p, 0.040, MLP_GRAD_BYTES, 2e-4, 1e9), call, rel=1e-12)
        assert round(got, 6) == printed, f"{call} = {got}, the worked example prints {printed}"
    clipped = {"t_compute_s": 0.040, "alpha_s": 650e-6, "beta_bytes_per_s": math.inf, "rmse_s": 0.0}
    assert_number(predicted_efficiency(clipped, 8, MLP_GRAD_BYTES), 0.040 / (0.040 + 14 * 650e-6),
                  "predicted_efficiency(<α 650 µs, β inf>, 8, ...)", rel=1e-12)


@grade(predicted_efficiency, "correctness", points=1, hint="t_compute / T(P), with T from the α-β model.")
@given(t_c=st.floats(1e-4, 1.0), alpha=st.floats(0, 1e-2), beta=st.floats(1e7, 1e12), g=st.integers(0, 10**10),
       p=st.integers(1, 4096))
def test_predicted_efficiency_closed_form(t_c, alpha, beta, g, p):
    fit = {"t_compute_s": t_c, "alpha_s": alpha, "beta_bytes_per_s": beta, "rmse_s": 0.0}
    assert_number(predicted_efficiency(fit, p, g), t_c / model(p, t_c, g, alpha, beta),
                  f"predicted_efficiency({fit}, {p}, {g})", rel=1e-12)


@grade(predicted_efficiency, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_predicted_efficiency_rejects_bad_arguments():
    fit = {"t_compute_s": 0.040, "alpha_s": 2e-4, "beta_bytes_per_s": 1e9, "rmse_s": 0.0}
    assert_rejects_all(predicted_efficiency, [
        (({"alpha_s": 2e-4}, 8, 100), "fit"),
        ((fit, 0, 100), "world_size"),
        ((fit, 8, -1), "grad_bytes"),
    ])
