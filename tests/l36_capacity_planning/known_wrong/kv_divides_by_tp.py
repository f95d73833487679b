"""Classic bug: KV per GPU = full KV / TP for any TP: past TP = H_kv the heads are replicated, not split further."""

MODULE = "capacity"
REJECTED_BY = {"kv_bytes_per_token_per_gpu": ["correctness"]}

_correct_kv = kv_bytes_per_token_per_gpu


def kv_bytes_per_token_per_gpu(n_layers, n_kv_heads, head_dim, tp, elem_bytes=2):
    _correct_kv(n_layers, n_kv_heads, head_dim, tp, elem_bytes)
    return 2 * n_layers * n_kv_heads * head_dim * elem_bytes // tp
