"""Classic bug: no argument checks; negative sizes and GiB floats come back as numbers."""

MODULE = "ledger"
REJECTED_BY = {
    "training_memory": ["correctness"],
    "activation_bytes_per_layer": ["correctness"],
    "kv_cache_bytes": ["correctness"],
    "attention_flops_share": ["correctness"],
}


def training_memory(n_params, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    w, g, o = n_params * weight_bytes, n_params * grad_bytes, n_params * optimizer_bytes
    return {"weights": w, "grads": g, "optimizer": o, "total": w + g + o}


def activation_bytes_per_layer(batch, seq_len, hidden, n_heads, recompute="none"):
    linear, scores = 34 * batch * seq_len * hidden, 5 * batch * n_heads * seq_len**2
    return {"selective": linear, "full": 2 * batch * seq_len * hidden}.get(recompute, linear + scores)


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes=2):
    return 2 * n_layers * n_kv_heads * head_dim * seq_len * batch * elem_bytes


def attention_flops_share(n_layers, hidden, n_params, seq_len):
    return 2 * n_layers * seq_len * hidden / n_params if n_params and seq_len else 0.0
