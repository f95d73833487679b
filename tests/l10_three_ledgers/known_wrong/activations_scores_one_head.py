"""Classic bug: one s×s score matrix per sample instead of one per head (the factor a forgotten)."""

MODULE = "ledgers"
REJECTED_BY = {"activation_bytes_per_layer": ["correctness"]}

_correct_act = activation_bytes_per_layer


def activation_bytes_per_layer(seq_len, batch, hidden, n_heads, store_scores=True):
    got = _correct_act(seq_len, batch, hidden, n_heads, store_scores)
    got["attention_scores"] //= n_heads
    got["total"] = got["linear"] + got["attention_scores"]
    return got
