"""Classic bug (the course's 0.5 FLOP/B): only QKᵀ's FLOPs counted, though both K and V are read."""

MODULE = "decoder"
REJECTED_BY = {"decode_attention_intensity": ["correctness"]}

_correct_decode = decode_attention_intensity


def decode_attention_intensity(n_heads, n_kv_heads, elem_bytes=2):
    return _correct_decode(n_heads, n_kv_heads, elem_bytes) / 2
