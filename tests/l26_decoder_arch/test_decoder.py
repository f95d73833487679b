"""L26 · Decoder-only architecture: SwiGLU width, GQA layer ledger, RoPE frequencies, NTK base, decode intensity."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import MODELS
from grader.kit import assert_exact, assert_number, assert_parts, assert_rejects, grade, learner

UNIT = "l26_decoder_arch"
swiglu_hidden = learner(UNIT, "decoder", "swiglu_hidden")
gqa_layer_params = learner(UNIT, "decoder", "gqa_layer_params")
rope_inv_freq = learner(UNIT, "decoder", "rope_inv_freq")
ntk_scaled_base = learner(UNIT, "decoder", "ntk_scaled_base")
decode_attention_intensity = learner(UNIT, "decoder", "decode_attention_intensity")

# LLaMA's FFN width arguments (multiple_of, ffn_dim_multiplier) as released in their params.json
FFN_ARGS = {"llama-2-7b": (256, None), "llama-3-8b": (1024, 1.3), "llama-3-70b": (4096, 1.3)}
REL = 1e-12  # closed-form frequencies and intensities: only float rounding may differ

# ---- swiglu_hidden -----------------------------------------------------------------------------------


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


@grade(swiglu_hidden, "correctness", points=2,
       hint="8h/3 = 10 922.67 for h = 4096: truncate, scale, then round UP to the multiple.")
@pytest.mark.parametrize("key", sorted(FFN_ARGS))
def test_swiglu_released_models(key):
    """LLaMA-2-7B 11 008; LLaMA-3-8B 14 336 (×1.3, multiple 1024); LLaMA-3-70B 28 672 (×1.3, multiple 4096)."""
    m = MODELS[key]
    multiple, mult = FFN_ARGS[key]
    got = swiglu_hidden(m.hidden, multiple, mult)
    assert_exact(got, m.ffn_hidden, f"swiglu_hidden({m.hidden}, {multiple}, {mult})", why=f"{m.name}'s released width")


@grade(swiglu_hidden, "correctness", points=2,
       hint="The result is the smallest multiple of multiple_of that is >= the scaled 8h/3.")
@given(h=st.integers(1, 2**16), multiple=st.sampled_from([1, 8, 64, 256, 1024, 4096]),
       mult=st.one_of(st.none(), st.floats(0.5, 4.0)))
def test_swiglu_rounds_up_to_the_multiple(h, multiple, mult):
    """For any width: a multiple of multiple_of, at least the target, less than one multiple above it."""
    target = 8 * h // 3 if mult is None else int(mult * (8 * h // 3))
    got = swiglu_hidden(h, multiple, mult)
    assert type(got) is int and got % multiple == 0, f"swiglu_hidden({h}, {multiple}, {mult}) = {got!r}: not a multiple"
    assert target <= got < target + multiple, f"swiglu_hidden({h}, {multiple}, {mult}) = {got}, target {target}"


@grade(swiglu_hidden, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((0,), "hidden"), ((4096.0,), "hidden"), ((4096, 0), "multiple_of"),
                                        ((4096, 256, -1.0), "ffn_dim_multiplier")])
def test_swiglu_rejects_bad_arguments(args, name):
    """Zero or float widths, a zero multiple, a negative multiplier raise ValueError naming the argument."""
    assert_rejects(swiglu_hidden, args, name)


# ---- gqa_layer_params --------------------------------------------------------------------------------


def layer_oracle(h: int, n_heads: int, n_kv: int, f: int) -> dict[str, int]:
    kv = h * n_kv // n_heads  # n_kv_heads · head_dim
    parts = {"q": h * h, "k": h * kv, "v": h * kv, "o": h * h, "gate": h * f, "up": h * f, "down": h * f,
             "norms": 2 * h}
    return {**parts, "total": sum(parts.values())}


def check_layer(h: int, n_heads: int, n_kv: int, f: int) -> dict[str, int]:
    got = gqa_layer_params(h, n_heads, n_kv, f)
    assert_named_parts(got, layer_oracle(h, n_heads, n_kv, f), f"gqa_layer_params({h}, {n_heads}, {n_kv}, {f})",
                       total="total")
    return got


@grade(gqa_layer_params, "correctness", points=3, hint="Wk and Wv map hidden to n_kv_heads · head_dim, not to hidden.")
def test_layer_llama3_8b():
    """LLaMA-3-8B: attention 2h²(1 + 8/32) = 41 943 040, FFN 176 160 768, block 218 112 000 (L26 §6.1)."""
    m = MODELS["llama-3-8b"]
    got = check_layer(m.hidden, m.n_heads, m.n_kv_heads, m.ffn_hidden)
    attention = got["q"] + got["k"] + got["v"] + got["o"]
    assert_exact(attention, 41_943_040, "LLaMA-3-8B attention q + k + v + o", why="2h²(1 + 8/32)")
    assert_exact(got["total"], 218_112_000, "LLaMA-3-8B block total", why="attention + 3·h·ffn_hidden + 2h")


@grade(gqa_layer_params, "correctness", points=2,
       hint="A model is L blocks plus the embedding, the LM head and one final norm.")
@pytest.mark.parametrize("key", sorted(MODELS))
def test_layer_builds_released_models(key):
    """L × block + 2 · vocab · h + h gives each released model's parameter count."""
    m = MODELS[key]
    block = check_layer(m.hidden, m.n_heads, m.n_kv_heads, m.ffn_hidden)["total"]
    total = m.n_layers * block + 2 * m.vocab * m.hidden + m.hidden
    assert_exact(total, m.n_params, f"{m.name}: L × your block total + 2 · vocab · h + h",
                 why="the released parameter count")


@grade(gqa_layer_params, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((4096, 32, 5, 14336), "n_kv_heads"), ((4096, 30, 30, 14336), "n_heads"),
                                        ((4096, 32, 8, 0), "ffn_hidden"), ((4096.0, 32, 8, 14336), "hidden")])
def test_layer_rejects_bad_arguments(args, name):
    """KV heads that do not divide heads, heads that do not divide hidden, zero or float sizes raise ValueError."""
    assert_rejects(gqa_layer_params, args, name)


# ---- rope_inv_freq -------------------------------------------------------------------------------------


@grade(rope_inv_freq, "correctness", points=2,
       hint="One frequency per PAIR of dimensions; the exponent runs over even indices 0, 2, 4, …")
def test_rope_worked_examples():
    """head_dim 128: 64 frequencies from 1 down to 10 000^(-126/128) ≈ 1.155e-4; LLaMA-3's base 500 000."""
    for base in (10_000.0, 500_000.0):
        got = rope_inv_freq(128, base)
        assert isinstance(got, list | tuple) and len(got) == 64, (
            f"rope_inv_freq(128, {base}): expected 64 values, got {got!r}")
        assert_number(got[0], 1.0, f"rope_inv_freq(128, {base})[0]", rel=REL)
        assert_number(got[63], base ** (-126 / 128), f"rope_inv_freq(128, {base})[63]", rel=REL)
    assert_number(rope_inv_freq(128)[63], 1.1547819846894582e-4, "rope_inv_freq(128)[63] with the default base",
                  rel=REL)


@grade(rope_inv_freq, "correctness", points=2,
       hint="θ_i = base^(-2i/d) for i < d/2: check each one, and that they fall geometrically.")
@given(half=st.integers(1, 256), base=st.floats(2.0, 1e7))
def test_rope_every_frequency(half, base):
    """Every θ_i for any even head_dim and base; consecutive ratios are all base^(-2/d)."""
    d = 2 * half
    got = rope_inv_freq(d, base)
    assert len(got) == half, f"rope_inv_freq({d}, {base!r}): {len(got)} values, expected {half}"
    for i, theta in enumerate(got):
        assert_number(theta, base ** (-2 * i / d), f"rope_inv_freq({d}, {base!r})[{i}]")


@grade(rope_inv_freq, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((127,), "head_dim"), ((0,), "head_dim"), ((128, 0.0), "base"),
                                        ((128.0,), "head_dim")])
def test_rope_rejects_bad_arguments(args, name):
    """Odd, zero or float head_dim and a zero base raise ValueError naming the argument."""
    assert_rejects(rope_inv_freq, args, name)


# ---- ntk_scaled_base --------------------------------------------------------------------------------------


@grade(ntk_scaled_base, "correctness", points=2, hint="The exponent of alpha is d/(d-2), slightly more than 1.")
def test_ntk_worked_example():
    """base 10 000, alpha 4, head_dim 128: 10 000 · 4^(128/126) = 40 889.94; alpha 1 changes nothing."""
    assert_number(ntk_scaled_base(10_000.0, 4.0, 128), 40_889.94243248622, "ntk_scaled_base(10000, 4, 128)")
    assert_number(ntk_scaled_base(500_000.0, 1.0, 128), 500_000.0, "ntk_scaled_base(500000, 1, 128)", rel=REL)


@grade(ntk_scaled_base, "correctness", points=2,
       hint="With the new base, the slowest pair must turn exactly alpha times slower.")
@given(base=st.floats(100.0, 1e6), alpha=st.floats(1.0, 64.0), half=st.integers(2, 128))
def test_ntk_interpolates_the_slowest_pair(base, alpha, half):
    """NTK's design: the lowest frequency θ_{d/2-1} is divided by alpha (like position interpolation), θ_0 stays 1."""
    d = 2 * half
    new_base = ntk_scaled_base(base, alpha, d)
    slowest_old, slowest_new = base ** (-(d - 2) / d), new_base ** (-(d - 2) / d)
    assert_number(slowest_new, slowest_old / alpha, f"θ_(d/2-1) with ntk_scaled_base({base!r}, {alpha!r}, {d})")


@grade(ntk_scaled_base, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((10_000.0, 0.5, 128), "alpha"), ((10_000.0, 4.0, 2), "head_dim"),
                                        ((10_000.0, 4.0, 127), "head_dim"), ((-1.0, 4.0, 128), "base")])
def test_ntk_rejects_bad_arguments(args, name):
    """alpha < 1, head_dim of 2 or odd, a negative base raise ValueError naming the argument."""
    assert_rejects(ntk_scaled_base, args, name)


# ---- decode_attention_intensity ----------------------------------------------------------------------------


@grade(decode_attention_intensity, "correctness", points=2,
       hint="Count both matmuls (QKᵀ and PV), and read each KV head's K and V once for its whole group.")
def test_decode_intensity_variants():
    """fp16: MHA 32/32 → 1.0; LLaMA-3 GQA 64/8 → 8.0; MQA 32/1 → 32.0; fp32 MHA → 0.5."""
    for heads, kv, elem, want in [(32, 32, 2, 1.0), (64, 8, 2, 8.0), (32, 1, 2, 32.0), (32, 32, 4, 0.5)]:
        assert_number(decode_attention_intensity(heads, kv, elem), want,
                      f"decode_attention_intensity({heads}, {kv}, {elem})", rel=REL)


@grade(decode_attention_intensity, "correctness", points=2,
       hint="Sharing K and V among G query heads multiplies the FLOPs per byte by G.")
@given(kv=st.integers(1, 64), group=st.integers(1, 16), elem=st.sampled_from([1, 2, 4]))
def test_decode_intensity_scales_with_group(kv, group, elem):
    """For any config: 2·H_q / (H_kv · elem_bytes), i.e. G times the MHA intensity (S and d cancel)."""
    heads = kv * group
    got = decode_attention_intensity(heads, kv, elem)
    assert_number(got, 2 * heads / (kv * elem), f"decode_attention_intensity({heads}, {kv}, {elem})", rel=REL)
    assert_number(got, group * decode_attention_intensity(kv, kv, elem), f"GQA/MHA ratio for G = {group}", rel=REL)


@grade(decode_attention_intensity, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize("args, name", [((32, 5), "n_kv_heads"), ((0, 1), "n_heads"), ((32, 8, 0), "elem_bytes"),
                                        ((32, 8, 2.0), "elem_bytes")])
def test_decode_intensity_rejects_bad_arguments(args, name):
    """KV heads that do not divide heads, zero heads, zero or float element sizes raise ValueError."""
    assert_rejects(decode_attention_intensity, args, name)
