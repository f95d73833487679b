"""L25 · IO ledgers: standard attention (S and P materialized), FlashAttention-2, and the SRAM tile budget."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader.constants import GPUS
from grader.kit import assert_exact, assert_rejects, grade, learner

UNIT = "l25_flash_attention"
attention_hbm_bytes = learner(UNIT, "attention", "attention_hbm_bytes")
flash_attention_hbm_bytes = learner(UNIT, "attention", "flash_attention_hbm_bytes")
sram_tile_bytes = learner(UNIT, "attention", "sram_tile_bytes")

lengths = st.integers(1, 200_000)
head_dims = st.sampled_from([1, 16, 32, 64, 80, 96, 128, 256])
blocks = st.sampled_from([1, 16, 32, 64, 96, 128, 256])
elem_bytes = st.sampled_from([1, 2, 4])


# ---- attention_hbm_bytes -----------------------------------------------------------------------------


@grade(attention_hbm_bytes, "correctness", points=3,
       hint="List the three kernels: what does each read, and what does it write? S and P are N×N each.")
def test_standard_attention_worked_numbers():
    """N=4096, d=128, fp16: 8N² + 8Nd = 138,412,032 B (the C3 convention; L25's own items summed), AI 62.06."""
    got = attention_hbm_bytes(4096, 128, 2)
    assert_exact(got, 138_412_032, "attention_hbm_bytes(4096, 128, 2)", unit="B",
                 why="read Q, K; write S; read S; write P; read P, V; write O: 4 N² + 4 Nd elements of 2 B")
    assert abs(4 * 4096**2 * 128 / got - 62.06) < 0.01, "4N²d FLOPs over these bytes should be 62.06 FLOP/B"
    assert_exact(attention_hbm_bytes(4096, 128, 4), 2 * 138_412_032, "attention_hbm_bytes(4096, 128, 4)",
                 why="fp32: twice", unit="B")


@grade(attention_hbm_bytes, "correctness", points=2,
       hint="Is every element size used, and is each N×N matrix both written and read back?")
@given(n=lengths, d=head_dims, b=elem_bytes)
@example(n=1, d=1, b=1)
def test_standard_attention_closed_form(n, d, b):
    """4·n²·b + 4·n·d·b for any n, d, elem_bytes."""
    assert_exact(attention_hbm_bytes(n, d, b), 4 * n * n * b + 4 * n * d * b, f"attention_hbm_bytes({n}, {d}, {b})",
                 unit="B", why="S and P written and read once each; Q, K, V read once; O written once")


@grade(attention_hbm_bytes, "correctness", points=1, hint="Raise ValueError with the argument's name in the message.",
       validation=True)
@pytest.mark.parametrize("args, name", [((0, 64, 2), "n"), ((64, -1, 2), "d"), ((64, 64, 2.0), "elem_bytes")])
def test_standard_attention_rejects_bad_arguments(args, name):
    """Zero, negative or float sizes raise ValueError naming the argument."""
    assert_rejects(attention_hbm_bytes, args, name)


# ---- flash_attention_hbm_bytes -----------------------------------------------------------------------


@grade(flash_attention_hbm_bytes, "correctness", points=3,
       hint="How many Q tiles are there, and which tensors does each of them stream from HBM?")
def test_flash_worked_numbers():
    """N=4096, d=128, fp16: block_m=128 → 69,222,400 B (half the standard ledger); block_m=64 → 136,331,264 B."""
    for block_m, want in [(128, 69_222_400), (64, 136_331_264)]:
        assert_exact(flash_attention_hbm_bytes(4096, 128, block_m, 2), want,
                     f"flash_attention_hbm_bytes(4096, 128, {block_m}, 2)", unit="B",
                     why=f"Q once, K and V once per Q tile ({4096 // block_m} tiles), O once, lse 4 B per row")


@grade(flash_attention_hbm_bytes, "correctness", points=3,
       hint="A ragged last Q tile still streams all of K and V; lse is fp32 whatever the inputs are.")
@given(n=lengths, d=head_dims, bm=blocks, b=elem_bytes)
@example(n=1000, d=64, bm=128, b=2)
@example(n=1, d=16, bm=64, b=4)
def test_flash_closed_form(n, d, bm, b):
    """n·d·b (Q) + 2·ceil(n/block_m)·n·d·b (K, V) + n·d·b (O) + 4·n (lse)."""
    want = 2 * n * d * b + 2 * math.ceil(n / bm) * n * d * b + 4 * n
    assert_exact(flash_attention_hbm_bytes(n, d, bm, b), want, f"flash_attention_hbm_bytes({n}, {d}, {bm}, {b})",
                 unit="B", why=f"{math.ceil(n / bm)} Q tiles, each reading K and V")


@grade(flash_attention_hbm_bytes, "correctness", points=1,
       hint="Raise ValueError with the argument's name in the message.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 64, 64, 2), "n"), ((64, 64, 0, 2), "block_m"),
                                        ((64, 64, 64.0, 2), "block_m"), ((64, 64, 64, -2), "elem_bytes")])
def test_flash_rejects_bad_arguments(args, name):
    """Zero, negative or float sizes raise ValueError naming the argument."""
    assert_rejects(flash_attention_hbm_bytes, args, name)


# ---- sram_tile_bytes ---------------------------------------------------------------------------------


@grade(sram_tile_bytes, "correctness", points=2,
       hint="Which tiles does one program stage on chip: one of Q, and how many of K and V?")
def test_sram_worked_numbers():
    """d=128, 64×64 tiles, fp16: 49,152 B, within A100's and H100's shared memory per SM; 128×128 fp32 does not fit."""
    got = sram_tile_bytes(64, 64, 128, 2)
    assert_exact(got, 49_152, "sram_tile_bytes(64, 64, 128, 2)", unit="B",
                 why="(64·128 + 2·64·128)·2: a Q tile, a K tile, a V tile")
    assert got <= GPUS["A100-80G"].smem_per_sm and got <= GPUS["H100-SXM"].smem_per_sm, (
        f"sram_tile_bytes(64, 64, 128, 2) = {got:,} B should fit in A100's and H100's shared memory per SM")
    big = sram_tile_bytes(128, 128, 128, 4)
    assert_exact(big, 196_608, "sram_tile_bytes(128, 128, 128, 4)", why="(128·128 + 2·128·128)·4", unit="B")
    assert big > GPUS["A100-80G"].smem_per_sm, (
        f"sram_tile_bytes(128, 128, 128, 4) = {big:,} B should exceed A100's {GPUS['A100-80G'].smem_per_sm:,} B per SM")


@grade(sram_tile_bytes, "correctness", points=2,
       hint="block_m and block_n play different parts: which tiles have block_n rows?")
@given(bm=blocks, bn=blocks, d=head_dims, b=elem_bytes)
def test_sram_closed_form(bm, bn, d, b):
    """(block_m·d + 2·block_n·d)·elem_bytes for any sizes."""
    assert_exact(sram_tile_bytes(bm, bn, d, b), (bm * d + 2 * bn * d) * b, f"sram_tile_bytes({bm}, {bn}, {d}, {b})",
                 unit="B", why="one Q tile of block_m rows, one K and one V tile of block_n rows")


@grade(sram_tile_bytes, "correctness", points=1, hint="Raise ValueError with the argument's name in the message.",
       validation=True)
@pytest.mark.parametrize("args, name", [((0, 64, 64, 2), "block_m"), ((64, 64, 64, 0), "elem_bytes"),
                                        ((64, 64.5, 64, 2), "block_n")])
def test_sram_rejects_bad_arguments(args, name):
    """Zero or float sizes raise ValueError naming the argument."""
    assert_rejects(sram_tile_bytes, args, name)
