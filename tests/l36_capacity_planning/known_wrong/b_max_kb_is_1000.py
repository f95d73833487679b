"""Course erratum #3: "40 KB" per token taken as 40,000 B (B_max 625 / 73 instead of 610 / 71)."""

MODULE = "capacity"
REJECTED_BY = {"b_max": ["correctness"]}

_correct_b_max = b_max


def b_max(pool_bytes, kv_per_token_per_gpu, s_total):
    _correct_b_max(pool_bytes, kv_per_token_per_gpu, s_total)
    kb = max(kv_per_token_per_gpu // 1024, 1)
    return pool_bytes // (kb * 1000 * s_total)
