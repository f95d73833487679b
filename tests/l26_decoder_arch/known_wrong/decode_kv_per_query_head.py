"""Classic bug: K and V read once per QUERY head (no sharing), so GQA and MQA look no better than MHA."""

MODULE = "decoder"
REJECTED_BY = {"decode_attention_intensity": ["correctness"]}

_correct_decode = decode_attention_intensity


def decode_attention_intensity(n_heads, n_kv_heads, elem_bytes=2):
    _correct_decode(n_heads, n_kv_heads, elem_bytes)  # same argument checks
    return _correct_decode(n_heads, n_heads, elem_bytes)
