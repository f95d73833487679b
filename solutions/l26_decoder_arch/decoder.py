"""L26 · Decoder-only architecture by the numbers: SwiGLU width, GQA layer ledger, RoPE, decode intensity.

Lecture 26 (04_大模型架构与显存建模/26_Decoder_only架构深度拆解_MHA_MQA_GQA_RoPE_SwiGLU.md).

SwiGLU width. Three matrices of h × f keep the parameters of a 4h ReLU FFN (8h²) when f = 8h/3.
LLaMA's code takes int(2 · 4h / 3), scales it by an optional ``ffn_dim_multiplier``, truncates, and
rounds up to a multiple of ``multiple_of``: 4096 → 11 008 (LLaMA-2-7B, multiple 256); with
multiplier 1.3 and multiple 1024 → 14 336 (LLaMA-3-8B).

GQA layer. Wq and Wo are h × h; Wk and Wv are h × (n_kv_heads · d): P_attn = 2h²(1 + H_kv/H_q).
The FFN is 3·h·f, the two RMSNorms 2h.

RoPE. Pairs of the head dimension rotate at frequencies θ_i = base^(-2i/d), i = 0 … d/2 - 1
(base 10 000 in LLaMA-2, 500 000 in LLaMA-3). NTK-aware scaling stretches the context α times by
raising the base: b' = b · α^(d/(d-2)).

Decode attention intensity. One new token per sequence: each query head dots with S cached keys
(2·S·d FLOPs) and mixes S cached values (2·S·d FLOPs), while the S keys and values of each KV head
are read once and shared by its H_q/H_kv query heads.

Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

LAYER_PARTS = ("q", "k", "v", "o", "gate", "up", "down", "norms", "total")


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_heads(n_heads: int, n_kv_heads: int) -> None:
    check_int("n_heads", n_heads, minimum=1), check_int("n_kv_heads", n_kv_heads, minimum=1)
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads})")


def swiglu_hidden(hidden: int, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> int:
    """LLaMA's FFN width: int(2·4h/3), times ``ffn_dim_multiplier`` (truncated), rounded up to ``multiple_of``.

    swiglu_hidden(4096) = 11 008; swiglu_hidden(4096, 1024, 1.3) = 14 336;
    swiglu_hidden(8192, 4096, 1.3) = 28 672 (LLaMA-3-70B).
    """
    # TODO: validate, then follow the three steps of LLaMA's FeedForward.__init__.
    ### BEGIN SOLUTION
    h, m = check_int("hidden", hidden, minimum=1), check_int("multiple_of", multiple_of, minimum=1)
    f = int(2 * (4 * h) / 3)
    if ffn_dim_multiplier is not None:
        f = int(_check_real("ffn_dim_multiplier", ffn_dim_multiplier) * f)
    return m * ((f + m - 1) // m)
    ### END SOLUTION


def gqa_layer_params(hidden: int, n_heads: int, n_kv_heads: int, ffn_hidden: int) -> dict[str, int]:
    """Parameters of one LLaMA block by matrix: keys ``LAYER_PARTS``; "norms" = 2 RMSNorm weights.

    LLaMA-3-8B: q 16 777 216, k 4 194 304, v 4 194 304, o 16 777 216 (41 943 040 attention),
    gate/up/down 58 720 256 each (176 160 768 FFN), norms 8192, total 218 112 000.
    """
    # TODO: validate, then count each projection matrix (no biases) and the two norm weights.
    ### BEGIN SOLUTION
    h, f = check_int("hidden", hidden, minimum=1), check_int("ffn_hidden", ffn_hidden, minimum=1)
    _check_heads(n_heads, n_kv_heads)
    if h % n_heads:
        raise ValueError(f"hidden ({h}) must be a multiple of n_heads ({n_heads})")
    kv_dim = n_kv_heads * (h // n_heads)
    parts = {"q": h * h, "k": h * kv_dim, "v": h * kv_dim, "o": h * h,
             "gate": h * f, "up": h * f, "down": f * h, "norms": 2 * h}
    return {**parts, "total": sum(parts.values())}
    ### END SOLUTION


def rope_inv_freq(head_dim: int, base: float = 10_000.0) -> list[float]:
    """RoPE's rotation frequencies θ_i = base^(-2i/head_dim), i = 0 … head_dim/2 - 1 (radians per position).

    head_dim must be even. θ_0 = 1 (the fastest pair); head_dim 128, base 10 000: θ_63 ≈ 1.155e-4.
    """
    # TODO: validate (an even head_dim), then list one frequency per pair of dimensions.
    ### BEGIN SOLUTION
    d, b = check_int("head_dim", head_dim, minimum=2), _check_real("base", base)
    if d % 2:
        raise ValueError(f"head_dim must be even (RoPE rotates pairs), got {d}")
    return [b ** (-2 * i / d) for i in range(d // 2)]
    ### END SOLUTION


def ntk_scaled_base(base: float, alpha: float, head_dim: int) -> float:
    """NTK-aware RoPE base for a context stretched ``alpha`` times: base · alpha^(d/(d-2)).

    base 10 000, alpha 4, head_dim 128: 40 890 (≈ 10 000 · 4.089).
    """
    # TODO: validate (head_dim even and > 2, alpha >= 1), then raise the base.
    ### BEGIN SOLUTION
    b, d = _check_real("base", base), check_int("head_dim", head_dim, minimum=4)
    if d % 2:
        raise ValueError(f"head_dim must be even (RoPE rotates pairs), got {d}")
    if _check_real("alpha", alpha) < 1:
        raise ValueError(f"alpha must be >= 1 (a stretch of the context), got {alpha!r}")
    return b * alpha ** (d / (d - 2))
    ### END SOLUTION


def decode_attention_intensity(n_heads: int, n_kv_heads: int, elem_bytes: int = 2) -> float:
    """FLOP/B of decode attention for one new token against S cached tokens (S cancels).

    FLOPs 4·H_q·S·d (QKᵀ and PV); bytes 2·H_kv·S·d·elem_bytes (K and V read once per KV head).
    fp16 MHA: 1.0; GQA with 8 query heads per KV head: 8.0; MQA with 32 heads: 32.0.
    """
    # TODO: validate, then divide the FLOPs by the KV bytes read.
    ### BEGIN SOLUTION
    _check_heads(n_heads, n_kv_heads)
    elem_bytes = check_int("elem_bytes", elem_bytes, minimum=1)
    flops_per_sd = 4 * n_heads  # 2·S·d for QKᵀ + 2·S·d for PV, per query head
    bytes_per_sd = 2 * n_kv_heads * elem_bytes  # K and V of each KV head
    return flops_per_sd / bytes_per_sd
    ### END SOLUTION
