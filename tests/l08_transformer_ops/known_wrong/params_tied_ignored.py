"""Classic bug: the LM head always counted, even when it is tied to the embedding (one matrix counted twice)."""

MODULE = "transformer_ops"
REJECTED_BY = {"llama_params": ["correctness"]}


def llama_params(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    return llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, False)["total"]
