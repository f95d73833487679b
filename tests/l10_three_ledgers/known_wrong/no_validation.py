"""Classic bug: no argument checks; float counts (70e9), MFU given as 50 (%) and zero GPUs return numbers."""

MODULE = "ledgers"
REJECTED_BY = {"training_flops": ["correctness"], "mfu": ["correctness"], "training_days": ["correctness"],
               "activation_bytes_per_layer": ["correctness"]}


def training_flops(n_params, n_tokens, recompute=False):
    return int((8 if recompute else 6) * n_params * n_tokens)


def mfu(tokens_per_s, n_params, n_gpus, peak_flops):
    return 6 * n_params * tokens_per_s / (max(n_gpus, 1) * (peak_flops or 1.0))


def training_days(n_params, n_tokens, n_gpus, peak_flops, mfu):
    return 6 * n_params * n_tokens / (max(n_gpus, 1) * peak_flops * (mfu or 1.0)) / 86_400


def activation_bytes_per_layer(seq_len, batch, hidden, n_heads, store_scores=True):
    s, b, h, a = (int(v) for v in (seq_len, batch, hidden, n_heads))
    linear, scores = 34 * s * b * h, (5 * a * s * s * b if store_scores else 0)
    return {"linear": linear, "attention_scores": scores, "total": linear + scores}
