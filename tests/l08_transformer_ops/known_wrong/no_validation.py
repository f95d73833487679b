"""Classic bug: no argument checks; heads that do not divide hidden and float sizes return numbers."""

MODULE = "transformer_ops"
REJECTED_BY = {"llama_param_ledger": ["correctness"], "llama_params": ["correctness"],
               "kv_bytes_per_token": ["correctness"], "block_shapes": ["correctness"]}


def llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    hidden, kv_dim = int(hidden), int(n_kv_heads * (hidden // n_heads))
    parts = {"embedding": vocab * hidden, "attention": n_layers * (2 * hidden * hidden + 2 * hidden * kv_dim),
             "ffn": int(n_layers * 3 * hidden * ffn_hidden), "norms": n_layers * 2 * hidden, "final_norm": hidden,
             "lm_head": 0 if tied_embeddings else vocab * hidden}
    return {**parts, "total": sum(parts.values())}


def llama_params(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    return int(llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings)["total"])


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, elem_bytes=2):
    return int(2 * n_layers * n_kv_heads * head_dim * elem_bytes)


def block_shapes(batch, seq_len, hidden, n_heads, n_kv_heads, ffn_hidden):
    b, s, d = int(batch), int(seq_len), hidden // n_heads
    return {"x": (b, s, hidden), "q": (b, n_heads, s, d), "k": (b, n_kv_heads, s, d), "v": (b, n_kv_heads, s, d),
            "scores": (b, n_heads, s, s), "attn_out": (b, s, hidden), "gate": (b, s, ffn_hidden),
            "up": (b, s, ffn_hidden), "down": (b, s, hidden)}
