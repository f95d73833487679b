"""Classic bug: the S² term counted once per layer, not once per attention head (5·B·S² instead of 5·B·H·S²)."""

MODULE = "ledger"
REJECTED_BY = {"activation_bytes_per_layer": ["correctness"]}


def activation_bytes_per_layer(batch, seq_len, hidden, n_heads, recompute="none"):
    check_int("n_heads", n_heads, 1)
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    b, s, d = check_int("batch", batch), check_int("seq_len", seq_len), check_int("hidden", hidden)
    return {"none": 34 * b * s * d + 5 * b * s * s, "selective": 34 * b * s * d, "full": 2 * b * s * d}[recompute]
