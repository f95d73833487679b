"""Refuses everything: a ValueError naming every parameter, whatever the arguments (it passes the bad-argument
table on its own; its points count only once its values are right, grader.core.failures.gate)."""

MODULE = "ledger"
REJECTED_BY = {"kv_cache_bytes": ["correctness"]}


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes=2):
    raise ValueError("n_layers, n_kv_heads, head_dim, seq_len, batch or elem_bytes is invalid")
