"""Correct alternative: the total from one closed form, L·(2h²(1 + H_kv/H) + 3hf + 2h) + (2 or 1)·V·h + h."""

MODULE = "transformer_ops"
ACCEPTED = ["llama_params"]


def llama_params(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads, tied_embeddings=False):
    _check_heads(hidden, n_heads, n_kv_heads)
    for name, value in (("n_layers", n_layers), ("ffn_hidden", ffn_hidden), ("vocab", vocab)):
        check_int(name, value, minimum=1)
    h = hidden
    per_layer = 2 * h * h + 2 * h * h * n_kv_heads // n_heads + 3 * h * ffn_hidden + 2 * h
    return n_layers * per_layer + (1 if tied_embeddings else 2) * vocab * h + h
