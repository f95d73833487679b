"""L29 · ZeRO stages: memory and traffic per GPU; FSDP's unsharding peak."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, MODELS
from grader.kit import assert_exact, assert_rejects, grade, learner

UNIT = "l29_zero_fsdp"
zero_memory_per_gpu = learner(UNIT, "zero", "zero_memory_per_gpu")
zero_comm_bytes_per_gpu = learner(UNIT, "zero", "zero_comm_bytes_per_gpu")
fsdp_peak_param_bytes = learner(UNIT, "zero", "fsdp_peak_param_bytes")

FORMULA = {
    0: "2Ψ + 2Ψ + 12Ψ",
    1: "2Ψ + 2Ψ + 12Ψ/N",
    2: "2Ψ + (2Ψ + 12Ψ)/N (gradients sharded too)",
    3: "(2Ψ + 2Ψ + 12Ψ)/N",
}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def zero_bytes(n: int, gpus: int, stage: int, w: int = 2, g: int = 2, o: int = 12) -> int:
    """The grader's ledger: each term replicated (Ψ) or sharded (ceil(Ψ/N)) by stage."""
    shard = ceil_div(n, gpus)
    return (shard if stage >= 3 else n) * w + (shard if stage >= 2 else n) * g + (shard if stage >= 1 else n) * o


# ---- zero_memory_per_gpu -----------------------------------------------------------------------


@grade(zero_memory_per_gpu, "correctness", points=3,
       hint="Which of the three terms does each stage shard: optimizer (1), + gradients (2), + weights (3)?")
def test_zero_memory_worked_numbers():
    """Course: 70B, N=8 → 1120 / 385 / 262.5 / 140 GB, N=64 → 17.5 GB.

    ZeRO paper (fig. 1): 7.5B, N=64 → 120 / 31.4 / 16.6 / 1.9 GB.
    """
    cases = [
        (70_000_000_000, 8, [1120 * GB, 385 * GB, 262_500_000_000, 140 * GB]),
        (7_500_000_000, 64, [120 * GB, 31_406_250_000, 16_640_625_000, 1_875_000_000]),
    ]
    for n, gpus, want in cases:
        for stage, value in enumerate(want):
            assert_exact(
                zero_memory_per_gpu(n, gpus, stage),
                value,
                f"zero_memory_per_gpu({n:_}, {gpus}, stage={stage}) [{FORMULA[stage]}]",
                unit="B",
            )
    assert_exact(zero_memory_per_gpu(70_000_000_000, 64, 3), 17_500_000_000, "zero_memory_per_gpu(70B, 64, stage=3)",
                 why=FORMULA[3], unit="B")


@grade(zero_memory_per_gpu, "correctness", points=3,
       hint="A shard holds ceil(Ψ/N) parameters: what happens to the remainder if you floor?")
@given(
    n=st.integers(0, 10**12), gpus=st.integers(1, 4096), w=st.integers(0, 4), g=st.integers(0, 4), o=st.integers(0, 16)
)
def test_zero_memory_closed_form_and_order(n, gpus, w, g, o):
    """Every stage, any Ψ and N (also when N does not divide Ψ), any precision; stage 3 ≤ 2 ≤ 1 ≤ 0."""
    got = [zero_memory_per_gpu(n, gpus, s, weight_bytes=w, grad_bytes=g, optimizer_bytes=o) for s in range(4)]
    for stage in range(4):
        assert_exact(
            got[stage],
            zero_bytes(n, gpus, stage, w, g, o),
            f"zero_memory_per_gpu({n}, {gpus}, stage={stage}, {w}, {g}, {o}) [{FORMULA[stage]}]",
            unit="B",
        )
    assert got[3] <= got[2] <= got[1] <= got[0], f"stages must not grow memory: {got}"


@grade(zero_memory_per_gpu, "correctness", points=1,
       hint="Raise ValueError naming the argument: zero GPUs, stage 4, a float parameter count.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((10**9, 0, 1), "n_gpus"),
        ((10**9, 8, 4), "stage"),
        ((10**9, 8, -1), "stage"),
        ((7e9, 8, 1), "n_params"),
        ((10**9, 8, "2"), "stage"),
        ((10**9, 8, 2, 2, 2, -12), "optimizer_bytes"),
        ((-5, 8, 0), "n_params"),
    ],
)
def test_zero_memory_rejects_bad_arguments(args, name):
    assert_rejects(zero_memory_per_gpu, args, name)


# ---- zero_comm_bytes_per_gpu -------------------------------------------------------------------


def comm_bytes(n: int, gpus: int, stage: int, w: int = 2, g: int = 2) -> int:
    per_pass = (gpus - 1) * ceil_div(n, gpus)
    return 2 * per_pass * g if stage == 0 else per_pass * g + (2 if stage == 3 else 1) * per_pass * w


@grade(zero_comm_bytes_per_gpu, "correctness", points=3,
       hint="An all-reduce is a reduce-scatter plus an all-gather: how many ring passes does stage 3 add?")
def test_zero_comm_worked_numbers():
    """70B bf16 (M = 140 GB), N=8: 2(N−1)/N·M = 245 GB for stages 0–2, 3(N−1)/N·M = 367.5 GB for stage 3.

    One GPU sends nothing.
    """
    for stage, want in enumerate([245 * GB, 245 * GB, 245 * GB, 367_500_000_000]):
        assert_exact(zero_comm_bytes_per_gpu(70_000_000_000, 8, stage), want,
                     f"zero_comm_bytes_per_gpu(70B, 8, stage={stage})", unit="B")
    assert_exact(zero_comm_bytes_per_gpu(70_000_000_000, 1, 3), 0, "zero_comm_bytes_per_gpu(70B, 1 GPU, stage=3)",
                 why="one GPU sends nothing", unit="B")


@grade(zero_comm_bytes_per_gpu, "correctness", points=2,
       hint="Each ring pass sends N−1 chunks of one shard; the course's 2M and 3M are the N → ∞ limits.")
@given(n=st.integers(0, 10**12), gpus=st.integers(1, 4096), w=st.integers(0, 4), g=st.integers(0, 4))
def test_zero_comm_closed_form(n, gpus, w, g):
    """(N−1)·ceil(Ψ/N) parameters per pass; stage 3 = 1.5 × stage 0 when weights and gradients share a dtype."""
    got = [zero_comm_bytes_per_gpu(n, gpus, s, weight_bytes=w, grad_bytes=g) for s in range(4)]
    for stage in range(4):
        assert_exact(got[stage], comm_bytes(n, gpus, stage, w, g),
                     f"zero_comm_bytes_per_gpu({n}, {gpus}, {stage}, {w}, {g})", unit="B")
    if w == g:
        assert 2 * got[3] == 3 * got[0], f"stage 3 should send 3/2 of DDP's bytes, got {got[3]} vs {got[0]}"


@grade(zero_comm_bytes_per_gpu, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((10**9, 0, 1), "n_gpus"),
        ((10**9, 8, 5), "stage"),
        ((1.4e11, 8, 0), "n_params"),
        ((10**9, 8, 3, -2), "weight_bytes"),
    ],
)
def test_zero_comm_rejects_bad_arguments(args, name):
    assert_rejects(zero_comm_bytes_per_gpu, args, name)


# ---- fsdp_peak_param_bytes ---------------------------------------------------------------------


def llama_units(key: str) -> list[int]:
    """Root unit (embeddings, head, final norm) then one unit per decoder layer."""
    m = MODELS[key]
    kv_dim = m.n_kv_heads * m.head_dim
    layer = 2 * m.hidden * m.hidden + 2 * m.hidden * kv_dim + 3 * m.hidden * m.ffn_hidden + 2 * m.hidden
    root = m.vocab * m.hidden * (1 if m.tied_embeddings else 2) + m.hidden
    units = [root] + [layer] * m.n_layers
    assert sum(units) == m.n_params, f"grader fixture: {m.name} units sum to {sum(units)}, not {m.n_params}"
    return units


def peak(units: list[int], gpus: int, prefetch: int, w: int) -> int:
    shards = sum(ceil_div(u, gpus) for u in units) * w
    return shards + max(sum(units[i : i + 1 + prefetch]) for i in range(len(units))) * w


@grade(fsdp_peak_param_bytes, "correctness", points=3,
       hint="While a unit runs, its full weights sit beside every unit's shard: what if the model is one unit?")
def test_fsdp_peak_worked_numbers():
    """LLaMA-3-8B (218,112,000 params per layer) on 8 GPUs: per-layer wrap 4.55 GB; no auto-wrap (one unit) 18.07 GB."""
    units = llama_units("llama-3-8b")
    assert_exact(fsdp_peak_param_bytes(units, 8), 4_545_143_808, "fsdp_peak_param_bytes(LLaMA-3-8B per layer, 8 GPUs)",
                 unit="B")
    assert_exact(fsdp_peak_param_bytes([sum(units)], 8), 18_068_087_808,
                 "fsdp_peak_param_bytes(LLaMA-3-8B as one unit, 8 GPUs)", unit="B")
    assert_exact(
        fsdp_peak_param_bytes(units, 8, prefetch=0),
        4_108_919_808,
        "fsdp_peak_param_bytes(LLaMA-3-8B per layer, 8 GPUs, prefetch=0)",
        unit="B",
    )


@grade(fsdp_peak_param_bytes, "correctness", points=2,
       hint="Slide a window of 1 + prefetch consecutive units; near the end the window is shorter.")
@given(
    units=st.lists(st.integers(0, 10**9), min_size=1, max_size=12),
    gpus=st.integers(1, 64),
    prefetch=st.integers(0, 4),
    w=st.sampled_from([1, 2, 4]),
)
def test_fsdp_peak_closed_form(units, gpus, prefetch, w):
    """Σ ceil(u/N)·w + the largest window of unsharded units, for any wrapping."""
    assert_exact(
        fsdp_peak_param_bytes(units, gpus, prefetch=prefetch, weight_bytes=w),
        peak(units, gpus, prefetch, w),
        f"fsdp_peak_param_bytes({units}, {gpus}, prefetch={prefetch}, weight_bytes={w})",
        unit="B",
    )


@grade(fsdp_peak_param_bytes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        (([], 8), {}, "unit_params"),
        (([10, -1], 8), {}, "unit_params"),
        (([10, 20], 0), {}, "n_gpus"),
        (([10], 8), {"prefetch": -1}, "prefetch"),
        (([1.5e9], 8), {}, "unit_params"),
    ],
)
def test_fsdp_peak_rejects_bad_arguments(args, kwargs, name):
    assert_rejects(fsdp_peak_param_bytes, args, name, kwargs)
