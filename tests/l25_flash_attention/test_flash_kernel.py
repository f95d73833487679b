"""L25 · flash_attention_fwd in Triton: (o, lse) against fp64 SDPA, traffic against the flash ledger, GPU speed."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.kit import (
    SubmissionError,
    TiledLedger,
    assert_tiled_loads,
    award_speedup,
    count_traffic,
    describe,
    grade,
    learner,
    on_device,
    perf,
)

UNIT = "l25_flash_attention"
flash_attention_fwd = learner(UNIT, "attention", "flash_attention_fwd", kernel=True)

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
# o is a convex combination of V's rows, so errors are measured against max|v|:
# - P rounded to the input dtype before P·V errs <= eps/2 per weight → <= eps/2·max|v| (EPS below is 2x that);
# - the scores carry fp32 dot-product error, <= ~sqrt(d)·u32·max_j |q_i|·|k_j|·scale (8x margin), which moves
#   each weight by that much relative; lse moves by it directly;
# - o is rounded once to its dtype: RTOL = eps (2x margin). fp32 gets fp32's eps: TF32 is pinned off.
EPS = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7, torch.float32: 2.0**-21}
U32 = 2.0**-24


@dataclass(frozen=True)
class AttnCase:
    """(batch, heads, n, d) q, k, v in one dtype; 'peaked' scales q so scores reach ±hundreds;
    'bhnd' or 'bnhd' (a transposed view of a (batch, n, heads, d) tensor) memory layout."""

    batch: int
    heads: int
    n: int
    d: int
    dtype: str
    kind: str = "normal"
    layout: str = "bhnd"
    seed: int = 0

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(self.seed)
        b, h, n, d = self.batch, self.heads, self.n, self.d
        shape = (b, h, n, d) if self.layout == "bhnd" else (b, n, h, d)
        q, k, v = (torch.randn(shape, generator=g, dtype=torch.float64) for _ in range(3))
        if self.kind == "peaked":
            q = q * 12
        out = tuple(x.to(DTYPES[self.dtype]) for x in (q, k, v))
        return out if self.layout == "bhnd" else tuple(x.transpose(1, 2) for x in out)


@st.composite
def attn_cases(draw: st.DrawFn, max_n: int = 100) -> AttnCase:
    n = draw(st.one_of(st.sampled_from([1, 2, 15, 16, 17, 63, 64, 65, max_n]), st.integers(1, max_n)))
    return AttnCase(draw(st.integers(1, 2)), draw(st.integers(1, 2)), n, draw(st.sampled_from([16, 32, 64, 128])),
                    draw(st.sampled_from(sorted(DTYPES))), draw(st.sampled_from(["normal", "peaked"])),
                    draw(st.sampled_from(["bhnd", "bnhd"])), draw(st.integers(0, 2**16)))


def reference(q, k, v, causal: bool, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """SDPA (math backend) and logsumexp of the masked scores, in fp64: the oracle."""
    q64, k64, v64 = (x.detach().cpu().double() for x in (q, k, v))
    o = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal, scale=scale)
    s = q64 @ k64.transpose(-1, -2) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return o, torch.logsumexp(s, dim=-1)


def _first_bad(bad: torch.Tensor) -> str:
    return str([int(i) for i in bad.nonzero()[0]])


def assert_attention(out: object, q, k, v, what: str, *, causal: bool = False, sm_scale: float | None = None) -> None:
    """(o, lse): shapes, dtypes, o within the tolerance above of fp64 SDPA, lse of logsumexp."""
    assert isinstance(out, tuple) and len(out) == 2, f"{what}: return (o, lse), got {type(out).__name__}"
    o, lse = out
    b, h, n, d = q.shape
    assert isinstance(o, torch.Tensor) and tuple(o.shape) == (b, h, n, d) and o.dtype == q.dtype, (
        f"{what}: o should be a {b}×{h}×{n}×{d} {q.dtype} tensor, got "
        f"{describe(o) if isinstance(o, torch.Tensor) else o}"
    )
    assert isinstance(lse, torch.Tensor) and tuple(lse.shape) == (b, h, n) and lse.dtype == torch.float32, (
        f"{what}: lse should be a {b}×{h}×{n} float32 tensor, got "
        f"{describe(lse) if isinstance(lse, torch.Tensor) else lse}"
    )
    scale = sm_scale if sm_scale is not None else 1 / math.sqrt(d)
    o_ref, lse_ref = reference(q, k, v, causal, scale)
    mag = (q.detach().cpu().double().abs() @ k.detach().cpu().double().abs().transpose(-1, -2)).amax(-1) * scale
    score_err = 8 * math.sqrt(d) * U32 * mag  # per row
    vmax = v.detach().cpu().double().abs().amax(dim=(-2, -1), keepdim=True)
    o_allowed = (EPS[q.dtype] + score_err[..., None]) * vmax + EPS[q.dtype] * o_ref.abs() + 1e-30
    o_err = (o.detach().cpu().double() - o_ref).abs()
    bad = ~(o_err <= o_allowed)
    if bad.any():
        at = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(
            f"{what}: o differs from softmax(QKᵀ·scale)·V in {int(bad.sum())} of {o.numel()} elements; first at "
            f"{list(at)}: got {o[at].item():.6g}, expected {o_ref[at].item():.6g} (error {o_err[at].item():.3g}, "
            f"allowed {o_allowed[at].item():.3g})"
        )
    lse_err = (lse.detach().cpu().double() - lse_ref).abs()
    bad = ~(lse_err <= 1e-5 + score_err + 2 * U32 * lse_ref.abs())
    if bad.any():
        at = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(
            f"{what}: lse{list(at)} = {lse[at].item():.7g}, expected {lse_ref[at].item():.7g} = ln Σ_j e^(s_j) "
            f"(error {lse_err[at].item():.3g}; lse = m + ln(l) in natural log)"
        )


def label(q, **kwargs) -> str:
    return f"flash_attention_fwd(q, k, v: {describe(q)}{''.join(f', {a}={b}' for a, b in kwargs.items())})"


def check_attention(q, k, v, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    out = flash_attention_fwd(q, k, v, **kwargs)
    assert_attention(out, q, k, v, label(q, **kwargs), causal=kwargs.get("causal", False),
                     sm_scale=kwargs.get("sm_scale"))
    return out


def learner_block_m() -> int:
    """The learner's default block_m: the flash ledger is held against it."""
    value = flash_attention_fwd.defaults().get("block_m")
    if isinstance(value, bool) or not isinstance(value, int):
        raise SubmissionError("flash_attention_fwd must keep the keyword arguments block_m and block_n with int "
                              "defaults (the grader reads block_m to compute your ledger)")
    return value


# ---- correctness ----------------------------------------------------------------------------------


@grade(flash_attention_fwd, "correctness", points=5,
       hint="A later K/V tile raises a row's max: by what must acc and l be multiplied before adding it?")
@settings(max_examples=10)
@given(case=attn_cases(), causal=st.booleans())
@example(case=AttnCase(1, 1, 1, 16, "float16"), causal=False)
@example(case=AttnCase(1, 2, 100, 64, "float32", "peaked", "bhnd", 1), causal=False)
@example(case=AttnCase(2, 1, 65, 32, "bfloat16", "normal", "bnhd", 2), causal=True)
def test_flash_matches_sdpa(case, causal):
    """Your block sizes; any n (ragged tiles, 1), d in {16..128}, fp16/bf16/fp32, peaked scores, strided layouts."""
    check_attention(*case.tensors(), causal=causal)


@grade(flash_attention_fwd, "correctness", points=3,
       hint="Query i may see keys 0..i, itself included. Which tiles hold no visible key at all?")
@pytest.mark.parametrize("case, blocks", [
    (AttnCase(1, 2, 70, 32, "float32", seed=3), dict(block_m=16, block_n=32)),
    (AttnCase(1, 1, 33, 64, "float16", seed=4), dict(block_m=32, block_n=16)),
    (AttnCase(2, 1, 2, 16, "float32", seed=5), dict(block_m=16, block_n=16)),
])
def test_flash_causal_diagonal_tiles(case, blocks):
    """Causal with Q and K/V tiles of different sizes: the diagonal crosses tiles, and row 0 sees one key."""
    check_attention(*case.tensors(), causal=True, **blocks)


@grade(flash_attention_fwd, "correctness", points=2,
       hint="Is sm_scale applied to the scores (and to lse), and 1/sqrt(d) used only when it is None?")
def test_flash_explicit_scale_and_block_sizes():
    """sm_scale given (0.05 and 0.5), block sizes given by the caller; lse follows the scale."""
    q, k, v = AttnCase(1, 2, 50, 32, "float32", seed=6).tensors()
    check_attention(q, k, v, sm_scale=0.5, block_m=32, block_n=16)
    q, k, v = AttnCase(2, 1, 40, 16, "float16", "peaked", seed=7).tensors()
    check_attention(q, k, v, causal=True, sm_scale=0.05)


# ---- efficiency ---------------------------------------------------------------------------------------


def flash_loads(b: int, h: int, n: int, d: int, es: int, block_m: int) -> int:
    """Q once, K and V once per Q tile, per (batch, head): the flash ledger's loads, computed by the grader."""
    return b * h * (n * d * es + 2 * math.ceil(n / block_m) * n * d * es)


def run_counted(q, k, v, **kwargs):
    with count_traffic() as t:
        out = flash_attention_fwd(q, k, v, **kwargs)
    assert_attention(out, q, k, v, label(q, **kwargs), causal=kwargs.get("causal", False))
    b, h, n, d = q.shape
    want_stores = b * h * (n * d * q.element_size() + 4 * n)
    what = label(q, **kwargs)
    assert t.launches == 1, f"{what}: {t.launches} kernel launches, expected exactly 1 ({t.summary()})"
    assert t.bytes_stored == want_stores, (
        f"{what}: stored {t.bytes_stored:,} B; O and lse once are {want_stores:,} B. Nothing else may be written: "
        "no S or P tile, no partial O (keep them on chip)"
    )
    return t


# The contract's largest tiles: block_m and block_n at most 256. The padded ledger is computed on the learner's
# blocks only within it (grader/kit/traffic_ledger.py): a larger declared block is refused.
LARGEST_BLOCK = 256


def flash_ledger(q: torch.Tensor, block_m: int, block_n: int | None) -> TiledLedger:
    """The flash ledger's loads; tail tiles may pad Q's rows to block_m and K/V's rows to block_n."""
    b, h, n, d = q.shape
    es, q_tiles = q.element_size(), math.ceil(n / block_m)

    def formula(q_rows: int, kv_rows: int) -> int:
        return b * h * (q_rows * d * es + 2 * q_tiles * kv_rows * d * es)

    return TiledLedger.of(formula, dict(q_rows=n, kv_rows=n), dict(q_rows=block_m, kv_rows=block_n),
                          bounds=dict(q_rows=LARGEST_BLOCK, kv_rows=LARGEST_BLOCK), name="the flash ledger",
                          tiles=b * h * q_tiles,
                          basis=f"Q once, K and V once per Q tile, {q_tiles} tiles")


@grade(flash_attention_fwd, "efficiency", points=4,
       hint="Load the Q tile once, before the K/V loop; each K/V tile once per Q tile; store once at the end.")
@pytest.mark.parametrize("case, blocks", [
    (AttnCase(1, 2, 150, 32, "float16", seed=8), {}),
    (AttnCase(2, 1, 70, 16, "bfloat16", "normal", "bnhd", 9), dict(block_m=32, block_n=16)),
])
def test_flash_traffic_matches_ledger(case, blocks):
    """Non-causal: loads = Q + ceil(n/block_m)·(K + V) (tail tiles masked or padded), stores = O + lse, one launch."""
    q, k, v = case.tensors()
    block_m = blocks.get("block_m") or learner_block_m()
    block_n = blocks.get("block_n") or flash_attention_fwd.defaults().get("block_n")
    t = run_counted(q, k, v, **blocks)
    block_n = block_n if isinstance(block_n, int) and not isinstance(block_n, bool) else None
    assert_tiled_loads(t, flash_ledger(q, block_m, block_n), f"{label(q, **blocks)} (block_m={block_m})")


@grade(flash_attention_fwd, "efficiency", points=2,
       hint="For a causal Q tile, which K/V tiles hold only future keys? Do not load them at all.")
def test_flash_causal_skips_future_tiles():
    """Causal, n=128 in 32×32 tiles: K/V loads stop at each Q tile's diagonal (about half the non-causal traffic)."""
    q, k, v = AttnCase(1, 1, 128, 32, "float16", seed=10).tensors()
    t = run_counted(q, k, v, causal=True, block_m=32, block_n=32)
    n, d, es = 128, 32, 2
    kv_rows = sum(min(n, math.ceil((i + 1) * 32 / 32) * 32) for i in range(n // 32))  # 32 + 64 + 96 + 128
    most = n * d * es + 2 * kv_rows * d * es
    assert t.bytes_loaded <= most, (
        f"{label(q, causal=True, block_m=32, block_n=32)}: loaded {t.bytes_loaded:,} B, at most {most:,} B when tiles "
        f"right of the diagonal are skipped (non-causal: {flash_loads(1, 1, n, d, es, 32):,} B)"
    )


# ---- gpu_perf -----------------------------------------------------------------------------------------


def time_flash(shape: tuple[int, int, int, int], causal: bool, *, device: str) -> dict:
    """On the device, where the learner's code runs (on_device): one checked call, then the timing."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device=device).manual_seed(11)
    q, k, v = (torch.randn(*shape, device=device, dtype=torch.float16, generator=g) for _ in range(3))
    backend = SDPBackend.FLASH_ATTENTION if device == "cuda" else SDPBackend.MATH

    def sdpa():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    (o, lse), result = perf.time_learner(
        flash_attention_fwd, lambda f: f(q, k, v, causal), [q, k, v], baselines={"sdpa_flash": sdpa},
        kernels_ref=("attention", lambda ref: ref.flash_attention_fwd(q, k, v, causal)), device=device, generator=g)
    head = (slice(0, 1), slice(0, 1))  # batch 0, head 0: checked in fp64 by the grader
    return {"q": q[head], "k": k[head], "v": v[head], "o": o[head], "lse": lse[head], "perf": result.as_dict()}


@grade(flash_attention_fwd, "gpu_perf", points=3,
       hint="At n=4096, d=128 the kernel is compute-bound: bigger tiles, more warps, pipelined K/V loads.")
@pytest.mark.parametrize("causal", [False, True])
def test_flash_speed(award, causal):
    """(4, 16, 4096, 128) fp16: full marks at 0.6× SDPA's flash backend, partial below."""
    shape = (perf.size(4, 1), perf.size(16, 2), perf.size(4096, 128), perf.size(128, 32))
    r = on_device(time_flash, shape, causal, device=perf.device())
    assert_attention((r["o"], r["lse"]), r["q"], r["k"], r["v"], "flash_attention_fwd on the GPU (batch 0, head 0)",
                     causal=causal)
    b, h, n, d = shape
    flops = 4 * b * h * n**2 * d / (2 if causal else 1)
    tflops = flops / (r["perf"]["medians_ms"]["learner"] * 1e9)
    award_speedup(award, r["perf"], over="sdpa_flash", full_at=0.6, tflops=tflops, label="speedup_vs_sdpa")
