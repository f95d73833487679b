"""Classic bug: selective recompute read backwards: keeps the S² scores and recomputes the GEMM inputs."""

MODULE = "ledger"
REJECTED_BY = {"activation_bytes_per_layer": ["correctness"]}

_correct_activation_bytes_per_layer = activation_bytes_per_layer


def activation_bytes_per_layer(batch, seq_len, hidden, n_heads, recompute="none"):
    if recompute == "selective":
        return 5 * batch * n_heads * seq_len * seq_len
    return _correct_activation_bytes_per_layer(batch, seq_len, hidden, n_heads, recompute)
