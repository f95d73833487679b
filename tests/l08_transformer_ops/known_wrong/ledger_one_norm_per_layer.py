"""Classic bug: one RMSNorm per layer instead of two (the post-attention norm before the FFN is forgotten)."""

MODULE = "transformer_ops"
REJECTED_BY = {"llama_param_ledger": ["correctness"]}

_correct_ledger = llama_param_ledger


def llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    got = _correct_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings)
    got["norms"] //= 2
    got["total"] = sum(v for k, v in got.items() if k != "total")
    return got
