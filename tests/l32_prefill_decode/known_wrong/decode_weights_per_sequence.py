"""Classic bug: every sequence of the batch reads the weights again (batching would then buy nothing)."""

MODULE = "inference"
REJECTED_BY = {"decode_step_seconds": ["correctness"]}

_correct_decode = decode_step_seconds


def decode_step_seconds(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes=2):
    t = _correct_decode(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes)
    return t + (batch - 1) * n_params * weight_bytes / mem_bw if batch > 1 else t
