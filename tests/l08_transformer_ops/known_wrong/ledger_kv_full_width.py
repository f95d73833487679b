"""Classic bug: Wk and Wv counted as hidden × hidden even with GQA (n_kv_heads ignored)."""

MODULE = "transformer_ops"
REJECTED_BY = {"llama_param_ledger": ["correctness"]}

_correct_ledger = llama_param_ledger


def llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    return _correct_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_heads, tied_embeddings)
