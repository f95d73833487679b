"""Classic bug: the FFN counted as two matrices (the classic 4h MLP): the SwiGLU gate matrix is missing."""

MODULE = "transformer_ops"
REJECTED_BY = {"llama_params": ["correctness"]}


def llama_params(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    got = llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings)
    return got["total"] - got["ffn"] // 3
