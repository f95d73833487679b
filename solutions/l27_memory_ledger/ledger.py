"""L27 · Training and inference memory ledgers: static bytes, activations, KV cache, attention FLOPs.

Lecture 27 (04_大模型架构与显存建模/27_训练与推理显存账本_FLOPs推导与KV_Cache容量规划.md) keeps
three ledgers for one model of Ψ parameters:

* static training memory, one line per term (ZeRO paper, K = 12): bf16 weights 2Ψ + bf16
  gradients 2Ψ + Adam states in fp32 (master weights 4Ψ, m 4Ψ, v 4Ψ) 12Ψ = 16Ψ bytes;
* activations of one transformer layer (Korthikanti et al. 2022, arXiv:2205.05198), in bytes with
  16-bit activations: 34·B·S·d + 5·B·H·S² without recomputation; 34·B·S·d with selective
  recomputation (the S² attention scores are recomputed); 2·B·S·d with full recomputation (only the
  layer's input is kept);
* the KV cache: every layer caches one K and one V vector per KV head and token,
  2 · L · H_kv · d_head · elem_bytes bytes per token (exactly one factor 2, for K and V).

and one FLOPs ledger: the attention score and value matmuls cost 12·L·B·S²·d FLOPs per training
step on top of the 6·P·B·S of the weight matmuls, a share 12·L·S²·d / (6·P·S) = 2·L·S·d / P.

Conventions: sizes are exact ints in bytes (GB = 1e9 B and GiB = 2**30 B are conversions for
display, never return values); counts and byte sizes must be ints (7e9 is a float: pass 7_000_000_000).
Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

RECOMPUTE = ("none", "selective", "full")


# ---------------------------------------------------------------------------------------------
# 1. Static training memory: 16 bytes per parameter
# ---------------------------------------------------------------------------------------------


def training_memory(
    n_params: int, weight_bytes: int = 2, grad_bytes: int = 2, optimizer_bytes: int = 12
) -> dict[str, int]:
    """Static training memory of ``n_params`` parameters, itemized, in bytes.

    Returns ``{"weights": Ψ·weight_bytes, "grads": Ψ·grad_bytes, "optimizer": Ψ·optimizer_bytes,
    "total": weights + grads + optimizer}``. Defaults: bf16 weights and gradients, Adam with fp32
    master weights, m and v (12 B/param, the ZeRO paper's K). 7B → 112e9 B (112 GB, 104.3 GiB).
    """
    # TODO: validate, then one named line per term (bytes) and the total as their sum.
    ### BEGIN SOLUTION
    n = check_int("n_params", n_params)
    weights = n * check_int("weight_bytes", weight_bytes)  # bf16 weights: 2 B/param
    grads = n * check_int("grad_bytes", grad_bytes)  # bf16 gradients: 2 B/param
    optimizer = n * check_int("optimizer_bytes", optimizer_bytes)  # fp32 master + m + v: 12 B/param
    return {"weights": weights, "grads": grads, "optimizer": optimizer, "total": weights + grads + optimizer}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. Activations of one layer, by recomputation level
# ---------------------------------------------------------------------------------------------


def activation_bytes_per_layer(batch: int, seq_len: int, hidden: int, n_heads: int, recompute: str = "none") -> int:
    """Bytes of activations one transformer layer keeps for the backward pass (16-bit activations).

    ``recompute``: "none" → 34·B·S·d + 5·B·H·S² (the 5·B·H·S² are the attention scores, softmax
    output and dropout mask); "selective" → 34·B·S·d (the S² part is recomputed); "full" → 2·B·S·d
    (only the layer input is kept). B=1, S=4096, d=4096, H=32, "none" → 3,254,779,904 B (3.03 GiB).
    """
    # TODO: validate, then return the bytes kept for the chosen recompute level.
    ### BEGIN SOLUTION
    b, s = check_int("batch", batch), check_int("seq_len", seq_len)
    d, h = check_int("hidden", hidden), check_int("n_heads", n_heads, 1)
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    linear = 34 * b * s * d  # inputs of the GEMMs, norms, GeLU, dropout masks (Korthikanti eq. 2)
    scores = 5 * b * h * s * s  # QK^T (2 B) + softmax (2 B) + dropout mask (1 B) per score
    return {"none": linear + scores, "selective": linear, "full": 2 * b * s * d}[recompute]
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. The KV cache
# ---------------------------------------------------------------------------------------------


def kv_cache_bytes(n_layers: int, n_kv_heads: int, head_dim: int, seq_len: int, batch: int, elem_bytes: int = 2) -> int:
    """Bytes of K and V cached for ``batch`` sequences of ``seq_len`` tokens.

    2 (one K and one V) · n_layers · n_kv_heads · head_dim · seq_len · batch · elem_bytes.
    LLaMA-3-70B (80 layers, 8 KV heads of 128), bf16: 327,680 B per token; 32 × 8192 tokens →
    85,899,345,920 B (80 GiB).
    """
    # TODO: validate, then count K and V of every layer, token and sequence, in bytes.
    ### BEGIN SOLUTION
    per_token_layer = 2 * check_int("n_kv_heads", n_kv_heads) * check_int("head_dim", head_dim)  # K and V
    tokens = check_int("seq_len", seq_len) * check_int("batch", batch)
    return per_token_layer * check_int("n_layers", n_layers) * tokens * check_int("elem_bytes", elem_bytes)
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. The attention FLOPs the 6PS rule leaves out
# ---------------------------------------------------------------------------------------------


def attention_flops_share(n_layers: int, hidden: int, n_params: int, seq_len: int) -> float:
    """Attention-score FLOPs of a training step as a share of the weight FLOPs 6·P·S (per sequence).

    QK^T and A·V cost 2·B·S²·d FLOPs each per layer forward, three times that with the backward:
    12·L·S²·d per sequence, against 6·P·S. L=32, d=4096, P=7e9: S=2048 → 0.0767; S=32768 → 1.227.
    """
    # TODO: validate (n_params, seq_len >= 1), then attention FLOPs / weight FLOPs.
    ### BEGIN SOLUTION
    n_layers, hidden = check_int("n_layers", n_layers), check_int("hidden", hidden)
    p, s = check_int("n_params", n_params, 1), check_int("seq_len", seq_len, 1)
    attention = 12 * n_layers * s * s * hidden  # fwd 4·S²·d per layer, bwd twice that
    weights = 6 * p * s
    return attention / weights
    ### END SOLUTION
