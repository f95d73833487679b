"""Classic bug: the KV cache counted for one sequence, not for each sequence of the batch."""

MODULE = "inference"
REJECTED_BY = {"decode_step_seconds": ["correctness"]}

_correct_decode = decode_step_seconds


def decode_step_seconds(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes=2):
    _correct_decode(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes)
    return _correct_decode(n_params, min(batch, 1), context_len, kv_bytes_per_token, mem_bw, weight_bytes)
