"""L10 · The three ledgers: training FLOPs, MFU, days to train, activation bytes per layer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GPUS, MODELS
from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l10_three_ledgers"
training_flops = learner(UNIT, "ledgers", "training_flops")
mfu = learner(UNIT, "ledgers", "mfu")
training_days = learner(UNIT, "ledgers", "training_days")
activation_bytes_per_layer = learner(UNIT, "ledgers", "activation_bytes_per_layer")

A100, H100 = GPUS["A100-80G"], GPUS["H100-SXM"]
LLAMA2_7B, LLAMA3_70B = MODELS["llama-2-7b"], MODELS["llama-3-70b"]
B70, T2 = 70 * 10**9, 2 * 10**12  # the course's round "70B on 2T tokens"
params = st.integers(0, 10**13)
tokens = st.integers(0, 10**14)
ACT_PARTS = ("linear", "attention_scores", "total")


# ---- training_flops -----------------------------------------------------------------------------------


@grade(training_flops, "correctness", points=2,
       hint="Forward: 2 FLOPs per parameter per token. Backward: twice the forward. Recompute: one more forward.")
def test_flops_worked_examples():
    """70B × 2T tokens: 8.4e23 (6ND), 1.12e24 with full recompute; LLaMA-3-70B × 15T: 6 · 70 553 706 496 · 15e12."""
    assert_exact(training_flops(B70, T2), 840 * 10**21, "training_flops(70e9, 2e12)")
    assert_exact(training_flops(B70, T2, recompute=True), 1120 * 10**21, "training_flops(70e9, 2e12, recompute=True)")
    n = LLAMA3_70B.n_params
    assert_exact(training_flops(n, 15 * 10**12), 6 * n * 15 * 10**12, "training_flops(LLaMA-3-70B, 15T)")


@grade(training_flops, "correctness", points=2, hint="Keep it in integers: 6 · N · D is exact, 6.0 · N · D is not.")
@given(n=params, d=tokens, recompute=st.booleans())
def test_flops_closed_form(n, d, recompute):
    """6ND, or 8ND with recompute, an exact int for any N and D."""
    assert_exact(training_flops(n, d, recompute=recompute), (8 if recompute else 6) * n * d,
                 f"training_flops({n}, {d}, recompute={recompute})")


@grade(training_flops, "correctness", points=1,
       hint="Raise ValueError naming the argument; counts are ints (70_000_000_000, not 70e9).", validation=True)
@pytest.mark.parametrize("args, name", [((70e9, T2), "n_params"), ((-1, T2), "n_params"), ((B70, -5), "n_tokens"),
                                        ((B70, 2.0e12), "n_tokens")])
def test_flops_rejects_bad_arguments(args, name):
    """Float or negative counts raise ValueError naming the argument."""
    assert_rejects(training_flops, args, name)


# ---- mfu ------------------------------------------------------------------------------------------------


@grade(mfu, "correctness", points=2,
       hint="MFU counts the model's 6N FLOPs per token, whatever the hardware recomputed.")
def test_mfu_course_example():
    """64 H100 training 70B at 64·514e12/(6·70e9) = 78 324 tokens/s: MFU 514/989 = 0.52 (L10 §6.2)."""
    rate = 64 * 514e12 / (6 * B70)
    assert_number(mfu(rate, B70, 64, H100.bf16_flops), 514 / 989, f"mfu({rate:.1f}, 70e9, 64, 989e12)")
    assert_number(mfu(0.0, B70, 64, H100.bf16_flops), 0.0, "mfu(0 tokens/s)")


@grade(mfu, "correctness", points=2, hint="Return a fraction (0.52), not a percentage, and divide by every GPU's peak.")
@given(rate=st.floats(0, 1e7), n=st.integers(1, 10**12), gpus=st.integers(1, 100_000),
       peak=st.sampled_from([A100.bf16_flops, H100.bf16_flops]))
def test_mfu_closed_form(rate, n, gpus, peak):
    """6N · tokens/s / (n_gpus · peak) for any inputs: linear in the rate, inverse in the GPU count."""
    assert_number(mfu(rate, n, gpus, peak), 6 * n * rate / (gpus * peak), f"mfu({rate!r}, {n}, {gpus}, {peak!r})")


@grade(mfu, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((1e4, B70, 0, 989e12), "n_gpus"), ((1e4, B70, 64, 0.0), "peak_flops"),
                                        ((-1.0, B70, 64, 989e12), "tokens_per_s"),
                                        ((1e4, 7e10, 64, 989e12), "n_params")])
def test_mfu_rejects_bad_arguments(args, name):
    """Zero GPUs or peak, a negative rate, a float parameter count raise ValueError naming the argument."""
    assert_rejects(mfu, args, name)


# ---- training_days --------------------------------------------------------------------------------------


@grade(training_days, "correctness", points=3, hint="Seconds = FLOPs / (GPUs · peak · MFU); a day has 86 400 of them.")
def test_days_course_examples():
    """70B × 2T: 512 H100 at MFU 0.5 → 38.4 days; 128 A100 at 0.5 → 486.9 days (L10 Q10)."""
    assert_number(training_days(B70, T2, 512, H100.bf16_flops, 0.5), 38.3998, "training_days(512 H100)", rel=1e-5)
    assert_number(training_days(B70, T2, 128, A100.bf16_flops, 0.5), 486.890, "training_days(128 A100)", rel=1e-5)


@grade(training_days, "correctness", points=2, hint="Twice the GPUs or twice the MFU should halve the days.")
@given(n=st.integers(1, 10**12), d=st.integers(1, 10**14), gpus=st.integers(1, 100_000),
       util=st.floats(0.01, 1.0), peak=st.sampled_from([A100.bf16_flops, H100.bf16_flops]))
def test_days_closed_form(n, d, gpus, util, peak):
    """6ND / (GPUs · peak · MFU) / 86 400 for any inputs."""
    want = 6 * n * d / (gpus * peak * util) / 86_400
    assert_number(training_days(n, d, gpus, peak, util), want, f"training_days({n}, {d}, {gpus}, {peak!r}, {util!r})")


@grade(training_days, "correctness", points=1, hint="MFU is a fraction in (0, 1]: 0.5, never 50.", validation=True)
@pytest.mark.parametrize("args, name", [((B70, T2, 512, 989e12, 50), "mfu"), ((B70, T2, 512, 989e12, 0.0), "mfu"),
                                        ((B70, T2, 0, 989e12, 0.5), "n_gpus"),
                                        ((70e9, T2, 512, 989e12, 0.5), "n_params")])
def test_days_rejects_bad_arguments(args, name):
    """MFU as a percentage or 0, zero GPUs, a float parameter count raise ValueError naming the argument."""
    assert_rejects(training_days, args, name)


# ---- activation_bytes_per_layer -----------------------------------------------------------------------


def check_activations(s: int, b: int, h: int, a: int, store: bool) -> None:
    got = activation_bytes_per_layer(s, b, h, a, store_scores=store)
    what = f"activation_bytes_per_layer({s}, {b}, {h}, {a}, store_scores={store})"
    assert isinstance(got, dict) and set(ACT_PARTS) <= set(got), f"{what}: keys {sorted(got)}, expected {ACT_PARTS}"
    linear, scores = 34 * s * b * h, 5 * a * s * s * b if store else 0
    assert_exact(got["linear"], linear, f"{what}['linear']", why="34·s·b·h bytes", unit="B")
    assert_exact(got["attention_scores"], scores, f"{what}['attention_scores']",
                 why="5·a·s²·b bytes" if store else "not stored: 0", unit="B")
    assert_exact(got["total"], linear + scores, f"{what}['total']", why="linear + attention_scores", unit="B")


@grade(activation_bytes_per_layer, "correctness", points=3,
       hint="34·s·b·h already counts bytes (2 per 16-bit value, 1 per mask): multiply by nothing else.")
def test_activations_llama2_7b():
    """LLaMA-2-7B shapes, s = 2048, b = 1: 285 212 672 B linear + 671 088 640 B scores = 956 301 312 B per layer."""
    m = LLAMA2_7B
    check_activations(2048, 1, m.hidden, m.n_heads, True)
    assert_exact(activation_bytes_per_layer(2048, 1, m.hidden, m.n_heads)["total"], 956_301_312,
                 f"activation_bytes_per_layer(2048, 1, {m.hidden}, {m.n_heads})['total']",
                 why="store_scores defaults to True", unit="B")
    check_activations(2048, 1, m.hidden, m.n_heads, False)


@grade(activation_bytes_per_layer, "correctness", points=2,
       hint="One s×s matrix per head per sample: how does that term grow with seq_len?")
@given(s=st.integers(0, 2**17), b=st.integers(0, 512), h=st.integers(1, 2**15), a=st.integers(1, 128),
       store=st.booleans())
def test_activations_parts(s, b, h, a, store):
    """Every part, exact ints, for any shape: linear in batch, quadratic in seq_len through the scores."""
    check_activations(s, b, h, a, store)


@grade(activation_bytes_per_layer, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize("args, name", [((-1, 1, 4096, 32), "seq_len"), ((2048, 1.0, 4096, 32), "batch"),
                                        ((2048, 1, 0, 32), "hidden"), ((2048, 1, 4096, 0), "n_heads")])
def test_activations_rejects_bad_arguments(args, name):
    """Negative or float sizes, zero hidden or heads raise ValueError naming the argument."""
    assert_rejects(activation_bytes_per_layer, args, name)
