"""Classic bug: bytes per element counted twice: the 34·s·b·h bytes multiplied by 2 B per value again."""

MODULE = "ledgers"
REJECTED_BY = {"activation_bytes_per_layer": ["correctness"]}

_correct_act = activation_bytes_per_layer


def activation_bytes_per_layer(seq_len, batch, hidden, n_heads, store_scores=True):
    got = _correct_act(seq_len, batch, hidden, n_heads, store_scores)
    got["linear"] *= 2
    got["total"] = got["linear"] + got["attention_scores"]
    return got
