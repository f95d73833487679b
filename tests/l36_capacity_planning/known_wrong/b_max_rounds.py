"""Classic bug: B_max rounded to nearest: 71.8 long requests do not make 72."""

MODULE = "capacity"
REJECTED_BY = {"b_max": ["correctness"]}

_correct_b_max = b_max


def b_max(pool_bytes, kv_per_token_per_gpu, s_total):
    _correct_b_max(pool_bytes, kv_per_token_per_gpu, s_total)
    return round(pool_bytes / (kv_per_token_per_gpu * s_total))
