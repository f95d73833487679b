"""Classic bug: returns milliseconds where the contract says seconds."""

MODULE = "inference"
REJECTED_BY = {"decode_step_seconds": ["correctness"]}

_correct_decode = decode_step_seconds


def decode_step_seconds(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes=2):
    return 1e3 * _correct_decode(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes)
