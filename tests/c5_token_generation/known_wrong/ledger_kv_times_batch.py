"""Classic bug: kv_bytes (already the whole batch's KV) multiplied by the batch again."""

MODULE = "tokengen"
REJECTED_BY = {"decode_floor_ledger": ["correctness"]}

_correct_floor = decode_floor_ledger


def decode_floor_ledger(weight_bytes, kv_bytes, hbm_bytes_per_s, peak_flops, flops_per_token, batch=1):
    return _correct_floor(weight_bytes, kv_bytes * batch, hbm_bytes_per_s, peak_flops, flops_per_token, batch)
