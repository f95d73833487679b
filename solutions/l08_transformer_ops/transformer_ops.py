"""L08 · A LLaMA decoder on paper: parameter ledger, KV bytes per token, and the shapes of a block.

Lecture 08 (01_性能工程与系统前置/08_Transformer系统全景与算子执行图深度拆解.md) walks one LLaMA-2-7B
block op by op. With h = hidden, d = h / n_heads (head dim), h_kv = n_kv_heads · d, f = ffn_hidden:

    attention per layer  Wq h·h + Wk h·h_kv + Wv h·h_kv + Wo h·h      (no biases)
    SwiGLU FFN per layer W_gate h·f + W_up h·f + W_down f·h
    RMSNorm per layer    2 · h (one weight vector before attention, one before the FFN)
    embedding            vocab · h
    final RMSNorm        h
    LM head              vocab · h, unless tied to the embedding (then 0: the same matrix)

LLaMA-2-7B (h 4096, 32 layers, f 11 008, vocab 32 000, untied): 202 383 360 per layer and
6 738 415 616 in all.

KV cache: every layer keeps one K and one V vector of n_kv_heads · d elements per token:
2 · n_layers · n_kv_heads · d · elem_bytes bytes per token (524 288 B = 512 KiB for LLaMA-2-7B).

Sizes are exact ints (parameters, bytes). Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

LEDGER_PARTS = ("embedding", "attention", "ffn", "norms", "final_norm", "lm_head", "total")


def _check_heads(hidden: int, n_heads: int, n_kv_heads: int) -> int:
    """Validate the head split and return the head dimension hidden / n_heads."""
    hidden, n_heads = check_int("hidden", hidden, minimum=1), check_int("n_heads", n_heads, minimum=1)
    n_kv_heads = check_int("n_kv_heads", n_kv_heads, minimum=1)
    if hidden % n_heads:
        raise ValueError(f"hidden ({hidden}) must be a multiple of n_heads ({n_heads})")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads})")
    return hidden // n_heads


def llama_param_ledger(hidden: int, n_layers: int, ffn_hidden: int, vocab: int, n_heads: int,
                       n_kv_heads: int, tied_embeddings: bool = False) -> dict[str, int]:
    """Parameters of a LLaMA-style decoder by part: keys ``LEDGER_PARTS``, "total" their sum.

    "attention", "ffn" and "norms" are summed over all layers; "lm_head" is 0 when tied.
    """
    # TODO: validate (heads divide hidden, KV heads divide heads), then fill each part.
    ### BEGIN SOLUTION
    head_dim = _check_heads(hidden, n_heads, n_kv_heads)
    n_layers, f = check_int("n_layers", n_layers, minimum=1), check_int("ffn_hidden", ffn_hidden, minimum=1)
    vocab = check_int("vocab", vocab, minimum=1)
    kv_dim = n_kv_heads * head_dim
    parts = {
        "embedding": vocab * hidden,
        "attention": n_layers * (2 * hidden * hidden + 2 * hidden * kv_dim),  # Wq, Wo; Wk, Wv
        "ffn": n_layers * 3 * hidden * f,  # gate, up, down
        "norms": n_layers * 2 * hidden,  # RMSNorm weights, no bias
        "final_norm": hidden,
        "lm_head": 0 if tied_embeddings else vocab * hidden,
    }
    return {**parts, "total": sum(parts.values())}
    ### END SOLUTION


def llama_params(hidden: int, n_layers: int, ffn_hidden: int, vocab: int, n_heads: int, n_kv_heads: int,
                 tied_embeddings: bool = False) -> int:
    """Total parameters of a LLaMA-style decoder (see the module docstring), an exact int.

    LLaMA-2-7B: 6 738 415 616. LLaMA-3-8B (GQA, 8 KV heads, vocab 128 256): 8 030 261 248.
    """
    # TODO: count the parameters (you may reuse your ledger).
    ### BEGIN SOLUTION
    return llama_param_ledger(hidden, n_layers, ffn_hidden, vocab, n_heads, n_kv_heads,
                              tied_embeddings)["total"]
    ### END SOLUTION


def kv_bytes_per_token(n_layers: int, n_kv_heads: int, head_dim: int, elem_bytes: int = 2) -> int:
    """Bytes of KV cache one token holds across all layers: 2 (K and V) · L · H_kv · d · elem_bytes.

    LLaMA-2-7B in fp16: 524 288 B (512 KiB); LLaMA-3-70B: 327 680 B.
    """
    # TODO: validate, then count one K and one V vector per layer.
    ### BEGIN SOLUTION
    n_layers, n_kv_heads = check_int("n_layers", n_layers, minimum=1), check_int("n_kv_heads", n_kv_heads, minimum=1)
    head_dim, elem_bytes = check_int("head_dim", head_dim, minimum=1), check_int("elem_bytes", elem_bytes, minimum=1)
    return 2 * n_layers * n_kv_heads * head_dim * elem_bytes
    ### END SOLUTION


def block_shapes(batch: int, seq_len: int, hidden: int, n_heads: int, n_kv_heads: int,
                 ffn_hidden: int) -> dict[str, tuple[int, ...]]:
    """Output shape of each op of one LLaMA block in training (no cache), d = hidden / n_heads.

    Keys and shapes (B = batch, S = seq_len):
      "x" (B, S, hidden)             input, and the RMSNorm output
      "q" (B, n_heads, S, d)         after projection, view and transpose(1, 2)
      "k", "v" (B, n_kv_heads, S, d)
      "scores" (B, n_heads, S, S)    QKᵀ / √d, also the softmax output (K/V repeated per group)
      "attn_out" (B, S, hidden)      heads merged back, after Wo
      "gate", "up" (B, S, ffn_hidden)
      "down" (B, S, hidden)
    """
    # TODO: validate, then write down each tensor's shape.
    ### BEGIN SOLUTION
    d = _check_heads(hidden, n_heads, n_kv_heads)
    b, s = check_int("batch", batch, minimum=1), check_int("seq_len", seq_len, minimum=1)
    f = check_int("ffn_hidden", ffn_hidden, minimum=1)
    return {
        "x": (b, s, hidden),
        "q": (b, n_heads, s, d),
        "k": (b, n_kv_heads, s, d),
        "v": (b, n_kv_heads, s, d),
        "scores": (b, n_heads, s, s),  # every query head gets its own S×S matrix
        "attn_out": (b, s, hidden),
        "gate": (b, s, f),
        "up": (b, s, f),
        "down": (b, s, hidden),
    }
    ### END SOLUTION
