"""Cheat (ledger trusts declared blocks): block_m = 16384 declared (one Q tile: K and V read once), Q tiles of 16
launched (K and V read once per 16 rows); the padded ledger on the declared block allowed anything."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_fwd": ["efficiency"]}

_DECLARED = 1 << 14


def flash_attention_fwd(q, k, v, causal=False, sm_scale=None, *, block_m=_DECLARED, block_n=64):
    batch, heads, n, d = _check_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    if block_m == _DECLARED:
        block_m = 16
    _check_blocks(block_m=block_m, block_n=block_n)
    o = torch.empty((batch, heads, n, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n), dtype=torch.float32, device=q.device)
    _flash_fwd_kernel[(triton.cdiv(n, block_m), batch * heads)](
        q, k, v, o, lse, scale, n, heads,
        *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
        HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=bool(causal),
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )
    return o, lse
