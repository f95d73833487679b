"""L26 · Decoder architecture: SwiGLU width, a GQA block's parameters, NTK RoPE base, decode attention intensity."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T, shape
from grader.i18n import N_

FN = ("l26_decoder_arch", "decoder")


def _swiglu(rng: random.Random) -> Params:
    return {
        "h": rng.choice([2048, 4096, 5120, 8192]),
        "mult": rng.choice([256, 1024, 4096]),
        "m": rng.choice([1.0, 1.3, 1.5]),
    }


def _swiglu_steps(p: Params) -> list[Step]:
    base = int(2 * 4 * p["h"] / 3)
    scaled = int(p["m"] * base)
    up = -(-scaled // p["mult"]) * p["mult"]
    return [
        Step("=", N_("int(2·4h/3) = {base}"), base, args={"base": base}),
        Step("+", N_("× ffn_dim_multiplier {m:g}, truncated"), scaled - base, args={"m": p["m"]}),
        Step("+", N_("rounded up to a multiple of {mult}"), up - scaled, args={"mult": p["mult"]}),
    ]


def _layer_steps(p: Params) -> list[Step]:
    h, kvd, f = p["hidden"], p["kv"] * p["head_dim"], p["ffn"]
    return [
        Step("=", N_("Wq and Wo: 2·h²"), 2 * h * h),
        Step("+", N_("Wk and Wv: 2·h·h_kv"), 2 * h * kvd),
        Step("+", N_("gate, up, down: 3·h·f"), 3 * h * f),
        Step("+", N_("two RMSNorm weights: 2·h"), 2 * h),
    ]


def _ntk(rng: random.Random) -> Params:
    return {"base": rng.choice([10_000, 500_000]), "alpha": rng.choice([2, 4, 8, 16]), "d": rng.choice([64, 128])}


def _gqa(rng: random.Random) -> Params:
    heads = rng.choice([32, 64, 128])
    return {"heads": heads, "kv": rng.choice([h for h in (1, 4, 8, heads) if heads % h == 0]), "e": rng.choice([1, 2])}


TEMPLATES = [
    T(
        "l26.swiglu_hidden",
        (*FN, "swiglu_hidden"),
        "memory",
        2,
        26,
        N_(
            "LLaMA's FeedForward with dim {h}, multiple_of {mult}, ffn_dim_multiplier {m:g}: what "
            "is the FFN's hidden width?"
        ),
        _swiglu,
        lambda p, fn: fn(p["h"], p["mult"], p["m"]),
        _swiglu_steps,
        "1",
        rtol=1e-9,
        source=N_("Meta's llama/model.py FeedForward.__init__"),
    ),
    T(
        "l26.gqa_layer_params",
        (*FN, "gqa_layer_params"),
        "memory",
        2,
        26,
        N_(
            "One {model} decoder block: hidden {hidden}, {heads} query heads and {kv} KV heads of "
            "{head_dim}, SwiGLU width {ffn}, no biases. How many parameters?"
        ),
        lambda rng: shape(rng),
        lambda p, fn: fn(p["hidden"], p["heads"], p["kv"], p["ffn"])["total"],
        _layer_steps,
        "1",
        rtol=1e-5,
    ),
    T(
        "l26.ntk_scaled_base",
        (*FN, "ntk_scaled_base"),
        "serving",
        2,
        26,
        N_("NTK-aware RoPE scaling: base {base}, head dim {d}, context stretched {alpha}×. What is the new base?"),
        _ntk,
        lambda p, fn: fn(p["base"], p["alpha"], p["d"]),
        lambda p: [
            Step("=", N_("base"), p["base"]),
            Step(
                "×",
                N_("α^(d/(d−2)) = {alpha}^({d}/{d_2})"),
                p["alpha"] ** (p["d"] / (p["d"] - 2)),
                args={"alpha": p["alpha"], "d": p["d"], "d_2": p["d"] - 2},
            ),
        ],
        "1",
        rtol=0.005,
        source=N_("NTK-aware scaled RoPE (bloc97, 2023)"),
    ),
    T(
        "l26.decode_attention_intensity",
        (*FN, "decode_attention_intensity"),
        "serving",
        2,
        26,
        N_(
            "Decode attention, one new token against S cached tokens: {heads} query heads, {kv} "
            "KV heads, KV cache in {e}-byte elements. What is the arithmetic intensity in FLOP/B "
            "(S cancels)?"
        ),
        _gqa,
        lambda p, fn: fn(p["heads"], p["kv"], p["e"]),
        lambda p: [
            Step("=", N_("FLOPs 4·H_q·S·d, per S·d"), 4 * p["heads"]),
            Step("÷", N_("bytes 2·H_kv·S·d·{e}, per S·d"), 2 * p["kv"] * p["e"], "B", args={"e": p["e"]}),
        ],
        "1",
        rtol=0.01,
        source=N_("GQA (Ainslie et al. 2023): each KV head is read once for its group of query heads"),
    ),
]
_ = math

TEMPLATES += [
    T(
        "l26.k_proj_params",
        (*FN, "gqa_layer_params"),
        "memory",
        1,
        26,
        N_("One {model} block: hidden {hidden}, {kv} KV heads of {head_dim}. How many parameters in W_k?"),
        lambda rng: shape(rng),
        lambda p, fn: fn(p["hidden"], p["heads"], p["kv"], p["ffn"])["k"],
        lambda p: [Step("=", N_("hidden"), p["hidden"]), Step("×", N_("KV heads × head dim"), p["kv"] * p["head_dim"])],
        "1",
        rtol=1e-5,
        source=N_("GQA shrinks W_k and W_v by H_q / H_kv"),
    ),
]

ATTN = {"MHA (32 KV heads)": 32, "GQA (8 KV heads)": 8, "GQA (4 KV heads)": 4, "MQA (1 KV head)": 1}

TEMPLATES += [
    T(
        "l26.decode_intensity_order",
        (*FN, "decode_attention_intensity"),
        "serving",
        1,
        26,
        N_(
            "Decode attention with 32 query heads, bf16 KV cache. Order these variants by "
            "arithmetic intensity, lowest first."
        ),
        lambda rng: {"names": rng.sample(sorted(ATTN), 4)},
        lambda p, fn: sorted(p["names"], key=lambda n: fn(32, ATTN[n], 2)),
        lambda p: [
            Step("=", N_("{n}: 4·32 / (2·{ATTN_n}·2)"), 32 / ATTN[n], args={"n": n, "ATTN_n": ATTN[n]})
            for n in p["names"]
        ],
        kind="order",
        options=lambda p: list(p["names"]),
    ),
]
