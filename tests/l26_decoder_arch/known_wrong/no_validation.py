"""Classic bug: no argument checks; odd head dims, alpha < 1 and float sizes return numbers."""

MODULE = "decoder"
REJECTED_BY = {"swiglu_hidden": ["correctness"], "gqa_layer_params": ["correctness"], "rope_inv_freq": ["correctness"],
               "ntk_scaled_base": ["correctness"], "decode_attention_intensity": ["correctness"]}


def swiglu_hidden(hidden, multiple_of=256, ffn_dim_multiplier=None):
    f = int(2 * (4 * hidden) / 3)
    if ffn_dim_multiplier is not None:
        f = int(ffn_dim_multiplier * f)
    m = max(int(multiple_of), 1)
    return m * ((f + m - 1) // m)


def gqa_layer_params(hidden, n_heads, n_kv_heads, ffn_hidden):
    h, kv = int(hidden), int(hidden) * n_kv_heads // n_heads
    parts = {"q": h * h, "k": h * kv, "v": h * kv, "o": h * h, "gate": h * ffn_hidden, "up": h * ffn_hidden,
             "down": h * ffn_hidden, "norms": 2 * h}
    return {**parts, "total": sum(parts.values())}


def rope_inv_freq(head_dim, base=10_000.0):
    d = int(head_dim)
    return [abs(base) ** (-2 * i / d) for i in range(d // 2)]


def ntk_scaled_base(base, alpha, head_dim):
    return abs(base) * alpha ** (head_dim / max(head_dim - 2, 1))


def decode_attention_intensity(n_heads, n_kv_heads, elem_bytes=2):
    return 4 * n_heads / (2 * n_kv_heads * (elem_bytes or 1))
